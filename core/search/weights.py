"""TF-IDF weights from raw term counts: the one place they are computed.

An index keeps every posting's raw count (one byte each, mostly) and every
row's l2 norm, not its float weight: the weights were 84 MB of a 208 MB
index cache at 100k memories, the counts are 10.5 MB.  A weight is made
when a query reads its term's postings, by the same operations in the same
order as the fit made it (`sublinear_tf`, times the term's idf, divided by
the row's norm), so it is the fit's weight bit for bit, whoever asks: the
fit, an index loaded from the cache, or the command line's persisted index.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

from .aliases import FloatArray, IntArray

#: The narrowest unsigned type per largest count (counts are never negative).
_NARROW: tuple[tuple[int, type[np.generic]], ...] = (
    (0xFF, np.uint8),
    (0xFFFF, np.uint16),
    (0x7FFFFFFF, np.int32),
)
#: 1 + ln tf for tf = 0..len-1, grown as larger counts appear (entry 0 is unused).
_table: FloatArray = np.zeros(0, dtype=np.float64)


def _sublinear_table(top: int) -> FloatArray:
    """1 + ln k for every k up to at least `top`, computed once per size."""
    global _table
    if len(_table) <= top:
        size = max(top + 1, 256, 2 * len(_table))
        table = np.ones(size, dtype=np.float64)
        # Entries already made are kept, never recomputed: a count's weight
        # is one number for the life of the process.
        start = max(1, len(_table))
        table[:start] = _table[:start] if len(_table) else 1.0
        np.log(np.arange(start, size, dtype=np.float64), out=table[start:])
        table[start:] += 1.0
        _table = table
    return _table


def sublinear_tf(tf: IntArray) -> FloatArray:
    """1 + ln tf, elementwise, as a new array (every tf >= 1).

    Looked up in one table rather than computed per call: a gather is a
    fraction of a log's cost, and a count's weight is then the same number
    whichever array, slice or process it comes from.
    """
    if not len(tf):
        return np.zeros(0, dtype=np.float64)
    weights: FloatArray = _sublinear_table(int(tf.max())).take(tf)
    return weights


def idf_of(df: IntArray, n: int) -> FloatArray:
    """Smoothed idf of document frequencies among `n` documents (scikit-learn's)."""
    idf: FloatArray = np.log((n + 1) / (df + 1.0)) + 1.0
    return idf


def weigh_pairs(
    term: IntArray, rows: IntArray, weights: FloatArray, idf: FloatArray, n: int
) -> FloatArray:
    """Multiply sublinear tf pairs by their term's idf (in place); the l2 norm of every row.

    The pairs must come sorted by term (as a fit makes them): each row's sum
    of squares is then added up in term order, the same order whoever calls.
    """
    weights *= idf[term]
    norms: FloatArray = np.sqrt(np.bincount(rows, weights=weights * weights, minlength=n))
    return norms


def term_weights(counts: IntArray, idf: float, rows: IntArray, norms: FloatArray) -> FloatArray:
    """One term's weights at these rows: as `weigh_pairs` and the fit's division make them."""
    weights = sublinear_tf(counts)
    weights *= idf
    weights /= norms.take(rows)
    return weights


def one_weight(count: int, idf: float, norm: float) -> float:
    """`term_weights` of one posting, in plain floats: the same two IEEE roundings."""
    return float(_sublinear_table(count)[count]) * idf / norm


class WeightCache:
    """The weights of the terms queries read last, at most `limit` floats in all.

    Typing a query reads the same terms' postings keystroke after keystroke
    (each prefix's completions overlap the last one's); making their weights
    each time cost ~1 ms a keystroke at 100k memories.  The arrays are
    read-only.  A cache pickles empty: it is never part of a saved index.
    One lock: the app's panes may query one index from several threads.
    """

    __slots__ = ("_held", "_lock", "_size", "limit")

    def __init__(self, limit: int = 1 << 19) -> None:
        self._held: dict[int, FloatArray] = {}
        self._size = 0
        self._lock = threading.Lock()
        self.limit = limit

    def __reduce__(self) -> tuple[type[WeightCache], tuple[int]]:
        return (WeightCache, (self.limit,))

    def get(self, key: int, make: Callable[[], FloatArray]) -> FloatArray:
        """The cached weights of `key`, else `make()`'s (kept, oldest dropped to fit)."""
        with self._lock:
            found = self._held.pop(key, None)
            if found is not None:
                self._held[key] = found  # the most recently used last
                return found
        found = make()
        found.flags.writeable = False
        if len(found) > self.limit:
            return found
        with self._lock:
            if key in self._held:  # another thread made it meanwhile
                return self._held[key]
            self._size += len(found)
            while self._size > self.limit:
                oldest = next(iter(self._held))
                self._size -= len(self._held.pop(oldest))
            self._held[key] = found
        return found


def narrow_counts(counts: IntArray) -> IntArray:
    """Raw counts in the narrowest unsigned type that holds them (uint8 at 100k memories)."""
    top = int(counts.max()) if len(counts) else 0
    dtype = next(t for limit, t in _NARROW if top <= limit)
    narrowed: IntArray = counts.astype(dtype, copy=False)
    return narrowed


__all__ = [
    "WeightCache",
    "idf_of",
    "narrow_counts",
    "one_weight",
    "sublinear_tf",
    "term_weights",
    "weigh_pairs",
]
