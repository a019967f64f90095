"""Finding one memory inside a version of a shared file: a JSON Lines record, a `## ` section.

The formats whose memories share a file (Dream Cycle sections, experience
records, Dream Cycle archive entries) answer `history_scope` and
`history_extract` with these helpers.  They run once per version of the file
in a repository's history, so they search bytes (C speed) and parse only the
candidate line or heading, never the whole file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from .adapter import HistoryScope

_BOM = b"\xef\xbb\xbf"
#: First bytes of what `str.strip` removes after a title: ASCII whitespace and
#: the UTF-8 lead bytes of Unicode's (U+0085, U+00A0, U+1680, U+2000-U+3000).
_SPACE_LEADS = frozenset(bytes([c]) for c in b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\xc2\xe1\xe2\xe3")


def record_scope(path: str, record_id: str) -> HistoryScope:
    """The scope of the JSON Lines record `record_id` in `path`: every version is read.

    Why not `git log -G` on the id, which finds exactly the commits whose
    added or removed lines hold it: -G diffs every version of the file, and
    on the 10,000-commit benchmark (a JSON Lines file appended to 1,000
    times, ending near 400 KB) that took 1.8 s of CPU against 1.2 s for
    reading every version once and finding the line (bench/history_bench.py).
    """
    return HistoryScope(path, whole_file=False, key=record_id)


def _is_record(line: bytes, record_id: str, skip: Any = None) -> bool:
    """True if `line` is a JSON object whose top-level `id` is `record_id`."""
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return False
    if not isinstance(obj, dict) or obj.get("id") != record_id:
        return False
    return skip is None or not skip(obj)


def record_line(data: bytes, record_id: str, skip: Any = None) -> bytes | None:
    """The first line of JSON Lines `data` whose object has `id` == `record_id` (no line end).

    `skip(obj)` True passes over a line (Dream Cycle's restore markers reuse
    the entry's id).  Only lines that hold the id's JSON spelling are parsed.
    """
    needles = {
        json.dumps(record_id, ensure_ascii=False).encode("utf-8", "surrogatepass"),
        json.dumps(record_id, ensure_ascii=True).encode("ascii"),
    }
    starts: set[int] = set()
    for needle in needles:
        pos = data.find(needle)
        while pos >= 0:
            starts.add(data.rfind(b"\n", 0, pos) + 1)
            pos = data.find(needle, pos + 1)
    for start in sorted(starts):
        end = data.find(b"\n", start)
        line = data[start : len(data) if end < 0 else end].rstrip(b"\r")
        if line.startswith(_BOM):
            line = line[len(_BOM) :]
        if _is_record(line, record_id, skip):
            return line
    return None


def section_scope(path: str, title: str, occurrence: int) -> HistoryScope:
    """The scope of the `occurrence`-th `## <title>` section of `path`.

    A section's lines hold nothing that names it except its heading, so git
    cannot filter its commits by content: every version of the file is read
    (`line_pattern` None) and the section compared.
    """
    return HistoryScope(path, whole_file=False, key=title, occurrence=occurrence)


def section_bytes(data: bytes, title: str, occurrence: int = 1) -> bytes | None:
    """The `occurrence`-th section headed `## <title>` in `data`: heading to next heading.

    A heading is a line starting with `## ` whose rest, stripped, is the
    title (as the reader reads it); the section runs to the next such line
    or the end of the file, blank lines included.  `history_split` finds
    every section the same way (a line whose title is not UTF-8 is never
    found: the needle searched for is the title's UTF-8).
    """
    for n, section in enumerate(title_sections(data, title), 1):
        if n == occurrence:
            return section
    return None


def title_sections(data: bytes, title: str) -> Iterator[bytes]:
    """Every section headed `## <title>` in `data`, in order (see `section_bytes`).

    Only lines holding the title's bytes are looked at, so it costs a byte
    search and a few steps per such line, whatever the file's size.
    """
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    needle = title.encode("utf-8", "surrogateescape")
    if not needle:
        return
    size = len(needle)
    pos = data.find(needle)
    while pos >= 0:
        after = data[pos + size : pos + size + 1]
        if after and after not in _SPACE_LEADS:
            # Not the end of a title (a heading's title is followed by
            # whitespace or the line's end): "Note 1" found in "Note 10".
            pos = data.find(needle, pos + 1)
            continue
        start = data.rfind(b"\n", 0, pos) + 1
        end = data.find(b"\n", pos)
        stop = len(data) if end < 0 else end
        line = data[start:stop]
        if line.startswith(b"## ") and line[3:].decode("utf-8", "replace").strip() == title:
            nxt = data.find(b"\n## ", stop)
            yield data[start : len(data) if nxt < 0 else nxt + 1]
        if end < 0:
            return
        pos = data.find(needle, stop)


__all__ = ["record_line", "record_scope", "section_bytes", "section_scope", "title_sections"]
