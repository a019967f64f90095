"""The "what the agent sees" pane: shown by key 8, recomputed after a pin, prompt recall."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, Static

from memlens.core.formats.preview_model import PreviewEntry
from memlens.tui.app import MemlensApp
from memlens.tui.screens.preview import PreviewScreen

from .conftest import AS_OF, SIZE, settle
from .test_actions_ui import COGNITIVE_ID, press, select


def _core_entries(screen: PreviewScreen) -> list[PreviewEntry]:
    vault = next(p for p in screen.previews if p.sections and p.sections[0].key == "core")
    return list(vault.sections[0].entries)


def _body(screen: PreviewScreen) -> str:
    return str(screen.query_one("#preview-body", Static).render())


async def test_the_pane_shows_core_md_and_follows_a_pin(own_fixtures_copy: Path) -> None:
    app = MemlensApp([own_fixtures_copy], as_of=AS_OF, live_reload=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "8")
        screen = app.screen
        assert isinstance(screen, PreviewScreen)
        before = {e.id: e for e in _core_entries(screen)}
        assert before[COGNITIVE_ID].score is not None and before[COGNITIVE_ID].score < 1
        body = _body(screen)
        assert "CORE.md as regenerated" in body
        assert "Unblocked the stuck card-pack queue in Redis" in body
        assert "█" in body  # the budget bar

        await press(pilot, "1")
        await select(pilot, "cognitive-memory", COGNITIVE_ID)
        version = app.catalog_version
        await press(pilot, "p")  # pinned: moved to vault/, score 999
        assert app.catalog_version > version
        await press(pilot, "8")
        await settle(pilot)
        assert app.screen is screen
        solutions = [
            e for e in _core_entries(screen) if e.details["section"] == "Critical Solutions"
        ]
        assert solutions[0].id == COGNITIVE_ID
        assert solutions[0].score == 999.0
        assert solutions[0].path.startswith("vault/")


async def test_a_prompt_runs_the_recall_steps(own_fixtures_copy: Path) -> None:
    app = MemlensApp([own_fixtures_copy], as_of=AS_OF, live_reload=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "8")
        screen = app.screen
        assert isinstance(screen, PreviewScreen)
        recall_before = sum(p.tokens("recall") for p in screen.previews)
        assert recall_before == 0
        await press(pilot, "slash", *"carrier contract rates")
        screen.query_one("#preview-agent", Input).value = "courier"
        await press(pilot, "enter")
        assert screen.query_one("#preview-prompt", Input).value == "carrier contract rates"
        assert [p.format for p in screen.previews] == ["project-ocean"]
        recall = screen.previews[0].sections[0]
        assert recall.agent == "courier" and 0 < len(recall.entries) <= 3
        assert "courier: recall step" in _body(screen)


async def test_the_palette_offers_the_pane(own_fixtures_copy: Path) -> None:
    app = MemlensApp([own_fixtures_copy], as_of=AS_OF, live_reload=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        cmd = next(c for c in app.palette_commands() if c.name == "Show what the agent sees")
        assert cmd.help == "key 8"


async def test_the_showing_pane_follows_a_changed_file(own_fixtures_copy: Path) -> None:
    app = MemlensApp([own_fixtures_copy], as_of=AS_OF, live_reload=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "8")
        screen = app.screen
        assert isinstance(screen, PreviewScreen)

        def loaded_titles() -> list[str]:
            dream = next(p for p in screen.previews if p.sections[0].key == "observations")
            return [e.title for e in dream.sections[0].entries]

        before = loaded_titles()
        obs = own_fixtures_copy / "dream-cycle" / "observations.md"
        with obs.open("a", encoding="utf-8") as f:
            f.write("\n## Added while the pane shows\nA new section.\n")
        app.refresh_paths([obs])
        await settle(pilot)
        assert loaded_titles() == [*before, "Added while the pane shows"]
        assert "Added while the pane shows" in _body(screen)
