"""The History tab's flow on the memories screen: show it; restore a version once confirmed.

Kept apart from the screen so the screen only gains a key, a widget and two
message handlers.  The restore is history's journaled write
(`core.history.restore`), planned in a thread, listed with its diff in a
`ConfirmScreen`, written only on yes, and undone like any action (`u`).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from memlens.core.errors import MemlensError
from memlens.core.history.diff import unified_diff
from memlens.core.history.restore import plan_restore, restore_version
from memlens.core.history.versions import Entry, History, Version

from .action_common import entry_paths, refresh_after_write, tell
from .screens.confirm import ChangeItem, ConfirmScreen
from .widgets.detail import MemoryDetail
from .widgets.history_pane import HistoryPane
from .widgets.memory_table import MemoryTable

if TYPE_CHECKING:
    from memlens.core.listing import MemoryRow

    from .screens.main import MainScreen


def toggle_history(screen: MainScreen) -> None:
    """Switch the detail pane to the History tab of the highlighted memory, or back."""
    pane = screen.query_one(HistoryPane)
    if pane.has_class("-shown"):
        close_history(screen)
        return
    row = screen.query_one(MemoryTable).current_row()
    if row is None or row.memory is None:
        tell(screen.memlens, "No history: choose a memory first.", "warning")
        return
    screen.query_one(MemoryDetail).display = False
    pane.add_class("-shown")
    pane.load(row.memory)


def follow_history(screen: MainScreen, row: MemoryRow | None) -> None:
    """While the History tab is open, it shows the highlighted memory's history."""
    pane = screen.query_one(HistoryPane)
    if not pane.has_class("-shown") or row is None or row.memory is None:
        return
    if pane.memory is not None and pane.memory.key == row.memory.key:
        return
    pane.load(row.memory, focus=False)


def close_history(screen: MainScreen) -> None:
    """Back to the detail tab."""
    screen.query_one(HistoryPane).remove_class("-shown")
    detail = screen.query_one(MemoryDetail)
    detail.display = True
    screen.set_focus(screen.query_one(MemoryTable))


def _version(entry: Entry) -> Version | None:
    if entry.commit is None or entry.after is None:
        return None
    return Version(entry.commit, entry, entry.after)


def request_restore(screen: MainScreen, history: History, entry: Entry) -> None:
    """Plan the restore of `entry`'s version, confirm it with its diff, then write it."""
    version = _version(entry)
    if version is None:
        why = "that is the working tree" if entry.commit is None else "it is absent there"
        tell(screen.memlens, f"Nothing to restore: {why}.", "warning")
        return
    screen.run_worker(
        _plan_then_confirm(screen, history, version), group="write", exit_on_error=False
    )


async def _plan_then_confirm(screen: MainScreen, history: History, version: Version) -> None:
    app = screen.memlens
    try:
        plan = await asyncio.to_thread(plan_restore, history, version)
    except (MemlensError, OSError) as exc:
        tell(app, f"restore refused for {history.memory.id}: {exc}", "error")
        return
    c = version.commit
    lines = unified_diff(history.current, version.data, "now", f"at {c.short}")
    item = ChangeItem(f"{history.memory.id} as of {c.short} ({c.date[:10]}, {c.subject})", lines)

    def answered(yes: bool | None) -> None:
        if yes:
            screen.run_worker(_write(screen, history, c.id), group="write", exit_on_error=False)
        else:
            tell(app, "Cancelled: nothing written.")

    app.push_screen(
        ConfirmScreen(
            f"Restore this version: {plan.summary}",
            [item],
            confirm_label="Restore",
            note="An ordinary edit: u undoes it. Git itself is not touched.",
        ),
        answered,
    )


async def _write(screen: MainScreen, history: History, commit: str) -> None:
    app = screen.memlens
    memory = history.memory
    try:
        plan, entry = await asyncio.to_thread(restore_version, history, commit)
    except (MemlensError, OSError) as exc:
        tell(app, f"restore refused for {memory.id}: {exc}", "error")
        return
    tell(app, f"{plan.summary} · u undoes it")
    refresh_after_write(app, entry_paths(memory.vault_root, entry))
    pane = screen.query_one(HistoryPane)
    if pane.has_class("-shown"):
        pane.load(memory)
