"""Every memory of a shared file in one version at once, and what changed between two versions.

Why: a Dream Cycle section's or a JSON Lines record's history reads every
version of its file (history_parts: nothing in git names a section), and
inflating 3,000 versions of a 50 KB file is most of a first read's cost.
Once a version is inflated, what every *other* memory of the file holds in
it is cheap to keep too, so the next memory of the same file needs no git
at all.  Keeping every memory's digest for every version would be large
(150 sections x 3,000 versions), so `core.history` keeps, per version, only
the memories that may differ from the version before it (`changed`): two
consecutive versions share almost all their bytes, and a memory whose bytes
lie wholly in the shared prefix or suffix is the same in both.

A splitter answers three questions about one file kind, all exactly as the
format's `history_extract` would (tests/core/test_history_split.py checks
them against it on random edits):

- `part(data, key)`: the memory's bytes in one version (`history_extract`);
- `parts(data)`: every memory's bytes in one version, by key;
- `changed(old, new)`: a set of keys holding every memory whose bytes
  differ between the two versions (more is allowed, never fewer).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .history_parts import _BOM, record_line, section_bytes

if TYPE_CHECKING:
    from .adapter import HistoryScope

#: Slices compared at once when looking for the first differing byte.
_BLOCK = 4096


class HistorySplitter(ABC):
    """The memories that share one kind of file (see the module docstring)."""

    #: What this splitter finds (part of the cache's key: a changed splitter starts afresh).
    family: str = ""

    @abstractmethod
    def key(self, scope: HistoryScope) -> str:
        """The name `parts` gives the memory of `scope`."""

    @abstractmethod
    def part(self, data: bytes, key: str) -> bytes | None:
        """The memory `key`'s bytes in version `data` (None: not there)."""

    @abstractmethod
    def parts(self, data: bytes) -> dict[str, bytes]:
        """Every memory's bytes in version `data`, by key."""

    @abstractmethod
    def changed(self, old: bytes, new: bytes) -> set[str]:
        """Keys of every memory that may differ between versions `old` and `new`."""


def common_prefix(a: bytes, b: bytes) -> int:
    """How many leading bytes `a` and `b` share: slices compared in C, galloping then halving."""
    n = min(len(a), len(b))
    lo, step = 0, _BLOCK
    while lo < n:
        hi = min(n, lo + step)
        if a[lo:hi] != b[lo:hi]:
            break
        lo, step = hi, step * 2
    else:
        return n
    while hi - lo > 1:  # a[:lo] == b[:lo] and a[lo:hi] != b[lo:hi]
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def common_suffix(a: bytes, b: bytes, limit: int) -> int:
    """How many trailing bytes `a` and `b` share, at most `limit`."""
    n = min(len(a), len(b), limit)
    la, lb = len(a), len(b)
    lo, step = 0, _BLOCK
    while lo < n:
        hi = min(n, lo + step)
        if a[la - hi : la - lo] != b[lb - hi : lb - lo]:
            break
        lo, step = hi, step * 2
    else:
        return n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[la - mid : la - lo] == b[lb - mid : lb - lo]:
            lo = mid
        else:
            hi = mid
    return lo


def windows(old: bytes, new: bytes, margin: int) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """The byte ranges where `old` and `new` differ, widened by `margin`; None if equal.

    Outside its window each version is the other's bytes (the shared
    prefix, and the shared suffix shifted), so anything whose bytes and
    delimiters lie `margin` bytes clear of the windows is the same in both.
    """
    if old == new:
        return None
    p = common_prefix(old, new)
    s = common_suffix(old, new, min(len(old), len(new)) - p)
    lo = max(0, p - margin)
    return (lo, min(len(old), len(old) - s + margin)), (lo, min(len(new), len(new) - s + margin))


# ---------------------------------------------------------------- sections


def _strip_bom(data: bytes) -> bytes:
    return data[len(_BOM) :] if data.startswith(_BOM) else data


def _heading_title(data: bytes, start: int) -> str | None:
    """The title of the `## ` line at `start`, as `section_bytes` matches it (None: no title).

    A line that is not UTF-8 is never matched by `section_bytes` (its
    title, decoded with replacement, cannot be the needle it searches for).
    """
    end = data.find(b"\n", start)
    line = data[start : len(data) if end < 0 else end]
    try:
        title = line[3:].decode("utf-8").strip()
    except UnicodeDecodeError:
        return None
    return title or None


def _heading_starts(data: bytes, lo: int, hi: int) -> list[int]:
    """Starts of the `## ` lines that begin in [lo, hi), plus the last one before `lo`."""
    first = data.rfind(b"\n## ", 0, lo + 3)
    starts = [first + 1] if first >= 0 else [0] if data.startswith(b"## ") else []
    pos = data.find(b"\n## ", max(lo, starts[-1] if starts else 0))
    while pos >= 0 and pos + 1 < hi:
        if not starts or pos + 1 != starts[-1]:
            starts.append(pos + 1)
        pos = data.find(b"\n## ", pos + 1)
    return starts


def section_key(title: str, occurrence: int) -> str:
    return f"{occurrence}\n{title}"


class SectionSplitter(HistorySplitter):
    """`## ` sections of a markdown file, keyed by title and occurrence (`section_bytes`)."""

    family = "sections-1"

    def key(self, scope: HistoryScope) -> str:
        return section_key(scope.key, scope.occurrence)

    def part(self, data: bytes, key: str) -> bytes | None:
        occurrence, _, title = key.partition("\n")
        return section_bytes(data, title, int(occurrence))

    def parts(self, data: bytes) -> dict[str, bytes]:
        data = _strip_bom(data)
        starts = _heading_starts(data, 0, len(data) + 1)
        seen: dict[str, int] = {}
        out: dict[str, bytes] = {}
        for i, start in enumerate(starts):
            title = _heading_title(data, start)
            if title is None:
                continue
            seen[title] = seen.get(title, 0) + 1
            end = starts[i + 1] if i + 1 < len(starts) else len(data)
            out[section_key(title, seen[title])] = data[start:end]
        return out

    def changed(self, old: bytes, new: bytes) -> set[str]:
        """Every occurrence of each title whose section touches a window (`\\n## ` is 4 bytes).

        A section clear of both windows keeps its bytes; its occurrence
        number can only move if a heading of the same title is in a window,
        so every occurrence of those titles is listed (bounded by how often
        the title's bytes appear at all).
        """
        old, new = _strip_bom(old), _strip_bom(new)
        found = windows(old, new, 4)
        if found is None:
            return set()
        titles: set[str] = set()
        for data, (lo, hi) in ((old, found[0]), (new, found[1])):
            for start in _heading_starts(data, lo, hi):
                title = _heading_title(data, start)
                if title is not None:
                    titles.add(title)
        out: set[str] = set()
        for title in titles:
            needle = title.encode("utf-8")
            bound = max(old.count(needle), new.count(needle))
            out.update(section_key(title, n) for n in range(1, bound + 1))
        return out


# ---------------------------------------------------------------- records


def _line_id(line: bytes) -> Any:
    """The top-level `id` of one JSON Lines line, read as `record_line` reads it (None: none)."""
    line = line.rstrip(b"\r")
    if line.startswith(_BOM):
        line = line[len(_BOM) :]
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return obj.get("id") if isinstance(obj, dict) else None


def _lines_in(data: bytes, lo: int, hi: int) -> list[bytes]:
    """The whole lines of `data` that touch [lo, hi)."""
    start = data.rfind(b"\n", 0, lo) + 1
    end = data.find(b"\n", hi)
    return data[start : len(data) if end < 0 else end].split(b"\n")


class RecordSplitter(HistorySplitter):
    """JSON Lines records keyed by their top-level `id` (`record_line`, with its `skip`)."""

    def __init__(self, family: str, skip: Callable[[dict[str, Any]], bool] | None = None) -> None:
        self.family = family
        self.skip = skip

    def key(self, scope: HistoryScope) -> str:
        return scope.key

    def part(self, data: bytes, key: str) -> bytes | None:
        return record_line(data, key, self.skip)

    def parts(self, data: bytes) -> dict[str, bytes]:
        """Each id's first line, found the way `record_line` finds it (so: the same bytes)."""
        ids: set[str] = set()
        for line in data.split(b"\n"):
            rid = _line_id(line)
            if isinstance(rid, str):
                ids.add(rid)
        out: dict[str, bytes] = {}
        for rid in ids:
            got = record_line(data, rid, self.skip)
            if got is not None:
                out[rid] = got
        return out

    def changed(self, old: bytes, new: bytes) -> set[str]:
        """The ids of the lines that touch a window: every other line is the same in both."""
        found = windows(old, new, 1)
        if found is None:
            return set()
        out: set[str] = set()
        for data, (lo, hi) in ((old, found[0]), (new, found[1])):
            for line in _lines_in(data, lo, hi):
                rid = _line_id(line)
                if isinstance(rid, str):
                    out.add(rid)
        return out


__all__ = [
    "HistorySplitter",
    "RecordSplitter",
    "SectionSplitter",
    "common_prefix",
    "common_suffix",
    "section_key",
    "windows",
]
