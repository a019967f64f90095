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
)

_KNOWN = frozenset(KNOWN_FIELDS)

#: Every field the spec defines as pointing at another observation.
POINTER_FIELDS: tuple[PointerField, ...] = (
    PointerField("backlinks", "observation", "related observations by file name"),
)
