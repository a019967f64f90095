"""All-or-nothing actions: a transaction applies one or more plans as one journal entry.

Modelled on SQLite's rollback journal.  Under the vault lock
(core/vault_lock.py), before the first vault write of a plan:

1. every snapshot the plan was computed from is checked (a conflict refuses
   that plan before anything is written);
2. the before-bytes of every file it rewrites go to `.memlens/blobs/`;
3. the intent record `.memlens/pending/<txid>.json` is (re)written durably,
   listing every op of the transaction so far plus this plan's.

Only then is the vault touched.  After the last plan, the journal line is
appended durably and the intent removed: the transaction is committed iff
the journal holds its line.  Any error while writing rolls every op back at
once (core/recovery.py); if the rollback itself fails, the intent stays and
the next open of the vault (or `memlens recover`) finishes it.

Runs (decay, promote of many, bulk actions) apply several plans in one
transaction: each is planned right before it is applied, on top of the
previous one's result, so one undo reverts the whole run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from ..errors import ConflictError, MemlensError, RefusedError
from .journal import (
    FileChange,
    JournalUncertain,
    Plan,
    append_journal,
    check_inside,
    make_dirs,
    rel_path,
    safe_rel,
    state_dir,
    store_blob,
)
from .recovery import (
    RecoveryReport,
    recover_locked,
    remove_intent,
    rollback_ops,
    sweep_temps,
    write_intent,
)
from .vault_lock import lock_depth, vault_lock
from .writes import (
    FileSnapshot,
    WriteError,
    atomic_write,
    check_unchanged,
    digest,
    move_no_clobber,
)


class Transaction:
    """Plans applied in sequence to one vault, committed as one journal entry.

    Use through `transaction(root, action)`; `apply` each plan, then `commit`.
    Leaving the block without a commit rolls back whatever was applied.
    """

    def __init__(self, root: Path, action: str) -> None:
        self.root = root
        self.action = action
        self.id = f"{time.time_ns():x}"
        #: Every op so far, in the order done (the intent record lists them).
        self.ops: list[dict[str, Any]] = []
        #: Folders this transaction created, vault-relative, in creation order.
        self.dirs: list[str] = []
        self.memory_ids: list[str] = []
        self.summaries: list[str] = []
        self.plans = 0
        self.entry: dict[str, Any] | None = None
        #: Unfinished transactions of earlier processes this one rolled back first.
        self.recovered: RecoveryReport | None = None
        self._broken = False

    # ------------------------------------------------------------------ applying
    def apply(self, plan: Plan) -> None:
        """Check, record and apply one plan; a conflict refuses it before any write.

        Any failure after the first write rolls back the whole transaction
        (every plan applied so far) and makes it unusable.
        """
        if self._broken or self.entry is not None:
            raise RefusedError("this transaction is finished; start a new one")
        if plan.vault_root != self.root:
            raise RefusedError(f"{plan.vault_root} is not the vault of this transaction")
        befores = self._verify(plan)
        ops = self._record(plan, befores)
        try:
            for change, op in zip(plan.changes, ops, strict=True):
                self._do(change, op)
        except BaseException as exc:
            self._fail(exc)
            raise
        self.plans += 1
        self.memory_ids += [m for m in plan.memory_ids if m not in self.memory_ids]
        self.summaries.append(plan.summary)

    def _verify(self, plan: Plan) -> list[bytes | None]:
        """Every snapshot still holds (ConflictError otherwise); the current bytes of each."""
        for read in plan.reads:
            check_unchanged(read)
        befores: list[bytes | None] = []
        for c in plan.changes:
            check_inside(self.root, c.path, *([c.dst] if c.dst else []))
            if c.kind == "create":
                if c.path.exists() or c.path.is_symlink():
                    raise ConflictError(f"{c.path} already exists; not overwriting it")
                befores.append(None)
                continue
            befores.append(check_unchanged(c.expected))
            if c.kind == "move" and c.dst is not None and (c.dst.exists() or c.dst.is_symlink()):
                raise ConflictError(f"{c.dst} already exists; memlens never overwrites on a move")
        return befores

    def _record(self, plan: Plan, befores: list[bytes | None]) -> list[dict[str, Any]]:
        """Keep before-bytes, then durably extend the intent record; nothing in the vault yet."""
        root = self.root
        ops: list[dict[str, Any]] = []
        kept = len(self.ops)
        try:
            for c, before in zip(plan.changes, befores, strict=True):
                path = rel_path(root, c.path)
                if c.kind == "write":
                    assert c.data is not None and before is not None
                    ops.append(
                        {
                            "op": "write",
                            "path": path,
                            "before": store_blob(root, before),
                            "before_size": len(before),
                            "after": digest(c.data),
                            "planned_size": len(c.data),
                            "after_size": len(c.data),
                            "append_only": c.append_only,
                        }
                    )
                elif c.kind == "create":
                    assert c.data is not None
                    ops.append({"op": "create", "path": path, "after": digest(c.data)})
                else:
                    assert c.dst is not None
                    dst = rel_path(root, c.dst)
                    ops.append({"op": "move", "path": path, "dst": dst, "sha": c.expected.sha256})
            self.ops += ops
            write_intent(root, self._intent())
        except BaseException:
            del self.ops[kept:]  # this plan wrote nothing: it is not part of the rollback
            raise
        return ops

    def _intent(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "action": self.action,
            "summary": "; ".join(self.summaries),
            "ops": self.ops,
            "dirs": self.dirs,
        }

    def _do(self, c: FileChange, op: dict[str, Any]) -> None:
        root = self.root
        if c.kind != "write":
            target = c.dst if c.kind == "move" else c.path
            assert target is not None
            missing = _missing_dirs(root, target.parent)
            if missing:
                # Folders are listed in the intent before they exist, so a
                # rollback can remove them again (only if empty).
                self.dirs += [rel_path(root, d) for d in missing]
                write_intent(root, self._intent())
                make_dirs(root, target.parent)
        if c.kind == "write":
            assert c.data is not None
            # An agent's append to an append-only file since the plan was made is carried.
            after = atomic_write(
                c.path, c.data, c.expected, root=root, carry_appended=c.append_only
            )
            op["after"], op["after_size"] = after.sha256, after.size
        elif c.kind == "create":
            assert c.data is not None
            atomic_write(c.path, c.data, FileSnapshot(c.path, None, None, None, None), root=root)
        else:
            assert c.dst is not None
            move_no_clobber(c.path, c.dst, c.expected, root=root)

    @property
    def broken(self) -> bool:
        """Whether a failure rolled this transaction back (or left it to recovery)."""
        return self._broken

    def _fail(self, exc: BaseException) -> None:
        """Roll every op back now; if that fails too, leave the intent for recovery.

        Raises WriteError (naming `memlens recover`) when the rollback could
        not finish; an interruption that is not an Exception (a kill in the
        fault tests) propagates as it is.
        """
        self._broken = True
        try:
            _done, conflicts = rollback_ops(self.root, self.id, self.ops, self.dirs)
        except BaseException as again:
            if not isinstance(exc, Exception):
                return
            raise WriteError(
                f"{exc}; rolling back failed too ({again}): run `memlens recover {self.root}`"
            ) from exc
        if conflicts:
            raise WriteError(
                f"{exc}; some files changed meanwhile and were kept ({'; '.join(conflicts)}): "
                f"run `memlens recover {self.root}`"
            ) from exc
        remove_intent(self.root, self.id)

    # ------------------------------------------------------------------ committing
    def commit(
        self, summary: str | None = None, *, always: bool = False, **extra: Any
    ) -> dict[str, Any] | None:
        """Append the journal entry (the commit point) and drop the intent.

        Returns the entry, or None when no plan wrote anything (unless
        `always`: undo markers and single plans are journaled even then).
        """
        if self._broken:
            raise RefusedError("this transaction was rolled back")
        if not self.ops and not always:
            remove_intent(self.root, self.id)
            self.entry = {}
            return None
        entry: dict[str, Any] = {
            "id": self.id,
            "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "action": self.action,
            "memory_ids": self.memory_ids,
            "summary": summary if summary is not None else "; ".join(self.summaries),
            **extra,
            "ops": self.ops,
        }
        if self.plans > 1:
            entry["plans"] = self.plans
        if self.dirs:
            # Absent in entries of plans that created no folder (and in old journals).
            entry["dirs"] = self.dirs
        try:
            append_journal(self.root, entry)
        except JournalUncertain as exc:
            self._broken = True
            raise WriteError(f"{exc}: run `memlens recover {self.root}`") from exc
        except BaseException as exc:
            self._fail(exc)
            raise
        self.entry = entry
        # Committed: a failure from here on only leaves a stale intent, which
        # recovery drops because the journal holds the entry.
        with suppress(OSError):
            remove_intent(self.root, self.id)
        return entry


def _missing_dirs(root: Path, folder: Path) -> list[Path]:
    missing: list[Path] = []
    p = folder
    while p != root and not p.is_dir() and p.parent != p:
        missing.append(p)
        p = p.parent
    return list(reversed(missing))


@contextmanager
def transaction(root: Path, action: str) -> Iterator[Transaction]:
    """Hold the vault lock, recover what earlier processes left, and run one transaction.

    An exception out of the block rolls back everything applied; so does
    leaving it without `commit`.
    """
    root = Path(root)
    state = state_dir(root)
    with vault_lock(state):
        tx = Transaction(root, action)
        if lock_depth(state) == 1:
            # Only the outermost hold recovers: a nested transaction (same
            # thread) must not mistake its caller's intent for a dead one.
            tx.recovered = recover_locked(root)
        try:
            yield tx
        except BaseException as exc:
            if tx.entry is None and not tx.broken and tx.ops:
                tx._fail(exc)
            if isinstance(exc, Exception):
                _sweep(tx)
            raise
        if tx.entry is None and not tx.broken and tx.ops:
            tx._fail(RefusedError("transaction left without a commit"))
        _sweep(tx)


def _sweep(tx: Transaction) -> None:
    """Remove temp files a failed step left in the folders this transaction touched.

    Still under the vault lock, so no live memlens process owns one of them.
    """
    folders = {
        safe_rel(tx.root, op[key]).parent for op in tx.ops for key in ("path", "dst") if op.get(key)
    }
    with suppress(OSError, MemlensError):
        sweep_temps(tx.root, folders)


def apply_plan(plan: Plan) -> dict[str, Any]:
    """Apply every change of `plan` as one transaction; return the journal entry."""
    with transaction(plan.vault_root, plan.action) as tx:
        tx.apply(plan)
        entry = tx.commit(plan.summary, always=True)
    assert entry is not None
    return entry


def apply_run(
    root: Path,
    action: str,
    steps: Iterable[tuple[str, Callable[[], Plan]]],
    summary: Callable[[int], str] | None = None,
) -> tuple[dict[str, Any] | None, list[tuple[str, str]]]:
    """Plan and apply each step in turn in one transaction; one journal entry for all.

    Each step is (label, planner); the planner runs right before its plan is
    applied, so it sees the files as the previous steps left them.  A step
    refused before writing (a conflict, an invalid result) is skipped and
    reported; an I/O error (OSError, WriteError) rolls back the whole run, so
    the vault is never left half-way.  Returns the entry (None if nothing was
    written) and the refused steps with their reasons.
    """
    refused: list[tuple[str, str]] = []
    with transaction(root, action) as tx:
        for label, make in steps:
            try:
                tx.apply(make())
            except WriteError:
                raise
            except MemlensError as exc:
                if tx.broken:
                    raise
                refused.append((label, str(exc)))
        entry = tx.commit(summary(tx.plans) if summary is not None else None)
    return entry, refused
