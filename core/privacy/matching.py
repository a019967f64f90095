"""What every detector module shares: the `Hit` it yields, and fast matching of word-led patterns.

Split out so that the detector modules (`detectors` for credentials,
`passwords`, `personal`) import it and not each other.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
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


# -- Markdown tables -------------------------------------------------------------

_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)+\|?\s*$")


def _cells(line: str, offset: int) -> list[tuple[str, int]]:
    """A table row's cells (stripped) with where each starts in the text."""
    out = []
    pos = 0
    parts = line.split("|")
    for n, part in enumerate(parts):
        if (n == 0 or n == len(parts) - 1) and not part.strip():
            pos += len(part) + 1
            continue
        stripped = part.strip()
        out.append((stripped, offset + pos + (part.index(stripped) if stripped else 0)))
        pos += len(part) + 1
    return out


def unwrap_cell(cell: str) -> str:
    """A cell's value without the code or emphasis marks around it (`` `x` ``, `**x**`)."""
    for mark in ("`", "**", "__", "*", "_"):
        if len(cell) > 2 * len(mark) and cell.startswith(mark) and cell.endswith(mark):
            return unwrap_cell(cell[len(mark) : -len(mark)].strip())
    return cell


def table_cells(
    text: str, column_kind: Callable[[str], str | None]
) -> Iterator[tuple[str, str, int]]:
    """(kind, cell, start) of every cell of a Markdown table under a header `column_kind` names.

    `column_kind` gets each header (lowercased, marks taken off) and gives the
    kind of what its column holds, or None for a column of anything else.
    """
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    for i in range(1, len(lines)):
        if not _TABLE_RULE.match(lines[i]) or "|" not in lines[i - 1]:
            continue
        header = [unwrap_cell(c).lower() for c, _ in _cells(lines[i - 1], 0)]
        columns = {n: kind for n, h in enumerate(header) if (kind := column_kind(h)) is not None}
        if not columns:
            continue
        for j in range(i + 1, len(lines)):
            if "|" not in lines[j]:
                break
            cells = _cells(lines[j], offsets[j])
            for n, kind in columns.items():
                if n < len(cells):
                    yield kind, *cells[n]


__all__ = ["Hit", "anchored", "field_name", "hits", "starts", "table_cells", "unwrap_cell"]
