"""Putting back an earlier version of a memory that is a whole file (history's restore).

Project Ocean, cognitive-memory and observation/v1 keep one memory per
file, so an earlier version is the file's earlier bytes: written back, whole,
to where the memory is now (a version from before an archive move restores
the content, not the location: `restore` and `archive` move files).  The
plan is an ordinary journaled write: conflict-checked against the bytes the
user saw, undoable, and refused when the old bytes would not read as this
same memory.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ConflictError, RefusedError, UnsafePathError
from ..model import Memory
from ..safe_io import read_regular
from ..text.paths import safe_join
from ..write.journal import FileChange, Plan
from ..write.writes import WriteError, snapshot
from .adapter import FormatAdapter


def plan_file_version(
    adapter: FormatAdapter, memory: Memory, data: bytes, expected: bytes | None
) -> Plan:
    """Replace the memory's file with `data`; `expected` is the file as the user saw it."""
    if memory.format != adapter.format_id:
        raise RefusedError(f"{memory.id} is a {memory.format} memory, not {adapter.format_id}")
    root = memory.vault_root
    rel = memory.path
    path = safe_join(root, *rel.split("/"))
    if path.is_symlink():
        raise UnsafePathError(f"{rel} is a symbolic link; memlens does not write through links")
    try:
        now = read_regular(path)
    except FileNotFoundError:
        raise ConflictError(f"{rel}: {memory.id} was moved or deleted since it was read") from None
    except OSError as exc:
        raise WriteError(f"{rel}: cannot read: {exc.strerror or exc}") from exc
    if expected is not None and now != expected:
        raise ConflictError(f"{rel}: {memory.id} changed on disk since its history was read")
    if now == data:
        raise RefusedError(f"{rel}: that version is the memory as it is now; nothing to restore")
    check_version(adapter, memory, path, data)
    change = FileChange("write", path, snapshot(path, now), data=data)
    return Plan(
        "restore_version",
        root,
        [memory.id],
        f"restore an earlier version of {rel} (the whole file, {len(data)} bytes)",
        [change],
    )


def check_version(adapter: FormatAdapter, memory: Memory, path: Path, data: bytes) -> None:
    """Refuse bytes that would not read as a valid memory with the same id at `path`."""
    scan = adapter.scan_file(memory.vault_root, path, data)
    if any(m.id == memory.id for m in scan.memories):
        return
    why = next((p.detail for p in scan.problems), "it holds another memory")
    raise RefusedError(
        f"{memory.path}: that version would not read as {memory.id} here ({why}); not written"
    )


__all__ = ["check_version", "plan_file_version"]
