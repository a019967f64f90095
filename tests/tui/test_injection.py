"""Content is data: markup and escapes in the own test vaults show literally on every screen.

Each test-vault memory holding raw ESC sequences or Rich markup is opened in the
app; the rendered screen (SVG export and the strips the terminal would get) must
hold no ESC byte, no hyperlink and no click action, and must show the text.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.segment import Segment

from memlens.core import Memory, open_catalog
from memlens.tui.app import MemlensApp
from memlens.tui.screens.main import MainScreen
from memlens.tui.screens.raw import RawScreen

from .conftest import SIZE, AppFactory, settle


def injection_memories(own_fixtures_dir: Path) -> list[Memory]:
    catalog = open_catalog(own_fixtures_dir)
    return [m for m in catalog.memories() if "\x1b" in m.body or "\x1b" in m.title]


def screen_segments(app: MemlensApp) -> list[Segment]:
    strips = app.screen._compositor.render_strips()
    return [segment for strip in strips for segment in strip]


def assert_inert(app: MemlensApp, svg: bool = True) -> str:
    """No ESC, no link, no click action in what would reach the terminal; returns the text."""
    if svg:
        assert "\x1b" not in app.export_screenshot()
    segments = screen_segments(app)
    for segment in segments:
        assert "\x1b" not in segment.text
        assert "\x9b" not in segment.text
        style = segment.style
        if style is not None:
            assert not style.link, segment
            assert "@click" not in (style.meta or {}), segment
    # What the terminal would be sent for these lines: SGR only, no OSC.
    console = Console(force_terminal=True, color_system="truecolor", width=SIZE[0])
    with console.capture() as capture:
        console.print(*[Segment(s.text, s.style) for s in segments], end="")
    ansi = capture.get()
    assert "\x1b]" not in ansi  # no OSC 8 hyperlink, no OSC 52 clipboard write
    return "".join(s.text for s in segments)


def test_fixtures_hold_the_injection_memories(own_fixtures_dir: Path) -> None:
    found = {m.format for m in injection_memories(own_fixtures_dir)}
    # Every format that has an own vault carries one (all five once written).
    own = {v.format for v in open_catalog(own_fixtures_dir).vaults}
    assert {"dream-cycle", "observation-v1", "experience-records"} <= own
    assert own <= found


async def test_injection_memories_render_literally_in_the_detail_pane(
    make_app: AppFactory, own_fixtures_dir: Path
) -> None:
    memories = injection_memories(own_fixtures_dir)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, MainScreen)
        for memory in memories:
            assert screen.select_memory(memory.vault_root, memory.id)
            await settle(pilot)
            # Scroll the detail pane through the body so every line is drawn.
            detail = screen.query_one("#detail")
            seen = assert_inert(app)
            while detail.scroll_y < detail.max_scroll_y:
                detail.scroll_relative(y=detail.size.height - 1, animate=False)
                await pilot.pause()
                seen += assert_inert(app, svg=False)
            assert "␛" in seen, memory.id
            if "[link=" in memory.body:
                assert "[link=" in seen, memory.id
            assert app.is_running


async def test_injection_rows_in_the_list_and_filter(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        # A filter that is itself markup is shown literally in the top bar.
        await pilot.press("slash", *"[bold]x[/]", "enter")
        await settle(pilot)
        text = assert_inert(app)
        assert "[bold]x[/]" in text
        assert app.is_running


async def test_injection_memory_raw_text(make_app: AppFactory, own_fixtures_dir: Path) -> None:
    memory = next(m for m in injection_memories(own_fixtures_dir) if m.format == "observation-v1")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, MainScreen)
        assert screen.select_memory(memory.vault_root, memory.id)
        await pilot.press("v")
        await settle(pilot)
        assert isinstance(app.screen, RawScreen)
        text = assert_inert(app)
        assert "␛]8;;https://evil.example/steal" in text


async def test_triage_and_problems_screens_are_inert(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for key in ("2", "3"):
            await pilot.press(key)
            await settle(pilot)
            assert_inert(app)
            await pilot.press("G")
            await settle(pilot)
            assert_inert(app)
