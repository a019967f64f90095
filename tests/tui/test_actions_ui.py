"""The app's actions on copies of the fixtures: keys, forms, bulk, undo, conflicts, runs.

Every test drives the app with keys (Pilot) and then checks the files on
disk.  Live reload is off so only the app's own refresh-after-write is at
work (and an external edit stays unseen until the action trips over it).
"""

from __future__ import annotations

import json
import shutil
import stat
from contextlib import nullcontext
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from memlens.core.formats.cognitive_memory.runs import render_core
from memlens.core.listing import MemoryRow
from memlens.core.write.journal import read_journal
from memlens.tui.action_common import memory_label
from memlens.tui.app import MemlensApp
from memlens.tui.maintenance_runs import run_commands
from memlens.tui.screens.confirm import ConfirmScreen
from memlens.tui.screens.conflict import ConflictScreen
from memlens.tui.screens.edit_metadata import EditMetadataScreen
from memlens.tui.screens.main import MainScreen
from memlens.tui.screens.promote import PromoteScreen
from memlens.tui.screens.run_preview import RunPreviewScreen
from memlens.tui.widgets.detail import BodyEditor, MemoryDetail
from memlens.tui.widgets.memory_table import MemoryTable

from .conftest import AS_OF, SIZE, settle

COGNITIVE_ID = "b83f0d27-9c14-4e6a-a5d2-71e9c3f04b88"
COGNITIVE_FILE = "unblocked-the-stuck-card-pack-queue-in-redis-b83f0d.md"
DEMO = Path(__file__).resolve().parents[2] / "core" / "demo_vaults"
OCEAN_A = "ledger/obs-2026-09-04-001"
OCEAN_B = "ledger/obs-2026-10-24-002"
OCEAN_ARCHIVED = "ledger/obs-2026-08-02-001"


def quiet_app(root: Path) -> MemlensApp:
    """The app on a fixture copy, without the file watcher."""
    return MemlensApp([root], as_of=AS_OF, live_reload=False)


def main_of(app: MemlensApp) -> MainScreen:
    main = app.main_screen()
    assert main is not None
    return main


def root_of(app: MemlensApp, fmt: str) -> Path:
    root: Path = next(v.root for v, _rows in app.loaded if v.format == fmt)
    return root


def told(app: MemlensApp) -> list[str]:
    return [text for _severity, text in getattr(app, "action_log", [])]


async def select(pilot: Pilot[None], fmt: str, memory_id: str) -> MemoryRow:
    app = pilot.app
    assert isinstance(app, MemlensApp)
    main = main_of(app)
    assert main.select_memory(root_of(app, fmt), memory_id)
    await settle(pilot)
    row = main.query_one(MemoryTable).current_row()
    assert row is not None and row.id == memory_id
    return row


async def press(pilot: Pilot[None], *keys: str) -> None:
    await pilot.press(*keys)
    await settle(pilot)


def journal_actions(root: Path) -> list[str]:
    return [str(e.get("action")) for e in read_journal(root)]


# --------------------------------------------------------------------------- pin, archive, restore


async def test_p_pins_and_unpins_a_cognitive_memory(own_fixtures_copy: Path) -> None:
    app = quiet_app(own_fixtures_copy)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = root_of(app, "cognitive-memory")
        graph_file = root / "graph" / "solutions" / COGNITIVE_FILE
        before = graph_file.read_bytes()
        await select(pilot, "cognitive-memory", COGNITIVE_ID)

        await press(pilot, "p")
        pinned = root / "vault" / COGNITIVE_FILE
        assert pinned.read_bytes() == before and not graph_file.exists()
        row = main_of(app).query_one(MemoryTable).current_row()
        assert row is not None and row.id == COGNITIVE_ID and row.memory is not None
        assert row.memory.pinned, "the list shows the re-read memory"

        await press(pilot, "p")
        assert graph_file.read_bytes() == before and not pinned.exists()
        assert journal_actions(root) == ["pin", "unpin"]


async def test_a_archives_and_r_restores(own_fixtures_copy: Path) -> None:
    app = quiet_app(own_fixtures_copy)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = root_of(app, "project-ocean")
        live = root / "agents/ledger/memory/vault/obs-2026-09-04-001.md"
        archived = root / "agents/ledger/memory/archive/obs-2026-09-04-001.md"
        data = live.read_bytes()
        await select(pilot, "project-ocean", OCEAN_A)

        await press(pilot, "a")
        assert archived.read_bytes() == data and not live.exists()
        await press(pilot, "r")
        assert live.read_bytes() == data and not archived.exists()

        # One that was archived before memlens opened the vault.
        old = root / "agents/ledger/memory/archive/obs-2026-08-02-001.md"
        old_data = old.read_bytes()
        await select(pilot, "project-ocean", OCEAN_ARCHIVED)
        await press(pilot, "r")
        assert (root / "agents/ledger/memory/vault/obs-2026-08-02-001.md").read_bytes() == old_data
        assert not old.exists()
        # Restoring what is live is refused, with the file named, and nothing changes.
        await press(pilot, "r")
        assert any("restore refused" in t and "obs-2026-08-02-001" in t for t in told(app))
        assert journal_actions(root) == ["archive", "restore", "restore"]


async def test_u_undoes_the_last_action_of_the_vault(own_fixtures_copy: Path) -> None:
    app = quiet_app(own_fixtures_copy)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = root_of(app, "project-ocean")
        live = root / "agents/ledger/memory/vault/obs-2026-09-04-001.md"
        data = live.read_bytes()
        await select(pilot, "project-ocean", OCEAN_A)
        await press(pilot, "p")
        assert b"pinned: true" in live.read_bytes()

        await press(pilot, "u")
        assert live.read_bytes() == data
        assert any(t.startswith("Undid: pin") for t in told(app))
        row = main_of(app).query_one(MemoryTable).current_row()
        assert row is not None and row.memory is not None and not row.memory.pinned

        await press(pilot, "u")
        assert any("Nothing to undo" in t for t in told(app))
        assert live.read_bytes() == data


# --------------------------------------------------------------------------- promote


async def test_P_promotes_with_the_format_options(own_fixtures_copy: Path) -> None:
    app = quiet_app(own_fixtures_copy)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = root_of(app, "cognitive-memory")
        path = root / "graph" / "solutions" / COGNITIVE_FILE
        before = path.read_text(encoding="utf-8")
        await select(pilot, "cognitive-memory", COGNITIVE_ID)

        await press(pilot, "P")
        form = app.screen
        assert isinstance(form, PromoteScreen)
        assert form.query_one("#opt-0-type", Input).value == "insight"
        # A lower importance is refused in the form; nothing is written.
        form.query_one("#opt-0-importance", Input).value = "0.1"
        await press(pilot, "ctrl+s")
        assert isinstance(app.screen, PromoteScreen)
        assert "lower than the current" in str(form.query_one("#promote-status").render())
        assert path.read_text(encoding="utf-8") == before

        form.query_one("#opt-0-importance", Input).value = "0.95"
        await press(pilot, "ctrl+s")
        assert isinstance(app.screen, MainScreen)
        after = path.read_text(encoding="utf-8")
        assert "type: insight" in after and "importance: 0.95" in after
        assert journal_actions(root) == ["promote"]


async def test_marked_observations_promote_to_one_comprehension(tmp_path: Path) -> None:
    # The bundled demo vault stands in for observation-v1's concrete observations.
    shutil.copytree(DEMO / "observation-v1", tmp_path / "observation-v1")
    app = quiet_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = root_of(app, "observation-v1")
        before = {p.name for p in (root / "comprehension").glob("*.md")}
        for obs in ("obs-101", "obs-102"):
            await select(pilot, "observation-v1", obs)
            await press(pilot, "space")
        assert len(main_of(app).marks) == 2

        await press(pilot, "P")
        form = app.screen
        assert isinstance(form, PromoteScreen)
        form.query_one("#opt-0-topic", Input).value = "Login endpoint moved"
        await press(pilot, "ctrl+s")
        confirm = app.screen
        assert isinstance(confirm, ConfirmScreen)
        assert [i.refused for i in confirm.items] == [False]
        assert "obs-101, obs-102" in confirm.items[0].label
        assert {p.name for p in (root / "comprehension").glob("*.md")} == before

        await press(pilot, "y")
        new = {p.name for p in (root / "comprehension").glob("*.md")} - before
        assert len(new) == 1
        text = (root / "comprehension" / new.pop()).read_text(encoding="utf-8")
        assert "Login endpoint moved" in text and "obs-101" in text and "obs-102" in text
        assert not main_of(app).marks


# --------------------------------------------------------------------------- metadata


async def test_m_edits_metadata_refused_value_then_valid(own_fixtures_copy: Path) -> None:
    app = quiet_app(own_fixtures_copy)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = root_of(app, "cognitive-memory")
        path = root / "graph" / "solutions" / COGNITIVE_FILE
        before = path.read_text(encoding="utf-8").splitlines()
        await select(pilot, "cognitive-memory", COGNITIVE_ID)

        await press(pilot, "m")
        form = app.screen
        assert isinstance(form, EditMetadataScreen)
        index = next(i for i, r in enumerate(form.rows) if r.key == "importance")
        field = form.query_one(f"#field-{index}", Input)
        field.focus()
        field.value = ""
        await pilot.press(*"7")
        await pilot.pause(0.3)
        await settle(pilot)
        error = form.field_errors().get("importance", "")
        assert "importance" in error and "7" in error
        assert "importance" in str(form.query_one(f"#msg-{index}").render())
        await press(pilot, "ctrl+s")
        assert isinstance(app.screen, EditMetadataScreen), "a refused save keeps the form"
        assert path.read_text(encoding="utf-8").splitlines() == before

        field.value = ""
        await pilot.press(*"0.9")
        await pilot.pause(0.3)
        await settle(pilot)
        assert form.field_errors() == {}
        await press(pilot, "ctrl+s")
        assert isinstance(app.screen, MainScreen)
        after = path.read_text(encoding="utf-8").splitlines()
        changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
        assert [b for _a, b in changed] == ["importance: 0.9", *[b for _a, b in changed[1:]]]
        assert all(b.startswith("updated:") for _a, b in changed[1:])
        assert journal_actions(root) == ["set"]


async def test_metadata_cancel_writes_nothing(own_fixtures_copy: Path) -> None:
    app = quiet_app(own_fixtures_copy)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = root_of(app, "project-ocean")
        path = root / "agents/ledger/memory/vault/obs-2026-09-04-001.md"
        data = path.read_bytes()
        await select(pilot, "project-ocean", OCEAN_A)
        await press(pilot, "m")
        form = app.screen
        assert isinstance(form, EditMetadataScreen)
        form.query_one("#field-0", Input).value = "[a, b]"
        await press(pilot, "escape")
        assert isinstance(app.screen, MainScreen)
        assert path.read_bytes() == data and not journal_actions(root)


# --------------------------------------------------------------------------- body editing


async def test_E_edits_the_body_inline(own_fixtures_copy: Path) -> None:
    app = quiet_app(own_fixtures_copy)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = root_of(app, "project-ocean")
        path = root / "agents/ledger/memory/vault/obs-2026-09-04-001.md"
        data = path.read_bytes()
        await select(pilot, "project-ocean", OCEAN_A)

        # esc cancels: nothing written.
        await press(pilot, "E")
        detail = main_of(app).query_one(MemoryDetail)
        assert detail.editing is not None
        assert isinstance(app.focused, BodyEditor)
        assert detail.editing.key in app.editing, "the app announces outside changes"
        await press(pilot, *"Draft ")
        await press(pilot, "escape")
        assert detail.editing is None and path.read_bytes() == data
        assert not app.editing

        await press(pilot, "E")
        await press(pilot, *"Checked: ")
        await press(pilot, "ctrl+s")
        assert detail.editing is None
        text = path.read_text(encoding="utf-8")
        head, _sep, body = text.partition("\n---\n")
        assert body.lstrip("\n").startswith("Checked: ")
        assert data.decode("utf-8").partition("\n---\n")[0] == head, "frontmatter untouched"
        row = main_of(app).query_one(MemoryTable).current_row()
        assert row is not None and row.memory is not None
        assert row.memory.body.lstrip().startswith("Checked: ")


async def test_enter_on_the_detail_pane_edits_the_body(own_fixtures_copy: Path) -> None:
    app = quiet_app(own_fixtures_copy)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await select(pilot, "project-ocean", OCEAN_A)
        await press(pilot, "enter")  # open the row: focus goes to the detail pane
        assert isinstance(app.focused, MemoryDetail)
        await press(pilot, "enter")
        assert isinstance(app.focused, BodyEditor)
        await press(pilot, "escape")
        assert main_of(app).query_one(MemoryDetail).editing is None


# --------------------------------------------------------------------------- $EDITOR


@pytest.fixture
def fake_editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """$EDITOR is a script that appends a line to the file it is given."""
    script = tmp_path / "fake-editor.sh"
    script.write_text('#!/bin/sh\nprintf "\\nAppended by the editor.\\n" >> "$1"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", str(script))
    return script


async def test_e_runs_the_editor_and_rereads_the_file(
    own_fixtures_copy: Path, fake_editor: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = quiet_app(own_fixtures_copy)
    # The headless test driver cannot hand the terminal over; nothing to hand.
    monkeypatch.setattr(app, "suspend", nullcontext)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = root_of(app, "project-ocean")
        path = root / "agents/ledger/memory/vault/obs-2026-09-04-001.md"
        await select(pilot, "project-ocean", OCEAN_A)
        await press(pilot, "e")
        assert path.read_text(encoding="utf-8").endswith("\nAppended by the editor.\n")
        row = main_of(app).query_one(MemoryTable).current_row()
        assert row is not None and row.memory is not None
        assert "Appended by the editor." in row.memory.body
        assert not journal_actions(root), "an outside editor is not a memlens action"


async def test_e_in_the_browser_says_it_is_not_available(
    own_fixtures_copy: Path, fake_editor: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = quiet_app(own_fixtures_copy)
    monkeypatch.setattr(MemlensApp, "is_web", property(lambda _self: True))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = root_of(app, "project-ocean")
        path = root / "agents/ledger/memory/vault/obs-2026-09-04-001.md"
        data = path.read_bytes()
        await select(pilot, "project-ocean", OCEAN_A)
        await press(pilot, "e")
        assert path.read_bytes() == data
        assert any("not available in the browser" in t for t in told(app))


# --------------------------------------------------------------------------- marks and bulk


async def test_marks_and_bulk_archive_with_confirmation(own_fixtures_copy: Path) -> None:
    app = quiet_app(own_fixtures_copy)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = root_of(app, "project-ocean")
        vault = root / "agents/ledger/memory/vault"
        files = [vault / "obs-2026-09-04-001.md", vault / "obs-2026-10-24-002.md"]
        data = [f.read_bytes() for f in files]
        for memory_id in (OCEAN_A, OCEAN_B):
            await select(pilot, "project-ocean", memory_id)
            await press(pilot, "space")
        main = main_of(app)
        assert len(main.marks) == 2
        assert "2 marked" in str(main.query_one("#topbar").render())

        # Cancel writes nothing and keeps the marks.
        await press(pilot, "a")
        confirm = app.screen
        assert isinstance(confirm, ConfirmScreen)
        assert [i.refused for i in confirm.items] == [False, False]
        assert any("archive" in line for i in confirm.items for line in i.lines)
        await press(pilot, "escape")
        assert [f.read_bytes() for f in files] == data
        assert len(main.marks) == 2 and not journal_actions(root)

        await press(pilot, "a")
        assert isinstance(app.screen, ConfirmScreen)
        await press(pilot, "y")
        archive = root / "agents/ledger/memory/archive"
        assert [(archive / f.name).read_bytes() for f in files] == data
        assert not any(f.exists() for f in files)
        assert not main.marks
        # One vault, one transaction: the bulk action is one entry, one undo.
        assert journal_actions(root) == ["archive"]


async def test_mark_all_matching_and_clear(own_fixtures_copy: Path) -> None:
    app = quiet_app(own_fixtures_copy)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main = main_of(app)
        await press(pilot, "slash", *"id:ledger/", "enter")
        shown = [r.key for r in main.model if r.memory is not None]
        assert shown and all("ledger/" in key[1] for key in shown)
        await press(pilot, "asterisk")
        assert main.marks == set(shown)
        # A bulk pin lists each marked memory; pinned or not, nothing is written yet.
        await press(pilot, "p")
        assert isinstance(app.screen, ConfirmScreen)
        assert len(app.screen.items) == len(shown)
        await press(pilot, "escape")
        await press(pilot, "x")
        assert not main.marks


# --------------------------------------------------------------------------- conflicts


def _touch_body(path: Path, line: str) -> None:
    with path.open("a", encoding="utf-8") as f:
        f.write(f"\n{line}\n")


async def test_conflict_modal_diff_then_reload(own_fixtures_copy: Path) -> None:
    app = quiet_app(own_fixtures_copy)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = root_of(app, "cognitive-memory")
        path = root / "graph" / "solutions" / COGNITIVE_FILE
        await select(pilot, "cognitive-memory", COGNITIVE_ID)
        _touch_body(path, "Written by another agent.")
        changed = path.read_bytes()

        await press(pilot, "p")
        modal = app.screen
        assert isinstance(modal, ConflictScreen)
        assert path.read_bytes() == changed, "nothing written on a conflict"
        await press(pilot, "d")
        assert modal.diff_lines is not None
        assert "+Written by another agent." in modal.diff_lines

        await press(pilot, "r")
        assert isinstance(app.screen, MainScreen)
        row = main_of(app).query_one(MemoryTable).current_row()
        assert row is not None and row.memory is not None
        assert "Written by another agent." in row.memory.body
        assert path.read_bytes() == changed and not journal_actions(root)
        # After the reload the action goes through.
        await press(pilot, "p")
        assert (root / "vault" / COGNITIVE_FILE).read_bytes() == changed


async def test_conflict_overwrite_replans_on_the_disk_content(own_fixtures_copy: Path) -> None:
    app = quiet_app(own_fixtures_copy)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = root_of(app, "project-ocean")
        path = root / "agents/ledger/memory/vault/obs-2026-09-04-001.md"
        await select(pilot, "project-ocean", OCEAN_A)
        _touch_body(path, "Another agent's note.")

        await press(pilot, "a")
        assert isinstance(app.screen, ConflictScreen)
        await press(pilot, "o")
        archived = root / "agents/ledger/memory/archive/obs-2026-09-04-001.md"
        assert not path.exists()
        assert "Another agent's note." in archived.read_text(encoding="utf-8")
        assert journal_actions(root) == ["archive"]


async def test_conflict_cancel_leaves_everything(own_fixtures_copy: Path) -> None:
    app = quiet_app(own_fixtures_copy)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = root_of(app, "project-ocean")
        path = root / "agents/ledger/memory/vault/obs-2026-09-04-001.md"
        await select(pilot, "project-ocean", OCEAN_A)
        _touch_body(path, "Another agent's note.")
        changed = path.read_bytes()
        await press(pilot, "p")
        assert isinstance(app.screen, ConflictScreen)
        await press(pilot, "escape")
        assert isinstance(app.screen, MainScreen)
        assert path.read_bytes() == changed and not journal_actions(root)


async def test_edited_body_overwrite_needs_a_second_confirmation(own_fixtures_copy: Path) -> None:
    app = quiet_app(own_fixtures_copy)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = root_of(app, "project-ocean")
        path = root / "agents/ledger/memory/vault/obs-2026-09-04-001.md"
        await select(pilot, "project-ocean", OCEAN_A)
        await press(pilot, "E")
        await press(pilot, *"Mine: ")
        _touch_body(path, "Theirs.")
        theirs = path.read_bytes()

        await press(pilot, "ctrl+s")
        modal = app.screen
        assert isinstance(modal, ConflictScreen) and modal.body_edit
        await press(pilot, "o")
        second = app.screen
        assert isinstance(second, ConfirmScreen) and second.danger
        # The first answer is no: the text stays in the editor, nothing written.
        await press(pilot, "escape")
        assert path.read_bytes() == theirs
        detail = main_of(app).query_one(MemoryDetail)
        assert detail.editing is not None and detail.editor_text.startswith("Mine: ")

        await press(pilot, "ctrl+s")
        assert isinstance(app.screen, ConflictScreen)
        await press(pilot, "o")
        await press(pilot, "y")
        text = path.read_text(encoding="utf-8")
        assert "Mine: " in text and "Theirs." not in text
        assert detail.editing is None
        # Undo brings the other writer's text back.
        await press(pilot, "u")
        assert path.read_bytes() == theirs


# --------------------------------------------------------------------------- runs and access


async def test_palette_run_previews_then_applies(own_fixtures_copy: Path) -> None:
    app = quiet_app(own_fixtures_copy)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = root_of(app, "cognitive-memory")
        core = root / "CORE.md"
        core.write_text("# stale\n", encoding="utf-8")
        await press(pilot, "ctrl+p")
        await press(pilot, *"cognitive CORE.md")
        await press(pilot, "enter")
        preview = app.screen
        assert isinstance(preview, RunPreviewScreen)
        assert preview.preview is not None and len(preview.preview.steps) == 1
        assert any("CORE.md" in line for i in preview.preview.items for line in i.lines)
        assert core.read_text(encoding="utf-8") == "# stale\n", "nothing before Apply"

        await press(pilot, "y")
        assert preview.outcome is not None and len(preview.outcome.applied) == 1
        assert core.read_text(encoding="utf-8") == render_core(root, AS_OF)
        await press(pilot, "escape")
        assert isinstance(app.screen, MainScreen)
        assert journal_actions(root) == ["core"]
        await select(pilot, "cognitive-memory", COGNITIVE_ID)
        await press(pilot, "u")
        assert core.read_text(encoding="utf-8") == "# stale\n"


async def test_ocean_promote_run_asks_the_threshold_first(own_fixtures_copy: Path) -> None:
    app = quiet_app(own_fixtures_copy)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = root_of(app, "project-ocean")
        shared = root / "shared" / "observations"
        before = {p.name for p in shared.glob("*.md")}
        run_commands(app)["Run: Project Ocean promote (threshold)"]()
        await settle(pilot)
        field = app.screen.query_one("#threshold-value", Input)
        field.value = "2"
        await press(pilot, "enter")
        assert "threshold" in str(app.screen.query_one("#threshold-status").render())
        field.value = "0.9"
        await press(pilot, "enter")
        preview = app.screen
        assert isinstance(preview, RunPreviewScreen) and preview.preview is not None
        planned = [i.label for i in preview.preview.items if not i.refused]
        assert planned and {p.name for p in shared.glob("*.md")} == before
        await press(pilot, "y")
        assert preview.outcome is not None and not preview.outcome.refused
        added = {p.name for p in shared.glob("*.md")} - before
        assert len(added) == len(planned)
        for name in added:
            text = (shared / name).read_text(encoding="utf-8")
            assert "promoted_from:" in text and "promoted_at: 2026-11-22" in text


async def test_archive_everything_expired_run(own_fixtures_copy: Path) -> None:
    from memlens.core import open_catalog
    from memlens.core.decay import archive_candidates

    expected = archive_candidates(open_catalog(own_fixtures_copy), AS_OF)
    assert expected
    app = quiet_app(own_fixtures_copy)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        run_commands(app)["Run: archive everything the formats say is expired"]()
        await settle(pilot)
        preview = app.screen
        assert isinstance(preview, RunPreviewScreen) and preview.preview is not None
        assert len(preview.preview.items) == len(expected)
        await press(pilot, "y")
        assert preview.outcome is not None
        # One step (one transaction, one journal entry) per vault.
        outcome = preview.outcome
        vaults = {m.vault_root for m, _r in expected}
        assert len(outcome.applied) + len(outcome.refused) == len(vaults)
        refused = {step.label for step, _why in outcome.refused}
        for _step, entry in outcome.applied:
            refused |= {label for label, _why in entry.get("refused", [])}
        archived = {i for _s, entry in outcome.applied for i in entry["memory_ids"]}
        assert len(archived) > len(refused)
        await press(pilot, "escape")
    left = archive_candidates(open_catalog(own_fixtures_copy), AS_OF)
    assert {memory_label(m) for m, _r in left} == refused


async def test_viewing_counts_an_access_only_when_tracking_is_on(own_fixtures_copy: Path) -> None:
    from memlens.core.config import Config

    state = own_fixtures_copy / "cognitive-memory" / "_state.json"
    before = state.read_bytes()
    app = quiet_app(own_fixtures_copy)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await select(pilot, "cognitive-memory", COGNITIVE_ID)
        await pilot.pause(1.3)
        await settle(pilot)
    assert state.read_bytes() == before, "browsing changes nothing by default"

    app = MemlensApp(
        [own_fixtures_copy], as_of=AS_OF, live_reload=False, config=Config(track_access=True)
    )
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await select(pilot, "cognitive-memory", COGNITIVE_ID)
        await pilot.pause(1.3)
        await settle(pilot)
    entries = json.loads(state.read_text(encoding="utf-8"))["entries"]
    old_count = json.loads(before)["entries"].get(COGNITIVE_ID, {}).get("access_count", 0)
    assert entries[COGNITIVE_ID]["access_count"] == old_count + 1
    # The row shown at start is a view too when the machine is slow enough to show it
    # for a second before `select` moves on: count only the selected memory's entries.
    journal = read_journal(own_fixtures_copy / "cognitive-memory")
    assert {str(e.get("action")) for e in journal} == {"access"}
    mine = [e for e in journal if COGNITIVE_ID in e.get("memory_ids", [])]
    assert len(mine) == 1


# --------------------------------------------------------------------------- snapshots


def test_snapshot_bulk_confirmation(snap_compare, own_fixtures_copy: Path) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        for memory_id in (OCEAN_A, OCEAN_B, OCEAN_ARCHIVED):
            await select(pilot, "project-ocean", memory_id)
            await pilot.press("space")
        await pilot.press("a")
        await settle(pilot)

    assert snap_compare(quiet_app(own_fixtures_copy), terminal_size=SIZE, run_before=run_before)


def test_snapshot_metadata_editor(snap_compare, own_fixtures_copy: Path) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await select(pilot, "cognitive-memory", COGNITIVE_ID)
        await pilot.press("m")
        await settle(pilot)
        form = pilot.app.screen
        assert isinstance(form, EditMetadataScreen)
        index = next(i for i, r in enumerate(form.rows) if r.key == "importance")
        form.query_one(f"#field-{index}", Input).value = "7"
        for field in form.query(Input):
            field.cursor_blink = False  # a blinking cursor makes the picture random
        await pilot.pause(0.3)
        await settle(pilot)

    assert snap_compare(quiet_app(own_fixtures_copy), terminal_size=SIZE, run_before=run_before)
