"""The texts an erased (tombstoned) experience's raw line still holds, for the privacy scan.

The raw store is append-only: a tombstone hides a record from every reader
but leaves its bytes in experiences.jsonl (the spec's erasure is done by
purging the record's key, `purge_key`, outside the file).  The scan reports
what is still in the file, so it reads the line itself.
"""

from __future__ import annotations

import json

from ...model import Memory
from ..privacy_model import TextField, walk_strings


def raw_line_text_fields(memory: Memory, raw: str | None) -> list[TextField]:
    """Every string of the record's raw line (none when the line is not a JSON object)."""
    if raw is None or memory.line is None:
        return []
    lines = raw.splitlines()
    if not 1 <= memory.line <= len(lines):
        return []
    try:
        record = json.loads(lines[memory.line - 1].lstrip("\ufeff"))
    except ValueError:
        return []
    if not isinstance(record, dict):
        return []
    return [TextField(n, t, memory.line) for n, t in walk_strings(record, "") if t.strip()]
