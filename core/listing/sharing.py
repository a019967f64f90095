"""Kept list rows with equal values as one object: fewer objects to decode and hold.

A warm start decodes every kept row (`core.listing.snapshot`) before its
vault is read; most of a row's values repeat across rows (a handful of
kinds and health values, a few hundred ages, ~130 tags).
"""

from __future__ import annotations

from typing import Any

from ..model import Memory
from .rows import MemoryRow


def shared(values: list[Any]) -> list[Any]:
    """`values` with equal values (of one type) one object; in tuples, each item too.

    Why: pickle writes an object met again as a reference to the first, so
    the next start decodes one object where it decoded one per row (at 100k
    rows: tens of MB of peak RSS, and a faster load).  Pickle does so for
    strings, tuples and dates, not for numbers.  Values are only
    shared when equal means the same: never across types (1 == 1.0 == True),
    never a zero float (-0.0 == 0.0 prints differently), never a tuple with
    a zero in it.  A NaN is equal to no other, so it is never shared either.
    """
    one: dict[tuple[Any, Any], Any] = {}
    out: list[Any] = []
    add = out.append
    for value in values:
        kind = type(value)
        if kind is tuple:
            if 0 in value:
                add(value)
                continue
            key = (value, tuple(map(type, value)))
            got = one.get(key)
            if got is None:
                got = one[key] = tuple(_one(item, one) for item in value)
            add(got)
        else:
            add(_one(value, one))
    return out


def _one(value: Any, one: dict[tuple[Any, Any], Any]) -> Any:
    kind = type(value)
    if (kind is float and value == 0) or kind is tuple:
        return value
    return one.setdefault((value, kind), value)


def share_with_memories(rows: list[MemoryRow], memories: list[Memory]) -> None:
    """Each row's id, title, importance and confidence made its memory's, where the same.

    Why: a kept row decodes its own copies (pickle writes every float
    again); at 100k rows the copies are ~25 MB of a warm start's peak RSS,
    dropped for ~60 ms.  Safe from the load worker while the UI thread
    shows the rows: each attribute is set at once, to an equal value of the
    same type (never a zero float: -0.0 == 0.0 prints differently).
    """
    for row, m in zip(rows, memories, strict=True):
        row.id = m.id
        title = m.title
        if row.title == title:
            row.title = title
        value: Any = m.importance
        if _same(row.importance, value):
            row.importance = value
        value = m.confidence
        if _same(row.confidence, value):
            row.confidence = value


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b and (type(a) is not float or a != 0)


__all__ = ["share_with_memories", "shared"]
