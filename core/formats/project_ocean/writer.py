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

from collections.abc import Sequence
from datetime import date
from typing import Any, ClassVar

from ...errors import RefusedError
from ...model import Memory
from ...text.paths import safe_join
from ...text.yamledit import REMOVE
from ...write.journal import FileChange, Plan
from ...write.writes import snapshot
from ..curating import CurationOptions, Step
from ..file_version import plan_file_version
from ..privacy_model import Redaction, redaction_summary
from ..redaction_edits import as_erase, redacted_file_text, refuse_upward
from ..writing import register_writer
from . import curate
from .adapter import ProjectOceanAdapter
from .schema import FORMAT_ID
from .write_fields import _DATE_FIELDS, _check_field, _promote_date, _refuse_if_promoted
from .write_files import (
    _closing_fence,
    _edit,
    _load,
    _move_plan,
    _same,
    _validate,
    _write_plan,
    destination,
)


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
        changes = [
            FileChange(kind="create", path=dst, expected=snapshot(dst), data=new.encode("utf-8"))
        ]
        source_note = "source unchanged"
        if doc.fresh.native.get("generation") == 2:
            # memory-promote.py (second generation) marks the source `promoted: true`.
            marked = _edit(doc.raw, {"promoted": True}, "promoted")
            _validate(doc.root, doc.rel, marked, "promoted")
            changes.append(
                FileChange(
                    kind="write", path=doc.path, expected=doc.snap, data=marked.encode("utf-8")
                )
            )
            source_note = "source gets promoted: true"
        return Plan(
            action="promote",
            vault_root=doc.root,
            memory_ids=[doc.fresh.id, copy.id],
            summary=(
                f"promote: copy {doc.rel} to {dst_rel} with promoted_from: {agent}, "
                f"promoted_at: {when.isoformat()} ({source_note})"
            ),
            changes=changes,
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

    # -- redact / erase (privacy) -------------------------------------------

    def plan_redact(
        self, memory: Memory, redactions: Sequence[Redaction], *, upward: bool = False
    ) -> Plan:
        """Replace only the secrets' characters in the file (frontmatter and body)."""
        refuse_upward(upward, "Project Ocean")
        doc = _load(memory)
        adapter = ProjectOceanAdapter()
        new = redacted_file_text(
            doc.raw,
            redactions,
            adapter.text_fields(doc.fresh, doc.raw),
            lambda text: adapter.text_fields(_validate(doc.root, doc.rel, text, "redact"), text),
        )
        return _write_plan(
            "redact", doc, new, f"redact: {redaction_summary(redactions)} in {doc.rel}"
        )

    def plan_erase(self, memory: Memory) -> Plan:
        """Erasure is the format's archive: a move to the agent's `archive/`."""
        return as_erase(self.plan_archive(memory, "erasure"))

    # -- history: put back an earlier version ---------------------------------

    def plan_restore_version(self, memory: Memory, data: bytes, expected: bytes | None) -> Plan:
        """The file's bytes at an earlier commit, written back whole (see file_version)."""
        return plan_file_version(ProjectOceanAdapter(), memory, data, expected)

    # -- review queue: merge / supersede (see curate.py) --------------------

    def plan_merge(self, keep: Memory, other: Memory, options: CurationOptions) -> list[Step]:
        return curate.merge_steps(self, keep, other, options)

    def plan_supersede(self, new: Memory, old: Memory, options: CurationOptions) -> list[Step]:
        return curate.supersede_steps(self, new, old, options)


register_writer(ProjectOceanWriter())

__all__ = ["ProjectOceanWriter"]
