"""What the reviewer decided: "keep both" (and supersede with the old kept), per vault.

Stored in `<vault>/.memlens/review/decisions.json`:

    {"version": 1, "decisions": {"rv-…": {"action": "dismiss", "on": "2026-11-22",
                                          "members": {"<id>": "<sha256>", ...}}}}

A candidate is hidden while its entry's member hashes equal the members'
current hashes (`member_hash`: title, body, metadata fields, tags, archive
state); when either member changes, the pair comes back.  The file is
written through a Plan like every vault write (atomic, conflict-checked
against the bytes read, journaled, undoable).  A file that does not parse is
never rewritten: recording refuses and names it, and reading treats it as
"no decisions" so the queue still shows.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

from ..errors import RefusedError
from ..model import Memory
from ..safe_io import read_regular
from ..write.journal import STATE_DIR, FileChange, Plan
from ..write.writes import snapshot

DECISIONS_REL = f"{STATE_DIR}/review/decisions.json"
VERSION = 1


def member_hash(m: Memory) -> str:
    """A hash of what a reviewer judged of a memory: title, body, fields, tags, archive state."""
    payload = json.dumps(
        [m.title, m.body, m.fields, sorted(m.tags), m.archived],
        sort_keys=True,
        default=str,
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode("utf-8", "surrogateescape")).hexdigest()


def _parse(data: bytes, path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise RefusedError(f"{path}: not valid JSON ({exc}); not rewriting it") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("decisions"), dict):
        raise RefusedError(f"{path}: no 'decisions' mapping; not rewriting it")
    return doc


def load_decisions(root: Path) -> dict[str, dict[str, Any]]:
    """The decisions of the vault at `root` ({} when none or unreadable)."""
    path = root / DECISIONS_REL
    try:
        doc = _parse(read_regular(path), path)
    except (OSError, RefusedError):
        return {}
    return {k: v for k, v in doc["decisions"].items() if isinstance(v, dict)}


def is_settled(candidate_id: str, members: Sequence[Memory], decisions: dict[str, Any]) -> bool:
    """Whether a decision covers these members exactly as they are now."""
    entry = decisions.get(candidate_id)
    if not isinstance(entry, dict):
        return False
    return entry.get("members") == {m.id: member_hash(m) for m in members}


def plan_decision(
    root: Path, candidate_id: str, members: Sequence[Memory], action: str, on: date
) -> Plan:
    """A Plan recording `action` on the candidate, with the members' hashes as they are now."""
    path = root / DECISIONS_REL
    try:
        data: bytes | None = read_regular(path)
    except FileNotFoundError:
        data = None
    snap = snapshot(path, data) if data is not None else snapshot(path)
    doc: dict[str, Any] = (
        _parse(data, path) if data is not None else {"version": VERSION, "decisions": {}}
    )
    decided: dict[str, Any] = doc["decisions"]
    entry = {
        "action": action,
        "on": on.isoformat(),
        "members": {m.id: member_hash(m) for m in members},
    }
    if decided.get(candidate_id) == entry:
        raise RefusedError(f"{candidate_id}: already recorded as {action}")
    decided[candidate_id] = entry
    new = (json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
    return Plan(
        action,
        root,
        [m.id for m in members],
        f"{action}: remember {candidate_id} in {DECISIONS_REL} "
        "(it comes back if either memory changes)",
        [FileChange("create" if data is None else "write", path, snap, data=new)],
    )
