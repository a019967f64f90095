"""Decay briefs: the (status, health, weight, score) a search index keeps of a decay.

Ranking multiplies by the decay weight and filters by health and status, so
each row's decay is computed once at the index's `as_of`.  A format without
a decay model (or an unknown one) ranks at full weight instead of failing
the whole search.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date

from ..decay import decay_of
from ..model import DecayInfo, Health, Memory
from .aliases import Brief, DecayFn


def _safe_brief(
    brief: Callable[[Memory, date], Brief], fallback: Callable[[Memory], Brief], as_of: date
) -> Callable[[Memory], Brief]:
    """An adapter's `decay_brief`, falling back like `_safe_decay` does."""

    def one(m: Memory) -> Brief:
        try:
            return brief(m, as_of)
        except (KeyError, NotImplementedError):
            return fallback(m)

    return one


def _safe_decay(decay: DecayFn, memory: Memory, as_of: date) -> DecayInfo:
    """Decay for ranking; a format without a decay model ranks at full weight."""
    try:
        return decay(memory, as_of)
    except (KeyError, NotImplementedError):
        # An unknown format id or an adapter still being written: rank it as
        # stable rather than hide it or fail the whole search.
        return DecayInfo(status="unknown", health=Health.STABLE, strength=1.0, weight=1.0)


def decay_brief_fn(as_of: date, decay: DecayFn) -> Callable[[Memory], Brief]:
    """(status, health, weight, score) at `as_of` for one memory.

    With the default decay, each format's adapter is looked up once and
    its `decay_brief` (the same numbers without the explanation text) used.
    """

    def by(fn: DecayFn) -> Callable[[Memory], Brief]:
        def one(m: Memory) -> Brief:
            info = _safe_decay(fn, m, as_of)
            return info.status, info.health, info.weight, info.score

        return one

    if decay is not decay_of:
        return by(decay)
    from ..formats import adapter_for

    by_format: dict[str, Callable[[Memory], Brief]] = {}

    def one(m: Memory) -> Brief:
        fn = by_format.get(m.format)
        if fn is None:
            try:
                adapter = adapter_for(m.format)
            except (KeyError, NotImplementedError):
                fn = by(decay)
            else:
                fn = _safe_brief(adapter.decay_brief, by(decay), as_of)
            by_format[m.format] = fn
        return fn(m)

    return one
