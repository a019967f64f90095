"""The History tab (key H): it lists the commits, shows a version, restores one once confirmed.

The repository is built in the test (tests/core/history_repo.py: ten
commits with fixed authors and dates); live reload is off, so only the
app's own refresh after a write is at work.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import history_repo as hr
import pytest
from textual.pilot import Pilot
from textual.widgets import OptionList, Static

from memlens.core.write.journal import read_journal
from memlens.tui.app import MemlensApp
from memlens.tui.screens.confirm import ConfirmScreen
from memlens.tui.widgets.detail import MemoryDetail
from memlens.tui.widgets.history_pane import HistoryPane

from .conftest import AS_OF, SIZE, settle
from .test_actions_ui import main_of, press, select

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

A_ID = "studio-lease-832e6e"


async def _until(pilot: Pilot[None], done: Callable[[], bool]) -> None:
    """Let the app run until `done()` (the detail debounce and the git worker on a busy machine).

    Bounded: the assertion after it reports what did not happen.
    """
    for _ in range(200):
        if done():
            break
        await pilot.pause(0.05)
    await settle(pilot)


def _text(pane: HistoryPane) -> str:
    return str(pane.query_one("#history-view", Static).content)


async def test_history_tab_lists_shows_and_restores(tmp_path: Path) -> None:
    repo = hr.build_repo(tmp_path / "repo")
    obs = repo.top / "memory/dream/observations.md"
    before = obs.read_bytes()
    app = MemlensApp([repo.top / "memory"], as_of=AS_OF, live_reload=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main = main_of(app)
        await select(pilot, "dream-cycle", A_ID)
        await press(pilot, "H")
        pane = main.query_one(HistoryPane)
        await _until(pilot, lambda: pane.history is not None)
        assert pane.has_class("-shown") and not main.query_one(MemoryDetail).display
        assert pane.history is not None
        subjects = [v.entry.commit.subject for v in pane.views if v.entry.commit]
        assert subjects == ["edit section A comment", "edit section A body", "add vaults"]
        assert pane.query_one(OptionList).option_count == 3
        assert "+<!-- dc:type=fact dc:importance=7.0" in _text(pane)

        # enter: the memory as of the highlighted commit
        await press(pilot, "enter")
        assert pane.show_version
        assert hr.SECTION_A3.strip() in _text(pane)

        # the oldest version, restored after a confirmation that shows the diff
        await press(pilot, "down", "down")
        assert hr.SECTION_A1.strip() in _text(pane)
        await press(pilot, "R")
        confirm = app.screen
        assert isinstance(confirm, ConfirmScreen)
        assert "+The lease renews in March." in confirm.items[0].lines
        await press(pilot, "y")
        await _until(pilot, lambda: bool(pane.views) and pane.views[0].entry.commit is None)
        assert obs.read_bytes() == hr.observations(hr.SECTION_A1, hr.SECTION_B2, hr.SECTION_C)
        root = repo.top / "memory/dream"
        assert [e.get("action") for e in read_journal(root)] == ["restore_version"]
        # the tab shows the restore as an uncommitted change now
        assert pane.views[0].entry.commit is None

        # back to the detail, and u undoes the restore
        await press(pilot, "escape")
        assert not pane.has_class("-shown") and main.query_one(MemoryDetail).display
        await press(pilot, "u")
        assert obs.read_bytes() == before


async def test_history_tab_follows_the_highlighted_memory(tmp_path: Path) -> None:
    repo = hr.build_repo(tmp_path / "repo")
    app = MemlensApp([repo.top / "memory"], as_of=AS_OF, live_reload=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main = main_of(app)
        await select(pilot, "dream-cycle", A_ID)
        await press(pilot, "H")
        pane = main.query_one(HistoryPane)
        await select(pilot, "project-ocean", hr.NOTE_ID)
        await _until(
            pilot, lambda: pane.history is not None and pane.history.memory.id == hr.NOTE_ID
        )
        assert pane.history is not None and pane.history.memory.id == hr.NOTE_ID
        assert [v.entry.change for v in pane.views] == ["moved", "changed", "added"]
        assert pane.views[0].summary == f"moved from {hr.NOTE_REL}"


async def test_cancelled_restore_writes_nothing(tmp_path: Path) -> None:
    repo = hr.build_repo(tmp_path / "repo")
    obs = repo.top / "memory/dream/observations.md"
    before = obs.read_bytes()
    app = MemlensApp([repo.top / "memory"], as_of=AS_OF, live_reload=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await select(pilot, "dream-cycle", A_ID)
        await press(pilot, "H", "down", "R")
        assert isinstance(app.screen, ConfirmScreen)
        await press(pilot, "escape")
        assert obs.read_bytes() == before
        assert not (repo.top / "memory/dream/.memlens/journal.jsonl").exists()


async def test_no_history_tab_outside_git(tmp_path: Path) -> None:
    vault = tmp_path / "plain"
    vault.mkdir()
    (vault / "observations.md").write_bytes(hr.observations(hr.SECTION_A1))
    app = MemlensApp([vault], as_of=AS_OF, live_reload=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main = main_of(app)
        await select(pilot, "dream-cycle", A_ID)
        await press(pilot, "H")
        pane = main.query_one(HistoryPane)
        assert not pane.has_class("-shown")
        assert main.query_one(MemoryDetail).display
        assert pane.error is not None and "not inside a git repository" in pane.error
