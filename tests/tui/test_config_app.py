"""Settings in the app: theme, keymap, as_of, cache, tracking, editor; clipboard, NO_COLOR,
the first-run hint and the palette covering every key."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path
from types import MappingProxyType

import pytest
from textual.binding import Binding

from memlens.core.config import Config, parse_config
from memlens.tui.app import MemlensApp, binding_ids
from memlens.tui.hints import HINT_MARKER, STATE_DIR_ENV, state_dir
from memlens.tui.screens.episodes import EpisodesScreen
from memlens.tui.screens.main import MainScreen
from memlens.tui.screens.triage import TriageScreen
from memlens.tui.widgets.hint_bar import HintBar
from memlens.tui.widgets.memory_table import MemoryTable

from .conftest import AS_OF, SIZE, settle


def notices(app: MemlensApp) -> list[str]:
    return [n.message for n in app._notifications]


def make(own_fixtures_dir: Path, config: Config | None = None, **kw: object) -> MemlensApp:
    kw.setdefault("as_of", AS_OF)
    kw.setdefault("live_reload", False)
    return MemlensApp([own_fixtures_dir], config=config, **kw)


# ------------------------------------------------------------------ theme


async def test_theme_from_config(own_fixtures_dir: Path) -> None:
    app = make(own_fixtures_dir, Config(theme="nord"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.theme == "nord"
        assert not [e for e in app.errors if e[0] == "config"]


async def test_unknown_theme_warns_and_keeps_the_default(own_fixtures_dir: Path) -> None:
    config, warnings = parse_config({"theme": "no-such-theme"})
    assert warnings == []  # only the app knows which themes exist
    app = make(own_fixtures_dir, config)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.theme != "no-such-theme"
        assert any("theme: unknown theme 'no-such-theme'" in n for n in notices(app))
        assert any("no-such-theme" in message for title, message in app.errors if title == "config")


# ------------------------------------------------------------------ keymap


async def test_remapped_key_runs_its_binding(own_fixtures_dir: Path) -> None:
    app = make(own_fixtures_dir, Config(keymap=MappingProxyType({"app.triage": "t"})))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        await pilot.press("2")  # the old key no longer does it
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        await pilot.press("t")
        await settle(pilot)
        assert isinstance(app.screen, TriageScreen)


async def test_remapped_screen_key(own_fixtures_dir: Path) -> None:
    keymap = MappingProxyType({"main.sort": "o"})
    app = make(own_fixtures_dir, Config(keymap=keymap))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        assert app.screen.model.sort_column == "natural"
        await pilot.press("o")
        await settle(pilot)
        assert app.screen.model.sort_column == "title"


async def test_unknown_binding_ids_warn_and_the_rest_applies(own_fixtures_dir: Path) -> None:
    keymap = MappingProxyType({"app.nope": "x", "app.episodes": "e,ctrl+e"})
    app = make(own_fixtures_dir, Config(keymap=keymap))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert any("keymap.app.nope: no binding with this id" in n for n in notices(app))
        await pilot.press("ctrl+e")
        await settle(pilot)
        assert isinstance(app.screen, EpisodesScreen)


def test_binding_ids_cover_every_screen() -> None:
    ids = binding_ids()
    for expected in ("app.quit", "app.episodes", "main.sort", "episodes.raw", "list.down"):
        assert expected in ids


# ------------------------------------------------------------------ other settings


async def test_as_of_tracking_editor_and_cache_settings(
    own_fixtures_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A copy: with tracking on, a row shown for a second (a slow machine) records an
    # access, which must never land in the repository's own test vaults.
    monkeypatch.setenv("MEMLENS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("EDITOR", "nano -w")
    config = Config(as_of=date(2026, 12, 1), track_access=True, cache=False)
    app = MemlensApp([own_fixtures_copy], config=config, live_reload=False)
    assert app.as_of == date(2026, 12, 1)
    assert MemlensApp([own_fixtures_copy], as_of=AS_OF, config=config).as_of == AS_OF
    assert app.config.track_access is True
    assert app.config.editor_command() == ["nano", "-w"]
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.loaded
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())

    defaults = MemlensApp([own_fixtures_copy], as_of=AS_OF, live_reload=False)
    assert defaults.config.track_access is False
    async with defaults.run_test(size=SIZE) as pilot:
        await settle(pilot)
    assert any((tmp_path / "cache").iterdir())  # the persistent cache is on by default


# ------------------------------------------------------------------ clipboard


async def test_y_and_Y_copy_the_id_and_the_path(own_fixtures_dir: Path) -> None:
    app = make(own_fixtures_dir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        row = app.screen.query_one(MemoryTable).current_row()
        assert row is not None and row.memory is not None
        await pilot.press("y")
        assert app.clipboard == row.memory.id
        assert f"Copied id: {row.memory.id}" in notices(app)
        await pilot.press("Y")
        assert app.clipboard == str(row.memory.abs_path)
        assert Path(app.clipboard).is_file()
        assert f"Copied path: {row.memory.abs_path}" in notices(app)


async def test_copy_shows_markup_literally(own_fixtures_dir: Path) -> None:
    app = make(own_fixtures_dir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"vite build fails", "enter")
        await settle(pilot)
        row = app.screen.query_one(MemoryTable).current_row()
        assert row is not None
        await pilot.press("y")
        note = next(n for n in app._notifications if n.message.startswith("Copied id"))
        assert note.markup is False


async def test_copy_on_the_episodes_screen(own_fixtures_dir: Path) -> None:
    app = make(own_fixtures_dir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("6")
        await settle(pilot)
        assert isinstance(app.screen, EpisodesScreen)
        memory = app.screen.current_memory()
        assert memory is not None
        await pilot.press("y")
        assert app.clipboard == memory.id


async def test_copy_on_the_search_and_graph_panes(own_fixtures_dir: Path) -> None:
    """y / Y copy the highlighted hit's and the graph cursor's memory (each pane says which)."""
    from memlens.tui.screens.graph import GraphScreen
    from memlens.tui.screens.search import SearchScreen

    app = make(own_fixtures_dir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        await pilot.press(*"build", "enter")  # enter: from the query to the hits
        await settle(pilot)
        assert isinstance(app.screen, SearchScreen)
        hit = app.screen.current_memory()
        assert hit is not None
        await pilot.press("Y")
        assert app.clipboard == str(hit.abs_path)
        await pilot.press("5")
        await settle(pilot)
        assert isinstance(app.screen, GraphScreen)
        node = app.screen.current_memory()
        assert node is not None
        await pilot.press("y")
        assert app.clipboard == node.id
        main = app.main_screen()
        assert main is not None and main.model.find(str(node.vault_root), node.id) is not None


# ------------------------------------------------------------------ NO_COLOR

#: Colours of the SVG window frame (rich's export template), not of the app.
FRAME_COLOURS = {"ff5f57", "febc2e", "28c840", "c5c8c6"}


def coloured(svg: str) -> set[str]:
    found = set(re.findall(r'(?:fill|color)[:=]\s*"?#([0-9a-fA-F]{6})', svg))
    return {
        c for c in found if len({c[0:2], c[2:4], c[4:6]}) > 1 and c.lower() not in FRAME_COLOURS
    }


async def test_no_color_renders_without_colour(
    own_fixtures_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = make(own_fixtures_dir)
    async with plain.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert coloured(plain.export_screenshot())  # the check can see colour

    monkeypatch.setenv("NO_COLOR", "1")
    app = make(own_fixtures_dir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.no_color
        assert coloured(app.export_screenshot()) == set()
        await pilot.press("2")
        await settle(pilot)
        assert coloured(app.export_screenshot()) == set()


# ------------------------------------------------------------------ first-run hint


async def test_first_run_hint_is_shown_once(own_fixtures_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "state"
    app = make(own_fixtures_dir, state_folder=folder)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        bars = app.screen.query(HintBar)
        assert len(bars) == 1
        assert "ctrl+p" in str(bars.first().render())
        assert (folder / HINT_MARKER).exists()
        await pilot.click(HintBar)
        await settle(pilot)
        assert not app.screen.query(HintBar)

    again = make(own_fixtures_dir, state_folder=folder)
    async with again.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not again.screen.query(HintBar)


async def test_hint_goes_with_help_and_follows_the_env(
    own_fixtures_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(STATE_DIR_ENV, str(tmp_path / "env-state"))
    assert state_dir() == tmp_path / "env-state"
    app = make(own_fixtures_dir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main = app.main_screen()
        assert main is not None and main.query(HintBar)
        await pilot.press("question_mark")
        await settle(pilot)
        assert not main.query(HintBar)
    assert (tmp_path / "env-state" / HINT_MARKER).exists()


# ------------------------------------------------------------------ palette


async def test_every_key_of_every_screen_is_in_the_palette(own_fixtures_dir: Path) -> None:
    app = make(own_fixtures_dir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for mode, key in (("memories", "1"), ("triage", "2"), ("problems", "3"), ("episodes", "6")):
            await pilot.press(key)
            await settle(pilot)
            screen = app.screen
            names = {c.name for c in app.palette_commands(screen)}
            expected = [
                b
                for b in (*type(screen).BINDINGS, *MemlensApp.BINDINGS)
                if isinstance(b, Binding) and b.description
            ]
            if isinstance(screen, MainScreen):
                focused = screen.query_one(MemoryTable)
                expected += [
                    b for b in type(focused).BINDINGS if isinstance(b, Binding) and b.description
                ]
            static = {
                "app.memories": "Show memories",
                "app.triage": "Show decay triage",
                "app.problems": "Show problems",
                "app.search": "Search memories",
                "app.graph": "Show relation graph",
                "app.episodes": "Show episodes timeline",
                "app.help": "Help: keys",
                "app.reload": "Reload vaults",
                "app.copy_id": "Copy memory id",
                "app.copy_path": "Copy memory file path",
                "app.quit": "Quit",
            }
            for b in expected:
                name = static.get(b.id or "", b.tooltip or b.description)
                assert name in names, f"{mode}: {b.id} ({name}) is not in the palette"


async def test_a_screen_key_runs_from_the_palette(own_fixtures_dir: Path) -> None:
    app = make(own_fixtures_dir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main = app.screen
        assert isinstance(main, MainScreen)
        cmd = next(c for c in app.palette_commands(main) if c.name == "Sort by the next column")
        assert cmd.help == "key s"
        result = cmd.run()
        if hasattr(result, "__await__"):
            await result
        await settle(pilot)
        assert main.model.sort_column == "title"


# ------------------------------------------------------------------ from the command line


def test_the_cli_hands_the_config_and_its_warnings_to_the_app(
    own_fixtures_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    import memlens.tui.app as app_module
    from memlens.tui.cli.main import cli

    config_file = tmp_path / "config.toml"
    config_file.write_text(
        'theme = 3\ntrack_access = true\nas_of = "2026-12-01"\n[keymap]\n"app.quit" = "ctrl+q"\n',
        encoding="utf-8",
    )
    seen: dict[str, object] = {}

    def fake_run_app(paths: list[Path], as_of: date, config: Config, warnings: list[str]) -> None:
        seen.update(paths=paths, as_of=as_of, config=config, warnings=warnings)

    monkeypatch.setattr(app_module, "run_app", fake_run_app)
    result = CliRunner().invoke(cli, ["--config", str(config_file), str(own_fixtures_dir)])
    assert result.exit_code == 0, result.output
    config = seen["config"]
    assert isinstance(config, Config)
    assert config.track_access is True and dict(config.keymap) == {"app.quit": "ctrl+q"}
    assert seen["as_of"] == date(2026, 12, 1)
    warnings = seen["warnings"]
    assert isinstance(warnings, list) and len(warnings) == 1 and "theme" in warnings[0]


async def test_config_file_warnings_are_shown_in_the_app(own_fixtures_dir: Path) -> None:
    app = MemlensApp(
        [own_fixtures_dir],
        as_of=AS_OF,
        live_reload=False,
        config_warnings=["config.toml: theme: expected a string, got 3"],
    )
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "config.toml: theme: expected a string, got 3" in notices(app)
        assert ("config", "config.toml: theme: expected a string, got 3") in app.errors
