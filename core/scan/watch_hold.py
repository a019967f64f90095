"""When the watcher believes a change: holding back removals, and what it tells afterwards.

An atomic save (temp + rename, delete + create) or a half-written file must
not look like a removal, so a memory whose file vanished, cannot be read or
reads as broken is held back for a short grace window (`hold_back`).  Once a
batch is committed, memories reported `unknown` meanwhile get a closing
notice (`closing_notices`), and changes to files memlens itself just wrote
are flagged `own` (`mark_own`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..model import ScanResult
from .changes import Change, ChangeKind
from .watch_files import Stat, VaultState, readability, stat_of


@dataclass(frozen=True, slots=True)
class Waits:
    """How long the watcher holds things back (seconds)."""

    #: A vanished or half-written file, before it counts as removed/broken.
    grace: float
    #: An unreadable file, before it is given up on.
    unreadable_timeout: float
    #: The watcher's tick: the soonest a held vault is looked at again.
    tick: float


def hold_back(
    st: VaultState,
    changes: list[Change],
    read_stats: dict[str, Stat | None],
    now: float,
    waits: Waits,
) -> tuple[bool, list[Change]]:
    """Decide about removals whose file vanished, is unreadable or broken.

    Returns (hold, changes): hold=True means do not commit yet (changes
    are then only the `unknown` notices to send now); otherwise the final
    changes to commit, with removals that are really breakages dropped
    (their `problem` stands) or turned into `unknown`.
    """
    removed = [c for c in changes if c.kind is ChangeKind.REMOVED]
    if not removed:
        return False, changes
    root = st.vault.root
    broken_paths = {c.path for c in changes if c.kind is ChangeKind.PROBLEM}
    deadlines: list[float] = []
    verdict: dict[int, str] = {}
    for i, c in enumerate(changes):
        if c.kind is not ChangeKind.REMOVED:
            continue
        readable = readability(root / c.path)
        if readable is None:
            kind, wait = "missing", waits.grace
        elif readable is False:
            kind, wait = "unreadable", waits.unreadable_timeout
        elif c.path in broken_paths:
            kind, wait = "broken", waits.grace
        elif c.path in read_stats and stat_of(root / c.path) != read_stats[c.path]:
            # It was (re)written after it was read (an atomic save that
            # landed mid-rescan): read it again before believing it.
            kind, wait = "raced", waits.grace
        else:
            continue  # the file is there and fine: the memory really went
        verdict[i] = kind
        since = st.suspect.setdefault(c.path, now)
        deadlines.append(since + wait)
    if not verdict:
        return False, changes
    if st.hold_since is None:
        st.hold_since = now
    cap = st.hold_since + max(waits.unreadable_timeout, waits.grace)
    pending_deadline = min((d for d in deadlines if d > now), default=None)
    if pending_deadline is not None and now < cap:
        st.retry_at = min(pending_deadline, now + waits.tick, cap)
        notices = []
        for i, kind in verdict.items():
            c = changes[i]
            if kind == "unreadable" and c.id is not None and c.id not in st.unknown_sent:
                st.unknown_sent.add(c.id)
                notices.append(replace(c, kind=ChangeKind.UNKNOWN))
        return True, notices
    out: list[Change] = []
    for i, c in enumerate(changes):
        kind = verdict.get(i, "")
        if kind == "broken" or (kind == "unreadable" and c.path in broken_paths):
            continue  # the `problem` at this path says what happened
        if kind == "unreadable":
            out.append(replace(c, kind=ChangeKind.UNKNOWN))
            continue
        out.append(c)
    return False, out


def closing_notices(st: VaultState, new: ScanResult, changes: list[Change]) -> None:
    """Add a `changed` for each memory reported `unknown` that came back unchanged.

    So a front end can clear its "unknown" mark.
    """
    if not st.unknown_sent:
        return
    told = {c.id for c in changes}
    for m in new.memories:
        if m.id in st.unknown_sent and m.id not in told:
            changes.append(
                Change(
                    ChangeKind.CHANGED,
                    m.vault_root,
                    m.format,
                    m.id,
                    m.path,
                    line=m.line,
                    index=m.index,
                    memory=m,
                )
            )
            told.add(m.id)
    st.unknown_sent.clear()


def mark_own(changes: list[Change], own: set[str], rels: list[str]) -> list[Change]:
    """Changes flagged `own` where memlens wrote every file they touch."""
    if not own:
        return changes
    everything_own = own.issuperset(rels)
    return [
        replace(c, own=True)
        if everything_own or (c.path in own and (c.old_path is None or c.old_path in own))
        else c
        for c in changes
    ]
