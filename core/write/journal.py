"""Planned file changes, the per-vault state folder, and its journal file.

An action is planned first (a `Plan`: the exact bytes to write, files to move
or create, each with the snapshot it was computed from), then applied as one
transaction (`txn.py`; undo in `undo.py`).  Before-bytes of every rewritten file are kept in
`<vault>/.memlens/blobs/` and each committed transaction is one line of
`<vault>/.memlens/journal.jsonl`, so undo restores every byte.  `.memlens/`
carries its own `.gitignore` (`*`) so the journal never lands in the user's
git history.

The journal is append-only: a line is written with one `O_APPEND` write and
fsynced, and a torn last line (a crash mid-write) is skipped on reading and
never glued to the next entry.  A transaction is committed iff its line is
in the journal.

Nothing is deleted, undo included: undoing a created file moves it to
`.memlens/undone/` instead of removing it.  The one exception is a folder
memlens itself created for a move or a new file (listed in the entry's
`dirs`): undo removes it again, and only if it is empty by then.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..errors import ConflictError, UnsafePathError
from ..safe_io import NotRegularFileError, kind_of, read_regular
from ..text.paths import is_inside
from .writes import FileSnapshot, WriteError, atomic_write, digest

STATE_DIR = ".memlens"
JOURNAL = "journal.jsonl"

ChangeKind = Literal["write", "create", "move"]


@dataclass(frozen=True, slots=True)
class FileChange:
    """One planned change to one file.

    write:  replace `path` (which was read as `expected`) with `data`.
    create: create `path` with `data`; refused if it exists.
    move:   move `path` (read as `expected`) to `dst`; refused if `dst` exists.

    `append_only` marks files agents only ever append to (Dream Cycle
    observations.md and archive.jsonl, experience-records JSON Lines): bytes
    an agent appends meanwhile are carried over by the write, and kept by
    undo and rollback.
    """

    kind: ChangeKind
    path: Path
    expected: FileSnapshot
    data: bytes | None = None
    dst: Path | None = None
    append_only: bool = False


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
            rel = rel_path(self.vault_root, c.path)
            if c.kind == "move" and c.dst is not None:
                out.append(f"move {rel} -> {rel_path(self.vault_root, c.dst)}")
            elif c.kind == "create":
                out.append(f"create {rel}")
            else:
                out.append(f"rewrite {rel}")
        return out


def rel_path(root: Path, path: Path) -> str:
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
    for sub in ("blobs", "undone", "pending", "unresolved", "lock", JOURNAL, ".gitignore"):
        if (d / sub).is_symlink():
            raise UnsafePathError(
                f"{d / sub} is a symbolic link; memlens will not write through it"
            )
    ignore = d / ".gitignore"
    if not ignore.exists():
        _create_gitignore(ignore)
    return d


def _create_gitignore(ignore: Path) -> None:
    """Write `.memlens/.gitignore` once, with no temp file.

    This runs before the vault lock is taken (the lock file lives beside it),
    so two processes may race here, and a temp file in `.memlens/` could be
    swept as stray by a process that holds the lock.  An exclusive create of
    two bytes needs neither: the loser finds the winner's identical file.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(ignore, flags, 0o644)
    except FileExistsError:
        return
    except OSError as exc:
        raise WriteError(f"{ignore}: could not write: {exc.strerror or exc}") from exc
    try:
        os.write(fd, b"*\n")
        os.fsync(fd)
    finally:
        os.close(fd)


def store_blob(vault_root: Path, data: bytes) -> str:
    sha = digest(data)
    blobs = state_dir(vault_root) / "blobs"
    blobs.mkdir(exist_ok=True)
    target = blobs / sha
    if not target.exists():
        atomic_write(target, data, None, root=vault_root)
    return sha


def load_blob(vault_root: Path, sha: str) -> bytes:
    if not all(c in "0123456789abcdef" for c in sha) or len(sha) != 64:
        raise UnsafePathError(f"bad blob name {sha!r} in the journal")
    data = read_regular(vault_root / STATE_DIR / "blobs" / sha)
    if digest(data) != sha:
        raise ConflictError(f"journal blob {sha} is corrupt; not restoring from it")
    return data


def check_inside(root: Path, *paths: Path) -> None:
    for p in paths:
        if not is_inside(root, p):
            raise UnsafePathError(f"{p} is outside the vault {root}")
        if p.exists() and p.is_symlink():
            raise UnsafePathError(f"{p} is a symbolic link; memlens does not write through links")


def make_dirs(root: Path, folder: Path) -> list[Path]:
    """Create `folder` and its missing parents below `root`; return the ones created here.

    One `os.mkdir` per level, so a folder that exists already, or that
    another process makes at the same moment, is never counted as ours.
    """
    missing: list[Path] = []
    p = folder
    while p != root and not p.is_dir() and p.parent != p:
        missing.append(p)
        p = p.parent
    check_inside(root, *missing)
    made: list[Path] = []
    for d in reversed(missing):
        try:
            os.mkdir(d)
        except FileExistsError:
            continue  # not ours; if it is not a folder, the move itself fails
        except OSError as exc:
            remove_empty_dirs(made)
            raise WriteError(f"could not create the folder {d}: {exc.strerror or exc}") from exc
        made.append(d)
    return made


def remove_empty_dirs(folders: list[Path]) -> None:
    """Remove each of `folders` that is empty now, deepest first; keep all others.

    `os.rmdir` removes only an empty folder, so one that holds anything (a
    file another process put there meanwhile) stays, with its content.
    """
    for d in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        if d.is_symlink():
            continue
        with contextlib.suppress(OSError):
            os.rmdir(d)


class JournalUncertain(WriteError):
    """A journal append failed and could not be cut back: recovery must decide."""


def append_journal(root: Path, entry: dict[str, Any]) -> None:
    """Append `entry` as one line, durably; on failure leave the journal as it was.

    One `O_APPEND` write then fsync: earlier lines are never rewritten, so a
    crash can at worst leave a torn last line, which `read_journal` skips and
    the next append starts after (a newline first).  If the write or fsync
    fails, the file is cut back to its old size, so a failed commit is never
    mistaken for a committed one; if even that fails, JournalUncertain says
    so and recovery decides from what the journal holds.
    """
    path = state_dir(root) / JOURNAL
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        raise WriteError(f"{path}: could not open the journal: {exc.strerror or exc}") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFileError(path, kind_of(st.st_mode))
        size = st.st_size
        torn = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
        line = (b"\n" if torn else b"") + (json.dumps(entry, ensure_ascii=False) + "\n").encode()
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except BaseException as exc:
            try:
                os.ftruncate(fd, size)
            except OSError:
                raise JournalUncertain(f"{path}: the journal line may be torn") from exc
            if isinstance(exc, OSError):
                raise WriteError(f"{path}: could not write the journal: {exc.strerror}") from exc
            raise
    finally:
        os.close(fd)


def read_journal(root: Path) -> list[dict[str, Any]]:
    """Every journal entry of a vault, oldest first (torn or unreadable lines skipped)."""
    path = root / STATE_DIR / JOURNAL
    try:
        raw = read_regular(path)
    except FileNotFoundError:
        return []
    out: list[dict[str, Any]] = []
    for line in raw.decode("utf-8", errors="replace").splitlines():
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(item, dict):
            out.append(item)
    return out


def journal_dirs(root: Path, entry: dict[str, Any]) -> list[Path]:
    """The folders a journaled plan created (none in entries older than `dirs`).

    Only safe vault-relative paths count, never the vault itself nor
    memlens's own state folder.
    """
    raw = entry.get("dirs")
    out: list[Path] = []
    for rel in raw if isinstance(raw, list) else []:
        try:
            d = safe_rel(root, rel)
        except UnsafePathError:
            continue
        parts = rel.split("/")
        if rel in ("", ".") or parts[0] == STATE_DIR or "." in parts or "" in parts:
            continue
        out.append(d)
    return out


def safe_rel(root: Path, rel: str) -> Path:
    if not isinstance(rel, str) or rel.startswith("/") or ".." in rel.split("/") or "\x00" in rel:
        raise UnsafePathError(f"bad path {rel!r} in the journal")
    p = root / rel
    if not is_inside(root, p):
        raise UnsafePathError(f"journal path {rel!r} leaves the vault")
    return p


def undone_ids(root: Path) -> set[str]:
    return {str(e.get("undoes")) for e in read_journal(root) if e.get("action") == "undo"}
