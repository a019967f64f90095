"""The app factory every Pilot and snapshot test uses (fixed as_of, fixed size)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path

import pytest
from textual.pilot import Pilot

from memlens.tui.app import MemlensApp

AS_OF = date(2026, 11, 22)
SIZE = (120, 40)

AppFactory = Callable[..., MemlensApp]


@pytest.fixture
def make_app(own_fixtures_dir: Path) -> AppFactory:
    """`make_app()` opens every own test vault as of 2026-11-22; pass paths to open others."""

    def factory(paths: Sequence[Path | str] | None = None, as_of: date = AS_OF) -> MemlensApp:
        return MemlensApp(list(paths) if paths is not None else [own_fixtures_dir], as_of=as_of)

    return factory


async def settle(pilot: Pilot[None]) -> None:
    """Wait for the loader, screen workers, the detail debounce and the markdown body."""
    app = pilot.app
    assert isinstance(app, MemlensApp)
    await pilot.pause()
    await app.settle()
    await pilot.pause(0.15)
    await app.settle()
    await pilot.pause()
