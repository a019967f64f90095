"""Where a Dream Cycle memory's versions are in git history: its section, or its archive entry.

A section is found in each version of observations.md (or
archived-observations.md) by its heading: the id is derived from the heading
text, `-2`, `-3` for a repeated heading, so the n-th heading with the same
text is the same memory.  An archive.jsonl entry is one line found by its id
(restore markers, which repeat the id, are not the entry).  An auto-archived
entry of archived-observations.md has an id not made from its heading: the
whole file is its scope (every commit that changed the file is listed).
"""

from __future__ import annotations

from typing import Any

from ...model import Memory
from ..adapter import HistoryScope
from ..history_parts import record_line, record_scope, section_bytes, section_scope
from .files import ARCHIVE_JSONL
from .ids import section_base_id


def _is_marker(obj: dict[str, Any]) -> bool:
    return obj.get("restored") is True


def history_scope(memory: Memory) -> HistoryScope:
    """The record scope of an archive entry, the section scope of a section."""
    if memory.path == ARCHIVE_JSONL:
        return record_scope(memory.path, memory.id)
    base = section_base_id(memory.title)
    if memory.id == base:
        return section_scope(memory.path, memory.title, 1)
    suffix = memory.id[len(base) + 1 :] if memory.id.startswith(base + "-") else ""
    if suffix.isdigit() and int(suffix) >= 2:
        return section_scope(memory.path, memory.title, int(suffix))
    return HistoryScope(memory.path)


def history_extract(scope: HistoryScope, data: bytes) -> bytes | None:
    """The entry's line or the section's bytes in one version of the file."""
    if scope.whole_file:
        return data
    if scope.path == ARCHIVE_JSONL:
        return record_line(data, scope.key, _is_marker)
    return section_bytes(data, scope.key, scope.occurrence)


__all__ = ["history_extract", "history_scope"]
