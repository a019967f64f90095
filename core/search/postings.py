"""Inverted indexes: term -> rows with TF-IDF weights, and title-word/tag -> rows.

The term -> documents matrix is kept transposed (CSR, one row per term), so
a query touches only the postings of its own terms.  Each posting keeps its
raw count, not its weight: the weight is made as a query reads it
(`core.search.weights`), a tenth of the bytes to keep and to cache.  Rows added after the
build live in a small delta (their own vectors and per-term postings); the
fitted vocabulary and idf stay frozen, and a term never seen gets a new id
with the idf of a term seen in one document.
"""

from __future__ import annotations

import bisect
import math
from array import array
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from .aliases import FloatArray, IntArray
from .analysis import analyze
from .weights import WeightCache, one_weight, sublinear_tf, term_weights

Vector = tuple[list[int], list[float]]


def group_rows(
    keys: list[str], ids: array[int], lengths: array[int]
) -> tuple[list[str], IntArray, IntArray]:
    """Rows per key from per-row key ids (`ids`, `lengths[r]` of them for row r).

    Returns (keys, rows of every key one after the other, each ascending,
    the bounds of each key's run): what `Postings.pack` takes.
    """
    key_ids = np.frombuffer(ids, dtype=np.int32)
    rows = np.repeat(
        np.arange(len(lengths), dtype=np.int32), np.frombuffer(lengths, dtype=np.int32)
    )
    flat = rows[np.argsort(key_ids, kind="stable")]
    bounds = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum(np.bincount(key_ids, minlength=len(keys)), out=bounds[1:])
    return keys, flat, bounds


class Postings:
    """Rows per word (title words, tags), packed in one array, plus rows added since.

    A build packs every key's rows into `flat` (key `k`'s rows are
    ``flat[bounds[pos[k]]:bounds[pos[k] + 1]]``, ascending): no per-key
    array objects until a key is looked up.  `append` collects rows added
    later in `extra`; they are folded into a key's own array (`arr`) the next
    time it is looked up.
    """

    __slots__ = ("arr", "bounds", "extra", "flat", "pos")

    def __init__(self) -> None:
        self.pos: dict[str, int] = {}
        self.flat: IntArray = np.zeros(0, dtype=np.int32)
        self.bounds: IntArray = np.zeros(1, dtype=np.int64)
        self.arr: dict[str, IntArray] = {}
        self.extra: dict[str, list[int]] = {}

    def pack(self, keys: list[str], flat: IntArray, bounds: IntArray) -> None:
        self.pos = dict(zip(keys, range(len(keys)), strict=True))
        self.flat, self.bounds = flat, bounds
        self.arr, self.extra = {}, {}

    def __contains__(self, key: str) -> bool:
        return key in self.pos or key in self.arr or key in self.extra

    def __iter__(self) -> Iterator[str]:
        yield from self.pos
        yield from (k for k in self.arr if k not in self.pos)
        yield from (k for k in self.extra if k not in self.pos and k not in self.arr)

    def append(self, key: str, row: int) -> bool:
        """Add a row; True if the key is new."""
        new = key not in self
        self.extra.setdefault(key, []).append(row)
        return new

    def rows(self, key: str) -> IntArray:
        more = self.extra.pop(key, None)
        arr = self.arr.get(key)
        if arr is None:
            i = self.pos.get(key)
            if i is not None:
                arr = self.flat[int(self.bounds[i]) : int(self.bounds[i + 1])]
        if more is not None:
            tail = np.asarray(more, dtype=np.int32)
            arr = tail if arr is None else np.concatenate([arr, tail])
            self.arr[key] = arr
        return arr if arr is not None else np.zeros(0, dtype=np.int32)

    def __getstate__(self) -> tuple[list[str], IntArray, IntArray]:
        keys = list(self)
        if self.arr or self.extra:  # repack what changed since the build
            parts = [self.rows(k) for k in keys]
            flat = np.concatenate(parts).astype(np.int32) if parts else self.flat[:0]
            bounds = np.zeros(len(parts) + 1, dtype=np.int64)
            np.cumsum([len(p) for p in parts], out=bounds[1:])
            return keys, flat, bounds
        return keys, self.flat, self.bounds

    def __setstate__(self, state: tuple[list[str], IntArray, IntArray]) -> None:
        self.pack(*state)


@dataclass(slots=True)
class TitleWords:
    """The words of titles and tags: rows per word, and the words by length and in order.

    Fuzzy matching looks at words of about the query word's length
    (`by_len`); completions of a word being typed are a range of `ordered`.
    """

    rows: Postings = field(default_factory=Postings)
    by_len: dict[int, list[str]] = field(default_factory=dict)
    ordered: list[str] = field(default_factory=list)

    def pack(self, keys: list[str], flat: IntArray, bounds: IntArray) -> None:
        """The words of a build (`group_rows`), with their length and order tables."""
        self.rows.pack(keys, flat, bounds)
        for w in self.rows.pos:
            self.by_len.setdefault(len(w), []).append(w)
        self.ordered = sorted(self.rows.pos)

    def add(self, word: str, row: int) -> None:
        """A word of a row added after the build."""
        if self.rows.append(word, row):
            self.by_len.setdefault(len(word), []).append(word)
            bisect.insort(self.ordered, word)


@dataclass(slots=True)
class TermPostings:
    """The fitted TF-IDF vocabulary and its transposed matrix, plus the delta since."""

    #: term -> term id; ids of the fit are in sorted term order (as scikit-learn's).
    vocab: dict[str, int] = field(default_factory=dict)
    #: term id -> term
    terms: list[str] = field(default_factory=list)
    idf: list[float] = field(default_factory=list)
    #: Every term, sorted (prefix completion).
    sorted_terms: list[str] = field(default_factory=list)
    n_fit_docs: int = 0
    xt_indptr: IntArray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    #: Rows per term (int32: 4 bytes a posting instead of 8).
    xt_indices: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    #: Each posting's raw count (`weights.narrow_counts`: one byte, mostly).
    xt_counts: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.uint8))
    #: Each base row's l2 norm: what the fit divided its weights by.
    row_norms: FloatArray = field(default_factory=lambda: np.zeros(0, dtype=np.float64))
    n_base_terms: int = 0
    n_base_rows: int = 0
    #: Delta: rows added since the build -> their (term ids, weights).
    delta_vec: dict[int, Vector] = field(default_factory=dict)
    #: Delta postings: term id -> {row: weight}.
    delta_post: dict[int, dict[int, float]] = field(default_factory=dict)
    #: Whole base terms' weights made lately (never saved: it pickles empty).
    made: WeightCache = field(default_factory=WeightCache, repr=False, compare=False)

    def weigh(self, counts: Counter[str], *, extend: bool) -> Vector:
        """Sublinear tf-idf of term counts, l2-normalised, as scikit-learn computes it.

        With `extend`, unseen terms get a new id whose idf is that of a term
        found in one document of the fitted corpus (frozen); without it
        they are left out.
        """
        ids: list[int] = []
        weights: list[float] = []
        for term, tf in counts.items():
            tid = self.vocab.get(term)
            if tid is None:
                if not extend:
                    continue
                tid = len(self.idf)
                self.vocab[term] = tid
                self.terms.append(term)
                self.idf.append(math.log((1 + self.n_fit_docs) / 2) + 1.0)
                bisect.insort(self.sorted_terms, term)
            ids.append(tid)
            weights.append((1.0 + math.log(tf)) * self.idf[tid])
        norm = math.sqrt(math.fsum(w * w for w in weights))
        if norm > 0:
            weights = [w / norm for w in weights]
        return ids, weights

    def vector(self, text: str, *, extend: bool) -> Vector:
        """The weighted terms of a text (see `weigh`)."""
        return self.weigh(Counter(analyze(text)), extend=extend)

    def add_row(self, row: int, vec: Vector) -> None:
        """A row added since the build, with its vector."""
        self.delta_vec[row] = vec
        for tid, w in zip(*vec, strict=True):
            self.delta_post.setdefault(tid, {})[row] = w

    def drop_row(self, row: int) -> None:
        """Forget a delta row's postings (a base row is masked dead instead)."""
        vec = self.delta_vec.pop(row, None)
        if vec is None:
            return
        for tid in vec[0]:
            post = self.delta_post.get(tid)
            if post is not None:
                post.pop(row, None)
                if not post:
                    del self.delta_post[tid]

    def doc_weight(self, row: int, term_id: int) -> float:
        """d_t: a document's tf-idf weight for one term."""
        if row in self.delta_vec:
            return self.delta_post.get(term_id, {}).get(row, 0.0)
        if term_id >= self.n_base_terms or row >= self.n_base_rows:
            return 0.0
        lo, hi = int(self.xt_indptr[term_id]), int(self.xt_indptr[term_id + 1])
        i = int(np.searchsorted(self.xt_indices[lo:hi], row)) + lo
        if i < hi and int(self.xt_indices[i]) == row:
            return one_weight(int(self.xt_counts[i]), self.idf[term_id], float(self.row_norms[row]))
        return 0.0

    def _slice_weights(self, term_id: int, lo: int, hi: int) -> FloatArray:
        """The fit's weights of a base term's postings lo:hi, made from their counts."""
        return term_weights(
            self.xt_counts[lo:hi], self.idf[term_id], self.xt_indices[lo:hi], self.row_norms
        )

    def _term_weights(self, term_id: int, lo: int, hi: int) -> FloatArray:
        """A base term's weights (its postings lo:hi), from the cache when made lately."""
        return self.made.get(term_id, lambda: self._slice_weights(term_id, lo, hi))

    def base_weights(self) -> FloatArray:
        """Every base posting's weight, aligned with ``xt_indices`` (a whole matrix's worth)."""
        n = self.n_base_terms
        term = np.repeat(np.arange(n, dtype=np.int32), np.diff(self.xt_indptr[: n + 1]))
        # As `term_weights` per term: times the term's idf, then over the row's norm.
        weights = sublinear_tf(self.xt_counts)
        weights *= np.asarray(self.idf[:n], dtype=np.float64)[term]
        weights /= self.row_norms[self.xt_indices]
        return weights

    def postings(self, term_id: int) -> tuple[IntArray, FloatArray]:
        """Rows containing a term (base and delta) and their weights."""
        if term_id < self.n_base_terms:
            lo, hi = int(self.xt_indptr[term_id]), int(self.xt_indptr[term_id + 1])
            rows, data = self.xt_indices[lo:hi], self._term_weights(term_id, lo, hi)
        else:
            rows = np.zeros(0, dtype=np.int64)
            data = np.zeros(0, dtype=np.float64)
        extra = self.delta_post.get(term_id)
        if extra:
            rows = np.concatenate([rows, np.fromiter(extra.keys(), np.int64, len(extra))])
            data = np.concatenate([data, np.fromiter(extra.values(), np.float64, len(extra))])
        return rows, data

    def weighted_sum(self, ids: list[int], weights: list[float], n: int) -> FloatArray:
        """Σ_t w_t · d_t for every row: the cosine with a unit vector of these terms."""
        parts_r: list[IntArray] = []
        parts_w: list[FloatArray] = []
        for tid, w in zip(ids, weights, strict=True):
            rows, data = self.postings(tid)
            parts_r.append(rows)
            parts_w.append(data * w)
        return np.bincount(
            np.concatenate(parts_r), weights=np.concatenate(parts_w), minlength=n
        ).astype(np.float64)

    def term_rows(self, term: str) -> IntArray:
        tid = self.vocab.get(term)
        if tid is None:
            return np.zeros(0, dtype=np.int64)
        return self.postings(tid)[0]

    def prefix_terms(self, prefix: str, limit: int) -> list[str]:
        """Up to `limit` vocabulary terms starting with `prefix`, shortest first."""
        i = bisect.bisect_left(self.sorted_terms, prefix)
        found: list[str] = []
        while i < len(self.sorted_terms) and self.sorted_terms[i].startswith(prefix):
            found.append(self.sorted_terms[i])
            i += 1
            if len(found) > 50 * limit:
                break
        found.sort(key=lambda t: (len(t), t))
        return found[:limit]

    def prefix_rows(self, prefix: str) -> IntArray:
        """Rows with a token starting with `prefix` (base and delta)."""
        parts: list[IntArray] = []
        base = self.terms[: self.n_base_terms]
        # scikit-learn numbers its vocabulary in sorted order, so a prefix's
        # base terms are one contiguous id range: one slice of postings.
        lo = bisect.bisect_left(base, prefix)
        hi = bisect.bisect_left(base, prefix + "\U0010ffff")
        if hi > lo:
            a, b = int(self.xt_indptr[lo]), int(self.xt_indptr[hi])
            parts.append(self.xt_indices[a:b])
        for tid, post in self.delta_post.items():
            if lo <= tid < hi or (tid >= self.n_base_terms and self.terms[tid].startswith(prefix)):
                parts.append(np.fromiter(post.keys(), np.int64, len(post)))
        if not parts:
            return np.zeros(0, dtype=np.int64)
        return np.concatenate(parts)

    def page_weights(self, rows: list[int], term_ids: list[int]) -> dict[int, list[float]]:
        """d_t for a page of rows and the query terms (one searchsorted per term)."""
        out = {r: [0.0] * len(term_ids) for r in rows}
        base = [r for r in rows if r < self.n_base_rows]
        if base:
            arr = np.asarray(base, dtype=np.int64)
            for j, tid in enumerate(term_ids):
                if tid >= self.n_base_terms:
                    continue
                lo, hi = int(self.xt_indptr[tid]), int(self.xt_indptr[tid + 1])
                if hi == lo:
                    continue
                seg = self.xt_indices[lo:hi]
                pos = np.minimum(np.searchsorted(seg, arr), hi - lo - 1)
                found = np.flatnonzero(seg[pos] == arr)
                if not len(found):
                    continue
                weights = self._term_weights(tid, lo, hi).take(pos[found])
                for k, w in zip(found.tolist(), weights.tolist(), strict=True):
                    out[base[k]][j] = w
        for r in rows:
            if r in self.delta_vec:
                out[r] = [self.delta_post.get(tid, {}).get(r, 0.0) for tid in term_ids]
        return out
