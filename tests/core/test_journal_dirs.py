"""Undo removes the folders its action created, when they are empty again, and nothing else."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import memlens.core.write.txn as txn
from memlens.core.actions import Action
from memlens.core.model import Memory
from memlens.core.scan.vault import open_catalog
from memlens.core.write.journal import JOURNAL, STATE_DIR, FileChange, Plan
from memlens.core.write.txn import apply_plan
from memlens.core.write.undo import undo_last
from memlens.core.write.writes import FileSnapshot, snapshot

#: Formats whose archive is a move into a folder that may not exist yet.
MOVE_FORMATS = ("cognitive-memory", "observation-v1", "project-ocean")


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) below `root`, memlens's own state left out."""
    out: dict[str, bytes | None] = {}
    for p in root.rglob("*"):
        rel = p.relative_to(root)
        if rel.parts[0] == STATE_DIR:
            continue
        out[rel.as_posix()] = None if p.is_dir() else p.read_bytes()
    return out


def _archivable(root: Path) -> tuple[Memory, Path]:
    """A memory whose archive moves it into a folder that does not exist yet, and that folder."""
    for memory in open_catalog(root).memories():
        if memory.archived or memory.pinned:
            continue
        plan = Action("archive", memory, {}).plan()
        (move,) = [c for c in plan.changes if c.kind == "move"]
        assert move.dst is not None
        if not move.dst.parent.exists():
            return memory, move.dst.parent
    raise AssertionError(f"no memory in {root} archives into a new folder")


def _entries(root: Path) -> list[dict[str, Any]]:
    lines = (root / STATE_DIR / JOURNAL).read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _rewrite_journal(root: Path, entries: list[dict[str, Any]]) -> None:
    text = "".join(json.dumps(e) + "\n" for e in entries)
    (root / STATE_DIR / JOURNAL).write_text(text, "utf-8")


@pytest.mark.parametrize("fmt", MOVE_FORMATS)
def test_archive_then_undo_restores_the_tree(own_fixtures_copy: Path, fmt: str) -> None:
    root = own_fixtures_copy / fmt
    before = _tree(root)
    memory, folder = _archivable(root)
    entry = Action("archive", memory, {}).apply()
    assert folder.is_dir() and any(folder.iterdir())
    created = entry["dirs"]
    assert folder.relative_to(root).as_posix() in created
    for rel in created:
        assert rel not in before  # only folders that did not exist are recorded
    undo_last(root)
    assert _tree(root) == before
    assert not folder.exists()


def test_folder_with_a_foreign_file_is_kept(own_fixtures_copy: Path) -> None:
    root = own_fixtures_copy / "cognitive-memory"
    before = _tree(root)
    memory, folder = _archivable(root)
    Action("archive", memory, {}).apply()
    foreign = folder / "notes-from-another-tool.txt"
    foreign.write_bytes(b"keep me\n")
    undo_last(root)
    assert foreign.read_bytes() == b"keep me\n"
    assert (root / memory.path).is_file()
    after = _tree(root)
    # Everything is back, plus the foreign file and the folders holding it.
    extra = {k: v for k, v in after.items() if k not in before}
    rel = folder.relative_to(root)
    holders = {p.as_posix() for p in rel.parents if p.as_posix() != "."} | {rel.as_posix()}
    holders -= set(before)  # the fixture's own archive/ was there already
    assert extra == {foreign.relative_to(root).as_posix(): b"keep me\n"} | dict.fromkeys(holders)
    assert {k: after[k] for k in before} == before


def test_folder_that_existed_before_is_kept_even_when_empty(own_fixtures_copy: Path) -> None:
    root = own_fixtures_copy / "cognitive-memory"
    memory, folder = _archivable(root)
    folder.mkdir(parents=True)
    before = _tree(root)
    entry = Action("archive", memory, {}).apply()
    assert "dirs" not in entry
    undo_last(root)
    assert folder.is_dir() and not any(folder.iterdir())
    assert _tree(root) == before


def test_only_the_levels_memlens_made_are_recorded(own_fixtures_copy: Path) -> None:
    """archive/ exists (made by someone else) and archive/<type>/ does not."""
    root = own_fixtures_copy / "cognitive-memory"
    memory, folder = _archivable(root)
    assert folder.parent.is_dir()  # the fixture has an archive/ of its own
    before = _tree(root)
    entry = Action("archive", memory, {}).apply()
    assert entry["dirs"] == [folder.relative_to(root).as_posix()]
    undo_last(root)
    assert _tree(root) == before and folder.parent.is_dir()


def test_every_level_memlens_made_is_recorded(own_fixtures_copy: Path) -> None:
    """Neither archive/ nor archive/<type>/ exists: both are recorded and both go on undo."""
    root = own_fixtures_copy / "cognitive-memory"
    shutil.rmtree(root / "archive")
    memory, folder = _archivable(root)
    before = _tree(root)
    entry = Action("archive", memory, {}).apply()
    assert sorted(entry["dirs"]) == ["archive", folder.relative_to(root).as_posix()]
    undo_last(root)
    assert _tree(root) == before and not (root / "archive").exists()


def test_old_journal_entry_without_dirs_still_undoes(own_fixtures_copy: Path) -> None:
    root = own_fixtures_copy / "observation-v1"
    before = _tree(root)
    memory, folder = _archivable(root)
    Action("archive", memory, {}).apply()
    entries = _entries(root)
    assert "dirs" in entries[-1]
    del entries[-1]["dirs"]  # as written before the field existed
    _rewrite_journal(root, entries)
    undone = undo_last(root)
    assert undone["id"] == entries[-1]["id"]
    assert (root / memory.path).read_bytes() == before[memory.path]
    # Old entries do not say which folders were made: they are left alone.
    assert folder.is_dir() and not any(folder.iterdir())
    assert {k: v for k, v in _tree(root).items() if k in before} == before


def test_unsafe_dirs_in_the_journal_are_ignored(own_fixtures_copy: Path) -> None:
    root = own_fixtures_copy / "cognitive-memory"
    memory, _folder = _archivable(root)
    Action("archive", memory, {}).apply()
    (root / "graph" / "empty-by-chance").mkdir()
    outside = root.parent / "outside-empty"
    outside.mkdir()
    entries = _entries(root)
    entries[-1]["dirs"] += [
        "..",
        "../outside-empty",
        str(outside),
        ".",
        "",
        STATE_DIR,
        f"{STATE_DIR}/undone",
        "graph/./empty-by-chance",
        7,
    ]
    (root / STATE_DIR / "undone").mkdir(exist_ok=True)
    _rewrite_journal(root, entries)
    undo_last(root)
    assert outside.is_dir()
    assert (root / STATE_DIR / "undone").is_dir()
    assert (root / "graph" / "empty-by-chance").is_dir()
    assert root.is_dir()


def test_undone_create_removes_its_new_folders(tmp_path: Path) -> None:
    (tmp_path / "kept").mkdir()
    target = tmp_path / "kept" / "new" / "deeper" / "note.md"
    plan = Plan("create", tmp_path, [], "create a note")
    plan.changes.append(FileChange("create", target, snapshot(target), data=b"hello\n"))
    entry = apply_plan(plan)
    assert entry["dirs"] == ["kept/new", "kept/new/deeper"]
    assert target.read_bytes() == b"hello\n"
    undo_last(tmp_path)
    assert not (tmp_path / "kept" / "new").exists()
    assert (tmp_path / "kept").is_dir()
    # The created file itself is kept, in memlens's undone area (nothing is deleted).
    kept = [p for p in (tmp_path / STATE_DIR / "undone").rglob("note.md")]
    assert len(kept) == 1 and kept[0].read_bytes() == b"hello\n"


def test_failed_apply_removes_the_folders_it_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = tmp_path / "a.md", tmp_path / "b.md"
    a.write_bytes(b"a")
    b.write_bytes(b"b")
    before = _tree(tmp_path)
    plan = Plan("move", tmp_path, [], "move two")
    plan.changes.append(FileChange("move", a, snapshot(a), dst=tmp_path / "x" / "a.md"))
    plan.changes.append(FileChange("move", b, snapshot(b), dst=tmp_path / "y" / "z" / "b.md"))
    real = txn.move_no_clobber
    calls = {"n": 0}

    def flaky(src: Path, dst: Path, expected: FileSnapshot | None, **kw: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(28, "No space left on device")
        real(src, dst, expected, **kw)

    monkeypatch.setattr(txn, "move_no_clobber", flaky)
    with pytest.raises(OSError):
        apply_plan(plan)
    monkeypatch.undo()
    assert _tree(tmp_path) == before
