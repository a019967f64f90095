"""core.changes: domain changes between two scans of one vault."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

from memlens.core.model import (
    Memory,
    Problem,
    Reason,
    ReferenceProblem,
    RefIssue,
    Relation,
    ScanResult,
)
from memlens.core.scan.changes import (
    Change,
    ChangeKind,
    added_all,
    change_record,
    diff_results,
    removed_all,
    vault_label,
)

ROOT = Path("/vaults/ocean")


def mem(mid: str, path: str | None = None, **kw: object) -> Memory:
    base: dict[str, object] = {
        "format": "project-ocean",
        "vault_root": ROOT,
        "id": mid,
        "kind": "observation",
        "title": f"title {mid}",
        "body": f"body {mid}",
        "path": path or f"agents/a/memory/vault/{mid}.md",
        "fields": {"confidence": 0.5},
    }
    base.update(kw)
    return Memory(**base)


def prob(path: str, reason: Reason, detail: str = "bad", **kw: object) -> Problem:
    return Problem(
        format="project-ocean",
        vault_root=ROOT,
        path=path,
        reason=reason,
        detail=detail,
        **kw,
    )


def kinds(changes: list[Change]) -> list[tuple[str, str | None]]:
    return sorted((c.kind.value, c.id) for c in changes)


def test_identical_scans_give_no_change() -> None:
    a = ScanResult(memories=[mem("x"), mem("y")], problems=[prob("p.md", Reason.EMPTY_FILE)])
    b = ScanResult(memories=[mem("x"), mem("y")], problems=[prob("p.md", Reason.EMPTY_FILE)])
    assert diff_results(a, b) == []
    assert diff_results(a, a) == []


def test_added_removed_changed_moved() -> None:
    old = ScanResult(memories=[mem("keep"), mem("edit"), mem("gone"), mem("walk")])
    new = ScanResult(
        memories=[
            mem("keep"),
            mem("edit", body="new body"),
            mem("walk", path="agents/a/memory/archive/walk.md"),
            mem("born"),
        ]
    )
    changes = diff_results(old, new)
    assert kinds(changes) == [
        ("added", "born"),
        ("changed", "edit"),
        ("moved", "walk"),
        ("removed", "gone"),
    ]
    moved = next(c for c in changes if c.kind is ChangeKind.MOVED)
    assert moved.old_path == "agents/a/memory/vault/walk.md"
    assert moved.path == "agents/a/memory/archive/walk.md"
    assert moved.memory is not None and moved.memory.path == moved.path
    removed = next(c for c in changes if c.kind is ChangeKind.REMOVED)
    assert removed.memory is not None and removed.memory.id == "gone"


def test_every_kind_of_content_counts() -> None:
    base = mem("m", tags=("a",), relations=(Relation("x", "rel", "relations"),))
    variants = [
        replace(base, title="other"),
        replace(base, tags=("a", "b")),
        replace(base, fields={"confidence": 0.6}),
        replace(base, extra={"note": 1}),
        replace(base, pinned=True),
        replace(base, archived=True),
        replace(base, tombstoned=True),
        replace(base, relations=(Relation("x", "rel", "relations", resolved="x"),)),
        replace(base, native={"access": 2}),
        replace(base, importance=0.3),
        replace(base, kind="insight"),
    ]
    for v in variants:
        got = diff_results(ScanResult(memories=[base]), ScanResult(memories=[v]))
        assert kinds(got) == [("changed", "m")], v


def test_position_is_not_content() -> None:
    # A JSON Lines record pushed down by a line inserted above it is unchanged.
    a = mem("e", path="experiences.jsonl", line=3)
    b = mem("e", path="experiences.jsonl", line=4)
    assert diff_results(ScanResult(memories=[a]), ScanResult(memories=[b])) == []


def test_nan_is_not_a_change_on_every_scan() -> None:
    a = mem("n", fields={"confidence": math.nan})
    b = mem("n", fields={"confidence": math.nan})
    assert diff_results(ScanResult(memories=[a]), ScanResult(memories=[b])) == []


def test_repeated_ids_match_by_path_first() -> None:
    live = mem("d", path="observations.md", index=1)
    archived = mem("d", path="archive.jsonl", line=1, archived=True)
    old = ScanResult(memories=[live, archived])
    new = ScanResult(memories=[replace(archived), replace(live, body="edited")])
    assert kinds(diff_results(old, new)) == [("changed", "d")]
    only = ScanResult(memories=[replace(archived)])
    got = diff_results(old, only)
    assert kinds(got) == [("removed", "d")]
    assert got[0].path == "observations.md"


def test_problems_appear_change_and_clear() -> None:
    old = ScanResult(
        problems=[
            prob("a.md", Reason.NO_FRONTMATTER),
            prob("b.md", Reason.WRONG_TYPE, "confidence: 'x'"),
        ]
    )
    new = ScanResult(
        problems=[
            prob("b.md", Reason.WRONG_TYPE, "confidence: 'y'"),
            prob("c.md", Reason.EMPTY_FILE, id="c"),
        ]
    )
    got = diff_results(old, new)
    assert sorted((c.kind.value, c.path, c.reason, c.detail) for c in got) == [
        ("problem", "b.md", "wrong_type", "confidence: 'y'"),
        ("problem", "c.md", "empty_file", "bad"),
        ("problem_cleared", "a.md", "no_frontmatter", "bad"),
    ]
    c = next(x for x in got if x.path == "c.md")
    assert c.id == "c"


def test_problems_are_keyed_by_line_and_index() -> None:
    a = ScanResult(problems=[prob("e.jsonl", Reason.MALFORMED_JSON, line=2)])
    b = ScanResult(problems=[prob("e.jsonl", Reason.MALFORMED_JSON, line=5)])
    assert sorted(c.kind.value for c in diff_results(a, b)) == ["problem", "problem_cleared"]


def test_reference_problems() -> None:
    ref = ReferenceProblem(
        format="project-ocean",
        vault_root=ROOT,
        path="x.md",
        id="x",
        field="backlinks",
        ref="[[nowhere]]",
        reason=RefIssue.DANGLING,
    )
    got = diff_results(ScanResult(), ScanResult(ref_problems=[ref]))
    assert [(c.kind, c.id, c.reason) for c in got] == [
        (ChangeKind.PROBLEM, "x", "dangling_reference")
    ]
    assert got[0].detail == "backlinks -> [[nowhere]]"
    cleared = diff_results(ScanResult(ref_problems=[ref]), ScanResult())
    assert [c.kind for c in cleared] == [ChangeKind.PROBLEM_CLEARED]


def test_whole_vault_added_and_removed() -> None:
    r = ScanResult(memories=[mem("a"), mem("b")], problems=[prob("z.md", Reason.ENCODING)])
    assert sorted(c.kind.value for c in added_all(r)) == ["added", "added", "problem"]
    assert sorted(c.kind.value for c in removed_all(r)) == [
        "problem_cleared",
        "removed",
        "removed",
    ]


def test_change_record_follows_the_cli_contract(tmp_path: Path) -> None:
    root = tmp_path / "vaults" / "ocean"
    m = mem("a", vault_root=root)
    moved = Change(
        ChangeKind.MOVED, root, "project-ocean", "a", "new.md", old_path="old.md", memory=m
    )
    rec = change_record(moved, tmp_path / "vaults")
    assert rec == {
        "change": "moved",
        "vault": "ocean",
        "format": "project-ocean",
        "id": "a",
        "path": "new.md",
        "old_path": "old.md",
    }
    cleared = Change(
        ChangeKind.PROBLEM_CLEARED, root, "project-ocean", None, "x.md", reason="empty_file"
    )
    rec = change_record(cleared, root)
    assert rec["change"] == "problem" and rec["cleared"] is True and rec["vault"] == "."
    own = change_record(replace(moved, kind=ChangeKind.CHANGED, own=True, old_path=None), root)
    assert own["change"] == "changed" and own["own"] is True and "old_path" not in own


def test_vault_label_outside_base(tmp_path: Path) -> None:
    assert vault_label(tmp_path / "a", tmp_path / "b") == str(tmp_path / "a")
    assert vault_label(tmp_path, tmp_path) == "."


def test_apply_to_search_follows_a_rescan(own_fixtures_copy: Path) -> None:
    from datetime import date

    from memlens.core.scan.changes import apply_to_search
    from memlens.core.scan.vault import Vault, open_catalog, scan_vault
    from memlens.core.search.index import SearchIndex

    catalog = open_catalog(own_fixtures_copy)
    index = SearchIndex.from_catalog(catalog, date(2026, 11, 22))
    ocean = next(v for v in catalog.vaults if v.format == "project-ocean")
    folder = ocean.root / "agents/courier/memory/vault"
    edited = folder / "obs-2026-11-09-001.md"
    edited.write_text(edited.read_text().replace("Hardcover returns", "Zebrafinch returns"))
    (folder / "obs-2026-11-13-003.md").unlink()
    (folder / "obs-2026-11-21-009.md").write_text(
        "---\ntags: [x]\nconfidence: 0.9\ncreated: 2026-11-21\nsource: courier\nbacklinks: []\n"
        "---\nQuokkabird sighting.\n"
    )
    fresh = scan_vault(Vault(root=ocean.root, format=ocean.format, rel=ocean.rel)).result
    changes = diff_results(ocean.result, fresh)
    assert {c.kind for c in changes} >= {ChangeKind.ADDED, ChangeKind.CHANGED, ChangeKind.REMOVED}
    assert apply_to_search(index, changes) >= 3
    ocean.result = fresh
    assert {m.key for m in index.memories()} == {m.key for m in catalog.memories()}
    assert [h.memory.id for h in index.search("zebrafinch")] == ["courier/obs-2026-11-09-001"]
    assert [h.memory.id for h in index.search("quokkabird")] == ["courier/obs-2026-11-21-009"]
    # Problems and unknown notices leave the index alone.
    assert apply_to_search(index, [Change(ChangeKind.PROBLEM, ocean.root, "x", None, "p")]) == 0


def test_everything_reports_every_surviving_memory() -> None:
    keep, edit = mem("keep"), mem("edit")
    old = ScanResult(memories=[keep, edit, mem("gone")])
    new = ScanResult(memories=[keep, replace(edit, body="x"), mem("born")])
    assert kinds(diff_results(old, new, everything=True)) == [
        ("added", "born"),
        ("changed", "edit"),
        ("changed", "keep"),
        ("removed", "gone"),
    ]
