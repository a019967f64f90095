"""What one changed file replaces in the linked result, for `relink`."""

from __future__ import annotations

from dataclasses import dataclass

from ...model import FileScan, LinkState, Memory, Problem
from .rescan import _Delta, _Table


@dataclass(slots=True)
class _DreamLinkState(LinkState):
    """What `link` leaves for `relink`: how many kept memories use each id.

    None when an id was used twice anywhere: such a vault always links in full.
    """

    ids: dict[str, int] | None


@dataclass(slots=True)
class _Splice:
    """One changed file, for `relink`: what leaves and enters its stretch of the result."""

    m_lo: int
    m_old: int
    m_tail: int
    p_lo: int
    p_old: int
    p_tail: int
    gone: list[Memory]
    new: list[Memory]
    new_problems: list[Problem]
    bases: frozenset[str]
    changed: frozenset[str]


def _counts_of(fs: FileScan | None) -> dict[str, int]:
    tab = fs.data.get("table") if fs is not None else None
    return tab.counts if isinstance(tab, _Table) else {}


def _splice_plan(rel: str, before: FileScan | None, after: FileScan | None) -> _Splice:
    old_m = before.memories if before is not None else []
    old_p = before.problems if before is not None else []
    new_m = after.memories if after is not None else []
    new_p = after.problems if after is not None else []
    delta = after.data.get("delta") if after is not None else None
    tab = before.data.get("table") if before is not None else None
    if (
        isinstance(delta, _Delta)
        and isinstance(tab, _Table)
        and delta.base == tab.token
        and delta.m_lo + delta.m_tail <= min(len(old_m), len(new_m))
        and delta.p_lo + delta.p_tail <= min(len(old_p), len(new_p))
    ):
        m_lo, m_tail, p_lo, p_tail = delta.m_lo, delta.m_tail, delta.p_lo, delta.p_tail
        bases, changed = delta.bases, delta.changed
    else:
        m_lo = m_tail = p_lo = p_tail = 0
        was, now = _counts_of(before), _counts_of(after)
        bases = frozenset(was.keys() | now.keys())
        changed = frozenset(b for b in bases if was.get(b) != now.get(b))
    return _Splice(
        m_lo=m_lo,
        m_old=len(old_m),
        m_tail=m_tail,
        p_lo=p_lo,
        p_old=len(old_p),
        p_tail=p_tail,
        gone=old_m[m_lo : len(old_m) - m_tail],
        new=new_m[m_lo : len(new_m) - m_tail],
        new_problems=new_p[p_lo : len(new_p) - p_tail],
        bases=bases,
        changed=changed,
    )
