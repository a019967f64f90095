"""Redaction and erasure of experience records: the raw line stays, a tombstone hides it.

The raw store is immutable (specs/experience-record.md), so a redaction
cannot replace characters in experiences.jsonl.  It appends the spec's WAL
tombstone op with `reason: redaction` (the record is erased from every
reader) and, when the user asks (`upward`), a new experience one step up
the lattice (a reconciliation stays a reconciliation: the lattice's top is
its own upper bound) holding the record's text with each secret replaced
by `[REDACTED:<kind>]`.  The new record names the one it replaces in
`provenance.redacted_from`, not in `parents`/`evidence_ptrs`: a pointer
at an erased record is a `references_tombstoned` problem by design, and a
redaction should leave a vault that validates.  Both ops go in one WAL
entry.  Erasure is a tombstone with the spec's `reason: gdpr_erasure`.

The raw line's bytes stay in experiences.jsonl either way (the spec erases
by purging the record's key): the scan keeps reporting them as tombstoned.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...model import Memory
from ...write.journal import FileChange, Plan
from ..privacy_model import Redaction, check_redactions, redacted, redaction_summary
from .action_records import next_wal_id
from .adapter import ExperienceRecordAdapter
from .schema import EXPERIENCES, LATTICE, OP_TOMBSTONE, TYPE_RANK, WAL
from .validation import experience_problem, wal_problem

if TYPE_CHECKING:
    from .writer import ExperienceRecordWriter

#: The tombstone reasons of a redaction and of an erasure.
REDACTION_REASON = "redaction"
ERASURE_REASON = "gdpr_erasure"


def _tombstone(exp_id: str, ts: str, reason: str) -> dict[str, Any]:
    return {"ts": ts, "op": OP_TOMBSTONE, "target": "exp", "id": exp_id, "reason": reason}


def plan_redact_record(
    writer: ExperienceRecordWriter,
    memory: Memory,
    redactions: Sequence[Redaction],
    *,
    upward: bool = False,
) -> Plan:
    """Tombstone the record (reason redaction) and, with `upward`, derive its redacted text."""
    state = writer._current(memory)
    m = state.memory
    check_redactions(ExperienceRecordAdapter().text_fields(m, None), redactions)
    ts = writer._stamp()
    ops: list[dict[str, Any]] = []
    changes: list[FileChange] = []
    note = ""
    if upward:
        rank = TYPE_RANK[m.kind]
        new_type = LATTICE[min(rank + 1, len(LATTICE) - 1)]
        exps = state.stores[EXPERIENCES]
        taken = exps.ids() | _wal_ids(state.stores[WAL].objects())
        new_id = writer._new_id("exp", ts, m.id, "redact", taken)
        record = {
            "id": new_id,
            "type": new_type,
            "created_at": ts,
            "content": {"text": redacted(m.body, redactions), "media": [], "structured": {}},
            "provenance": {
                "sources": [],
                "actor": "user",
                "method": "reconcile",
                "tool": "memlens",
                "redacted_from": m.id,
            },
            "evidence_ptrs": [],
            "parents": [],
        }
        changes.append(writer._append(exps, record, experience_problem))
        ops.append({"ts": ts, "op": "append", "target": "exp", "id": new_id})
        note = f", derive {new_type} {new_id} with the redacted text"
    ops.append(_tombstone(m.id, ts, REDACTION_REASON))
    wal = state.stores[WAL]
    wal_id = next_wal_id(wal.objects())
    changes.append(writer._append(wal, {"wal_id": wal_id, "ops": ops}, wal_problem))
    return Plan(
        "redact",
        m.vault_root,
        [m.id],
        f"redact: {redaction_summary(redactions)} in {m.id}: tombstone it (reason redaction,"
        f" {wal_id} in {WAL}){note}; the raw line stays in {EXPERIENCES}",
        changes,
        reads=writer._reads(state, changes),
    )


def plan_erase_record(writer: ExperienceRecordWriter, memory: Memory) -> Plan:
    """Tombstone the record with the spec's erasure reason."""
    state = writer._current(memory)
    ts = writer._stamp()
    wal_id, change = writer._wal_entry(state, _tombstone(memory.id, ts, ERASURE_REASON))
    return Plan(
        "erase",
        memory.vault_root,
        [memory.id],
        f"erase: append {wal_id} (tombstone, reason {ERASURE_REASON}) to {WAL};"
        f" the raw line stays in {EXPERIENCES}",
        [change],
        reads=writer._reads(state, [change]),
    )


def _wal_ids(entries: list[dict[str, Any]]) -> set[str]:
    """Ids any WAL op names (a new id must not reuse an erased one)."""
    out: set[str] = set()
    for entry in entries:
        ops = entry.get("ops")
        if isinstance(ops, list):
            out.update(str(op.get("id")) for op in ops if isinstance(op, dict))
    return out
