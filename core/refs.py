"""The one reference rule every format applies to the pointer fields it declares.

A format says which of its fields point at another record or at something
outside the vault (`PointerField`); this module decides, the same way for
every format, what is wrong with one value written there:

- `unsafe_reference`: path syntax (`/`, `\\`, `..`, a leading `~`, an
  absolute path, a drive letter, NUL, percent-encoded separators or dots,
  a `file:` URI).  Such a value is never looked up or joined onto a path.
- `references_tombstoned`: it names a record erased by a tombstone.
- `dangling_reference`: it names no valid record.

A field of kind EXTERNAL names something outside the vault (an execution
trace): only the path-syntax rule applies.  A field of kind RECORD_OR_URI
holds record ids or URIs (`uri:...`, `urn:...`, `https://...`); a URI is
never resolved, an id follows the record rule.
"""

from __future__ import annotations

import re
from collections.abc import Container, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .model import RefIssue
from .text.paths import has_path_syntax

# `uri:...`, `urn:...` or `scheme://...` (a scheme of two or more letters, so
# `C://x` stays a drive path); `file:` names local paths and is never a URI.
_URI = re.compile(r"^(?:uri|urn):|^[A-Za-z][A-Za-z0-9+.\-]+://", re.IGNORECASE)
_FILE_URI = re.compile(r"^\s*file:", re.IGNORECASE)


class PointerKind(StrEnum):
    """What a pointer field may name."""

    RECORD = "record"
    RECORD_OR_URI = "record_or_uri"
    EXTERNAL = "external"


@dataclass(frozen=True, slots=True)
class PointerField:
    """One field of a format that points at something.

    `name` is the dotted field name as reports show it (`candidates.exp`,
    `posterior.observations_used`); lists on the way are walked, so
    `relations.target` is every relation's target.  `holder` says which
    records carry the field and `targets` what it names, for people.
    """

    name: str
    holder: str
    targets: str
    kind: PointerKind = PointerKind.RECORD


def is_uri(ref: str) -> bool:
    """`uri:...`, `urn:...`, `https://...`, `vec://...`: a pointer, never a local path."""
    return bool(_URI.match(ref)) and not _FILE_URI.match(ref)


def is_unsafe_reference(ref: str) -> bool:
    """True if `ref` has path syntax and must never be resolved or joined onto a path."""
    return has_path_syntax(ref) or bool(_FILE_URI.match(ref))


def reference_issue(
    ref: str,
    exists: Container[str],
    *,
    erased: Container[str] = (),
    kind: PointerKind = PointerKind.RECORD,
) -> RefIssue | None:
    """What is wrong with one pointer value, or None (the shared rule, in order)."""
    if kind is not PointerKind.RECORD and is_uri(ref):
        return None
    if is_unsafe_reference(ref):
        return RefIssue.UNSAFE
    if kind is PointerKind.EXTERNAL:
        return None
    if ref in erased:
        return RefIssue.TOMBSTONED
    if ref not in exists:
        return RefIssue.DANGLING
    return None


def pointer_values(record: Mapping[str, Any], name: str) -> list[str]:
    """Every string at dotted `name` in `record`, walking lists on the way.

    Values of another type are left to the format's validation.
    """
    stack: list[tuple[Any, list[str]]] = [(record, name.split("."))]
    out: list[str] = []
    while stack:
        value, path = stack.pop()
        if isinstance(value, list):
            stack.extend((item, path) for item in reversed(value))
        elif not path:
            if isinstance(value, str):
                out.append(value)
        elif isinstance(value, Mapping) and path[0] in value:
            stack.append((value[path[0]], path[1:]))
    return out
