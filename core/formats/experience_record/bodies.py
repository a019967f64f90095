"""One experience's text read from its own line of experiences.jsonl, not the whole file.

The file grows by one JSON line per experience (tens of thousands); a
search hit or a selected row needs one text.  The scan recorded each
memory's 1-based line, so on the same bytes (the caller checked the sha256)
that line is that record.  Anything unexpected (another id, no text, a
tombstoned record whose text the WAL erased) answers None, and the
caller parses the file as before.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ...model import Memory
from .jsonl import _BOM
from .schema import EXPERIENCES


def record_bodies(rel: str, data: bytes, memories: Sequence[Memory]) -> dict[str, str] | None:
    """Each memory's body from its recorded line; None when any cannot be read that way."""
    if rel != EXPERIENCES:
        return None
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    import numpy as np  # here, not at import: listing a vault needs no numpy

    newlines = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 0x0A)
    out: dict[str, str] = {}
    for m in memories:
        line = m.line
        if m.tombstoned or not isinstance(line, int) or not 1 <= line <= len(newlines) + 1:
            return None
        lo = 0 if line == 1 else int(newlines[line - 2]) + 1
        hi = int(newlines[line - 1]) if line - 1 < len(newlines) else len(data)
        raw = data[lo:hi]
        try:
            obj = json.loads(raw.removesuffix(b"\r").decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            return None
        content = obj.get("content") if isinstance(obj, dict) else None
        text = content.get("text") if isinstance(content, dict) else None
        if obj.get("id") != m.id or not isinstance(text, str):
            return None
        out[m.id] = text
    return out


__all__ = ["record_bodies"]
