"""What merge and supersede share across formats: steps, options, a fresh re-read.

Merge and supersede change two or three memories, sometimes in one file
(Dream Cycle sections share observations.md), so a format plans them as
*steps*: (label, planner) pairs that `core.actions` runs one after another
in one transaction, each planner called right before its plan is applied,
so it sees what the previous steps wrote.  Any refusal rolls every step
back: a merge is all or nothing, one journal entry, one undo.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from ..errors import ConflictError
from ..model import Memory
from ..write.journal import Plan
from .adapter import FormatAdapter

#: One step of a multi-step action: what it does, and its planner.
Step = tuple[str, Callable[[], Plan]]


@dataclass(frozen=True, slots=True)
class CurationOptions:
    """How a merge or supersede is done."""

    #: The date written where a format records one (archive dates, decisions).
    as_of: date
    #: Supersede: keep the older memory live instead of archiving it.
    keep_old: bool = False
    #: The clock for formats that stamp a time (cognitive `updated`,
    #: experience-record ids); None reads the system clock when planning.
    now: datetime | None = None


def refreshed(adapter: FormatAdapter, memory: Memory, *, check: bool = True) -> Memory:
    """`memory` as it is on disk now (re-scanned by its format).

    With `check`, ConflictError when its title, body, fields or archive state
    differ from what the caller saw; without, the caller's own earlier step
    changed it and only its presence matters.
    """
    result = adapter.scan(memory.vault_root)
    found = [m for m in result.memories if m.id == memory.id and m.path == memory.path]
    if not found:
        found = [m for m in result.memories if m.id == memory.id and not m.archived]
    if len(found) != 1:
        raise ConflictError(f"{memory.path}: {memory.id} changed on disk since it was read")
    fresh = found[0]
    if check and (fresh.title, fresh.body, fresh.fields, fresh.archived) != (
        memory.title,
        memory.body,
        memory.fields,
        memory.archived,
    ):
        raise ConflictError(f"{memory.path}: {memory.id} changed on disk since it was read")
    return fresh


def union(first: Iterable[Any], second: Iterable[Any]) -> list[Any]:
    """`first` then the items of `second` not in it, each once, order kept."""
    out: list[Any] = []
    for item in (*first, *second):
        if item not in out:
            out.append(item)
    return out


def as_list(value: Any) -> list[Any]:
    """A field value as a list (a lone value becomes one item, None none)."""
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return list(value)
    return [value]
