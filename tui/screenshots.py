"""Regenerate `screenshots/*.svg` from a fresh copy of the demo vaults.

    python -m memlens.tui.screenshots [OUT_DIR] [--as-of 2026-11-22]

Each screen is captured headless at 120x40 on a fixed date, so the images only
change when the screens do.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from collections.abc import Awaitable, Callable
from datetime import date
from pathlib import Path

from textual.pilot import Pilot

from memlens.core.demo import copy_demo

from .app import MemlensApp
from .hints import mark_hint_seen

SIZE = (120, 40)
Step = Callable[[Pilot[None]], Awaitable[None]]


async def _settle(pilot: Pilot[None]) -> None:
    app = pilot.app
    assert isinstance(app, MemlensApp)
    await pilot.pause()
    await app.settle()
    await pilot.pause(0.2)
    await app.settle()
    await pilot.pause()


def _keys(*keys: str) -> Step:
    async def step(pilot: Pilot[None]) -> None:
        await pilot.press(*keys)
        await _settle(pilot)

    return step


async def _detail_with_relations(pilot: Pilot[None]) -> None:
    """Open the first memory that has relations, zoomed, so the shot shows them."""
    app = pilot.app
    assert isinstance(app, MemlensApp)
    main = app.main_screen()
    assert main is not None
    for vault, _rows in app.loaded:
        for memory in vault.memories:
            if memory.relations and main.select_memory(vault.root, memory.id):
                await pilot.press("enter", "z")
                await _settle(pilot)
                return


def _type(text: str) -> Step:
    async def step(pilot: Pilot[None]) -> None:
        for ch in text:
            await pilot.press("space" if ch == " " else ch)
        await pilot.pause(0.3)
        await _settle(pilot)

    return step


async def _graph_of_related(pilot: Pilot[None]) -> None:
    """Select the memory with the most links, then open the graph pane on it."""
    app = pilot.app
    assert isinstance(app, MemlensApp)
    main = app.main_screen()
    assert main is not None
    best = max(
        ((v, m) for v, _rows in app.loaded for m in v.memories),
        key=lambda vm: len(vm[1].relations),
    )
    main.select_memory(best[0].root, best[1].id)
    await _settle(pilot)
    await pilot.press("5")
    await pilot.pause(0.5)
    await _settle(pilot)


SHOTS: dict[str, list[Step]] = {
    "main": [],
    "detail": [_detail_with_relations],
    "triage": [_keys("2")],
    "problems": [_keys("3")],
    "raw": [_keys("v")],
    "help": [_keys("question_mark")],
    "search": [_keys("4"), _type("sqlite lock"), _keys("down")],
    "graph": [_graph_of_related],
    "episodes": [_keys("6")],
    "privacy": [_keys("7")],
    "preview": [_keys("8")],
    "review": [_keys("9")],
}


async def take_screenshots(out: Path, as_of: date) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = copy_demo(Path(tmp))
        # A state folder of its own, the first-run hint already seen: the
        # pictures do not depend on whether this user has run memlens before.
        state = Path(tmp) / "state"
        mark_hint_seen(state)
        for name, steps in SHOTS.items():
            app = MemlensApp([root], as_of=as_of, state_folder=state)
            async with app.run_test(size=SIZE) as pilot:
                await _settle(pilot)
                for step in steps:
                    await step(pilot)
                path = out / f"{name}.svg"
                path.write_text(app.export_screenshot(title=f"memlens · {name}"), encoding="utf-8")
                written.append(path)
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m memlens.tui.screenshots")
    parser.add_argument("out", nargs="?", default="screenshots", type=Path)
    parser.add_argument("--as-of", type=date.fromisoformat, default=date(2026, 11, 22))
    args = parser.parse_args(argv)
    for path in asyncio.run(take_screenshots(args.out, args.as_of)):
        print(path)


if __name__ == "__main__":
    main()
