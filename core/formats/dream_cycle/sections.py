"""The `## ` sections of an observations file and their `<!-- dc:... -->` comments, from text.

Shared by the reader and the writer, which rewrites sections by their lines.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field

_DC_TOKEN = re.compile(r"(?:^|(?<=\s))dc:([^\s=]+)=(\S*)")


@dataclass(slots=True)
class Section:
    """One `## ` section of an observations file, located by 1-based lines.

    `start_line` is the heading line and `end_line` the last line before the
    next heading (or the end of the file).  `comment_line`..`comment_end_line`
    is the dc metadata comment when the section has one (usually one line, so
    a writer can rewrite just that line); `body_start_line` is the first line
    after the heading or comment.  `unclosed` marks a `<!-- dc:` comment that
    never closes before the section ends (malformed metadata).
    """

    index: int
    title: str
    start_line: int
    end_line: int
    comment_line: int | None = None
    comment_end_line: int | None = None
    #: The raw comment text, `<!--` to `-->` inclusive (None if untagged).
    comment: str | None = None
    #: dc keys as written (`dc:type`, ...) with string values, in order.
    fields: dict[str, str] = field(default_factory=dict)
    #: Keys that appeared more than once in the comment (first value kept).
    duplicate_keys: tuple[str, ...] = ()
    #: Section text after the heading/comment, leading and trailing blank
    #: lines dropped, otherwise exact.
    body: str = ""
    body_start_line: int = 0
    unclosed: bool = False
    #: True for the last section of the file (nothing follows it).
    last: bool = False

    @property
    def tagged(self) -> bool:
        return self.comment is not None and not self.unclosed


def split_lines(text: str) -> list[str]:
    """Lines of `text` as in the file: BOM dropped, `\\r\\n` accepted, 1:1 with file lines."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text:
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def parse_sections(text: str) -> list[Section]:
    """Every `## ` section of an observations file, in order (preamble excluded)."""
    return sections_from_lines(split_lines(text))


def is_heading(line: str) -> bool:
    """A section starts at a line beginning with `## ` (`###` does not split)."""
    return line.startswith("## ")


def sections_from_lines(lines: list[str]) -> list[Section]:
    """Sections from file lines (index i holds line i + 1)."""
    starts = [i for i, ln in enumerate(lines) if is_heading(ln)]
    sections: list[Section] = []
    for n, start in enumerate(starts):
        stop = starts[n + 1] if n + 1 < len(starts) else len(lines)  # exclusive
        sections.append(_parse_section(lines, n + 1, start, stop))
    if sections:
        sections[-1].last = True
    return sections


def _parse_section(lines: list[str], index: int, start: int, stop: int, base: int = 0) -> Section:
    """The section of `lines[start:stop]`; `base` is the file line index of `lines[0]`."""
    sec = Section(
        index=index,
        title=lines[start][3:].strip(),
        start_line=base + start + 1,
        end_line=base + stop,
        body_start_line=base + start + 2,
    )
    first = start + 1
    while first < stop and not lines[first].strip():
        first += 1
    if first >= stop or not lines[first].lstrip().startswith("<!--"):
        sec.body = _body(lines, start + 1, stop)
        return sec
    opening = lines[first].lstrip()
    close_line, close_col = _find_close(lines, first, stop, opening)
    if close_line is None:
        # Never closed: malformed only if it is a dc comment (`<!-- dc:...`);
        # any other unclosed HTML comment is just body text.
        if _DC_TOKEN.search(opening[4:]):
            sec.comment_line = base + first + 1
            sec.unclosed = True
            sec.fields, sec.duplicate_keys = _dc_fields(opening[4:])
        sec.body = _body(lines, start + 1, stop)
        return sec
    if close_line == first:
        raw = opening[: close_col + 3]
        inner = opening[4:close_col]
        after = opening[close_col + 3 :]
    else:
        parts = [opening, *lines[first + 1 : close_line], lines[close_line][: close_col + 3]]
        raw = "\n".join(parts)
        inner = raw[4:-3]
        after = lines[close_line][close_col + 3 :]
    fields, dups = _dc_fields(inner)
    if not fields:
        # An ordinary HTML comment, not dc metadata: the section is untagged.
        sec.body = _body(lines, start + 1, stop)
        return sec
    sec.comment = raw
    sec.comment_line = base + first + 1
    sec.comment_end_line = base + close_line + 1
    sec.fields = fields
    sec.duplicate_keys = dups
    sec.body_start_line = base + close_line + 2
    rest = _body(lines, close_line + 1, stop)
    after = after.strip()
    sec.body = f"{after}\n{rest}".strip("\n") if after else rest
    return sec


def _find_close(lines: list[str], first: int, stop: int, opening: str) -> tuple[int | None, int]:
    col = opening.find("-->", 4)
    if col >= 0:
        return first, col
    for i in range(first + 1, stop):
        col = lines[i].find("-->")
        if col >= 0:
            return i, col
    return None, -1


def _body(lines: list[str], begin: int, stop: int) -> str:
    return "\n".join(lines[begin:stop]).strip("\n")


def _dc_fields(inner: str) -> tuple[dict[str, str], tuple[str, ...]]:
    fields: dict[str, str] = {}
    dups: list[str] = []
    for m in _DC_TOKEN.finditer(inner):
        # Interned: thousands of sections repeat the same keys and short
        # values, and the scan cache then stores (and loads) each string once.
        key = sys.intern(f"dc:{m.group(1)}")
        if key in fields:
            if key not in dups:
                dups.append(key)
            continue
        value = m.group(2)
        fields[key] = sys.intern(value) if len(value) <= _INTERN_MAX else value
    return fields, tuple(dups)


#: Longest dc value interned (types, numbers, dates, short sources).
_INTERN_MAX = 40
