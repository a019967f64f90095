"""The Privacy pane (key 7): masked findings, jump to the memory, redact and erase after a
confirmation; findings in the problems pane and as a marker on memory rows."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import privacy_plant as pp
import pytest

from memlens.tui.app import MemlensApp
from memlens.tui.app_privacy import LONG_SCAN, TYPING_QUIET
from memlens.tui.screens.confirm import ConfirmScreen
from memlens.tui.screens.main import MainScreen
from memlens.tui.screens.privacy import FindingTable, PrivacyScreen
from memlens.tui.screens.problems import ProblemTable
from memlens.tui.widgets.memory_table import MemoryTable

from .conftest import AS_OF, SIZE, settle
from .test_actions_ui import press


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Path, list[Any]]:
    root = tmp_path / "vaults"
    root.mkdir()
    return root, pp.plant(root)


def _app(root: Path) -> MemlensApp:
    return MemlensApp([root], as_of=AS_OF, live_reload=False)


def _no_secret_on_screen(app: MemlensApp, secrets: list[Any]) -> None:
    shot = app.export_screenshot()
    for p in secrets:
        for part in p.secret.splitlines():
            if len(part) >= 6:
                assert part not in shot, f"{p.kind} shown unmasked"


async def _privacy(pilot: Any) -> PrivacyScreen:
    await press(pilot, "7")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, PrivacyScreen)
    return screen


async def test_the_pane_lists_every_finding_masked(planted: tuple[Path, list[Any]]) -> None:
    root, secrets = planted
    app = _app(root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await _privacy(pilot)
        table = screen.query_one(FindingTable)
        assert len(table.findings) == len(secrets)
        assert {f.secret for f in table.findings} == {p.secret for p in secrets}
        for i in range(len(table.findings)):
            assert table.findings[i].secret not in table.render_row(i, 120).plain
        _no_secret_on_screen(app, secrets)
        # Scroll through every row: none is ever drawn unmasked.
        for _ in range(len(secrets)):
            await pilot.press("down")
        await settle(pilot)
        _no_secret_on_screen(app, secrets)


async def test_enter_jumps_to_the_memory(planted: tuple[Path, list[Any]]) -> None:
    root, _ = planted
    app = _app(root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await _privacy(pilot)
        finding = screen.query_one(FindingTable).current()
        assert finding is not None
        await press(pilot, "enter")
        assert isinstance(app.screen, MainScreen)
        row = app.screen.query_one(MemoryTable).current_row()
        assert row is not None and row.key == finding.memory_key


async def test_redact_one_finding_after_confirming(planted: tuple[Path, list[Any]]) -> None:
    root, secrets = planted
    app = _app(root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await _privacy(pilot)
        table = screen.query_one(FindingTable)
        finding = next(f for f in table.findings if f.format == "project-ocean")
        table.move_to(table.findings.index(finding))
        await press(pilot, "r")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        _no_secret_on_screen(app, secrets)
        await press(pilot, "y")
        await settle(pilot)
        assert isinstance(app.screen, PrivacyScreen)
        text = (finding.vault_root / finding.path).read_text(encoding="utf-8")
        assert finding.secret not in text and f"[REDACTED:{finding.kind}]" in text
        assert len(screen.query_one(FindingTable).findings) == len(secrets) - 1


async def test_a_change_rescans_only_its_file(planted: tuple[Path, list[Any]]) -> None:
    root, secrets = planted
    app = _app(root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await _privacy(pilot)
        cache = app.findings_cache
        assert cache is not None
        files = {(str(v.root), m.path) for v, _rows in app.loaded for m in v.memories}
        assert cache.files_scanned == len(files)  # the first scan read every file
        table = screen.query_one(FindingTable)
        finding = next(f for f in table.findings if f.format == "dream-cycle")
        table.move_to(table.findings.index(finding))
        await press(pilot, "r")
        await settle(pilot)
        await press(pilot, "y")
        await settle(pilot)
        assert len(screen.query_one(FindingTable).findings) == len(secrets) - 1
        assert cache.files_scanned == len(files) + 1  # observations.md, nothing else


async def test_cancel_writes_nothing(planted: tuple[Path, list[Any]]) -> None:
    root, _ = planted
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    app = _app(root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _privacy(pilot)
        await press(pilot, "E")
        assert isinstance(app.screen, ConfirmScreen)
        await press(pilot, "escape")
        await settle(pilot)
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before


async def test_redact_every_finding_of_a_kind(planted: tuple[Path, list[Any]]) -> None:
    root, secrets = planted
    app = _app(root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await _privacy(pilot)
        table = screen.query_one(FindingTable)
        table.move_to(next(i for i, f in enumerate(table.findings) if f.kind == "email"))
        await press(pilot, "R")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await press(pilot, "y")
        await settle(pilot)
        kinds = [(f.kind, f.format) for f in screen.query_one(FindingTable).findings]
        # The experience record's raw line keeps its bytes (tombstoned): still reported.
        assert [k for k in kinds if k[0] == "email"] == [("email", "experience-records")]
        assert len(kinds) == len(secrets) - 5  # six planted, the raw line keeps one


async def test_findings_are_problems_and_row_markers(planted: tuple[Path, list[Any]]) -> None:
    root, secrets = planted
    app = _app(root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.screen.query_one(MemoryTable)
        assert set(table.secrets) == app.secret_keys and len(app.secret_keys) > 0
        assert "⚠" in app.export_screenshot()
        _no_secret_on_screen(app, secrets)
        await press(pilot, "3")
        problems = app.screen.query_one(ProblemTable)
        reasons = [e.reason for e in problems.entries if e.kind == "secret"]
        assert len(reasons) == len(secrets)
        assert "secret:aws-key" in reasons
        _no_secret_on_screen(app, secrets)


async def test_x_redacts_the_marked_memories_after_confirming(
    planted: tuple[Path, list[Any]],
) -> None:
    root, secrets = planted
    app = _app(root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main = app.screen
        assert isinstance(main, MainScreen)
        keys = sorted(k for k in app.secret_keys if not k[1].startswith("exp_"))[:2]
        main.marks.update(keys)
        main.marks_changed()
        await press(pilot, "X")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        _no_secret_on_screen(app, secrets)
        await press(pilot, "y")
        await settle(pilot)
        assert not (set(keys) & app.secret_keys) or any(k[1].startswith("exp_") for k in keys)


class _Worker:
    is_cancelled = False


def _fake_naps(start: float) -> tuple[list[float], list[float], Callable[[float], None]]:
    """A clock reading (`now[0]`) that each nap moves on, and the naps taken."""
    now = [start]
    naps: list[float] = []

    def nap(seconds: float) -> None:
        naps.append(seconds)
        now[0] += seconds

    return now, naps, nap


async def test_the_scan_waits_while_keys_are_pressed(planted: tuple[Path, list[Any]]) -> None:
    root, _secrets = planted
    app = _app(root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.last_key_at == 0.0
        await pilot.press("j")
        pressed = app.last_key_at
        assert pressed > 0.0
        # A scan between two files right after the key: it naps until the keys stop.
        now, naps, nap = _fake_naps(pressed + 0.01)
        worker: Any = _Worker()

        def may(started: float) -> bool:
            return app.scan_may_go_on(worker, started, clock=lambda: now[0], nap=nap)

        assert may(now[0] - 0.5)  # a short rescan never waits
        assert naps == []
        assert may(now[0] - LONG_SCAN)  # a long one naps until the keys stop
        assert sum(naps) >= TYPING_QUIET - 0.01 and now[0] - pressed >= TYPING_QUIET
        naps.clear()
        assert may(now[0] - LONG_SCAN)
        assert naps == []  # no key since: no wait
        worker.is_cancelled = True
        now[0] = app.last_key_at  # a cancelled scan stops at once, keys or not
        assert not may(now[0] - LONG_SCAN)
        assert naps == []


async def test_the_pane_imports_wait_while_keys_are_pressed(
    planted: tuple[Path, list[Any]],
) -> None:
    """The background imports of the other panes give way to typing between modules."""
    from memlens.tui import lazy_modes

    root, _secrets = planted
    app = _app(root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("j")
        now, naps, nap = _fake_naps(app.last_key_at + 0.01)
        app.wait_while_typing(clock=lambda: now[0], nap=nap)
        assert sum(naps) >= TYPING_QUIET - 0.01 and now[0] - app.last_key_at >= TYPING_QUIET
        naps.clear()
        app.wait_while_typing(clock=lambda: now[0], nap=nap)
        assert naps == []  # no key since: no wait

    calls: list[str] = []
    lazy_modes.import_panes(before_each=lambda: calls.append("wait"))
    assert calls == ["wait"] * (len(lazy_modes._OFTEN) + 1)  # before every module


async def test_a_long_scan_waits_while_the_store_or_the_search_index_is_being_written(
    planted: tuple[Path, list[Any]],
) -> None:
    import asyncio
    import threading
    import time

    root, _secrets = planted
    app = _app(root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not app.waited_for()  # the load is over: nothing to wait for
        gate = threading.Event()
        index = app.run_worker(
            lambda: gate.wait(20), thread=True, group="search-index", name="index"
        )
        await pilot.pause(0.05)
        assert app.waited_for()
        later = threading.Event()
        unrelated = app.run_worker(lambda: later.wait(20), thread=True, group="something-else")
        naps: list[float] = []
        now = [100.0]

        def nap(seconds: float) -> None:
            naps.append(seconds)
            now[0] += seconds
            if len(naps) == 5:
                gate.set()  # the index is built meanwhile

        def slow_nap(seconds: float) -> None:
            nap(seconds)
            time.sleep(0.01)  # real time: the app's loop notes the worker's end

        worker: Any = _Worker()
        assert app.scan_may_go_on(worker, now[0] - 0.5, clock=lambda: now[0], nap=nap)
        assert naps == []  # a short rescan never waits
        # A long scan (in a thread, as the scan runs) naps while the index is
        # built, and goes on once it is.
        done = await asyncio.to_thread(
            app.scan_may_go_on, worker, now[0] - LONG_SCAN, clock=lambda: now[0], nap=slow_nap
        )
        assert done and len(naps) >= 5
        await index.wait()
        await pilot.pause(0.05)
        assert not app.waited_for()  # a worker of another group is no reason to wait
        later.set()
        await unrelated.wait()


async def test_a_finding_in_an_invalid_item_opens_its_file_and_is_never_redacted(
    tmp_path: Path,
) -> None:
    from privacy_invalid import GITHUB, plant_invalid

    from memlens.tui.screens.raw import RawScreen

    plant_invalid(tmp_path)
    observations = tmp_path / "dream" / "observations.md"
    before = observations.read_bytes()
    app = _app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await _privacy(pilot)
        table = screen.query_one(FindingTable)
        finding = next(f for f in table.findings if f.kind == "github-token")
        assert finding.invalid
        index = table.findings.index(finding)
        assert table.render_row(index, 120).plain.endswith("(invalid)")
        assert GITHUB not in app.export_screenshot()
        table.move_to(index)
        await press(pilot, "r")
        await settle(pilot)
        assert isinstance(app.screen, PrivacyScreen)  # no confirmation: nothing to do
        await press(pilot, "R")
        await settle(pilot)
        assert isinstance(app.screen, PrivacyScreen)
        assert observations.read_bytes() == before
        await press(pilot, "enter")
        await settle(pilot)
        assert isinstance(app.screen, RawScreen)
        assert app.screen.line == finding.line


async def test_a_finding_in_a_file_holding_no_memory_opens_it_and_is_never_redacted(
    tmp_path: Path,
) -> None:
    from privacy_side import SLACK, plant_side

    from memlens.tui.screens.raw import RawScreen

    plant_side(tmp_path)
    episode = tmp_path / "cognitive" / "episodes" / "2026-11-20.md"
    before = episode.read_bytes()
    app = _app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await _privacy(pilot)
        table = screen.query_one(FindingTable)
        finding = next(f for f in table.findings if f.kind == "slack-token")
        assert finding.side and finding.path == "episodes/2026-11-20.md"
        index = table.findings.index(finding)
        assert table.render_row(index, 120).plain.endswith("(no memory)")
        assert SLACK not in app.export_screenshot()
        table.move_to(index)
        for key in ("r", "R"):
            await press(pilot, key)
            await settle(pilot)
            assert isinstance(app.screen, PrivacyScreen)  # no confirmation: nothing to do
        assert episode.read_bytes() == before
        await press(pilot, "enter")
        await settle(pilot)
        assert isinstance(app.screen, RawScreen)
