"""Pilot tests: every screen and key of the app, on the own test vaults at 2026-11-22."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, Markdown, OptionList

from memlens.core import open_catalog
from memlens.core.listing import HEALTH_RANK, SORT_KEYS, problem_entries
from memlens.core.privacy import scan_catalog
from memlens.tui.app import MemlensApp
from memlens.tui.screens.error import ErrorModal
from memlens.tui.screens.help import HelpScreen
from memlens.tui.screens.main import MainScreen
from memlens.tui.screens.problems import ProblemsScreen, ProblemTable, secret_entries
from memlens.tui.screens.raw import RawScreen
from memlens.tui.screens.triage import TriageScreen, TriageTable
from memlens.tui.widgets.detail import MemoryDetail, RelationList, SafeMarkdown
from memlens.tui.widgets.memory_table import MemoryTable, layout
from memlens.tui.widgets.raw_view import RawTextView
from memlens.tui.widgets.vault_sidebar import VaultSidebar

from .conftest import AS_OF, SIZE, AppFactory, settle


def table(app: MemlensApp) -> MemoryTable:
    return app.screen.query_one(MemoryTable)


def main(app: MemlensApp) -> MainScreen:
    assert isinstance(app.screen, MainScreen)
    return app.screen


async def test_loads_every_vault_with_counts(make_app: AppFactory, own_fixtures_dir: Path) -> None:
    catalog = open_catalog(own_fixtures_dir)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not app.loading and app.errors == []
        expected_rows = sum(len(v.memories) + len(v.problems) for v in catalog.vaults)
        assert main(app).model.total == expected_rows
        assert len(table(app).model) == expected_rows
        summaries = {s.name: s for s in app.summaries()}
        for v in catalog.vaults:
            s = summaries[v.name]
            assert s.loaded and s.format == v.format
            assert s.memories == len(v.memories)
            assert s.problems == len(v.problems)
            assert sum(s.health.values()) == len(v.memories)
        sidebar = app.screen.query_one(VaultSidebar)
        assert sidebar.option_count == len(catalog.vaults) + 1


async def test_cursor_keys(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        t = table(app)
        assert app.focused is t and t.cursor == 0
        await pilot.press("j", "j", "down")
        assert t.cursor == 3
        await pilot.press("k", "up")
        assert t.cursor == 1
        await pilot.press("G")
        assert t.cursor == len(t.model) - 1
        assert t.scroll_offset.y > 0  # the cursor row is scrolled into view
        await pilot.press("g")
        assert t.cursor == 0 and t.scroll_offset.y == 0
        await pilot.press("pagedown")
        assert t.cursor > 10
        await pilot.press("pageup")
        assert t.cursor == 0
        await pilot.press("end")
        assert t.cursor == len(t.model) - 1
        await pilot.press("home")
        assert t.cursor == 0


async def test_detail_follows_the_cursor(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = app.screen.query_one(MemoryDetail)
        assert detail.row is table(app).current_row()
        await pilot.press("j")
        await settle(pilot)
        assert detail.row is table(app).model[1]
        # Fast moves are coalesced but end on the right row.
        await pilot.press(*["j"] * 8)
        await settle(pilot)
        assert detail.row is table(app).model[9]


async def test_filter_narrows_as_you_type_and_esc_clears(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        total = len(table(app).model)
        await pilot.press("slash")
        filter_input = app.screen.query_one("#filter", Input)
        assert app.focused is filter_input
        await pilot.press(*"farrier")
        assert len(table(app).model) == 1
        assert "farrier" in table(app).model[0].title.lower()
        await pilot.press("enter")
        assert app.focused is table(app)
        await pilot.press("escape")
        assert filter_input.value == "" and len(table(app).model) == total
        # Field terms work from the keyboard too; q and digits type into the input.
        await pilot.press("slash", *"health:expired q")
        assert filter_input.value == "health:expired q"
        assert app.is_running
        await pilot.press("backspace", "backspace")
        rows = list(table(app).model)
        assert rows and all(r.health == "expired" for r in rows)
        await pilot.press("escape")
        assert app.focused is table(app)


async def test_sort_keys_and_header_click(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        model = main(app).model
        assert model.sort_column == "natural"
        await pilot.press("s")
        assert model.sort_column == "title"
        titles = [r.title.lower() for r in model]
        assert titles == sorted(titles)
        await pilot.press("S")
        assert model.reverse
        assert [r.title.lower() for r in model] == sorted(titles, reverse=True)
        # Click the "health" header: sorts by health, most urgent first.
        t = table(app)
        x = 0
        for col in layout(t.line_width):
            if col.key == "health":
                break
            x += col.width + 1
        await pilot.click(MemoryTable, offset=(x + 1, 0))
        assert model.sort_column == "health" and not model.reverse
        ranks = [HEALTH_RANK[r.health] for r in model]
        assert ranks == sorted(ranks)
        await pilot.click(MemoryTable, offset=(x + 1, 0))
        assert model.sort_column == "health" and model.reverse
        # `s` cycles through every column and back.
        for _ in SORT_KEYS:
            await pilot.press("s")
        assert model.sort_column == "health"


async def test_invalid_rows_toggle_and_show_problem_with_raw_text(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        model = main(app).model
        with_invalid = len(model)
        await pilot.press("i")
        assert len(model) < with_invalid and all(r.problem is None for r in model)
        await pilot.press("i")
        assert len(model) == with_invalid
        await pilot.press("slash", *"health:invalid", "enter")
        await settle(pilot)
        row = table(app).current_row()
        assert row is not None and row.problem is not None
        detail = app.screen.query_one(MemoryDetail)
        assert detail.query_one("#detail-problem").display
        assert detail.query_one("#detail-raw").display
        assert not detail.query_one(SafeMarkdown).display
        await pilot.press("v")
        await pilot.pause()
        assert isinstance(app.screen, RawScreen)
        view = app.screen.query_one(RawTextView)
        assert view.mark_line == (row.problem.at_line or row.problem.line)
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_enter_tab_and_escape_move_between_panes(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        assert isinstance(app.focused, MemoryDetail)
        await pilot.press("escape")
        assert app.focused is table(app)
        seen = set()
        for _ in range(6):
            await pilot.press("tab")
            seen.add(type(app.focused).__name__)
        assert {"VaultSidebar", "Input", "MemoryTable", "MemoryDetail"} <= seen


async def test_sidebar_scopes_the_list_to_one_vault(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        sidebar = app.screen.query_one(VaultSidebar)
        sidebar.focus()
        await pilot.press("down")
        root = sidebar.summaries[0].root
        rows = list(table(app).model)
        assert rows and all(r.vault_root == root for r in rows)
        await pilot.press("up")
        assert len(table(app).model) == main(app).model.total


async def test_relation_enter_jumps_to_the_target_and_b_goes_back(
    make_app: AppFactory, own_fixtures_dir: Path
) -> None:
    catalog = open_catalog(own_fixtures_dir)
    source = next(
        m
        for m in catalog.memories()
        if any(r.resolved for r in m.relations) and m.relations[0].resolved
    )
    target_id = source.relations[0].resolved
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert main(app).select_memory(source.vault_root, source.id)
        await settle(pilot)
        relations = app.screen.query_one(RelationList)
        assert relations.display and relations.option_count == len(source.relations)
        relations.focus()
        relations.highlighted = 0
        await pilot.press("enter")
        await settle(pilot)
        current = table(app).current_row()
        assert current is not None and current.id == target_id
        await pilot.press("b")
        current = table(app).current_row()
        assert current is not None and current.id == source.id


async def test_markdown_link_clicks_do_nothing(make_app: AppFactory, monkeypatch) -> None:
    opened: list[str] = []
    app = make_app()
    monkeypatch.setattr(app, "open_url", lambda url, **kw: opened.append(url))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        body = app.screen.query_one(SafeMarkdown)
        body.post_message(Markdown.LinkClicked(body, "file:///etc/passwd"))
        await pilot.pause()
        assert opened == []
        # The parser makes no links at all: markdown link syntax stays text.
        await body.update("see [the runbook](https://example.com) and <https://x.y>")
        await pilot.pause()
        text = " ".join(
            str(b._content) for b in body.query("MarkdownBlock") if hasattr(b, "_content")
        )
        assert "[the runbook](https://example.com)" in text


async def test_help_screen(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_triage_time_travel(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TriageScreen)
        assert screen.shown_date == app.as_of
        lines = screen.query_one(TriageTable).lines
        headers = [line for line in lines if line.row is None]
        assert headers and sum(h.count for h in headers) == len(lines) - len(headers)
        expired_before = next((h.count for h in headers if h.health.value == "expired"), 0)
        for key, shift in (
            ("right_square_bracket", 1),
            ("right_curly_bracket", 8),
            ("left_square_bracket", 7),
            ("left_curly_bracket", 0),
        ):
            await pilot.press(key)
            await settle(pilot)
            assert (screen.triage_date - app.as_of).days == shift
            assert screen.shown_date == screen.triage_date
        await pilot.press("right_curly_bracket", "right_curly_bracket", "right_curly_bracket")
        await settle(pilot)
        later = [line for line in screen.query_one(TriageTable).lines if line.row is None]
        expired_later = next((h.count for h in later if h.health.value == "expired"), 0)
        assert expired_later >= expired_before
        await pilot.press("0")
        await settle(pilot)
        assert screen.triage_date == app.as_of


async def test_triage_enter_opens_the_memory(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        triage = app.screen.query_one(TriageTable)
        wanted = triage.lines[triage.cursor].row
        assert wanted is not None
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        current = table(app).current_row()
        assert current is not None and current.key == wanted.key


async def test_problems_screen_lists_every_problem_and_opens_raw_text(
    make_app: AppFactory, own_fixtures_dir: Path
) -> None:
    catalog = open_catalog(own_fixtures_dir)
    # Privacy findings are problems too (the own fixtures hold one, in an erased record).
    expected = problem_entries(catalog.vaults) + secret_entries(scan_catalog(catalog, AS_OF))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("3")
        await settle(pilot)
        assert isinstance(app.screen, ProblemsScreen)
        problems = app.screen.query_one(ProblemTable)
        assert [(e.path, e.reason, e.line) for e in problems.entries] == [
            (e.path, e.reason, e.line) for e in expected
        ]
        # Open one with a known faulty line.
        index = next(i for i, e in enumerate(problems.entries) if e.at_line)
        problems.move_to(index)
        entry = problems.entries[index]
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, RawScreen)
        view = app.screen.query_one(RawTextView)
        assert view.mark_line == entry.at_line and view.cursor == entry.at_line - 1
        await pilot.press("escape")
        assert isinstance(app.screen, ProblemsScreen)


async def test_problems_m_goes_to_the_owning_memory(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("3")
        await settle(pilot)
        problems = app.screen.query_one(ProblemTable)
        index = next(
            i
            for i, e in enumerate(problems.entries)
            if e.kind == "reference" and main_find(app, e.vault_root, e.id)
        )
        entry = problems.entries[index]
        problems.move_to(index)
        await pilot.press("m")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        current = table(app).current_row()
        assert current is not None and current.id == entry.id


def main_find(app: MemlensApp, root: Path, memory_id: str | None) -> bool:
    screen = app.main_screen()
    return bool(screen and memory_id and screen.model.find(root, memory_id))


async def test_raw_view_of_a_memory_finds_its_line(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"farrier", "enter", "v")
        await pilot.pause()
        assert isinstance(app.screen, RawScreen)
        view = app.screen.query_one(RawTextView)
        assert view.mark_line is not None
        assert "Farrier" in view.lines[view.mark_line - 1]


async def test_command_palette_offers_app_commands(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        names = [c.name for c in app.palette_commands()]
        assert {"Show decay triage", "Show problems", "Filter memories", "Sort by title"} <= set(
            names
        )
        assert any(n.startswith("Show vault ") for n in names)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"decay triage")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, TriageScreen)


async def test_palette_sort_and_vault_commands(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        cmds = {c.name: c for c in app.palette_commands()}
        await cmds["Sort by strength"].run()  # type: ignore[misc]
        assert main(app).model.sort_column == "strength"
        vault_cmd = next(c for n, c in cmds.items() if n.startswith("Show vault "))
        await vault_cmd.run()  # type: ignore[misc]
        await pilot.pause()
        assert main(app).model.scope is not None


async def test_mode_keys(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for key, screen in (("2", TriageScreen), ("3", ProblemsScreen), ("1", MainScreen)):
            await pilot.press(key)
            await pilot.pause()
            assert isinstance(app.screen, screen)
        await pilot.press("q")
        await pilot.pause()
    assert not app.is_running


async def test_missing_path_is_one_error_dialog_not_a_crash(tmp_path: Path) -> None:
    app = MemlensApp(
        [tmp_path / "nope"], as_of=None, clock=lambda: __import__("datetime").date(2026, 1, 1)
    )
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.as_of.isoformat() == "2026-01-01"
        assert isinstance(app.screen, ErrorModal)
        assert app.errors and "nope" in app.errors[0][1]
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)
        assert app.is_running


async def test_a_failing_vault_does_not_hide_the_others(
    make_app: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memlens.tui.app_loading as app_module

    real = app_module.scan_progressive

    def flaky(vault, **kwargs):  # type: ignore[no-untyped-def]
        # An adapter bug in one vault (whether its rows were kept or not).
        if vault.format == "dream-cycle":
            raise RuntimeError("boom \x1b[2J [bold]x[/]")
        return real(vault, **kwargs)

    monkeypatch.setattr(app_module, "scan_progressive", flaky)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ErrorModal)
        assert "boom" in app.errors[0][1]
        svg = app.export_screenshot()
        assert "\x1b" not in svg
        await pilot.press("escape")
        summaries = app.summaries()
        failed = [s for s in summaries if s.error]
        assert len(failed) == 1 and failed[0].format == "dream-cycle"
        assert sum(s.loaded for s in summaries) == len(summaries) - 1
        assert len(table(app).model) > 0


async def test_empty_folder_shows_a_notice(tmp_path: Path) -> None:
    app = MemlensApp([tmp_path], as_of=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.errors == []
        assert len(table(app).model) == 0
        assert isinstance(app.screen, MainScreen)


async def test_reload_rebuilds_the_list(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        total = main(app).model.total
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert main(app).model.total == total
        assert app.screen.query_one(VaultSidebar).option_count == len(app.discovered) + 1


async def test_mouse_click_moves_the_cursor_and_double_click_opens(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.click(MemoryTable, offset=(5, 4))
        assert table(app).cursor == 3
        await pilot.click(MemoryTable, offset=(5, 4))
        assert isinstance(app.focused, MemoryDetail)
        # The "All vaults" option is several lines tall; the first vault follows it.
        for y in range(1, 12):
            await pilot.click(OptionList, offset=(2, y))
            if main(app).model.scope is not None:
                break
        assert main(app).model.scope == app.summaries()[0].root
        await pilot.click(OptionList, offset=(2, 0))
        assert main(app).model.scope is None


async def test_zoom_the_detail_pane_and_back(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter", "z")
        detail = app.screen.query_one(MemoryDetail)
        assert app.screen.maximized is detail
        assert detail.size.height > SIZE[1] // 2
        await pilot.press("z")
        assert app.screen.maximized is None
        await pilot.press("z", "escape")
        assert app.screen.maximized is None and isinstance(app.focused, MemoryDetail)


async def test_triage_order_toggle(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TriageScreen) and screen.order == "expiry"
        await pilot.press("o")
        await settle(pilot)
        assert screen.order == "strength"
        lines = screen.query_one(TriageTable).lines
        group: list[float] = []
        for line in lines:
            if line.row is None:
                assert group == sorted(group)
                group = []
            else:
                group.append(line.row.strength if line.row.strength is not None else 2.0)
        assert group == sorted(group)


async def test_wide_terminal_puts_the_detail_beside_the_list(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=(180, 45)) as pilot:
        await settle(pilot)
        t = table(app)
        detail = app.screen.query_one(MemoryDetail)
        assert detail.region.x > t.region.x and detail.region.y < t.region.bottom
        assert detail.size.height > t.size.height // 2
