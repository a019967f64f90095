"""The one protocol every format adapter implements, and helpers they share."""

from __future__ import annotations

import bisect
import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from datetime import date
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from ..errors import ParseError
from ..model import DecayInfo, FileScan, Memory, Problem, Reason, ScanResult


@runtime_checkable
class FormatAdapter(Protocol):
    """Detect a vault root of one format, scan it, and compute its decay.

    Adapters are stateless: `scan` reads everything under `root` and returns
    memories, problems and reference problems; `decay` is a pure function of
    a memory and an explicit `as_of`.

    Scanning is split per file so that a changed file can be re-read alone
    (live reload) and unchanged files can come from the persistent cache:
    `scan(root)` is exactly ``link(root, {rel: scan_file(root, p) for p in
    files(root)})``.  `scan_file` reads one file on its own; `link` does what
    needs the whole vault (duplicate ids, reference resolution, state files,
    WAL effects, incorporated flags, ...).
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

    def files(self, root: Path) -> list[Path]:
        """Every file that makes up the vault, in scan order (for a stat walk)."""
        ...

    def owns(self, root: Path, rel: str) -> bool:
        """True if vault-relative POSIX `rel` is a file `files` lists when it exists.

        A test on the path alone (no I/O): the watcher and `rescan_paths` use
        it to ignore editor swap files, temp files and anything else.
        """
        ...

    def scan_file(self, root: Path, path: Path, data: bytes | None = None) -> FileScan:
        """Read one file of the vault on its own (never raises for bad content).

        `data` is the file's bytes when the caller already read them (the
        cache reads once to hash and parse); None reads `path`.
        """
        ...

    def link(self, root: Path, scans: Mapping[str, FileScan]) -> ScanResult:
        """Combine per-file scans (keyed by rel path, in scan order) into a result.

        `link` may update the derived parts of the memories it is given
        (resolved relations, values taken from state files) in place; it
        recomputes them from scratch on every call, so linking again after
        replacing some FileScans gives what a full scan would.
        """
        ...


def scan_by_files(adapter: FormatAdapter, root: Path) -> ScanResult:
    """`link` over `scan_file` of every file: what `scan` is defined to be."""
    return adapter.link(
        root, {rel_posix(root, p): adapter.scan_file(root, p) for p in adapter.files(root)}
    )


def ordered(scans: Mapping[str, FileScan]) -> list[FileScan]:
    """FileScans in scan order (a no-op sort when they already are)."""
    return sorted(scans.values(), key=_order_of)


def _order_of(scan: FileScan) -> tuple[object, ...]:
    return scan.order


#: What `rescan_paths` hands an adapter's optional `relink`: rel path ->
#: (FileScan before, FileScan now), either None when the file was added/removed.
Changes = Mapping[str, tuple[FileScan | None, FileScan | None]]


def one_memory_files(changes: Changes) -> tuple[list[Memory], list[Memory]] | None:
    """(memories gone, memories new) when every changed file holds at most one
    memory and no problem, before and after; None otherwise (relink in full)."""
    gone: list[Memory] = []
    new: list[Memory] = []
    for before, after in changes.values():
        for fs, into in ((before, gone), (after, new)):
            if fs is None:
                continue
            if fs.problems or len(fs.memories) > 1:
                return None
            into.extend(fs.memories)
    return gone, new


def splice(
    items: list[Any],
    drop: Callable[[Any], bool],
    add: Iterable[Any],
    key: Callable[[Any], Any],
) -> list[Any]:
    """A copy of `items` (sorted by `key`) without those `drop` names, with `add` put in place.

    Items added with an equal key go after the existing ones, in the order
    given, as a full link would list them.  O(n) in C-speed list work plus
    O(log n) keys per added item: the cheap part of a relink.
    """
    out = [x for x in items if not drop(x)]
    for x in add:
        out.insert(bisect.bisect_right(out, key(x), key=key), x)
    return out


def is_hidden_name(name: str) -> bool:
    """Names `iter_md` skips: hidden files and editor/memlens temp files."""
    return name.startswith(".")


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
    if len({m.id for m in memories}) == len(memories):
        return list(memories), []  # the common case: every id is unique
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
    """Vault-relative POSIX path (ValueError if `path` is not below `root`)."""
    # String slicing, not Path.relative_to: this runs for every file of every
    # stat walk, and pathlib's parsing cost dominated a 100k-file warm start.
    full, base = str(path), str(root)
    n = len(base)
    if len(full) > n + 1 and full.startswith(base) and full[n] == os.sep and base != os.sep:
        rel = full[n + 1 :]
        return rel if os.sep == "/" else rel.replace(os.sep, "/")
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


def md_names(folder: str) -> list[str]:
    """Names of the Markdown files directly in `folder`, sorted, as `iter_md` lists them."""
    try:
        with os.scandir(folder) as entries:
            return sorted(
                e.name
                for e in entries
                if e.name.endswith(".md") and not e.name.startswith(".") and e.is_file()
            )
    except (FileNotFoundError, NotADirectoryError):
        return []


def walk_rels(adapter: FormatAdapter, root: Path) -> list[str]:
    """Vault-relative paths of `adapter.files(root)`, in the same order.

    Uses the adapter's optional `file_rels` (names only, no Path objects:
    the stat walk of a 100k-file warm start spent more time building Paths
    than calling stat) and falls back to `files`.
    """
    fast = getattr(adapter, "file_rels", None)
    if fast is not None:
        rels: list[str] = fast(root)
        return rels
    return [rel_posix(root, p) for p in adapter.files(root)]


def iter_md(folder: Path) -> list[Path]:
    """Markdown files directly in `folder`, sorted, skipping hidden/temp files."""
    # os.scandir: the file type comes with the directory entry, so a stat
    # walk over 100k files does not stat every file twice.
    try:
        with os.scandir(folder) as entries:
            names = sorted(
                e.name
                for e in entries
                if e.name.endswith(".md") and not e.name.startswith(".") and e.is_file()
            )
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [folder / n for n in names]
