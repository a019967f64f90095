"""memory-search.py's per-file rules on the values it reads (`script_view`), both generations.

What each generation of the script computes from one file's fields, for an
explicit `as_of` (the script's `datetime.now()`; its age in whole days is the
date difference, whatever the time of day):

- first generation (`confidence`/`decay`, projectoceanx-lab/Ocean11 at
  4989190): confidence = the field (1.0 when absent; text that is no number
  reads 0.5); a file is *decayed*, and left out of the pool before the idf,
  when ``decay`` starts with ``linear-Nd`` or ``exponential-Nd`` and the age
  from ``created`` (``YYYY-MM-DD``) is over N days; its weight is 0 from age
  N on, else ``1 − age/N`` or ``e^(−3·age/N)``; no decay, no readable
  created date or another decay word: weight 1.0, never decayed;
- second generation (`importance`/`max_age`, main): importance = the field
  as a float (0.5 when absent); freshness 1.0 without ``created`` or with a
  ``max_age`` that is ``permanent`` or not ``Nd``; N doubled from importance
  0.8 and tripled from 0.9; 0.05 from age N on, else ``1 − 0.95·age/N``.

Where the script would stop with an exception (a zero-day lifespan and a
created date in the future, an importance that is no number) memlens takes
the limit or its own parsed value instead: the script has no answer to match.
"""

from __future__ import annotations

import math
import re
from datetime import date, datetime
from pathlib import Path
from typing import Any

from ...model import Memory
from .script_view import ScriptValue

_DECAY = re.compile(r"(linear|exponential)-(\d+)d")
_MAX_AGE = re.compile(r"(\d+)d")
#: The script's default source for a second-generation file without one.
GEN2_SOURCE_DEFAULT = "unknown"
SNIPPET_CHARS = 200


def _age(fields: dict[str, ScriptValue], as_of: date) -> int | None:
    """Whole days from ``created`` to `as_of`; None when absent or not ``YYYY-MM-DD``."""
    created = fields.get("created", "")
    if not created:
        return None
    try:
        day = datetime.strptime(str(created), "%Y-%m-%d").date()
    except ValueError:
        return None
    return (as_of - day).days


def _lifespan(fields: dict[str, ScriptValue]) -> tuple[str, int] | None:
    """(``linear`` or ``exponential``, N) from ``decay``, or None (no decay the script reads)."""
    decay = fields.get("decay", "")
    if not decay or not isinstance(decay, str):
        return None
    m = _DECAY.match(decay)
    return (m.group(1), int(m.group(2))) if m else None


def gen1_confidence(fields: dict[str, ScriptValue]) -> float:
    """The first generation's confidence: the field, 1.0 when absent, 0.5 for other text."""
    value = fields.get("confidence", 1.0)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return 0.5
    if isinstance(value, int | float):
        return value
    return 0.5  # a list: the script would fail comparing it


def gen1_decayed(fields: dict[str, ScriptValue], as_of: date) -> bool:
    """True when the first-generation script leaves the file out of its pool."""
    span = _lifespan(fields)
    age = _age(fields, as_of) if span is not None else None
    return span is not None and age is not None and age > span[1]


def gen1_weight(fields: dict[str, ScriptValue], as_of: date) -> float:
    """The first generation's decay weight (1.0 fresh, 0.0 at the end of the lifespan)."""
    span = _lifespan(fields)
    age = _age(fields, as_of) if span is not None else None
    if span is None or age is None:
        return 1.0
    mode, days = span
    if age >= days:
        return 0.0
    if days == 0:  # a future file with a zero-day lifespan: the script divides by zero
        return 0.0
    if mode == "linear":
        return 1.0 - (age / days)
    return math.exp(-3 * age / days)


def gen2_importance(fields: dict[str, ScriptValue], memory: Memory) -> float:
    """The second generation's importance: the field as a float, 0.5 when absent."""
    value = fields.get("importance", 0.5)
    try:
        return float(value)  # type: ignore[arg-type]  # a list fails, as in the script
    except (TypeError, ValueError):
        return float(memory.importance) if memory.importance is not None else 0.5


def gen2_freshness(fields: dict[str, ScriptValue], importance: float, as_of: date) -> float:
    """The second generation's freshness weight (1.0 new, 0.05 from its effective max age on)."""
    age = _age(fields, as_of)
    if age is None:
        return 1.0
    max_age = fields.get("max_age", "30d")
    if not max_age or max_age == "permanent":
        return 1.0
    m = _MAX_AGE.match(str(max_age))
    if m is None:
        return 1.0
    days = int(m.group(1))
    if importance >= 0.9:
        days *= 3
    elif importance >= 0.8:
        days *= 2
    if age >= days:
        return 0.05
    if days == 0:  # a future file with a zero max age: the script divides by zero
        return 0.05
    return 1.0 - (0.95 * age / days)


def tag_text(tags: object) -> str:
    """The tags joined by spaces (a text value joins its characters, as the script does)."""
    if isinstance(tags, list | str):
        return " ".join(tags)
    return ""


def tag_set(tags: object) -> set[str]:
    """What the script intersects with ``--tags`` (a text value: its characters)."""
    if isinstance(tags, list | str):
        return set(tags)
    return set()


def _common(memory: Memory, fields: dict[str, ScriptValue], body: str) -> dict[str, Any]:
    """The fields both generations print, with the script's absolute path."""
    root = memory.vault_root.resolve()
    path = root / memory.path
    return {
        "file": Path(memory.path).name,
        "path": str(path),
        "tags": fields.get("tags", []),
        "created": fields.get("created", ""),
        "snippet": body[:SNIPPET_CHARS].replace("\n", " "),
    }


def gen1_record(
    memory: Memory, fields: dict[str, ScriptValue], body: str, score: float, confidence: float
) -> dict[str, Any]:
    """One result in the first-generation script's ``--json`` shape and key order."""
    c = _common(memory, fields, body)
    # The script's default source: the folder three levels up (the agent, or the
    # repository's own folder name for shared/observations/).
    default_source = (memory.vault_root.resolve() / memory.path).parent.parent.parent.name
    return {
        "score": score,
        "file": c["file"],
        "path": c["path"],
        "source": fields.get("source", default_source),
        "tags": c["tags"],
        "confidence": confidence,
        "created": c["created"],
        "snippet": c["snippet"],
    }


def gen2_record(
    memory: Memory, fields: dict[str, ScriptValue], body: str, score: float, importance: float
) -> dict[str, Any]:
    """One result in the second-generation script's ``--json`` shape and key order."""
    c = _common(memory, fields, body)
    try:
        refs = int(fields.get("refs", 0))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        refs = int(memory.native.get("refs") or 0)
    return {
        "score": score,
        "file": c["file"],
        "path": c["path"],
        "source": fields.get("source", GEN2_SOURCE_DEFAULT),
        "tags": c["tags"],
        "importance": importance,
        "refs": refs,
        "verified": fields.get("verified", False),
        "created": c["created"],
        "snippet": c["snippet"],
    }


__all__ = [
    "gen1_confidence",
    "gen1_decayed",
    "gen1_record",
    "gen1_weight",
    "gen2_freshness",
    "gen2_importance",
    "gen2_record",
    "tag_set",
    "tag_text",
]
