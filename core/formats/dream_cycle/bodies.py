"""One section's body read from its own lines, not by parsing the whole store file.

A Dream Cycle store file holds thousands of sections; a search hit, a
snippet or a selected row needs one body.  The scan recorded each
section's first and last line (`native["start_line"]`, ``["end_line"]``), so
on the same bytes (the caller checked the file's sha256) those lines are
that section: parsed alone by the same section parser, they give the same
body.  Anything that does not match what was recorded (another title,
other bounds, a bad byte, the archive file's auto-archived sections) answers
None, and the caller parses the file as before.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...model import Memory
from .files import ARCHIVED_MD
from .reading import _BOM, _section_lines
from .sections import _parse_section


def section_bodies(rel: str, data: bytes, memories: Sequence[Memory]) -> dict[str, str] | None:
    """Each memory's body from its recorded lines; None when any cannot be read that way."""
    if rel == ARCHIVED_MD:
        return None  # auto-archived sections are read with their neighbours
    pos = 3 if data.startswith(_BOM) else 0
    import numpy as np  # here, not at import: listing a vault needs no numpy

    newlines = np.flatnonzero(np.frombuffer(data, dtype=np.uint8, offset=pos) == 0x0A) + pos
    out: dict[str, str] = {}
    for m in memories:
        start, end = m.native.get("start_line"), m.native.get("end_line")
        if not isinstance(start, int) or not isinstance(end, int) or not 1 <= start <= end:
            return None
        if end - 1 > len(newlines):
            return None
        lo = pos if start == 1 else int(newlines[start - 2]) + 1
        hi = int(newlines[end - 1]) + 1 if end - 1 < len(newlines) else len(data)
        lines, bad = _section_lines(data[lo:hi], start - 1)
        if bad is not None or not lines or not lines[0].startswith("## "):
            return None
        sec = _parse_section(lines, m.index or 0, 0, len(lines), start - 1)
        if sec.title != m.title or (sec.start_line, sec.end_line) != (start, end):
            return None
        out[m.id] = sec.body
    return out


__all__ = ["section_bodies"]
