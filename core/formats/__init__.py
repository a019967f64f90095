"""Format adapters: one module per memory system, all behind `FormatAdapter`."""

from __future__ import annotations

from .adapter import FormatAdapter
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


def adapter_for(format_id: str) -> FormatAdapter:
    """The adapter for a format id; KeyError if unknown."""
    for adapter in ADAPTERS:
        if adapter.format_id == format_id:
            return adapter
    raise KeyError(format_id)


__all__ = ["ADAPTERS", "FORMAT_IDS", "FormatAdapter", "adapter_for"]
