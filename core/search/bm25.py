"""The relevance index: BM25F over every text field of every format.

A memory is four fields: title, tags, the format's own text fields
(`FormatAdapter.search_texts`: observation/v1 `event` and `context`,
comprehension beliefs, procedure steps, ...) and body.  Terms are stems
without stopwords (`stemming`).  Fields are weighted into one term
frequency and one length, the simple BM25F of Robertson and Zaragoza
("The Probabilistic Relevance Framework", 2009, §3.4) with one ``b``::

    tf~(t, d)  = Σ_f w_f · tf_f(t, d)          dl~(d) = Σ_f w_f · len_f(d)
    idf(t)     = ln(1 + (N − df + 0.5) / (df + 0.5))
    sat(t, d)  = tf~ · (k1 + 1) / (tf~ + k1 · (1 − b + b · dl~ / avgdl))
    bm25(t, d) = idf(t) · sat(t, d)

with ``k1 = 1.2``, ``b = 0.75`` (the usual values) and field weights title 3,
tags 2, format fields 1.5, body 1: a word in a title says more about what a
memory is than the same word in its body.  Decay, confidence and importance
are not part of it: they are the recall ranking's business.

Storage: per term, its rows (int32) and twice its weighted tf (uint16: every
weight is a multiple of 0.5), in one CSR array for a build; rows added later
live in a small delta.  As in the TF-IDF index, ``N``, ``df`` and ``avgdl``
are frozen at the build (a term first seen later gets ``df`` from its
additions), so an update never refits; removed rows are masked dead by the
search index's own ``alive`` column.
"""

from __future__ import annotations

import bisect
import math
from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..formats import adapter_for
from ..model import Memory
from .aliases import FloatArray, IntArray
from .analysis import words
from .stemming import term_of

K1 = 1.2
B = 0.75
#: Field name -> weight, in the order `field_texts` gives the fields.
FIELD_WEIGHTS: dict[str, float] = {"title": 3.0, "tags": 2.0, "fields": 1.5, "body": 1.0}
#: uint16 holds twice a weighted tf; more than this many is counted as this many.
_TF2_MAX = 65535


def field_texts(m: Memory) -> tuple[str, ...]:
    """A memory's text per field, in `FIELD_WEIGHTS` order."""
    extra = adapter_for(m.format).search_texts(m)
    return (m.title, " ".join(m.tags), "\n".join(extra), m.body)


@dataclass(slots=True)
class DocTerms:
    """One memory's weighted term frequencies, length and distinct searchable words."""

    tf: dict[str, float]
    length: float
    surface: dict[str, str]


def doc_terms(m: Memory) -> DocTerms:
    """Weighted tf per term, the weighted length, and word -> term of its words."""
    tf: dict[str, float] = {}
    surface: dict[str, str] = {}
    length = 0.0
    for text, weight in zip(field_texts(m), FIELD_WEIGHTS.values(), strict=True):
        if not text:
            continue
        for w, c in Counter(words(text.lower())).items():
            t = term_of(w)
            if t is None:
                continue
            tf[t] = tf.get(t, 0.0) + weight * c
            length += weight * c
            surface[w] = t
    return DocTerms(tf, length, surface)


def field_counts(m: Memory) -> list[tuple[str, Counter[str]]]:
    """Each field's term counts of a memory (for explain: one pass over its text)."""
    out: list[tuple[str, Counter[str]]] = []
    for name, text in zip(FIELD_WEIGHTS, field_texts(m), strict=True):
        counts: Counter[str] = Counter()
        for w, c in Counter(words(text.lower())).items():
            t = term_of(w)
            if t is not None:
                counts[t] += c
        out.append((name, counts))
    return out


def idf_of(df: int, n: int) -> float:
    """BM25's idf, never negative (the "+1" inside the log)."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def saturation(tf: FloatArray, dl: FloatArray, avgdl: float) -> FloatArray:
    """sat(t, d) elementwise; one expression, so explain recomputes the same numbers."""
    out: FloatArray = tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * dl / avgdl))
    return out


@dataclass(slots=True)
class LexicalIndex:
    """Term -> rows with weighted tf, per-row lengths, and the words seen (fuzzy, prefix)."""

    vocab: dict[str, int] = field(default_factory=dict)
    terms: list[str] = field(default_factory=list)
    df: list[int] = field(default_factory=list)
    indptr: IntArray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    rows: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    tf2: npt.NDArray[np.uint16] = field(default_factory=lambda: np.zeros(0, dtype=np.uint16))
    n_base_terms: int = 0
    #: Documents of the build (N of idf) and their mean length.
    n_docs: int = 0
    avgdl: float = 1.0
    #: Weighted length per row (every row of the search index, dead ones too).
    dl: list[float] = field(default_factory=list)
    #: Rows added since the build: term id -> {row: weighted tf}.
    delta: dict[int, dict[int, float]] = field(default_factory=dict)
    #: Every searchable word seen -> its term; and the words sorted (completions).
    surface: dict[str, str] = field(default_factory=dict)
    sorted_words: list[str] = field(default_factory=list)
    words_by_len: dict[int, list[str]] = field(default_factory=dict)
    #: `dl` as an array, made on first use after a change.
    _dl_array: FloatArray | None = None

    @classmethod
    def build(cls, memories: Sequence[Memory], alive: Sequence[bool]) -> LexicalIndex:
        """Index rows ``0..len(memories)-1``; rows not `alive` get no postings."""
        lex = cls()
        term_id: dict[str, int] = {}
        pair_terms: array[int] = array("i")
        pair_tf: array[float] = array("d")
        lens: array[int] = array("i")
        live = 0

        def new_id(t: str) -> int:
            term_id[t] = len(lex.terms)
            lex.terms.append(t)
            return term_id[t]

        def id_of(t: str) -> int:
            found = term_id.get(t)
            return new_id(t) if found is None else found

        for row in range(len(memories)):
            if not alive[row]:
                lex.dl.append(0.0)
                lens.append(0)
                continue
            doc = doc_terms(memories[row])  # by row: a dead row is never read
            live += 1
            lex.dl.append(doc.length)
            lex.surface.update(doc.surface)
            pair_terms.extend(map(id_of, doc.tf))
            pair_tf.extend(doc.tf.values())
            lens.append(len(doc.tf))
        lex.vocab = term_id
        t_arr = np.frombuffer(pair_terms, dtype=np.int32) if pair_terms else np.zeros(0, np.int32)
        lex.df = np.bincount(t_arr, minlength=len(lex.terms)).tolist()
        lex.n_docs = live
        lex.avgdl = (math.fsum(lex.dl) / live) if live else 1.0
        lex.avgdl = lex.avgdl or 1.0
        rows = np.repeat(np.arange(len(memories), dtype=np.int32), np.asarray(lens, np.int64))
        tfs = np.frombuffer(pair_tf, dtype=np.float64) if pair_tf else np.zeros(0)
        lex._pack(t_arr, rows, tfs)
        lex._index_words(list(lex.surface))
        return lex

    def _pack(self, terms: IntArray, rows: IntArray, tf: FloatArray) -> None:
        order = np.argsort(terms, kind="stable")  # rows stay ascending within a term
        self.rows = rows[order].astype(np.int32)
        tf2 = np.minimum(np.rint(tf * 2.0), _TF2_MAX)
        self.tf2 = tf2.astype(np.uint16)[order]
        self.indptr = np.zeros(len(self.terms) + 1, dtype=np.int64)
        np.cumsum(np.bincount(terms, minlength=len(self.terms)), out=self.indptr[1:])
        self.n_base_terms = len(self.terms)

    def _index_words(self, new: list[str]) -> None:
        for w in new:
            self.words_by_len.setdefault(len(w), []).append(w)
        if len(new) > 64:
            self.sorted_words = sorted(self.surface)
        else:
            for w in new:
                bisect.insort(self.sorted_words, w)

    # ------------------------------------------------------------ updates

    def add(self, row: int, m: Memory) -> None:
        """A row added after the build (rows come in order; a gap is a dead row)."""
        self._dl_array = None
        while len(self.dl) < row:
            self.dl.append(0.0)
        doc = doc_terms(m)
        if len(self.dl) == row:
            self.dl.append(doc.length)
        else:
            self.dl[row] = doc.length
        new_words = [w for w in doc.surface if w not in self.surface]
        self.surface.update(doc.surface)
        self._index_words(new_words)
        for t, tf in doc.tf.items():
            tid = self.vocab.get(t)
            if tid is None:
                tid = self.vocab[t] = len(self.terms)
                self.terms.append(t)
                self.df.append(0)
            if tid >= self.n_base_terms:
                self.df[tid] += 1  # a new term's df counts its additions
            self.delta.setdefault(tid, {})[row] = tf

    # ------------------------------------------------------------ queries

    def idf(self, tid: int) -> float:
        return idf_of(self.df[tid], max(self.n_docs, self.df[tid]))

    def postings(self, tid: int) -> tuple[IntArray, FloatArray]:
        """Rows holding a term and its weighted tf there (build and delta)."""
        if tid < self.n_base_terms:
            lo, hi = int(self.indptr[tid]), int(self.indptr[tid + 1])
            rows: IntArray = self.rows[lo:hi].astype(np.int64)
            tf: FloatArray = self.tf2[lo:hi].astype(np.float64) / 2.0
        else:
            rows = np.zeros(0, dtype=np.int64)
            tf = np.zeros(0, dtype=np.float64)
        extra = self.delta.get(tid)
        if extra:
            rows = np.concatenate([rows, np.fromiter(extra.keys(), np.int64, len(extra))])
            tf = np.concatenate([tf, np.fromiter(extra.values(), np.float64, len(extra))])
        return rows, tf

    def term_scores(self, tid: int) -> tuple[IntArray, FloatArray]:
        """bm25(t, d) for every row d holding term `tid`."""
        rows, tf = self.postings(tid)
        if self._dl_array is None:
            self._dl_array = np.asarray(self.dl, dtype=np.float64)
        dl = self._dl_array[rows]
        return rows, self.idf(tid) * saturation(tf, dl, self.avgdl)

    def doc_tf(self, row: int, tid: int) -> float:
        """A row's weighted tf of one term (0 when absent)."""
        extra = self.delta.get(tid)
        if extra is not None and row in extra:
            return extra[row]
        if tid >= self.n_base_terms:
            return 0.0
        lo, hi = int(self.indptr[tid]), int(self.indptr[tid + 1])
        i = int(np.searchsorted(self.rows[lo:hi], row)) + lo
        if i < hi and int(self.rows[i]) == row:
            return float(self.tf2[i]) / 2.0
        return 0.0

    def completions(self, prefix: str, limit: int) -> list[str]:
        """Up to `limit` words seen that start with `prefix`, shortest first."""
        i = bisect.bisect_left(self.sorted_words, prefix)
        found: list[str] = []
        while i < len(self.sorted_words) and self.sorted_words[i].startswith(prefix):
            found.append(self.sorted_words[i])
            i += 1
            if len(found) > 50 * limit:
                break
        found.sort(key=lambda w: (len(w), w))
        return found[:limit]


__all__ = [
    "FIELD_WEIGHTS",
    "K1",
    "B",
    "DocTerms",
    "LexicalIndex",
    "doc_terms",
    "field_counts",
    "field_texts",
    "idf_of",
    "saturation",
]
