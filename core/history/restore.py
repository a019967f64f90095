"""Restore this version: an earlier version of a memory written back as an ordinary edit.

The format's writer plans it (`plan_restore_version`: a whole file, a
section's lines; experience records refuse, raw records being immutable),
conflict-checked against the bytes the history was read with; it is applied
in a journaled transaction like every action, so `memlens undo` reverts it.
Git itself is never touched: no checkout, no commit.
"""

from __future__ import annotations

from typing import Any

from ..errors import RefusedError
from ..formats.writers import writer_for
from ..write.journal import Plan
from ..write.txn import transaction
from .versions import History, Version, version_at


def plan_restore(history: History, version: Version) -> Plan:
    """The plan that puts `version` back (nothing written)."""
    if history.memory.tombstoned:
        raise RefusedError("tombstoned (erased) memories cannot be changed")
    writer = writer_for(history.memory.format)
    plan = writer.plan_restore_version(history.memory, version.data, history.current)
    plan.summary += f" (as of commit {version.commit.short})"
    return plan


def restore_version(history: History, ref: str) -> tuple[Plan, dict[str, Any]]:
    """Put back the memory as it was at commit `ref`; the plan and its journal entry.

    Planned once outside the vault lock (a refusal writes nothing, not even
    `.memlens/`), then again inside the transaction, so another writer
    cannot slip in between the check and the write.
    """
    version = version_at(history, ref)
    plan_restore(history, version)
    with transaction(history.memory.vault_root, "restore_version") as tx:
        plan = plan_restore(history, version)
        tx.apply(plan)
        entry = tx.commit(plan.summary, always=True)
    assert entry is not None
    return plan, entry


__all__ = ["plan_restore", "restore_version"]
