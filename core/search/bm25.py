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

Every weight is a multiple of 0.5, so tf~ and dl~ are kept doubled, as
integers (`tf2`, `dl2`): sums are exact in any order.  ``N``, ``df`` and
``avgdl`` are counted over the live rows at query time (`LexView`), never
frozen: an index updated row by row, one loaded from its file
(`stored_lexical`) and a fresh build over the same memories score alike,
to the bit.  Postings come from a `PostingSource` (a build's arrays, or the
persisted index read one term at a time); rows added later live in a small
delta; a removed row is masked by the search index's ``alive`` column.
"""

from __future__ import annotations

import bisect
import math
from array import array
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import numpy.typing as npt

from ..formats import adapter_for
from ..model import Memory
from .aliases import BoolArray, FloatArray, IntArray
from .analysis import words
from .bm25_build import collect_split, finish
from .stemming import term_of

K1 = 1.2
B = 0.75
#: Field name -> weight, in the order `field_texts` gives the fields.
FIELD_WEIGHTS: dict[str, float] = {"title": 3.0, "tags": 2.0, "fields": 1.5, "body": 1.0}
#: The weights doubled: every one is a multiple of 0.5.
_WEIGHTS2 = tuple(int(w * 2) for w in FIELD_WEIGHTS.values())
#: uint16 holds a doubled tf; more than this many is counted as this many.
TF2_MAX = 65535

U16Array = npt.NDArray[np.uint16]


def field_texts(m: Memory, body: str | None = None) -> tuple[str, ...]:
    """A memory's text per field, in `FIELD_WEIGHTS` order (`body`: its body, read already)."""
    extra = adapter_for(m.format).search_texts(m)
    return (m.title, " ".join(m.tags), "\n".join(extra), m.body if body is None else body)


@dataclass(slots=True)
class DocTerms:
    """One memory's doubled weighted term frequencies, doubled length and words."""

    tf2: dict[str, int]
    length2: int
    surface: dict[str, str]


def doc_terms(m: Memory) -> DocTerms:
    """Doubled weighted tf per term, the doubled weighted length, and word -> term."""
    tf2: dict[str, int] = {}
    surface: dict[str, str] = {}
    length2 = 0
    for text, weight2 in zip(field_texts(m), _WEIGHTS2, strict=True):
        if not text:
            continue
        for w, c in Counter(words(text.lower())).items():
            t = term_of(w)
            if t is None:
                continue
            tf2[t] = tf2.get(t, 0) + weight2 * c
            length2 += weight2 * c
            surface[w] = t
    for t, v in tf2.items():
        if v > TF2_MAX:
            tf2[t] = TF2_MAX
    return DocTerms(tf2, length2, surface)


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


class PostingSource(Protocol):
    """Where a lexical index's base postings come from (a build, or the persisted file)."""

    def lookup(self, term: str) -> tuple[IntArray, U16Array] | None:
        """A term's rows (ascending) and doubled tf there; None if no row holds it."""
        ...

    def words(self) -> dict[str, str]:
        """Every word seen -> its term (for typos and completions)."""
        ...


@dataclass(slots=True)
class ArraySource:
    """A build's postings: one CSR over the terms."""

    terms: list[str]
    indptr: IntArray
    rows: IntArray
    tf2: U16Array
    surface: dict[str, str]
    _ids: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._ids = {t: i for i, t in enumerate(self.terms)}

    def lookup(self, term: str) -> tuple[IntArray, U16Array] | None:
        i = self._ids.get(term)
        if i is None:
            return None
        lo, hi = int(self.indptr[i]), int(self.indptr[i + 1])
        return self.rows[lo:hi], self.tf2[lo:hi]

    def words(self) -> dict[str, str]:
        return self.surface

    def items(self) -> Iterator[tuple[str, IntArray, U16Array]]:
        """Every term with its rows and doubled tf (what a save writes)."""
        for i, t in enumerate(self.terms):
            lo, hi = int(self.indptr[i]), int(self.indptr[i + 1])
            yield t, self.rows[lo:hi], self.tf2[lo:hi]


def build_source(memories: Sequence[Memory], alive: Sequence[bool]) -> tuple[ArraySource, IntArray]:
    """The postings and doubled lengths of rows ``0..len(memories)-1`` (dead rows: none).

    Exactly what summing `doc_terms` row by row gives, built in bulk (`bm25_build`).
    """
    live = [row for row in range(len(memories)) if alive[row]]  # a dead row is never read
    collected = collect_split(_WEIGHTS2, live, lambda row: field_texts(memories[row]))
    b = finish(collected, len(memories), TF2_MAX)
    return ArraySource(b.terms, b.indptr, b.rows, b.tf2.astype(np.uint16), b.surface), b.dl2


class LexicalIndex:
    """Term -> rows with doubled weighted tf, per-row doubled lengths, the words seen.

    Term ids are given as terms are first looked up (a persisted source is
    read one term at a time); `view` gives the statistics of the live rows.
    """

    def __init__(self, source: PostingSource, dl2: IntArray) -> None:
        self._source = source
        self.vocab: dict[str, int] = {}
        self.terms: list[str] = []
        self._base: list[tuple[IntArray, U16Array]] = []
        self._absent: set[str] = set()
        #: Rows added since the source: term id -> {row: doubled tf}.
        self.delta: dict[int, dict[int, int]] = {}
        self._dl2: array[int] = array("q", np.asarray(dl2, dtype=np.int64).tobytes())
        self._dl2_np: IntArray | None = None
        self._added_words: dict[str, str] = {}
        self._surface: dict[str, str] | None = None
        self._sorted_words: list[str] | None = None
        self._by_len: dict[int, list[str]] | None = None

    @classmethod
    def build(cls, memories: Sequence[Memory], alive: Sequence[bool]) -> LexicalIndex:
        """Index rows ``0..len(memories)-1``; rows not `alive` get no postings."""
        source, dl2 = build_source(memories, alive)
        return cls(source, dl2)

    @property
    def source(self) -> PostingSource:
        return self._source

    def __getstate__(self) -> dict[str, object]:
        """What a pickle keeps (the app's index cache): not the caches rebuilt on use."""
        state = dict(self.__dict__)
        state.update(_dl2_np=None, _sorted_words=None, _by_len=None, _absent=set())
        return state

    def dl2_array(self) -> IntArray:
        """Every row's doubled length (dead rows too)."""
        if self._dl2_np is None:
            dl2 = np.frombuffer(self._dl2, dtype=np.int64) if self._dl2 else None
            self._dl2_np = np.zeros(0, np.int64) if dl2 is None else dl2
        return self._dl2_np

    def term_id(self, term: str) -> int | None:
        """The id of a term some row holds (live or dead), or None."""
        tid = self.vocab.get(term)
        if tid is not None or term in self._absent:
            return tid
        found = self._source.lookup(term)
        if found is None:
            self._absent.add(term)
            return None
        return self._new_id(term, found)

    def _new_id(self, term: str, base: tuple[IntArray, U16Array]) -> int:
        self._absent.discard(term)
        tid = self.vocab[term] = len(self.terms)
        self.terms.append(term)
        self._base.append(base)
        return tid

    def add(self, row: int, m: Memory) -> None:
        """A row added after the source (rows come in order; a gap is a dead row)."""
        doc = doc_terms(m)
        self._dl2_np = None
        while len(self._dl2) <= row:
            self._dl2.append(0)
        self._dl2[row] = doc.length2
        empty = (np.zeros(0, np.int32), np.zeros(0, np.uint16))
        for t, tf2 in doc.tf2.items():
            tid = self.term_id(t)
            if tid is None:
                tid = self._new_id(t, empty)
            self.delta.setdefault(tid, {})[row] = tf2
        if self._surface is None:
            self._added_words.update(doc.surface)
            return
        fresh = {w: t for w, t in doc.surface.items() if w not in self._surface}
        self._surface.update(fresh)
        if self._sorted_words is not None and self._by_len is not None:
            for w in fresh:
                bisect.insort(self._sorted_words, w)
                self._by_len.setdefault(len(w), []).append(w)

    def postings(self, tid: int) -> tuple[IntArray, IntArray]:
        """Rows holding a term and their doubled tf (base and delta, dead rows too)."""
        base_rows, base_tf = self._base[tid]
        rows: IntArray = base_rows.astype(np.int64)
        tf2: IntArray = base_tf.astype(np.int64)
        extra = self.delta.get(tid)
        if extra:
            rows = np.concatenate([rows, np.fromiter(extra.keys(), np.int64, len(extra))])
            tf2 = np.concatenate([tf2, np.fromiter(extra.values(), np.int64, len(extra))])
        return rows, tf2

    def doc_tf(self, row: int, tid: int) -> float:
        """A row's weighted tf of one term (0 when absent)."""
        extra = self.delta.get(tid)
        if extra is not None and row in extra:
            return extra[row] / 2.0
        rows, tf2 = self._base[tid]
        i = int(np.searchsorted(rows, row))
        if i < len(rows) and int(rows[i]) == row:
            return float(tf2[i]) / 2.0
        return 0.0

    def dl(self, row: int) -> float:
        return self._dl2[row] / 2.0 if row < len(self._dl2) else 0.0

    # ------------------------------------------------------------ words

    @property
    def surface(self) -> dict[str, str]:
        """Every word seen -> its term (loaded on first use: only typos and prefixes need it)."""
        if self._surface is None:
            self._surface = {**self._source.words(), **self._added_words}
            self._added_words = {}
        return self._surface

    def _word_lists(self) -> tuple[list[str], dict[int, list[str]]]:
        if self._sorted_words is None or self._by_len is None:
            self._sorted_words = sorted(self.surface)
            by_len: dict[int, list[str]] = {}
            for w in self._sorted_words:
                by_len.setdefault(len(w), []).append(w)
            self._by_len = by_len
        return self._sorted_words, self._by_len

    @property
    def words_by_len(self) -> dict[int, list[str]]:
        return self._word_lists()[1]

    def completions(self, prefix: str, limit: int) -> list[str]:
        """Up to `limit` words seen that start with `prefix`, shortest first."""
        sorted_words = self._word_lists()[0]
        i = bisect.bisect_left(sorted_words, prefix)
        found: list[str] = []
        while i < len(sorted_words) and sorted_words[i].startswith(prefix):
            found.append(sorted_words[i])
            i += 1
            if len(found) > 50 * limit:
                break
        found.sort(key=lambda w: (len(w), w))
        return found[:limit]

    def view(self, alive: BoolArray) -> LexView:
        """The index as of these live rows: N, avgdl and every df over them."""
        return LexView(self, alive)


class LexView:
    """One query's look at a lexical index: statistics over the rows alive now."""

    def __init__(self, lex: LexicalIndex, alive: BoolArray) -> None:
        self.lex = lex
        self.alive = alive
        dl2 = lex.dl2_array()
        n = min(len(alive), len(dl2))
        live = alive[:n]
        self.n_docs = int(np.count_nonzero(live))
        total2 = int(dl2[:n][live].sum()) if self.n_docs else 0
        self.avgdl = (total2 / 2.0 / self.n_docs) if self.n_docs else 1.0
        self.avgdl = self.avgdl or 1.0
        self._dl = dl2.astype(np.float64) / 2.0
        self._live: dict[int, tuple[IntArray, FloatArray]] = {}

    @property
    def terms(self) -> list[str]:
        return self.lex.terms

    def term_id(self, term: str) -> int | None:
        """The id of a term a live row holds, or None."""
        tid = self.lex.term_id(term)
        if tid is None or not len(self.postings(tid)[0]):
            return None
        return tid

    def postings(self, tid: int) -> tuple[IntArray, FloatArray]:
        """A term's live rows and weighted tf there."""
        found = self._live.get(tid)
        if found is None:
            rows, tf2 = self.lex.postings(tid)
            inside = rows < len(self.alive)
            keep = inside.copy()
            keep[inside] = self.alive[rows[inside]]
            found = self._live[tid] = (rows[keep], tf2[keep].astype(np.float64) / 2.0)
        return found

    def idf(self, tid: int) -> float:
        df = len(self.postings(tid)[0])
        return idf_of(df, max(self.n_docs, df))

    def term_scores(self, tid: int) -> tuple[IntArray, FloatArray]:
        """bm25(t, d) for every live row d holding term `tid`."""
        rows, tf = self.postings(tid)
        return rows, self.idf(tid) * saturation(tf, self._dl[rows], self.avgdl)

    def doc_tf(self, row: int, tid: int) -> float:
        return self.lex.doc_tf(row, tid)

    def dl(self, row: int) -> float:
        return self.lex.dl(row)


__all__ = [
    "FIELD_WEIGHTS",
    "K1",
    "TF2_MAX",
    "ArraySource",
    "B",
    "DocTerms",
    "LexView",
    "LexicalIndex",
    "PostingSource",
    "build_source",
    "doc_terms",
    "field_counts",
    "field_texts",
    "idf_of",
    "saturation",
]
