"""The app on Project Ocean's second generation: its rows, the decay run with write-backs,
the references run, and the undo of each (Pilot, on a copy of our gen-2 vault)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.pilot import Pilot

from memlens.core.write.journal import read_journal
from memlens.tui.app import MemlensApp
from memlens.tui.maintenance_runs import run_commands
from memlens.tui.screens.main import MainScreen
from memlens.tui.screens.run_preview import RunPreviewScreen
from memlens.tui.widgets.memory_table import MemoryTable

from .conftest import AS_OF, SIZE, settle

GEN2 = Path(__file__).resolve().parents[1] / "fixtures" / ".second-generation"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    dest = tmp_path / "gen2"
    shutil.copytree(GEN2 / "project-ocean-gen2", dest)
    return dest


def _bytes(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*.md"))
        if ".memlens" not in p.parts
    }


async def _run(pilot: Pilot[None], app: MemlensApp, name: str) -> RunPreviewScreen:
    run_commands(app)[name]()
    await settle(pilot)
    preview = app.screen
    assert isinstance(preview, RunPreviewScreen) and preview.preview is not None
    return preview


async def test_rows_show_the_second_generation_statuses(vault: Path) -> None:
    app = MemlensApp([vault], as_of=AS_OF, live_reload=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main = app.main_screen()
        assert isinstance(main, MainScreen)
        table = main.query_one(MemoryTable)
        assert table.row_count() == 17 + 4  # valid, and the invalid files shown as such
        # The review file is selectable and its row carries the gen-2 status.
        assert main.select_memory(vault, "watchtower/obs-2026-10-20-001")
        await settle(pilot)
        row = table.current_row()
        assert row is not None and row.id == "watchtower/obs-2026-10-20-001"
        assert (row.status, row.health) == ("review", "fading")
        assert main.select_memory(vault, "shield/obs-2026-10-13-001")
        await settle(pilot)
        row = table.current_row()
        assert row is not None and (row.status, row.health) == ("extend", "active")


async def test_decay_and_references_runs_apply_and_undo(vault: Path) -> None:
    before = _bytes(vault)
    app = MemlensApp([vault], as_of=AS_OF, live_reload=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        preview = await _run(pilot, app, "Run: Project Ocean decay (archive expired)")
        labels = [i.label for i in preview.preview.items if not i.refused]  # type: ignore[union-attr]
        assert len(labels) == 6  # 3 write-backs (2 penalties, 1 extension) + 3 archives
        assert _bytes(vault) == before, "nothing before Apply"
        await pilot.press("y")
        await settle(pilot)
        assert preview.outcome is not None and len(preview.outcome.applied) == 1
        text = (vault / "agents/shield/memory/vault/obs-2026-10-13-001.md").read_text()
        assert "max_age: 45d\n" in text
        assert (vault / "agents/scout/memory/archive/obs-2026-11-10-001.md").exists()
        await pilot.press("escape")
        await settle(pilot)

        preview = await _run(pilot, app, "Run: Project Ocean references (refs, ref_by, importance)")
        assert len(preview.preview.steps) == 1  # type: ignore[union-attr]
        await pilot.press("y")
        await settle(pilot)
        text = (vault / "agents/captain/memory/vault/obs-2026-11-01-001.md").read_text()
        assert "refs: 3\n" in text and "importance: 0.95\n" in text
        await pilot.press("escape")
        await settle(pilot)
        assert [e.get("action") for e in read_journal(vault)] == ["decay", "ref"]
        # A second references run finds nothing to do.
        preview = await _run(pilot, app, "Run: Project Ocean references (refs, ref_by, importance)")
        assert preview.preview.steps == []  # type: ignore[union-attr]
        await pilot.press("escape")
        await settle(pilot)
        # Undo twice (u in the list) restores every byte.
        await pilot.press("u")
        await settle(pilot)
        await pilot.press("u")
        await settle(pilot)
    assert _bytes(vault) == before
