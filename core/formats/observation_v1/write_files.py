"""Documents as the writer reads them (re-parsed and checked against the Memory shown)
and the plans that write or move one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import ConflictError, ParseError, RefusedError, UnsafePathError
from ...model import Memory
from ...safe_io import read_regular
from ...text.paths import is_inside, safe_join
from ...text.textio import decode_bytes
from ...text.yamledit import REMOVE, render_scalar
from ...write.journal import FileChange, Plan
from ...write.writes import FileSnapshot, snapshot
from .documents import parse_document
from .schema import FORMAT_ID, folder_of


@dataclass(frozen=True, slots=True)
class _Loaded:
    """A document as it is on disk now, re-parsed and checked against the Memory."""

    root: Path
    rel: str
    path: Path
    data: bytes
    raw: str  # decoded text with the BOM and the original line endings
    newline: str
    snap: FileSnapshot
    kind: str
    archived: bool
    fresh: Memory


def _vault_path(root: Path, rel: str) -> Path:
    """`rel` inside `root` (realpath containment), never through a link."""
    try:
        path = safe_join(root, *rel.split("/"))
    except UnsafePathError as exc:
        raise RefusedError(f"{rel}: unsafe path: {exc}") from None
    if path.is_symlink():
        raise RefusedError(f"{rel} is a symbolic link; memlens does not write through links")
    return path


def _load(memory: Memory) -> _Loaded:
    """Re-read and re-parse `memory`'s file; ConflictError if it changed."""
    if memory.format != FORMAT_ID:
        raise RefusedError(f"{memory.id} is a {memory.format} memory, not {FORMAT_ID}")
    root = memory.vault_root
    rel = memory.path
    where = folder_of(rel)
    if where is None:
        raise RefusedError(f"{rel} is not in an observation-v1 folder")
    kind, archived = where
    path = _vault_path(root, rel)
    changed = f"{rel}: {memory.id} changed on disk since it was read"
    try:
        data = read_regular(path)
    except FileNotFoundError:
        raise ConflictError(f"{changed} (the file is gone)") from None
    snap = snapshot(path, data)
    try:
        decoded = decode_bytes(data, rel)
        fresh = parse_document(root, rel, decoded.text, kind, archived)
    except ParseError as err:
        raise ConflictError(f"{changed} (it is now invalid: {err.detail})") from None
    if fresh.id != memory.id or fresh.body != memory.body or not _same(fresh.fields, memory.fields):
        raise ConflictError(changed)
    return _Loaded(
        root=root,
        rel=rel,
        path=path,
        data=data,
        raw=data.decode("utf-8"),
        newline=decoded.newline,
        snap=snap,
        kind=kind,
        archived=archived,
        fresh=fresh,
    )


def _validate(doc: _Loaded, new_text: str, changed: list[str]) -> Memory:
    """Parse the new text with the adapter's rules; RefusedError naming the field."""
    try:
        decoded = decode_bytes(new_text.encode("utf-8"), doc.rel)
        return parse_document(doc.root, doc.rel, decoded.text, doc.kind, doc.archived)
    except ParseError as err:
        raise RefusedError(_field_message(changed, err.detail)) from None


def _field_message(changed: list[str], detail: str) -> str:
    for name in changed:
        if detail.startswith((name, name.split(".", 1)[0])):
            return detail
    if detail.startswith("lacks "):
        return f"{detail.removeprefix('lacks ')}: required, cannot be removed or left empty"
    return f"{', '.join(changed)}: {detail}"


def _same(a: Any, b: Any) -> bool:
    """Equal values (NaN-safe: a value read twice compares equal to itself)."""
    return bool(a == b) or (type(a) is type(b) and repr(a) == repr(b))


def _strs(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _show(value: Any, limit: int = 40) -> str:
    if value is REMOVE:
        return "(removed)"
    try:
        text = render_scalar(value)
    except RefusedError:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _write_plan(action: str, doc: _Loaded, new_text: str, summary: str) -> Plan:
    return Plan(
        action=action,
        vault_root=doc.root,
        memory_ids=[doc.fresh.id],
        summary=summary,
        changes=[FileChange("write", doc.path, doc.snap, data=new_text.encode("utf-8"))],
    )


def _move_plan(action: str, doc: _Loaded, dst_rel: str, summary: str) -> Plan:
    dst = _vault_path(doc.root, dst_rel)
    if dst.exists() or dst.is_symlink():
        raise RefusedError(
            f"{dst_rel} already exists; memlens never overwrites it (move or rename it first)"
        )
    if not is_inside(doc.root, dst.parent):
        raise RefusedError(f"{dst_rel} would leave the vault")
    return Plan(
        action=action,
        vault_root=doc.root,
        memory_ids=[doc.fresh.id],
        summary=summary,
        changes=[FileChange("move", doc.path, doc.snap, dst=dst)],
    )
