"""Every format's writer: importing this module registers them all; `writer_for` finds one.

A format's writer is the `writer` module of its package (`<format>/writer.py`),
which calls `writing.register_writer(...)` at import time.  The packages come
from the registry, so a new format needs no line here; a format without a
writer yet is simply read-only (`writer_for` refuses its actions).
"""

from __future__ import annotations

import importlib
import importlib.util

from ..errors import RefusedError
from . import adapters
from .writing import FormatWriter, registered_writer


def _writer_module(package: str) -> str | None:
    """`<package>.writer` if that module exists, else None."""
    name = f"{package}.writer"
    return name if importlib.util.find_spec(name) is not None else None


#: The writer module of every registered format that has one, in registry order.
WRITER_MODULES: tuple[str, ...] = tuple(
    name
    for adapter in adapters()
    if (name := _writer_module(type(adapter).__module__.rpartition(".")[0])) is not None
)

for _name in WRITER_MODULES:
    importlib.import_module(_name)


def writer_for(format_id: str) -> FormatWriter:
    """The writer of a format; RefusedError if it has none."""
    writer = registered_writer(format_id)
    if writer is None:
        raise RefusedError(f"{format_id} memories cannot be changed by memlens yet")
    return writer
