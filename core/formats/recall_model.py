"""What `search --rank recall` asks a format: a plain query and the recall flags.

A format with its own recall formula (Project Ocean's memory-search.py)
ranks its vault's memories with it (`FormatAdapter.recall`); the others have
none and are ranked by memlens's relevance ranking instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any

from ..model import Memory


@dataclass(frozen=True, slots=True)
class RecallRequest:
    """A query in words, an explicit date, and the recall script's flags."""

    query: str
    as_of: date
    #: Only this agent's memories (and shared ones unless `no_shared`).
    agent: str | None = None
    no_shared: bool = False
    #: A hit needs one of these tags (none: no tag filter).
    tags: tuple[str, ...] = field(default_factory=tuple)
    min_importance: float = 0.0
    #: First generation: skip files whose confidence is below this.
    min_confidence: float = 0.0


@dataclass(frozen=True, slots=True)
class RecallHit:
    """One hit of a format's own recall ranking, with the parts of its score."""

    memory: Memory
    score: float
    explain: dict[str, Any]
    #: The hit as the format's own script prints it (Project Ocean: one
    #: memory-search.py ``--json`` result), for `search --format ocean`.
    record: dict[str, Any] | None = None


__all__ = ["RecallHit", "RecallRequest"]
