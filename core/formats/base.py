"""The one protocol every format adapter implements, and helpers they share."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from datetime import date
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from ..errors import ParseError
from ..model import DecayInfo, Memory, Problem, Reason, ScanResult


@runtime_checkable
class FormatAdapter(Protocol):
    """Detect a vault root of one format, scan it, and compute its decay.

    Adapters are stateless: `scan` reads everything under `root` and returns
    memories, problems and reference problems; `decay` is a pure function of
    a memory and an explicit `as_of`.
    """

    format_id: ClassVar[str]
    #: Short human label for the UI.
    label: ClassVar[str]

    def detect(self, root: Path) -> bool:
        """True if `root` itself is a vault root of this format."""
        ...

    def scan(self, root: Path) -> ScanResult:
        """Read the whole vault; never raises for bad content (it reports it)."""
        ...

    def decay(self, memory: Memory, as_of: date) -> DecayInfo:
        """Native status, the format's numbers and the unified health."""
        ...


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


def split_duplicates(
    memories: list[Memory],
    format_id: str,
    root: Path,
    where: Callable[[Memory], str] | None = None,
) -> tuple[list[Memory], list[Problem]]:
    """Report every copy of a repeated id and drop all copies from the valid set.

    `where` names a copy for the detail message (default: its path, or
    `path:line` for JSON Lines records).
    """

    def default_where(m: Memory) -> str:
        return f"{m.path}:{m.line}" if m.line is not None else m.path

    name = where or default_where
    groups: dict[str, list[Memory]] = defaultdict(list)
    for m in memories:
        groups[m.id].append(m)
    keep: list[Memory] = []
    problems: list[Problem] = []
    for m in memories:
        copies = groups[m.id]
        if len(copies) == 1:
            keep.append(m)
            continue
        others = ", ".join(name(c) for c in copies if c is not m)
        problems.append(
            Problem(
                format=format_id,
                vault_root=root,
                path=m.path,
                reason=Reason.DUPLICATE_ID,
                detail=f"id {m.id!r} also used by {others}",
                id=m.id,
                line=m.line,
                index=m.index,
                title=m.title,
            )
        )
    return keep, problems


def rel_posix(root: Path, path: Path) -> str:
    """Vault-relative POSIX path."""
    return path.relative_to(root).as_posix()


def as_str_list(value: Any) -> list[str] | None:
    """A list of strings, a single string as a one-item list, else None."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def iter_md(folder: Path) -> Iterable[Path]:
    """Markdown files directly in `folder`, sorted, skipping hidden/temp files."""
    if not folder.is_dir():
        return []
    return sorted(
        p
        for p in folder.iterdir()
        if p.suffix == ".md" and not p.name.startswith(".") and p.is_file()
    )
