"""Live reload glue: domain changes from the watcher become row changes the app shows.

The watcher (`core.watch.VaultWatcher`) calls back from its own thread with
`core.changes.Change` lists, after the catalog was updated.  `LiveRows` turns
them into one `VaultDelta` per vault *in that thread* (rows of changed
memories are recomputed there, so a vault-wide change of 20k memories never
stalls the UI) and queues them; the app is woken by a `LiveChanges` message
(a burst of those replace each other) and applies every queued delta in
order.  `MemlensApp.refresh_paths` feeds the same queue from the UI thread
after memlens wrote a file, and drains it at once.

Rows are matched by object identity, never rebuilt: a delta names the old
rows it replaces or removes and the new rows it adds, so the memory list
(`MemoryList.update`), the sidebar counts and every screen see only what
changed.  `keep_place` then puts the cursor back on the same memory and
shifts the scroll offset by as many rows as were added or removed above it,
so the view does not jump.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Literal

from memlens.core.listing import MemoryList, MemoryRow, memory_row, problem_row
from memlens.core.model import Memory, Problem
from memlens.core.scan.changes import Change, ChangeKind
from memlens.core.scan.vault import Vault

from .widgets.line_list import LineList

DeltaKind = Literal["update", "new", "dropped"]

#: Key of a row: (vault root, memory id or problem place), as `MemoryRow.key`.
RowKey = tuple[str, str]


@dataclass(slots=True)
class VaultDelta:
    """How one vault's rows changed: computed off the UI thread, applied on it."""

    vault: Vault
    #: update: rows changed in place; new: a vault appeared; dropped: it went away.
    kind: DeltaKind
    #: The vault's rows now (a new list: readers of the old one are not disturbed).
    rows: list[MemoryRow]
    #: (old row, new row) pairs: the same memory, re-read or re-judged.
    replaced: list[tuple[MemoryRow, MemoryRow]] = field(default_factory=list)
    added: list[MemoryRow] = field(default_factory=list)
    removed: list[MemoryRow] = field(default_factory=list)
    #: The domain changes behind it (for the search index and the notices).
    changes: list[Change] = field(default_factory=list)
    #: The vault's reference issues now: (root, id) -> {reference: reason}.
    ref_issues: dict[RowKey, dict[str, str]] = field(default_factory=dict)

    @property
    def root(self) -> str:
        return str(self.vault.root)


def ref_issues_of(vault: Vault) -> dict[RowKey, dict[str, str]]:
    """A vault's flagged references, keyed like rows."""
    out: dict[RowKey, dict[str, str]] = {}
    for rp in vault.ref_problems:
        out.setdefault((str(rp.vault_root), rp.id), {})[rp.ref] = rp.reason.value
    return out


@dataclass(slots=True)
class _VaultRows:
    """What the app shows of one vault, as `LiveRows` tracks it."""

    vault: Vault
    rows: list[MemoryRow]
    #: Memory rows by memory id (an id may occur twice: an archived copy).
    by_id: dict[str, list[MemoryRow]] | None = None

    def index(self) -> dict[str, list[MemoryRow]]:
        if self.by_id is None:
            by_id: dict[str, list[MemoryRow]] = {}
            for r in self.rows:
                if r.problem is None:
                    by_id.setdefault(r.id, []).append(r)
            self.by_id = by_id
        return self.by_id


class LiveRows:
    """Rows per vault, kept in step with domain changes, and a queue of deltas.

    Any thread may call `submit` (one at a time: it holds `lock`); the UI
    thread calls `take` and applies what it gets in order.
    """

    def __init__(self, as_of: date) -> None:
        #: The date rows are judged at (the app's `as_of`).
        self.as_of = as_of
        #: Held while rows are computed and queued.
        self.lock = threading.RLock()
        self._vaults: dict[str, _VaultRows] = {}
        self._ready: list[VaultDelta] = []
        #: Bumped by `clear`: a watcher of an older load is not listened to.
        self.epoch = 0

    def register(self, vault: Vault, rows: list[MemoryRow]) -> None:
        """A vault the app shows, with its rows (after loading)."""
        with self.lock:
            self._vaults[str(vault.root)] = _VaultRows(vault, rows)

    def clear(self) -> None:
        """Forget every vault and every queued delta (a reload)."""
        with self.lock:
            self._vaults.clear()
            self._ready.clear()
            self.epoch += 1

    def knows(self, root: str) -> bool:
        return root in self._vaults

    def submit(
        self, changes: Sequence[Change], vaults: Iterable[Vault], epoch: int | None = None
    ) -> int:
        """Compute and queue the deltas for `changes`; returns how many were queued.

        `vaults` is the catalog as it is now: a vault in it the app does not
        show yet is new; a vault the app shows that is not in it went away.
        With `epoch`, changes from before the last `clear` are dropped.
        """
        current = {str(v.root): v for v in vaults}
        by_root: dict[str, list[Change]] = {}
        for c in changes:
            by_root.setdefault(str(c.vault_root), []).append(c)
        queued = 0
        with self.lock:
            if epoch is not None and epoch != self.epoch:
                return 0
            for root, vault_changes in by_root.items():
                delta = self._delta(root, vault_changes, current.get(root))
                if delta is not None:
                    self._ready.append(delta)
                    queued += 1
        return queued

    def take(self) -> list[VaultDelta]:
        """Every queued delta, oldest first."""
        with self.lock:
            ready, self._ready = self._ready, []
        return ready

    # ------------------------------------------------------------------ one vault
    def _delta(self, root: str, changes: list[Change], vault: Vault | None) -> VaultDelta | None:
        state = self._vaults.get(root)
        if state is None:
            if vault is None:
                return None  # a vault that came and went before we saw it
            rows = rows_of(vault, self.as_of)
            self._vaults[root] = _VaultRows(vault, rows)
            return VaultDelta(
                vault,
                "new",
                rows,
                added=list(rows),
                changes=changes,
                ref_issues=ref_issues_of(vault),
            )
        if vault is None:
            del self._vaults[root]
            return VaultDelta(state.vault, "dropped", [], removed=list(state.rows), changes=changes)
        return self._update(state, changes)

    def _update(self, state: _VaultRows, changes: list[Change]) -> VaultDelta:
        vault = state.vault
        result = vault.result  # read once: the watcher replaces it, never edits it
        as_of = self.as_of
        touched = {
            c.id
            for c in changes
            if c.is_memory and c.kind is not ChangeKind.UNKNOWN and c.id is not None
        }
        replaced: list[tuple[MemoryRow, MemoryRow]] = []
        added: list[MemoryRow] = []
        removed: list[MemoryRow] = []
        by_id = state.index()
        if touched:
            # The memories as they are now decide, not the change list: a
            # later batch may already be committed, and applying the newest
            # state twice is harmless.
            now: dict[str, list[Memory]] = {}
            for m in result.memories:
                if m.id in touched:
                    now.setdefault(m.id, []).append(m)
            for mid in touched:
                olds = by_id.get(mid, [])
                news = now.get(mid, [])
                kept: list[MemoryRow] = []
                for old, new_memory in _pair_memories(olds, news):
                    if new_memory is None:
                        assert old is not None
                        removed.append(old)
                        continue
                    new = memory_row(vault.name, new_memory, as_of)
                    if old is None:
                        added.append(new)
                    else:
                        replaced.append((old, new))
                    kept.append(new)
                if kept:
                    by_id[mid] = kept
                else:
                    by_id.pop(mid, None)
        self._problem_rows(state, result.problems, replaced, added, removed)
        if replaced or added or removed:
            swap = {id(old): new for old, new in replaced}
            gone = {id(r) for r in removed}
            rows = [swap.get(id(r), r) for r in state.rows if id(r) not in gone]
            if added:
                # After the vault's last row: the same order (ties go after).
                anchor = state.rows[-1].order if state.rows else -1
                for r in added:
                    r.order = anchor
                rows.extend(added)
            state.rows = rows
        return VaultDelta(
            vault,
            "update",
            state.rows,
            replaced,
            added,
            removed,
            changes,
            ref_issues_of(vault),
        )

    def _problem_rows(
        self,
        state: _VaultRows,
        problems: list[Problem],
        replaced: list[tuple[MemoryRow, MemoryRow]],
        added: list[MemoryRow],
        removed: list[MemoryRow],
    ) -> None:
        """Match the vault's invalid items now with its problem rows (few: a full pass)."""
        olds = [r for r in state.rows if r.problem is not None]
        if not olds and not problems:
            return
        by_problem = {id(r.problem): r for r in olds}
        used: set[int] = set()
        fresh: list[MemoryRow] = []
        for p in problems:
            same = by_problem.get(id(p))
            if same is not None:
                used.add(id(same))
                continue
            fresh.append(problem_row(state.vault.name, p))
        spare: dict[RowKey, list[MemoryRow]] = {}
        for r in olds:
            if id(r) not in used:
                spare.setdefault(r.key, []).append(r)
        for new in fresh:
            candidates = spare.get(new.key)
            if candidates:
                replaced.append((candidates.pop(0), new))
            else:
                added.append(new)
        for rest in spare.values():
            removed.extend(rest)


def rows_of(vault: Vault, as_of: date) -> list[MemoryRow]:
    """Every row of a vault (memories, then invalid items)."""
    rows = [memory_row(vault.name, m, as_of) for m in vault.memories]
    rows.extend(problem_row(vault.name, p) for p in vault.problems)
    return rows


def _pair_memories(
    olds: list[MemoryRow], news: list[Memory]
) -> list[tuple[MemoryRow | None, Memory | None]]:
    """Old rows of one id matched with its memories now: same object, same path, in order."""
    if len(olds) <= 1 and len(news) <= 1:
        return [(olds[0] if olds else None, news[0] if news else None)]
    pairs: list[tuple[MemoryRow | None, Memory | None]] = []
    left = list(olds)
    unmatched: list[Memory] = []
    for m in news:
        hit = next((r for r in left if r.memory is m), None)
        if hit is None:
            hit = next((r for r in left if r.memory is not None and r.memory.path == m.path), None)
        if hit is None:
            unmatched.append(m)
            continue
        left.remove(hit)
        pairs.append((hit, m))
    for m in unmatched:
        pairs.append((left.pop(0) if left else None, m))
    pairs.extend((r, None) for r in left)
    return pairs


# --------------------------------------------------------------------------- the list on screen


@dataclass(slots=True)
class Place:
    """Where the cursor was before rows changed: its row, line and the scroll offset."""

    row: MemoryRow | None
    cursor: int
    top: int


def place_of(table: LineList, current: MemoryRow | None) -> Place:
    return Place(current, table.cursor, int(table.scroll_offset.y))


def keep_place(table: LineList, model: MemoryList, before: Place, row: MemoryRow | None) -> None:
    """Redraw after the model changed, the cursor on `row` and the view where it was.

    If `row` is shown, the cursor follows it and the scroll offset moves by
    as many lines as the cursor did (rows added or removed above it), so the
    cursor stays on the same screen line.  Otherwise the cursor keeps its
    line number (clamped) and the scroll offset stays.
    """
    position = model.position_of_row(row) if row is not None else None
    if position is None:
        table.rows_changed(keep_cursor=before.cursor)
        table.scroll_to(y=before.top, animate=False, immediate=True)
        table._scroll_cursor_visible()
        return
    shift = position - before.cursor
    table.rows_changed(keep_cursor=position)
    table.scroll_to(y=max(0, before.top + shift), animate=False, immediate=True)
    table._scroll_cursor_visible()
