"""What every detector module shares: the `Hit` it yields, and fast matching of word-led patterns.

Split out so that the detector modules (`detectors` for credentials,
`passwords`, `personal`) import it and not each other.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Hit:
    """One secret in a text: its kind and where it is (`text[start:end]` is the secret)."""

    kind: str
    start: int
    end: int
    secret: str


def hits(kind: str, pattern: re.Pattern[str], text: str, group: int | str = 0) -> Iterator[Hit]:
    """Every match of `pattern` (its `group`) as a `Hit` of `kind`."""
    for m in pattern.finditer(text):
        yield Hit(kind, m.start(group), m.end(group), m.group(group))


def starts(*alternations: str) -> re.Pattern[str]:
    """The words of plain `a|b|c` alternations, longest first, to find in lowercased text."""
    words = {w for a in alternations for w in a.split("|")}
    return re.compile("|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)))


def anchored(
    pattern: re.Pattern[str], words: re.Pattern[str], text: str
) -> Iterator[re.Match[str]]:
    """`pattern.finditer(text)` for a pattern that begins with one of the words of `words`.

    `re` tries a case-insensitive alternation of words at every place of a
    text, slowly (4 s over the 10,000 memories of the benchmark for the
    password pattern); the words are found in the lowercased text with a
    plain alternation and the pattern is tried only there (0.4 s).
    """
    low = text.lower()
    if len(low) != len(text):  # lowercasing moved the offsets (`İ`): try every place
        yield from pattern.finditer(text)
        return
    end = 0
    for word in words.finditer(low):
        if word.start() >= end and (m := pattern.match(text, word.start())):
            end = m.end()
            yield m


def field_name(field: str) -> str:
    """The last part of a field's dotted name, without a list index: `context.db[0]` -> `db`."""
    return re.sub(r"\[\d+\]$", "", field.rsplit(".", 1)[-1])


__all__ = ["Hit", "anchored", "field_name", "hits", "starts"]
