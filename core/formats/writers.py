"""Importing this module registers every format's writer with core.actions.

Each `<format>_writer.py` module calls `register_writer(...)` at import time.
Add a format's writer module to the list below when it is written.
"""

from __future__ import annotations

import importlib

WRITER_MODULES: tuple[str, ...] = (
    "project_ocean.writer",
    "experience_record.writer",
    "cognitive_memory.writer",
    "observation_v1.writer",
    "dream_cycle.writer",
)

for _name in WRITER_MODULES:
    importlib.import_module(f"{__package__}.{_name}")
