"""The app with an unreadable agent folder or vault folder: the rest loads (issue 15).

Reads are denied with tests/core/test_unreadable.py's `denied` (tests run as
root, where chmod blocks nothing).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memlens.core.demo import copy_demo

from ..core.test_unreadable import denied
from .conftest import SIZE, AppFactory, settle
from .test_invisible_chars import screen_text


async def test_an_unreadable_agent_folder_is_one_problem_in_the_app(
    make_app: AppFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo = copy_demo(tmp_path)
    app = make_app([demo])
    with denied(monkeypatch, demo / "project-ocean/agents/atlas"):
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert "project-ocean" in {v.format for v in app.discovered}
            assert not app.errors
            await pilot.press("3")
            await settle(pilot)
            text = screen_text(app)
            assert "agents/atlas" in text and "unreadable" in text


async def test_an_unreadable_vault_folder_is_reported_once(
    make_app: AppFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo = copy_demo(tmp_path)
    app = make_app([demo])
    with denied(monkeypatch, demo / "dream-cycle"):
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert len(app.discovered) == 4
            [(title, message)] = app.errors
            assert title.startswith("Could not read ") and title.endswith("dream-cycle")
            assert "Permission denied" in message
