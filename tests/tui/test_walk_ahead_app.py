"""The app's warm start with the stat walk taken ahead by a helper process.

The helper only starts for large vaults with a CPU to spare; here it is
forced on, and the app must list exactly what it lists without it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import memlens.tui.app_loading as app_module
from memlens.core.scan import walk_ahead as wa
from memlens.core.scan.vault import Vault
from memlens.tui.screens.main import MainScreen

from .conftest import SIZE, AppFactory, settle


async def _rows(make_app: AppFactory, root: Path) -> list[tuple[str, str]]:
    app = make_app([root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not app.loading and app.errors == []
        screen = app.main_screen()
        assert isinstance(screen, MainScreen)
        model = screen.model
        return [model[i].key for i in range(len(model))]


async def test_warm_start_with_the_helper_lists_the_same_rows(
    make_app: AppFactory, own_fixtures_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cold = await _rows(make_app, own_fixtures_copy)  # writes the scan caches
    started: list[wa.WalkAhead] = []
    taken: list[bool] = []
    real_start = app_module.start_walk_ahead

    def forced(vaults: list[Vault], *, cache: bool) -> wa.WalkAhead | None:
        ahead = real_start(vaults, cache=cache, force=True)
        assert ahead is not None
        real_take = ahead.take

        def take(root: Path | str) -> wa.Walk | None:
            got = real_take(root)
            taken.append(got is not None)
            return got

        ahead.take = take  # type: ignore[method-assign]
        started.append(ahead)
        return ahead

    monkeypatch.setattr(app_module, "start_walk_ahead", forced)
    warm = await _rows(make_app, own_fixtures_copy)
    assert warm == cold
    assert started and taken and all(taken)
