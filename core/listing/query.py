"""Sorting and filtering rows: the list's columns, sort keys and filter words."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .rows import CONFIDENCE_WORDS, HEALTH_RANK, MemoryRow


@dataclass(frozen=True, slots=True)
class Column:
    """One sortable column of the memory list."""

    key: str
    label: str


#: Columns in display order; `natural` is the order the vaults hold them in.
COLUMNS: tuple[Column, ...] = (
    Column("natural", "vault order"),
    Column("title", "title"),
    Column("kind", "kind"),
    Column("health", "health"),
    Column("strength", "strength"),
    Column("importance", "importance"),
    Column("confidence", "confidence"),
    Column("when", "age / expiry"),
    Column("tags", "tags"),
    Column("vault", "vault"),
)
SORT_KEYS: tuple[str, ...] = tuple(c.key for c in COLUMNS)


# --------------------------------------------------------------------------- sorting


def _none_last(value: float | None) -> tuple[int, float]:
    return (1, 0.0) if value is None else (0, value)


def _confidence_value(value: float | str | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, str):
        return CONFIDENCE_WORDS.get(value.lower())
    return float(value)


def sort_key(column: str) -> Callable[[MemoryRow], Any]:
    """The key function that orders rows by `column` (ascending)."""
    if column == "natural":
        return lambda r: r.order
    if column == "title":
        return lambda r: r.title.lower()
    if column == "kind":
        return lambda r: r.kind.lower()
    if column == "health":
        return lambda r: (HEALTH_RANK.get(r.health, 99), _none_last(r.strength))
    if column == "strength":
        return lambda r: _none_last(r.strength)
    if column == "importance":
        return lambda r: _none_last(r.importance)
    if column == "confidence":
        return lambda r: _none_last(_confidence_value(r.confidence))
    if column == "when":
        return lambda r: r.when_key
    if column == "tags":
        return lambda r: (not r.tags, " ".join(r.tags).lower())
    if column == "vault":
        return lambda r: r.vault.lower()
    raise ValueError(f"unknown sort column {column!r}")


# --------------------------------------------------------------------------- filtering

#: `field:value` terms the filter understands, and the row text each one searches.
FILTER_FIELDS: dict[str, Callable[[MemoryRow], str]] = {
    "kind": lambda r: r.kind.lower(),
    "health": lambda r: r.health,
    "status": lambda r: r.status.lower(),
    "tag": lambda r: "\n".join(r.tags).lower(),
    "vault": lambda r: r.vault.lower(),
    "format": lambda r: r.format,
    "id": lambda r: r.id.lower(),
}


@dataclass(frozen=True, slots=True)
class Term:
    """One whitespace-separated word of a filter: `field:value` or plain text."""

    field: str | None
    value: str

    def implied_by(self, other: Term) -> bool:
        """True if every row matching `other` also matches this term."""
        return self.field == other.field and self.value in other.value


def parse_query(query: str) -> tuple[Term, ...]:
    """Filter words; all must match (AND).  Plain words match title, tags or id."""
    terms: list[Term] = []
    for word in query.lower().split():
        name, sep, value = word.partition(":")
        if sep and name in FILTER_FIELDS:
            if value:
                terms.append(Term(name, value))
            continue
        terms.append(Term(None, word))
    return tuple(terms)


def narrows(old: Sequence[Term], new: Sequence[Term]) -> bool:
    """True if `new` can only remove matches of `old` (so we filter the old result)."""
    if len(new) < len(old):
        return False
    return all(o.implied_by(n) for o, n in zip(old, new, strict=False))


def predicate(terms: Sequence[Term]) -> Callable[[MemoryRow], bool]:
    plain = [t.value for t in terms if t.field is None]
    fielded = [(FILTER_FIELDS[t.field], t.value) for t in terms if t.field is not None]
    if not fielded:
        if len(plain) == 1:
            word = plain[0]
            return lambda r: word in r.haystack
        return lambda r: all(w in r.haystack for w in plain)
    return lambda r: all(w in r.haystack for w in plain) and all(v in get(r) for get, v in fielded)
