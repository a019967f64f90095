"""Applying planned file changes, and the per-vault journal that undoes them.

An action is planned first (a `Plan`: the exact bytes to write, files to move
or create, each with the snapshot it was computed from), then applied here.
Before-bytes of every rewritten file are kept in `<vault>/.memlens/blobs/` and
each applied plan is one line of `<vault>/.memlens/journal.jsonl`, so undo
restores every byte.  `.memlens/` carries its own `.gitignore` (`*`) so the
journal never lands in the user's git history.

Nothing is deleted, undo included: undoing a created file moves it to
`.memlens/undone/` instead of removing it.  The one exception is a folder
memlens itself created for a move or a new file (listed in the entry's
`dirs`): undo removes it again, and only if it is empty by then.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .errors import ConflictError, NotFoundError, UnsafePathError
from .paths import is_inside
from .safe_io import read_regular
from .writes import (
    FileSnapshot,
    WriteError,
    atomic_write,
    check_unchanged,
    digest,
    move_no_clobber,
    snapshot,
)

STATE_DIR = ".memlens"
JOURNAL = "journal.jsonl"

ChangeKind = Literal["write", "create", "move"]


@dataclass(frozen=True, slots=True)
class FileChange:
    """One planned change to one file.

    write:  replace `path` (which was read as `expected`) with `data`.
    create: create `path` with `data`; refused if it exists.
    move:   move `path` (read as `expected`) to `dst`; refused if `dst` exists.
    """

    kind: ChangeKind
    path: Path
    expected: FileSnapshot
    data: bytes | None = None
    dst: Path | None = None


@dataclass(slots=True)
class Plan:
    """What an action will do, for preview and confirmation before it is applied."""

    action: str
    vault_root: Path
    memory_ids: list[str]
    summary: str
    changes: list[FileChange] = field(default_factory=list)
    #: Files the plan was computed from but does not write (e.g. the source
    #: of a promote copy): apply refuses if any of them changed meanwhile.
    reads: list[FileSnapshot] = field(default_factory=list)

    def describe(self) -> list[str]:
        """One line per file change, vault-relative."""
        out: list[str] = []
        for c in self.changes:
            rel = _rel(self.vault_root, c.path)
            if c.kind == "move" and c.dst is not None:
                out.append(f"move {rel} -> {_rel(self.vault_root, c.dst)}")
            elif c.kind == "create":
                out.append(f"create {rel}")
            else:
                out.append(f"rewrite {rel}")
        return out


def _rel(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def state_dir(vault_root: Path) -> Path:
    """`<vault>/.memlens`, created with a `.gitignore` that ignores everything."""
    d = vault_root / STATE_DIR
    # The journal keeps copies of vault content: never let a link carry them
    # (or anything memlens writes here) outside the vault.
    if d.is_symlink() or (d.exists() and not is_inside(vault_root, d)):
        raise UnsafePathError(f"{d} is a symbolic link; memlens will not write through it")
    if not d.is_dir():
        d.mkdir(parents=True, exist_ok=True)
    for sub in ("blobs", "undone", JOURNAL, ".gitignore"):
        if (d / sub).is_symlink():
            raise UnsafePathError(
                f"{d / sub} is a symbolic link; memlens will not write through it"
            )
    ignore = d / ".gitignore"
    if not ignore.exists():
        atomic_write(ignore, b"*\n", None, root=vault_root)
    return d


def _store_blob(vault_root: Path, data: bytes) -> str:
    sha = digest(data)
    blobs = state_dir(vault_root) / "blobs"
    blobs.mkdir(exist_ok=True)
    target = blobs / sha
    if not target.exists():
        atomic_write(target, data, None, root=vault_root)
    return sha


def _load_blob(vault_root: Path, sha: str) -> bytes:
    if not all(c in "0123456789abcdef" for c in sha) or len(sha) != 64:
        raise UnsafePathError(f"bad blob name {sha!r} in the journal")
    data = read_regular(vault_root / STATE_DIR / "blobs" / sha)
    if digest(data) != sha:
        raise ConflictError(f"journal blob {sha} is corrupt; not restoring from it")
    return data


def _check_inside(root: Path, *paths: Path) -> None:
    for p in paths:
        if not is_inside(root, p):
            raise UnsafePathError(f"{p} is outside the vault {root}")
        if p.exists() and p.is_symlink():
            raise UnsafePathError(f"{p} is a symbolic link; memlens does not write through links")


def apply_plan(plan: Plan) -> dict[str, Any]:
    """Apply every change of `plan` and journal it; return the journal entry.

    All snapshots are checked before the first write, so a conflict refuses
    the whole plan.  If a later step fails, the steps already done are rolled
    back from the stored before-bytes.
    """
    root = plan.vault_root
    for read in plan.reads:
        check_unchanged(read)
    for c in plan.changes:
        _check_inside(root, c.path, *([c.dst] if c.dst else []))
        if c.kind == "create":
            if c.path.exists():
                raise ConflictError(f"{c.path} already exists; not overwriting it")
        else:
            check_unchanged(c.expected)
        if c.kind == "move" and c.dst is not None and c.dst.exists():
            raise ConflictError(f"{c.dst} already exists; memlens never overwrites on a move")
    done: list[dict[str, Any]] = []
    #: Folders this plan created (for a move or a new file), in creation order.
    made: list[Path] = []
    try:
        for c in plan.changes:
            if c.kind != "write":
                target = c.dst if c.kind == "move" else c.path
                assert target is not None
                made.extend(_make_dirs(root, target.parent))
            if c.kind == "write":
                assert c.data is not None
                before = read_regular(c.path)
                blob = _store_blob(root, before)
                after = atomic_write(c.path, c.data, c.expected, root=root)
                done.append(
                    {
                        "op": "write",
                        "path": _rel(root, c.path),
                        "before": blob,
                        "after": after.sha256,
                    }
                )
            elif c.kind == "create":
                assert c.data is not None
                c.path.parent.mkdir(parents=True, exist_ok=True)
                after = atomic_write(
                    c.path, c.data, FileSnapshot(c.path, None, None, None, None), root=root
                )
                done.append({"op": "create", "path": _rel(root, c.path), "after": after.sha256})
            else:
                assert c.dst is not None
                move_no_clobber(c.path, c.dst, c.expected, root=root)
                done.append(
                    {
                        "op": "move",
                        "path": _rel(root, c.path),
                        "dst": _rel(root, c.dst),
                        "sha": c.expected.sha256,
                    }
                )
    except BaseException:
        try:
            _undo_ops(root, done, force=True)
        finally:
            _remove_empty_dirs(made)
        raise
    entry: dict[str, Any] = {
        "id": f"{time.time_ns():x}",
        "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "action": plan.action,
        "memory_ids": plan.memory_ids,
        "summary": plan.summary,
        "ops": done,
    }
    if made:
        # Absent in entries of plans that created no folder (and in old journals).
        entry["dirs"] = [_rel(root, d) for d in made]
    _append_journal(root, entry)
    return entry


def _make_dirs(root: Path, folder: Path) -> list[Path]:
    """Create `folder` and its missing parents below `root`; return the ones created here.

    One `os.mkdir` per level, so a folder that exists already, or that
    another process makes at the same moment, is never counted as ours.
    """
    missing: list[Path] = []
    p = folder
    while p != root and not p.is_dir() and p.parent != p:
        missing.append(p)
        p = p.parent
    _check_inside(root, *missing)
    made: list[Path] = []
    for d in reversed(missing):
        try:
            os.mkdir(d)
        except FileExistsError:
            continue  # not ours; if it is not a folder, the move itself fails
        except OSError as exc:
            _remove_empty_dirs(made)
            raise WriteError(f"could not create the folder {d}: {exc.strerror or exc}") from exc
        made.append(d)
    return made


def _remove_empty_dirs(folders: list[Path]) -> None:
    """Remove each of `folders` that is empty now, deepest first; keep all others.

    `os.rmdir` removes only an empty folder, so one that holds anything (a
    file another process put there meanwhile) stays, with its content.
    """
    for d in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        if d.is_symlink():
            continue
        with contextlib.suppress(OSError):
            os.rmdir(d)


def _append_journal(root: Path, entry: dict[str, Any]) -> None:
    path = state_dir(root) / JOURNAL
    line = (json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8")
    old = read_regular(path) if path.exists() else b""
    atomic_write(path, old + line, None, root=root)


def read_journal(root: Path) -> list[dict[str, Any]]:
    """Every journal entry of a vault, oldest first (unreadable lines skipped)."""
    path = root / STATE_DIR / JOURNAL
    if not path.exists():
        return []
    out: list[dict[str, Any]] = []
    for raw in read_regular(path).decode("utf-8", errors="replace").splitlines():
        try:
            item = json.loads(raw)
        except json.JSONDecodeError:
            continue
        if isinstance(item, dict):
            out.append(item)
    return out


def _undo_ops(root: Path, ops: list[dict[str, Any]], *, force: bool = False) -> None:
    """Reverse journaled ops, last first, all or nothing.

    Every op is checked before any is reverted (a file changed since the
    action refuses the whole undo, unless `force`), and if a revert fails
    part-way the reverts already done are themselves reverted, so an undo
    never leaves a memory half in one place and half in another.
    """
    steps: list[tuple[dict[str, Any], Path, FileSnapshot, bytes | None]] = []
    for op in reversed(ops):
        path = _safe_rel(root, op["path"])
        if op["op"] == "move":
            dst = _safe_rel(root, op["dst"])
            current = snapshot(dst)
            if not current.exists:
                raise ConflictError(f"{dst} is gone; cannot move it back")
            if not force and current.sha256 != op.get("sha"):
                raise ConflictError(f"{dst} changed after the action; undo refused")
            if not force and (path.exists() or path.is_symlink()):
                raise ConflictError(f"{path} exists again; cannot move {dst} back over it")
            steps.append((op, path, current, None))
            continue
        current = snapshot(path)
        if op["op"] == "create" and not current.exists:
            continue
        if not force and current.sha256 != op["after"]:
            raise ConflictError(f"{path} changed after the action; undo refused")
        data = read_regular(path) if current.exists else None
        steps.append((op, path, current, data))
    done: list[tuple[str, Path, Path | bytes]] = []
    try:
        for op, path, current, data in steps:
            if op["op"] == "write":
                before = _load_blob(root, op["before"])
                atomic_write(path, before, current, root=root)
                assert data is not None
                done.append(("write", path, data))
            elif op["op"] == "create":
                undone = state_dir(root) / "undone" / f"{time.time_ns():x}" / op["path"]
                move_no_clobber(path, undone, current, root=root)
                done.append(("move", undone, path))
            else:
                dst = _safe_rel(root, op["dst"])
                move_no_clobber(dst, path, current, root=root)
                done.append(("move", path, dst))
    except BaseException:
        for kind, path, other in reversed(done):
            try:
                if kind == "write":
                    assert isinstance(other, bytes)
                    atomic_write(path, other, None, root=root)
                else:
                    assert isinstance(other, Path)
                    move_no_clobber(path, other, None, root=root)
            except OSError:
                pass  # best effort: the before-bytes stay in .memlens/blobs
        raise


def _journal_dirs(root: Path, entry: dict[str, Any]) -> list[Path]:
    """The folders a journaled plan created (none in entries older than `dirs`).

    Only safe vault-relative paths count, never the vault itself nor
    memlens's own state folder.
    """
    raw = entry.get("dirs")
    out: list[Path] = []
    for rel in raw if isinstance(raw, list) else []:
        try:
            d = _safe_rel(root, rel)
        except UnsafePathError:
            continue
        parts = rel.split("/")
        if rel in ("", ".") or parts[0] == STATE_DIR or "." in parts or "" in parts:
            continue
        out.append(d)
    return out


def _safe_rel(root: Path, rel: str) -> Path:
    if not isinstance(rel, str) or rel.startswith("/") or ".." in rel.split("/") or "\x00" in rel:
        raise UnsafePathError(f"bad path {rel!r} in the journal")
    p = root / rel
    if not is_inside(root, p):
        raise UnsafePathError(f"journal path {rel!r} leaves the vault")
    return p


#: Journal entries `undo` passes over: undo markers themselves, and access
#: tracking (counting a view is bookkeeping, not something the user did).
_NOT_UNDONE = frozenset({"undo", "access"})


def undo_last(root: Path) -> dict[str, Any]:
    """Undo the most recent not-yet-undone action of this vault; return its entry."""
    entries = read_journal(root)
    already = {str(e.get("undoes")) for e in entries if e.get("action") == "undo"}
    for entry in reversed(entries):
        if entry.get("action") in _NOT_UNDONE or str(entry.get("id")) in already:
            continue
        _undo_ops(root, list(entry.get("ops", [])))
        _remove_empty_dirs(_journal_dirs(root, entry))
        _append_journal(
            root,
            {
                "id": f"{time.time_ns():x}",
                "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "action": "undo",
                "undoes": entry.get("id"),
                "summary": f"undo: {entry.get('summary', '')}",
                "ops": [],
            },
        )
        return dict(entry)
    raise NotFoundError(f"nothing to undo in {root}")


def undone_ids(root: Path) -> set[str]:
    return {str(e.get("undoes")) for e in read_journal(root) if e.get("action") == "undo"}
