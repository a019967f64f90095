"""What each user action means for a cognitive-memory vault (DESIGN.md action table).

    pin        move graph/<type-dir>/<file> to vault/<file> (decay score 999)
    unpin      move vault/<file> back to graph/<type-dir>/, type-dir from `type`
    set        rewrite only the changed frontmatter lines, bump `updated`
    edit_body  replace the body after the frontmatter, bump `updated`
    promote    raise `importance` and/or retype to `insight`; the file never moves
    archive    move graph/<dir>/<file> to archive/<dir>/<file> (outside graph/)
    restore    move archive/<dir>/<file> back to graph/<dir>/<file>

Every planner follows the same steps, so an agent writing the same file at
the same time can never lose an update:

1. Re-read the file and parse it with the adapter's own rules; if what is
   on disk now differs from the memory the user saw (fields or body), refuse
   with ConflictError.  The new bytes are built from these fresh bytes and
   their snapshot goes into the plan, so `apply_plan` also refuses when the
   file changes between planning and applying (hash check: same size and
   same mtime do not fool it).
2. Validate the result with the adapter's rules; a refusal names the field.
3. Keep every path inside the vault (realpath containment), never through a
   symbolic link, never onto an existing file.

Decisions the spec leaves open (documented here, tested in
tests/core/test_cognitive_writer.py):

- Archive keeps the folder the file is in (`graph/solutions/x.md` ->
  `archive/solutions/x.md`) even when `type` names another folder (after a
  promote), so restore puts it back exactly where it was.
- A pinned memory (in vault/) cannot be archived: unpin it first.  Pinning
  means "never fade", and a bulk archive must not sweep pinned ones away.
  Hence restore always goes back to graph/.
- Promote never moves the file (DESIGN.md); retyping to `insight` leaves it
  in its old type folder, which the adapter accepts.  With no option given,
  promote retypes to `insight` (what promotion means in cognitive memory:
  reflection turns memories into insights).  Promote only raises importance.
- `id` cannot be changed: `_state.json`, relations and episodes refer to it.
- `updated` is bumped to the action's time in the style of the existing
  value: same time zone offset (or `Z`), same separator, seconds unless the
  old value had fractions, a date stays a date, a quoted value stays quoted.
  A naive timestamp is written as UTC wall time without an offset.  The time
  comes from the `now` argument (or `options["now"]` for promote); only
  when none is given is the clock read, here in `_now()` and nowhere else.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

from ...errors import ConflictError, ParseError, RefusedError, UnsafePathError
from ...model import Memory
from ...safe_io import read_regular
from ...text.frontmatter import load_frontmatter
from ...text.paths import is_inside, safe_join, safe_name
from ...text.textio import BOM, decode_bytes
from ...text.yamledit import REMOVE, edit_frontmatter
from ...write.journal import FileChange, Plan
from ...write.writes import snapshot
from ..curating import CurationOptions, Step
from ..file_version import plan_file_version
from ..privacy_model import Redaction, redaction_summary
from ..redaction_edits import as_erase, redacted_file_text, refuse_upward
from ..writing import register_writer
from . import curate
from .adapter import CognitiveMemoryAdapter
from .memories import _Invalid, _validate
from .schema import ARCHIVE_DIR, DIR_TYPES, FORMAT_ID, GRAPH_DIR, TYPE_DIRS, VAULT_DIR
from .write_values import _check_change, _fraction_ok, _now_of, _to_text, _with_body, bumped_updated

#: Option key carrying the action's time in `plan_promote` options.
NOW_OPTION = "now"
#: The type promote retypes to.
PROMOTED_TYPE = "insight"


@dataclass(frozen=True, slots=True)
class _Current:
    """A memory file as it is on disk right now."""

    path: Path
    rel: str
    area: str
    type_dir: str | None
    raw: bytes
    memory: Memory


def _area_of(rel: str) -> tuple[str, str | None]:
    """(area, type dir) of a vault-relative memory path."""
    parts = PurePosixPath(rel).parts
    if len(parts) == 2 and parts[0] == VAULT_DIR:
        return VAULT_DIR, None
    if len(parts) == 3 and parts[0] in (GRAPH_DIR, ARCHIVE_DIR) and parts[1] in DIR_TYPES:
        return parts[0], parts[1]
    raise RefusedError(f"{rel}: not a cognitive-memory file location (graph/, vault/, archive/)")


def parse_memory_bytes(root: Path, rel: str, data: bytes) -> Memory:
    """Parse a memory file's bytes with the adapter's rules; RefusedError names the field."""
    area, type_dir = _area_of(rel)
    try:
        decoded = decode_bytes(data, rel)
        fields, doc = load_frontmatter(decoded.text, rel)
    except ParseError as err:
        raise RefusedError(f"{rel}: {err.reason.value}: {err.detail}") from None
    try:
        parsed = _validate(fields, doc.header, root, rel, area, type_dir)
    except _Invalid as bad:
        detail = bad.detail
        if bad.key is not None:
            if detail.startswith(bad.key + " "):
                detail = detail[len(bad.key) + 1 :]
            raise RefusedError(f"{bad.key}: {detail}") from None
        raise RefusedError(detail) from None
    parsed.memory.body = doc.body
    return parsed.memory


def _same(a: Any, b: Any) -> bool:
    # repr() also equates NaN with NaN, which == does not.
    return bool(a == b) or repr(a) == repr(b)


def _read_current(memory: Memory) -> _Current:
    """Re-read `memory`'s file; ConflictError if it is not what the user saw."""
    if memory.format != FORMAT_ID:
        raise RefusedError(f"{memory.id}: not a cognitive-memory memory")
    root = memory.vault_root
    rel = memory.path
    area, type_dir = _area_of(rel)
    path = safe_join(root, *PurePosixPath(rel).parts)
    if path.is_symlink():
        raise UnsafePathError(f"{rel} is a symbolic link; memlens does not write through links")
    try:
        raw = read_regular(path)
    except FileNotFoundError:
        raise ConflictError(f"{rel}: the file was moved or deleted since it was read") from None
    try:
        fresh = parse_memory_bytes(root, rel, raw)
    except RefusedError as exc:
        raise ConflictError(
            f"{rel} changed on disk since it was read (it is no longer valid: {exc})"
        ) from None
    if fresh.id != memory.id:
        raise ConflictError(f"{rel} changed on disk since it was read (it now holds {fresh.id})")
    changed = sorted(
        k
        for k in set(fresh.fields) | set(memory.fields)
        if (k in fresh.fields) != (k in memory.fields)
        or not _same(fresh.fields.get(k), memory.fields.get(k))
    )
    if changed or not _same(fresh.body, memory.body):
        what = ", ".join(str(k) for k in changed) or "body"
        raise ConflictError(f"{rel} changed on disk since it was read ({what}); reload it first")
    return _Current(path, rel, area, type_dir, raw, fresh)


class CognitiveMemoryWriter:
    """Plans pin, unpin, set, edit_body, promote, archive and restore for cognitive memory."""

    format_id: ClassVar[str] = FORMAT_ID

    # ---------------------------------------------------------------- moves

    def _move(self, action: str, current: _Current, dst_parts: tuple[str, ...]) -> Plan:
        root = current.memory.vault_root
        name = safe_name(current.path.name)
        dst = safe_join(root, *dst_parts, name)
        dst_rel = "/".join((*dst_parts, name))
        for depth in range(1, len(dst_parts) + 1):
            folder = root.joinpath(*dst_parts[:depth])
            if folder.is_symlink() or not is_inside(root, folder):
                raise UnsafePathError(f"{folder} is a symbolic link; memlens does not move into it")
        if dst.exists() or dst.is_symlink():
            raise RefusedError(f"{dst_rel} already exists; memlens never overwrites a file")
        m = current.memory
        return Plan(
            action=action,
            vault_root=root,
            memory_ids=[m.id],
            summary=f"{action} {m.title!r}: move {current.rel} -> {dst_rel}",
            changes=[
                FileChange("move", current.path, snapshot(current.path, current.raw), dst=dst)
            ],
        )

    def plan_pin(self, memory: Memory) -> Plan:
        current = _read_current(memory)
        if current.area == VAULT_DIR:
            raise RefusedError("already pinned (in vault/)")
        if current.area == ARCHIVE_DIR:
            raise RefusedError("archived memories cannot be pinned; restore it first")
        return self._move("pin", current, (VAULT_DIR,))

    def plan_unpin(self, memory: Memory) -> Plan:
        current = _read_current(memory)
        if current.area != VAULT_DIR:
            raise RefusedError("not pinned (not in vault/)")
        return self._move("unpin", current, (GRAPH_DIR, TYPE_DIRS[current.memory.kind]))

    def plan_archive(
        self, memory: Memory, reason: str | None = None, *, as_of: date | None = None
    ) -> Plan:
        """Move to archive/<dir>/; `reason` (from a decay run) only labels the plan.

        The file is moved unchanged: cognitive memory has no field for an
        archive reason, and adding one would be a rewrite the spec lacks.
        `as_of` (the decay date of a run) is accepted for the writer protocol
        and not used, for the same reason: nothing records when it happened.
        """
        current = _read_current(memory)
        if current.area == ARCHIVE_DIR:
            raise RefusedError("already archived")
        if current.area == VAULT_DIR or current.type_dir is None:
            raise RefusedError("pinned memories are never archived; unpin it first")
        plan = self._move("archive", current, (ARCHIVE_DIR, current.type_dir))
        if reason:
            plan.summary += f" ({reason})"
        return plan

    def plan_restore(self, memory: Memory) -> Plan:
        current = _read_current(memory)
        if current.area != ARCHIVE_DIR or current.type_dir is None:
            raise RefusedError("not archived")
        return self._move("restore", current, (GRAPH_DIR, current.type_dir))

    # -- history: put back an earlier version ---------------------------------

    def plan_restore_version(self, memory: Memory, data: bytes, expected: bytes | None) -> Plan:
        """The file's bytes at an earlier commit, written back whole (see file_version)."""
        return plan_file_version(CognitiveMemoryAdapter(), memory, data, expected)

    # ---------------------------------------------------------------- rewrites

    def _rewrite(
        self,
        action: str,
        current: _Current,
        changes: dict[str, Any],
        body: str | None,
        now: datetime,
        summary: str,
    ) -> Plan:
        m = current.memory
        text = _to_text(current.raw, current.rel)
        fm_changes = dict(changes)
        if "updated" not in fm_changes:
            fm_changes["updated"] = bumped_updated(m.fields, text, now)
        try:
            new_text = edit_frontmatter(text, fm_changes)
        except RefusedError as exc:
            raise RefusedError(f"{current.rel}: {exc}") from None
        if body is not None:
            new_text = _with_body(new_text, body)
        new_raw = new_text.encode("utf-8")
        if new_text.startswith(BOM) != text.startswith(BOM):  # pragma: no cover - defensive
            raise RefusedError("the edit would change the byte-order mark; not written")
        parse_memory_bytes(m.vault_root, current.rel, new_raw)  # validation by the format's rules
        return Plan(
            action=action,
            vault_root=m.vault_root,
            memory_ids=[m.id],
            summary=summary,
            changes=[
                FileChange("write", current.path, snapshot(current.path, current.raw), data=new_raw)
            ],
        )

    def plan_set(
        self, memory: Memory, changes: dict[str, Any], *, now: datetime | None = None
    ) -> Plan:
        """Rewrite only the changed frontmatter lines and bump `updated`."""
        if not changes:
            raise RefusedError("no field to set")
        for key, value in changes.items():
            if not isinstance(key, str) or not key:
                raise RefusedError(f"{key!r}: not a field name")
            if key == "id":
                raise RefusedError("id: cannot be changed (relations and _state.json use it)")
            _check_change(key, value)
        current = _read_current(memory)
        fields = current.memory.fields
        effective = {
            k: v
            for k, v in changes.items()
            if not (
                (v is REMOVE and k not in fields)
                or (v is not REMOVE and k in fields and _same(fields[k], v))
            )
        }
        if not effective:
            raise RefusedError("nothing to change: the fields already have these values")
        names = ", ".join(effective)
        return self._rewrite(
            "set",
            current,
            effective,
            None,
            _now_of(now),
            f"set {names} on {current.memory.title!r} ({current.rel})",
        )

    def plan_edit_body(self, memory: Memory, body: str, *, now: datetime | None = None) -> Plan:
        """Replace the body (line endings kept as the file's) and bump `updated`."""
        if not isinstance(body, str):
            raise RefusedError("body: must be text")
        current = _read_current(memory)
        if body.replace("\r\n", "\n") == current.memory.body:
            raise RefusedError("nothing to change: the body is the same")
        return self._rewrite(
            "edit_body",
            current,
            {},
            body,
            _now_of(now),
            f"edit body of {current.memory.title!r} ({current.rel})",
        )

    def plan_promote(self, memory: Memory, options: dict[str, Any]) -> Plan:
        """Raise importance and/or retype to `insight`; the file stays where it is.

        options: {"importance": x} and/or {"type": "insight"}; neither means
        {"type": "insight"}.  {"now": datetime} sets the time of `updated`.
        Keys of other formats' promote options are ignored.
        """
        now = _now_of(options.get(NOW_OPTION))
        current = _read_current(memory)
        m = current.memory
        changes: dict[str, Any] = {}
        wanted_type = options.get("type")
        importance = options.get("importance")
        if wanted_type is None and importance is None:
            wanted_type = PROMOTED_TYPE
        if wanted_type is not None:
            if wanted_type != PROMOTED_TYPE:
                raise RefusedError(
                    f"type: promote retypes only to {PROMOTED_TYPE!r}, not {wanted_type!r} "
                    "(use set to change the type)"
                )
            if m.kind != PROMOTED_TYPE:
                changes["type"] = PROMOTED_TYPE
        if importance is not None:
            _fraction_ok("importance", importance)
            old = m.importance if m.importance is not None else 0.0
            if float(importance) < old:
                raise RefusedError(
                    f"importance: {importance} is lower than the current {old:g}; "
                    "promote only raises it (use set to lower it)"
                )
            if float(importance) > old:
                changes["importance"] = importance
        if not changes:
            raise RefusedError("nothing to promote: already an insight at that importance")
        what = " and ".join(
            f"type {m.kind} -> insight" if k == "type" else f"importance {m.importance:g} -> {v}"
            for k, v in changes.items()
        )
        return self._rewrite(
            "promote", current, changes, None, now, f"promote {m.title!r}: {what} ({current.rel})"
        )

    # ------------------------------------------------------ redact / erase

    def plan_redact(
        self, memory: Memory, redactions: Sequence[Redaction], *, upward: bool = False
    ) -> Plan:
        """Replace only the secrets' characters; `updated` is not bumped.

        A redaction removes characters, it does not change what the memory
        says, and bumping `updated` would rewrite a line the user did not ask
        to change (the byte diff is the secrets' characters alone).
        """
        refuse_upward(upward, "cognitive-memory")
        current = _read_current(memory)
        root, rel = memory.vault_root, current.rel
        text = _to_text(current.raw, rel)
        adapter = CognitiveMemoryAdapter()
        new = redacted_file_text(
            text,
            redactions,
            adapter.text_fields(current.memory, text),
            lambda t: adapter.text_fields(parse_memory_bytes(root, rel, t.encode("utf-8")), t),
        )
        return Plan(
            action="redact",
            vault_root=root,
            memory_ids=[current.memory.id],
            summary=f"redact: {redaction_summary(redactions)} in {rel}",
            changes=[
                FileChange(
                    "write",
                    current.path,
                    snapshot(current.path, current.raw),
                    data=new.encode("utf-8"),
                )
            ],
        )

    def plan_erase(self, memory: Memory) -> Plan:
        """Erasure is the format's archive: a move to `archive/<type-dir>/`."""
        return as_erase(self.plan_archive(memory, "erasure"))

    # -- review queue: merge / supersede (see curate.py) --------------------

    def plan_merge(self, keep: Memory, other: Memory, options: CurationOptions) -> list[Step]:
        return curate.merge_steps(self, keep, other, options)

    def plan_supersede(self, new: Memory, old: Memory, options: CurationOptions) -> list[Step]:
        return curate.supersede_steps(self, new, old, options)


WRITER = CognitiveMemoryWriter()


register_writer(WRITER)
