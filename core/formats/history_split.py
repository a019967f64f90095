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
- `delta(old, new)`: the bytes in `new` of a set of memories holding
  every one whose bytes differ between the two versions (more is allowed,
  never fewer).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from .history_parts import _BOM, record_line, section_bytes, title_sections

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
    def delta(self, old: bytes, new: bytes) -> dict[str, bytes | None]:
        """`part(new, k)` of every memory k that may differ between versions `old` and `new`."""

    def changed(self, old: bytes, new: bytes) -> set[str]:
        """Keys of every memory that may differ between versions `old` and `new`."""
        return set(self.delta(old, new))


def common_prefix(a: bytes, b: bytes) -> int:
    """How many leading bytes `a` and `b` share."""
    return _prefix(a, b, 0, 0, min(len(a), len(b)))


def common_suffix(a: bytes, b: bytes, limit: int) -> int:
    """How many trailing bytes `a` and `b` share, at most `limit`."""
    return _suffix(a, b, len(a), len(b), min(len(a), len(b), limit))


def _prefix(a: bytes, b: bytes, ao: int, bo: int, n: int) -> int:
    """The shared prefix of a[ao:ao+n] and b[bo:bo+n]: galloping, then halving.

    Compared with `startswith` on a view of `b`: a memcmp in C, no copy.
    """
    view = memoryview(b)
    lo, step = 0, _BLOCK
    while lo < n:
        hi = min(n, lo + step)
        if not a.startswith(view[bo + lo : bo + hi], ao + lo):
            break
        lo, step = hi, step * 2
    else:
        return n
    while hi - lo > 1:  # the first lo bytes are shared, the first hi are not
        mid = (lo + hi) // 2
        if a.startswith(view[bo + lo : bo + mid], ao + lo):
            lo = mid
        else:
            hi = mid
    return lo


def _suffix(a: bytes, b: bytes, ae: int, be: int, n: int) -> int:
    """The shared suffix of a[:ae] and b[:be], at most `n` bytes."""
    view = memoryview(b)
    lo, step = 0, _BLOCK
    while lo < n:
        hi = min(n, lo + step)
        if not a.startswith(view[be - hi : be - lo], ae - hi):
            break
        lo, step = hi, step * 2
    else:
        return n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a.startswith(view[be - mid : be - lo], ae - mid):
            lo = mid
        else:
            hi = mid
    return lo


#: A differing stretch at least this long on both sides is searched for a shared block.
_ANCHOR_MIN = 512
#: The bytes taken from the middle of the new side as that block's probe.
_PROBE = 48
#: How many times a differing stretch is cut in two at a shared block.
_DEPTH = 8

Window = tuple[int, int]


def windows(old: bytes, new: bytes, margin: int) -> tuple[list[Window], list[Window]] | None:
    """The byte ranges where `old` and `new` differ, in step, widened by `margin`; None if equal.

    Between windows the two versions hold the same bytes in the same order
    (the shared prefix, suffix, and blocks found in between), so anything
    whose bytes and delimiters lie `margin` bytes clear of every window is
    the same in both.  Several windows, not one: a decay run that drops the
    first section while another is appended at the end differs at both
    ends of the file, and one window would span it all.
    """
    if old == new:
        return None
    out_old: list[Window] = []
    out_new: list[Window] = []
    _split(old, new, (0, len(old)), (0, len(new)), out_old, out_new, _DEPTH)
    _slide_all(old, new, out_old, out_new)

    def widen(spans: list[Window], size: int) -> list[Window]:
        return [(max(0, lo - margin), min(size, hi + margin)) for lo, hi in spans]

    return widen(out_old, len(old)), widen(out_new, len(new))


#: How far an inserted or deleted block is slid to start at a line.
_SLIDE = 256


def _slide_all(old: bytes, new: bytes, out_old: list[Window], out_new: list[Window]) -> None:
    """Slide each pure insertion or deletion to start at a line, where it is ambiguous.

    Deleting `1\\n...## Note ` after `## Note ` is the same edit as deleting
    the whole section `## Note 1\\n...`: the bytes compare equal either way,
    but only the second leaves the next heading out of the window.
    """
    for i, (wo, wn) in enumerate(zip(out_old, out_new, strict=True)):
        if (wo[0] == wo[1]) == (wn[0] == wn[1]):
            continue  # both sides changed (or neither): nothing to slide
        side, data = (0, old) if wn[0] == wn[1] else (1, new)
        lo, hi = (wo, wn)[side]
        floor = max(out_old[i - 1][1] - wo[0], out_new[i - 1][1] - wn[0]) if i else -lo
        ceil_ = len(data) - hi
        if i + 1 < len(out_old):
            ceil_ = min(out_old[i + 1][0] - wo[1], out_new[i + 1][0] - wn[1])
        move = 0
        while move > max(floor, -_SLIDE) and data[lo + move - 1] == data[hi + move - 1]:
            move -= 1
        while (
            lo + move > 0
            and data[lo + move - 1] != 0x0A
            and move < min(ceil_, _SLIDE)
            and data[lo + move] == data[hi + move]
        ):
            move += 1
        if lo + move > 0 and data[lo + move - 1] != 0x0A:
            move = 0  # no line start in reach: as found
        out_old[i] = (wo[0] + move, wo[1] + move)
        out_new[i] = (wn[0] + move, wn[1] + move)


def _split(
    a: bytes, b: bytes, sa: Window, sb: Window, out_a: list[Window], out_b: list[Window], depth: int
) -> None:
    """Windows of `a[sa]` against `b[sb]`: shared ends trimmed, then cut at a shared block."""
    n = min(sa[1] - sa[0], sb[1] - sb[0])
    p = _prefix(a, b, sa[0], sb[0], n)
    s = _suffix(a, b, sa[1], sb[1], n - p)
    alo, ahi, blo, bhi = sa[0] + p, sa[1] - s, sb[0] + p, sb[1] - s
    if alo == ahi and blo == bhi:
        return
    if depth > 0 and ahi - alo >= _ANCHOR_MIN and bhi - blo >= _ANCHOR_MIN:
        for eighth in (4, 2, 6, 1, 7):  # the middle first; a probe may fall in an edit
            mid = blo + (bhi - blo) * eighth // 8
            at = a.find(b[mid : mid + _PROBE], alo, ahi)
            if at >= 0:
                _split(a, b, (alo, at), (blo, mid), out_a, out_b, depth - 1)
                _split(a, b, (at, ahi), (mid, bhi), out_a, out_b, depth - 1)
                return
    out_a.append((alo, ahi))
    out_b.append((blo, bhi))


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

    def delta(self, old: bytes, new: bytes) -> dict[str, bytes | None]:
        """Every occurrence of each title whose sections may differ (see `_dirty_titles`)."""
        old, new = _strip_bom(old), _strip_bom(new)
        found = windows(old, new, 0)
        if found is None:
            return {}
        out: dict[str, bytes | None] = {}
        for title, headed_old in _dirty_titles(old, new, found).items():
            now = list(title_sections(new, title))
            # Without a heading of its own in old's windows, old has no more of them than new.
            bound = max(len(now), _count(title_sections(old, title)) if headed_old else 0)
            for n in range(1, bound + 1):
                out[section_key(title, n)] = now[n - 1] if n <= len(now) else None
        return out


def _count(items: Iterator[bytes]) -> int:
    return sum(1 for _ in items)


def _section_at(data: bytes, start: int) -> bytes:
    """The section whose heading line starts at `start` (as `section_bytes` cuts it)."""
    end = data.find(b"\n", start)
    stop = len(data) if end < 0 else end
    nxt = data.find(b"\n## ", stop)
    return data[start : len(data) if nxt < 0 else nxt + 1]


def _shift(spans: tuple[list[Window], list[Window]], pos: int, side: int) -> int:
    """Where byte `pos` of one version (outside every window) is in the other."""
    shift = 0
    for w_old, w_new in zip(*spans, strict=True):
        mine, theirs = (w_old, w_new) if side == 0 else (w_new, w_old)
        if mine[1] <= pos:
            shift = theirs[1] - mine[1]
    return pos + shift


def _touches(lo: int, hi: int, start: int, stop: int) -> bool:
    """Whether window [lo, hi) (an insertion at lo when empty) changes line bytes [start, stop]."""
    if lo == hi:
        return start < lo <= stop
    return lo <= stop and hi > start


def _dirty_titles(
    old: bytes, new: bytes, spans: tuple[list[Window], list[Window]]
) -> dict[str, bool]:
    """Titles whose sections may differ, each with: old may have more of its headings.

    A candidate is a heading near a window (4 bytes: `\\n## `).  Its title
    is dirty when the window changes its line, or the line is not at the
    start of a line at the same place in the other version (the windows'
    shift), or its section's bytes there differ.  A title never dirty has
    the same headings, in the same order, with the same sections, in both
    versions: those near a window were each matched, the rest lie in bytes
    the versions share.
    """
    dirty: dict[str, bool] = {}
    for side, (data, other) in enumerate(((old, new), (new, old))):
        for lo, hi in spans[side]:
            for start in _heading_starts(data, max(0, lo - 4), min(len(data), hi + 4)):
                title = _heading_title(data, start)
                if title is None:
                    continue
                end = data.find(b"\n", start)
                stop = len(data) if end < 0 else end
                there = _shift(spans, start, side)
                if any(_touches(w_lo, w_hi, start, stop) for w_lo, w_hi in spans[side]) or (
                    there > 0 and other[there - 1 : there] != b"\n"
                ):
                    dirty[title] = dirty.get(title, False) or side == 0
                elif title not in dirty and _section_at(data, start) != _section_at(other, there):
                    dirty[title] = False
    return dirty


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
    """The whole lines of `data` that touch [lo, hi), or an insertion at `lo` when empty.

    A line with its newline is [a, e]; what was inserted or changed at
    [lo, hi) changes it when a <= hi and e >= lo (an insertion at a line's
    start does: the line's bytes no longer start it).
    """
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

    def delta(self, old: bytes, new: bytes) -> dict[str, bytes | None]:
        """The ids of the lines that touch a window: every other line is the same in both."""
        found = windows(old, new, 0)
        if found is None:
            return {}
        ids: set[str] = set()
        for data, spans in ((old, found[0]), (new, found[1])):
            for lo, hi in spans:
                for line in _lines_in(data, lo, hi):
                    rid = _line_id(line)
                    if isinstance(rid, str):
                        ids.add(rid)
        return {rid: record_line(new, rid, self.skip) for rid in ids}


__all__ = [
    "HistorySplitter",
    "RecordSplitter",
    "SectionSplitter",
    "common_prefix",
    "common_suffix",
    "section_key",
    "windows",
]
