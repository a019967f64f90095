"""The panes other than the memories list, each imported when it is first shown.

Why: importing every pane with the app cost ~0.5 s before the first row
could be drawn (the relation graph brings networkx, the search pane numpy
and the index code, the triage and run screens the maintenance planners),
and most sessions open one or two of them.  Textual's `MODES` takes a
callable per mode; each one here imports its screen's module on the first
switch to it (later calls find it already imported).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import cast

from textual.screen import Screen

#: Mode name -> (module under memlens.tui.screens, screen class).  The
#: memories list is not here: it is the first screen shown.
_PANES = {
    "triage": ("triage", "TriageScreen"),
    "problems": ("problems", "ProblemsScreen"),
    "search": ("search", "SearchScreen"),
    "graph": ("graph", "GraphScreen"),
    "episodes": ("episodes", "EpisodesScreen"),
    "preview": ("preview", "PreviewScreen"),
    "privacy": ("privacy", "PrivacyScreen"),
    "review": ("review", "ReviewScreen"),
}
#: What `import_panes` loads: the panes users open most, and the palette's runs.
_OFTEN = ("search", "graph", "triage", "problems")


def _screen_module(mode: str) -> str:
    return f"memlens.tui.screens.{_PANES[mode][0]}"


def _factory(mode: str) -> Callable[[], Screen[None]]:
    def make() -> Screen[None]:
        screen_class = getattr(importlib.import_module(_screen_module(mode)), _PANES[mode][1])
        return cast("Screen[None]", screen_class())

    return make


#: Mode name -> the factory of its screen (for `App.MODES`).
LAZY_MODES: dict[str, Callable[[], Screen[None]]] = {mode: _factory(mode) for mode in _PANES}


def import_panes(before_each: Callable[[], None] = lambda: None) -> None:
    """Import the panes users open most, so the first switch to one does not wait ~0.3 s.

    Run in a thread once loading is over: the first rows no longer wait for
    these imports, and the first press of 4 or 5 does not either.
    `before_each` is called before each module (the app: wait while keys come).
    """
    for name in [*(_screen_module(mode) for mode in _OFTEN), "memlens.tui.maintenance_runs"]:
        before_each()
        importlib.import_module(name)


__all__ = ["LAZY_MODES", "import_panes"]
