"""The experience-records adapter against the own test vault and hand-made vaults."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlens.core.formats.experience_record.action_records import (
    archive_op,
    next_wal_id,
    pin_view,
    restore_op,
)
from memlens.core.formats.experience_record.adapter import ExperienceRecordAdapter
from memlens.core.formats.experience_record.jsonl import parse_json_lines
from memlens.core.formats.experience_record.records import is_external_pointer, title_of
from memlens.core.model import Health, Memory, Reason, RefIssue, ScanResult

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
VAULT = FIXTURES / "experience-records"
EXPECTED = json.loads(
    (FIXTURES / "expected" / "experience-records.json").read_text(encoding="utf-8")
)
AS_OF = date(2026, 11, 22)
ADAPTER = ExperienceRecordAdapter()

ERASED_ID = "exp_2026-10-29T15:40:00Z_6400"
# Fragments of the erased record's content (name, phone, address).
ERASED_CONTENT = ("Ingrid", "Haugland", "912 55 318", "Storgata", "Tromsø")


@pytest.fixture(scope="module")
def result() -> ScanResult:
    return ADAPTER.scan(VAULT)


def by_id(result: ScanResult) -> dict[str, Memory]:
    return {m.id: m for m in result.memories}


def write_lines(path: Path, lines: list[str]) -> None:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def exp(
    exp_id: str, type_: str = "occurrence", text: str = "Something happened.", **more: Any
) -> str:
    obj: dict[str, Any] = {
        "id": exp_id,
        "type": type_,
        "created_at": "2026-11-01T10:00:00Z",
        "content": {"text": text, "media": [], "structured": {}},
    }
    obj.update(more)
    return json.dumps(obj, ensure_ascii=False)


@pytest.fixture()
def vault_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "er"
    shutil.copytree(VAULT, dest)
    for p in dest.iterdir():
        p.chmod(0o644)
    dest.chmod(0o755)
    return dest


def append_line(path: Path, obj: dict[str, Any]) -> None:
    with path.open("ab") as fh:
        fh.write(json.dumps(obj).encode("utf-8") + b"\n")


# ---------------------------------------------------------------- fixture


def test_metadata() -> None:
    assert ADAPTER.format_id == "experience-records"
    assert ADAPTER.label == "Experience records"


def test_detect(tmp_path: Path) -> None:
    assert ADAPTER.detect(VAULT)
    assert not ADAPTER.detect(tmp_path)
    (tmp_path / "views.jsonl").write_text("", encoding="utf-8")
    assert not ADAPTER.detect(tmp_path)
    (tmp_path / "experiences.jsonl").write_text("", encoding="utf-8")
    assert ADAPTER.detect(tmp_path)


def test_valid_counts(result: ScanResult) -> None:
    assert len(result.memories) == EXPECTED["valid_count"]
    live = [m for m in result.memories if not m.tombstoned and not m.archived]
    assert len(live) == EXPECTED["live_count"]
    kinds = Counter(m.kind for m in result.memories)
    breakdown = EXPECTED["valid_breakdown"]
    for kind in ("occurrence", "observation", "inference", "reconciliation"):
        assert kinds[kind] == breakdown[kind]
    assert len(result.records["views"]) == breakdown["views"]
    assert len(result.records["stances"]) == breakdown["stances"]
    assert len(result.records["wal"]) == breakdown["wal_entries"]
    assert all(m.path == "experiences.jsonl" and m.line for m in result.memories)
    assert all(m.format == "experience-records" for m in result.memories)


def test_invalid_items_exactly(result: ScanResult) -> None:
    got = {(p.path, p.line, p.reason.value, p.id, p.detail) for p in result.problems}
    want = {(i["file"], i["line"], i["reason"], i["id"], i["detail"]) for i in EXPECTED["invalid"]}
    assert got == want
    assert len(result.problems) == len(EXPECTED["invalid"])
    # Invalid lines are never loaded as memories.
    invalid_lines = {p.line for p in result.problems}
    assert not invalid_lines & {m.line for m in result.memories}


def test_blank_line_is_ignored(result: ScanResult) -> None:
    lines = (VAULT / "experiences.jsonl").read_bytes().split(b"\n")
    assert lines[26].strip() == b""  # line 27
    assert all(p.line != 27 for p in result.problems)
    # Line numbers after the blank line still count it.
    m = by_id(result)["exp_2026-10-31T09:35:00Z_16fb"]
    assert m.line == 28


def test_tombstoned(result: ScanResult) -> None:
    tomb = [m for m in result.memories if m.tombstoned]
    assert [m.id for m in tomb] == [t["id"] for t in EXPECTED["tombstoned"]]
    for m, want in zip(tomb, EXPECTED["tombstoned"], strict=True):
        info = m.native["tombstone"]
        assert info["reason"] == want["reason"]
        assert info["ts"] == want["ts"]
        assert info["wal_id"] == want["wal_id"]
        assert m.title == f"[tombstoned: {want['reason']}]"
        assert m.body == ""
        assert not m.archived


def test_tombstoned_content_not_kept(result: ScanResult) -> None:
    m = by_id(result)[ERASED_ID]
    assert m.kind == "occurrence"
    assert set(m.fields) <= {"id", "type", "created_at"}
    assert set(m.native) <= {"id", "type", "created_at", "tombstone"}
    assert m.extra == {} and m.tags == () and m.relations == ()
    assert m.confidence is None and m.source is None
    text = repr(m)
    for fragment in ERASED_CONTENT:
        assert fragment not in text
    # Nor anywhere else the scan produced.
    everything = repr(result.problems) + repr(result.ref_problems) + repr(result.records)
    for fragment in ERASED_CONTENT:
        assert fragment not in everything


def test_references_exactly(result: ScanResult) -> None:
    got = {(r.id, r.field, r.ref, r.reason.value) for r in result.ref_problems}
    want = {(r["from"], r["field"], r["ref"], r["issue"]) for r in EXPECTED["references"]}
    assert got == want
    assert len(result.ref_problems) == len(EXPECTED["references"])
    paths = {r.id: r.path for r in result.ref_problems}
    assert paths["view_2026-10-31T09:40:00Z_c5a2"] == "views.jsonl"
    assert paths["stance_2026-10-21_e90d"] == "stances.jsonl"
    assert paths["exp_2026-10-25T09:00:00Z_1a9a"] == "experiences.jsonl"
    view_ref = next(r for r in result.ref_problems if r.id == "view_2026-10-31T09:40:00Z_c5a2")
    assert view_ref.line == 4


def test_relations_and_external_pointers(result: ScanResult) -> None:
    m = by_id(result)["exp_2026-10-25T09:00:00Z_1a9a"]
    targets = [(r.field, r.target, r.type, r.resolved) for r in m.relations]
    assert (
        "parents",
        "exp_2026-10-24T10:40:00Z_98d6",
        "derived_from",
        "exp_2026-10-24T10:40:00Z_98d6",
    ) in targets
    assert ("parents", "../../../../etc/passwd", "derived_from", None) in targets
    assert ("evidence_ptrs", "../../../../etc/passwd", "evidence", None) in targets
    # External pointers are not ids: never turned into relations.
    assert all(not r.target.startswith("uri:") for r in m.relations)
    assert is_external_pointer("uri:drive://henrik/grant-notes")
    assert is_external_pointer("https://example.com/x")
    assert is_external_pointer("vec://sem/exp_1")
    assert not is_external_pointer("exp_2025-10-02T17:01:05Z_9f3c")


def test_edges_for_graph(result: ScanResult) -> None:
    edges = result.records["edges"]
    assert {e["type"] for e in edges} == {
        "applied_to",
        "provenance",
        "reweighted",
        "candidate",
        "support",
    }
    assert {
        "source": "stance_2026-10-25_0c3f",
        "target": "view_2026-10-25T09:30:00Z_d2c6",
        "type": "support",
        "field": "decision.support",
        "issue": None,
    } in edges
    dangling = [e for e in edges if e["issue"] == "dangling_reference"]
    assert {e["target"] for e in dangling} == {
        "exp_2026-10-22T09:00:00Z_0000",
        "exp_2026-10-21T13:20:00Z_dead",
    }


def test_records_keep_line_and_file(result: ScanResult) -> None:
    views = result.records["views"]
    assert views[0]["id"] == "view_2026-10-19T08:02:00Z_a3d1"  # BOM-prefixed first line
    assert views[0]["_line"] == 1 and views[0]["_file"] == "views.jsonl"
    assert views[1]["x_notes"] == "for the lab's finance checklist"
    stances = result.records["stances"]  # CRLF file
    assert [s["_line"] for s in stances] == [1, 2, 3, 4]
    assert all(s["_file"] == "stances.jsonl" for s in stances)
    wal = result.records["wal"]
    assert wal[-1]["wal_id"] == "wal_000016" and wal[-1]["_line"] == 16


def test_memory_fields(result: ScanResult) -> None:
    m = by_id(result)["exp_2026-10-28T06:20:00Z_94bd"]
    assert m.kind == "occurrence"
    assert m.title.startswith("供应商说周四发货 📦")
    assert m.body.startswith("供应商说周四发货")
    assert m.tags == ("supplier", "shipping")
    assert m.confidence == 0.94
    assert m.source == "user"
    assert m.created is not None and m.created.isoformat() == "2026-10-28T06:20:00+00:00"
    raw = json.loads((VAULT / "experiences.jsonl").read_text(encoding="utf-8").split("\n")[12])
    assert list(m.fields) == list(raw)  # key order kept
    assert m.fields == raw


def test_extra_fields_preserved(result: ScanResult) -> None:
    for item in EXPECTED["extra_fields_preserved"]:
        m = by_id(result)[item["id"]]
        assert list(m.extra) == item["fields"]
        for key in item["fields"]:
            assert key in m.fields


def test_markup_and_long_text(result: ScanResult) -> None:
    ci = by_id(result)["exp_2026-10-26T22:07:15Z_69b3"]
    assert "\x1b[31mFAILED" in ci.body  # ESC kept literally
    assert "[bold red]" in ci.body
    long = by_id(result)["exp_2026-11-05T20:20:20Z_f7bf"]
    assert len(long.body) >= 500
    assert len(long.title) <= 100 and long.title.endswith("…")


def test_decay_entries(result: ScanResult) -> None:
    mems = by_id(result)
    for want in EXPECTED["decay"]:
        m = mems[want["id"]]
        d = ADAPTER.decay(m, AS_OF)
        assert m.kind == want["type"]
        assert d.status == want["status"]
        assert d.age_days == want["age_days"]
        if want["status"] == "live":
            assert d.health is Health.STABLE
            assert d.strength == 1.0 and d.weight == 1.0
            assert "no decay" in d.why
        else:
            assert d.health is Health.TOMBSTONED
            assert d.strength == 0.0 and d.weight == 0.0
            assert "wal_000016" in d.why and "gdpr_erasure" in d.why


def test_decay_is_pure_in_as_of(result: ScanResult) -> None:
    m = by_id(result)["exp_2026-10-19T07:05:12Z_0828"]
    assert ADAPTER.decay(m, date(2026, 12, 22)).age_days == 64
    assert ADAPTER.decay(m, date(2026, 12, 22)).status == "live"


# ---------------------------------------------------------------- WAL, views


def test_archive_then_restore(vault_copy: Path) -> None:
    target = "exp_2026-10-19T07:05:12Z_0828"
    wal = vault_copy / "wal.jsonl"
    entries = ADAPTER.scan(vault_copy).records["wal"]
    wal_id = next_wal_id(entries)
    assert wal_id == "wal_000017"
    append_line(wal, {"wal_id": wal_id, "ops": [archive_op(target, "2026-11-21T10:00:00Z")]})
    m = by_id(ADAPTER.scan(vault_copy))[target]
    assert m.archived and not m.tombstoned
    assert "soil-moisture" in m.body  # archived content stays readable
    d = ADAPTER.decay(m, AS_OF)
    assert d.status == "archived" and d.health is Health.ARCHIVED and d.weight == 0.0
    assert m.native["archive"]["wal_id"] == "wal_000017"

    append_line(wal, {"wal_id": "wal_000018", "ops": [restore_op(target, "2026-11-22T10:00:00Z")]})
    m = by_id(ADAPTER.scan(vault_copy))[target]
    assert not m.archived
    assert ADAPTER.decay(m, AS_OF).status == "live"


def test_restore_never_undoes_an_erasure(vault_copy: Path) -> None:
    append_line(
        vault_copy / "wal.jsonl",
        {"wal_id": "wal_000017", "ops": [restore_op(ERASED_ID, "2026-11-21T10:00:00Z")]},
    )
    m = by_id(ADAPTER.scan(vault_copy))[ERASED_ID]
    assert m.tombstoned and m.body == ""


def test_archived_is_not_references_tombstoned(vault_copy: Path) -> None:
    target = "exp_2026-10-27T08:00:00Z_8917"  # cited by a stance
    append_line(
        vault_copy / "wal.jsonl",
        {"wal_id": "wal_000017", "ops": [archive_op(target, "2026-11-21T10:00:00Z")]},
    )
    result = ADAPTER.scan(vault_copy)
    assert len(result.ref_problems) == len(EXPECTED["references"])


def test_pin_and_unpin_views(vault_copy: Path) -> None:
    target = "exp_2026-10-24T10:10:00Z_5f99"
    views = vault_copy / "views.jsonl"
    append_line(views, pin_view("view_pin_1", target))
    result = ADAPTER.scan(vault_copy)
    m = by_id(result)[target]
    assert m.pinned and m.native["pinned_by"] == "view_pin_1"
    assert ADAPTER.decay(m, AS_OF).health is Health.STABLE
    assert len(result.ref_problems) == len(EXPECTED["references"])

    append_line(views, pin_view("view_unpin_1", target, unpin=True))
    assert not by_id(ADAPTER.scan(vault_copy))[target].pinned
    append_line(views, pin_view("view_pin_2", target))
    assert by_id(ADAPTER.scan(vault_copy))[target].pinned


def test_erasure_wins_over_later_archive(tmp_path: Path) -> None:
    write_lines(tmp_path / "experiences.jsonl", [exp("e1", text="secret phone 555")])
    write_lines(
        tmp_path / "wal.jsonl",
        [
            json.dumps(
                {
                    "wal_id": "wal_000001",
                    "ops": [
                        {"op": "tombstone", "target": "exp", "id": "e1", "reason": "gdpr_erasure"},
                        archive_op("e1", "2026-11-02T00:00:00Z"),
                    ],
                }
            )
        ],
    )
    m = ADAPTER.scan(tmp_path).memories[0]
    assert m.tombstoned and not m.archived and "555" not in repr(m)


def test_erasure_applies_even_from_an_invalid_wal_entry(tmp_path: Path) -> None:
    write_lines(tmp_path / "experiences.jsonl", [exp("e1", text="secret phone 555")])
    write_lines(
        tmp_path / "wal.jsonl",
        [
            json.dumps(
                {
                    "wal_id": "wal_000001",
                    "ops": [42, {"op": "tombstone", "target": "exp", "id": "e1"}],
                }
            )
        ],
    )
    result = ADAPTER.scan(tmp_path)
    assert result.memories[0].tombstoned
    assert result.memories[0].title == "[tombstoned: erased]"
    (p,) = result.problems
    assert (p.path, p.line, p.reason) == ("wal.jsonl", 1, Reason.WRONG_TYPE)
    assert result.records["wal"] == []


# ---------------------------------------------------------------- validation


def scan_lines(tmp_path: Path, lines: list[str]) -> ScanResult:
    write_lines(tmp_path / "experiences.jsonl", lines)
    return ADAPTER.scan(tmp_path)


@pytest.mark.parametrize(
    ("line", "reason", "detail"),
    [
        ('{"id": "x"', Reason.MALFORMED_JSON, None),
        ("[1, 2]", Reason.MALFORMED_JSON, "JSON error: expected one object, got an array"),
        ('"just a string"', Reason.MALFORMED_JSON, None),
        ('{"type": "occurrence"}', Reason.MISSING_REQUIRED_FIELD, "lacks id"),
        (exp("e1", type_="memo"), Reason.WRONG_TYPE, None),
        (exp("e1", created_at=20261101), Reason.WRONG_TYPE, None),
        (exp("e1", content="plain"), Reason.WRONG_TYPE, "content is not an object"),
        (
            json.dumps(
                {"id": "e1", "type": "occurrence", "created_at": "2026-11-01", "content": {}}
            ),
            Reason.MISSING_REQUIRED_FIELD,
            "lacks content.text",
        ),
        (
            exp("e1", confidence={"p": "high"}),
            Reason.WRONG_TYPE,
            "confidence.p 'high' is not a number",
        ),
        (exp("e1", confidence={"p": True}), Reason.WRONG_TYPE, None),
        (exp("e1", confidence={"p": -0.1}), Reason.OUT_OF_RANGE, "confidence.p -0.1 outside 0-1"),
        (exp("e1", affect={"vad": {"v": 0.1, "a": 1.2, "d": 0}}), Reason.OUT_OF_RANGE, None),
        (exp("e1", affect={"vad": {"v": -1.5, "a": 0.2, "d": 0}}), Reason.OUT_OF_RANGE, None),
        (exp("e1", affect={"vad": {"v": 0, "a": 0.2, "d": "calm"}}), Reason.WRONG_TYPE, None),
        (exp("e1", parents="e0"), Reason.WRONG_TYPE, "parents is not a list of strings"),
        ('{"id": "e1", "t": "\\ud800"}', Reason.ENCODING, None),
    ],
)
def test_invalid_experience(tmp_path: Path, line: str, reason: Reason, detail: str | None) -> None:
    result = scan_lines(tmp_path, [exp("ok"), line])
    assert [m.id for m in result.memories] == ["ok"]
    (p,) = result.problems
    assert p.reason is reason and p.line == 2 and p.path == "experiences.jsonl"
    assert "\n" not in p.detail
    if detail is not None:
        assert p.detail == detail
    if reason is Reason.MALFORMED_JSON:
        assert p.detail.startswith("JSON error: ")


def test_affect_bounds_accept_edges(tmp_path: Path) -> None:
    line = exp("e1", affect={"vad": {"v": -1, "a": 0, "d": 1}}, confidence={"p": 1})
    result = scan_lines(tmp_path, [line])
    assert [m.confidence for m in result.memories] == [1.0]
    assert result.problems == []


def test_non_utf8_line_only_that_line(tmp_path: Path) -> None:
    path = tmp_path / "experiences.jsonl"
    data = (exp("a") + "\n").encode() + b'{"id": "caf\xe9"}\n' + (exp("b") + "\n").encode()
    path.write_bytes(data)
    result = ADAPTER.scan(tmp_path)
    assert [m.id for m in result.memories] == ["a", "b"]
    (p,) = result.problems
    assert p.reason is Reason.ENCODING and p.line == 2
    assert path.read_bytes() == data  # never rewritten


def test_bom_crlf_blank_lines(tmp_path: Path) -> None:
    body = "\r\n".join([exp("a", text="Première ligne.\r\nSecond."), "", "   ", exp("b"), ""])
    (tmp_path / "experiences.jsonl").write_bytes(b"\xef\xbb\xbf" + body.encode("utf-8"))
    result = ADAPTER.scan(tmp_path)
    assert result.problems == []
    assert [(m.id, m.line) for m in result.memories] == [("a", 1), ("b", 4)]
    assert result.memories[0].title == "Première ligne."


def test_duplicate_ids_every_copy(tmp_path: Path) -> None:
    result = scan_lines(tmp_path, [exp("d"), exp("x"), exp("d", text="Other.")])
    assert [m.id for m in result.memories] == ["x"]
    details = sorted((p.line, p.reason, p.detail) for p in result.problems)
    assert details == [
        (1, Reason.DUPLICATE_ID, "id 'd' also used by experiences.jsonl:3"),
        (3, Reason.DUPLICATE_ID, "id 'd' also used by experiences.jsonl:1"),
    ]


def test_lattice(tmp_path: Path) -> None:
    result = scan_lines(
        tmp_path,
        [
            exp("occ"),
            exp("inf", "inference", parents=["occ"]),
            exp("rec", "reconciliation", parents=["inf", "occ"]),
            exp("bad", "observation", parents=["occ", "inf", "rec"]),
            exp("same", "inference", parents=["inf"]),
            exp("worse", "occurrence", parents=["missing"]),
        ],
    )
    assert [m.id for m in result.memories] == ["occ", "inf", "rec", "same", "worse"]
    (p,) = result.problems
    assert p.reason is Reason.LATTICE_VIOLATION and p.line == 4 and p.id == "bad"
    assert p.detail == (
        "observation derives from higher-lattice parent(s) inf (inference), rec (reconciliation)"
    )
    (ref,) = result.ref_problems
    assert (ref.id, ref.field, ref.ref, ref.reason) == (
        "worse",
        "parents",
        "missing",
        RefIssue.DANGLING,
    )


def test_references_to_erased_and_invalid(tmp_path: Path) -> None:
    write_lines(
        tmp_path / "experiences.jsonl",
        [
            exp("gone", text="private"),
            exp("broken", confidence={"p": 3}),
            exp("child", "observation", parents=["gone"], evidence_ptrs=["broken", "https://x"]),
        ],
    )
    write_lines(
        tmp_path / "wal.jsonl",
        [
            json.dumps(
                {
                    "wal_id": "wal_000001",
                    "ops": [
                        {"op": "tombstone", "target": "exp", "id": "gone", "reason": "gdpr_erasure"}
                    ],
                }
            )
        ],
    )
    write_lines(
        tmp_path / "views.jsonl",
        [
            json.dumps(
                {
                    "id": "v1",
                    "lens": "x",
                    "applied_to": ["child"],
                    "provenance_braid": ["gone", "v0"],
                }
            )
        ],
    )
    write_lines(
        tmp_path / "stances.jsonl",
        [
            json.dumps(
                {
                    "id": "s1",
                    "candidates": [{"exp": "gone"}],
                    "decision": {"support": ["v1", "../v"]},
                }
            )
        ],
    )
    result = ADAPTER.scan(tmp_path)
    got = {(r.path, r.id, r.field, r.ref, r.reason) for r in result.ref_problems}
    assert got == {
        ("experiences.jsonl", "child", "parents", "gone", RefIssue.TOMBSTONED),
        ("experiences.jsonl", "child", "evidence_ptrs", "broken", RefIssue.DANGLING),
        ("views.jsonl", "v1", "provenance_braid", "v0", RefIssue.DANGLING),
        ("stances.jsonl", "s1", "candidates.exp", "gone", RefIssue.TOMBSTONED),
        ("stances.jsonl", "s1", "decision.support", "../v", RefIssue.UNSAFE),
    }


def test_invalid_view_store_lines(tmp_path: Path) -> None:
    write_lines(tmp_path / "experiences.jsonl", [exp("a")])
    (tmp_path / "views.jsonl").write_bytes(
        b'{"id": "v1", "applied_to": ["a"]}\n{"id": \n\xff\xfe\n{"lens": "x"}\n'
        b'{"id": "v2", "applied_to": "a"}\n'
    )
    write_lines(tmp_path / "stances.jsonl", ['{"id": "s1"}', '{"id": "s1"}'])
    write_lines(tmp_path / "wal.jsonl", ['{"wal_id": "wal_1", "ops": []}', "[]", '{"ops": []}'])
    result = ADAPTER.scan(tmp_path)
    got = sorted((p.path, p.line or 0, p.reason.value) for p in result.problems)
    assert got == [
        ("stances.jsonl", 1, "duplicate_id"),
        ("stances.jsonl", 2, "duplicate_id"),
        ("views.jsonl", 2, "malformed_json"),
        ("views.jsonl", 3, "encoding"),
        ("views.jsonl", 4, "missing_required_field"),
        ("views.jsonl", 5, "wrong_type"),
        ("wal.jsonl", 2, "malformed_json"),
        ("wal.jsonl", 3, "missing_required_field"),
    ]
    assert [v["id"] for v in result.records["views"]] == ["v1"]
    assert result.records["stances"] == []
    assert [w["wal_id"] for w in result.records["wal"]] == ["wal_1"]
    assert [m.id for m in result.memories] == ["a"]


def test_empty_store_and_missing_side_files(tmp_path: Path) -> None:
    (tmp_path / "experiences.jsonl").write_bytes(b"")
    result = ADAPTER.scan(tmp_path)
    assert result.memories == [] and result.problems == []
    assert result.records["views"] == [] and result.records["edges"] == []


def test_title_of() -> None:
    assert title_of("First one. Second one.") == "First one."
    assert title_of("\n\n  line one\nline two") == "line one"
    assert title_of("x" * 300) == "x" * 99 + "…"
    assert title_of("") == ""


def test_parse_json_lines_numbers() -> None:
    items = parse_json_lines(b'\xef\xbb\xbf{"a": 1}\r\n\r\n{"b": 2}\r\nnope\r\n')
    assert [(type(i).__name__, i.line) for i in items] == [
        ("JsonLine", 1),
        ("JsonLine", 3),
        ("LineError", 4),
    ]


def test_huge_numbers_and_deep_nesting_do_not_crash(tmp_path: Path) -> None:
    result = scan_lines(
        tmp_path,
        [
            '{"id": "n", "x": ' + "1" * 5000 + "}",
            "[" * 100_000 + "]" * 100_000,
            '{"id": "d", "x": ' + '{"a": ' * 5000 + "1" + "}" * 5000 + "}",
        ],
    )
    assert result.memories == []
    assert [p.reason for p in result.problems] == [Reason.MALFORMED_JSON] * 3


# ---------------------------------------------------------------- fuzzing

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)

# Objects that look like the real records, so the fuzzing reaches deep code.
field_names = st.sampled_from(
    [
        "id",
        "type",
        "created_at",
        "content",
        "confidence",
        "affect",
        "parents",
        "evidence_ptrs",
        "tags",
        "provenance",
        "wal_id",
        "ops",
        "op",
        "target",
        "reason",
        "lens",
        "applied_to",
        "provenance_braid",
        "candidates",
        "decision",
        "support",
        "exp",
        "text",
        "vad",
        "p",
    ]
)
ids = st.sampled_from(["e1", "e2", "v1", "s1", "../x", "uri:y", "pin", "unpin", "tombstone", "exp"])
LATTICE_VALUES = ["occurrence", "observation", "inference", "reconciliation"]
structured = st.recursive(
    st.none()
    | st.booleans()
    | st.floats()
    | ids
    | st.sampled_from([*LATTICE_VALUES, "archived", "gdpr_erasure", "2026-11-01T00:00:00Z"]),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(field_names, children, max_size=6)
    ),
    max_leaves=20,
)

FILES = ("experiences.jsonl", "views.jsonl", "stances.jsonl", "wal.jsonl")
FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def check_scan(root: Path) -> None:
    result = ADAPTER.scan(root)
    for m in result.memories:
        ADAPTER.decay(m, AS_OF)
        assert m.kind in LATTICE_VALUES
    for p in result.problems:
        assert "\n" not in p.detail


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(FILES), st.binary(max_size=80)), max_size=12))
def test_fuzz_arbitrary_bytes(tmp_path: Path, lines: list[tuple[str, bytes]]) -> None:
    root = tmp_path / "fuzz-bytes"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    for name in FILES:
        data = b"\n".join(b for f, b in lines if f == name)
        (root / name).write_bytes(data)
    check_scan(root)


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(FILES), json_values), max_size=10))
def test_fuzz_arbitrary_json(tmp_path: Path, lines: list[tuple[str, Any]]) -> None:
    root = tmp_path / "fuzz-json"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    for name in FILES:
        text = "\n".join(json.dumps(v) for f, v in lines if f == name)
        (root / name).write_text(text, encoding="utf-8", errors="surrogatepass")
    check_scan(root)


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(FILES), structured), max_size=14))
def test_fuzz_record_shaped_json(tmp_path: Path, lines: list[tuple[str, Any]]) -> None:
    root = tmp_path / "fuzz-shaped"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    for name in FILES:
        text = "\n".join(json.dumps(v) for f, v in lines if f == name)
        (root / name).write_text(text, encoding="utf-8")
    check_scan(root)


def test_age_counts_from_the_utc_date(tmp_path: Path) -> None:
    result = scan_lines(tmp_path, [exp("late", created_at="2026-11-20T23:30:00-05:00")])
    # 04:30 UTC on 2026-11-21: one day before 2026-11-22.
    assert ADAPTER.decay(result.memories[0], AS_OF).age_days == 1


def test_future_created_at_is_not_negative(tmp_path: Path) -> None:
    result = scan_lines(tmp_path, [exp("soon", created_at="2027-01-01T00:00:00Z")])
    d = ADAPTER.decay(result.memories[0], AS_OF)
    assert d.age_days == 0 and d.status == "live"
