"""Project Ocean actions: what pin, edit, promote, archive and restore mean here.

DESIGN.md, project-ocean column (and what memory-promote.py / memory-decay.py do):

- pin / unpin: add `pinned: true` as the last frontmatter line (status
  `permanent`; `decay` is left as written) / remove the `pinned` line.
- set: rewrite only the frontmatter lines of the fields that change, after
  checking each value against the format (tags a list of strings, confidence
  a number 0-1, created YYYY-MM-DD, source a string, decay linear-Nd or
  exponential-Nd, backlinks bare observation names, verified true/false).
  A value of null removes an optional field (`decay` -> permanent).
- edit body: replace the text after the closing fence; the frontmatter bytes,
  the BOM and the line-ending style stay as they were.
- promote: copy an agent's vault observation to `shared/observations/<same
  file name>` with `promoted_from: <agent>` and `promoted_at: YYYY-MM-DD` as
  the last frontmatter lines; the source is not touched.  An existing copy
  (or an archived one in `shared/observations/archive/`) refuses the promote
  ("already promoted"): a second copy would duplicate the `shared/<stem>` id.
- archive: move to the agent's `archive/` (shared copies to
  `shared/observations/archive/`); restore moves back to `vault/` (or
  `shared/observations/`).  An existing file at the destination refuses the
  move (the reference decay script overwrites it; memlens never does).

Every planner re-reads the file, re-parses it with the adapter and refuses
(ConflictError) if it no longer matches the Memory the user saw; new bytes are
parsed again with the adapter's rules before a Plan is returned.

The one clock read: promote stamps `promoted_at` with `options["as_of"]` when
given (a date or an ISO date string), else `date.today()`.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any, ClassVar

from ...errors import ConflictError, ParseError, RefusedError, UnsafePathError
from ...model import Memory
from ...safe_io import read_regular
from ...text.dates import parse_date
from ...text.paths import safe_join, safe_name
from ...text.yamledit import REMOVE, edit_frontmatter
from ...write.actions import register_writer
from ...write.journal import FileChange, Plan
from ...write.writes import FileSnapshot, WriteError, snapshot
from .adapter import (
    FORMAT_ID,
    SHARED,
    backlink_name,
    locate,
    parse_decay_spec,
    parse_observation,
)

#: Fields the format requires; `set` may change them but never remove them.
_REQUIRED: tuple[str, ...] = ("tags", "confidence", "created", "source")

#: Fields whose value is a YYYY-MM-DD date.
_DATE_FIELDS: tuple[str, ...] = ("created", "promoted_at")


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


def destination(memory: Memory, action: str) -> str:
    """Vault-relative path an archive / restore / promote of `memory` goes to.

    The file name is kept; only the folder changes (so the id's stem stays).
    """
    name = safe_name(Path(memory.path).name)
    agent = str(memory.native.get("agent", ""))
    shared = bool(memory.native.get("shared"))
    if action == "promote":
        return f"shared/observations/{name}"
    if action == "archive":
        if shared:
            return f"shared/observations/archive/{name}"
        return f"agents/{safe_name(agent)}/memory/archive/{name}"
    if action == "restore":
        if agent == SHARED and memory.path.startswith("shared/"):
            return f"shared/observations/{name}"
        return f"agents/{safe_name(agent)}/memory/vault/{name}"
    raise ValueError(f"no destination for {action!r}")


class ProjectOceanWriter:
    """Plans actions on Project Ocean observation files."""

    format_id: ClassVar[str] = FORMAT_ID

    # -- pin / unpin -------------------------------------------------------

    def plan_pin(self, memory: Memory) -> Plan:
        doc = _load(memory)
        if doc.fresh.pinned:
            raise RefusedError(f"{doc.rel}: {memory.id} is already pinned")
        verb = "set" if "pinned" in doc.fresh.fields else "add"
        new = _edit(doc.raw, {"pinned": True}, "pinned")
        after = _validate(doc.root, doc.rel, new, "pinned")
        if not after.pinned:  # pragma: no cover - edit_frontmatter verifies the value
            raise RefusedError("pinned: the edit did not pin the memory; not written")
        return _write_plan(
            "pin",
            doc,
            new,
            f"pin: {verb} 'pinned: true' in {doc.rel} (status permanent; decay left as written)",
        )

    def plan_unpin(self, memory: Memory) -> Plan:
        doc = _load(memory)
        if "pinned" not in doc.fresh.fields:
            raise RefusedError(f"{doc.rel}: {memory.id} is not pinned")
        new = _edit(doc.raw, {"pinned": REMOVE}, "pinned")
        _validate(doc.root, doc.rel, new, "pinned")
        return _write_plan("unpin", doc, new, f"unpin: remove 'pinned' from {doc.rel}")

    # -- edit metadata / body ----------------------------------------------

    def plan_set(self, memory: Memory, changes: dict[str, Any]) -> Plan:
        if not changes:
            raise RefusedError("no field to set")
        doc = _load(memory)
        wanted: dict[str, Any] = {}
        for name, value in changes.items():
            if not isinstance(name, str) or not name.strip():
                raise RefusedError(f"refusing an unusual field name {name!r}")
            checked = _check_field(name, value)
            current = doc.fresh.fields.get(name)
            if checked is REMOVE:
                if name in doc.fresh.fields:
                    wanted[name] = REMOVE
                continue
            if name in _DATE_FIELDS and isinstance(current, str) and isinstance(checked, date):
                # Written as a quoted string before: keep that style (edit_frontmatter
                # keeps the quote character of a string value it replaces).
                checked = checked.isoformat()
            if name in doc.fresh.fields and _same(current, checked):
                continue
            wanted[name] = checked
        if not wanted:
            raise RefusedError("nothing to change: the fields already have these values")
        names = ", ".join(wanted)
        new = _edit(doc.raw, wanted, names)
        _validate(doc.root, doc.rel, new, names)
        return _write_plan("set", doc, new, f"set: {names} in {doc.rel}")

    def plan_edit_body(self, memory: Memory, body: str) -> Plan:
        doc = _load(memory)
        lines = doc.raw.splitlines(keepends=True)
        close = _closing_fence(lines)
        if close is None:  # pragma: no cover - the file parsed, so it has one
            raise RefusedError(f"{doc.rel}: the frontmatter block is never closed")
        newline = "\r\n" if lines[0].endswith("\r\n") else "\n"
        header = "".join(lines[: close + 1])
        text = body.replace("\r\n", "\n")
        if newline == "\r\n":
            text = text.replace("\n", "\r\n")
        if text and not header.endswith(("\n", "\r")):
            header += newline
        new = header + text
        if new == doc.raw:
            raise RefusedError("body: unchanged")
        after = _validate(doc.root, doc.rel, new, "body")
        if not _same(after.fields, doc.fresh.fields):  # pragma: no cover - header is kept
            raise RefusedError("body: the new body would change the frontmatter; not written")
        return _write_plan("edit_body", doc, new, f"edit body of {doc.rel} (frontmatter unchanged)")

    # -- promote -----------------------------------------------------------

    def plan_promote(self, memory: Memory, options: dict[str, Any]) -> Plan:
        if memory.native.get("shared") or memory.native.get("area") == "shared":
            raise RefusedError(
                f"{memory.id} is in shared/ already: only an agent's vault observations "
                "can be promoted"
            )
        if memory.archived:
            raise RefusedError(f"{memory.id} is archived: restore it to vault/ before promoting")
        for option in ("importance", "type"):
            if options.get(option) is not None:
                raise RefusedError(
                    f"{option}: Project Ocean promote copies the file to shared/; "
                    "it has no such option"
                )
        doc = _load(memory)
        if doc.fresh.native.get("area") != "vault":  # pragma: no cover - checked above
            raise RefusedError(f"{memory.id}: only files in an agent's vault/ can be promoted")
        when = _promote_date(options.get("as_of"))
        agent = str(doc.fresh.native["agent"])
        dst_rel = destination(doc.fresh, "promote")
        dst = safe_join(doc.root, *dst_rel.split("/"))
        archived_copy = _refuse_if_promoted(doc.root, dst_rel)
        new = _edit(doc.raw, {"promoted_from": agent, "promoted_at": when}, "promoted_from")
        copy = _validate(doc.root, dst_rel, new, "promoted_from")
        change = FileChange(
            kind="create", path=dst, expected=snapshot(dst), data=new.encode("utf-8")
        )
        return Plan(
            action="promote",
            vault_root=doc.root,
            memory_ids=[doc.fresh.id, copy.id],
            summary=(
                f"promote: copy {doc.rel} to {dst_rel} with promoted_from: {agent}, "
                f"promoted_at: {when.isoformat()} (source unchanged)"
            ),
            changes=[change],
            # The copy is made from the source's bytes as read now, and the
            # "already promoted" check looked at the archived copy's place:
            # apply refuses if either changed before it runs.
            reads=[doc.snap, snapshot(archived_copy)],
        )

    # -- archive / restore -------------------------------------------------

    def plan_archive(
        self, memory: Memory, reason: str | None = None, *, as_of: date | None = None
    ) -> Plan:
        """Move to the agent's (or shared) `archive/`.

        `as_of` is accepted for the writer protocol (decay runs pass it) and
        not used: a Project Ocean archive is a move that records no date.
        """
        doc = _load(memory)
        if doc.fresh.archived:  # pragma: no cover - Action checks memory.archived
            raise RefusedError(f"{memory.id} is already archived")
        dst_rel = destination(doc.fresh, "archive")
        why = f" ({reason})" if reason else ""
        return _move_plan("archive", doc, dst_rel, f"archive: move {doc.rel} to {dst_rel}{why}")

    def plan_restore(self, memory: Memory) -> Plan:
        doc = _load(memory)
        if not doc.fresh.archived:  # pragma: no cover - Action checks memory.archived
            raise RefusedError(f"{memory.id} is not archived")
        dst_rel = destination(doc.fresh, "restore")
        return _move_plan("restore", doc, dst_rel, f"restore: move {doc.rel} back to {dst_rel}")


# --------------------------------------------------------------------------- helpers


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


def _refuse_if_promoted(root: Path, dst_rel: str) -> Path:
    """RefusedError("already promoted ...") if a shared copy (live or archived) exists.

    Returns where the archived copy would be (checked absent), so the plan
    can refuse to apply if one appears there meanwhile.
    """
    name = dst_rel.rsplit("/", 1)[-1]
    archived_rel = f"shared/observations/archive/{name}"
    archived = safe_join(root, *archived_rel.split("/"))
    for rel in (dst_rel, archived_rel):
        path = safe_join(root, *rel.split("/"))
        if os.path.lexists(path):
            raise RefusedError(f"already promoted: {rel} exists{_promoted_from_hint(root, rel)}")
    return archived


def _promoted_from_hint(root: Path, rel: str) -> str:
    """` (promoted_from: hawk)` when the existing copy says where it came from."""
    try:
        copy = parse_observation(root, rel)
    except (ParseError, OSError, ValueError):
        return ""
    origin = copy.native.get("promoted_from")
    return f" (promoted_from: {origin})" if isinstance(origin, str) else ""


def _promote_date(value: object) -> date:
    """`promoted_at`: the caller's as_of, else today (the writer's one clock read)."""
    if value is None:
        return date.today()
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    parsed = parse_date(value)
    if parsed is None:
        raise RefusedError(f"as_of: {value!r} is not a YYYY-MM-DD date")
    return parsed


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_field(name: str, value: Any) -> Any:
    """The value to write for `name` (REMOVE for null), or RefusedError naming the field."""
    if value is None:
        if name in _REQUIRED:
            raise RefusedError(f"{name}: is required and cannot be removed")
        return REMOVE
    if name == "tags":
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise RefusedError(f"tags: {value!r} is not a list of strings")
        return list(value)
    if name == "confidence":
        if not _is_number(value):
            raise RefusedError(f"confidence: {value!r} is not a number between 0.0 and 1.0")
        if not math.isfinite(value) or not 0.0 <= value <= 1.0:
            raise RefusedError(f"confidence: {value} is outside 0.0-1.0")
        return value
    if name in _DATE_FIELDS:
        parsed = parse_date(value)
        if parsed is None:
            raise RefusedError(f"{name}: {value!r} is not a YYYY-MM-DD date")
        return parsed
    if name in ("source", "promoted_from"):
        if not isinstance(value, str) or not value.strip():
            raise RefusedError(f"{name}: {value!r} is not a non-empty string")
        return value
    if name == "decay":
        if parse_decay_spec(value) is None:
            raise RefusedError(
                f"decay: {value!r} is not linear-Nd or exponential-Nd "
                "(N a whole number of days; null makes the observation permanent)"
            )
        return value
    if name == "backlinks":
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise RefusedError(f"backlinks: {value!r} is not a list of observation names")
        for ref in value:
            if backlink_name(ref) is None:
                raise RefusedError(
                    f"backlinks: {ref!r} is not a bare observation name (obs-YYYY-MM-DD-NNN); "
                    "paths are refused"
                )
        return list(value)
    if name in ("verified", "pinned"):
        if not isinstance(value, bool):
            raise RefusedError(f"{name}: {value!r} is not true or false")
        return value
    return value  # an extra field: any YAML value, kept as given


register_writer(ProjectOceanWriter())

__all__ = ["ProjectOceanWriter", "destination"]
