"""What adapters share to link per-file scans into a result, in full or in part.

A full `link` reports repeated ids (`split_duplicates`); a fast `relink`
splices changed memories into the previous result (`splice`, `relinked`)
when the changed files hold one memory each (`one_memory_files`).
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ..model import FileScan, LinkState, Memory, Problem, Reason, ReferenceProblem, ScanResult


def ordered(scans: Mapping[str, FileScan]) -> list[FileScan]:
    """FileScans in scan order (a no-op sort when they already are)."""
    return sorted(scans.values(), key=_order_of)


def _order_of(scan: FileScan) -> tuple[object, ...]:
    return scan.order


#: What `rescan_paths` hands an adapter's `relink`: rel path ->
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


def relinked(
    previous: ScanResult,
    dropped: set[int],
    new: Iterable[Memory],
    owner_ids: set[str],
    ref_problems: Iterable[ReferenceProblem],
    order: Callable[[Any], Any],
    link_state: LinkState,
    records: dict[str, list[dict[str, Any]]] | None = None,
) -> ScanResult:
    """The result of a fast relink: `previous` with changed memories and references spliced.

    Memories whose `id()` is in `dropped` leave, `new` ones go in scan order;
    reference problems owned by `owner_ids` are replaced by `ref_problems`.
    The previous result hands its link state over (it must not be relinked twice).
    """
    result = ScanResult(
        memories=splice(
            previous.memories, lambda m: id(m) in dropped, sorted(new, key=order), order
        ),
        problems=list(previous.problems),
        ref_problems=splice(
            previous.ref_problems, lambda rp: rp.id in owner_ids, ref_problems, order
        ),
        records={} if records is None else records,
        link_state=link_state,
    )
    previous.link_state = None
    return result


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
