"""Decay across formats: dispatch to each adapter's own arithmetic.

Every computation takes an explicit `as_of`; nothing here reads the clock.
The per-format rules live in `core/formats/<format>/decay.py`; what they share
(the health mapping, the importance bands) is in `core/health.py`, below the
formats, because this module sits above them: it dispatches to the adapters
and holds the cross-format helpers the app and CLI use (forecasts, archive
candidates).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import date, timedelta
from typing import TYPE_CHECKING

from .model import DecayInfo, Health, Memory

if TYPE_CHECKING:  # only for the annotation: scanning is not needed to decay
    from .scan.vault import Catalog


def decay_of(memory: Memory, as_of: date, *, explain: bool = True) -> DecayInfo:
    """Decay of one memory, by its format's adapter (`explain` False: no `why`)."""
    # Deferred on purpose, not for a cycle: the CLI's list/show/decay/watch
    # modules import this one, and their `--help` must not load the formats.
    from .formats import adapter_for

    return adapter_for(memory.format).decay(memory, as_of, explain=explain)


def health_counts(infos: Iterable[DecayInfo]) -> Counter[Health]:
    return Counter(i.health for i in infos)


def fades_within(memory: Memory, as_of: date, days: int) -> bool:
    """True if the memory is not expired/fading at `as_of` but is `days` later."""
    now = decay_of(memory, as_of, explain=False).health
    if now not in (Health.ACTIVE, Health.STABLE):
        return False
    later = decay_of(memory, as_of + timedelta(days=days), explain=False).health
    return later in (Health.FADING, Health.EXPIRED)


def forecast(
    memories: Iterable[Memory], as_of: date, horizons: tuple[int, ...] = (7, 30, 90)
) -> dict[int, int]:
    """How many currently healthy memories fade or expire within each horizon."""
    mems = list(memories)
    return {h: sum(1 for m in mems if fades_within(m, as_of, h)) for h in horizons}


def archive_candidates(catalog: Catalog, as_of: date) -> list[tuple[Memory, list[str]]]:
    """Memories the formats' own decay runs would archive as of `as_of`, with labelled reasons.

    Dream Cycle: TTL expired or importance below 3.0; Project Ocean: age past
    the lifespan; cognitive memory: score below the archive threshold.  What
    each format calls expired comes from its adapter (`archive_reasons`, else
    an expired health).  Pinned, already archived and tombstoned memories are
    never candidates.  `memlens decay` and the app's "archive everything
    expired" run share this selection.
    """
    out: list[tuple[Memory, list[str]]] = []
    for m in catalog.memories():
        if m.pinned or m.archived or m.tombstoned:
            continue
        d = decay_of(m, as_of, explain=False)
        reasons = list(d.archive_reasons)
        if not reasons and d.health is Health.EXPIRED:
            reasons = [f"{d.status}"]
        if reasons:
            out.append((m, reasons))
    return out
