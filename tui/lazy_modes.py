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

from textual.screen import Screen


def _triage() -> Screen[None]:
    from .screens.triage import TriageScreen

    return TriageScreen()


def _problems() -> Screen[None]:
    from .screens.problems import ProblemsScreen

    return ProblemsScreen()


def _search() -> Screen[None]:
    from .screens.search import SearchScreen

    return SearchScreen()


def _graph() -> Screen[None]:
    from .screens.graph import GraphScreen

    return GraphScreen()


def _episodes() -> Screen[None]:
    from .screens.episodes import EpisodesScreen

    return EpisodesScreen()


def _preview() -> Screen[None]:
    from .screens.preview import PreviewScreen

    return PreviewScreen()


def _privacy() -> Screen[None]:
    from .screens.privacy import PrivacyScreen

    return PrivacyScreen()


def _review() -> Screen[None]:
    from .screens.review import ReviewScreen

    return ReviewScreen()


#: Mode name -> the factory of its screen (the memories list is not here: it is the first shown).
LAZY_MODES: dict[str, Callable[[], Screen[None]]] = {
    "triage": _triage,
    "problems": _problems,
    "search": _search,
    "graph": _graph,
    "episodes": _episodes,
    "preview": _preview,
    "privacy": _privacy,
    "review": _review,
}

#: Modules `import_panes` loads once the vaults are listed.
_PANE_MODULES = (
    "memlens.tui.screens.search",
    "memlens.tui.screens.graph",
    "memlens.tui.screens.triage",
    "memlens.tui.screens.problems",
    "memlens.tui.maintenance_runs",
)


def import_panes() -> None:
    """Import the panes users open most, so the first switch to one does not wait ~0.3 s.

    Run in a thread once loading is over: the first rows no longer wait for
    these imports, and the first press of 4 or 5 does not either.
    """
    for name in _PANE_MODULES:
        importlib.import_module(name)


__all__ = ["LAZY_MODES", "import_panes"]
