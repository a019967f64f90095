"""Project Ocean writer: each action's exact bytes, undo, conflicts, refusals, path safety."""

from __future__ import annotations

import dataclasses
import os
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from memlens.core.actions import Action
from memlens.core.decay import decay_of
from memlens.core.errors import (
    ConflictError,
    MemlensError,
    NotFoundError,
    RefusedError,
    UnsafePathError,
)
from memlens.core.formats.project_ocean.adapter import ProjectOceanAdapter
from memlens.core.formats.project_ocean.writer import ProjectOceanWriter
from memlens.core.formats.writers import writer_for
from memlens.core.model import Memory
from memlens.core.scan.vault import open_catalog
from memlens.core.write.journal import read_journal
from memlens.core.write.txn import apply_plan
from memlens.core.write.undo import undo_last

AS_OF = date(2026, 11, 22)

COURIER = "courier/obs-2026-11-18-001"
COURIER_PATH = "agents/courier/memory/vault/obs-2026-11-18-001.md"
EXTRAS = "courier/obs-2026-11-11-001"  # priority, carrier_id, reviewed_by
CRLF = "scribe/obs-2026-11-14-001"  # CRLF, created quoted
BOM = "sentinel/obs-2026-11-06-001"  # UTF-8 BOM
ARCHIVED = "courier/obs-2026-09-20-001"
SHARED = "shared/obs-2026-10-24-002"


@pytest.fixture
def root(own_fixtures_copy: Path) -> Path:
    return own_fixtures_copy / "project-ocean"


def memory(root: Path, memory_id: str) -> Memory:
    return open_catalog(root).get(memory_id)


def all_bytes(root: Path) -> dict[str, bytes]:
    """Every file of the vault (memlens's own .memlens/ excluded)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".memlens" not in p.relative_to(root).parts
    }


def apply(root: Path, memory_id: str, name: str, **params: Any) -> dict[str, Any]:
    return Action(name, memory(root, memory_id), dict(params)).apply()


def header_lines(data: bytes) -> list[bytes]:
    lines = data.splitlines(keepends=True)
    close = next(i for i in range(1, len(lines)) if lines[i].rstrip() == b"---")
    return lines[: close + 1]


# --------------------------------------------------------------------------- registration


def test_writer_is_registered() -> None:
    writer = writer_for("project-ocean")
    assert isinstance(writer, ProjectOceanWriter)
    assert ProjectOceanWriter.format_id == "project-ocean"


# --------------------------------------------------------------------------- pin / unpin


def test_pin_adds_one_last_header_line_and_makes_permanent(root: Path) -> None:
    before = all_bytes(root)
    src = before[COURIER_PATH]
    assert decay_of(memory(root, COURIER), AS_OF).status == "active"

    entry = apply(root, COURIER, "pin")

    after = all_bytes(root)
    lines = src.splitlines(keepends=True)
    close = len(header_lines(src)) - 1
    assert after[COURIER_PATH] == b"".join([*lines[:close], b"pinned: true\n", *lines[close:]])
    assert {k: v for k, v in after.items() if k != COURIER_PATH} == {
        k: v for k, v in before.items() if k != COURIER_PATH
    }
    m = memory(root, COURIER)
    assert m.pinned
    assert m.fields["decay"] == "linear-14d"  # left as written
    assert decay_of(m, AS_OF).status == "permanent"
    assert entry["action"] == "pin" and entry["memory_ids"] == [COURIER]

    undo_last(root)
    assert all_bytes(root) == before


def test_pin_then_unpin_gives_back_the_original_bytes(root: Path) -> None:
    before = all_bytes(root)
    apply(root, COURIER, "pin")
    apply(root, COURIER, "unpin")
    assert all_bytes(root) == before
    assert not memory(root, COURIER).pinned
    # Each action is its own journal entry: undoing the unpin pins again.
    undo_last(root)
    assert memory(root, COURIER).pinned
    undo_last(root)
    assert all_bytes(root) == before


def test_pin_keeps_crlf_and_bom(root: Path) -> None:
    crlf_path = memory(root, CRLF).path
    bom_path = memory(root, BOM).path
    crlf_before = (root / crlf_path).read_bytes()
    bom_before = (root / bom_path).read_bytes()

    apply(root, CRLF, "pin")
    apply(root, BOM, "pin")

    crlf_after = (root / crlf_path).read_bytes()
    assert crlf_after == crlf_before.replace(
        b"backlinks: []\r\n---", b"backlinks: []\r\npinned: true\r\n---"
    )
    assert b"\n" not in crlf_after.replace(b"\r\n", b"")
    bom_after = (root / bom_path).read_bytes()
    assert bom_after.startswith(b"\xef\xbb\xbf---\n")
    assert bom_after == bom_before.replace(
        b"backlinks: []\n---", b"backlinks: []\npinned: true\n---"
    )
    assert memory(root, CRLF).pinned and memory(root, BOM).pinned


def test_pin_refused_when_already_pinned_and_unpin_when_not(root: Path) -> None:
    with pytest.raises(RefusedError, match="not pinned"):
        Action("unpin", memory(root, COURIER)).plan()
    apply(root, COURIER, "pin")
    with pytest.raises(RefusedError, match="already pinned"):
        Action("pin", memory(root, COURIER)).plan()


# --------------------------------------------------------------------------- set


def test_set_rewrites_only_the_changed_line_and_keeps_extras(root: Path) -> None:
    m = memory(root, EXTRAS)
    path = root / m.path
    before = path.read_bytes()
    apply(root, EXTRAS, "set", changes={"confidence": 0.9})
    after = path.read_bytes()

    old_lines, new_lines = before.splitlines(keepends=True), after.splitlines(keepends=True)
    assert len(old_lines) == len(new_lines)
    diff = [(a, b) for a, b in zip(old_lines, new_lines, strict=True) if a != b]
    assert diff == [(b"confidence: 0.8\n", b"confidence: 0.9\n")]

    fresh = memory(root, EXTRAS)
    assert fresh.confidence == 0.9
    assert list(fresh.fields) == list(m.fields)  # key order kept
    assert (
        fresh.extra
        == m.extra
        == {
            "priority": "high",
            "carrier_id": "NL-22",
            "reviewed_by": "marta",
        }
    )
    assert fresh.body == m.body


def test_set_several_fields_and_undo(root: Path) -> None:
    before = all_bytes(root)
    apply(
        root,
        COURIER,
        "set",
        changes={
            "tags": ["campaign", "cpl"],
            "created": date(2026, 11, 17),
            "decay": "exponential-30d",
            "backlinks": ["obs-2026-11-10-001", "obs-2026-11-12-003"],
            "verified": True,
            "priority": "low",
        },
    )
    text = (root / COURIER_PATH).read_text()
    assert text.splitlines()[:10] == [
        "---",
        "tags: [campaign, cpl]",
        "confidence: 0.82",
        "created: 2026-11-17",
        "decay: exponential-30d",
        "source: courier",
        "backlinks: [obs-2026-11-10-001, obs-2026-11-12-003]",
        "verified: true",
        "priority: low",
        "---",
    ]
    m = memory(root, COURIER)
    assert m.native["verified"] is True and m.native["decay_kind"] == "exponential"
    undo_last(root)
    assert all_bytes(root) == before


def test_set_decay_null_makes_permanent(root: Path) -> None:
    apply(root, COURIER, "set", changes={"decay": None})
    assert "decay:" not in (root / COURIER_PATH).read_text()
    assert decay_of(memory(root, COURIER), AS_OF).status == "permanent"


def test_set_keeps_quotes_and_crlf(root: Path) -> None:
    m = memory(root, CRLF)
    before = (root / m.path).read_bytes()
    apply(root, CRLF, "set", changes={"created": date(2026, 11, 16)})
    after = (root / m.path).read_bytes()
    assert after == before.replace(b'created: "2026-11-14"\r\n', b'created: "2026-11-16"\r\n')
    assert after != before


@pytest.mark.parametrize(
    ("changes", "field", "why"),
    [
        ({"confidence": 1.7}, "confidence", "outside 0.0-1.0"),
        ({"confidence": "high"}, "confidence", "not a number"),
        ({"confidence": True}, "confidence", "not a number"),
        ({"tags": "campaign"}, "tags", "not a list of strings"),
        ({"tags": ["a", 3]}, "tags", "not a list of strings"),
        ({"created": "yesterday"}, "created", "YYYY-MM-DD"),
        ({"created": "2026-02-30"}, "created", "YYYY-MM-DD"),
        ({"source": 7}, "source", "string"),
        ({"source": None}, "source", "required"),
        ({"tags": None}, "tags", "required"),
        ({"decay": "weekly"}, "decay", "linear-Nd"),
        ({"decay": "linear-0d"}, "decay", "linear-Nd"),
        ({"backlinks": ["../../../sentinel/memory/vault/obs-2026-11-12-001"]}, "backlinks", "bare"),
        ({"backlinks": ["/etc/passwd"]}, "backlinks", "bare"),
        ({"backlinks": ["obs-2026-11-10-001\x00"]}, "backlinks", "bare"),
        ({"verified": "yes"}, "verified", "true or false"),
        ({"pinned": 1}, "pinned", "true or false"),
    ],
)
def test_set_refusals_name_the_field(
    root: Path, changes: dict[str, Any], field: str, why: str
) -> None:
    before = all_bytes(root)
    with pytest.raises(RefusedError) as err:
        Action("set", memory(root, COURIER), {"changes": changes}).plan()
    assert str(err.value).startswith(f"{field}:")
    assert why in str(err.value)
    assert all_bytes(root) == before


def test_set_same_value_is_refused_as_no_change(root: Path) -> None:
    with pytest.raises(RefusedError, match="nothing to change"):
        Action("set", memory(root, COURIER), {"changes": {"confidence": 0.82}}).plan()


# --------------------------------------------------------------------------- edit body


def test_edit_body_keeps_header_bytes(root: Path) -> None:
    before = (root / COURIER_PATH).read_bytes()
    apply(root, COURIER, "edit_body", body="CPL fell to $36.\n\nSecond paragraph.\n")
    after = (root / COURIER_PATH).read_bytes()
    assert header_lines(after) == header_lines(before)
    assert after == b"".join(header_lines(before)) + b"CPL fell to $36.\n\nSecond paragraph.\n"
    assert memory(root, COURIER).body == "CPL fell to $36.\n\nSecond paragraph.\n"


def test_edit_body_on_crlf_file_writes_crlf(root: Path) -> None:
    m = memory(root, CRLF)
    before = (root / m.path).read_bytes()
    apply(root, CRLF, "edit_body", body="one\ntwo\n")
    after = (root / m.path).read_bytes()
    assert after == b"".join(header_lines(before)) + b"one\r\ntwo\r\n"
    assert memory(root, CRLF).body == "one\ntwo\n"


def test_edit_body_undo(root: Path) -> None:
    before = all_bytes(root)
    apply(root, BOM, "edit_body", body="replaced")
    assert all_bytes(root) != before
    undo_last(root)
    assert all_bytes(root) == before


# --------------------------------------------------------------------------- promote


def test_promote_copies_with_two_added_lines(root: Path) -> None:
    before = all_bytes(root)
    src = before[COURIER_PATH]
    entry = apply(root, COURIER, "promote", as_of="2026-11-22")

    after = all_bytes(root)
    dst = "shared/observations/obs-2026-11-18-001.md"
    assert set(after) == set(before) | {dst}
    assert after[COURIER_PATH] == src  # the source is unchanged
    lines = src.splitlines(keepends=True)
    close = len(header_lines(src)) - 1
    assert after[dst] == b"".join(
        [*lines[:close], b"promoted_from: courier\n", b"promoted_at: 2026-11-22\n", *lines[close:]]
    )
    copy = memory(root, "shared/obs-2026-11-18-001")
    assert copy.native["shared"] and copy.native["promoted_from"] == "courier"
    assert copy.native["promoted_at"] == "2026-11-22"
    assert entry["memory_ids"] == [COURIER, "shared/obs-2026-11-18-001"]

    with pytest.raises(RefusedError, match="already promoted"):
        Action("promote", memory(root, COURIER), {"as_of": "2026-11-23"}).plan()

    undo_last(root)
    assert all_bytes(root) == before


def test_promote_refuses_existing_and_archived_shared_copy(root: Path) -> None:
    with pytest.raises(
        RefusedError, match=r"already promoted: shared/observations/obs-2026-10-24-002\.md exists"
    ):
        Action("promote", memory(root, "ledger/obs-2026-10-24-002"), {"as_of": "2026-11-22"}).plan()
    # A copy that decay moved to shared/observations/archive/ counts too (a new
    # copy would duplicate the shared/<stem> id).
    archived_copy = root / "shared/observations/archive/obs-2026-11-18-001.md"
    archived_copy.parent.mkdir(parents=True)
    archived_copy.write_bytes((root / COURIER_PATH).read_bytes())
    with pytest.raises(RefusedError, match="already promoted"):
        Action("promote", memory(root, COURIER), {"as_of": "2026-11-22"}).plan()


def test_promote_refuses_shared_and_archived_memories(root: Path) -> None:
    with pytest.raises(RefusedError, match="shared"):
        Action("promote", memory(root, SHARED), {"as_of": "2026-11-22"}).plan()
    with pytest.raises(RefusedError, match="archived"):
        Action("promote", memory(root, ARCHIVED), {"as_of": "2026-11-22"}).plan()


def test_promote_as_of_must_be_a_date(root: Path) -> None:
    with pytest.raises(RefusedError, match="as_of"):
        Action("promote", memory(root, COURIER), {"as_of": "next week"}).plan()
    plan = Action("promote", memory(root, COURIER), {"as_of": date(2026, 12, 1)}).plan()
    assert plan.changes[0].data is not None
    assert b"promoted_at: 2026-12-01\n" in plan.changes[0].data


# --------------------------------------------------------------------------- archive / restore


def test_archive_moves_to_agent_archive_and_restore_moves_back(root: Path) -> None:
    before = all_bytes(root)
    data = before[COURIER_PATH]
    apply(root, COURIER, "archive")
    dst = "agents/courier/memory/archive/obs-2026-11-18-001.md"
    after = all_bytes(root)
    assert COURIER_PATH not in after and after[dst] == data
    m = memory(root, COURIER)
    assert m.archived and m.path == dst
    assert decay_of(m, AS_OF).status == "archived"

    apply(root, COURIER, "restore")
    assert all_bytes(root) == before
    assert not memory(root, COURIER).archived

    undo_last(root)  # undo the restore
    assert memory(root, COURIER).archived
    undo_last(root)  # undo the archive
    assert all_bytes(root) == before


def test_restore_of_fixture_archive_goes_to_vault(root: Path) -> None:
    apply(root, ARCHIVED, "restore")
    m = memory(root, ARCHIVED)
    assert m.path == "agents/courier/memory/vault/obs-2026-09-20-001.md" and not m.archived


def test_shared_archive_and_restore(root: Path) -> None:
    before = all_bytes(root)
    apply(root, SHARED, "archive", reason="expired (age 26 > 30 days)")
    m = memory(root, SHARED)
    assert m.path == "shared/observations/archive/obs-2026-10-24-002.md" and m.archived
    assert read_journal(root)[-1]["summary"].endswith("(expired (age 26 > 30 days))")
    apply(root, SHARED, "restore")
    assert all_bytes(root) == before


def test_archive_never_overwrites(root: Path) -> None:
    m = memory(root, COURIER)
    # Something appears in archive/ after the scan (the reference would overwrite it).
    squatter = root / "agents/courier/memory/archive/obs-2026-11-18-001.md"
    squatter.write_bytes(b"someone else's bytes\n")
    before = all_bytes(root)
    with pytest.raises(RefusedError, match="already exists"):
        Action("archive", m).plan()
    # Appearing between plan and apply is refused by apply_plan too.
    squatter.rename(root / "elsewhere.md")
    plan = Action("archive", m).plan()
    (root / "elsewhere.md").rename(squatter)
    with pytest.raises(ConflictError, match="already exists"):
        apply_plan(plan)
    assert all_bytes(root) == before


def test_restore_never_overwrites(root: Path) -> None:
    m = memory(root, ARCHIVED)
    (root / "agents/courier/memory/vault/obs-2026-09-20-001.md").write_bytes(b"new\n")
    before = all_bytes(root)
    with pytest.raises(RefusedError, match="already exists"):
        Action("restore", m).plan()
    assert all_bytes(root) == before


# --------------------------------------------------------------------------- undo of every action


@pytest.mark.parametrize(
    ("memory_id", "name", "params"),
    [
        (COURIER, "pin", {}),
        (CRLF, "pin", {}),
        (BOM, "set", {"changes": {"tags": ["x"], "confidence": 1}}),
        (EXTRAS, "set", {"changes": {"reviewed_by": "courier", "new_field": [1, 2]}}),
        (CRLF, "edit_body", {"body": "x\n"}),
        (COURIER, "promote", {"as_of": "2026-11-22"}),
        (BOM, "promote", {"as_of": "2026-11-22"}),
        (CRLF, "archive", {}),
        (SHARED, "archive", {}),
        (ARCHIVED, "restore", {}),
    ],
)
def test_undo_restores_every_byte(
    root: Path, memory_id: str, name: str, params: dict[str, Any]
) -> None:
    before = all_bytes(root)
    apply(root, memory_id, name, **params)
    assert all_bytes(root) != before
    undo_last(root)
    assert all_bytes(root) == before


def test_promote_of_bom_crlf_sources_keeps_their_bytes(root: Path) -> None:
    for memory_id in (BOM, CRLF):
        m = memory(root, memory_id)
        src = (root / m.path).read_bytes()
        plan = Action("promote", m, {"as_of": "2026-11-22"}).plan()
        data = plan.changes[0].data
        assert data is not None
        nl = b"\r\n" if b"\r\n" in src else b"\n"
        added = b"promoted_from: " + m.source.encode() + nl + b"promoted_at: 2026-11-22" + nl
        close = len(header_lines(src)) - 1
        lines = src.splitlines(keepends=True)
        assert data == b"".join([*lines[:close], added, *lines[close:]])


# --------------------------------------------------------------------------- conflicts


def _rewrite_same_size_same_mtime(path: Path) -> None:
    st = path.stat()
    data = path.read_bytes()
    changed = data.replace(b"confidence: 0.82", b"confidence: 0.83")
    assert changed != data and len(changed) == len(data)
    path.write_bytes(changed)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("pin", {}),
        ("set", {"changes": {"verified": True}}),
        ("edit_body", {"body": "x"}),
        ("promote", {"as_of": "2026-11-22"}),
        ("archive", {}),
    ],
)
def test_external_rewrite_after_scan_is_a_conflict(
    root: Path, name: str, params: dict[str, Any]
) -> None:
    m = memory(root, COURIER)
    _rewrite_same_size_same_mtime(root / COURIER_PATH)
    before = all_bytes(root)
    with pytest.raises(ConflictError, match="changed on disk"):
        Action(name, m, params).plan()
    assert all_bytes(root) == before
    assert not (root / ".memlens").exists()


@pytest.mark.parametrize(
    ("name", "params"),
    [("pin", {}), ("set", {"changes": {"verified": True}}), ("archive", {})],
)
def test_external_rewrite_between_plan_and_apply_is_a_conflict(
    root: Path, name: str, params: dict[str, Any]
) -> None:
    plan = Action(name, memory(root, COURIER), params).plan()
    _rewrite_same_size_same_mtime(root / COURIER_PATH)
    before = all_bytes(root)
    with pytest.raises(ConflictError):
        apply_plan(plan)
    assert all_bytes(root) == before


def test_file_deleted_or_broken_after_scan(root: Path) -> None:
    m = memory(root, COURIER)
    moved = root / "moved.md"
    (root / COURIER_PATH).rename(moved)
    with pytest.raises(ConflictError, match="moved or deleted"):
        Action("pin", m).plan()
    moved.write_bytes(b"---\ntags: [\n---\nbroken\n")
    moved.rename(root / COURIER_PATH)
    with pytest.raises(ConflictError, match="now invalid"):
        Action("pin", m).plan()


def test_a_change_that_keeps_fields_and_body_is_not_lost(root: Path) -> None:
    """A comment added by someone else is no conflict, and the edit keeps it."""
    m = memory(root, COURIER)
    path = root / COURIER_PATH
    path.write_bytes(path.read_bytes().replace(b"source: courier\n", b"source: courier  # agent\n"))
    apply_plan(Action("pin", m).plan())
    assert b"source: courier  # agent\n" in path.read_bytes()
    assert memory(root, COURIER).pinned


# --------------------------------------------------------------------------- paths


def test_symlinked_memory_file_is_refused(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_bytes((root / COURIER_PATH).read_bytes())
    rel = "agents/courier/memory/vault/obs-2026-11-30-001.md"
    (root / rel).symlink_to(outside)
    # The scan never reads it (it shows as a Problem), so no action can name it...
    with pytest.raises(NotFoundError):
        memory(root, "courier/obs-2026-11-30-001")
    # ...and the writer refuses it even when handed its memory directly.
    m = ProjectOceanAdapter().scan_rel(root, rel).memories[0]
    before = outside.read_bytes()
    for name, params in (("pin", {}), ("archive", {}), ("edit_body", {"body": "x"})):
        with pytest.raises(UnsafePathError, match="outside the vault"):
            Action(name, m, params).plan()
    assert outside.read_bytes() == before


def test_symlink_inside_the_vault_is_not_written_through(root: Path) -> None:
    link = root / "agents/courier/memory/vault/obs-2026-11-30-001.md"
    link.symlink_to(root / COURIER_PATH)
    m = memory(root, "courier/obs-2026-11-30-001")
    before = all_bytes(root)
    for name, params in (("pin", {}), ("archive", {}), ("edit_body", {"body": "x"})):
        with pytest.raises(UnsafePathError, match="symbolic link"):
            Action(name, m, params).plan()
    assert all_bytes(root) == before


def test_promote_into_a_symlinked_shared_folder_is_refused(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shared = root / "shared" / "observations"
    shared.rename(tmp_path / "real-shared")
    shared.symlink_to(outside, target_is_directory=True)
    with pytest.raises(UnsafePathError):
        Action("promote", memory(root, COURIER), {"as_of": "2026-11-22"}).plan()
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize(
    "bad_path",
    [
        "../x.md",
        "agents/courier/memory/vault/../../../../../x.md",
        "/etc/passwd",
        "agents/courier/memory/vault/..\\x.md",
        "agents/courier/memory/vault/obs\x00.md",
        "agents/courier/memory/other/obs-2026-11-18-001.md",
    ],
)
def test_tampered_memory_paths_are_refused(root: Path, tmp_path: Path, bad_path: str) -> None:
    m = dataclasses.replace(memory(root, COURIER), path=bad_path)
    before = all_bytes(root)
    outside_before = sorted(p.name for p in tmp_path.iterdir())
    for name, params in (
        ("pin", {}),
        ("archive", {}),
        ("promote", {"as_of": "2026-11-22"}),
        ("set", {"changes": {"verified": True}}),
    ):
        with pytest.raises(MemlensError):
            Action(name, m, params).apply()
    assert all_bytes(root) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == outside_before


def test_other_formats_are_not_handled(root: Path) -> None:
    m = dataclasses.replace(memory(root, COURIER), format="dream-cycle")
    with pytest.raises(RefusedError, match="not project-ocean"):
        ProjectOceanWriter().plan_pin(m)


def test_promote_refuses_options_of_other_formats(root: Path) -> None:
    with pytest.raises(RefusedError, match=r"^importance:"):
        Action("promote", memory(root, COURIER), {"as_of": "2026-11-22", "importance": 0.9}).plan()
