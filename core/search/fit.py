"""Fitting TF-IDF over a build's documents, optionally half in a parse worker.

The numbers are scikit-learn's ``TfidfVectorizer(analyzer=analyze,
sublinear_tf=True, norm="l2", smooth_idf=True)``: vocabulary in sorted
order, idf = ln((1 + n) / (1 + df)) + 1, weights (1 + ln tf) * idf, rows
scaled to unit length; built with numpy straight into the transposed
(term -> rows) layout the queries use.  Each text is tokenized once: a
document is ``title title tags tags body`` (`index_text`), so its counts are
twice the title's and tags' plus the body's, and the title/tag words come
from the same tokens.

How the search index uses the fit:

Speed
-----
The term -> documents matrix is kept transposed (CSR, one row per term), so a
query touches only the postings of its own terms.  Filters run as numpy masks
on per-document columns computed once at build time (decay at `as_of`
included).  Fuzzy matching runs rapidfuzz over the *words* of titles and tags
(grouped by length), never over whole titles, and only for words the TF-IDF
vocabulary does not know, or short queries with few TF-IDF hits.
scikit-learn and scipy are imported on first build, not on import.

Incremental updates
-------------------
`add`/`update`/`remove` never refit.  The fitted vocabulary and idf stay
frozen; a changed document is re-analysed into a small delta inverted index;
a removed or replaced row is masked dead.  A term the fitted vocabulary has
never seen gets a new column with the idf of a term seen in one document
(frozen too), so new words are searchable at once.  The trade-off: idf values
drift from what a refit would give as the corpus changes, so scores (not
matches) differ slightly from a rebuild until the next `build`;
`needs_rebuild` turns true once a tenth of the rows are dead or in the delta.
Measured by ``python -m bench search``: one update takes well under a
millisecond at 100k memories.
"""

from __future__ import annotations

import itertools
import os
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import workers
from ..model import Memory
from .aliases import IntArray
from .analysis import SINGLE, Text3, analyze, texts, words
from .postings import Postings, TermPostings, TitleWords, group_rows
from .weights import idf_of, narrow_counts, sublinear_tf, weigh_pairs

#: Fits of at least this many documents count half of them in a parse worker
#: (when a CPU is free): sending the texts there and the counts back costs
#: about a tenth of counting them.
PARALLEL_FIT_MIN = 20_000
#: The worker's share of such a fit.  Half: this process also fills the
#: columns, but the worker first starts and unpickles the texts (measured
#: at 100k, a 0.6 share left this process waiting 0.3 s, 0.5 about 0.05 s).
WORKER_SHARE = 0.5


class Counted:
    """Term, title-word and tag counts of documents, with ids in first-seen order.

    `count` adds documents (in order); `merge` adds what another process
    counted with its own ids (`count_terms`), renumbered so every id is
    what counting those documents here would have given.
    """

    def __init__(self) -> None:
        self.term_id: defaultdict[str, int] = defaultdict(itertools.count().__next__)
        self.word_id: defaultdict[str, int] = defaultdict(itertools.count().__next__)
        self.tag_id: defaultdict[str, int] = defaultdict(itertools.count().__next__)
        self.term_of = self.term_id.__getitem__
        self.terms = array("i")
        self.counts = array("i")
        self.doc_len = array("i")
        self.words = array("i")
        self.words_len = array("i")
        self.tags = array("i")
        self.tags_len = array("i")

    def count(self, docs: Iterable[Text3]) -> None:
        term_of, word_of = self.term_of, self.word_id.__getitem__
        tag_of = self.tag_id.__getitem__
        terms, counts, doc_len = self.terms, self.counts, self.doc_len
        words_, words_len, tags, tags_len = self.words, self.words_len, self.tags, self.tags_len
        for title, tag_list, body in docs:
            head = analyze(title)
            if tag_list:
                head += analyze(" ".join(tag_list))
                lowered = dict.fromkeys([t.lower() for t in tag_list])
                tags.extend(map(tag_of, lowered))
                tags_len.append(len(lowered))
            else:
                tags_len.append(0)
            # Counted in C over the strings; only each distinct term is
            # looked up in the vocabulary.  Title and tags count twice.
            tf_of = Counter(words(body.lower()))
            tf_of.update(head)
            tf_of.update(head)
            terms.extend(map(term_of, tf_of))
            counts.extend(tf_of.values())
            doc_len.append(len(tf_of))
            unique = dict.fromkeys(head)
            words_.extend(map(word_of, unique))
            words_len.append(len(unique))

    def export(self) -> tuple[Any, ...]:
        """What `merge` takes: the three vocabularies in id order and the arrays."""
        return (
            list(self.term_id),
            list(self.word_id),
            list(self.tag_id),
            self.terms,
            self.counts,
            self.doc_len,
            self.words,
            self.words_len,
            self.tags,
            self.tags_len,
        )

    def merge(self, got: tuple[Any, ...]) -> None:
        vt, vw, vg, terms, counts, doc_len, words_, words_len, tags, tags_len = got
        for mine, ids, vocab in (
            (self.terms, terms, (self.term_id, vt)),
            (self.words, words_, (self.word_id, vw)),
            (self.tags, tags, (self.tag_id, vg)),
        ):
            table, names = vocab
            # Local id -> id here, in the other side's first-seen order, so
            # new names get the ids counting them here would have given.
            remap = np.fromiter(map(table.__getitem__, names), dtype=np.int32, count=len(names))
            local = np.frombuffer(ids, dtype=np.int32)
            mine.frombytes(remap.take(local).astype(np.int32).tobytes())
        self.counts.extend(counts)
        self.doc_len.extend(doc_len)
        self.words_len.extend(words_len)
        self.tags_len.extend(tags_len)


def count_terms(docs: list[Text3]) -> tuple[Any, ...]:
    """`Counted.count` of `docs` from scratch, exported (what a parse worker runs)."""
    counted = Counted()
    counted.count(docs)
    return counted.export()


@dataclass(frozen=True, slots=True)
class Split:
    """Documents from `start` on are counted by a parse worker; `wait` gives its counts."""

    start: int
    wait: Callable[[], tuple[Any, ...] | None]


def split_fit(docs: Sequence[Memory]) -> Split | None:
    """Have a parse worker count the later part of a large fit; None: count here.

    Only with a CPU to spare (`workers.spare_cpu`, `MEMLENS_PARALLEL=0` turns
    it off).  The worker takes WORKER_SHARE of the documents: this process
    also fills the index columns meanwhile.
    """
    n = len(docs)
    if n < PARALLEL_FIT_MIN:
        return None
    if os.environ.get(workers.PARALLEL_ENV, "1") == "0" or not workers.spare_cpu():
        return None
    start = n - int(n * WORKER_SHARE)
    wait = workers.run_in_worker(("count_terms", texts(docs[start:])))
    return Split(start, wait) if wait is not None else None


@dataclass(slots=True)
class Fitted:
    """What a fit makes: the term postings, and rows per title word and per tag."""

    terms: TermPostings
    words: TitleWords
    tags: Postings


def fit(docs: Sequence[Memory], split: Split | None = None) -> Fitted:
    """TF-IDF of `docs` (rows 0..n-1) and their title-word and tag postings."""
    counted = Counted()
    # Single characters get the first ids and their pairs are dropped
    # below: cheaper than filtering every body's tokens in Python.
    singles = len(list(map(counted.term_of, SINGLE)))
    _count(counted, docs, split)
    terms = _tfidf(counted, len(docs), singles)
    title_words = TitleWords()
    title_words.pack(*group_rows(list(counted.word_id), counted.words, counted.words_len))
    tags = Postings()
    tags.pack(*group_rows(list(counted.tag_id), counted.tags, counted.tags_len))
    return Fitted(terms, title_words, tags)


def _count(counted: Counted, docs: Sequence[Memory], split: Split | None) -> None:
    """Count every document here, or those before `split.start` and merge the worker's."""
    start = split.start if split is not None else len(docs)
    try:
        counted.count(texts(docs[:start]))
    finally:
        got = split.wait() if split is not None else None
    if split is not None:
        if got is None:
            counted.count(texts(docs[start:]))  # the worker failed: count here
        else:
            counted.merge(got)


def _tfidf(counted: Counted, n: int, singles: int) -> TermPostings:
    """The transposed TF-IDF matrix of counted documents (sorted vocabulary)."""
    # Vocabulary ids in sorted term order (as scikit-learn numbers them).
    first_seen = list(counted.term_id)[singles:]
    v = len(first_seen)
    order = sorted(range(v), key=first_seen.__getitem__)
    rank = np.full(singles + v, -1, dtype=np.int32)
    rank[np.asarray(order, dtype=np.int64) + singles] = np.arange(v, dtype=np.int32)
    sorted_terms = [first_seen[i] for i in order]
    del first_seen, order
    term, rows, tf = _pairs_by_term(counted, rank, n)
    weights = sublinear_tf(tf)
    df = np.bincount(term, minlength=v)
    indptr = np.zeros(v + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    idf = idf_of(df, n)
    norms = weigh_pairs(term, rows, weights, idf, n)
    del term, weights  # each weight is made again from its count when read
    postings = TermPostings(
        vocab=dict(zip(sorted_terms, range(v), strict=True)),
        terms=sorted_terms,
        idf=idf.tolist(),
        sorted_terms=list(sorted_terms),
        n_fit_docs=n,
        xt_indptr=indptr,
        xt_indices=rows,
        xt_counts=narrow_counts(tf),
        row_norms=norms,
        n_base_terms=v,
        n_base_rows=n,
    )
    return postings


def _pairs_by_term(counted: Counted, rank: IntArray, n: int) -> tuple[IntArray, IntArray, IntArray]:
    """(term, row, tf) per pair, sorted by term with rows ascending within each."""
    term = rank.take(np.frombuffer(counted.terms, dtype=np.int32))
    rows = np.repeat(np.arange(n, dtype=np.int32), np.frombuffer(counted.doc_len, dtype=np.int32))
    tf = np.frombuffer(counted.counts, dtype=np.int32)
    real = term >= 0
    if not real.all():
        term, rows, tf = term[real], rows[real], tf[real]
    del real
    # A stable sort by term keeps the rows ascending within each term.
    by_term = np.argsort(term, kind="stable")
    term = term[by_term]
    rows = rows[by_term]
    tf = tf[by_term]
    del by_term
    return term, rows, tf
