"""The registry: the only list of formats.

Adding a format means one package under `core/formats/` with an adapter
subclassing `FormatAdapter` (its facts in a `FormatInfo`), and one line in
`_REGISTRY` below.  Everything outside `core/formats/` asks this module
(`adapter_for`, `info_for`, `format_ids_where`) instead of naming a format.

A format's package is imported the first time its adapter is asked for,
not with this module: a command on one vault then loads one format, not
five (a warm `memlens search` on a cognitive-memory vault imported the other
four for nothing: 30-50 ms of its ~1 s).  Finding a folder's format asks each
package's light `detection` module (`detects`), not its adapter;
`adapters()` (every format's facts) loads them all.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import cast

from .adapter import FormatAdapter, FormatInfo

#: Every format as (id, its package, the adapter class in its `adapter` module),
#: in detection order (most specific markers first).  Each package also has a
#: `detection` module with `detect(root) -> bool`, importing nothing heavy.
_REGISTRY: tuple[tuple[str, str, str], ...] = (
    ("experience-records", "experience_record", "ExperienceRecordAdapter"),
    ("project-ocean", "project_ocean", "ProjectOceanAdapter"),
    ("cognitive-memory", "cognitive_memory", "CognitiveMemoryAdapter"),
    ("observation-v1", "observation_v1", "ObservationV1Adapter"),
    ("dream-cycle", "dream_cycle", "DreamCycleAdapter"),
)

FORMAT_IDS: tuple[str, ...] = tuple(format_id for format_id, _package, _name in _REGISTRY)

_WHERE: dict[str, tuple[str, str]] = {fid: (package, name) for fid, package, name in _REGISTRY}
_LOADED: dict[str, FormatAdapter] = {}
_DETECTORS: dict[str, Callable[[Path], bool]] = {}
_LOCK = threading.Lock()


def adapter_for(format_id: str) -> FormatAdapter:
    """The adapter for a format id (its package imported on first use); KeyError if unknown."""
    found = _LOADED.get(format_id)
    if found is not None:
        return found
    package, name = _WHERE[format_id]
    with _LOCK:  # one adapter per format, whichever thread asks first
        found = _LOADED.get(format_id)
        if found is None:
            cls = vars(import_module(f".{package}.adapter", __package__))[name]
            found = cls()
            if not isinstance(found, FormatAdapter) or found.format_id != format_id:
                raise TypeError(f"the registry's {format_id} entry names {cls!r}")
            _LOADED[format_id] = found
    return found


def detects(format_id: str, root: Path) -> bool:
    """Whether `root` carries the format's markers (its adapter's `detect`, without
    importing the adapter); KeyError if unknown.  May raise OSError."""
    found = _DETECTORS.get(format_id)
    if found is None:
        package, _name = _WHERE[format_id]
        module = import_module(f".{package}.detection", __package__)
        found = _DETECTORS[format_id] = cast(Callable[[Path], bool], vars(module)["detect"])
    return found(root)


def adapters() -> tuple[FormatAdapter, ...]:
    """Every adapter, in detection order (every format's package imported)."""
    return tuple(map(adapter_for, FORMAT_IDS))


def info_for(format_id: str) -> FormatInfo:
    """The facts of a format; KeyError if unknown."""
    return adapter_for(format_id).info


def format_infos() -> tuple[FormatInfo, ...]:
    """Every format's facts, in registry order."""
    return tuple(a.info for a in adapters())


def format_ids_where(test: Callable[[FormatInfo], bool]) -> frozenset[str]:
    """Ids of the formats whose facts pass `test` (a capability, not a name)."""
    return frozenset(i.id for i in format_infos() if test(i))


__all__ = [
    "FORMAT_IDS",
    "FormatAdapter",
    "FormatInfo",
    "adapter_for",
    "adapters",
    "detects",
    "format_ids_where",
    "format_infos",
    "info_for",
]
