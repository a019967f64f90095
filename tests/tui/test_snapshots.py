"""SVG snapshots of the key screens on the fixtures (120x40, as of 2026-11-22).

Regenerate after an intended change: `make snapshots`
(`pytest tests/tui/test_snapshots.py --snapshot-update`), then look at the SVGs.
"""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from memlens.tui.app import MemlensApp
from memlens.tui.screens.main import MainScreen
from memlens.tui.screens.problems import ProblemTable

from .conftest import AS_OF, SIZE, AppFactory, settle
from .test_review_pane import rv


def test_main_screen(snap_compare, make_app: AppFactory) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=settle)


def test_detail_of_an_injection_memory(snap_compare, make_app: AppFactory) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("slash", *"docker build fails", "enter", "enter")
        await settle(pilot)
        assert isinstance(pilot.app.screen, MainScreen)
        pilot.app.screen.query_one("#detail").scroll_end(animate=False)
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_triage_screen(snap_compare, make_app: AppFactory) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_triage_a_week_later(snap_compare, make_app: AppFactory) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        await pilot.press("right_curly_bracket")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_problems_screen(snap_compare, make_app: AppFactory) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("3")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_raw_text_at_the_faulty_line(snap_compare, make_app: AppFactory) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("3")
        await settle(pilot)
        problems = pilot.app.screen.query_one(ProblemTable)
        index = next(
            i for i, e in enumerate(problems.entries) if e.at_line and e.path.endswith(".md")
        )
        problems.move_to(index)
        await pilot.press("enter")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_help_screen(snap_compare, make_app: AppFactory) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_review_pane(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # The planted review vault (tests/review_vaults.py), observation/v1 layout:
    # the ranked queue and the first pair side by side, differing words marked.
    root = rv.build(tmp_path, "observation-v1")

    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("9")
        await settle(pilot)

    app = MemlensApp([root], as_of=AS_OF, live_reload=False)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
