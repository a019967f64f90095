"""The store's files and the spec's shapes: file names, the type lattice, spec keys,
pointer fields, WAL ops and view lenses.
"""

from __future__ import annotations

from ...refs import PointerField, PointerKind

FORMAT_ID = "experience-records"

EXPERIENCES = "experiences.jsonl"
VIEWS = "views.jsonl"
STANCES = "stances.jsonl"
WAL = "wal.jsonl"
#: The files of a vault in scan order: the WAL first (erasure decides what of
#: an experience may be kept), then the view stores, then the raw store.
_FILE_ORDER: tuple[str, ...] = (WAL, VIEWS, STANCES, EXPERIENCES)

#: The experience type lattice, lowest first.
LATTICE: tuple[str, ...] = ("occurrence", "observation", "inference", "reconciliation")
TYPE_RANK: dict[str, int] = {t: i for i, t in enumerate(LATTICE)}

#: Keys the spec's `experience` table defines; anything else is an extra field.
SPEC_KEYS: frozenset[str] = frozenset(
    {
        "id",
        "type",
        "created_at",
        "content",
        "provenance",
        "evidence_ptrs",
        "confidence",
        "embeddings",
        "affect",
        "parents",
        "sign",
    }
)

#: Every field the spec defines as pointing at a record (see `core.refs`).
POINTER_FIELDS: tuple[PointerField, ...] = (
    PointerField("parents", "experience", "direct lineage: parent experiences"),
    PointerField(
        "evidence_ptrs",
        "experience",
        "parent experiences or external URIs",
        PointerKind.RECORD_OR_URI,
    ),
    # Not in the spec's table; observation/v1's name for a trace, checked
    # (for path syntax only) when an experience carries it.
    PointerField("trace_ref", "experience", "an execution trace", PointerKind.EXTERNAL),
    PointerField("applied_to", "view", "the raw experiences the lens reframes"),
    PointerField("provenance_braid", "view", "lineage: experiences, views and stances"),
    PointerField("delta_from_raw.reweighted.exp", "view", "the experiences reweighted"),
    PointerField("candidates.exp", "stance", "the experiences whose claims compete"),
    PointerField("decision.support", "stance", "supporting experiences, views, stances"),
)
#: Record fields: (field, graph edge type); raw-only ones name experiences.
_VIEW_LINKS: tuple[tuple[str, str], ...] = (
    ("applied_to", "applied_to"),
    ("provenance_braid", "provenance"),
    ("delta_from_raw.reweighted.exp", "reweighted"),
)
_STANCE_LINKS: tuple[tuple[str, str], ...] = (
    ("candidates.exp", "candidate"),
    ("decision.support", "support"),
)
_RAW_ONLY = frozenset({"applied_to", "delta_from_raw.reweighted.exp", "candidates.exp"})

#: WAL tombstone reason that archives (reversible) instead of erasing.
ARCHIVED_REASON = "archived"
OP_TOMBSTONE = "tombstone"
OP_RESTORE = "restore"
LENS_PIN = "pin"
LENS_UNPIN = "unpin"
LENS_EDIT = "edit_v1"
#: Metadata an `edit_v1` view may override (raw records stay immutable).
EDITABLE_FIELDS: tuple[str, ...] = ("tags", "confidence.p", "note")
