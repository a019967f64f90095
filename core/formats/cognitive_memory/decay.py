"""Cognitive-memory decay: the score from type weight, age and use, its status bands,
and the arithmetic explained in words.
"""

from __future__ import annotations

import math
from datetime import date

from ...model import Memory
from ...text.dates import day_of, parse_datetime
from .schema import VAULT_DIR

#: Per-type multiplier in the decay score (spec "Type Weights").
TYPE_WEIGHTS: dict[str, float] = {
    "procedure": 1.4,
    "decision": 1.3,
    "insight": 1.25,
    "solution": 1.2,
    "code_pattern": 1.1,
    "configuration": 1.1,
    "fix": 1.0,
    "workflow": 1.0,
    "problem": 0.9,
    "error": 0.8,
    "general": 0.8,
}

#: Decay rate per day (half-life ~23 days).
LAMBDA = 0.03
#: Usage factor for a memory never accessed ("new memories start at half strength").
UNUSED_USAGE = 0.5
#: Status thresholds on the decay score (lower bounds, inclusive).
ACTIVE_THRESHOLD = 0.5
FADING_THRESHOLD = 0.2
DORMANT_THRESHOLD = 0.05
#: (lower bound, status), highest first; below the last one the status is "archived".
STATUS_THRESHOLDS: tuple[tuple[float, str], ...] = (
    (ACTIVE_THRESHOLD, "active"),
    (FADING_THRESHOLD, "fading"),
    (DORMANT_THRESHOLD, "dormant"),
)
STATUSES: tuple[str, ...] = ("active", "fading", "dormant", "archived")
#: Score of a pinned memory in vault/ ("effectively infinite").
VAULT_SCORE = 999.0


def usage_factor(access_count: int) -> float:
    """log2(access_count + 1), or 0.5 for a memory never accessed."""
    if access_count <= 0:
        return UNUSED_USAGE
    return math.log2(access_count + 1)


def decay_score(importance: float, days: int, access_count: int, kind: str) -> float:
    """The spec's score for `days` since last access (unrounded)."""
    return (
        importance
        * math.exp(-LAMBDA * max(0, days))
        * usage_factor(access_count)
        * TYPE_WEIGHTS.get(kind, 1.0)
    )


def status_for_score(score: float) -> str:
    """active / fading / dormant / archived by the spec's thresholds."""
    for bound, status in STATUS_THRESHOLDS:
        if score >= bound:
            return status
    return "archived"


def days_until_below(
    importance: float, access_count: int, kind: str, threshold: float = DORMANT_THRESHOLD
) -> int:
    """Smallest whole number of days since access at which the score is below `threshold`.

    Solved from the closed form, then nudged by one day either way so that
    floating-point error never puts it off by one.  0 if it is below already
    at day 0.
    """
    if decay_score(importance, 0, access_count, kind) < threshold:
        return 0
    base = importance * usage_factor(access_count) * TYPE_WEIGHTS.get(kind, 1.0)
    if base <= 0:
        return 0
    d = max(0, math.floor(math.log(base / threshold) / LAMBDA) + 1)
    while d > 0 and decay_score(importance, d - 1, access_count, kind) < threshold:
        d -= 1
    while decay_score(importance, d, access_count, kind) >= threshold:
        d += 1
    return d


def _decay_numbers(memory: Memory, as_of: date) -> tuple[float, int, date, str, int, float] | None:
    """(importance, access count, last access day, its origin, days, score); None: pinned."""
    if memory.pinned or memory.native.get("area") == VAULT_DIR:
        return None
    importance = memory.importance if memory.importance is not None else 0.0
    count_raw = memory.native.get("access_count", 0)
    access_count = count_raw if isinstance(count_raw, int) and count_raw > 0 else 0
    last_raw = parse_datetime(memory.native.get("last_accessed"))
    if last_raw is not None:
        last_day = day_of(last_raw)
        source = "state"
    elif memory.created is not None:
        last_day = day_of(memory.created)
        source = "created"
    else:
        last_day = as_of
        source = "as_of"
    days = max(0, (as_of - last_day).days)
    return (
        importance,
        access_count,
        last_day,
        source,
        days,
        decay_score(importance, days, access_count, memory.kind),
    )


def _fmt(x: float) -> str:
    return f"{x:g}"


_THRESHOLDS_TEXT = "(thresholds: ≥0.5 active, 0.2–0.5 fading, 0.05–0.2 dormant, <0.05 archived)"


def _arithmetic(
    memory: Memory,
    as_of: date,
    importance: float,
    access_count: int,
    last_day: date,
    origin: str,
    days: int,
    score: float,
) -> str:
    """The decay score's arithmetic in words (for `decay`'s explanation)."""
    if origin == "state":
        source = f"_state.json last_accessed {last_day.isoformat()}"
    elif origin == "created":
        source = (
            f"no _state.json last_accessed → access_count {access_count} and last access "
            f"taken as created {last_day.isoformat()}"
        )
    else:
        source = "no last access or created date → counted from as_of"
    weight_t = TYPE_WEIGHTS.get(memory.kind, 1.0)
    usage = usage_factor(access_count)
    usage_text = (
        f"log2({access_count} + 1) = {round(usage, 4)}"
        if access_count > 0
        else f"{UNUSED_USAGE} (access_count = 0)"
    )
    return (
        f"{source}; days_since_access = {as_of.isoformat()} − {last_day.isoformat()} = {days}; "
        f"score = importance {_fmt(importance)} × e^(−{LAMBDA}×{days}) "
        f"[{math.exp(-LAMBDA * days):.4f}] × usage_factor {usage_text} × "
        f"type_weight({memory.kind}) {_fmt(weight_t)} = {round(score, 4)}"
    )
