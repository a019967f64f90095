"""Actions on experience-record vaults: every change is an append.

The raw store is immutable (specs/experience-record.md): no line of
`experiences.jsonl` is ever rewritten.  What each action appends
(DESIGN.md, "What each action means per format"):

pin / unpin
    One view in `views.jsonl` with lens `pin` (or `unpin`, whose
    `provenance_braid` names the pin view it supersedes) applied to the id.
set (edit metadata)
    One view with lens `edit_v1` applied to the id; `delta_from_raw.fields`
    maps each edited field to its new value, `added` / `removed` describe the
    change in words.  Editable: `tags` (list of strings), `confidence.p` (alias
    `confidence`, a number in 0-1) and `note` (a string); a `null` value drops
    an earlier override.  The adapter folds these views into the Memory it
    shows (see its module docstring); the raw line stays as it was.
edit body / promote
    Raw text is never changed: a new experience of a higher lattice type is
    derived instead (occurrence -> observation -> inference -> reconciliation)
    with `parents` and `evidence_ptrs` naming the original, provenance actor
    `user` and method `reconcile` (a corrected body) or `model_infer` (a
    promotion), appended to `experiences.jsonl`, plus a WAL entry with an
    `append` op for it.  Edit body derives the next type up (refused for a
    reconciliation).  Promote derives the next type up from an occurrence or
    an observation; an inference is promoted only with `type=reconciliation`
    chosen explicitly.  Promote options: `text` (or `body`; default: the
    original text prefixed "Observed: " / "Inferred: " / "Reconciled: "),
    `type` (a type above the current one), `now`; `as_of` (sent by the CLI)
    is ignored, any other option is refused naming it.
archive / restore
    A WAL entry (`wal_NNNNNN`, the next number) with a tombstone op of reason
    `archived` (reversible, never an erasure) or a `restore` op.  A decay
    run's reason label goes into the op's `note`, never its `reason`.

Appends are an atomic rewrite of the whole file with the line added, planned
from the bytes read at plan time (their snapshot is the FileChange's
`expected`), so the BOM and every existing byte stay; the new line uses the
file's line ending (CRLF if its first line ends in CRLF).  A file without a
final newline gets one (in its own style) before the new line.  An absent
`views.jsonl` / `wal.jsonl` is created.  New lines are compact one-line JSON
(U+2028, U+2029 and U+0085 escaped so no line-splitter breaks them).

Ids follow the spec: `view_<ts>_<4 hex>` / `exp_<ts>_<4 hex>` with `<ts>` the
UTC second (`2026-11-22T10:00:00Z`); the hex is derived from the timestamp,
the target id and the action (bumped on a collision), so a plan is
reproducible for a given time.  The time is the one clock read: promote's
`now` option (ISO 8601; naive means UTC), else the writer's `clock`, else
`datetime.now(UTC)`.

Conflicts: at plan time the three state files are read and snapshotted, the
vault is re-scanned with the adapter, and the snapshots are checked again
(a file that changed during the scan refuses the plan).  The memory must
still parse to the same raw record, with the same pin, edit and WAL state
as the Memory the caller holds; otherwise ConflictError.  Erased
(tombstoned) experiences refuse every action.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, ClassVar

from ...errors import ConflictError, RefusedError, UnsafePathError
from ...model import Memory
from ...safe_io import read_regular
from ...text.paths import has_path_syntax, is_inside
from ...write.journal import FileChange, Plan
from ...write.writes import FileSnapshot, check_unchanged, snapshot
from ..curating import CurationOptions, Step
from ..privacy_model import Redaction
from ..writing import register_writer
from . import curate
from .action_records import archive_op, next_wal_id, pin_view, restore_op
from .adapter import ExperienceRecordAdapter
from .jsonl import JsonLine, parse_json_lines
from .schema import EXPERIENCES, FORMAT_ID, LATTICE, LENS_EDIT, TYPE_RANK, VIEWS, WAL
from .validation import experience_problem, view_problem, wal_problem
from .write_fields import (
    _PROMOTE_OPTIONS,
    _PROMOTE_PREFIX,
    _TS_FORMAT,
    _current_value,
    _normalize_field,
    _parse_now,
    _show,
)
from .write_lines import _dumps, _encode, _same, _State, _Store, append_line
from .write_redact import plan_erase_record, plan_redact_record


class ExperienceRecordWriter:
    """Plans pin/unpin/set/edit-body/promote/archive/restore as appends."""

    format_id: ClassVar[str] = FORMAT_ID

    def __init__(self, clock: Callable[[], datetime] | None = None) -> None:
        #: Source of "now" when no `now` option is given (None: the system clock).
        self.clock = clock

    # ------------------------------------------------------------------
    # Reading and conflict checks

    def _stamp(self, now: Any = None) -> str:
        """The UTC second of this action, as written in ids and WAL ops."""
        if now is not None:
            when = _parse_now(now)
        elif self.clock is not None:
            when = self.clock()
            if when.tzinfo is None:
                when = when.replace(tzinfo=UTC)
        else:
            when = datetime.now(UTC)
        return when.astimezone(UTC).strftime(_TS_FORMAT)

    @staticmethod
    def _read(root: Path, rel: str) -> _Store:
        path = root / rel
        if path.is_symlink() or not is_inside(root, path):
            raise UnsafePathError(
                f"{path} is a symbolic link or leaves the vault; memlens does not write through it"
            )
        try:
            data: bytes | None = read_regular(path)
        except FileNotFoundError:
            data = None
        snap = snapshot(path, data) if data is not None else snapshot(path)
        if data is None and snap.exists:
            # Appeared between the read and the snapshot: read it properly.
            raise ConflictError(f"{path}: the file appeared while memlens was reading it")
        items = parse_json_lines(data) if data is not None else []
        return _Store(rel, path, data, snap, items)

    def _current(self, memory: Memory) -> _State:
        """Re-read the vault and check the memory is still what the caller saw."""
        if memory.tombstoned:
            raise RefusedError(f"{memory.id}: erased (tombstoned) experiences cannot be changed")
        if has_path_syntax(memory.id):
            raise RefusedError(f"id {memory.id!r} has path syntax; memlens refuses to act on it")
        root = memory.vault_root
        stores = {rel: self._read(root, rel) for rel in (EXPERIENCES, VIEWS, WAL)}
        result = ExperienceRecordAdapter().scan(root)
        for store in stores.values():
            try:
                check_unchanged(store.snap)
            except ConflictError:
                raise ConflictError(
                    f"{store.path}: changed while memlens was reading it; try again"
                ) from None
        found = [m for m in result.memories if m.id == memory.id]
        exp_path = root / EXPERIENCES
        if len(found) != 1:
            raise ConflictError(f"{exp_path}: {memory.id} changed on disk since it was read")
        fresh = found[0]
        if fresh.tombstoned:
            raise ConflictError(f"{root / WAL}: {memory.id} was erased since it was read")
        if (
            fresh.kind != memory.kind
            or fresh.body != memory.body
            or not _same(fresh.fields, memory.fields)
        ):
            raise ConflictError(f"{exp_path}: {memory.id} changed on disk since it was read")
        if fresh.archived != memory.archived or not _same(
            fresh.native.get("archive"), memory.native.get("archive")
        ):
            raise ConflictError(
                f"{root / WAL}: {memory.id}'s archive state changed on disk since it was read"
            )
        if (
            fresh.pinned != memory.pinned
            or fresh.native.get("pinned_by") != memory.native.get("pinned_by")
            or not _same(fresh.native.get("edits"), memory.native.get("edits"))
            or not _same(fresh.native.get("edited_by"), memory.native.get("edited_by"))
        ):
            raise ConflictError(
                f"{root / VIEWS}: {memory.id}'s views changed on disk since it was read"
            )
        return _State(fresh, stores)

    # ------------------------------------------------------------------
    # Building appends

    @staticmethod
    def _new_id(prefix: str, ts: str, target: str, action: str, taken: set[str]) -> str:
        n = 0
        while True:
            seed = f"{prefix}|{ts}|{target}|{action}|{n}".encode()
            new = f"{prefix}_{ts}_{hashlib.sha256(seed).hexdigest()[:4]}"
            if new not in taken:
                return new
            n += 1

    @staticmethod
    def _append(
        store: _Store, record: dict[str, Any], check: Callable[[dict[str, Any]], str | None]
    ) -> FileChange:
        """A FileChange appending `record`, verified by re-parsing the new bytes."""
        line = _encode(_dumps(record), str(record.get("id") or record.get("wal_id")))
        new = append_line(store.data, line)
        items = parse_json_lines(new)
        last = items[-1] if items else None
        if (
            len(items) != len(store.items) + 1
            or not isinstance(last, JsonLine)
            or not _same(last.obj, record)
        ):
            raise RefusedError(f"{store.rel}: the new line would not read back as written")
        problem = check(last.obj)
        if problem is not None:
            raise RefusedError(f"{store.rel}: the new record would be invalid: {problem}")
        if store.data is None:
            return FileChange("create", store.path, store.snap, data=new)
        return FileChange("write", store.path, store.snap, data=new, append_only=True)

    @staticmethod
    def _reads(state: _State, changes: list[FileChange]) -> list[FileSnapshot]:
        """Snapshots of the stores the plan was computed from but does not write.

        The memory's pin, edit and archive state comes from all three files:
        apply refuses if one it only read changed in between (say a view
        that pins it was appended after a pin was planned).
        """
        written = {c.path for c in changes}
        return [st.snap for st in state.stores.values() if st.path not in written]

    def _wal_entry(self, state: _State, op: dict[str, Any]) -> tuple[str, FileChange]:
        wal = state.stores[WAL]
        wal_id = next_wal_id(wal.objects())
        return wal_id, self._append(wal, {"wal_id": wal_id, "ops": [op]}, wal_problem)

    def _view(
        self, state: _State, action: str, ts: str, build: Callable[[str], dict[str, Any]]
    ) -> tuple[str, FileChange]:
        views = state.stores[VIEWS]
        view_id = self._new_id("view", ts, state.memory.id, action, views.ids())
        return view_id, self._append(views, build(view_id), view_problem)

    def _derive(
        self, state: _State, action: str, new_type: str, text: str, method: str, ts: str
    ) -> Plan:
        m = state.memory
        if not text.strip():
            raise RefusedError("body: the text of the derived experience is empty")
        exps = state.stores[EXPERIENCES]
        taken = exps.ids()
        for entry in state.stores[WAL].objects():
            ops = entry.get("ops")
            if isinstance(ops, list):
                taken.update(str(op.get("id")) for op in ops if isinstance(op, dict))
        new_id = self._new_id("exp", ts, m.id, action, taken)
        record: dict[str, Any] = {
            "id": new_id,
            "type": new_type,
            "created_at": ts,
            "content": {"text": text, "media": [], "structured": {}},
            "provenance": {"sources": [], "actor": "user", "method": method, "tool": "memlens"},
            "evidence_ptrs": [m.id],
            "parents": [m.id],
        }
        exp_change = self._append(exps, record, experience_problem)
        op = {"ts": ts, "op": "append", "target": "exp", "id": new_id}
        wal_id, wal_change = self._wal_entry(state, op)
        return Plan(
            action,
            m.vault_root,
            [m.id],
            f"{action}: derive {new_type} {new_id} from {m.kind} {m.id} "
            f"(append to {EXPERIENCES}, {wal_id} in {WAL}); the raw record stays as it was",
            [exp_change, wal_change],
            reads=self._reads(state, [exp_change, wal_change]),
        )

    # ------------------------------------------------------------------
    # The actions

    def plan_pin(self, memory: Memory) -> Plan:
        state = self._current(memory)
        if state.memory.pinned:
            raise RefusedError(f"already pinned (view {state.memory.native.get('pinned_by')})")
        ts = self._stamp()
        view_id, change = self._view(state, "pin", ts, lambda vid: pin_view(vid, memory.id))
        return Plan(
            "pin",
            memory.vault_root,
            [memory.id],
            f"pin: append view {view_id} (lens pin) to {VIEWS}",
            [change],
            reads=self._reads(state, [change]),
        )

    def plan_unpin(self, memory: Memory) -> Plan:
        state = self._current(memory)
        pin_id = state.memory.native.get("pinned_by")
        if not state.memory.pinned or not isinstance(pin_id, str):
            raise RefusedError("not pinned")

        def build(vid: str) -> dict[str, Any]:
            view = pin_view(vid, memory.id, unpin=True)
            view["provenance_braid"] = [memory.id, pin_id]
            return view

        view_id, change = self._view(state, "unpin", self._stamp(), build)
        return Plan(
            "unpin",
            memory.vault_root,
            [memory.id],
            f"unpin: append view {view_id} (lens unpin, supersedes {pin_id}) to {VIEWS}",
            [change],
            reads=self._reads(state, [change]),
        )

    def plan_set(self, memory: Memory, changes: dict[str, Any]) -> Plan:
        if not changes:
            raise RefusedError("no field to set")
        wanted: dict[str, Any] = {}
        for name, value in changes.items():
            key, checked = _normalize_field(str(name), value)
            if key in wanted and not _same(wanted[key], checked):
                raise RefusedError(f"{name}: given twice with different values")
            wanted[key] = checked
        state = self._current(memory)
        fresh = state.memory
        overrides = fresh.native.get("edits") or {}
        fields: dict[str, Any] = {}
        added: list[str] = []
        removed: list[str] = []
        for key, value in wanted.items():
            old = _current_value(fresh, key)
            if value is None and key not in overrides:
                continue  # nothing to drop
            if value is not None and _same(old, value):
                continue
            fields[key] = value
            added.append(f"{key}={_show(value)}" if value is not None else f"{key}=<raw value>")
            if old not in (None, []):
                removed.append(f"{key}={_show(old)}")
        if not fields:
            names = ", ".join(wanted)
            raise RefusedError(f"{names}: already has that value; nothing to change")
        prior = list(fresh.native.get("edited_by") or [])

        def build(vid: str) -> dict[str, Any]:
            return {
                "id": vid,
                "lens": LENS_EDIT,
                "applied_to": [memory.id],
                "delta_from_raw": {
                    "added": "; ".join(added),
                    "removed": "; ".join(removed),
                    "reweighted": [],
                    "fields": fields,
                },
                "provenance_braid": [memory.id, *prior],
            }

        view_id, change = self._view(state, "set", self._stamp(), build)
        return Plan(
            "set",
            memory.vault_root,
            [memory.id],
            f"set: append view {view_id} (lens {LENS_EDIT}: {', '.join(fields)}) to {VIEWS}; "
            "the raw record stays as it was",
            [change],
            reads=self._reads(state, [change]),
        )

    def plan_edit_body(self, memory: Memory, body: str) -> Plan:
        state = self._current(memory)
        rank = TYPE_RANK[state.memory.kind]
        if rank + 1 >= len(LATTICE):
            raise RefusedError(
                f"body: a {state.memory.kind} is the top of the lattice and raw records are "
                "immutable; there is no higher type to derive a corrected record as"
            )
        if body == state.memory.body:
            raise RefusedError("body: unchanged")
        ts = self._stamp()
        return self._derive(state, "edit_body", LATTICE[rank + 1], body, "reconcile", ts)

    def plan_promote(self, memory: Memory, options: dict[str, Any]) -> Plan:
        unknown = sorted(set(options) - _PROMOTE_OPTIONS)
        if unknown:
            raise RefusedError(
                f"{unknown[0]}: not a promote option for experience records "
                "(options: text, type, now)"
            )
        ts = self._stamp(options.get("now"))
        state = self._current(memory)
        kind = state.memory.kind
        rank = TYPE_RANK[kind]
        chosen = options.get("type")
        if chosen is None:
            if rank + 1 >= TYPE_RANK["reconciliation"]:
                raise RefusedError(
                    f"type: a {kind} is promoted only with type=reconciliation chosen explicitly"
                    if kind == "inference"
                    else f"type: a {kind} is the top of the lattice; nothing to promote to"
                )
            new_type = LATTICE[rank + 1]
        else:
            if not isinstance(chosen, str) or chosen not in TYPE_RANK:
                raise RefusedError(f"type: {chosen!r} is not one of {', '.join(LATTICE)}")
            if TYPE_RANK[chosen] <= rank:
                raise RefusedError(
                    f"type: {chosen} is not above {kind}; lineage only derives upward"
                )
            new_type = chosen
        text = options.get("text", options.get("body"))
        if text is None:
            prefix = _PROMOTE_PREFIX[new_type]
            body = state.memory.body
            text = body if body.startswith(prefix) else prefix + body
        elif not isinstance(text, str):
            raise RefusedError(f"text: {text!r} is not a string")
        return self._derive(state, "promote", new_type, text, "model_infer", ts)

    def plan_archive(
        self, memory: Memory, reason: str | None = None, *, as_of: date | None = None
    ) -> Plan:
        """Append a WAL tombstone of reason `archived` (`reason` goes into its note).

        `as_of` (the decay date of a run) is accepted for the writer protocol
        and not used: experience records have no decay model, and the op's
        `ts` is when the archive happens (the clock), not the date decayed to.
        """
        state = self._current(memory)
        if state.memory.archived:
            raise RefusedError("already archived")
        ts = self._stamp()
        op = archive_op(memory.id, ts)
        if reason:
            op["note"] = reason
        wal_id, change = self._wal_entry(state, op)
        label = f" ({reason})" if reason else ""
        return Plan(
            "archive",
            memory.vault_root,
            [memory.id],
            f"archive: append {wal_id} (tombstone, reason archived{label}) to {WAL}",
            [change],
            reads=self._reads(state, [change]),
        )

    def plan_restore(self, memory: Memory) -> Plan:
        state = self._current(memory)
        if not state.memory.archived:
            raise RefusedError("not archived")
        wal_id, change = self._wal_entry(state, restore_op(memory.id, self._stamp()))
        return Plan(
            "restore",
            memory.vault_root,
            [memory.id],
            f"restore: append {wal_id} (restore op reversing the archive) to {WAL}",
            [change],
            reads=self._reads(state, [change]),
        )

    def plan_redact(
        self, memory: Memory, redactions: Sequence[Redaction], *, upward: bool = False
    ) -> Plan:
        """A tombstone with reason redaction, and an upward redacted record if asked."""
        return plan_redact_record(self, memory, redactions, upward=upward)

    def plan_erase(self, memory: Memory) -> Plan:
        """A tombstone with the spec's erasure reason (gdpr_erasure)."""
        return plan_erase_record(self, memory)

    def plan_restore_version(self, memory: Memory, data: bytes, expected: bytes | None) -> Plan:
        """Refused: a raw record is immutable, so an earlier version is never written back.

        Its history is for reading (`memlens history --at`); a correction is
        a new record derived upward (`memlens promote`, or an edit of the body).
        """
        raise RefusedError(
            f"{memory.id}: raw experience records are immutable; memlens never rewrites one,"
            " so an earlier version can be shown but not restored (derive a corrected"
            " record instead: edit the body or promote)"
        )

    # -- review queue: merge / supersede (see curate.py) --------------------

    def plan_merge(self, keep: Memory, other: Memory, options: CurationOptions) -> list[Step]:
        return curate.merge_steps(self, keep, other, options)

    def plan_supersede(self, new: Memory, old: Memory, options: CurationOptions) -> list[Step]:
        return curate.supersede_steps(self, new, old, options)


WRITER = register_writer(ExperienceRecordWriter())

__all__ = ["WRITER", "ExperienceRecordWriter"]
