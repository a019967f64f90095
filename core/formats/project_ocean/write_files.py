"""Observation files as the writer reads them (re-parsed and checked against the Memory
shown), where a move puts them, and the plans that write or move one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import ConflictError, ParseError, RefusedError, UnsafePathError
from ...model import Memory
from ...safe_io import read_regular
from ...text.paths import safe_join, safe_name
from ...text.yamledit import edit_frontmatter
from ...write.journal import FileChange, Plan
from ...write.writes import FileSnapshot, WriteError, snapshot
from .locations import locate
from .observations import parse_observation
from .schema import FORMAT_ID, SHARED


@dataclass(frozen=True, slots=True)
class _Loaded:
    """One observation file as it is on disk now, re-parsed and checked."""

    root: Path
    rel: str
    path: Path
    data: bytes
    raw: str  # decoded text with the BOM and the original line endings
    snap: FileSnapshot
    fresh: Memory


def promoted_name(memory: Memory) -> str:
    """The shared copy's file name: the same name (first generation), or
    `<agent>-<name>` as the second generation's memory-promote.py names it."""
    name = safe_name(Path(memory.path).name)
    if memory.native.get("generation") == 2:
        return safe_name(f"{memory.native.get('agent', '')}-{name}")
    return name


def destination(memory: Memory, action: str) -> str:
    """Vault-relative path an archive / restore / promote of `memory` goes to.

    The file name is kept; only the folder changes (so the id's stem stays).
    """
    name = safe_name(Path(memory.path).name)
    agent = str(memory.native.get("agent", ""))
    shared = bool(memory.native.get("shared"))
    if action == "promote":
        return f"shared/observations/{promoted_name(memory)}"
    if action == "archive":
        if shared:
            return f"shared/observations/archive/{name}"
        return f"agents/{safe_name(agent)}/memory/archive/{name}"
    if action == "restore":
        if agent == SHARED and memory.path.startswith("shared/"):
            return f"shared/observations/{name}"
        return f"agents/{safe_name(agent)}/memory/vault/{name}"
    raise ValueError(f"no destination for {action!r}")


def _same(a: Any, b: Any) -> bool:
    """Equal values of the same type (`true` is not `1`); a NaN equals itself."""
    return repr(a) == repr(b) or (type(a) is type(b) and bool(a == b))


def _load(memory: Memory) -> _Loaded:
    """Re-read the memory's file now; ConflictError if it is not what the user saw."""
    if memory.format != FORMAT_ID:
        raise RefusedError(f"{memory.id} is a {memory.format} memory, not {FORMAT_ID}")
    root = memory.vault_root
    rel = memory.path
    loc = locate(root, rel)
    if loc is None or loc.id != memory.id:
        raise RefusedError(f"{rel!r} is not where Project Ocean keeps {memory.id}")
    path = safe_join(root, *rel.split("/"))
    if path.is_symlink():
        raise UnsafePathError(f"{rel} is a symbolic link; memlens does not write through links")
    try:
        data = read_regular(path)
    except FileNotFoundError:
        raise ConflictError(f"{rel}: {memory.id} was moved or deleted since it was read") from None
    except OSError as exc:
        raise WriteError(f"{rel}: cannot read: {exc.strerror or exc}") from exc
    snap = snapshot(path, data)
    try:
        fresh = parse_observation(root, rel, data)
    except ParseError as err:
        raise ConflictError(
            f"{rel}: {memory.id} changed on disk since it was read (now invalid: {err.detail})"
        ) from None
    if not _same(fresh.fields, memory.fields) or fresh.body != memory.body:
        raise ConflictError(f"{rel}: {memory.id} changed on disk since it was read")
    return _Loaded(root, rel, path, data, data.decode("utf-8"), snap, fresh)


def _edit(raw: str, changes: dict[str, Any], what: str) -> str:
    """edit_frontmatter, with its refusals naming the field(s)."""
    try:
        return edit_frontmatter(raw, changes)
    except RefusedError as exc:
        raise RefusedError(f"{what}: {exc}") from None


def _validate(root: Path, rel: str, new: str, what: str) -> Memory:
    """Parse the new text with the adapter's rules; RefusedError naming the field."""
    try:
        return parse_observation(root, rel, new.encode("utf-8"))
    except ParseError as err:
        raise RefusedError(f"{what}: {err.detail} ({err.reason.value}); not written") from None


def _closing_fence(lines: list[str]) -> int | None:
    """Index of the line closing the frontmatter (as the adapter splits it)."""
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r\n").rstrip() in ("---", "..."):
            return i
    return None


def _write_plan(action: str, doc: _Loaded, new: str, summary: str) -> Plan:
    change = FileChange(kind="write", path=doc.path, expected=doc.snap, data=new.encode("utf-8"))
    return Plan(
        action=action,
        vault_root=doc.root,
        memory_ids=[doc.fresh.id],
        summary=summary,
        changes=[change],
    )


def _move_plan(action: str, doc: _Loaded, dst_rel: str, summary: str) -> Plan:
    dst = safe_join(doc.root, *dst_rel.split("/"))
    if os.path.lexists(dst):
        raise RefusedError(
            f"{dst_rel} already exists; memlens never overwrites a file on a move "
            f"({doc.fresh.id} left where it is)"
        )
    # The bytes do not change, but the new place must still read as one valid memory.
    _validate(doc.root, dst_rel, doc.raw, action)
    change = FileChange(kind="move", path=doc.path, expected=doc.snap, dst=dst)
    return Plan(
        action=action,
        vault_root=doc.root,
        memory_ids=[doc.fresh.id],
        summary=summary,
        changes=[change],
    )
