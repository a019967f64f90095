"""What a Dream Cycle agent loads: observations.md, and what its decay takes out soon.

Total Recall loads `observations.md` whole, so every live section is in the
load, in file order (archive.jsonl and archived-observations.md are not).
The decay run (`runs.decay_run`) archives a tagged, dated section whose TTL
has expired or whose current importance is below 3.0, unless its ttl is
`never`.  The preview applies that rule at `as_of` + 7 and + 30 days: the
30-day list includes the 7-day one, and a section already due at `as_of`
(the next run archives it) is in both, "due now".  Each entry carries the
first day it would leave and the reasons the run would record.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta
from pathlib import Path

from ...model import Memory
from ..adapter import FormatAdapter
from ..preview_model import (
    STAGE_LEAVING,
    STAGE_LOAD,
    PreviewEntry,
    PreviewRequest,
    PreviewSection,
)
from .files import OBSERVATIONS

#: The horizons the preview looks ahead (days after `as_of`).
HORIZONS = (7, 30)


def _section_text(m: Memory) -> str:
    """The section as the agent reads it: heading line and body."""
    return f"## {m.title}\n{m.body}"


def _leaving_reasons(adapter: FormatAdapter, m: Memory, when: date) -> tuple[str, ...]:
    """The reasons the decay run would archive `m` on `when` (empty: it stays)."""
    if not m.native.get("tagged") or m.native.get("date") is None:
        return ()  # undated: the decay run skips it
    if m.native.get("ttl") is None:
        return ()  # ttl=never: kept whatever its importance
    return tuple(adapter.decay(m, when, explain=False).archive_reasons)


def _first_day(adapter: FormatAdapter, m: Memory, as_of: date, horizon: int) -> int | None:
    """Days after `as_of` until the run would first archive `m`, if within `horizon`.

    Importance only falls and age only grows, so "would archive" is monotone
    in the date and a binary search finds the first day.
    """
    if not _leaving_reasons(adapter, m, as_of + timedelta(days=horizon)):
        return None
    lo, hi = 0, horizon
    while lo < hi:
        mid = (lo + hi) // 2
        if _leaving_reasons(adapter, m, as_of + timedelta(days=mid)):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _loaded_entry(adapter: FormatAdapter, m: Memory, as_of: date) -> PreviewEntry:
    info = adapter.decay(m, as_of, explain=False)
    return PreviewEntry(
        id=m.id,
        title=m.title,
        path=m.path,
        text=_section_text(m),
        score=info.current_importance,
        note=f"{info.status}, importance {info.current_importance}",
        details={"index": m.index, "type": m.kind, "status": info.status},
        memory=m,
    )


def _leaving_entry(
    adapter: FormatAdapter, m: Memory, as_of: date, days: int, horizon: int
) -> PreviewEntry:
    when = as_of + timedelta(days=days)
    at_horizon = adapter.decay(m, as_of + timedelta(days=horizon), explain=False)
    reasons = _leaving_reasons(adapter, m, when)
    return PreviewEntry(
        id=m.id,
        title=m.title,
        path=m.path,
        text=_section_text(m),
        score=at_horizon.current_importance,
        note=("due now" if days == 0 else f"in {days} days") + ": " + "; ".join(reasons),
        details={
            "index": m.index,
            "type": m.kind,
            "leaves_on": when.isoformat(),
            "in_days": days,
            "reasons": list(reasons),
        },
        memory=m,
    )


def observations_preview(
    adapter: FormatAdapter, root: Path, memories: Sequence[Memory], request: PreviewRequest
) -> list[PreviewSection]:
    """observations.md as loaded at `as_of`, and what decays out within 7 and 30 days."""
    as_of = request.as_of
    live = sorted(
        (m for m in memories if m.path == OBSERVATIONS and not m.archived),
        key=lambda m: m.index or 0,
    )
    sections = [
        PreviewSection(
            key="observations",
            title=f"{OBSERVATIONS} as loaded",
            stage=STAGE_LOAD,
            entries=tuple(_loaded_entry(adapter, m, as_of) for m in live),
            note=f"{len(live)} sections, loaded whole at session start",
        )
    ]
    longest = max(HORIZONS)
    first = {m.id: _first_day(adapter, m, as_of, longest) for m in live}
    for horizon in HORIZONS:
        leaving = [(m, first[m.id]) for m in live]
        entries = tuple(
            _leaving_entry(adapter, m, as_of, days, horizon)
            for m, days in leaving
            if days is not None and days <= horizon
        )
        sections.append(
            PreviewSection(
                key=f"decays_{horizon}",
                title=f"Decays out within {horizon} days",
                stage=STAGE_LEAVING,
                entries=entries,
                note=(
                    f"by {(as_of + timedelta(days=horizon)).isoformat()}: TTL expired or "
                    "importance below 3.0 (the decay run's rule; ttl=never stays)"
                ),
                details={"horizon_days": horizon},
            )
        )
    return sections


__all__ = ["HORIZONS", "observations_preview"]
