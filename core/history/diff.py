"""What changed in one entry of a memory's history: its metadata fields and a unified diff.

The diff is of the memory's own bytes (a section, a record line, a whole
file), so it shows metadata and body together as they are written; the
fields are read with the format's own reader, so a reordered or re-quoted
header that means the same is not reported as a field change.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..formats import adapter_for
from ..model import Memory
from .versions import Entry, History

#: Lines of context around each change in a diff.
CONTEXT = 3


def text_of(data: bytes | None) -> str:
    """Bytes of a version as text; a byte that is not UTF-8 is shown as `\\xNN`."""
    if data is None:
        return ""
    return data.decode("utf-8", "backslashreplace")


def unified_diff(before: bytes | None, after: bytes | None, old: str, new: str) -> list[str]:
    """The unified diff of two versions, one string per line (no line ends)."""
    a = text_of(before).splitlines()
    b = text_of(after).splitlines()
    return list(
        difflib.unified_diff(
            a,
            b,
            f"a/{old}" if before is not None else "/dev/null",
            f"b/{new}" if after is not None else "/dev/null",
            n=CONTEXT,
            lineterm="",
        )
    )


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One metadata field whose value differs between two versions (None: absent)."""

    name: str
    before: Any
    after: Any


def parse_version(memory: Memory, rel: str, data: bytes | None) -> Memory | None:
    """The memory as its format reads `data` (its bytes in one version); None if unreadable.

    The bytes are read as if they were the file at `rel` (the memory's file
    at that version, or its file now when that path left the vault), so a
    section or a record is read on its own.
    """
    if data is None:
        return None
    adapter = adapter_for(memory.format)
    root = memory.vault_root
    where = rel if not rel.startswith("../") else memory.path
    scan = adapter.scan_file(root, Path(root, where), data)
    same = [m for m in scan.memories if m.id == memory.id]
    found = same or scan.memories
    return found[0] if found else None


def field_changes(memory: Memory, entry: Entry) -> tuple[list[FieldChange], bool]:
    """The metadata fields that changed in `entry`, and whether the body changed."""
    old = parse_version(memory, entry.old_path or entry.path, entry.before)
    new = parse_version(memory, entry.path, entry.after)
    a: dict[str, Any] = dict(old.fields) if old is not None else {}
    b: dict[str, Any] = dict(new.fields) if new is not None else {}
    changes = [
        FieldChange(name, a.get(name), b.get(name))
        for name in [*a, *(n for n in b if n not in a)]
        if a.get(name) != b.get(name)
    ]
    body_changed = (old.body if old is not None else None) != (
        new.body if new is not None else None
    )
    return changes, body_changed


def entry_diff(history: History, entry: Entry) -> list[str]:
    """The unified diff of the memory in `entry`."""
    return unified_diff(entry.before, entry.after, entry.old_path or entry.path, entry.path)


__all__ = [
    "FieldChange",
    "entry_diff",
    "field_changes",
    "parse_version",
    "text_of",
    "unified_diff",
]
