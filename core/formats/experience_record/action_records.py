"""The WAL ops and view records memlens's actions append (raw experiences stay immutable)."""

from __future__ import annotations

import re
from typing import Any

from .schema import ARCHIVED_REASON, LENS_PIN, LENS_UNPIN, OP_RESTORE, OP_TOMBSTONE


def archive_op(exp_id: str, ts: str) -> dict[str, Any]:
    """The WAL op that archives an experience (reversible by `restore_op`)."""
    return {"ts": ts, "op": OP_TOMBSTONE, "target": "exp", "id": exp_id, "reason": ARCHIVED_REASON}


def restore_op(exp_id: str, ts: str) -> dict[str, Any]:
    """The WAL op that reverses an earlier archive of `exp_id`."""
    return {"ts": ts, "op": OP_RESTORE, "target": "exp", "id": exp_id}


def pin_view(view_id: str, exp_id: str, *, unpin: bool = False) -> dict[str, Any]:
    """A view record that pins (or, later in the file, unpins) an experience."""
    return {
        "id": view_id,
        "lens": LENS_UNPIN if unpin else LENS_PIN,
        "applied_to": [exp_id],
        "delta_from_raw": {"added": "", "removed": "", "reweighted": []},
        "provenance_braid": [exp_id],
    }


def next_wal_id(entries: list[dict[str, Any]]) -> str:
    """The next `wal_NNNNNN` id after the highest numbered one in `entries`."""
    highest = 0
    for entry in entries:
        m = re.fullmatch(r"wal_(\d+)", str(entry.get("wal_id", "")))
        if m:
            highest = max(highest, int(m.group(1)))
    return f"wal_{highest + 1:06d}"
