"""Rescans of a changed observations file that parse only the sections the change touched.

A read keeps the file's bytes and a `_Table` of its sections; the changed byte span
picks the sections to read again and the rest are moved or renumbered in place.
"""

from __future__ import annotations

import bisect
import operator
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from ...model import FileScan, Memory, Problem
from .ids import _id_number, _Replay, _WindowIds
from .reading import _BOM, _Window, parse_window

#: Bytes compared at a time when looking for what a rescan changed.
_CMP_CHUNK = 1 << 16


def _common_prefix(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix (compared in chunks, at C speed)."""
    n = min(len(a), len(b))
    i = 0
    while i < n:
        j = min(i + _CMP_CHUNK, n)
        if not a.startswith(b[i:j], i):
            lo, hi = i, j  # a[:lo] == b[:lo]; a[:hi] != b[:hi]
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if a.startswith(b[lo:mid], lo):
                    lo = mid
                else:
                    hi = mid
            return lo
        i = j
    return n


def _common_suffix(a: bytes, b: bytes, limit: int) -> int:
    """Length of the longest common suffix, at most `limit`."""
    la, lb = len(a), len(b)
    k = 0
    while k < limit:
        step = min(_CMP_CHUNK, limit - k)
        if not a.startswith(b[lb - k - step : lb - k], la - k - step):
            lo, hi = k, k + step  # the last lo bytes match, the last hi do not
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if a.startswith(b[lb - mid : lb - lo], la - mid):
                    lo = mid
                else:
                    hi = mid
            return lo
        k += step
    return limit


#: Native keys of a section memory that hold file lines (moved by a rescan).
_LINE_KEYS: tuple[str, ...] = (
    "start_line",
    "end_line",
    "comment_line",
    "comment_end_line",
    "body_start_line",
    "archive_heading_line",
)

#: Memory's fields in constructor order, read at once (`dataclasses.replace`
#: costs several times more, and a rescan may move thousands of memories).
_MEMORY_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Memory))
_MEMORY_VALUES = operator.attrgetter(*_MEMORY_FIELDS)
_INDEX_AT = _MEMORY_FIELDS.index("index")
_NATIVE_AT = _MEMORY_FIELDS.index("native")


def _shifted(m: Memory, lines: int, sections: int) -> Memory:
    """A copy of a section memory whose section moved by `lines` and `sections`."""
    values = list(_MEMORY_VALUES(m))
    if m.index is not None:
        values[_INDEX_AT] = m.index + sections
    if lines:
        native = dict(m.native)
        for key in _LINE_KEYS:
            value = native.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                native[key] = value + lines
        values[_NATIVE_AT] = native
    return Memory(*values)


@dataclass(slots=True)
class _Table:
    """What one read of a markdown file made of it, kept for the next read.

    Plain data (it is pickled with the FileScan).  Section `i` starts at
    byte `heads[i]` on 0-based line `lines[i]`, gave `nmem[i]` memories and
    `nprob[i]` problems (in the FileScan's lists, after `npre` preamble
    problems) and took the ids `takes[i]` ((base, id given) pairs).
    `counts` is how often each id base was taken in the file.  `token`
    names this read (a rescan's `_Delta` says which read it started from).
    """

    raw: bytes
    token: bytes = field(compare=False)
    heads: list[int] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    nmem: list[int] = field(default_factory=list)
    nprob: list[int] = field(default_factory=list)
    takes: list[tuple[tuple[str, str], ...]] = field(default_factory=list)
    npre: int = 0
    counts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Delta:
    """What a rescan changed: all but the first `m_lo` and last `m_tail` memories
    (`p_lo`/`p_tail` problems) of the read named `base`.

    `bases`: the id bases of every section in the changed range; `changed`:
    those taken a different number of times than before.
    """

    base: bytes
    m_lo: int
    m_tail: int
    p_lo: int
    p_tail: int
    bases: frozenset[str]
    changed: frozenset[str]


@dataclass(frozen=True, slots=True)
class _Span:
    """What a rescan reads again: the old sections `lo`..`hi - 1` (-1 stands
    for the preamble), and how many lines and bytes the change added
    (negative: removed)."""

    lo: int
    hi: int
    dnl: int
    dbytes: int

    @property
    def first(self) -> int:
        return max(self.lo, 0)

    @property
    def at_start(self) -> bool:
        return self.lo < 0


@dataclass(slots=True)
class _Tail:
    """The sections after a rescan's window as the new read has them."""

    mems: list[Memory]
    probs: list[Problem]
    takes: list[tuple[tuple[str, str], ...]]
    nmem: list[int]
    nprob: list[int]
    #: The previous objects, unmoved: the delta may keep them out of a relink.
    kept: bool


def rescan(root: Path, rel: str, data: bytes, previous: FileScan, tab: _Table) -> FileScan | None:
    """`scan_file` of `data`, reading again only the sections the change touched.

    None when the previous read does not fit its table, the BOM changed or a
    moved section with problems no longer takes the same ids.
    """
    mems, probs = previous.memories, previous.problems
    if len(mems) != sum(tab.nmem) or len(probs) != tab.npre + sum(tab.nprob):
        return None  # not the scan this table describes
    span = _changed_span(tab, data)
    if span is None:
        return None
    n, heads, lines = len(tab.heads), tab.heads, tab.lines
    lo, hi, first, at_start = span.lo, span.hi, span.first, span.at_start
    old_count, before = _window_ids(tab, first, hi)
    win = parse_window(
        root,
        rel,
        data,
        0 if at_start else heads[lo],
        heads[hi] + span.dbytes if hi < n else len(data),
        0 if at_start else lines[lo],
        first,
        _WindowIds(before),
        at_start=at_start,
        at_end=hi == n,
    )
    new_count = Counter(b for t in win.takes for b, _g in t)
    changed = {
        b for b in old_count.keys() | new_count.keys() if old_count.get(b) != new_count.get(b)
    }
    # Repeated titles after the window count on from the window's takes.
    renumber: dict[str, int] = {}
    for b in changed:
        if tab.counts.get(b, 0) - before(b) - old_count.get(b, 0) > 0:
            renumber[b] = before(b) + new_count.get(b, 0)
    m_lo = sum(tab.nmem[:first])
    p_lo = 0 if at_start else tab.npre + sum(tab.nprob[:first])
    m_hi = m_lo + sum(tab.nmem[first:hi])
    p_hi = (tab.npre if at_start else p_lo) + sum(tab.nprob[first:hi])
    # Unchanged sections that an edit only re-read keep their objects.
    olds = {m.id: m for m in mems[m_lo:m_hi]}
    win_mems = [
        prev if (prev := olds.get(m.id)) is not None and prev == m else m for m in win.memories
    ]
    tail = _moved_tail(
        root,
        rel,
        data,
        tab,
        span,
        len(win.heads) - (hi - first),
        renumber,
        mems[m_hi:],
        probs[p_hi:],
    )
    if tail is None:
        return None
    out = FileScan(rel, order=previous.order)
    out.memories = mems[:m_lo] + win_mems + tail.mems
    out.problems = (probs[:p_lo] if not at_start else []) + win.problems + tail.probs
    out.data["table"] = _rescanned_table(tab, data, span, win, tail, changed, old_count, new_count)
    # Unchanged memories are the previous objects already (a hint for
    # the caller that matching them up again is not needed).
    out.kept_objects = True
    m_tail, p_tail = (len(tail.mems), len(tail.probs)) if tail.kept else (0, 0)
    out.data["delta"] = _Delta(
        base=tab.token,
        m_lo=m_lo,
        m_tail=m_tail,
        p_lo=p_lo,
        p_tail=p_tail,
        bases=frozenset(
            old_count.keys()
            | new_count.keys()
            | ({b for t in tail.takes for b, _g in t} if m_tail == 0 else set())
        ),
        changed=frozenset(changed),
    )
    return out


def _changed_span(tab: _Table, data: bytes) -> _Span | None:
    """The sections a change from `tab.raw` to `data` touches; None if the BOM came or went."""
    old = tab.raw
    bom = 3 if old.startswith(_BOM) else 0
    if data.startswith(_BOM) != bool(bom):
        return None
    p = _common_prefix(old, data)
    s = _common_suffix(old, data, min(len(old), len(data)) - p)
    heads, lines = tab.heads, tab.lines
    # `a`..`z`: the old lines the change touches (z: the line holding
    # the first byte of the common suffix, conservatively).
    j = bisect.bisect_right(heads, p) - 1
    a = lines[j] + old.count(b"\n", heads[j], p) if j >= 0 else old.count(b"\n", 0, p)
    e_old, e_new = len(old) - s, len(data) - s
    old_nl = old.count(b"\n", p, e_old)
    dnl = data.count(b"\n", p, e_new) - old_nl
    z = a + old_nl
    # Sections lo..hi-1 are parsed again: a section depends on its lines
    # and on the next heading line; -1 stands for the preamble.
    lo = bisect.bisect_left(lines, a) - 1
    hi = bisect.bisect_right(lines, z)
    return _Span(lo=lo, hi=hi, dnl=dnl, dbytes=len(data) - len(old))


def _window_ids(tab: _Table, first: int, hi: int) -> tuple[dict[str, int], Callable[[str], int]]:
    """How often each id base was taken by the old sections `first`..`hi - 1`,
    and `before(base)`: how often before them."""
    old_count: dict[str, int] = {}
    first_number: dict[str, int] = {}
    for t in tab.takes[first:hi]:
        for b, given in t:
            old_count[b] = old_count.get(b, 0) + 1
            if b not in first_number:
                first_number[b] = _id_number(b, given)
    counts = tab.counts
    prefix_takes = tab.takes[:first]

    def before(b: str) -> int:
        """How often `base` was taken before the window (as a full read counts)."""
        if b in first_number:
            return first_number[b] - 1
        if not counts.get(b):
            return 0
        return sum(1 for t in prefix_takes for bb, _g in t if bb == b)

    return old_count, before


def _moved_tail(
    root: Path,
    rel: str,
    data: bytes,
    tab: _Table,
    span: _Span,
    dk: int,
    renumber: dict[str, int],
    mems: list[Memory],
    probs: list[Problem],
) -> _Tail | None:
    """The old sections after the window (`mems`, `probs`), moved by `span.dnl`
    lines and `dk` sections and renumbered per `renumber` (which it counts on)."""
    hi, n, dnl, dbytes = span.hi, len(tab.heads), span.dnl, span.dbytes
    shift = dnl != 0 or dk != 0
    if not shift and not renumber:
        return _Tail(mems, probs, tab.takes[hi:], tab.nmem[hi:], tab.nprob[hi:], kept=True)
    tail = _Tail([], [], [], [], [], kept=False)
    mp = pp = 0
    for i in range(hi, n):
        sec_mems = mems[mp : mp + tab.nmem[i]]
        sec_probs = probs[pp : pp + tab.nprob[i]]
        mp += tab.nmem[i]
        pp += tab.nprob[i]
        t, rename = _renumbered(tab.takes[i], renumber)
        if shift and sec_probs:
            # Problems carry lines in their text: read the section again.
            sub = parse_window(
                root,
                rel,
                data,
                tab.heads[i] + dbytes,
                tab.heads[i + 1] + dbytes if i + 1 < n else len(data),
                tab.lines[i] + dnl,
                i + dk,
                _Replay(t),
                at_start=False,
                at_end=i + 1 == n,
            )
            if sub.takes != [t]:
                return None
            sec_mems, sec_probs = sub.memories, sub.problems
        else:
            if rename:
                sec_mems = [replace(m, id=rename[m.id]) if m.id in rename else m for m in sec_mems]
                sec_probs = [
                    replace(q, id=rename[q.id]) if q.id is not None and q.id in rename else q
                    for q in sec_probs
                ]
            if shift:
                sec_mems = [_shifted(m, dnl, dk) for m in sec_mems]
        tail.mems.extend(sec_mems)
        tail.probs.extend(sec_probs)
        tail.takes.append(t)
        tail.nmem.append(len(sec_mems))
        tail.nprob.append(len(sec_probs))
    return tail


def _renumbered(
    t: tuple[tuple[str, str], ...], renumber: dict[str, int]
) -> tuple[tuple[tuple[str, str], ...], dict[str, str]]:
    """One section's takes counted on from `renumber`, and the ids that changed (old -> new)."""
    rename: dict[str, str] = {}
    if not renumber or not any(b in renumber for b, _g in t):
        return t, rename
    fresh: list[tuple[str, str]] = []
    for b, given in t:
        if b in renumber:
            renumber[b] += 1
            now = b if renumber[b] == 1 else f"{b}-{renumber[b]}"
            if now != given:
                rename[given] = now
            given = now
        fresh.append((b, given))
    return tuple(fresh), rename


def _rescanned_table(
    tab: _Table,
    data: bytes,
    span: _Span,
    win: _Window,
    tail: _Tail,
    changed: set[str],
    old_count: dict[str, int],
    new_count: dict[str, int],
) -> _Table:
    """The previous table with the window's sections and the moved tail spliced in."""
    counts = new_counts = tab.counts
    if changed:
        new_counts = dict(counts)
        for b in changed:
            left = counts.get(b, 0) - old_count.get(b, 0) + new_count.get(b, 0)
            if left:
                new_counts[b] = left
            else:
                new_counts.pop(b, None)
    first, hi, dbytes, dnl = span.first, span.hi, span.dbytes, span.dnl
    heads, lines = tab.heads, tab.lines
    return _Table(
        raw=data,
        token=os.urandom(8),
        heads=heads[:first]
        + win.heads
        + ([h + dbytes for h in heads[hi:]] if dbytes else heads[hi:]),
        lines=lines[:first] + win.lines + ([x + dnl for x in lines[hi:]] if dnl else lines[hi:]),
        nmem=tab.nmem[:first] + win.nmem + tail.nmem,
        nprob=tab.nprob[:first] + win.nprob + tail.nprob,
        takes=tab.takes[:first] + win.takes + tail.takes,
        npre=win.npre if span.at_start else tab.npre,
        counts=new_counts,
    )
