"""The undo journal: all-or-nothing undo, state kept inside the vault, read snapshots."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memlens.core.actions import Action
from memlens.core.errors import ConflictError, UnsafePathError
from memlens.core.scan.vault import open_catalog
from memlens.core.write.journal import FileChange, Plan
from memlens.core.write.txn import apply_plan
from memlens.core.write.undo import undo_last
from memlens.core.write.writes import snapshot


def _files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".memlens" not in p.relative_to(root).parts
    }


def test_undo_keeps_what_an_agent_appended_meanwhile(own_fixtures_copy: Path) -> None:
    """Archive a dream-cycle section, let an agent append, undo: the section is back, and
    the appended section stays (observations.md is append-only for agents).

    Before the append-only handling this undo was refused as a conflict."""
    root = own_fixtures_copy / "dream-cycle"
    before = _files(root)
    catalog = open_catalog(root)
    memory = next(m for m in catalog.memories() if m.path == "observations.md" and m.index == 1)
    Action("archive", memory, {}).apply()
    appended = b"\n## Agent appended\nx\n"
    with (root / "observations.md").open("ab") as fh:
        fh.write(appended)
    undo_last(root)
    after = _files(root)
    assert after["observations.md"] == before["observations.md"] + appended
    assert {k: v for k, v in after.items() if k != "observations.md"} == {
        k: v for k, v in before.items() if k != "observations.md"
    }


def test_undo_after_conflict_is_resolved_restores_bytes(own_fixtures_copy: Path) -> None:
    root = own_fixtures_copy / "dream-cycle"
    before = _files(root)
    memory = next(m for m in open_catalog(root).memories() if m.index == 1)
    Action("archive", memory, {}).apply()
    undo_last(root)
    assert _files(root) == before


def test_plan_reads_refuse_a_changed_source(tmp_path: Path) -> None:
    src, dst = tmp_path / "src.md", tmp_path / "copy.md"
    src.write_bytes(b"source")
    plan = Plan("copy", tmp_path, [], "copy", reads=[snapshot(src)])
    plan.changes.append(FileChange("create", dst, snapshot(dst), data=b"source"))
    src.write_bytes(b"changed")
    with pytest.raises(ConflictError):
        apply_plan(plan)
    assert not dst.exists()


def test_state_dir_through_a_symlink_is_refused(tmp_path: Path) -> None:
    vault, outside = tmp_path / "vault", tmp_path / "outside"
    vault.mkdir()
    outside.mkdir()
    (vault / ".memlens").symlink_to(outside)
    target = vault / "m.md"
    target.write_bytes(b"old")
    plan = Plan("write", vault, [], "write")
    plan.changes.append(FileChange("write", target, snapshot(target), data=b"new"))
    with pytest.raises(UnsafePathError):
        apply_plan(plan)
    assert list(outside.iterdir()) == []
    assert target.read_bytes() == b"old"


def test_failed_revert_is_rolled_back(
    own_fixtures_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the second revert of a two-file undo fails, the first is put back."""
    root = own_fixtures_copy / "dream-cycle"
    memory = next(m for m in open_catalog(root).memories() if m.index == 1)
    Action("archive", memory, {}).apply()
    after_action = _files(root)
    import memlens.core.write.txn as journal  # where plans are applied

    real = journal.atomic_write
    calls = {"n": 0}

    def flaky(path: Path, data: bytes, expected: object, **kw: object) -> object:
        if ".memlens" not in str(path):
            calls["n"] += 1
            if calls["n"] == 2:
                raise OSError(28, "No space left on device")
        return real(path, data, expected, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(journal, "atomic_write", flaky)
    with pytest.raises(OSError):
        undo_last(root)
    monkeypatch.undo()
    assert _files(root) == after_action
    shutil.rmtree(root / ".memlens", ignore_errors=True)
