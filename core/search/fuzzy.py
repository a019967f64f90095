"""Fuzzy title/tag matching: the near words of a query word, and their score per row.

rapidfuzz runs over the *words* of titles and tags (grouped by length),
never over whole titles, and only for words the TF-IDF vocabulary does not
know, or short queries with few TF-IDF hits.  Exact title/tag words always
score 100; with search-as-you-type, completions of the word being typed
do too.
"""

from __future__ import annotations

import bisect
from collections.abc import Container

import numpy as np

from ..model import Memory
from .aliases import FloatArray
from .analysis import title_words
from .postings import TitleWords

#: Weight of the title/tag fuzzy score (0..100 -> 0..FUZZY_WEIGHT) added to cosine.
FUZZY_WEIGHT = 0.25
#: rapidfuzz ratio a query word needs to count as matching a title/tag word.
FUZZY_CUTOFF = 80.0
#: Near words kept per query word.
FUZZY_LIMIT = 8
#: Fewer TF-IDF hits than this makes a short query (<= 2 words) fuzzy-match
#: every word, not only the words the vocabulary does not know.
FUZZY_FEW_HITS = 20
#: Completions of a trailing partial word (search-as-you-type).
PREFIX_LIMIT = 12


def near_words(words: TitleWords, word: str, run_fuzzy: bool, prefix: bool) -> dict[str, float]:
    """Title/tag words matching a query word, with a 0..100 score."""
    from rapidfuzz import fuzz, process

    found: dict[str, float] = {}
    if word in words.rows:
        found[word] = 100.0
    if run_fuzzy and len(word) >= 3:
        n = len(word)
        # ratio >= 80 needs the shorter word at least 2/3 of the longer.
        pool: list[str] = []
        for length in range(max(2, (2 * n + 2) // 3), (3 * n) // 2 + 1):
            pool.extend(words.by_len.get(length, ()))
        for match, score, _ in process.extract(
            word, pool, scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF, limit=FUZZY_LIMIT
        ):
            found.setdefault(str(match), float(score))
    if prefix and len(word) >= 2:
        ordered = words.ordered
        i = bisect.bisect_left(ordered, word)
        taken = 0
        while i < len(ordered) and taken < 4 * PREFIX_LIMIT:
            w = ordered[i]
            if not w.startswith(word):
                break
            found.setdefault(w, 100.0)
            i += 1
            taken += 1
    return found


def fuzzy_scores(
    words: TitleWords,
    vocab: Container[str],
    query_words: list[str],
    *,
    n: int,
    text_hits: int,
    trailing: bool,
    matches: list[dict[str, float]],
) -> FloatArray | None:
    """Mean over query words of each row's best title/tag word score (None: no match).

    `matches` gets each query word's near words (what `fuzzy_explain`
    reads back for a page); `trailing` says the last word is being typed.
    """
    short = len(query_words) <= 2 and text_hits < FUZZY_FEW_HITS
    total = np.zeros(n, dtype=np.float64)
    for i, w in enumerate(query_words):
        run_fuzzy = short or w not in vocab
        is_last = trailing and i == len(query_words) - 1
        near = near_words(words, w, run_fuzzy, is_last)
        matches.append(near)
        if not near:
            continue
        best = np.zeros(n, dtype=np.float64)
        for tw, score in near.items():
            rows = words.rows.rows(tw)
            best[rows] = np.maximum(best[rows], score)
        total += best
    if total.any():
        fuzzy: FloatArray = total / len(query_words)
        return fuzzy
    return None


def fuzzy_explain(
    memory: Memory, query_words: list[str], matches: list[dict[str, float]]
) -> tuple[list[dict[str, object]], float]:
    """One memory's best title/tag word per query word, and its fuzzy score (0..100)."""
    own = title_words(memory)
    found: list[dict[str, object]] = []
    total = 0.0
    for w, near in zip(query_words, matches, strict=False):
        best_word, best = "", 0.0
        for tw, s in near.items():
            if tw in own and (s > best or (s == best and tw < best_word)):
                best_word, best = tw, s
        if best > 0:
            found.append({"word": w, "matched": best_word, "score": best})
        total += best
    return found, total / len(query_words)
