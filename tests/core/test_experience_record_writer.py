"""Actions on experience-record vaults: every change is an exact append."""

from __future__ import annotations

import json
import os
import re
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlens.core.errors import ConflictError, RefusedError, UnsafePathError
from memlens.core.formats.experience_record.action_records import archive_op, pin_view, restore_op
from memlens.core.formats.experience_record.adapter import ExperienceRecordAdapter
from memlens.core.formats.experience_record.jsonl import JsonLine, parse_json_lines
from memlens.core.formats.experience_record.schema import EXPERIENCES, LATTICE, STANCES, VIEWS, WAL
from memlens.core.formats.experience_record.write_lines import append_line
from memlens.core.formats.experience_record.writer import ExperienceRecordWriter
from memlens.core.model import Health, Memory, Reason
from memlens.core.scan.vault import open_catalog
from memlens.core.write.actions import Action, apply_bulk, writer_for
from memlens.core.write.journal import apply_plan, undo_last

FORMAT = "experience-records"
NOW = datetime(2026, 11, 22, 10, 0, 0, tzinfo=UTC)
TS = "2026-11-22T10:00:00Z"
BOM = b"\xef\xbb\xbf"
ADAPTER = ExperienceRecordAdapter()


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    writer = writer_for(FORMAT)
    assert isinstance(writer, ExperienceRecordWriter)
    monkeypatch.setattr(writer, "clock", lambda: NOW)


@pytest.fixture
def vault(own_fixtures_copy: Path) -> Path:
    return own_fixtures_copy / "experience-records"


def vault_bytes(root: Path) -> dict[str, bytes]:
    """Every file of the vault except memlens's own state."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".memlens" not in p.relative_to(root).parts
    }


def memories(root: Path) -> dict[str, Memory]:
    return {m.id: m for m in open_catalog(root).memories()}


def fresh(root: Path, exp_id: str) -> Memory:
    return memories(root)[exp_id]


def pick(root: Path, kind: str | None = None, **state: bool) -> Memory:
    """The first memory of `kind` with the given flags (default: live, unpinned)."""
    want = {"pinned": False, "archived": False, "tombstoned": False, **state}
    for m in memories(root).values():
        if kind is not None and m.kind != kind:
            continue
        if all(getattr(m, k) == v for k, v in want.items()):
            return m
    raise AssertionError(f"no {kind} memory with {want} in the fixture")


def appended(before: dict[str, bytes], after: dict[str, bytes], rel: str) -> bytes:
    """The bytes appended to `rel`; every other file must be byte-identical."""
    assert set(before) == set(after)
    for name in before:
        if name != rel:
            assert after[name] == before[name], f"{name} changed"
    old, new = before[rel], after[rel]
    assert new.startswith(old), f"{rel}: existing bytes changed"
    return new[len(old) :]


def one_line(data: bytes) -> dict[str, Any]:
    assert data.endswith(b"\n") and data.count(b"\n") == 1, data
    obj = json.loads(data.decode("utf-8"))
    assert isinstance(obj, dict)
    return obj


def line_of(record: dict[str, Any], eol: bytes = b"\n") -> bytes:
    return json.dumps(record, ensure_ascii=False).encode("utf-8") + eol


# --------------------------------------------------------------------------
# pin / unpin


def test_writer_is_registered() -> None:
    assert writer_for(FORMAT).format_id == FORMAT


def test_pin_appends_exactly_one_pin_view_keeping_the_bom(vault: Path) -> None:
    m = pick(vault)
    before = vault_bytes(vault)
    assert before[VIEWS].startswith(BOM)
    plan = Action("pin", m).plan()
    assert plan.memory_ids == [m.id] and plan.summary.startswith("pin: append view")
    assert plan.describe() == [f"rewrite {VIEWS}"]
    apply_plan(plan)
    after = vault_bytes(vault)
    added = appended(before, after, VIEWS)
    view_id = one_line(added)["id"]
    assert re.fullmatch(rf"view_{re.escape(TS)}_[0-9a-f]{{4}}", view_id)
    assert added == line_of(pin_view(view_id, m.id))
    assert after[VIEWS].startswith(BOM)
    again = fresh(vault, m.id)
    assert again.pinned and again.native["pinned_by"] == view_id
    assert again.fields == m.fields
    assert ADAPTER.decay(again, NOW.date()).health is Health.STABLE
    with pytest.raises(RefusedError, match="already pinned"):
        Action("pin", again).plan()


def test_unpin_appends_a_view_superseding_the_pin(vault: Path) -> None:
    m = pick(vault)
    Action("pin", m).apply()
    pinned = fresh(vault, m.id)
    pin_id = pinned.native["pinned_by"]
    before = vault_bytes(vault)
    Action("unpin", pinned).apply()
    added = appended(before, vault_bytes(vault), VIEWS)
    unpin_id = one_line(added)["id"]
    assert unpin_id != pin_id
    expected = pin_view(unpin_id, m.id, unpin=True)
    expected["provenance_braid"] = [m.id, pin_id]
    assert added == line_of(expected)
    unpinned = fresh(vault, m.id)
    assert not unpinned.pinned and "pinned_by" not in unpinned.native
    # Pin again after the unpin: a third view, pinned again.
    Action("pin", unpinned).apply()
    assert fresh(vault, m.id).pinned


def test_unpin_refused_when_not_pinned(vault: Path) -> None:
    with pytest.raises(RefusedError, match="not pinned"):
        writer_for(FORMAT).plan_unpin(pick(vault))


def test_missing_views_file_is_created_and_undo_moves_it_away(vault: Path) -> None:
    (vault / VIEWS).rename(vault.parent / "views-elsewhere.jsonl")
    m = pick(vault)
    before = vault_bytes(vault)
    plan = Action("pin", m).plan()
    assert [c.kind for c in plan.changes] == ["create"]
    apply_plan(plan)
    after = vault_bytes(vault)
    record = one_line(after[VIEWS])
    assert after[VIEWS] == line_of(pin_view(record["id"], m.id))
    assert fresh(vault, m.id).pinned
    undo_last(vault)
    assert vault_bytes(vault) == before


def test_bulk_pin_appends_one_view_each(vault: Path) -> None:
    targets = [m for m in memories(vault).values() if not m.tombstoned and not m.pinned][:3]
    before = vault_bytes(vault)
    result = apply_bulk("pin", targets)
    assert len(result.applied) == 3 and not result.refused
    added = appended(before, vault_bytes(vault), VIEWS)
    lines = added.splitlines()
    assert [json.loads(line)["applied_to"] for line in lines] == [[m.id] for m in targets]
    assert len({json.loads(line)["id"] for line in lines}) == 3
    now = memories(vault)
    assert all(now[m.id].pinned for m in targets)


# --------------------------------------------------------------------------
# set: edit views


def test_set_appends_an_edit_view_and_the_scan_shows_it(vault: Path) -> None:
    m = pick(vault, "occurrence")
    assert m.confidence is not None
    before = vault_bytes(vault)
    changes = {"tags": ["db", "staging", "db"], "confidence": 0.5, "note": "checked by hand"}
    plan = Action("set", m, {"changes": changes}).plan()
    assert plan.summary.startswith("set: append view") and "edit_v1" in plan.summary
    apply_plan(plan)
    after = vault_bytes(vault)
    added = appended(before, after, VIEWS)
    view = one_line(added)
    fields = {"tags": ["db", "staging"], "confidence.p": 0.5, "note": "checked by hand"}
    old_tags = list(m.tags)
    assert added == line_of(
        {
            "id": view["id"],
            "lens": "edit_v1",
            "applied_to": [m.id],
            "delta_from_raw": {
                "added": 'tags=["db", "staging"]; confidence.p=0.5; note="checked by hand"',
                "removed": (f"tags={json.dumps(old_tags)}; " if old_tags else "")
                + f"confidence.p={json.dumps(m.confidence)}",
                "reweighted": [],
                "fields": fields,
            },
            "provenance_braid": [m.id],
        }
    )
    assert after[EXPERIENCES] == before[EXPERIENCES]
    edited = fresh(vault, m.id)
    assert edited.tags == ("db", "staging")
    assert edited.confidence == 0.5
    assert edited.native["note"] == "checked by hand"
    assert edited.native["edits"] == fields
    assert edited.native["edited_by"] == [view["id"]]
    # The raw record is untouched and still shown as the record's fields.
    assert edited.fields == m.fields and edited.body == m.body

    # A later edit names the earlier one; null reverts confidence to the raw value.
    Action("set", edited, {"changes": {"confidence.p": None}}).apply()
    reverted = fresh(vault, m.id)
    assert reverted.confidence == m.confidence and reverted.tags == ("db", "staging")
    last = vault_bytes(vault)[VIEWS].splitlines()[-1]
    assert json.loads(last)["provenance_braid"] == [m.id, view["id"]]
    assert json.loads(last)["delta_from_raw"]["fields"] == {"confidence.p": None}


@pytest.mark.parametrize(
    ("name", "value", "why"),
    [
        ("confidence.p", 1.7, "outside 0.0-1.0"),
        ("confidence", -0.1, "outside 0.0-1.0"),
        ("confidence", "high", "not a number"),
        ("confidence.p", True, "not a number"),
        ("tags", [1, 2], "not a list"),
        ("tags", {"a": 1}, "not a list"),
        ("note", 5, "not a string"),
        ("content.text", "new text", "edit the body instead"),
        ("type", "inference", "promote instead"),
        ("importance", 0.9, "not editable"),
        ("sign", "ed25519:x", "not editable"),
    ],
)
def test_set_refusals_name_the_field(vault: Path, name: str, value: Any, why: str) -> None:
    m = pick(vault)
    before = vault_bytes(vault)
    with pytest.raises(RefusedError) as err:
        Action("set", m, {"changes": {name: value}}).apply()
    assert str(err.value).startswith(f"{name}: ") and why in str(err.value)
    assert vault_bytes(vault) == before


def test_set_without_a_change_is_refused(vault: Path) -> None:
    m = pick(vault)
    with pytest.raises(RefusedError, match="already has that value"):
        Action("set", m, {"changes": {"tags": list(m.tags), "note": None}}).plan()


def test_adapter_rejects_a_bad_hand_written_edit_view(tmp_path: Path) -> None:
    root = tmp_path / "v"
    root.mkdir()
    exp = {
        "id": "exp_a",
        "type": "occurrence",
        "created_at": "2026-11-01T10:00:00Z",
        "content": {"text": "Raw."},
        "confidence": {"p": 0.9},
    }
    good = {
        "id": "view_ok",
        "lens": "edit_v1",
        "applied_to": ["exp_a"],
        "delta_from_raw": {"fields": {"confidence.p": 0.4, "future_field": 1}},
    }
    bad = {
        "id": "view_bad",
        "lens": "edit_v1",
        "applied_to": ["exp_a"],
        "delta_from_raw": {"fields": {"confidence.p": 2}},
    }
    (root / EXPERIENCES).write_text(json.dumps(exp) + "\n", encoding="utf-8")
    (root / VIEWS).write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    result = ADAPTER.scan(root)
    [m] = result.memories
    assert m.confidence == 0.4 and m.native["edits"] == {"confidence.p": 0.4}
    [problem] = result.problems
    assert problem.path == VIEWS and problem.line == 2
    assert problem.reason is Reason.OUT_OF_RANGE and "confidence.p" in problem.detail


# --------------------------------------------------------------------------
# edit body / promote: derive upward


def _derived(before: dict[str, bytes], after: dict[str, bytes]) -> tuple[dict[str, Any], Any]:
    """The one new experience and the one new WAL entry; nothing else changed."""
    assert set(before) == set(after)
    for name in before:
        if name not in (EXPERIENCES, WAL):
            assert after[name] == before[name], f"{name} changed"
    for name in (EXPERIENCES, WAL):
        assert after[name].startswith(before[name]), f"{name}: existing bytes changed"
    exp_line = after[EXPERIENCES][len(before[EXPERIENCES]) :]
    wal_line = after[WAL][len(before[WAL]) :]
    return one_line(exp_line), (exp_line, wal_line)


def _expected_derived(
    new_id: str, new_type: str, parent: str, text: str, method: str
) -> dict[str, Any]:
    return {
        "id": new_id,
        "type": new_type,
        "created_at": TS,
        "content": {"text": text, "media": [], "structured": {}},
        "provenance": {"sources": [], "actor": "user", "method": method, "tool": "memlens"},
        "evidence_ptrs": [parent],
        "parents": [parent],
    }


def _next_wal(before: bytes) -> str:
    numbers = [
        int(item.obj["wal_id"][4:])
        for item in parse_json_lines(before)
        if isinstance(item, JsonLine) and re.fullmatch(r"wal_\d+", str(item.obj.get("wal_id")))
    ]
    return f"wal_{max(numbers, default=0) + 1:06d}"


@pytest.mark.parametrize("kind", LATTICE[:-1])
def test_edit_body_derives_the_next_type_up(vault: Path, kind: str) -> None:
    m = pick(vault, kind, pinned=False, archived=False)
    before = vault_bytes(vault)
    plan = Action("edit_body", m, {"body": "Corrected account.\nSecond line."}).plan()
    assert plan.describe() == [f"rewrite {EXPERIENCES}", f"rewrite {WAL}"]
    apply_plan(plan)
    after = vault_bytes(vault)
    record, (exp_line, wal_line) = _derived(before, after)
    new_type = LATTICE[LATTICE.index(kind) + 1]
    assert re.fullmatch(rf"exp_{re.escape(TS)}_[0-9a-f]{{4}}", record["id"])
    expected = _expected_derived(
        record["id"], new_type, m.id, "Corrected account.\nSecond line.", "reconcile"
    )
    assert exp_line == line_of(expected)
    op = {"ts": TS, "op": "append", "target": "exp", "id": record["id"]}
    assert wal_line == line_of({"wal_id": _next_wal(before[WAL]), "ops": [op]})
    now = memories(vault)
    derived = now[record["id"]]
    assert derived.kind == new_type and derived.body == "Corrected account.\nSecond line."
    assert [(r.target, r.resolved) for r in derived.relations if r.field == "parents"] == [
        (m.id, m.id)
    ]
    assert now[m.id].fields == m.fields and now[m.id].body == m.body
    scan = ADAPTER.scan(vault)
    assert not [p for p in scan.problems if p.id == record["id"]]


def test_edit_body_refused_on_a_reconciliation(vault: Path) -> None:
    m = pick(vault, "reconciliation")
    before = vault_bytes(vault)
    with pytest.raises(RefusedError, match=r"^body: .*top of the lattice"):
        Action("edit_body", m, {"body": "Other."}).apply()
    with pytest.raises(RefusedError, match=r"^body: unchanged"):
        Action("edit_body", pick(vault, "occurrence"), {"body": pick(vault).body}).plan()
    assert vault_bytes(vault) == before


def test_promote_default_prefixes_the_text(vault: Path) -> None:
    m = pick(vault, "occurrence")
    before = vault_bytes(vault)
    Action("promote", m, {"as_of": "2026-11-22"}).apply()
    record, (exp_line, _) = _derived(before, vault_bytes(vault))
    expected = _expected_derived(
        record["id"], "observation", m.id, "Observed: " + m.body, "model_infer"
    )
    assert exp_line == line_of(expected)
    assert fresh(vault, record["id"]).kind == "observation"


def test_promote_options_text_type_and_now(vault: Path) -> None:
    m = pick(vault, "occurrence")
    before = vault_bytes(vault)
    params = {"text": "Locks pile up at 03:00.", "type": "inference", "now": "2026-12-01T08:30"}
    Action("promote", m, params).apply()
    record, (_, wal_line) = _derived(before, vault_bytes(vault))
    assert record["type"] == "inference" and record["created_at"] == "2026-12-01T08:30:00Z"
    assert record["id"].startswith("exp_2026-12-01T08:30:00Z_")
    assert record["content"]["text"] == "Locks pile up at 03:00."
    assert json.loads(wal_line)["ops"][0]["ts"] == "2026-12-01T08:30:00Z"


@pytest.mark.parametrize(
    ("kind", "params", "message"),
    [
        ("inference", {}, "^type: .*type=reconciliation"),
        ("reconciliation", {}, "^type: .*top of the lattice"),
        ("observation", {"type": "occurrence"}, "^type: occurrence is not above observation"),
        ("observation", {"type": "observation"}, "^type: observation is not above"),
        ("occurrence", {"type": "../x"}, "^type: '../x' is not one of"),
        ("occurrence", {"importance": 0.9}, "^importance: not a promote option"),
        ("occurrence", {"now": "tomorrow"}, "^now: 'tomorrow' is not an ISO"),
        ("occurrence", {"text": "   "}, "^body: .*empty"),
    ],
)
def test_promote_refusals(vault: Path, kind: str, params: dict[str, Any], message: str) -> None:
    m = pick(vault, kind)
    before = vault_bytes(vault)
    with pytest.raises(RefusedError, match=message):
        Action("promote", m, params).apply()
    assert vault_bytes(vault) == before


def test_promote_inference_to_reconciliation_when_chosen(vault: Path) -> None:
    m = pick(vault, "inference")
    Action("promote", m, {"type": "reconciliation"}).apply()
    derived = [x for x in memories(vault).values() if x.fields.get("parents") == [m.id]]
    assert [(x.kind, x.body) for x in derived] == [("reconciliation", "Reconciled: " + m.body)]


# --------------------------------------------------------------------------
# archive / restore


def test_archive_then_restore_append_wal_entries(vault: Path) -> None:
    m = pick(vault)
    before = vault_bytes(vault)
    plan = Action("archive", m).plan()
    assert plan.summary.startswith("archive: append wal_")
    apply_plan(plan)
    middle = vault_bytes(vault)
    wal_id = _next_wal(before[WAL])
    added = appended(before, middle, WAL)
    assert added == line_of({"wal_id": wal_id, "ops": [archive_op(m.id, TS)]})
    archived = fresh(vault, m.id)
    assert archived.archived and not archived.tombstoned
    assert archived.body == m.body  # an archive is not an erasure
    assert ADAPTER.decay(archived, NOW.date()).health is Health.ARCHIVED

    Action("restore", archived).apply()
    added = appended(middle, vault_bytes(vault), WAL)
    assert added == line_of({"wal_id": _next_wal(middle[WAL]), "ops": [restore_op(m.id, TS)]})
    restored = fresh(vault, m.id)
    assert not restored.archived
    assert ADAPTER.decay(restored, NOW.date()).status == "live"
    with pytest.raises(RefusedError, match="not archived"):
        writer_for(FORMAT).plan_restore(restored)


def test_archive_reason_label_is_a_note_never_an_erasure(vault: Path) -> None:
    m = pick(vault)
    before = vault_bytes(vault)
    Action("archive", m, {"reason": "gdpr_erasure"}).apply()
    op = one_line(appended(before, vault_bytes(vault), WAL))["ops"][0]
    assert op["reason"] == "archived" and op["note"] == "gdpr_erasure"
    again = fresh(vault, m.id)
    assert again.archived and not again.tombstoned


# --------------------------------------------------------------------------
# undo restores every byte


def _act(vault: Path, name: str) -> tuple[Memory, dict[str, Any]]:
    if name == "unpin":
        m = pick(vault)
        Action("pin", m).apply()
        return fresh(vault, m.id), {}
    if name == "restore":
        m = pick(vault)
        Action("archive", m).apply()
        return fresh(vault, m.id), {}
    params: dict[str, Any] = {
        "set": {"changes": {"tags": ["x"]}},
        "edit_body": {"body": "Rewritten."},
    }.get(name, {})
    return pick(vault, "occurrence"), params


@pytest.mark.parametrize(
    "name", ["pin", "unpin", "set", "edit_body", "promote", "archive", "restore"]
)
def test_undo_restores_every_byte(vault: Path, name: str) -> None:
    m, params = _act(vault, name)
    before = vault_bytes(vault)
    action = Action(name, m, params)
    action.apply()
    assert vault_bytes(vault) != before
    action.undo()
    assert vault_bytes(vault) == before


# --------------------------------------------------------------------------
# conflicts


def _rewrite_raw_text(vault: Path, exp_id: str) -> None:
    path = vault / EXPERIENCES
    lines = path.read_bytes().split(b"\n")
    for n, raw in enumerate(lines):
        if exp_id.encode() in raw and b'"text": "' in raw:
            lines[n] = raw.replace(b'"text": "', b'"text": "EDITED ', 1)
            break
    path.write_bytes(b"\n".join(lines))


@pytest.mark.parametrize("name", ["pin", "set", "edit_body", "promote", "archive"])
def test_external_rewrite_of_the_record_is_a_conflict(vault: Path, name: str) -> None:
    m, params = _act(vault, name)
    _rewrite_raw_text(vault, m.id)
    before = vault_bytes(vault)
    with pytest.raises(ConflictError, match=re.escape(f"{m.id} changed on disk since it was read")):
        Action(name, m, params).plan()
    assert vault_bytes(vault) == before


def test_external_archive_after_the_scan_is_a_conflict(vault: Path) -> None:
    m = pick(vault)
    # Another writer archives it after we scanned.
    with (vault / WAL).open("ab") as fh:
        fh.write(line_of({"wal_id": "wal_900000", "ops": [archive_op(m.id, TS)]}))
    before = vault_bytes(vault)
    with pytest.raises(ConflictError, match="archive state changed"):
        Action("pin", m).apply()
    assert vault_bytes(vault) == before


def test_external_pin_after_the_scan_is_a_conflict(vault: Path) -> None:
    m = pick(vault)
    with (vault / VIEWS).open("ab") as fh:
        fh.write(line_of(pin_view("view_external", m.id)))
    with pytest.raises(ConflictError, match="views changed"):
        Action("set", m, {"changes": {"note": "x"}}).plan()


def test_same_size_same_mtime_rewrite_between_plan_and_apply(vault: Path) -> None:
    m = pick(vault)
    plan = Action("pin", m).plan()
    path = vault / VIEWS
    st = path.stat()
    data = path.read_bytes()
    swapped = data.replace(b"causal_v2", b"causal_v3", 1)
    assert swapped != data and len(swapped) == len(data)
    path.write_bytes(swapped)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(ConflictError):
        apply_plan(plan)
    assert path.read_bytes() == swapped
    assert not list(vault.glob(".memlens-tmp-*"))


def test_erased_records_refuse_every_action(vault: Path) -> None:
    erased = [m for m in memories(vault).values() if m.tombstoned]
    assert erased
    m = erased[0]
    before = vault_bytes(vault)
    w = writer_for(FORMAT)
    for name, params in [
        ("pin", {}),
        ("set", {"changes": {"note": "x"}}),
        ("edit_body", {"body": "x"}),
        ("promote", {}),
        ("archive", {}),
    ]:
        with pytest.raises(RefusedError, match="tombstoned"):
            Action(name, m, params).plan()
    for call in (
        lambda: w.plan_pin(m),
        lambda: w.plan_unpin(m),
        lambda: w.plan_archive(m),
        lambda: w.plan_restore(m),
        lambda: w.plan_set(m, {"note": "x"}),
        lambda: w.plan_edit_body(m, "x"),
        lambda: w.plan_promote(m, {}),
    ):
        with pytest.raises(RefusedError, match="tombstoned"):
            call()
    assert vault_bytes(vault) == before


# --------------------------------------------------------------------------
# line endings, BOM, paths


def test_crlf_file_gets_a_crlf_line_and_keeps_its_bytes(vault: Path) -> None:
    wal = vault / WAL
    wal.write_bytes(wal.read_bytes().replace(b"\n", b"\r\n"))
    stances = (vault / STANCES).read_bytes()
    assert b"\r\n" in stances
    m = pick(vault)
    before = vault_bytes(vault)
    Action("archive", m).apply()
    added = appended(before, vault_bytes(vault), WAL)
    assert added == line_of(
        {"wal_id": _next_wal(before[WAL]), "ops": [archive_op(m.id, TS)]}, b"\r\n"
    )
    assert (vault / STANCES).read_bytes() == stances
    assert fresh(vault, m.id).archived


def test_missing_final_newline_is_added_in_the_files_style(vault: Path) -> None:
    exps = vault / EXPERIENCES
    exps.write_bytes(exps.read_bytes().rstrip(b"\n"))
    m = pick(vault, "occurrence")
    before = (vault / EXPERIENCES).read_bytes()
    Action("promote", m).apply()
    after = exps.read_bytes()
    assert after.startswith(before + b"\n")
    assert one_line(after[len(before) + 1 :])["parents"] == [m.id]


def _tiny_vault(root: Path, exp_id: str) -> None:
    root.mkdir(parents=True)
    record = {
        "id": exp_id,
        "type": "occurrence",
        "created_at": "2026-11-01T10:00:00Z",
        "content": {"text": "Something."},
    }
    (root / EXPERIENCES).write_text(json.dumps(record) + "\n", encoding="utf-8")


@pytest.mark.parametrize("bad_id", ["../escape", "a/b", "..\\x", "~root", "C:evil"])
def test_path_syntax_ids_are_refused(tmp_path: Path, bad_id: str) -> None:
    root = tmp_path / "vault"
    _tiny_vault(root, bad_id)
    [m] = ADAPTER.scan(root).memories
    outside = sorted(p for p in tmp_path.rglob("*"))
    for name, params in [("pin", {}), ("archive", {}), ("promote", {})]:
        with pytest.raises(RefusedError, match="path syntax"):
            Action(name, m, params).apply()
    assert sorted(p for p in tmp_path.rglob("*")) == outside


def test_symlinked_store_is_not_written_through(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    _tiny_vault(root, "exp_a")
    target = tmp_path / "outside.jsonl"
    target.write_bytes(b"")
    (root / VIEWS).symlink_to(target)
    [m] = ADAPTER.scan(root).memories
    with pytest.raises(UnsafePathError):
        Action("pin", m).apply()
    assert target.read_bytes() == b""


# --------------------------------------------------------------------------
# properties


def _store(lines: list[str], crlf: bool, bom: bool, final: bool) -> bytes:
    eol = "\r\n" if crlf else "\n"
    text = eol.join(lines) + (eol if final and lines else "")
    return (BOM if bom else b"") + text.encode("utf-8")


_JSON_LINE = st.dictionaries(st.text(max_size=5), st.text(max_size=20), max_size=3).map(json.dumps)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(_JSON_LINE, max_size=5),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.dictionaries(st.text(max_size=5), st.text(max_size=30), max_size=3),
)
def test_append_line_keeps_every_byte_and_reads_back(
    lines: list[str], crlf: bool, bom: bool, final: bool, record: dict[str, str]
) -> None:
    old = _store(lines, crlf, bom, final)
    text = json.dumps(record, ensure_ascii=False)
    for char in ("\u2028", "\u2029", "\x85"):
        text = text.replace(char, f"\\u{ord(char):04x}")
    try:
        line = text.encode("utf-8")
    except UnicodeEncodeError:
        return  # the writer refuses lone surrogates
    new = append_line(old, line)
    assert new.startswith(old)
    first_is_crlf = crlf and bool(lines) and (len(lines) > 1 or final)
    assert new.endswith(b"\r\n" if first_is_crlf else b"\n")
    items = parse_json_lines(new)
    old_items = parse_json_lines(old)
    assert items[: len(old_items)] == old_items
    assert len(items) == len(old_items) + 1
    last = items[-1]
    assert isinstance(last, JsonLine) and last.obj == record
    # No line-splitter breaks the new line apart.
    assert new.decode("utf-8-sig").splitlines()[-1] == text


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(min_size=1, max_size=40).filter(lambda s: s.strip()))
def test_edited_body_round_trips_through_the_adapter(tmp_path: Path, body: str) -> None:
    root = Path(tempfile.mkdtemp(dir=tmp_path)) / "v"
    _tiny_vault(root, "exp_a")
    [m] = ADAPTER.scan(root).memories
    if body == m.body:
        return
    try:
        plan = writer_for(FORMAT).plan_edit_body(m, body)
    except RefusedError as exc:
        assert "not valid Unicode" in str(exc)
        return
    apply_plan(plan)
    derived = [x for x in ADAPTER.scan(root).memories if x.id != "exp_a"]
    assert [x.body for x in derived] == [body]
    for raw in (root / EXPERIENCES).read_bytes().decode("utf-8").splitlines():
        json.loads(raw)  # every line is still one JSON object under splitlines()


def test_writer_clock_and_now_option() -> None:
    w = ExperienceRecordWriter(clock=lambda: datetime(2026, 1, 2, 3, 4, 5))
    assert w._stamp() == "2026-01-02T03:04:05Z"
    assert w._stamp("2026-01-02T05:04:05+02:00") == "2026-01-02T03:04:05Z"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", ExperienceRecordWriter()._stamp())
