"""The format's facts: its id, the shared folder, the frontmatter fields and pointer fields."""

from __future__ import annotations

from ...refs import PointerField

FORMAT_ID = "project-ocean"

#: Agent-independent id prefix for shared/observations/.
SHARED = "shared"

#: Frontmatter keys the format (or memlens's own actions on it) defines;
#: everything else is an extra field, kept as written.
KNOWN_FIELDS: tuple[str, ...] = (
    "tags",
    "confidence",
    "created",
    "decay",
    "source",
    "backlinks",
    "verified",
    "pinned",
    "promoted_from",
    "promoted_at",
    # The second generation (importance, max_age, refs, ...; see `decay2`),
    # and `neglect_penalty`, which memlens's decay run writes to never
    # compound the neglect penalty.
    "importance",
    "max_age",
    "refs",
    "ref_by",
    "promoted",
    "neglect_penalty",
)

#: The fields that mark each generation: a file with one of the first and
#: one of the second mixes them and is invalid.
GEN1_FIELDS: tuple[str, ...] = ("confidence", "decay")
GEN2_FIELDS: tuple[str, ...] = ("importance", "max_age")

_KNOWN = frozenset(KNOWN_FIELDS)

#: Every field the spec defines as pointing at another observation.
POINTER_FIELDS: tuple[PointerField, ...] = (
    PointerField("backlinks", "observation", "related observations by file name"),
    PointerField("ref_by", "observation (2nd generation)", "citing observations, agent/obs-..."),
)
