"""What changed between two results of one vault, by memory (for updating indexes).

`core.scan.changes` says the same per memory and problem for a front end's
list; this is the cheaper answer an index needs: which memory objects to add,
re-index or drop.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..model import Memory, ScanResult


@dataclass(slots=True)
class MemoryChanges:
    """Memories a rescan added, changed or removed (for updating indexes)."""

    added: list[Memory] = field(default_factory=list)
    changed: list[Memory] = field(default_factory=list)
    removed: list[Memory] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.added or self.changed or self.removed)


def diff_results(old: ScanResult, new: ScanResult, *, everything: bool = False) -> MemoryChanges:
    """What changed between two results of one vault, by id and object identity.

    A rescan keeps the very objects of memories whose files did not change,
    so an object that is not the same is a changed memory.  Link-derived
    values (resolved references, state-file numbers) are updated in place;
    pass `everything=True` after a vault-wide file changed
    (`Vault.last_rescan_vault_wide`) to count every surviving memory as
    changed.
    """
    olds, news = old.memories, new.memories
    lo = hi = 0
    if not everything:
        # A rescan keeps the objects of untouched memories in place, so the
        # lists usually differ in one short stretch: skip the identical ends
        # (ids are unique within a result, so no id can move across them).
        lo = _same_run(map(operator.is_, olds, news))
        hi = _same_run(map(operator.is_, reversed(olds), reversed(news)))
        hi = min(hi, len(olds) - lo, len(news) - lo)
    before = {m.id: m for m in olds[lo : len(olds) - hi]}
    out = MemoryChanges()
    for m in news[lo : len(news) - hi]:
        prev = before.pop(m.id, None)
        if prev is None:
            out.added.append(m)
        elif everything or prev is not m:
            out.changed.append(m)
    out.removed = list(before.values())
    return out


def _same_run(same: Iterable[bool]) -> int:
    """How many leading items of `same` are true (the loop runs in C)."""
    flags = list(same)
    try:
        return flags.index(False)
    except ValueError:
        return len(flags)


__all__ = ["MemoryChanges", "diff_results"]
