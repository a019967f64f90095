"""The search pane's lists of hits: how the shown hits are ordered, and what a list is."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from memlens.core.decay import decay_of
from memlens.core.search.index import Hit


def health_of(hit: Hit, as_of: date) -> str:
    """The hit's unified health at `as_of` ("" if its decay fails)."""
    try:
        return str(decay_of(hit.memory, as_of, explain=False).health.value)
    except Exception:  # a decay bug must not hide the hit; it shows without health
        return ""


#: Orders of the shown hits (`s`): the ranking's own, then explain columns, highest first.
SORTS: tuple[str, ...] = ("rank", "confidence", "decay weight", "importance")
_SORT_KEYS = {
    "confidence": "confidence",
    "decay weight": "decay_weight",
    "importance": "importance",
}


def sorted_hits(hits: list[Hit], sort: str) -> list[Hit]:
    """`hits` in rank order, or by a column, highest first (a missing value last; stable)."""
    key = _SORT_KEYS.get(sort)
    if key is None:
        return list(hits)

    def value(hit: Hit) -> float:
        v = hit.explain.get(key)
        if key == "importance" and v is None:
            v = hit.memory.importance
        return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else -1e300

    return sorted(hits, key=lambda h: -value(h))


@dataclass(slots=True)
class Listing:
    """What the result list shows: a query's hits, or memories like one memory."""

    hits: list[Hit]
    #: A line saying what the list is (for "more like this" lists).
    label: str
    cursor: int = 0
