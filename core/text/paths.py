"""Keeping every path inside its vault.

References, ids and slugs come from files agents wrote; any of them may hold
path syntax.  They are checked here and never joined onto a path unchecked.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..errors import UnsafePathError

# Characters that make a reference path-like rather than a bare id: a
# separator, NUL, `..`, a home or drive prefix, and their percent-encodings
# (a value that a URL decoder would turn into one of them).
_PATH_SYNTAX = re.compile(
    r"[/\\\x00]|^\.\.?$|(?:\.|%2e){2}|^~|^[A-Za-z]:|%(?:2f|5c|00)", re.IGNORECASE
)


#: Every alternative of _PATH_SYNTAX needs one of these characters.  Looked
#: for first: linking checks every relation target (70k at 100k memories),
#: and a plain id is ruled out in ~0.5 us where the whole pattern takes ~6.
_PATH_CHARS = re.compile(r"[/\\\x00.%~:]")


def has_path_syntax(ref: str) -> bool:
    """True if `ref` contains '/', '\\\\', '..', NUL, '~', a drive prefix or one percent-encoded."""
    return _PATH_CHARS.search(ref) is not None and _PATH_SYNTAX.search(ref) is not None


def is_inside(root: Path, candidate: Path) -> bool:
    """Realpath containment that is safe against sibling prefixes (/v vs /v2)."""
    root_real = os.path.realpath(root)
    cand_real = os.path.realpath(candidate)
    return cand_real == root_real or cand_real.startswith(root_real.rstrip(os.sep) + os.sep)


def safe_join(root: Path, *parts: str) -> Path:
    """Join relative parts onto `root`, refusing anything that leaves it."""
    for part in parts:
        if (
            not part
            or "\x00" in part
            or "\\" in part
            or os.path.isabs(part)
            or re.match(r"^[A-Za-z]:", part)
        ):
            raise UnsafePathError(f"refusing unsafe path component {part!r}")
        if any(seg == ".." for seg in re.split(r"[/\\]", part)):
            raise UnsafePathError(f"refusing path traversal in {part!r}")
    candidate = root.joinpath(*parts)
    if not is_inside(root, candidate):
        raise UnsafePathError(f"{candidate} is outside the vault {root}")
    return candidate


def safe_name(name: str) -> str:
    """Validate a single file-name component (no separators, no traversal)."""
    if not name or has_path_syntax(name) or name in (".", ".."):
        raise UnsafePathError(f"refusing unsafe name {name!r}")
    return name
