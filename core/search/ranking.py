"""Scores, the order of hits, and each hit's explanation.

``score = relevance × confidence × decay_weight``, with ``relevance =
cosine + FUZZY_WEIGHT · fuzzy / 100`` (1.0 for a filter-only query).  Hits
come best first by score, then relevance, then the memory's place (vault
root, path, line, index, id): a total order, so a page is always a prefix
of any longer page, whatever the ties.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..model import Memory
from .aliases import FloatArray, IntArray
from .analysis import analyze
from .columns import HEALTHS, Columns
from .fuzzy import FUZZY_WEIGHT, PREFIX_LIMIT, fuzzy_explain, fuzzy_scores
from .postings import TermPostings, TitleWords
from .query import Query, confidence_value

#: Above this many rows to order, equal scores are ordered by a cached
#: rank of every row's place instead of sorting their keys in Python.
RANKED_SORT_MIN = 4096

PlaceKey = tuple[str, str, int, int, str]


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked memory and why it ranked."""

    memory: Memory
    score: float
    explain: dict[str, Any]


@dataclass(frozen=True, slots=True)
class SearchResults:
    """A page of hits plus how many memories matched in all."""

    hits: list[Hit]
    #: Memories matching in all; an upper bound when `total_exact` is False
    #: (phrase checks were done lazily, only as far as the page needed).
    total: int
    query: Query
    total_exact: bool = True


@dataclass(slots=True)
class Prepared:
    """A query turned into term weights and fuzzy word lists."""

    query: Query
    term_ids: list[int]
    q_weights: list[float]
    #: Query words for fuzzy matching (analysed), and their matched title words.
    fuzzy_words: list[str]
    fuzzy_matches: list[dict[str, float]] = field(default_factory=list)


def prepare(terms: TermPostings, query: Query, as_you_type: bool) -> Prepared:
    """The query's unit TF-IDF vector (words, phrase words, completions) and fuzzy words."""
    words = [t for w in query.words for t in analyze(w)]
    phrase_terms = [t for p in query.phrases for t in analyze(p)]
    counts = Counter(words + phrase_terms)
    if as_you_type and query.trailing_word and words:
        for t in terms.prefix_terms(words[-1], PREFIX_LIMIT):
            counts.setdefault(t, 1)
    ids, weights = terms.weigh(counts, extend=False)
    return Prepared(query, ids, weights, words)


def text_scores(
    terms: TermPostings, words: TitleWords, prep: Prepared, n: int, as_you_type: bool
) -> tuple[FloatArray | None, FloatArray | None]:
    """Cosine over the query terms' postings, and the fuzzy title/tag score."""
    cosine: FloatArray | None = None
    if prep.term_ids:
        cosine = terms.weighted_sum(prep.term_ids, prep.q_weights, n)
    n_text_hits = int(np.count_nonzero(cosine)) if cosine is not None else 0
    fuzzy: FloatArray | None = None
    if prep.fuzzy_words:
        fuzzy = fuzzy_scores(
            words,
            terms.vocab,
            prep.fuzzy_words,
            n=n,
            text_hits=n_text_hits,
            trailing=as_you_type and prep.query.trailing_word,
            matches=prep.fuzzy_matches,
        )
    return cosine, fuzzy


def at_least_kth(scores: FloatArray, k: int) -> IntArray:
    """Indexes of every score >= the k-th highest (all ties at the boundary kept)."""
    if k >= len(scores):
        return np.arange(len(scores))
    kth = np.partition(scores, len(scores) - k)[len(scores) - k]
    return np.flatnonzero(scores >= kth)


def place_key(memories: list[Memory], columns: Columns, row: int) -> PlaceKey:
    """Where a row's memory is, for ordering equal scores: vault, path, line/index, id."""
    m = memories[row]
    root = columns.vault_codes.values[int(columns.vault.view[row])]
    return (root, m.path, m.line or 0, m.index or 0, m.id)


def place_ranks(n: int, key: Callable[[int], PlaceKey]) -> IntArray:
    """Every row's rank by `key` (the same order `ordered`'s small path sorts by)."""
    keys = [key(r) for r in range(n)]
    order = sorted(range(n), key=keys.__getitem__)
    ranks = np.empty(n, dtype=np.int64)
    ranks[np.asarray(order, dtype=np.int64)] = np.arange(n, dtype=np.int64)
    return ranks


def ordered(
    rows: IntArray,
    scores: FloatArray,
    rel: FloatArray,
    key: Callable[[int], PlaceKey],
    ranks: Callable[[], IntArray],
) -> list[int]:
    """`rows` in hit order: score, relevance, then the memory's place (a total order)."""
    if len(rows) > RANKED_SORT_MIN:
        order = np.lexsort((ranks()[rows], -rel[rows], -scores))
        return [int(r) for r in rows[order]]
    keyed = sorted(
        zip((-scores).tolist(), (-rel[rows]).tolist(), rows.tolist(), strict=True),
        key=lambda t: (t[0], t[1], key(t[2])),
    )
    return [t[2] for t in keyed]


def make_hit(
    m: Memory,
    row: int,
    columns: Columns,
    terms: TermPostings,
    prep: Prepared,
    doc_weights: list[float],
) -> Hit:
    """A hit with every part of its score in `explain` (the score is recomputed from them)."""
    weight = float(columns.weight.view[row])
    decay_score = float(columns.score.view[row])
    conf, conf_src = confidence_value(m.confidence)
    contributions: list[dict[str, Any]] = []
    for tid, qw, dw in zip(prep.term_ids, prep.q_weights, doc_weights, strict=True):
        if dw > 0:
            contributions.append(
                {
                    "term": terms.terms[tid],
                    "query_weight": qw,
                    "doc_weight": dw,
                    "contribution": qw * dw,
                }
            )
    contributions.sort(key=lambda t: (-t["contribution"], t["term"]))
    cosine = math.fsum(t["contribution"] for t in contributions)
    matches: list[dict[str, object]] = []
    fuzzy_score = 0.0
    if prep.fuzzy_words:
        matches, fuzzy_score = fuzzy_explain(m, prep.fuzzy_words, prep.fuzzy_matches)
    bonus = FUZZY_WEIGHT * fuzzy_score / 100.0
    q = prep.query
    filter_only = not q.has_text
    relevance = 1.0 if filter_only else cosine + bonus
    score = relevance * conf * weight
    explain: dict[str, Any] = {
        "formula": "score = relevance × confidence × decay_weight; "
        "relevance = cosine + fuzzy_weight × fuzzy / 100"
        + ("; a query without words or phrases has relevance 1" if filter_only else ""),
        "terms": contributions,
        "cosine": cosine,
        "fuzzy": fuzzy_score,
        "fuzzy_matches": matches,
        "fuzzy_weight": FUZZY_WEIGHT,
        "fuzzy_bonus": bonus,
        "filter_only": filter_only,
        "relevance": relevance,
        "confidence": conf,
        "confidence_from": conf_src,
        "decay_weight": weight,
        "status": columns.status_codes.values[int(columns.status.view[row])],
        "health": HEALTHS[int(columns.health.view[row])].value,
        "decay_score": None if math.isnan(decay_score) else decay_score,
        "phrases": list(q.phrases),
        "filters": [f.token for f in q.filters],
        "score": score,
    }
    return Hit(m, score, explain)
