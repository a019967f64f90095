"""Rolling back an unfinished transaction, in-process or on the next open.

A transaction (core/txn.py) writes an intent record to
`.memlens/pending/<txid>.json` before its first vault write, listing every
op with the before and after state of each file.  If it does not reach its
journal line (a kill, an I/O error, a full disk), the intent is still there,
and this module puts every file back to its before state:

- write:  restore the before-bytes (kept in `.memlens/blobs/`); for an
  append-only file, bytes an agent appended after memlens's write are kept.
- create: move the created file to `.memlens/undone/<txid>/` (not deleted).
- move:   moved: move it back; hard-linked but not yet unlinked: remove the
  second link, only once it is the same inode or the same bytes.

A file that matches neither its before nor its after state was changed by
someone after the crash: it is left alone, its before-bytes stay in the
blobs, the intent moves to `.memlens/unresolved/` and the report says so.
If the journal already holds the transaction (a crash after the commit,
before the intent was removed), only the intent is removed.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import MemlensError
from ..safe_io import clean_stray_temps, read_regular
from .journal import (
    STATE_DIR,
    load_blob,
    read_journal,
    remove_empty_dirs,
    safe_rel,
    state_dir,
)
from .vault_lock import vault_lock
from .writes import TEMP_PREFIX, atomic_write, digest, move_no_clobber, snapshot

PENDING = "pending"
UNRESOLVED = "unresolved"


class Mismatch(MemlensError):
    """A file is in neither the before nor the after state of an op."""


# --------------------------------------------------------------------------- intent records


def intent_path(root: Path, txid: str) -> Path:
    return root / STATE_DIR / PENDING / f"{txid}.json"


def write_intent(root: Path, record: dict[str, Any]) -> None:
    """Durably (atomic write + folder fsync) record what a transaction is about to do."""
    folder = state_dir(root) / PENDING
    if not folder.is_dir():
        os.mkdir(folder)
    data = json.dumps(record, ensure_ascii=False, indent=1).encode("utf-8")
    atomic_write(intent_path(root, str(record["id"])), data, None, root=root)


def remove_intent(root: Path, txid: str) -> None:
    """Drop the intent of a finished transaction (memlens's own bookkeeping, not vault data)."""
    path = intent_path(root, txid)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def pending_intents(root: Path) -> list[Path]:
    folder = root / STATE_DIR / PENDING
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [folder / n for n in names if not n.startswith(TEMP_PREFIX)]


# --------------------------------------------------------------------------- rolling back


def _read(path: Path) -> bytes | None:
    try:
        return read_regular(path)
    except FileNotFoundError:
        return None


def _rollback_write(root: Path, op: dict[str, Any]) -> str | None:
    path = safe_rel(root, op["path"])
    cur = _read(path)
    if cur is None:
        raise Mismatch(f"{op['path']} is missing")
    sha = digest(cur)
    append_only = bool(op.get("append_only"))
    planned = int(op.get("planned_size", len(cur)))
    after_size = int(op.get("after_size", planned))
    # The after state is checked first: an append's after bytes start with
    # its before bytes, so a before-prefix match alone proves nothing.
    if sha == op["after"]:
        data = load_blob(root, op["before"])
    elif sha == op["before"]:
        return None  # not written yet
    elif append_only and digest(cur[:after_size]) == op["after"]:
        # Keep what an agent appended after memlens's write.
        data = load_blob(root, op["before"]) + cur[planned:]
    elif append_only and digest(cur[: int(op.get("before_size", -1))]) == op["before"]:
        return None  # not written yet; an agent appended since
    else:
        raise Mismatch(f"{op['path']} changed after the interrupted action")
    atomic_write(path, data, snapshot(path, cur), root=root, carry_appended=append_only)
    return f"restored {op['path']}"


def _rollback_create(root: Path, op: dict[str, Any], txid: str) -> str | None:
    path = safe_rel(root, op["path"])
    cur = _read(path)
    if cur is None:
        return None
    if digest(cur) != op["after"]:
        raise Mismatch(f"{op['path']} changed after the interrupted action")
    undone = root / STATE_DIR / "undone" / txid / op["path"]
    move_no_clobber(path, undone, snapshot(path, cur), root=root)
    return f"moved the new file {op['path']} to {STATE_DIR}/undone/{txid}/"


def _rollback_move(root: Path, op: dict[str, Any]) -> str | None:
    src, dst = safe_rel(root, op["path"]), safe_rel(root, op["dst"])
    s, d = _read(src), _read(dst)
    if d is None and s is not None:
        return None
    if s is None and d is not None:
        if digest(d) != op["sha"]:
            raise Mismatch(f"{op['dst']} changed after the interrupted action")
        move_no_clobber(dst, src, snapshot(dst, d), root=root)
        return f"moved {op['dst']} back to {op['path']}"
    if s is None:
        raise Mismatch(f"{op['path']} and {op['dst']} are both gone")
    assert d is not None
    same = os.path.samefile(src, dst) or (digest(s) == digest(d) == op["sha"])
    if not same:
        raise Mismatch(f"{op['dst']} is not the moved file; both kept")
    # The link step of the move happened, the unlink did not: the second name
    # is a second link to the same bytes, so dropping it loses nothing.
    os.unlink(dst)
    return f"removed the second link {op['dst']} of {op['path']}"


def rollback_ops(
    root: Path, txid: str, ops: list[dict[str, Any]], dirs: list[str]
) -> tuple[list[str], list[str]]:
    """Put every op back to its before state, last first; return (done, conflicts).

    An op whose file is in neither state is skipped (and so is every earlier
    op on that file); OSError propagates, leaving the intent for a later try.
    """
    done: list[str] = []
    conflicts: list[str] = []
    blocked: set[str] = set()
    for op in reversed(ops):
        names = {op["path"], *([op["dst"]] if op.get("dst") else [])}
        if names & blocked:
            continue
        try:
            if op["op"] == "write":
                note = _rollback_write(root, op)
            elif op["op"] == "create":
                note = _rollback_create(root, op, txid)
            else:
                note = _rollback_move(root, op)
        except Mismatch as exc:
            conflicts.append(str(exc))
            blocked |= names
            continue
        if note:
            done.append(note)
    remove_empty_dirs([safe_rel(root, d) for d in dirs])
    return done, conflicts


def sweep_temps(root: Path, folders: set[Path]) -> None:
    """Remove memlens's own half-written temp files (a kill mid-write leaves them)."""
    state = root / STATE_DIR
    for folder in {*folders, state, state / "blobs", state / PENDING}:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if name.startswith(TEMP_PREFIX):
                with contextlib.suppress(OSError):
                    os.unlink(folder / name)


# --------------------------------------------------------------------------- recovery on open


@dataclass(slots=True)
class RecoveryReport:
    """What recovering one vault did."""

    root: Path
    #: One line per transaction rolled back.
    rolled_back: list[str] = field(default_factory=list)
    #: Transactions found committed (only their intent was left).
    finished: list[str] = field(default_factory=list)
    #: What needs the user: files changed after the crash, kept as they are.
    conflicts: list[str] = field(default_factory=list)
    #: Another memlens process holds the vault: nothing was checked.
    busy: bool = False
    #: Stray `.memlens-tmp-*` files removed by a full sweep (`recover(..., sweep=True)`).
    temps_removed: int = 0

    @property
    def needs_user(self) -> bool:
        return bool(self.conflicts)

    def lines(self) -> list[str]:
        """One line per finding, for stderr or a notification."""
        out = [f"{self.root}: rolled back the interrupted {s}" for s in self.rolled_back]
        out += [
            f"{self.root}: {c}; kept it (run `memlens recover {self.root}`)" for c in self.conflicts
        ]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "vault": str(self.root),
            "rolled_back": self.rolled_back,
            "finished": self.finished,
            "conflicts": self.conflicts,
            "busy": self.busy,
            "temps_removed": self.temps_removed,
        }


def needs_recovery(root: Path) -> bool:
    """Cheap check at open: an intent record, or a temp file a kill left in `.memlens/`?"""
    if pending_intents(root):
        return True
    state = root / STATE_DIR
    for folder in (state, state / "blobs", state / PENDING):
        try:
            with os.scandir(folder) as entries:
                if any(e.name.startswith(TEMP_PREFIX) for e in entries):
                    return True
        except OSError:
            continue
    return False


def recover(root: Path, *, sweep: bool = False) -> RecoveryReport:
    """Roll back every unfinished transaction of the vault, unless a live process holds it.

    `sweep` (the explicit `memlens recover`) also walks the whole vault for
    stray temp files, which an open skips to stay cheap: under the lock no
    live memlens process is writing one.
    """
    report = RecoveryReport(root)
    if not (root / STATE_DIR).is_dir():
        return report  # memlens never wrote here: nothing to finish, and nothing to create
    if not sweep and not needs_recovery(root):
        return report
    with vault_lock(state_dir(root), wait=False) as held:
        if not held:
            report.busy = True
            return report
        recover_locked(root, report)
        if sweep:
            report.temps_removed = len(clean_stray_temps(root))
    return report


def recover_locked(root: Path, report: RecoveryReport | None = None) -> RecoveryReport:
    """Recovery proper; the caller holds the vault lock."""
    report = report or RecoveryReport(root)
    intents = pending_intents(root)
    committed = {str(e.get("id")) for e in read_journal(root)} if intents else set()
    folders: set[Path] = set()
    for path in intents:
        try:
            record = json.loads(read_regular(path))
            txid, ops = str(record["id"]), list(record.get("ops", []))
        except (ValueError, KeyError, TypeError, OSError):
            report.conflicts.append(f"{path.name}: unreadable intent record")
            _set_aside(root, path)
            continue
        for op in ops:
            for key in ("path", "dst"):
                if op.get(key):
                    folders.add(safe_rel(root, op[key]).parent)
        what = f"{record.get('action', 'action')} ({record.get('summary') or txid})"
        if txid in committed:
            report.finished.append(what)
            remove_intent(root, txid)
            continue
        _done, conflicts = rollback_ops(root, txid, ops, list(record.get("dirs", [])))
        if conflicts:
            report.conflicts += conflicts
            _set_aside(root, path)
        else:
            report.rolled_back.append(what)
            remove_intent(root, txid)
    sweep_temps(root, folders)
    return report


def _set_aside(root: Path, intent: Path) -> None:
    """Keep an intent that needs the user in `.memlens/unresolved/` (the blobs stay)."""
    folder = state_dir(root) / UNRESOLVED
    folder.mkdir(exist_ok=True)
    move_no_clobber(intent, folder / intent.name, None, root=root)
