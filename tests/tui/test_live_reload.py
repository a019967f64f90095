"""Live reload in the app: changes on disk show up in place, the user keeps their place.

Every test runs the app headless on a temporary copy of the fixture vaults
with the real watcher, and waits for conditions with a timeout (never fixed
sleeps), so it stays robust on a loaded machine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from memlens.core.actions import Action
from memlens.core.listing import MemoryRow
from memlens.core.scan.changes import ChangeKind
from memlens.core.scan.vault import Vault
from memlens.tui.app import MemlensApp
from memlens.tui.screens.main import MainScreen
from memlens.tui.widgets.detail import MemoryDetail
from memlens.tui.widgets.live_banner import LiveBanner
from memlens.tui.widgets.memory_table import MemoryTable
from memlens.tui.widgets.vault_sidebar import VaultSidebar

from .conftest import AS_OF, SIZE, settle

TIMEOUT = 20.0
DEMO = Path(__file__).resolve().parents[2] / "core" / "demo_vaults"
GRAFANA = "cognitive-memory/graph/configurations/fly-machine-sizing-for-the-match-server-f7b0c4.md"
GRAFANA_ID = "f7b0c452-3e8d-4a16-b9c7-15d4e6a0f283"
HAWK = "project-ocean/agents/courier/memory/vault/obs-2026-11-09-001.md"
HAWK_ID = "courier/obs-2026-11-09-001"

COGNITIVE_DOC = """\
---
id: {id}
type: configuration
title: "{title}"
tags: [fly, sizing, alerting]
importance: 0.6
confidence: 0.8
created: 2026-04-20T18:00:00+00:00
updated: 2026-04-20T18:00:00+00:00
---
{body}
"""


async def wait_for(pilot: Pilot[None], cond: Callable[[], bool], what: str) -> None:
    """Let the app run until `cond()` holds, or fail after TIMEOUT seconds."""
    end = time.monotonic() + TIMEOUT
    while time.monotonic() < end:
        if cond():
            return
        await pilot.pause(0.02)
    assert cond(), f"timed out waiting for: {what}"


def replace_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def main_of(app: MemlensApp) -> MainScreen:
    main = app.main_screen()
    assert main is not None
    return main


def table(app: MemlensApp) -> MemoryTable:
    return main_of(app).query_one(MemoryTable)


def detail(app: MemlensApp) -> MemoryDetail:
    return main_of(app).query_one(MemoryDetail)


def banner(app: MemlensApp) -> LiveBanner | None:
    found = detail(app).query(LiveBanner)
    return found.first() if found else None


def row_of(app: MemlensApp, root: Path, mid: str) -> MemoryRow | None:
    return main_of(app).model.find(root.resolve(), mid)


async def started(pilot: Pilot[None]) -> MemlensApp:
    app = pilot.app
    assert isinstance(app, MemlensApp)
    await settle(pilot)
    await wait_for(pilot, lambda: app.live_ready, "the watcher to start")
    return app


async def open_memory(pilot: Pilot[None], app: MemlensApp, root: Path, mid: str) -> MemoryRow:
    assert main_of(app).select_memory(root.resolve(), mid)
    await settle(pilot)
    row = detail(app).row
    assert row is not None and row.id == mid
    return row


@pytest.fixture
def vaults(own_fixtures_copy: Path) -> Path:
    return own_fixtures_copy


async def test_external_change_appears_without_a_keypress(vaults: Path) -> None:
    app = MemlensApp([vaults], as_of=AS_OF)
    root = vaults / "cognitive-memory"
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("j", "j", "j", "j", "j")
        before = table(app).current_row()
        assert before is not None and before.id != GRAFANA_ID
        cursor, top = table(app).cursor, table(app).scroll_offset.y
        total = main_of(app).model.total

        replace_atomically(
            vaults / GRAFANA,
            COGNITIVE_DOC.format(id=GRAFANA_ID, title="Fly sizing via ntfy, edited", body="new"),
        )
        await wait_for(
            pilot,
            lambda: (
                (r := row_of(app, root, GRAFANA_ID)) is not None
                and r.title == "Fly sizing via ntfy, edited"
            ),
            "the edited title in the list",
        )
        after = table(app).current_row()
        assert after is not None and after.key == before.key
        assert (table(app).cursor, table(app).scroll_offset.y) == (cursor, top)
        assert main_of(app).model.total == total
        assert any(c.id == GRAFANA_ID and c.kind is ChangeKind.CHANGED for c in app.live_log)
        # Not the open memory: no banner, nothing announced.
        assert banner(app) is None or not banner(app).display  # type: ignore[union-attr]


async def test_rows_added_above_the_cursor_do_not_move_the_view(vaults: Path) -> None:
    app = MemlensApp([vaults], as_of=AS_OF)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        main = main_of(app)
        main.sort_by("title")
        await pilot.press("G")
        await settle(pilot)
        before = table(app).current_row()
        assert before is not None
        cursor, top = table(app).cursor, int(table(app).scroll_offset.y)
        assert top > 0

        new_id = "00000000-0000-4000-8000-000000000001"
        target = vaults / "cognitive-memory/graph/configurations/aaa-first-000001.md"
        target.write_text(
            COGNITIVE_DOC.format(id=new_id, title="AAA sorts first", body="x"), encoding="utf-8"
        )
        root = vaults / "cognitive-memory"
        await wait_for(pilot, lambda: row_of(app, root, new_id) is not None, "the new memory")
        new_row = row_of(app, root, new_id)
        assert new_row is not None
        assert main.model.position_of(new_row.key) < cursor
        after = table(app).current_row()
        assert after is not None and after.key == before.key
        # One row more above: the cursor and the view moved down together.
        assert table(app).cursor == cursor + 1
        assert int(table(app).scroll_offset.y) == top + 1


async def test_filter_stays_while_rows_change(vaults: Path) -> None:
    app = MemlensApp([vaults], as_of=AS_OF)
    root = vaults / "cognitive-memory"
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("slash", *"sizing", "enter")
        await settle(pilot)
        shown = len(main_of(app).model)
        assert shown >= 1
        replace_atomically(
            vaults / GRAFANA,
            COGNITIVE_DOC.format(id=GRAFANA_ID, title="Fly sizing contact point v2", body="b"),
        )
        await wait_for(
            pilot,
            lambda: (r := row_of(app, root, GRAFANA_ID)) is not None and r.title.endswith("v2"),
            "the change",
        )
        assert main_of(app).model.query == "sizing"
        assert len(main_of(app).model) == shown
        assert all("sizing" in r.haystack for r in main_of(app).model)


async def test_open_memory_that_changes_shows_a_banner_and_the_new_content(vaults: Path) -> None:
    app = MemlensApp([vaults], as_of=AS_OF)
    root = vaults / "cognitive-memory"
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await open_memory(pilot, app, root, GRAFANA_ID)
        replace_atomically(
            vaults / GRAFANA,
            COGNITIVE_DOC.format(id=GRAFANA_ID, title="Fly sizing, rewritten", body="fresh body"),
        )
        await wait_for(
            pilot,
            lambda: (r := detail(app).row) is not None and r.title == "Fly sizing, rewritten",
            "the detail pane to show the new content",
        )
        b = banner(app)
        assert b is not None and b.display and b.kind == "changed"
        assert "changed on disk" in b.message
        assert app.change_notices and "changed on disk" in app.change_notices[-1]
        # Moving to another memory drops the banner.
        await pilot.press("j")
        await settle(pilot)
        assert not b.display


WRITER = r"""
import os, sys
from pathlib import Path

target, count, template = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
for i in range(count):
    tmp = target.with_name(f".{target.name}.{i % 3}.tmp")
    tmp.write_text(template.replace("BODY", f"revision {i}"), encoding="utf-8")
    os.replace(tmp, target)
print("done", flush=True)
"""

OCEAN_DOC = (
    "---\ntags: [watch]\nconfidence: 0.7\ncreated: 2026-11-20\ndecay: linear-30d\n"
    "source: courier\nbacklinks: []\n---\nBODY\n"
)


async def test_100_atomic_replaces_end_on_the_last_content_never_removed(vaults: Path) -> None:
    app = MemlensApp([vaults], as_of=AS_OF)
    root = vaults / "project-ocean"
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await open_memory(pilot, app, root, HAWK_ID)
        kinds_seen: set[str] = set()

        def last_content_shown() -> bool:
            b = banner(app)
            if b is not None and b.kind:
                kinds_seen.add(b.kind)
            r = detail(app).row
            return r is not None and r.memory is not None and r.memory.body.strip() == "revision 99"

        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(vaults / HAWK), "100", OCEAN_DOC],
            stdout=subprocess.PIPE,
            text=True,
        )
        await wait_for(pilot, lambda: proc.poll() is not None, "the writer to finish")
        assert proc.returncode == 0 and proc.stdout is not None
        assert proc.stdout.read().strip() == "done"
        await wait_for(pilot, last_content_shown, "revision 99 in the detail pane")
        mine = [c for c in app.live_log if c.id == HAWK_ID]
        assert mine and all(c.kind is ChangeKind.CHANGED for c in mine), mine
        assert "removed" not in kinds_seen
        row = row_of(app, root, HAWK_ID)
        assert row is not None and row.status != "removed from disk"
        assert table(app).current_row() is row
        # The temporary files never surfaced as rows.
        assert not [r for r in main_of(app).model if ".tmp" in r.title or ".tmp" in r.id]


async def test_external_delete_of_the_open_memory_says_removed(vaults: Path) -> None:
    app = MemlensApp([vaults], as_of=AS_OF)
    root = vaults / "cognitive-memory"
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        row = await open_memory(pilot, app, root, GRAFANA_ID)
        (vaults / GRAFANA).unlink()
        await wait_for(
            pilot,
            lambda: (b := banner(app)) is not None and b.kind == "removed",
            "the removed banner",
        )
        b = banner(app)
        assert b is not None and "removed from disk" in b.message
        # The last content stays on screen, in the list too, marked removed.
        assert detail(app).row is row
        assert table(app).current_row() is row and row.when == "removed"
        assert row_of(app, root, GRAFANA_ID) is not None
        # The vault itself no longer has it.
        assert all(m.id != GRAFANA_ID for m in _vault(app, root).memories)
        # Leaving it: the row goes, the banner too.
        await pilot.press("j")
        await settle(pilot)
        assert row_of(app, root, GRAFANA_ID) is None
        assert not b.display


def _vault(app: MemlensApp, root: Path) -> Vault:
    return next(v for v, _ in app.loaded if v.root == root.resolve())


async def test_a_new_vault_folder_appears_in_the_sidebar(vaults: Path) -> None:
    app = MemlensApp([vaults], as_of=AS_OF)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        names = [s.name for s in app.summaries()]
        assert "later/ov" not in names
        (vaults / "later").mkdir()
        shutil.copytree(
            DEMO / "observation-v1", vaults / "later" / "ov"
        )  # a format of another half
        await wait_for(
            pilot,
            lambda: any(s.name == "later/ov" and s.loaded for s in app.summaries()),
            "the new vault in the sidebar",
        )
        new_root = str((vaults / "later" / "ov").resolve())
        await wait_for(
            pilot,
            lambda: any(str(r.vault_root) == new_root for r in main_of(app).model),
            "the new vault's rows in the list",
        )
        sidebar = main_of(app).query_one(VaultSidebar)
        assert "later/ov" in [s.name for s in sidebar.summaries]
        assert sidebar.option_count == len(sidebar.summaries) + 1


async def test_own_save_is_applied_silently(vaults: Path) -> None:
    app = MemlensApp([vaults], as_of=AS_OF)
    root = vaults / "project-ocean"
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        row = await open_memory(pilot, app, root, HAWK_ID)
        assert row.memory is not None and not row.memory.pinned
        Action("pin", row.memory).apply()
        await wait_for(
            pilot,
            lambda: any(c.id == HAWK_ID and c.own for c in app.live_log),
            "the watcher's notice of memlens's own write",
        )
        await settle(pilot)
        shown = detail(app).row
        assert shown is not None and shown.memory is not None and shown.memory.pinned
        assert app.change_notices == []
        b = banner(app)
        assert b is None or not b.display


async def test_refresh_paths_updates_at_once(vaults: Path) -> None:
    app = MemlensApp([vaults], as_of=AS_OF, live_reload=False)
    root = vaults / "cognitive-memory"
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.watcher is None
        await open_memory(pilot, app, root, GRAFANA_ID)
        replace_atomically(
            vaults / GRAFANA,
            COGNITIVE_DOC.format(id=GRAFANA_ID, title="Saved by memlens", body="b"),
        )
        app.refresh_paths([vaults / GRAFANA])
        row = row_of(app, root, GRAFANA_ID)
        assert row is not None and row.title == "Saved by memlens"
        assert detail(app).row is row
        assert app.change_notices == []
        # Paths outside every vault are ignored.
        app.refresh_paths([vaults.parent / "elsewhere.md"])


async def test_an_edited_memory_changed_on_disk_is_announced(vaults: Path) -> None:
    app = MemlensApp([vaults], as_of=AS_OF)
    root = vaults / "cognitive-memory"
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        app.editing.add((str(root.resolve()), GRAFANA_ID))
        replace_atomically(
            vaults / GRAFANA,
            COGNITIVE_DOC.format(id=GRAFANA_ID, title="Changed under the editor", body="b"),
        )
        await wait_for(
            pilot,
            lambda: any("while you edit it" in n for n in app.change_notices),
            "the editing notice",
        )


async def test_search_index_follows_changes_incrementally(vaults: Path) -> None:
    from memlens.tui.screens.search import SearchScreen

    app = MemlensApp([vaults], as_of=AS_OF)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("4")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        await wait_for(pilot, lambda: screen.index is not None, "the search index")
        index = screen.index
        await pilot.press(*"zanzibarqux")
        await settle(pilot)
        assert screen.results is not None and screen.results.hits == []
        replace_atomically(
            vaults / GRAFANA,
            COGNITIVE_DOC.format(id=GRAFANA_ID, title="Fly sizing", body="zanzibarqux alerting"),
        )
        await wait_for(
            pilot,
            lambda: (
                screen.results is not None
                and [h.memory.id for h in screen.results.hits] == [GRAFANA_ID]
            ),
            "the changed memory found by its new word",
        )
        assert screen.index is index  # updated in place, not rebuilt
        (vaults / GRAFANA).unlink()
        await wait_for(
            pilot,
            lambda: screen.results is not None and screen.results.hits == [],
            "the removed memory gone from the results",
        )


async def test_graph_is_rebuilt_after_changes(
    vaults: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memlens.tui.app_live as app_module
    from memlens.tui.screens.graph import GraphScreen

    monkeypatch.setattr(app_module, "GRAPH_REBUILD_DELAY", 0.05)
    app = MemlensApp([vaults], as_of=AS_OF)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("5")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, GraphScreen)
        await wait_for(pilot, lambda: screen.graph is not None, "the graph")
        graph = screen.graph
        assert graph is not None
        key = (str((vaults / "cognitive-memory").resolve()), GRAFANA_ID)
        assert key in graph
        (vaults / GRAFANA).unlink()
        await wait_for(
            pilot,
            lambda: screen.graph is not graph and screen.graph is not None,
            "a rebuilt graph",
        )
        assert key not in screen.graph


async def test_progressive_load_ends_equal_to_the_linked_rows(
    own_fixtures_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import memlens.tui.app_loading as app_module
    from memlens.tui.messages import VaultProgress

    monkeypatch.setenv("MEMLENS_CACHE_DIR", str(tmp_path / "cache"))  # a cold parse
    monkeypatch.setattr(app_module, "LOAD_BATCH", 3)
    monkeypatch.setattr(app_module, "PROGRESS_AFTER", 0.0)  # as if every vault were slow

    steps: list[int] = []
    # Patched where it is defined: Textual calls a handler of each class in the MRO.
    real = app_module.LoadingApp.on_vault_progress

    def counting(self: app_module.LoadingApp, message: VaultProgress) -> None:
        steps.append(len(message.rows))
        real(self, message)

    monkeypatch.setattr(app_module.LoadingApp, "on_vault_progress", counting)
    app = MemlensApp([own_fixtures_dir], as_of=AS_OF, live_reload=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert len(steps) > 5  # first rows came in small steps
        assert app.partial == set()
        model = main_of(app).model
        shown = sorted(r.key for r in model)
        expected = sorted(r.key for _, rows in app.loaded for r in rows)
        assert shown == expected
        assert model.total == sum(len(v.memories) + len(v.problems) for v, _ in app.loaded)
        # Every row shown is a linked one (the early rows were all replaced).
        linked = {id(r) for _, rows in app.loaded for r in rows}
        assert all(id(r) in linked for r in model)
        # Natural order keeps each vault's rows together, vault by vault.
        roots = [str(r.vault_root) for r in model]
        order = list(dict.fromkeys(roots))
        assert roots == sorted(roots, key=order.index)
    # Served whole from the cache, each vault's rows as the first run kept
    # them come at once (`core.listing.snapshot`), then its linked rows.
    steps.clear()
    again = MemlensApp([own_fixtures_dir], as_of=AS_OF, live_reload=False)
    async with again.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert steps == [len(v.memories) for v, _rows in again.loaded], steps
        assert sorted(r.key for r in main_of(again).model) == expected
        assert not any(r.pending for r in main_of(again).model)


async def test_reload_restarts_watching(vaults: Path) -> None:
    app = MemlensApp([vaults], as_of=AS_OF)
    root = vaults / "cognitive-memory"
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        first = app.watcher
        epoch = app.live.epoch
        await pilot.press("ctrl+r")
        await settle(pilot)
        await wait_for(pilot, lambda: app.live_ready and app.watcher is not first, "a new watcher")
        assert first is not None and not first.running
        assert app.live.epoch == epoch + 1
        total = main_of(app).model.total
        replace_atomically(
            vaults / GRAFANA,
            COGNITIVE_DOC.format(id=GRAFANA_ID, title="After the reload", body="b"),
        )
        await wait_for(
            pilot,
            lambda: (
                (r := row_of(app, root, GRAFANA_ID)) is not None and r.title == "After the reload"
            ),
            "the change after the reload",
        )
        assert main_of(app).model.total == total
        # A change from the old watcher's era is ignored.
        assert app.live.submit(list(app.live_log)[-1:], [], epoch) == 0


async def test_quitting_does_not_wait_for_the_watchers_first_walk(
    vaults: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    import memlens.core.scan.watch as watch_module
    from memlens.tui.app import QUIT_WAIT

    listing = threading.Event()
    release = threading.Event()
    real = watch_module.vault_files

    def slow(vault: Vault) -> list[Path]:
        # A big vault's first listing (seconds at 100k memories).
        listing.set()
        release.wait(10)
        return real(vault)

    monkeypatch.setattr(watch_module, "vault_files", slow)
    app = MemlensApp([vaults], as_of=AS_OF)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await wait_for(pilot, listing.is_set, "the watcher's first walk")
            watcher = app.watcher
            assert watcher is not None and not app.live_ready
            began = time.monotonic()
        # Unmounted: the app did not wait for the listing to end.
        assert time.monotonic() - began < QUIT_WAIT + 2.0
        assert app.watcher is None
    finally:
        release.set()
    # The watcher's threads stop on their own once the listing returns.
    for t in (watcher._thread, watcher._walker):
        if t is not None:
            t.join(10)
            assert not t.is_alive()
