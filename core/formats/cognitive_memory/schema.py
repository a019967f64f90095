"""The vault's layout and the spec's shapes: folders and files, type folders, relation
types, frontmatter fields, and how a problem in a file is reported.
"""

from __future__ import annotations

from pathlib import Path

from ...model import Problem, Reason
from ...refs import PointerField

FORMAT_ID = "cognitive-memory"

#: Memory type -> its folder under graph/ (and archive/).
TYPE_DIRS: dict[str, str] = {
    "solution": "solutions",
    "fix": "fixes",
    "decision": "decisions",
    "configuration": "configurations",
    "problem": "problems",
    "workflow": "workflows",
    "code_pattern": "code-patterns",
    "error": "errors",
    "general": "general",
    "procedure": "procedures",
    "insight": "insights",
}
#: Folder name -> memory type.
DIR_TYPES: dict[str, str] = {d: t for t, d in TYPE_DIRS.items()}

RELATION_TYPES: tuple[str, ...] = (
    "SOLVES",
    "CAUSES",
    "BUILDS_ON",
    "ALTERNATIVE_TO",
    "REQUIRES",
    "FOLLOWS",
    "RELATED_TO",
)
DIRECTIONS: tuple[str, ...] = ("outgoing", "incoming")
#: Every field the spec defines as pointing at a memory (see `core.refs`).
POINTER_FIELDS: tuple[PointerField, ...] = (
    PointerField("relations.target", "memory", "another memory's id (UUID)"),
)

DEFAULT_CONFIDENCE = 0.8

GRAPH_DIR = "graph"
VAULT_DIR = "vault"
ARCHIVE_DIR = "archive"
EPISODES_DIR = "episodes"
STATE_FILE = "_state.json"
INDEX_FILE = "_index.json"
EMBEDDINGS_FILE = "_embeddings.json"
CORE_FILE = "CORE.md"
REFLECTION_FILE = "REFLECTION.md"

#: Frontmatter keys the spec defines; anything else is kept in `extra`.
KNOWN_FIELDS: tuple[str, ...] = (
    "id",
    "type",
    "title",
    "tags",
    "importance",
    "confidence",
    "steps",
    "preconditions",
    "postconditions",
    "created",
    "updated",
    "relations",
)
_KNOWN = frozenset(KNOWN_FIELDS)
REQUIRED_FIELDS: tuple[str, ...] = ("id", "type", "title", "importance", "created", "updated")


def _problem(
    root: Path,
    rel: str,
    reason: Reason,
    detail: str,
    *,
    id: str | None = None,
    title: str | None = None,
    at_line: int | None = None,
) -> Problem:
    return Problem(
        format=FORMAT_ID,
        vault_root=root,
        path=rel,
        reason=reason,
        detail=detail,
        id=id,
        title=title,
        at_line=at_line,
    )


def type_dir_for(kind: str) -> str:
    """The folder a memory of `kind` lives in under graph/ and archive/ (KeyError if unknown)."""
    return TYPE_DIRS[kind]
