"""Dream Cycle actions: what pin, edit, promote, archive and restore mean here.

DESIGN.md, dream-cycle column.  Every change is made on the file's byte lines,
so only the lines that must change change; the BOM, each line's CRLF/LF and
every other byte stay as they were (invalid sections are never touched).

- pin: set `dc:ttl=never` in the section's comment and remember the value it
  replaced in `dc:ttl_before_pin=<old>` (`none` when there was no dc:ttl).  An
  untagged section gets a new comment line right after its heading with the
  explicit Phase 3 defaults, so it stays valid:
  `<!-- dc:type=fact dc:importance=5.0 dc:ttl=never dc:date=<today>
  dc:ttl_before_pin=untagged -->`.
- unpin: put back the `dc:ttl` recorded in `dc:ttl_before_pin` (or remove
  `dc:ttl` when none was recorded, so the type's default applies); a comment
  that pin created and nobody changed since is removed again.
- set: rewrite only the comment line(s).  Names: `type`, `importance`, `ttl`,
  `confidence`, `source`, `date`, `decayed` or any `dc:*` (the `dc:` prefix is
  optional); a value of None (or yamledit.REMOVE) removes an optional field.
  Setting a field of an untagged section writes a new comment with the Phase 3
  defaults (type fact, importance 5.0, date today) plus the change.
- edit body: replace the section's body; heading and comment are untouched.
  A body line starting with `## ` would split the section and is refused.
- promote: Phase 3 tagging.  An untagged section gets explicit `dc:type` (the
  classification, or `options["type"]`), `dc:importance` (5.0 or
  `options["importance"]`) and `dc:date` (`options["as_of"]` or today).  A
  tagged section is retyped only to a longer-TTL type the user chooses; a new
  importance given there counts from the promote date (`dc:decayed`).
- archive: remove the section's lines from observations.md and append one
  archive.jsonl entry in the spec's shape (`id`, `original_date`, `impact`,
  `type`, `ttl_days`, `importance`, `archived_reason`, `full_text`) plus
  `section_id`, `after_section` and `archived_on`; one plan, both files.
  The id is `OBS-<original date>-<NNN>`, unique among archive ids; `impact`
  is the band of the recorded importance; `importance` the current one;
  `full_text` is the section's exact text (heading, comment, body).
- restore: put the section back into observations.md after the section it
  followed (`after_section`), or at the end when that one is gone or unknown,
  and append a restore marker `{"id": ..., "restored": true, "restored_on":
  ..., "section_id": ...}` to archive.jsonl.  archive.jsonl is append-only:
  the entry's line is never deleted; the adapter hides entries that a later
  marker restored.  Entries written by other tools (full_text is not a
  section) get a heading from their first sentence and a comment from the
  entry's type/importance/ttl/original_date; their importance is the value at
  archive time, so `dc:decayed` is set to the restore date.  Sections in
  archived-observations.md move back into observations.md.

Every planner re-reads the files, re-scans the vault with the adapter, and
refuses (ConflictError) when the memory no longer matches what the user saw;
the new bytes are scanned again with the adapter (in a private temporary
folder) before a plan is returned.

The clock is read only when no date is given: `DreamCycleWriter.clock`
(default `date.today`) dates pin/set/promote tags, `archived_on` and
`restored_on`; decay runs pass `as_of`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date
from typing import Any, ClassVar

from ...errors import RefusedError
from ...model import Memory
from ...write.journal import FileChange, Plan
from ..curating import CurationOptions, Step
from ..privacy_model import Redaction
from ..redaction_edits import as_erase, refuse_upward
from ..writing import register_writer
from . import curate
from .classify import TYPE_TTL, effective_type
from .decay import section_decay
from .files import ARCHIVE_JSONL, ARCHIVED_MD, FORMAT_ID, OBSERVATIONS
from .write_archive import (
    after_of,
    append_lines,
    archive_change,
    archive_entry,
    check_archived,
    remove_sections,
)
from .write_fields import (
    DEFAULT_IMPORTANCE,
    DEFAULT_TYPE,
    REQUIRED,
    _comment_span,
    _label,
    field_key,
    field_value,
    meta_plan,
)
from .write_files import (
    VaultState,
    _ending,
    _load,
    _section,
    _short,
    check_section,
    scan_candidate,
    splice,
)
from .write_promote import promote_plan
from .write_redact import plan_redact_section
from .write_restore import restore_jsonl, restore_md
from .write_version import version_plan

#: Where pin remembers the dc:ttl it replaced.
PIN_MARKER = "dc:ttl_before_pin"
PIN_NO_TTL = "none"
PIN_UNTAGGED = "untagged"


class DreamCycleWriter:
    """Plans actions on Dream Cycle sections and archive entries."""

    format_id: ClassVar[str] = FORMAT_ID

    def __init__(self, clock: Callable[[], date] = date.today) -> None:
        #: The one clock read: dates for new tags and archive stamps.
        self.clock = clock

    # -- helpers -------------------------------------------------------------

    def _plan(
        self,
        action: str,
        state: VaultState,
        ids: list[str],
        summary: str,
        changes: list[FileChange],
    ) -> Plan:
        return Plan(action, state.root, ids, summary, changes)

    # -- pin / unpin -------------------------------------------------------

    def plan_pin(self, memory: Memory) -> Plan:
        state, fresh = _load(memory)
        _pos, sec = _section(state, fresh)
        title = _short(sec.title)
        if not sec.tagged:
            today = self.clock().isoformat()
            fields = {
                "dc:type": DEFAULT_TYPE,
                "dc:importance": DEFAULT_IMPORTANCE,
                "dc:ttl": "never",
                "dc:date": today,
                PIN_MARKER: PIN_UNTAGGED,
            }
            return meta_plan(
                "pin",
                state,
                fresh,
                sec,
                {},
                f"pin: write a dc comment with dc:ttl=never in untagged section '{title}'"
                f" (Phase 3 defaults: dc:type=fact dc:importance=5.0 dc:date={today})",
                create=fields,
            )
        old = sec.fields.get("dc:ttl")
        if old is not None and old.strip().lower() == "never":
            raise RefusedError(f"{OBSERVATIONS}: '{title}' is already pinned (dc:ttl=never)")
        changes: dict[str, str | None] = {
            "dc:ttl": "never",
            PIN_MARKER: old if old is not None else PIN_NO_TTL,
        }
        was = f"dc:ttl={old}" if old is not None else "no dc:ttl"
        return meta_plan(
            "pin",
            state,
            fresh,
            sec,
            changes,
            f"pin: set dc:ttl=never in section '{title}' (was {was})",
        )

    def plan_unpin(self, memory: Memory) -> Plan:
        state, fresh = _load(memory)
        _pos, sec = _section(state, fresh)
        title = _short(sec.title)
        ttl = sec.fields.get("dc:ttl")
        if not sec.tagged or ttl is None or ttl.strip().lower() != "never":
            raise RefusedError(f"{OBSERVATIONS}: '{title}' is not pinned (no dc:ttl=never)")
        marker = sec.fields.get(PIN_MARKER)
        kind = effective_type(sec.fields.get("dc:type"))
        default = TYPE_TTL[kind]
        default_text = "never" if default is None else f"{default} days"
        if marker == PIN_UNTAGGED:
            pristine = (
                set(sec.fields) == {"dc:type", "dc:importance", "dc:ttl", "dc:date", PIN_MARKER}
                and sec.fields.get("dc:type") == DEFAULT_TYPE
                and sec.fields.get("dc:importance") == DEFAULT_IMPORTANCE
                and sec.comment_line == sec.comment_end_line
            )
            if pristine:
                return meta_plan(
                    "unpin",
                    state,
                    fresh,
                    sec,
                    {},
                    f"unpin: remove the dc comment pin wrote in section '{title}' (untagged again)",
                    drop_comment=True,
                )
            changes: dict[str, str | None] = {"dc:ttl": None, PIN_MARKER: None}
            what = f"remove dc:ttl=never (the type's TTL applies: {default_text})"
        elif marker is None or marker == PIN_NO_TTL:
            changes = {"dc:ttl": None, PIN_MARKER: None}
            what = f"remove dc:ttl=never (the type's TTL applies: {default_text})"
            if marker is None:
                what += "; no earlier dc:ttl was recorded"
        else:
            old = field_value("dc:ttl", marker) if marker.strip() else None
            if old is None or old == "never":
                raise RefusedError(
                    f"{_label(PIN_MARKER)}: {marker!r} is not a TTL to restore; set ttl by hand"
                )
            changes = {"dc:ttl": old, PIN_MARKER: None}
            what = f"restore dc:ttl={old}"
        return meta_plan("unpin", state, fresh, sec, changes, f"unpin: {what} in section '{title}'")

    # -- edit metadata -----------------------------------------------------

    def plan_set(self, memory: Memory, changes: dict[str, Any]) -> Plan:
        if not changes:
            raise RefusedError("no field to set")
        state, fresh = _load(memory)
        _pos, sec = _section(state, fresh)
        title = _short(sec.title)
        wanted: dict[str, str | None] = {}
        for name, value in changes.items():
            key = field_key(name)
            wanted[key] = field_value(key, value)
        base = dict(sec.fields) if sec.tagged else {}
        for key, value in wanted.items():
            if value is None and key in REQUIRED and (sec.tagged or key in base):
                raise RefusedError(
                    f"{_label(key)}: required in a tagged section (dc:type, dc:importance,"
                    " dc:date); it cannot be removed"
                )
        effective = {
            k: v
            for k, v in wanted.items()
            if not (v is None and k not in base) and not (v is not None and base.get(k) == v)
        }
        if not effective:
            raise RefusedError(f"{OBSERVATIONS}: nothing to change (the values are already set)")
        shown = ", ".join(
            f"{_label(k)}={v}" if v is not None else f"remove {_label(k)}"
            for k, v in effective.items()
        )
        if sec.tagged:
            return meta_plan(
                "set", state, fresh, sec, effective, f"set: {shown} in section '{title}'"
            )
        today = self.clock().isoformat()
        defaults = {
            "dc:type": DEFAULT_TYPE,
            "dc:importance": DEFAULT_IMPORTANCE,
            "dc:date": today,
        }
        filled = [f"{k}={v}" for k, v in defaults.items() if k not in effective]
        note = f" (untagged: new dc comment with Phase 3 defaults {' '.join(filled)})"
        return meta_plan(
            "set",
            state,
            fresh,
            sec,
            effective,
            f"set: {shown} in section '{title}'" + (note if filled else " (new dc comment)"),
            create=defaults,
        )

    # -- edit body ---------------------------------------------------------

    def plan_edit_body(self, memory: Memory, body: str) -> Plan:
        if not isinstance(body, str):
            raise RefusedError("body: must be text")
        text = body.replace("\r\n", "\n").replace("\r", "\n").strip("\n")
        new_lines = text.split("\n") if text else []
        for n, line in enumerate(new_lines, 1):
            if line.startswith("## "):
                raise RefusedError(
                    f"body: line {n} starts with '## ', which would split the section in two;"
                    " use '### ' for a sub-heading"
                )
        state, fresh = _load(memory)
        _pos, sec = _section(state, fresh)
        if not sec.tagged:
            first = next((ln for ln in new_lines if ln), "")
            if first.lstrip().startswith("<!--"):
                raise RefusedError(
                    "body: an untagged section's body cannot start with '<!--': it would be"
                    " read as a metadata comment"
                )
        raw = list(state.obs.raw)
        lines = list(state.obs.lines)
        begin = sec.start_line  # 0-based index of the line after the heading
        if sec.tagged and sec.comment_end_line is not None:
            _first, last_c, region, _open, close_at = _comment_span(lines, sec)
            begin = last_c + 1
            tail = region[close_at + 3 :]
            if tail.strip():
                # Body text after `-->` on the comment's line: cut it; the new
                # body below replaces it.
                keep = lines[last_c][: len(lines[last_c]) - len(tail)]
                raw[last_c] = keep.encode("utf-8") + _ending(raw[last_c])
                lines[last_c] = keep
        stop = sec.end_line
        region_lines = lines[begin:stop]
        lead = 0
        while lead < len(region_lines) and region_lines[lead] == "":
            lead += 1
        trail = 0
        while (
            trail < len(region_lines) - lead and region_lines[len(region_lines) - 1 - trail] == ""
        ):
            trail += 1
        if lead == len(region_lines):
            lead, trail = 0, len(region_lines)
        replacement = list(new_lines)
        if replacement and trail == 0 and not sec.last:
            replacement.append("")  # keep a blank line before the next heading
        new_raw = splice(state.obs, raw, begin + lead, stop - trail, replacement)
        new = state.obs.render(new_raw)
        if new == state.obs.data:
            raise RefusedError(f"{OBSERVATIONS}: the body is unchanged")
        after = scan_candidate(state, obs=new)
        check_section(state, after, fresh, expected_fields=dict(fresh.fields), expected_body=text)
        return self._plan(
            "edit_body",
            state,
            [fresh.id],
            f"edit body: replace the body of section '{_short(sec.title)}'"
            f" ({len(new_lines)} lines)",
            [FileChange("write", state.obs.path, state.obs.snap, data=new, append_only=True)],
        )

    # -- promote -----------------------------------------------------------

    def plan_promote(self, memory: Memory, options: dict[str, Any]) -> Plan:
        return promote_plan(memory, options, self.clock)

    # -- archive -----------------------------------------------------------

    def plan_archive(
        self, memory: Memory, reason: str | None = None, *, as_of: date | None = None
    ) -> Plan:
        state, fresh = _load(memory)
        pos, sec = _section(state, fresh)
        when = as_of or self.clock()
        current = section_decay(fresh, when).current_importance
        label = reason.strip() if isinstance(reason, str) and reason.strip() else "manual"
        used = state.archive_ids() | {m.id for m in state.scan.memories}
        entry = archive_entry(
            state, fresh, sec, after_of(state, pos, {pos}), label, current, when, used
        )
        new_obs = state.obs.render(remove_sections(state, state.obs.raw, [pos]))
        new_arc = append_lines(state.archive, [entry])
        check_archived(state, new_obs, new_arc, {fresh.id: entry})
        return self._plan(
            "archive",
            state,
            [fresh.id, entry["id"]],
            f"archive: move section '{_short(sec.title)}' to {ARCHIVE_JSONL} as {entry['id']}"
            f" ({label})",
            [
                FileChange("write", state.obs.path, state.obs.snap, data=new_obs, append_only=True),
                archive_change(state.archive, new_arc),
            ],
        )

    # -- restore -----------------------------------------------------------

    def plan_restore(self, memory: Memory) -> Plan:
        state, fresh = _load(memory)
        if not fresh.archived:
            raise RefusedError(f"{fresh.id} is not archived")
        when = self.clock()
        if fresh.path == ARCHIVE_JSONL:
            return restore_jsonl(state, fresh, when)
        if fresh.path == ARCHIVED_MD:
            return restore_md(state, fresh, when)
        raise RefusedError(f"{fresh.path}: not an archive memlens knows how to restore from")

    # -- redact / erase (privacy) --------------------------------------------

    def plan_redact(
        self, memory: Memory, redactions: Sequence[Redaction], *, upward: bool = False
    ) -> Plan:
        """Replace only the secrets' characters in the section's lines (see write_redact)."""
        refuse_upward(upward, "Dream Cycle")
        return plan_redact_section(memory, redactions)

    def plan_erase(self, memory: Memory) -> Plan:
        """Erasure is the format's archive: the section moves to archive.jsonl."""
        return as_erase(self.plan_archive(memory, "erasure"))

    # -- history: put back an earlier version ------------------------------

    def plan_restore_version(self, memory: Memory, data: bytes, expected: bytes | None) -> Plan:
        """The section's lines at an earlier commit, put back (see write_version)."""
        return version_plan(memory, data, expected)

    # -- review queue: merge / supersede (see curate.py) --------------------

    def plan_merge(self, keep: Memory, other: Memory, options: CurationOptions) -> list[Step]:
        return curate.merge_steps(self, keep, other, options)

    def plan_supersede(self, new: Memory, old: Memory, options: CurationOptions) -> list[Step]:
        return curate.supersede_steps(self, new, old, options)


WRITER = DreamCycleWriter()


register_writer(WRITER)

__all__ = ["PIN_MARKER", "WRITER", "DreamCycleWriter"]
