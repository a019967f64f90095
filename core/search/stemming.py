"""Words for the relevance ranking: stopwords out, every word to its stem.

The recall ranking (`ranking`) keeps the Project Ocean reference's raw tokens;
a person's query needs more: "refunds" must find "refund", and "the", "for",
"in" must earn nothing.  So the relevance index (`bm25`) counts *terms*: the
tokens of `analysis.words` (lower-cased runs of word characters) of two or
more characters, minus `STOPWORDS`, each reduced by the Snowball English
stemmer (PyStemmer: the C build of the Snowball algorithms that Lucene,
Xapian and PostgreSQL use too).  A word is stemmed once per process: the
vocabulary of a vault is small next to its token count.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import Stemmer

from .analysis import words

#: Common English function words (the Snowball English list, less the
#: negations "no", "not", "nor" and "against", which change what a memory says).
STOPWORDS: frozenset[str] = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "ought",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "also",
        "may",
        "might",
        "shall",
        "must",
        "s",
        "t",
        "d",
        "ll",
        "m",
        "o",
        "re",
        "ve",
        "y",
    ]
)

_STEMMER = Stemmer.Stemmer("english")
#: word -> its term (None: a stopword or a single character).
_TERM_OF: dict[str, str | None] = {}


def term_of(word: str) -> str | None:
    """The term a lower-cased word counts as, or None when it counts for nothing."""
    found = _TERM_OF.get(word, "")
    if found != "":
        return found
    term: str | None = None
    if len(word) > 1 and word not in STOPWORDS:
        term = _STEMMER.stemWord(word)
    _TERM_OF[word] = term
    return term


def word_counts(text: str) -> Counter[str]:
    """Each distinct lower-cased word of `text` and how often it occurs (stopwords too)."""
    return Counter(words(text.lower()))


def terms(text: str) -> list[str]:
    """The terms of a text, in order (stopwords and single characters left out)."""
    out: list[str] = []
    for w in words(text.lower()):
        t = term_of(w)
        if t is not None:
            out.append(t)
    return out


def add_terms(into: dict[str, float], counts: Iterable[tuple[str, int]], weight: float) -> float:
    """Add `weight` × count of every term in `counts` (word, count) pairs; the weighted length."""
    length = 0.0
    for w, c in counts:
        t = term_of(w)
        if t is None:
            continue
        into[t] = into.get(t, 0.0) + weight * c
        length += weight * c
    return length


__all__ = ["STOPWORDS", "add_terms", "term_of", "terms", "word_counts"]
