"""Where a Dream Cycle vault keeps its observations, and how a problem in them is reported."""

from __future__ import annotations

from pathlib import Path

from ...model import Memory, Problem, Reason
from ...safe_io import read_regular

#: The format id (`Memory.format`, the registry key).
FORMAT_ID = "dream-cycle"
OBSERVATIONS = "observations.md"
ARCHIVE_JSONL = "archive.jsonl"
ARCHIVED_MD = "archived-observations.md"
#: The files of a vault in scan order (ids are allocated in this order).
_FILE_ORDER: tuple[str, ...] = (OBSERVATIONS, ARCHIVED_MD, ARCHIVE_JSONL)


def _read(path: Path) -> bytes | OSError | None:
    """File bytes; None if absent; the OSError if it exists but cannot be read."""
    try:
        if not path.is_file():
            return None
        return read_regular(path)
    except OSError as exc:
        return exc


def _where(m: Memory) -> str:
    if m.line is not None:
        return f"{m.path}:{m.line}"
    if m.index is not None:
        return f"{m.path} section {m.index}"
    return m.path


def problem(
    root: Path,
    rel: str,
    reason: Reason,
    detail: str,
    *,
    id: str | None = None,
    line: int | None = None,
    index: int | None = None,
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
        line=line,
        index=index,
        title=title,
        at_line=at_line,
    )
