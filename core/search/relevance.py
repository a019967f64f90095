"""The relevance ranking: a query's words as BM25F terms, typos and completions included.

Each word of the query (phrase words too) becomes one *query term*:

- a stopword or single character: nothing (listed in explain as ignored);
- a word whose stem the index knows: that term, similarity 1;
- the word being typed (search as you type): the stems of up to
  PREFIX_LIMIT words seen that start with it, similarity 1;
- otherwise, a word of at least FUZZY_MIN_LEN characters: the stems of the
  words seen within a small edit distance (Damerau-Levenshtein: 1 edit up
  to 7 characters, 2 from 8), similarity ``1 − distance / length``.

A row's score is the sum over query terms of the best ``similarity ×
bm25(term, row)`` among that query term's matches (`bm25`).  A typo thus
counts as the word it stands for, a little less, and never more than one of
its guesses counts.  A query of stopwords or of words matching nothing
scores nothing, so the page stays empty rather than filled with junk.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..model import Memory
from .aliases import BoolArray, FloatArray, IntArray
from .analysis import words
from .bm25 import FIELD_WEIGHTS, K1, B, LexView, field_counts, saturation
from .columns import HEALTHS, Columns, importance_of
from .embeddings import FusedParts, SemanticIndex, rrf
from .query import Query, confidence_value
from .ranking import Hit
from .stemming import term_of

#: The two rankings, by name (`SearchIndex.run(rank=...)`, `--rank`, the app's toggle).
RANKS: tuple[str, ...] = ("relevance", "recall")
#: Completions of the word being typed that count.
PREFIX_LIMIT = 12
#: Shorter unknown words are not fuzzy-matched (too many near words).
FUZZY_MIN_LEN = 4
#: Near words kept per unknown word.
FUZZY_LIMIT = 4


@dataclass(slots=True)
class QueryTerm:
    """One query word and the index terms it stands for, each with a similarity."""

    word: str
    via: str
    #: term id -> (similarity, the word seen that matched).
    matches: dict[int, tuple[float, str]] = field(default_factory=dict)


@dataclass(slots=True)
class RelevanceQuery:
    """A query turned into query terms, and the words it ignored."""

    terms: list[QueryTerm]
    ignored: list[str]
    #: Per row, the parts of its fused score when meaning-based matching is on
    #: (`embeddings.rrf`): the score is then the fused one.
    fused: FusedParts | None = None


def max_edits(word: str) -> int:
    return 1 if len(word) <= 7 else 2


def near_words(lex: LexView, word: str) -> list[tuple[str, int]]:
    """Live words seen within `max_edits` of `word`, nearest first (then alphabetical)."""
    from rapidfuzz import process
    from rapidfuzz.distance import DamerauLevenshtein

    edits = max_edits(word)
    pool: list[str] = []
    for length in range(len(word) - edits, len(word) + edits + 1):
        pool.extend(lex.lex.words_by_len.get(length, ()))
    found = process.extract(
        word, pool, scorer=DamerauLevenshtein.distance, score_cutoff=edits, limit=None
    )
    ranked = sorted((int(d), str(w)) for w, d, _ in found if d > 0)
    surface = lex.lex.surface
    # A word only dead rows held is no longer seen (as in a fresh build).
    live = [(w, d) for d, w in ranked if lex.term_id(surface[w]) is not None]
    return live[:FUZZY_LIMIT]


def _query_term(lex: LexView, word: str, typing: bool) -> QueryTerm | None:
    term = term_of(word)
    if term is None:
        return None
    tid = lex.term_id(term)
    if tid is not None:
        return QueryTerm(word, "exact", {tid: (1.0, word)})
    qt = QueryTerm(word, "prefix" if typing else "fuzzy")
    if typing:
        surface = lex.lex.surface
        live = 0
        # Words only dead rows held are skipped (a fresh build never saw them).
        for w in lex.lex.completions(word, 4 * PREFIX_LIMIT):
            found = lex.term_id(surface[w])
            if found is not None and live < PREFIX_LIMIT:
                live += 1
                qt.matches.setdefault(found, (1.0, w))
    if not qt.matches and len(word) >= FUZZY_MIN_LEN:
        qt.via = "fuzzy"
        surface = lex.lex.surface
        for w, d in near_words(lex, word):
            sim = 1.0 - d / len(word)
            found = lex.term_id(surface[w])
            if found is not None and sim > qt.matches.get(found, (0.0, ""))[0]:
                qt.matches[found] = (sim, w)
    return qt


def prepare_relevance(lex: LexView, query: Query, as_you_type: bool) -> RelevanceQuery:
    """The query terms of a query's words and phrase words."""
    typed = [w for text in query.words for w in words(text.lower())]
    phrase_words = [w for p in query.phrases for w in words(p.lower())]
    trailing = as_you_type and query.trailing_word and bool(typed)
    out: list[QueryTerm] = []
    ignored: list[str] = []
    seen: set[str] = set()
    for i, w in enumerate(typed + phrase_words):
        if w in seen:
            continue
        seen.add(w)
        qt = _query_term(lex, w, typing=trailing and i == len(typed) - 1)
        if qt is None:
            ignored.append(w)
        else:
            out.append(qt)
    return RelevanceQuery(out, ignored)


def relevance_scores(lex: LexView, rq: RelevanceQuery, n: int) -> FloatArray:
    """Every row's relevance: Σ over query terms of the best similarity × bm25."""
    total = np.zeros(n, dtype=np.float64)
    for qt in rq.terms:
        if len(qt.matches) == 1:
            ((tid, (sim, _)),) = qt.matches.items()
            rows, s = lex.term_scores(tid)
            total[rows] += sim * s  # a term's rows are distinct
            continue
        best = np.zeros(n, dtype=np.float64)
        for tid, (sim, _) in qt.matches.items():
            rows, s = lex.term_scores(tid)
            best[rows] = np.maximum(best[rows], sim * s)
        total += best
    return total


def relevance_candidates(
    lex: LexView,
    semantic: SemanticIndex | None,
    rq: RelevanceQuery,
    q: Query,
    alive: BoolArray,
    phrase_masks: list[BoolArray],
) -> tuple[FloatArray, IntArray]:
    """Every row's relevance, and the rows with a matching term (or meaning) or every phrase."""
    n = len(alive)
    if not q.has_text:
        return np.ones(n, dtype=np.float64), np.flatnonzero(alive)
    rel = relevance_scores(lex, rq, n)
    if semantic is not None:
        rel, rq.fused = rrf(rel, semantic.query_scores(query_text(q), n), alive)
    cand_mask = alive.copy() if phrase_masks else (rel > 0) & alive
    for mask in phrase_masks:
        cand_mask &= mask
    return rel, np.flatnonzero(cand_mask)


def explain_terms(
    lex: LexView, m: Memory, row: int, rq: RelevanceQuery
) -> tuple[list[dict[str, Any]], float]:
    """Each query term's part of one row's relevance, and their sum (the relevance)."""
    parts: list[dict[str, Any]] = []
    dl = lex.dl(row)
    for qt in rq.terms:
        best: dict[str, Any] | None = None
        for tid, (sim, seen) in qt.matches.items():
            tf = lex.doc_tf(row, tid)
            if tf <= 0:
                continue
            idf = lex.idf(tid)
            sat = float(saturation(np.array([tf]), np.array([dl]), lex.avgdl)[0])
            part = sim * (idf * sat)  # the order `relevance_scores` multiplies in
            if best is None or part > best["contribution"]:
                best = {
                    "word": qt.word,
                    "term": lex.terms[tid],
                    "via": qt.via,
                    "matched": seen,
                    "similarity": sim,
                    "idf": idf,
                    "tf": tf,
                    "saturation": sat,
                    "contribution": part,
                }
        if best is not None:
            parts.append(best)
    parts.sort(key=lambda p: (-p["contribution"], p["term"]))
    return parts, math.fsum(p["contribution"] for p in parts)


def relevance_hit(
    m: Memory, row: int, columns: Columns, lex: LexView, rq: RelevanceQuery, q: Query
) -> Hit:
    """A hit ranked by relevance: its terms' parts, and the decay/confidence shown beside."""
    parts, relevance = explain_terms(lex, m, row, rq)
    filter_only = not q.has_text
    if filter_only:
        relevance = 1.0
    fused = None if rq.fused is None else rq.fused.get(row, {"fused": 0.0})
    conf, conf_src = confidence_value(m.confidence)
    decay_score = float(columns.score.view[row])
    importance = importance_of(m)
    dl = lex.dl(row)
    explain: dict[str, Any] = {
        "rank": "relevance",
        "formula": relevance_formula(dl, lex.avgdl)
        + ("; a query without words or phrases has relevance 1" if filter_only else ""),
        "terms": parts,
        "ignored_words": list(rq.ignored),
        "filter_only": filter_only,
        "relevance": relevance,
        "doc_length": dl,
        "avg_doc_length": lex.avgdl,
        "confidence": conf,
        "confidence_from": conf_src,
        "decay_weight": float(columns.weight.view[row]),
        "importance": None if math.isnan(importance) else importance,
        "status": columns.status_codes.values[int(columns.status.view[row])],
        "health": HEALTHS[int(columns.health.view[row])].value,
        "decay_score": None if math.isnan(decay_score) else decay_score,
        "phrases": list(q.phrases),
        "filters": [f.token for f in q.filters],
        "score": relevance,
    }
    if fused is not None:
        # Meaning-based matching on: the score is the reciprocal rank fusion.
        explain["bm25"] = relevance
        explain["semantic"] = dict(fused)
        explain["formula"] = FUSED_FORMULA + explain["formula"]
        explain["relevance"] = explain["score"] = fused["fused"]
        return Hit(m, fused["fused"], explain)
    return Hit(m, relevance, explain)


FUSED_FORMULA = (
    "score = relevance = 1/(60 + lexical rank) + 1/(60 + semantic rank) "
    "(reciprocal rank fusion; semantic: the 30 nearest by meaning, cosine >= 0.3); "
    "lexical: "
)


def query_text(q: Query) -> str:
    """The words and phrases of a query, as one text (what meaning is matched on)."""
    return " ".join([*q.words, *q.phrases])


def add_field_counts(hit: Hit) -> Hit:
    """Add to each matched term of a relevance hit how often it occurs in each field.

    Not part of every hit: it reads the memory's whole text again, which a
    page of 50 hits per keystroke cannot afford; the fronts ask for it for
    the hits they explain (the CLI's, the highlighted one in the app).
    """
    terms = hit.explain.get("terms") if hit.explain.get("rank") == "relevance" else None
    if terms and "fields" not in terms[0]:
        fields = field_counts(hit.memory)  # one pass over the text, for every term
        for part in terms:
            part["fields"] = {name: c[part["term"]] for name, c in fields if c[part["term"]]}
    return hit


def relevance_formula(dl: float, avgdl: float) -> str:
    weights = ", ".join(f"{k} {v:g}" for k, v in FIELD_WEIGHTS.items())
    return (
        "score = relevance = Σ similarity × idf × tf~·(k1+1)/(tf~ + k1·(1−b+b·dl/avgdl)) "
        f"(BM25F: k1 {K1}, b {B}, field weights {weights}; dl {dl:g}, avgdl {avgdl:.2f}); "
        "decay, confidence and importance are shown, not multiplied in"
    )


__all__ = [
    "FUZZY_MIN_LEN",
    "PREFIX_LIMIT",
    "RANKS",
    "QueryTerm",
    "RelevanceQuery",
    "add_field_counts",
    "explain_terms",
    "near_words",
    "prepare_relevance",
    "query_text",
    "relevance_candidates",
    "relevance_formula",
    "relevance_hit",
    "relevance_scores",
]
