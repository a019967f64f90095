"""Tokenising: the words of a text, and the text a memory is indexed by.

The rule is scikit-learn's default analyzer (lower-cased runs of two or more
word characters), with a faster path for ASCII text that gives the same words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..model import Memory

TOKEN_RE = re.compile(r"(?u)\b\w\w+\b")

#: For ASCII text, `\w` is exactly [A-Za-z0-9_]: every other ASCII character
#: becomes a space, and the words are what `str.split` leaves (about twice
#: as fast as the regex, which stays the rule for any other text).
_ASCII_SPACES = [chr(c) if chr(c).isalnum() or chr(c) == "_" else " " for c in range(128)]
#: Tokens of one word character (dropped: a token has two or more).
SINGLE = [chr(c) for c in range(128) if chr(c).isalnum() or chr(c) == "_"]

#: What term counting reads of a memory: (title, tags, body).
Text3 = tuple[str, tuple[str, ...], str]


def words(lowered: str) -> list[str]:
    """Maximal runs of word characters in lower-cased text, single characters included."""
    if lowered.isascii():
        return lowered.translate(_ASCII_SPACES).split()
    return TOKEN_RE.findall(lowered)  # no single-character tokens to begin with


def analyze(text: str) -> list[str]:
    """Lower-cased word tokens of two or more characters (scikit-learn's default)."""
    lowered = text.lower()
    if lowered.isascii():
        return [w for w in lowered.translate(_ASCII_SPACES).split() if len(w) > 1]
    return TOKEN_RE.findall(lowered)


def title_words(memory: Memory) -> frozenset[str]:
    """The words of a memory's title and tags (what fuzzy matching looks at)."""
    return frozenset(analyze(memory.title + "\n" + " ".join(memory.tags)))


def index_text(memory: Memory) -> str:
    """The text indexed for a memory: title and tags twice (boost), then the body."""
    tags = " ".join(memory.tags)
    return "\n".join((memory.title, memory.title, tags, tags, memory.body))


def texts(docs: Sequence[Memory]) -> list[Text3]:
    """What term counting needs of each memory (and what a parse worker is sent)."""
    return [(m.title, m.tags, m.body) for m in docs]
