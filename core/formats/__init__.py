"""The registry: the only list of formats.

Adding a format means one package under `core/formats/` with an adapter
subclassing `FormatAdapter` (its facts in a `FormatInfo`), and one line in
`ADAPTERS` below.  Everything outside `core/formats/` asks this module
(`adapter_for`, `info_for`, `format_ids_where`) instead of naming a format.
"""

from __future__ import annotations

from collections.abc import Callable

from .adapter import FormatAdapter, FormatInfo
from .cognitive_memory.adapter import CognitiveMemoryAdapter
from .dream_cycle.adapter import DreamCycleAdapter
from .experience_record.adapter import ExperienceRecordAdapter
from .observation_v1.adapter import ObservationV1Adapter
from .project_ocean.adapter import ProjectOceanAdapter

#: Every adapter, in detection order (most specific markers first).
ADAPTERS: tuple[FormatAdapter, ...] = (
    ExperienceRecordAdapter(),
    ProjectOceanAdapter(),
    CognitiveMemoryAdapter(),
    ObservationV1Adapter(),
    DreamCycleAdapter(),
)

FORMAT_IDS: tuple[str, ...] = tuple(a.format_id for a in ADAPTERS)

#: Every format's facts, in registry order.
FORMAT_INFOS: tuple[FormatInfo, ...] = tuple(a.info for a in ADAPTERS)

_BY_ID: dict[str, FormatAdapter] = {a.format_id: a for a in ADAPTERS}


def adapter_for(format_id: str) -> FormatAdapter:
    """The adapter for a format id; KeyError if unknown."""
    return _BY_ID[format_id]


def info_for(format_id: str) -> FormatInfo:
    """The facts of a format; KeyError if unknown."""
    return _BY_ID[format_id].info


def format_ids_where(test: Callable[[FormatInfo], bool]) -> frozenset[str]:
    """Ids of the formats whose facts pass `test` (a capability, not a name)."""
    return frozenset(i.id for i in FORMAT_INFOS if test(i))


__all__ = [
    "ADAPTERS",
    "FORMAT_IDS",
    "FORMAT_INFOS",
    "FormatAdapter",
    "FormatInfo",
    "adapter_for",
    "format_ids_where",
    "info_for",
]
