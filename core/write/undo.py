"""Undo: revert a journaled action, itself as one transaction.

The revert is planned op by op (last first) against the files as they are,
checked as a whole before anything is written (a file changed after the
action refuses the undo), and applied through `core/txn.py`: an interrupted
undo is rolled back to the state before the undo, so it can simply be run
again.  Its journal entry (`action: undo`, `undoes: <id>`) is the commit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import ConflictError, NotFoundError
from ..safe_io import read_regular
from .journal import (
    STATE_DIR,
    FileChange,
    Plan,
    journal_dirs,
    load_blob,
    read_journal,
    remove_empty_dirs,
    safe_rel,
)
from .txn import transaction
from .writes import digest, snapshot


def _revert_write(root: Path, op: dict[str, Any], cur: bytes | None) -> bytes:
    """The bytes that undo a journaled write of a file now holding `cur`."""
    path = op["path"]
    if cur is None:
        raise ConflictError(f"{path} is gone; undo refused")
    if digest(cur) == op["after"]:
        return load_blob(root, op["before"])
    after_size = int(op.get("after_size", -1))
    if op.get("append_only") and after_size >= 0 and digest(cur[:after_size]) == op["after"]:
        # An agent appended after the action: keep those bytes.
        planned = int(op.get("planned_size", after_size))
        return load_blob(root, op["before"]) + cur[planned:]
    raise ConflictError(f"{root / path} changed after the action; undo refused")


def _revert_changes(root: Path, ops: list[dict[str, Any]], tag: str) -> list[FileChange]:
    """One change per op, last op first, each checked against the state the later ones leave.

    A file may be touched by several ops of one run, so the check runs on a
    simulated state ({path: bytes or None}) seeded from the disk.
    """
    state: dict[Path, bytes | None] = {}

    def now(p: Path) -> bytes | None:
        if p not in state:
            state[p] = read_regular(p) if p.exists() else None
        return state[p]

    out: list[FileChange] = []
    for op in reversed(ops):
        path = safe_rel(root, op["path"])
        if op["op"] == "write":
            cur = now(path)
            data = _revert_write(root, op, cur)
            out.append(
                FileChange(
                    "write",
                    path,
                    snapshot(path, cur),
                    data=data,
                    append_only=bool(op.get("append_only")),
                )
            )
            state[path] = data
        elif op["op"] == "create":
            cur = now(path)
            if cur is None:
                continue  # already gone (moved away by the user)
            if digest(cur) != op["after"]:
                raise ConflictError(f"{path} changed after the action; undo refused")
            undone = root / STATE_DIR / "undone" / tag / op["path"]
            out.append(FileChange("move", path, snapshot(path, cur), dst=undone))
            state[path], state[undone] = None, cur
        else:
            dst = safe_rel(root, op["dst"])
            cur = now(dst)
            if cur is None:
                raise ConflictError(f"{dst} is gone; cannot move it back")
            if digest(cur) != op.get("sha"):
                raise ConflictError(f"{dst} changed after the action; undo refused")
            if now(path) is not None or path.is_symlink():
                raise ConflictError(f"{path} exists again; cannot move {dst} back over it")
            out.append(FileChange("move", dst, snapshot(dst, cur), dst=path))
            state[dst], state[path] = None, cur
    return out


def undo_last(root: Path) -> dict[str, Any]:
    """Undo the most recent not-yet-undone action of this vault; return its entry.

    Every kind of entry is undone latest first, access counting included, so
    a later write to a shared file (`_state.json`) never blocks an earlier one.
    """
    root = Path(root)
    with transaction(root, "undo") as tx:
        entries = read_journal(root)
        already = {str(e.get("undoes")) for e in entries if e.get("action") == "undo"}
        for entry in reversed(entries):
            if entry.get("action") == "undo" or str(entry.get("id")) in already:
                continue
            changes = _revert_changes(root, list(entry.get("ops", [])), tx.id)
            # One plan per change, so each is checked against the disk as the
            # previous one left it (several ops may touch one file).
            for change in changes:
                tx.apply(Plan("undo", root, [], "", [change]))
            summary = f"undo: {entry.get('summary', '')}"
            tx.commit(summary, always=True, undoes=entry.get("id"))
            remove_empty_dirs(journal_dirs(root, entry))
            return dict(entry)
    raise NotFoundError(f"nothing to undo in {root}")
