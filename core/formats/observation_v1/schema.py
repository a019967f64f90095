"""The vault's layout and the two document specs: folders, kinds, fields, confidence
levels and pointer fields.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...refs import PointerField, PointerKind

FORMAT_ID = "observation-v1"
OBSERVATION_SPEC = "observation/v1"
COMPREHENSION_SPEC = "comprehension/v1"

OBSERVATIONS_DIR = "observations"
COMPREHENSION_DIR = "comprehension"
ARCHIVE_DIR = "archive"

KIND_OBSERVATION = "observation"
KIND_COMPREHENSION = "comprehension"

#: The comprehension/v1 confidence levels (reference `ConfidenceLevel`).
CONFIDENCE_LEVELS: tuple[str, ...] = ("high", "medium", "low", "unknown")

#: Keys the observation/v1 spec defines; everything else is an extra field.
#: `type: observation` appears in the spec's example but not in its field
#: tables, so it is kept as an extra (expected.json extra_fields_preserved).
OBSERVATION_FIELDS: frozenset[str] = frozenset(
    {"spec", "id", "timestamp", "source", "event", "context", "trace_ref"}
)
OBSERVATION_REQUIRED: tuple[str, ...] = ("spec", "id", "timestamp", "source", "event")

COMPREHENSION_FIELDS: frozenset[str] = frozenset(
    {
        "spec",
        "id",
        "topic",
        "domain",
        "version",
        "prior",
        "observations",
        "posterior",
        "created",
        "updated",
        "verified",
    }
)
COMPREHENSION_REQUIRED: tuple[str, ...] = (
    "id",
    "topic",
    "domain",
    "prior",
    "observations",
    "posterior",
    "created",
    "updated",
)
PRIOR_REQUIRED: tuple[str, ...] = ("statement", "confidence", "source")
POSTERIOR_REQUIRED: tuple[str, ...] = (
    "statement",
    "confidence",
    "update_reasoning",
    "observations_used",
)

#: Every field the model defines as pointing at a record or a trace.
POINTER_FIELDS: tuple[PointerField, ...] = (
    PointerField("observations", "comprehension", "the observations it incorporates"),
    PointerField(
        "posterior.observations_used", "comprehension", "the observations behind the update"
    ),
    PointerField("context.prior_belief", "observation", "the comprehension (<id>/v<N>) tested"),
    PointerField("trace_ref", "observation", "an execution trace", PointerKind.EXTERNAL),
)


@dataclass(frozen=True, slots=True)
class _Folder:
    """One folder of documents and how to read it."""

    rel: str
    kind: str
    archived: bool


_FOLDERS: tuple[_Folder, ...] = (
    _Folder(OBSERVATIONS_DIR, KIND_OBSERVATION, False),
    _Folder(COMPREHENSION_DIR, KIND_COMPREHENSION, False),
    _Folder(f"{ARCHIVE_DIR}/{OBSERVATIONS_DIR}", KIND_OBSERVATION, True),
    _Folder(f"{ARCHIVE_DIR}/{COMPREHENSION_DIR}", KIND_COMPREHENSION, True),
)


def _folder_rank(rel: str) -> tuple[int, _Folder] | None:
    parent = rel.rpartition("/")[0]
    for rank, folder in enumerate(_FOLDERS):
        if parent == folder.rel:
            return rank, folder
    return None


def folder_of(rel: str) -> tuple[str, bool] | None:
    """(kind, archived) of a vault-relative document path, None outside the folders."""
    parent = rel.rpartition("/")[0]
    for folder in _FOLDERS:
        if parent == folder.rel:
            return folder.kind, folder.archived
    return None
