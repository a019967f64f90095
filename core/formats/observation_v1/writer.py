"""observation-v1 actions: what pin, edit, promote, archive and restore mean here.

DESIGN.md, observation-v1 column:

- pin / unpin: add `pinned: true` as the last header line (kept as an extra
  field) / remove the `pinned` line.
- set: rewrite only the header lines of the fields that change.  Native names
  are accepted, plus `parent.child` for one level inside a mapping
  (`context.project`, `posterior.confidence`); for a comprehension,
  `confidence`, `statement` and `title` mean `posterior.confidence`,
  `posterior.statement` and `topic` unless the document has such a top-level
  key.  `spec` never changes; a new `id` must be a bare name not used in the
  vault (the file keeps its name; citations of the old id are not rewritten).
- edit body: replace the text after the closing fence; the header bytes, the
  BOM and the line-ending style stay as they were.
- promote: create `comprehension/<id>.md` (comprehension/v1) citing one or
  more observations; the observations are not touched.
- archive / restore: move the file to `archive/observations/` or
  `archive/comprehension/` and back; never over an existing file.

Every planner re-reads the file, re-parses it with the adapter and refuses
(ConflictError) if it no longer matches the Memory the user saw; the new
bytes are parsed again with the adapter's rules before a Plan is returned.

The one clock read: promote stamps `created`/`updated` with
`options["now"]` or `options["as_of"]` when given, else `datetime.now(UTC)`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date
from typing import Any, ClassVar

from ...errors import RefusedError
from ...model import Memory
from ...text.yamledit import REMOVE, edit_frontmatter
from ...write.journal import Plan
from ..curating import CurationOptions, Step
from ..file_version import plan_file_version
from ..privacy_model import Redaction, redaction_summary
from ..redaction_edits import as_erase, redacted_file_text, refuse_upward
from ..writing import register_writer
from . import curate
from .adapter import ObservationV1Adapter
from .schema import ARCHIVE_DIR, COMPREHENSION_DIR, FORMAT_ID, KIND_OBSERVATION, OBSERVATIONS_DIR
from .write_fields import _check_new_id, _check_only, _closing_fence, _edit_nested, _native_name
from .write_files import _load, _move_plan, _same, _show, _strs, _validate, _write_plan
from .write_promote import _plan_promote


class ObservationV1Writer:
    """Plans actions on observation/v1 and comprehension/v1 documents."""

    format_id: ClassVar[str] = FORMAT_ID

    # -- pin / unpin -------------------------------------------------------

    def plan_pin(self, memory: Memory) -> Plan:
        doc = _load(memory)
        if doc.fresh.pinned:
            raise RefusedError(f"{doc.rel}: {memory.id} is already pinned")
        new = edit_frontmatter(doc.raw, {"pinned": True})
        after = _validate(doc, new, ["pinned"])
        if not after.pinned:
            raise RefusedError("pinned: the edit did not pin the memory; not written")
        verb = "set" if "pinned" in doc.fresh.fields else "add"
        return _write_plan("pin", doc, new, f"pin: {verb} 'pinned: true' in {doc.rel}")

    def plan_unpin(self, memory: Memory) -> Plan:
        doc = _load(memory)
        if "pinned" not in doc.fresh.fields:
            raise RefusedError(f"{doc.rel}: {memory.id} is not pinned")
        new = edit_frontmatter(doc.raw, {"pinned": REMOVE})
        _validate(doc, new, ["pinned"])
        return _write_plan("unpin", doc, new, f"unpin: remove 'pinned' from {doc.rel}")

    # -- edit metadata -----------------------------------------------------

    def plan_set(self, memory: Memory, changes: dict[str, Any]) -> Plan:
        if not changes:
            raise RefusedError("no field to set")
        doc = _load(memory)
        fields = doc.fresh.fields
        top: dict[str, Any] = {}
        nested: dict[tuple[str, str], Any] = {}
        for name, value in changes.items():
            key = _native_name(doc, str(name))
            if key == "spec":
                if value is not REMOVE and value == fields.get("spec"):
                    continue
                raise RefusedError(
                    f"spec: a document's spec ({fields.get('spec')!r}) cannot be changed"
                )
            if key == "id" and value is not REMOVE:
                _check_new_id(doc, value)
            if key in fields or "." not in key:
                if value is not REMOVE and key in fields and _same(fields[key], value):
                    continue
                if value is REMOVE and key not in fields:
                    continue
                top[key] = value
                continue
            parent, _, child = key.partition(".")
            if not parent or not child or "." in child:
                raise RefusedError(f"{key}: only one level inside a mapping can be set")
            block = fields.get(parent)
            if block is not None and not isinstance(block, dict):
                raise RefusedError(f"{key}: {parent} is not a mapping")
            current = block or {}
            if value is REMOVE and child not in current:
                continue
            if value is not REMOVE and child in current and _same(current[child], value):
                continue
            nested[(parent, child)] = value
        clash = {p for p, _ in nested} & set(top)
        if clash:
            name = sorted(clash)[0]
            raise RefusedError(f"{name}: set either the whole field or its parts, not both")
        if not top and not nested:
            raise RefusedError(f"{doc.rel}: nothing to change (the values are already set)")

        new = edit_frontmatter(doc.raw, top) if top else doc.raw
        for (parent, child), value in nested.items():
            new = _edit_nested(new, parent, child, value)
        changed = [*top, *(f"{p}.{c}" for p, c in nested)]
        _check_only(doc, new, top, nested)
        _validate(doc, new, changed)

        parts = [f"{k}={_show(v)}" for k, v in top.items()]
        parts += [f"{p}.{c}={_show(v)}" for (p, c), v in nested.items()]
        summary = f"set: {', '.join(parts)} in {doc.rel}"
        new_id = top.get("id")
        if isinstance(new_id, str):
            cited = [c for c in _strs(memory.native.get("incorporated_by")) if c]
            if cited:
                summary += f" (cited by {', '.join(cited)} under the old id; not rewritten)"
        return _write_plan("set", doc, new, summary)

    # -- edit body ---------------------------------------------------------

    def plan_edit_body(self, memory: Memory, body: str) -> Plan:
        doc = _load(memory)
        lines = doc.raw.splitlines(keepends=True)
        close = _closing_fence(lines)
        head = "".join(lines[: close + 1])
        text = body.replace("\r\n", "\n")
        if not head.endswith(("\n", "\r")) and text:
            head += doc.newline
        if doc.newline != "\n":
            text = text.replace("\n", doc.newline)
        new = head + text
        if new == doc.raw:
            raise RefusedError(f"{doc.rel}: the body is unchanged")
        after = _validate(doc, new, ["body"])
        if after.body != body.replace("\r\n", "\n"):
            raise RefusedError("body: the new body would not read back as written; not written")
        count = len(body.splitlines())
        return _write_plan(
            "edit_body", doc, new, f"edit body: replace the body of {doc.rel} ({count} lines)"
        )

    # -- promote -----------------------------------------------------------

    def plan_promote(self, memory: Memory, options: dict[str, Any]) -> Plan:
        return self.plan_promote_many([memory], options)

    def plan_promote_many(
        self, memories: Sequence[Memory], options: dict[str, Any] | None = None
    ) -> Plan:
        """One comprehension document citing every observation given.

        `options["observations"]` may name more observation ids of the same
        vault (they are cited too).  Other options: `topic`, `domain`,
        `statement` (posterior), `prior_statement`, `confidence` (posterior,
        default medium), `prior_confidence` (default unknown), `reasoning`,
        `id` (else `comp-<slug of domain>-<NNN>`), `slug`, `now` / `as_of`.
        """
        return _plan_promote(list(memories), dict(options or {}))

    # -- archive / restore -------------------------------------------------

    def plan_archive(
        self, memory: Memory, reason: str | None = None, *, as_of: date | None = None
    ) -> Plan:
        """Move to `archive/observations/` or `archive/comprehension/`.

        `as_of` is accepted for the writer protocol (decay runs pass it) and
        not used: observation-v1 has no decay and an archive records no date.
        """
        doc = _load(memory)
        if doc.archived:
            raise RefusedError(f"{doc.rel}: {memory.id} is already archived")
        folder = OBSERVATIONS_DIR if doc.kind == KIND_OBSERVATION else COMPREHENSION_DIR
        dst_rel = f"{ARCHIVE_DIR}/{folder}/{doc.path.name}"
        why = f" ({reason})" if reason else ""
        return _move_plan("archive", doc, dst_rel, f"archive: move {doc.rel} -> {dst_rel}{why}")

    def plan_restore(self, memory: Memory) -> Plan:
        doc = _load(memory)
        if not doc.archived:
            raise RefusedError(f"{doc.rel}: {memory.id} is not archived")
        folder = OBSERVATIONS_DIR if doc.kind == KIND_OBSERVATION else COMPREHENSION_DIR
        dst_rel = f"{folder}/{doc.path.name}"
        return _move_plan("restore", doc, dst_rel, f"restore: move {doc.rel} -> {dst_rel}")

    # -- redact / erase (privacy) -------------------------------------------

    def plan_redact(
        self, memory: Memory, redactions: Sequence[Redaction], *, upward: bool = False
    ) -> Plan:
        """Replace only the secrets' characters in the document (frontmatter and body)."""
        refuse_upward(upward, "observation/v1")
        doc = _load(memory)
        adapter = ObservationV1Adapter()
        new = redacted_file_text(
            doc.raw,
            redactions,
            adapter.text_fields(doc.fresh, doc.raw),
            lambda text: adapter.text_fields(_validate(doc, text, ["redact"]), text),
        )
        return _write_plan(
            "redact", doc, new, f"redact: {redaction_summary(redactions)} in {doc.rel}"
        )

    def plan_erase(self, memory: Memory) -> Plan:
        """Erasure is the format's archive: a move to `archive/observations/`."""
        return as_erase(self.plan_archive(memory, "erasure"))

    # -- history: put back an earlier version ---------------------------------

    def plan_restore_version(self, memory: Memory, data: bytes, expected: bytes | None) -> Plan:
        """The file's bytes at an earlier commit, written back whole (see file_version)."""
        return plan_file_version(ObservationV1Adapter(), memory, data, expected)

    # -- review queue: merge / supersede (see curate.py) --------------------

    def plan_merge(self, keep: Memory, other: Memory, options: CurationOptions) -> list[Step]:
        return curate.merge_steps(self, keep, other, options)

    def plan_supersede(self, new: Memory, old: Memory, options: CurationOptions) -> list[Step]:
        return curate.supersede_steps(self, new, old, options)


WRITER = register_writer(ObservationV1Writer())


def plan_promote_many(memories: Iterable[Memory], options: dict[str, Any] | None = None) -> Plan:
    """Bulk promote: one comprehension document citing all `memories` (observations).

    See ObservationV1Writer.plan_promote_many for the options.  Apply the plan
    with core.write.txn.apply_plan; it is one undoable step.
    """
    return _plan_promote(list(memories), dict(options or {}))
