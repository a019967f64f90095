"""A warm start lists the rows the last run kept, then the linked rows replace them.

The load is held just before the first vault's linked rows (its scan's
last step) so the test sees the kept rows: every memory row of every vault,
each pending (no memory yet): the detail pane says the vault is being read
and actions wait.  Released, the linked rows take their place, the same
rows as a cold start lists.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

import memlens.tui.app_loading as app_module
from memlens.core.listing.snapshot import PATCH_BLOB
from memlens.core.scan.cache import ScanProgress, cache_path
from memlens.core.scan.vault import Vault
from memlens.tui.screens.main import STILL_LOADING, MainScreen
from memlens.tui.widgets.detail import MemoryDetail

from .conftest import SIZE, AppFactory, settle
from .test_actions_ui import told


async def _keys(make_app: AppFactory, root: Path) -> list[tuple[str, str]]:
    app = make_app([root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.main_screen()
        assert isinstance(screen, MainScreen) and not app.loading
        return [screen.model[i].key for i in range(len(screen.model))]


def _hold_linked_rows(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Hold every vault's scan just before its linked rows until the returned event is set."""
    gate = threading.Event()
    real = app_module.scan_progressive

    def held(vault: Vault, **kwargs: Any) -> Iterator[ScanProgress]:
        for step in real(vault, **kwargs):
            if step.done:
                gate.wait(20)  # the linked rows wait until the test has looked
            yield step

    monkeypatch.setattr(app_module, "scan_progressive", held)
    return gate


async def _kept_rows_shown(
    pilot: Pilot[None], screen: MainScreen, cold: list[tuple[str, str]]
) -> list[tuple[str, str]]:
    """Wait until the list holds every memory row of `cold` (invalid items come later)."""
    memories = [k for k in cold if not k[1].startswith("!")]
    for _ in range(250):
        if len(screen.model) >= len(memories):
            break
        await pilot.pause(0.02)
    return memories


async def test_kept_rows_first_then_the_linked_rows(
    make_app: AppFactory, own_fixtures_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = own_fixtures_copy  # every own vault: all their kept rows come before any is read
    cold = await _keys(make_app, root)  # writes the store, then keeps the rows
    gate = _hold_linked_rows(monkeypatch)
    app = make_app([root])
    try:
        async with app.run_test(size=SIZE) as pilot:
            screen = app.main_screen()
            assert isinstance(screen, MainScreen)
            memories = await _kept_rows_shown(pilot, screen, cold)
            detail = screen.query_one(MemoryDetail)
            for _ in range(250):  # the detail debounce (longer on a busy machine)
                if detail.row is not None:
                    break
                await pilot.pause(0.02)
            assert app.loading
            shown = [screen.model[i] for i in range(len(screen.model))]
            assert len(memories) < len(cold)
            assert sorted(r.key for r in shown) == sorted(memories)
            assert all(r.pending for r in shown)
            assert detail.row is not None and detail.row.pending
            assert "Reading this vault" in str(detail.query_one("#detail-problem").render())
            await pilot.press("space")  # mark: refused while the vault is read
            await pilot.press("p")  # pin: the same
            assert told(app)[-2:] == [STILL_LOADING, STILL_LOADING]
            assert screen.marks == set()
            gate.set()
            await settle(pilot)
            assert not app.loading
            rows = [screen.model[i] for i in range(len(screen.model))]
            assert [r.key for r in rows] == cold
            assert not any(r.pending for r in rows)
            assert detail.row is not None and detail.row.memory is not None
    finally:
        gate.set()


def _count_rows_for_vault(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every vault whose rows the app computes (`rows_for_vault` in the app's loader)."""
    seen: list[Path] = []
    real = app_module.rows_for_vault

    def counting(vault: Vault, *args: Any, **kwargs: Any) -> Any:
        seen.append(vault.root)
        return real(vault, *args, **kwargs)

    monkeypatch.setattr(app_module, "rows_for_vault", counting)
    return seen


async def test_an_unchanged_vault_keeps_the_rows_on_screen_and_gives_them_their_memories(
    make_app: AppFactory, own_fixtures_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = own_fixtures_copy
    cold = await _keys(make_app, root)
    computed = _count_rows_for_vault(monkeypatch)
    gate = _hold_linked_rows(monkeypatch)
    app = make_app([root])
    try:
        async with app.run_test(size=SIZE) as pilot:
            screen = app.main_screen()
            assert isinstance(screen, MainScreen)
            memories = await _kept_rows_shown(pilot, screen, cold)
            shown = {screen.model[i].key: screen.model[i] for i in range(len(screen.model))}
            assert sorted(shown) == sorted(memories) and all(r.pending for r in shown.values())
            gate.set()
            await settle(pilot)
            assert not app.loading and app.errors == []
            rows = [screen.model[i] for i in range(len(screen.model))]
            assert [r.key for r in rows] == cold
            # The very rows shown before, each now with its linked memory;
            # the invalid items came with the vaults.
            for row in rows:
                if row.problem is None:
                    assert row is shown[row.key]
                    assert row.memory is not None and row.memory.id == row.id
            assert computed == []
            detail = screen.query_one(MemoryDetail)
            for _ in range(250):
                if detail.row is not None and not detail.row.pending:
                    break
                await pilot.pause(0.02)
            assert detail.row is not None and detail.row.memory is not None
            assert detail.row.full_info() is not None
    finally:
        gate.set()


async def test_a_vault_changed_since_the_rows_were_kept_gets_its_rows_computed_once(
    make_app: AppFactory, own_fixtures_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memlens.core.scan.vault import discover

    vault = next(v for v in discover(own_fixtures_copy) if v.format == "cognitive-memory")
    await _keys(make_app, vault.root)
    changed = sorted((vault.root / "graph").rglob("*.md"))[0]
    changed.write_bytes(changed.read_bytes() + b"\nOne more line, written between two starts.\n")
    computed = _count_rows_for_vault(monkeypatch)
    app = make_app([vault.root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.main_screen()
        assert isinstance(screen, MainScreen) and not app.loading
        rows = [screen.model[i] for i in range(len(screen.model))]
        assert rows and not any(r.pending for r in rows)
    assert computed == [vault.root]
    # That start patched the kept rows (not written whole): the next one
    # takes them as they are.
    conn = sqlite3.connect(cache_path(vault.root))
    blobs = dict(conn.execute("SELECT name, length(value) FROM blobs").fetchall())
    conn.close()
    assert blobs[PATCH_BLOB] > 0
    again = await _keys(make_app, vault.root)
    assert again == [r.key for r in rows]
    assert computed == [vault.root]
