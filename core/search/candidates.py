"""Which rows a query considers: text evidence (the recall ranking's), phrases, filters.

The relevance ranking finds its own candidates (`relevance.relevance_candidates`);
both then pass `query_mask`: the query's filters, the default exclusion of
inactive memories, and ``-word`` exclusions.
"""

from __future__ import annotations

import numpy as np

from .aliases import BoolArray, FloatArray, IntArray
from .analysis import analyze
from .columns import Columns
from .filters import active_mask, filter_mask, rows_mask
from .fuzzy import FUZZY_WEIGHT
from .phrases import Phrase, phrase_mask
from .postings import Postings, TermPostings, TitleWords
from .query import Query
from .ranking import Prepared, text_scores


def tfidf_candidates(
    terms: TermPostings,
    words: TitleWords,
    alive: BoolArray,
    prep: Prepared,
    pos: list[Phrase],
    as_you_type: bool,
) -> tuple[FloatArray, IntArray]:
    """Every row's recall relevance, and the rows with text evidence or holding every phrase."""
    n = len(alive)
    if not prep.query.has_text:
        return np.ones(n, dtype=np.float64), np.flatnonzero(alive)
    cosine, fuzzy = text_scores(terms, words, prep, n, as_you_type)
    rel = np.zeros(n, dtype=np.float64)
    if cosine is not None:
        rel += cosine
    if fuzzy is not None:
        rel += FUZZY_WEIGHT * fuzzy / 100.0
    cand_mask = alive.copy() if pos else rel > 0
    for ph in pos:
        cand_mask &= phrase_mask(terms, n, ph)
    return rel, np.flatnonzero(cand_mask)


def query_mask(
    columns: Columns,
    tags: Postings,
    terms: TermPostings,
    q: Query,
    cand: IntArray,
    include_inactive: bool,
) -> BoolArray:
    """Which candidates pass the filters, the default exclusions and ``-word``s."""
    mask = columns.alive.view[cand].copy()
    health_asked = any(f.field in ("health", "status") and not f.negated for f in q.filters)
    if not (include_inactive or health_asked):
        mask &= active_mask(columns, cand)
    for f in q.filters:
        fm = filter_mask(columns, tags, f, cand)
        mask &= ~fm if f.negated else fm
    n = len(columns.alive.view)
    for w in q.excluded_words:
        found = analyze(w)
        if len(found) == 1:  # none: "-h" while typing; several: a phrase
            mask &= ~rows_mask(n, terms.term_rows(found[0]))[cand]
    return mask


__all__ = ["query_mask", "tfidf_candidates"]
