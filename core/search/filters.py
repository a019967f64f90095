"""Filter masks: which rows a query's filters (and the default exclusions) accept.

Every filter runs as a numpy mask over the per-row columns (`columns.py`);
string columns are matched through their code tables, so a filter tests
each distinct value once, not each row.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..model import Health
from .aliases import BoolArray, IntArray
from .columns import HEALTHS, Codes, Column, Columns
from .postings import Postings
from .query import ANY_HEALTH, Filter, QueryError

#: Healths a search leaves out unless the query asks for them.
DEFAULT_EXCLUDED_HEALTH = frozenset({Health.EXPIRED, Health.ARCHIVED, Health.TOMBSTONED})


def rows_mask(n: int, rows: IntArray) -> BoolArray:
    """A mask over `n` rows, true at `rows`."""
    mark = np.zeros(n, dtype=bool)
    mark[rows] = True
    return mark


def active_mask(columns: Columns, rows: IntArray) -> BoolArray:
    """Which of `rows` a search shows by default (health not in DEFAULT_EXCLUDED_HEALTH)."""
    excluded = np.array([h in DEFAULT_EXCLUDED_HEALTH for h in HEALTHS], dtype=bool)
    keep: BoolArray = ~excluded[columns.health.view[rows]]
    return keep


def _match_codes(
    codes: Codes, column: Column, rows: IntArray, pred: Callable[[str], bool]
) -> BoolArray:
    table = codes.table(pred)
    if not len(table):
        return np.zeros(len(rows), dtype=bool)
    out: BoolArray = table[column.view[rows]]
    return out


def filter_mask(columns: Columns, tags: Postings, f: Filter, rows: IntArray) -> BoolArray:
    """Which of `rows` the (un-negated) filter accepts."""
    vals = f.values

    def match(value: str) -> bool:
        for v in vals:
            if v.endswith("*"):
                if value.startswith(v[:-1]):
                    return True
            elif value == v:
                return True
        return False

    def contains(value: str) -> bool:
        return any(v.rstrip("*") in value for v in vals)

    if f.field == "tag":
        parts = [tags.rows(tag) for tag in list(tags) if match(tag)]
        if not parts:
            return np.zeros(len(rows), dtype=bool)
        return rows_mask(columns.alive.size, np.concatenate(parts))[rows]
    if f.field == "kind":
        return _match_codes(columns.kind_codes, columns.kind, rows, match)
    if f.field == "format":
        return _match_codes(columns.fmt_codes, columns.fmt, rows, contains)
    if f.field == "source":
        return _match_codes(
            columns.source_codes, columns.source, rows, lambda s: bool(s) and contains(s)
        )
    if f.field in ("vault", "agent"):
        return _place_mask(columns, f, rows, match)
    if f.field in ("health", "status"):
        return _health_mask(columns, f, rows, match)
    if f.field in ("before", "after"):
        assert f.day is not None
        created = columns.created.view[rows]
        day = f.day.toordinal()
        ok = created < day if f.field == "before" else created > day
        return (created > 0) & ok
    if f.field in ("importance", "confidence"):
        return _number_mask(columns, f, rows)
    raise QueryError(f.token, f"unsupported filter {f.field!r}")  # pragma: no cover


def _place_mask(
    columns: Columns, f: Filter, rows: IntArray, match: Callable[[str], bool]
) -> BoolArray:
    """``vault:`` by the names a vault answers to; ``agent:`` by vault or agent."""
    by_vault = _match_codes(
        columns.vault_codes,
        columns.vault,
        rows,
        lambda root: any(match(n) for n in columns.vault_names.get(root, ())),
    )
    if f.field == "vault":
        return by_vault
    by_agent = _match_codes(
        columns.agent_codes, columns.agent, rows, lambda a: bool(a) and match(a)
    )
    return by_vault | by_agent


def _health_mask(
    columns: Columns, f: Filter, rows: IntArray, match: Callable[[str], bool]
) -> BoolArray:
    """``health:`` by unified health; ``status:`` by native status or unified health."""
    vals = f.values
    if any(v in ANY_HEALTH for v in vals):
        return np.ones(len(rows), dtype=bool)
    table = np.array([h.value in vals for h in HEALTHS], dtype=bool)
    by_health: BoolArray = table[columns.health.view[rows]]
    if f.field == "health":
        return by_health
    by_status = _match_codes(columns.status_codes, columns.status, rows, lambda s: match(s.lower()))
    return by_status | by_health


def _number_mask(columns: Columns, f: Filter, rows: IntArray) -> BoolArray:
    """``importance:`` and ``confidence:`` comparisons (a missing value never matches)."""
    assert f.number is not None
    col = (columns.importance if f.field == "importance" else columns.conf).view[rows]
    x = f.number
    with np.errstate(invalid="ignore"):
        if f.op == ">":
            return col > x
        if f.op == ">=":
            return col >= x
        if f.op == "<":
            return col < x
        if f.op == "<=":
            return col <= x
        return np.abs(col - x) <= 1e-9
