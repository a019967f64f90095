"""Phrases: which rows may hold one (from the postings), and checking the text itself.

A phrase must appear in the title or body at word boundaries.  Rows that
can hold it come from the postings (its whole words; an open phrase's last
word as a prefix); the text itself is checked for all of them when there
are at most VERIFY_ALL_MAX, else in score order only until the page is
full, and the total is then an upper bound.

As the user types (`full_order` given), more than VERIFY_TYPED_MAX rows
are checked in full hit order (score, relevance, place) only until the
page is full: the page is the same, the total an upper bound.  Why: an
open phrase's first letters (`"re`) match most rows with equal scores, and
checking every tied row read 15k memory files on one keystroke (5 s).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..model import Memory
from .aliases import BoolArray, FloatArray, IntArray
from .analysis import TOKEN_RE, analyze
from .filters import rows_mask
from .postings import TermPostings
from .query import Query
from .ranking import at_least_kth

#: Up to this many rows needing a phrase check are all checked (exact total);
#: beyond it rows are checked in score order until the page is full.
VERIFY_ALL_MAX = 2000
#: As the user types, up to this many rows are checked in full (exact
#: total); beyond it only until the page is full, in hit order.  Each check
#: may read a memory file (~0.1 ms): 256 keeps a keystroke near its budget.
VERIFY_TYPED_MAX = 256
#: Lower-cased texts kept for phrase checks before the cache starts over.
LOWER_CACHE_MAX = 5_000


@dataclass(frozen=True, slots=True)
class Phrase:
    """A phrase compiled for narrowing (tokens) and checking (regex)."""

    text: str
    pattern: re.Pattern[str]
    #: Tokens a containing row must have exactly.
    exact: tuple[str, ...]
    #: An open phrase's last word: a containing row has a token starting with it.
    prefix: str | None

    def found_in(self, text: str) -> bool:
        """The phrase is in `text` (lower-cased, white space runs as one space) at word bounds.

        The pattern is the literal text with boundary checks around it, so
        the literal is looked for first: a pattern opening with a lookbehind
        is tried at every position (~10-40 us on a 1.4 KB memory, where
        `in` takes ~0.3 us), and most rows a phrase is checked in lack it.
        """
        return self.text in text and self.pattern.search(text) is not None


def compile_phrase(text: str, open_end: bool = False) -> Phrase | None:
    """The phrase as word-bounded pattern; None without a word of 2+ letters."""
    tokens = list(TOKEN_RE.finditer(text))
    if not tokens:
        return None
    exact = [t.group() for t in tokens]
    prefix = None
    if open_end and tokens[-1].end() == len(text):
        prefix = exact.pop()
    pattern = re.escape(text)
    if re.match(r"\w", text[0]):
        pattern = r"(?<!\w)" + pattern
    if not open_end and re.match(r"\w", text[-1]):
        pattern += r"(?!\w)"
    return Phrase(text, re.compile(pattern), tuple(exact), prefix)


def query_phrases(q: Query) -> tuple[list[Phrase], list[Phrase]]:
    """The phrases a hit must hold, and those it must not (``-"…"``, ``-debt-relief``)."""
    # A phrase needs a word of two or more letters ('"f' while typing).
    last = len(q.phrases) - 1
    pos = [
        ph
        for i, p in enumerate(q.phrases)
        if (ph := compile_phrase(p, q.open_phrase and i == last)) is not None
    ]
    neg = [ph for p in q.excluded_phrases if (ph := compile_phrase(p)) is not None]
    # "-debt-relief" (several terms): exclude the written form, as a phrase.
    neg += [
        ph
        for w in q.excluded_words
        if len(analyze(w)) > 1 and (ph := compile_phrase(" ".join(w.lower().split())))
    ]
    return pos, neg


def phrase_mask(terms: TermPostings, n: int, ph: Phrase) -> BoolArray:
    """Rows that may contain the phrase (a superset, from the postings)."""
    masks = [rows_mask(n, terms.term_rows(t)) for t in ph.exact]
    if ph.prefix is not None:
        masks.append(rows_mask(n, terms.prefix_rows(ph.prefix)))
    mark = masks[0]
    for m in masks[1:]:
        mark &= m
    return mark


def lower_text(cache: dict[int, str], memories: list[Memory], row: int) -> str:
    """A row's title and body, lower-cased with runs of white space as one space.

    Kept in `cache` (bounded: phrase checks of old queries are cheap to redo).
    """
    text = cache.get(row)
    if text is None:
        if len(cache) >= LOWER_CACHE_MAX:
            cache.clear()
        m = memories[row]
        text = cache[row] = " ".join((m.title + "\n" + m.body).lower().split())
    return text


def check_phrases(
    cand: IntArray,
    scores: FloatArray,
    need: BoolArray,
    passes: Callable[[int], bool],
    want: int,
    full_order: Callable[[], IntArray] | None = None,
) -> tuple[IntArray, FloatArray, IntArray, int, bool]:
    """Drop candidates failing their phrase checks; keep the best `want` (ties too).

    Returns the candidates and scores left, indexes of the top ones into
    them, the total matching and whether that total is exact.
    `full_order` (as the user types): the candidates' indexes in hit order;
    past VERIFY_TYPED_MAX rows to check, only the page is checked.
    """
    needed = int(need.sum())
    if full_order is not None and needed > VERIFY_TYPED_MAX:
        top, seen = _checked_in_order(cand, full_order(), need, passes, want)
        return cand, scores, top, len(top) + (len(cand) - seen), seen == len(cand)
    if needed <= VERIFY_ALL_MAX:
        if need.any():
            keep = np.ones(len(cand), dtype=bool)
            for i in np.flatnonzero(need).tolist():
                keep[i] = passes(int(cand[i]))
            cand, scores = cand[keep], scores[keep]
        return cand, scores, at_least_kth(scores, want), len(cand), True
    top, seen = _checked_top(cand, scores, need, passes, want)
    return cand, scores, top, len(top) + (len(cand) - seen), seen == len(cand)


def _checked_in_order(
    cand: IntArray,
    order: IntArray,
    need: BoolArray,
    passes: Callable[[int], bool],
    want: int,
) -> tuple[IntArray, int]:
    """The first `want` candidates of `order` (indexes into them) that pass; how many were seen.

    `order` is the full hit order, so these are exactly the page's rows:
    no tie needs checking beyond them.
    """
    picked: list[int] = []
    seen = 0
    for i in order.tolist():
        if len(picked) >= want:
            break
        seen += 1
        if not need[i] or passes(int(cand[i])):
            picked.append(i)
    return np.asarray(picked, dtype=np.int64), seen


def _checked_top(
    cand: IntArray,
    scores: FloatArray,
    need: BoolArray,
    passes: Callable[[int], bool],
    want: int,
) -> tuple[IntArray, int]:
    """Rows passing their phrase checks, in score order until the page is full.

    Rows tied with the last one taken are checked and kept too, so the
    full order (not the scan order) decides among them.  Returns indexes
    into `cand` and how many rows were looked at.
    """
    order = np.argsort(-scores, kind="stable")
    picked: list[int] = []
    seen = 0
    boundary: float | None = None
    for i in order.tolist():
        if boundary is not None and scores[i] < boundary:
            break
        seen += 1
        if not need[i] or passes(int(cand[i])):
            picked.append(i)
            if len(picked) == want:
                boundary = float(scores[i])
    return np.asarray(picked, dtype=np.int64), seen
