"""Small helpers for reading one file's content into memories and problems."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import ParseError
from ..model import Problem


def problem_from(
    err: ParseError,
    format_id: str,
    root: Path,
    rel: str,
    *,
    line: int | None = None,
    index: int | None = None,
    title: str | None = None,
) -> Problem:
    """Turn a ParseError into a Problem at a vault-relative location."""
    return Problem(
        format=format_id,
        vault_root=root,
        path=rel,
        reason=err.reason,
        detail=err.detail,
        id=err.id,
        line=line if line is not None else err.line,
        index=index,
        title=title,
        at_line=err.at_line,
    )


def as_str_list(value: Any) -> list[str] | None:
    """A list of strings, a single string as a one-item list, else None."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return None
