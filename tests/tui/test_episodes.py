"""The episodes screen: a day-by-day timeline whose entries open their memories."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot

from memlens.core.episodes import DANGLING
from memlens.tui.app import MemlensApp
from memlens.tui.screens.episodes import EpisodesScreen
from memlens.tui.screens.main import MainScreen
from memlens.tui.screens.raw import RawScreen
from memlens.tui.widgets.detail import MemoryDetail
from memlens.tui.widgets.episode_list import EpisodeList

from .conftest import AS_OF, SIZE, AppFactory, settle

BROKEN = """
## 23:59 - Late entry with a broken link
- **Type:** fix
- **Tags:** homelab
- **Memory:** [gone](../graph/fixes/no-such-memory-000000.md)
- **Summary:** The memory was deleted later
"""


def timeline(app: MemlensApp) -> EpisodeList:
    assert isinstance(app.screen, EpisodesScreen)
    return app.screen.query_one(EpisodeList)


async def wait_for(pilot: Pilot[None], cond: Callable[[], bool], what: str) -> None:
    end = time.monotonic() + 20
    while time.monotonic() < end:
        if cond():
            return
        await pilot.pause(0.02)
    assert cond(), f"timed out waiting for: {what}"


async def test_timeline_by_day_newest_first(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("6")
        await settle(pilot)
        lines = timeline(app).lines
        headings = [ln.day for ln in lines if ln.entry is None]
        assert headings == sorted(headings, reverse=True) and len(headings) == 3
        assert lines[0].entry is None  # a day heading first
        # Each heading counts the entries under it.
        for i, ln in enumerate(lines):
            if ln.entry is None:
                following = [x for x in lines[i + 1 :]]
                n = next((k for k, x in enumerate(following) if x.entry is None), len(following))
                assert ln.count == n
        # The cursor starts on the newest entry, never on a heading.
        current = timeline(app).current()
        assert current is not None and current.date == headings[0] and current.time == "12:00"
        await pilot.press("j")
        assert timeline(app).current() is not None
        await pilot.press("j")  # across the next heading
        entry = timeline(app).current()
        assert entry is not None and entry.date == headings[1]
        await pilot.press("k", "k", "k")
        assert timeline(app).cursor == 1
        await pilot.press("G")
        assert timeline(app).current() is not None
        bar = str(app.screen.query_one("#episodes-bar").render())
        assert "6 entries" in bar and "3 days" in bar


async def test_enter_opens_the_linked_memory(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("6")
        await settle(pilot)
        await pilot.press("j")
        entry = timeline(app).current()
        assert entry is not None and entry.memory_id is not None
        detail_text = str(app.screen.query_one("#episode-detail").render())
        assert entry.title in detail_text and "→" in detail_text
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        row = app.screen.query_one(MemoryDetail).row
        assert row is not None and row.id == entry.memory_id
        assert str(row.vault_root) == str(entry.vault_root)


async def test_an_unresolved_link_says_so(own_fixtures_copy: Path) -> None:
    day = own_fixtures_copy / "cognitive-memory" / "episodes" / "2026-11-19.md"
    day.write_text(day.read_text(encoding="utf-8") + BROKEN, encoding="utf-8")
    app = MemlensApp([own_fixtures_copy], as_of=AS_OF, live_reload=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("6")
        await settle(pilot)
        entry = timeline(app).current()
        assert entry is not None and entry.link_state == DANGLING
        text = timeline(app).render_row(timeline(app).cursor, 120).plain
        assert "link not found" in text
        assert "1 links not found" in str(app.screen.query_one("#episodes-bar").render())
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, EpisodesScreen)
        messages = [n.message for n in app._notifications]
        assert any(
            "does not resolve: ../graph/fixes/no-such-memory-000000.md" in m for m in messages
        )


async def test_v_shows_the_episode_file_at_the_entry(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("6")
        await settle(pilot)
        entry = timeline(app).current()
        assert entry is not None
        await pilot.press("v")
        await settle(pilot)
        assert isinstance(app.screen, RawScreen)
        assert app.screen.line == entry.line
        assert app.screen.path == entry.vault_root / entry.file


async def test_palette_opens_the_timeline(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        cmd = next(c for c in app.palette_commands() if c.name == "Show episodes timeline")
        await cmd.run()
        await settle(pilot)
        assert isinstance(app.screen, EpisodesScreen)


async def test_an_appended_entry_shows_up_live(own_fixtures_copy: Path) -> None:
    app = MemlensApp([own_fixtures_copy], as_of=AS_OF)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: app.live_ready, "the watcher")
        await pilot.press("6")
        await settle(pilot)
        before = len([ln for ln in timeline(app).lines if ln.entry is not None])
        day = own_fixtures_copy / "cognitive-memory" / "episodes" / "2026-11-19.md"
        with day.open("a", encoding="utf-8") as fh:
            fh.write(BROKEN)
        await wait_for(
            pilot,
            lambda: len([ln for ln in timeline(app).lines if ln.entry is not None]) == before + 1,
            "the appended entry",
        )
        assert any(
            ln.entry is not None and ln.entry.title == "Late entry with a broken link"
            for ln in timeline(app).lines
        )
