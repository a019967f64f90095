"""The writer protocol and registry: what every format's writer plans, and who is known.

Each format's `writer` module registers its writer here at import time;
`formats/writers.py` imports them all and answers `writer_for`.  Kept apart
from `writers.py` so the writer modules can register without importing the
module that imports them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from ..model import Memory
from ..write.journal import Plan
from .privacy_model import Redaction

if TYPE_CHECKING:
    from .curating import CurationOptions, Step


class FormatWriter(Protocol):
    """Plans the per-format meaning of each action.  Planning never writes.

    Every planner reads the file(s) it will change, takes a snapshot, and
    returns a Plan with the exact new bytes; it raises RefusedError (with the
    field and the reason) when the action is not allowed or would make the
    memory invalid.
    """

    format_id: ClassVar[str]

    def plan_pin(self, memory: Memory) -> Plan: ...

    def plan_unpin(self, memory: Memory) -> Plan: ...

    def plan_set(self, memory: Memory, changes: dict[str, Any]) -> Plan: ...

    def plan_edit_body(self, memory: Memory, body: str) -> Plan: ...

    def plan_promote(self, memory: Memory, options: dict[str, Any]) -> Plan: ...

    def plan_archive(
        self, memory: Memory, reason: str | None = None, *, as_of: date | None = None
    ) -> Plan:
        """Archive; `reason` and `as_of` are set by decay runs (None: a manual archive today)."""
        ...

    def plan_restore(self, memory: Memory) -> Plan: ...

    def plan_redact(
        self, memory: Memory, redactions: Sequence[Redaction], *, upward: bool = False
    ) -> Plan:
        """Replace only each secret's characters by `[REDACTED:<kind>]` (the format's way).

        Formats whose records are immutable (experience records) tombstone
        the record instead and, with `upward`, derive one holding the
        redacted text.  Refuses (conflict) when a secret is no longer there.
        """
        ...

    def plan_erase(self, memory: Memory) -> Plan:
        """Archive or tombstone the whole memory, as the format's archive means it."""
        ...

    def plan_restore_version(self, memory: Memory, data: bytes, expected: bytes | None) -> Plan:
        """Put back `data`, the memory's own bytes at an earlier commit (history's restore).

        `data` is what the adapter's `history_extract` gave for that version;
        `expected` the memory's bytes as the user saw them now (ConflictError
        if they changed).  An ordinary edit: journaled, undoable, never a
        git operation.
        """
        ...

    def plan_merge(self, keep: Memory, other: Memory, options: CurationOptions) -> list[Step]:
        """Steps keeping `keep` with what `other` adds and provenance, then archiving `other`."""
        ...

    def plan_supersede(self, new: Memory, old: Memory, options: CurationOptions) -> list[Step]:
        """Steps marking `new` as what holds now over `old` (archived unless `keep_old`)."""
        ...


_WRITERS: dict[str, FormatWriter] = {}


def register_writer(writer: FormatWriter) -> FormatWriter:
    """Make a format's writer known (called by each writer module)."""
    _WRITERS[writer.format_id] = writer
    return writer


def registered_writer(format_id: str) -> FormatWriter | None:
    """The writer registered for a format so far, if any (see `writers.writer_for`)."""
    return _WRITERS.get(format_id)
