"""Triage views over rows: grouped by urgency, health counts, strength histogram, forecast."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import date, timedelta
from typing import Any

from ..decay import decay_of
from ..model import HEALTH_ORDER, Health
from .rows import MemoryRow


def triage_key(row: MemoryRow) -> tuple[int, date, float]:
    """Soonest expiry first, then lowest strength."""
    has_expiry = 0 if row.expires_on is not None else 1
    strength = row.strength if row.strength is not None else 2.0
    return (has_expiry, row.expires_on or date.max, strength)


def strength_first_key(row: MemoryRow) -> tuple[float, int, date]:
    """Lowest strength first, then soonest expiry."""
    strength = row.strength if row.strength is not None else 2.0
    return (strength, 0 if row.expires_on is not None else 1, row.expires_on or date.max)


#: Triage orders by name: `expiry` (soonest first) or `strength` (weakest first).
TRIAGE_ORDERS: dict[str, Callable[[MemoryRow], Any]] = {
    "expiry": triage_key,
    "strength": strength_first_key,
}


def triage_groups(
    rows: Iterable[MemoryRow], order: str = "expiry"
) -> list[tuple[Health, list[MemoryRow]]]:
    """Valid memories grouped by health (most urgent group first), each group in `order`."""
    key = TRIAGE_ORDERS[order]
    groups: dict[str, list[MemoryRow]] = {h.value: [] for h in HEALTH_ORDER}
    for row in rows:
        if row.problem is None and row.health in groups:
            groups[row.health].append(row)
    return [
        (h, sorted(groups[h.value], key=lambda r: (key(r), r.order)))
        for h in HEALTH_ORDER
        if groups[h.value]
    ]


def health_counts(rows: Iterable[MemoryRow]) -> Counter[str]:
    """Rows per health value (`invalid` included)."""
    return Counter(r.health for r in rows)


def strength_histogram(rows: Iterable[MemoryRow], buckets: int = 20) -> list[int]:
    """How many valid memories fall in each of `buckets` equal strength bands, weakest first."""
    counts = [0] * buckets
    for r in rows:
        if r.strength is None or r.problem is not None:
            continue
        s = min(max(r.strength, 0.0), 1.0)
        counts[min(int(s * buckets), buckets - 1)] += 1
    return counts


def forecast_rows(
    rows: Iterable[MemoryRow],
    as_of: date,
    horizons: Sequence[int] = (7, 30, 90),
    cancelled: Callable[[], bool] | None = None,
) -> dict[int, list[MemoryRow]]:
    """Rows healthy (stable/active) at `as_of` that are fading or expired `h` days later.

    Same rule as `core.decay.forecast`, but over rows whose health at `as_of`
    is already known, so each memory costs one decay per horizon.
    """
    healthy = [
        r
        for r in rows
        if r.memory is not None and r.health in (Health.ACTIVE.value, Health.STABLE.value)
    ]
    out: dict[int, list[MemoryRow]] = {}
    for h in horizons:
        later = as_of + timedelta(days=h)
        fading: list[MemoryRow] = []
        for r in healthy:
            if cancelled is not None and cancelled():
                return out
            assert r.memory is not None
            try:
                health = decay_of(r.memory, later, explain=False).health
            except Exception:  # a decay bug is shown on the row already
                continue
            if health in (Health.FADING, Health.EXPIRED):
                fading.append(r)
        out[h] = fading
    return out
