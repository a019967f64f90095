"""observation-v1 writer: pin, set, edit body, promote, archive, restore on fixture copies."""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memlens.core.actions import Action, apply_bulk
from memlens.core.errors import ConflictError, RefusedError
from memlens.core.formats.observation_v1.writer import (
    ObservationV1Writer,
    plan_promote_many,
)
from memlens.core.formats.writers import writer_for
from memlens.core.model import Health, Memory
from memlens.core.scan.vault import open_catalog
from memlens.core.text.yamledit import REMOVE
from memlens.core.write.journal import Plan
from memlens.core.write.txn import apply_plan
from memlens.core.write.undo import undo_last

W = ObservationV1Writer()
NOW = "2026-11-22T10:00:00Z"


@pytest.fixture
def root(own_fixtures_copy: Path) -> Path:
    return own_fixtures_copy / "observation-v1"


def get(root: Path, memory_id: str) -> Memory:
    return open_catalog(root).get(memory_id)


def all_files(root: Path) -> dict[str, bytes]:
    """Every file's bytes, except memlens's own state."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".memlens" not in p.relative_to(root).parts
    }


def diff(a: bytes, b: bytes) -> list[str]:
    """Changed lines (+/-) between two versions, line endings kept."""
    return [
        line
        for line in difflib.unified_diff(
            a.decode("utf-8").splitlines(True), b.decode("utf-8").splitlines(True), n=0
        )
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def applied(plan: Plan) -> Plan:
    apply_plan(plan)
    return plan


# -- registration -------------------------------------------------------------


def test_registered_and_used_by_actions(root: Path) -> None:
    assert isinstance(writer_for("observation-v1"), ObservationV1Writer)
    before = (root / "observations/obs-002.md").read_bytes()
    Action("pin", get(root, "obs-002")).apply()
    assert get(root, "obs-002").pinned
    undo_last(root)
    assert (root / "observations/obs-002.md").read_bytes() == before


# -- pin / unpin ----------------------------------------------------------------


def test_pin_adds_pinned_as_last_header_line(root: Path) -> None:
    path = root / "observations/obs-001.md"
    before = path.read_bytes()
    plan = W.plan_pin(get(root, "obs-001"))
    assert plan.memory_ids == ["obs-001"]
    assert plan.describe() == ["rewrite observations/obs-001.md"]
    assert "pinned" in plan.summary
    applied(plan)
    after = path.read_bytes()
    assert diff(before, after) == ["+pinned: true\n"]
    header = after.split(b"\n---\n", 1)[0]
    assert header.endswith(b"\npinned: true")
    m = get(root, "obs-001")
    assert m.pinned and m.extra["pinned"] is True
    assert m.extra["type"] == "observation"  # other extras kept


def test_unpin_removes_the_line_and_restores_bytes(root: Path) -> None:
    path = root / "observations/obs-001.md"
    original = path.read_bytes()
    applied(W.plan_pin(get(root, "obs-001")))
    applied(W.plan_unpin(get(root, "obs-001")))
    assert path.read_bytes() == original
    assert not get(root, "obs-001").pinned
    with pytest.raises(RefusedError, match="not pinned"):
        W.plan_unpin(get(root, "obs-001"))


def test_pin_keeps_crlf_and_bom(root: Path) -> None:
    crlf = root / "observations/obs-007.md"
    bom = root / "observations/obs-011.md"
    crlf_before, bom_before = crlf.read_bytes(), bom.read_bytes()
    assert b"\r\n" in crlf_before and bom_before.startswith(b"\xef\xbb\xbf")
    applied(W.plan_pin(get(root, "obs-007")))
    applied(W.plan_pin(get(root, "obs-011")))
    crlf_after, bom_after = crlf.read_bytes(), bom.read_bytes()
    assert diff(crlf_before, crlf_after) == ["+pinned: true\r\n"]
    assert crlf_after.count(b"\n") == crlf_after.count(b"\r\n")
    assert bom_after.startswith(b"\xef\xbb\xbf---\n")
    assert diff(bom_before, bom_after) == ["+pinned: true\n"]
    assert get(root, "obs-007").pinned and get(root, "obs-011").pinned


def test_pin_comprehension(root: Path) -> None:
    applied(W.plan_pin(get(root, "comp-quota-004")))
    m = get(root, "comp-quota-004")
    assert m.pinned and m.kind == "comprehension"


# -- set ------------------------------------------------------------------------


def test_set_rewrites_only_the_changed_line(root: Path) -> None:
    path = root / "observations/obs-013.md"
    before = path.read_bytes()
    applied(W.plan_set(get(root, "obs-013"), {"source": "agent/reviewer"}))
    after = path.read_bytes()
    assert diff(before, after) == [
        "-source: agent/triage-assistant\n",
        "+source: agent/reviewer\n",
    ]
    m = get(root, "obs-013")
    assert m.source == "agent/reviewer"
    # unknown fields, key order and body bytes survive
    assert list(m.fields) == [
        "spec",
        "type",
        "id",
        "timestamp",
        "source",
        "event",
        "context",
        "severity",
        "x-reviewed-by",
        "labels",
    ]
    assert m.extra == {
        "type": "observation",
        "severity": "high",
        "x-reviewed-by": "harbour-ops",
        "labels": ["dns", "resolver"],
    }
    assert after.split(b"\n---\n", 1)[1] == before.split(b"\n---\n", 1)[1]


def test_set_extra_field_and_list(root: Path) -> None:
    path = root / "observations/obs-013.md"
    before = path.read_bytes()
    applied(W.plan_set(get(root, "obs-013"), {"labels": ["dns"], "severity": "critical"}))
    assert diff(before, path.read_bytes()) == [
        "-severity: high\n",
        "+severity: critical\n",
        "-labels: [dns, resolver]\n",
        "+labels: [dns]\n",
    ]
    assert get(root, "obs-013").tags == ("dns",)


def test_set_nested_context_value(root: Path) -> None:
    path = root / "observations/obs-001.md"
    before = path.read_bytes()
    applied(W.plan_set(get(root, "obs-001"), {"context.task": "rotate-keys"}))
    assert diff(before, path.read_bytes()) == [
        "-  task: register-gateway-webhook\n",
        "+  task: rotate-keys\n",
    ]
    assert get(root, "obs-001").fields["context"]["task"] == "rotate-keys"


def test_set_new_nested_key_goes_inside_its_block(root: Path) -> None:
    path = root / "observations/obs-002.md"
    before = path.read_bytes()
    applied(W.plan_set(get(root, "obs-002"), {"context.prior_belief": "comp-webhook-auth-001/v2"}))
    after = path.read_bytes()
    assert diff(before, after) == ["+  prior_belief: comp-webhook-auth-001/v2\n"]
    cat = open_catalog(root)
    m = cat.get("obs-002")
    assert m.relations[0].resolved == "comp-webhook-auth-001"
    assert not [p for p in cat.ref_problems() if p.id == "obs-002"]


def test_set_comprehension_confidence_changes_the_posterior_line(root: Path) -> None:
    path = root / "comprehension/comp-webhook-auth-001.md"
    before = path.read_bytes()
    applied(W.plan_set(get(root, "comp-webhook-auth-001"), {"confidence": "low"}))
    assert diff(before, path.read_bytes()) == ["-  confidence: high\n", "+  confidence: low\n"]
    m = get(root, "comp-webhook-auth-001")
    assert m.confidence == "low"
    assert m.fields["prior"]["confidence"] == "medium"


def test_set_crlf_keeps_line_endings(root: Path) -> None:
    path = root / "observations/obs-007.md"
    before = path.read_bytes()
    applied(W.plan_set(get(root, "obs-007"), {"context.task": "x", "event": "Canary at 50%"}))
    after = path.read_bytes()
    assert after.count(b"\n") == after.count(b"\r\n")
    assert len(diff(before, after)) == 4
    assert get(root, "obs-007").fields["event"] == "Canary at 50%"


def test_set_id_to_a_new_bare_id(root: Path) -> None:
    applied(W.plan_set(get(root, "obs-020"), {"id": "obs-900"}))
    m = get(root, "obs-900")
    assert m.path == "observations/obs-020.md"


@pytest.mark.parametrize(
    ("memory_id", "changes", "field"),
    [
        ("obs-001", {"timestamp": "yesterday"}, "timestamp"),
        ("obs-001", {"source": ""}, "source"),
        ("obs-001", {"event": 42}, "event"),
        ("obs-001", {"context": "flat"}, "context"),
        ("obs-001", {"spec": "observation/v2"}, "spec"),
        ("obs-001", {"id": "../x"}, "id"),
        ("obs-001", {"id": "a/b"}, "id"),
        ("obs-001", {"id": "obs-002"}, "id"),
        ("obs-001", {"id": "obs-024"}, "id"),  # used only by invalid duplicates
        ("obs-001", {"id": "comp-quota-004"}, "id"),
        ("obs-001", {"context.project.name": "x"}, "context.project.name"),
        ("obs-001", {"event.x": "y"}, "event.x"),
        ("comp-webhook-auth-001", {"posterior.confidence": "sure"}, "posterior.confidence"),
        ("comp-webhook-auth-001", {"confidence": "sure"}, "posterior.confidence"),
        ("comp-webhook-auth-001", {"version": "two"}, "version"),
        ("comp-webhook-auth-001", {"verified": "yes"}, "verified"),
        ("comp-webhook-auth-001", {"observations": "obs-001"}, "observations"),
        ("comp-webhook-auth-001", {"spec": "observation/v1"}, "spec"),
    ],
)
def test_set_refusals_name_the_field(
    root: Path, memory_id: str, changes: dict[str, Any], field: str
) -> None:
    before = all_files(root)
    with pytest.raises(RefusedError) as info:
        W.plan_set(get(root, memory_id), changes)
    assert str(info.value).startswith(field), str(info.value)
    assert all_files(root) == before


def test_set_unchanged_value_is_refused_as_no_op(root: Path) -> None:
    with pytest.raises(RefusedError, match="nothing to change"):
        W.plan_set(get(root, "obs-001"), {"source": "agent/integration-agent"})


# -- edit body ------------------------------------------------------------------


def test_edit_body_keeps_header_bytes(root: Path) -> None:
    path = root / "observations/obs-001.md"
    before = path.read_bytes()
    head = before[: before.index(b"\n---\n") + 5]
    applied(W.plan_edit_body(get(root, "obs-001"), "\n# Observation: rewritten\n\nNew text.\n"))
    after = path.read_bytes()
    assert after == head + b"\n# Observation: rewritten\n\nNew text.\n"
    m = get(root, "obs-001")
    assert m.title == "rewritten"
    assert m.body == "\n# Observation: rewritten\n\nNew text.\n"


def test_edit_body_keeps_crlf_and_bom(root: Path) -> None:
    crlf = root / "observations/obs-007.md"
    before = crlf.read_bytes()
    head = before[: before.index(b"\r\n---\r\n") + 7]
    applied(W.plan_edit_body(get(root, "obs-007"), "# New\n\ntwo\n"))
    assert crlf.read_bytes() == head + b"# New\r\n\r\ntwo\r\n"
    bom = root / "observations/obs-011.md"
    applied(W.plan_edit_body(get(root, "obs-011"), "body\n"))
    data = bom.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf---\n") and data.endswith(b"\n---\nbody\n")
    assert get(root, "obs-011").body == "body\n"


def test_edit_body_unchanged_refused(root: Path) -> None:
    m = get(root, "obs-001")
    with pytest.raises(RefusedError, match="unchanged"):
        W.plan_edit_body(m, m.body)


# -- promote --------------------------------------------------------------------


def test_promote_creates_a_valid_comprehension(root: Path) -> None:
    obs = get(root, "obs-001")
    obs_before = (root / obs.path).read_bytes()
    existing = {m.id for m in open_catalog(root).memories()}
    plan = W.plan_promote(obs, {"now": NOW})
    assert len(plan.changes) == 1 and plan.changes[0].kind == "create"
    new_id = plan.memory_ids[-1]
    assert plan.memory_ids[0] == "obs-001"
    assert re.fullmatch(r"comp-tidewater-\d{3}", new_id)
    assert new_id not in existing
    assert plan.describe() == [f"create comprehension/{new_id}.md"]
    applied(plan)
    assert (root / obs.path).read_bytes() == obs_before
    cat = open_catalog(root)
    comp = cat.get(new_id)
    assert comp.kind == "comprehension" and comp.path == f"comprehension/{new_id}.md"
    assert comp.title == obs.title  # topic defaults to the observation's title
    assert comp.fields["domain"] == "tidewater"  # context.project
    assert comp.fields["observations"] == ["obs-001"]
    assert comp.fields["posterior"]["observations_used"] == ["obs-001"]
    assert comp.fields["posterior"]["statement"] == obs.fields["event"]
    assert comp.fields["prior"]["confidence"] == "unknown"
    assert comp.confidence == "medium"
    assert comp.created == datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
    assert comp.updated == comp.created
    assert new_id in cat.get("obs-001").native["incorporated_by"]
    assert not [p for p in cat.problems() if p.path == comp.path]
    assert not [p for p in cat.ref_problems() if p.id == new_id]


def test_promote_numbers_after_the_highest_existing_sequence(root: Path) -> None:
    numbers = [
        int(m.group(1))
        for p in (root / "comprehension").glob("*.md")
        if (m := re.fullmatch(r"comp-.*-(\d+)", p.stem))
    ]
    plan = W.plan_promote(get(root, "obs-001"), {"now": NOW, "domain": "Billing Auth!"})
    assert plan.memory_ids[-1] == f"comp-billing-auth-{max(numbers) + 1:03d}"


def test_promote_many_with_options(root: Path) -> None:
    obs = [get(root, "obs-010"), get(root, "obs-011")]
    plan = plan_promote_many(
        obs,
        {
            "topic": "Migration 0042: lock wait, then done",
            "domain": "invoice-migration",
            "statement": "0042 is safe: it waits on a lock but does not rewrite the table.",
            "confidence": "high",
            "as_of": "2026-11-21",
        },
    )
    assert plan.memory_ids[:2] == ["obs-010", "obs-011"]
    applied(plan)
    cat = open_catalog(root)
    comp = cat.get(plan.memory_ids[-1])
    assert comp.title == "Migration 0042: lock wait, then done"
    assert comp.fields["domain"] == "invoice-migration"
    assert comp.fields["observations"] == ["obs-010", "obs-011"]
    assert comp.confidence == "high"
    assert comp.created == datetime(2026, 11, 21, tzinfo=UTC)
    for oid in ("obs-010", "obs-011"):
        assert comp.id in cat.get(oid).native["incorporated_by"]


def test_promote_observations_option_cites_several(root: Path) -> None:
    plan = W.plan_promote(
        get(root, "obs-001"), {"observations": ["obs-002", "obs-001"], "now": NOW}
    )
    applied(plan)
    comp = get(root, plan.memory_ids[-1])
    assert comp.fields["observations"] == ["obs-001", "obs-002"]


def test_promote_uses_the_clock_only_without_now(root: Path) -> None:
    start = datetime.now(UTC).replace(microsecond=0)
    plan = applied(W.plan_promote(get(root, "obs-001"), {}))
    comp = get(root, plan.memory_ids[-1])
    assert isinstance(comp.created, datetime)
    assert start <= comp.created <= datetime.now(UTC)


def test_promote_never_overwrites_a_file_in_the_way(root: Path) -> None:
    probe = W.plan_promote(get(root, "obs-001"), {"now": NOW})
    blocker = probe.changes[0].path
    blocker.write_bytes(b"not mine\n")
    plan = W.plan_promote(get(root, "obs-001"), {"now": NOW})
    assert plan.changes[0].path != blocker
    applied(plan)
    assert blocker.read_bytes() == b"not mine\n"
    # A plan made before the file appeared is refused at apply time.
    late = W.plan_promote(get(root, "obs-002"), {"now": NOW})
    late.changes[0].path.write_bytes(b"raced\n")
    with pytest.raises(ConflictError):
        apply_plan(late)
    assert late.changes[0].path.read_bytes() == b"raced\n"


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"confidence": "sure"}, "confidence"),
        ({"prior_confidence": 0.9}, "prior_confidence"),
        ({"id": "../../evil"}, "id"),
        ({"id": "/tmp/evil"}, "id"),
        ({"id": "a\\b"}, "id"),
        ({"id": "comp-webhook-auth-001"}, "id"),
        ({"id": "obs-002"}, "id"),
        ({"topic": ""}, "topic"),
        ({"domain": 3}, "domain"),
        ({"observations": ["obs-999"]}, "observations"),
        ({"observations": ["../obs-001"]}, "observations"),
        ({"observations": ["obs-017"]}, "observations"),  # invalid file
        ({"observations": "obs-002"}, "observations"),
        ({"now": "yesterday"}, "now"),
    ],
)
def test_promote_refusals(root: Path, options: dict[str, Any], field: str) -> None:
    outside = root.parent.parent
    before_outside = sorted(p.name for p in outside.iterdir())
    before = all_files(root)
    with pytest.raises(RefusedError) as info:
        W.plan_promote(get(root, "obs-001"), options)
    assert str(info.value).startswith(field), str(info.value)
    assert all_files(root) == before
    assert sorted(p.name for p in outside.iterdir()) == before_outside


def test_promote_refuses_comprehension_and_mixed_vaults(
    root: Path, own_fixtures_copy: Path
) -> None:
    with pytest.raises(RefusedError, match="only observations"):
        W.plan_promote(get(root, "comp-webhook-auth-001"), {})
    other = open_catalog(own_fixtures_copy / "dream-cycle")
    with pytest.raises(RefusedError):
        plan_promote_many([get(root, "obs-001"), next(other.memories())], {})
    with pytest.raises(RefusedError):
        plan_promote_many([], {})


# -- archive / restore ----------------------------------------------------------


def test_archive_and_restore_observation(root: Path) -> None:
    src = root / "observations/obs-013.md"
    data = src.read_bytes()
    plan = W.plan_archive(get(root, "obs-013"))
    assert plan.describe() == ["move observations/obs-013.md -> archive/observations/obs-013.md"]
    applied(plan)
    dst = root / "archive/observations/obs-013.md"
    assert not src.exists() and dst.read_bytes() == data
    m = get(root, "obs-013")
    assert m.archived and m.path == "archive/observations/obs-013.md"
    info = open_catalog(root).vaults[0].adapter.decay(m, datetime(2026, 11, 22).date())
    assert info.health == Health.ARCHIVED
    applied(W.plan_restore(m))
    assert src.read_bytes() == data and not dst.exists()
    assert not get(root, "obs-013").archived


def test_archive_comprehension_goes_to_archive_comprehension(root: Path) -> None:
    applied(W.plan_archive(get(root, "comp-ui-tests-005"), reason="manual"))
    assert (root / "archive/comprehension/comp-ui-tests-005.md").is_file()
    assert get(root, "comp-ui-tests-005").archived


def test_archive_refuses_an_existing_destination(root: Path) -> None:
    dst = root / "archive/observations/obs-013.md"
    dst.parent.mkdir(parents=True)
    dst.write_bytes(b"someone else's\n")
    before = all_files(root)
    with pytest.raises(RefusedError, match="already exists"):
        W.plan_archive(get(root, "obs-013"))
    assert all_files(root) == before


def test_archive_through_a_symlinked_folder_out_of_the_vault_refused(
    root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / "archive").symlink_to(outside, target_is_directory=True)
    with pytest.raises(RefusedError):
        W.plan_archive(get(root, "obs-013"))
    assert list(outside.iterdir()) == []
    assert (root / "observations/obs-013.md").is_file()


def test_symlinked_memory_file_is_not_written(root: Path, tmp_path: Path) -> None:
    m = get(root, "obs-013")
    target = tmp_path / "real-obs-013.md"
    target.write_bytes((root / m.path).read_bytes())
    (root / m.path).unlink()
    (root / m.path).symlink_to(target)
    with pytest.raises(RefusedError, match=r"symbolic link|outside the vault"):
        W.plan_pin(m)


# -- undo restores every byte -----------------------------------------------------

Planner = Callable[[Path], Plan]

PLANNERS: dict[str, Planner] = {
    "pin": lambda r: W.plan_pin(get(r, "obs-011")),
    "set": lambda r: W.plan_set(get(r, "obs-013"), {"severity": "low", "context.project": "x"}),
    "set_comprehension": lambda r: W.plan_set(
        get(r, "comp-webhook-auth-001"), {"confidence": "low", "verified": True}
    ),
    "edit_body": lambda r: W.plan_edit_body(get(r, "obs-007"), "# changed\n"),
    "promote": lambda r: W.plan_promote(get(r, "obs-001"), {"now": NOW}),
    "promote_many": lambda r: plan_promote_many([get(r, "obs-020"), get(r, "obs-022")]),
    "archive": lambda r: W.plan_archive(get(r, "obs-013")),
    "archive_comprehension": lambda r: W.plan_archive(get(r, "comp-quota-004")),
}


@pytest.mark.parametrize("name", sorted(PLANNERS))
def test_apply_then_undo_restores_every_byte(root: Path, name: str) -> None:
    before = all_files(root)
    plan = PLANNERS[name](root)
    apply_plan(plan)
    assert all_files(root) != before
    undo_last(root)
    assert all_files(root) == before


def test_restore_then_undo(root: Path) -> None:
    applied(W.plan_archive(get(root, "obs-013")))
    before = all_files(root)
    applied(W.plan_restore(get(root, "obs-013")))
    undo_last(root)
    assert all_files(root) == before


# -- conflicts ------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(PLANNERS))
def test_external_rewrite_after_scan_is_a_conflict(root: Path, name: str) -> None:
    memory_id = {
        "pin": "obs-011",
        "set": "obs-013",
        "set_comprehension": "comp-webhook-auth-001",
        "edit_body": "obs-007",
        "promote": "obs-001",
        "promote_many": "obs-020",
        "archive": "obs-013",
        "archive_comprehension": "comp-quota-004",
    }[name]
    m = get(root, memory_id)
    path = root / m.path
    path.write_bytes(path.read_bytes() + b"\nan agent appended this\n")
    after_agent = all_files(root)
    with pytest.raises(ConflictError, match="changed on disk"):
        _plan_with(name, m)
    assert all_files(root) == after_agent


def _plan_with(name: str, m: Memory) -> Plan:
    if name == "pin":
        return W.plan_pin(m)
    if name.startswith("set"):
        return W.plan_set(m, {"verified": True} if m.kind == "comprehension" else {"x": 1})
    if name == "edit_body":
        return W.plan_edit_body(m, "x\n")
    if name.startswith("promote"):
        return W.plan_promote(m, {"now": NOW})
    return W.plan_archive(m)


def test_same_size_same_mtime_rewrite_is_a_conflict(root: Path) -> None:
    m = get(root, "obs-013")
    path = root / m.path
    data = path.read_bytes()
    st = path.stat()
    changed = data.replace(b"severity: high", b"severity: HIGH")
    assert len(changed) == len(data) and changed != data
    path.write_bytes(changed)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_mtime_ns == st.st_mtime_ns
    with pytest.raises(ConflictError):
        W.plan_set(m, {"source": "agent/x"})
    assert path.read_bytes() == changed


def test_change_between_plan_and_apply_is_a_conflict(root: Path) -> None:
    m = get(root, "obs-013")
    path = root / m.path
    plan = W.plan_pin(m)
    data = path.read_bytes()
    st = path.stat()
    changed = data.replace(b"harbour-ops", b"ops-LEAD")
    path.write_bytes(changed)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(ConflictError):
        apply_plan(plan)
    assert path.read_bytes() == changed
    archive_plan = W.plan_archive(get(root, "obs-013"))
    path.write_bytes(data)
    with pytest.raises(ConflictError):
        apply_plan(archive_plan)
    assert path.read_bytes() == data
    assert not (root / "archive/observations/obs-013.md").exists()


def test_file_gone_or_now_invalid_is_a_conflict(root: Path) -> None:
    m = get(root, "obs-013")
    (root / m.path).write_bytes(b"---\nspec: observation/v1\n---\n")
    with pytest.raises(ConflictError, match="invalid"):
        W.plan_pin(m)
    (root / m.path).unlink()
    with pytest.raises(ConflictError, match="gone"):
        W.plan_archive(m)


# -- more edits -------------------------------------------------------------------


def test_set_title_on_comprehension_means_topic(root: Path) -> None:
    path = root / "comprehension/comp-quota-004.md"
    before = path.read_bytes()
    applied(W.plan_set(get(root, "comp-quota-004"), {"title": "Rate limits: 100/min"}))
    changed = diff(before, path.read_bytes())
    assert len(changed) == 2 and changed[1] == '+topic: "Rate limits: 100/min"\n'
    assert get(root, "comp-quota-004").title == "Rate limits: 100/min"


def test_remove_fields_top_level_and_nested(root: Path) -> None:
    path = root / "observations/obs-013.md"
    before = path.read_bytes()
    applied(W.plan_set(get(root, "obs-013"), {"severity": REMOVE, "context.project": REMOVE}))
    # The emptied context is written `{}`: a bare `context:` is null, which
    # observation/v1 rejects (wrong_type).
    assert diff(before, path.read_bytes()) == [
        "-context:\n",
        "-  project: tidewater\n",
        "-severity: high\n",
        "+context: {}\n",
    ]
    m = get(root, "obs-013")
    assert "severity" not in m.fields and m.fields["context"] == {}
    with pytest.raises(RefusedError) as info:
        W.plan_set(m, {"source": REMOVE})
    assert str(info.value).startswith("source")


def test_set_inside_a_flow_mapping_rewrites_that_one_line(root: Path) -> None:
    path = root / "observations/obs-900.md"
    path.write_text(
        "---\nspec: observation/v1\nid: obs-900\ntimestamp: 2026-11-20T10:00:00Z\n"
        "source: agent/a\nevent: e\ncontext: {project: p}  # flow\nx-note: kept\n---\nbody\n"
    )
    before = path.read_bytes()
    applied(W.plan_set(get(root, "obs-900"), {"context.task": "t"}))
    changed = diff(before, path.read_bytes())
    assert changed[0] == "-context: {project: p}  # flow\n"
    assert len(changed) == 2
    assert get(root, "obs-900").fields["context"] == {"project": "p", "task": "t"}


def test_set_on_an_archived_memory(root: Path) -> None:
    applied(W.plan_archive(get(root, "obs-013")))
    applied(W.plan_set(get(root, "obs-013"), {"severity": "info"}))
    m = get(root, "obs-013")
    assert m.archived and m.fields["severity"] == "info"


@pytest.mark.parametrize("bad", ["comp x", ".hidden", "comp\nx", "x" * 300])
def test_promote_refuses_ids_that_make_bad_file_names(root: Path, bad: str) -> None:
    before = all_files(root)
    with pytest.raises(RefusedError) as info:
        W.plan_promote(get(root, "obs-001"), {"id": bad, "now": NOW})
    assert str(info.value).startswith("id")
    assert all_files(root) == before


def test_bulk_archive_through_actions_is_one_undo(root: Path) -> None:
    before = all_files(root)
    cat = open_catalog(root)
    result = apply_bulk("archive", [cat.get("obs-001"), cat.get("obs-002")])
    assert len(result.applied) == 2 and not result.refused
    assert all(get(root, i).archived for i in ("obs-001", "obs-002"))
    undo_last(root)  # the bulk run is one journal entry
    assert all_files(root) == before
