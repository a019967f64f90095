"""The app's state: the loaded vaults and rows, errors, live-reload state, the one error path.

`MemlensApp` is built in layers, each a class of its own module:
`AppState` (this), `LiveReloadApp` (`app_live`), `LoadingApp`
(`app_loading`), then `MemlensApp` (`app`: keys, navigation, clipboard).
"""

from __future__ import annotations

import time
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.reactive import reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.worker import Worker, WorkerState

from memlens.core.config import Config
from memlens.core.listing import MemoryRow
from memlens.core.scan.changes import Change
from memlens.core.scan.vault import Vault

from .hints import state_dir
from .live import LiveRows
from .screens.error import ErrorModal
from .screens.main import MainScreen
from .widgets.detail import MemoryDetail
from .widgets.memory_table import MemoryTable
from .widgets.vault_sidebar import VaultSummary

if TYPE_CHECKING:
    from memlens.core.scan.watch import VaultWatcher

    from .screens.main import MainScreen


#: How many applied changes `live_log` keeps.
LIVE_LOG_SIZE = 10_000


class AppState(App[None]):
    """What the app holds: the loaded vaults and rows, errors, live state; the one error path.

    The layers above it (`LiveReloadApp`, `LoadingApp`, then `MemlensApp`)
    each add one concern and may call the layers below.
    """

    #: Bumped whenever `loaded` changes; screens watch it.
    catalog_version: reactive[int] = reactive(0, init=False, always_update=True)

    def __init__(
        self,
        paths: Sequence[Path | str] = (),
        as_of: date | None = None,
        *,
        clock: Callable[[], date] = date.today,
        config: Config | None = None,
        live_reload: bool = True,
        state_folder: Path | None = None,
        config_warnings: Sequence[str] = (),
    ) -> None:
        super().__init__()
        #: Problems found reading the config file (shown once the app runs).
        self.config_warnings: list[str] = list(config_warnings)
        #: The user's settings (defaults when none are given).
        self.config: Config = config if config is not None else Config()
        #: What the user opened (vaults are discovered below each).
        self.paths: list[Path] = [Path(p) for p in paths] or [Path(".")]
        #: The date every decay is judged at: `as_of`, else the config's,
        #: else the clock (read once, here).
        self.as_of: date = self.config.resolve_as_of(as_of, clock())
        #: Scanned vaults and their rows, in the order they started showing.
        #: A vault still being read holds its first rows (see `partial`).
        self.loaded: list[tuple[Vault, list[MemoryRow]]] = []
        #: Roots of vaults in `loaded` that are still being read.
        self.partial: set[str] = set()
        #: Every vault found, scanned or not, in discovery order.
        self.discovered: list[Vault] = []
        #: Vault root -> why scanning it failed.
        self.failed: dict[str, str] = {}
        #: (vault root, memory id) -> {reference as written: reason}.
        self.ref_issues: dict[tuple[str, str], dict[str, str]] = {}
        #: True until every vault is scanned.
        self.loading = True
        #: Every error reported to the user (title, message), newest last.
        self.errors: list[tuple[str, str]] = []
        #: Memories open in an editor, as (vault root, id): editors add and
        #: remove keys; an external change to one of them is announced.
        self.editing: set[tuple[str, str]] = set()
        #: Follow changes on disk after loading.
        self.live_reload = live_reload
        #: The running watcher (None before loading finished or without live reload).
        self.watcher: VaultWatcher | None = None
        #: Rows per vault for live reload, and the queue of computed deltas.
        self.live = LiveRows(self.as_of)
        #: Every change applied by live reload, oldest first (bounded).
        self.live_log: deque[Change] = deque(maxlen=LIVE_LOG_SIZE)
        #: Every external-change notice shown (banner or notification text).
        self.change_notices: list[str] = []
        #: Where the first-run hint is remembered.
        self.state_folder: Path = state_folder if state_folder is not None else state_dir()
        self._main_screen: MainScreen | None = None
        self._summaries: tuple[int, list[VaultSummary]] | None = None
        self._summary_cache: dict[str, tuple[list[MemoryRow], VaultSummary]] = {}
        self._generation = 0
        self._load_started = time.time()
        #: A removed memory kept on screen while it is open (see `_ghost_row`).
        self._ghost: MemoryRow | None = None
        self._graph_timer: Timer | None = None
        self._parts: tuple[MainScreen, MemoryTable, MemoryDetail] | None = None
        #: Changes waiting for the search index being built.
        self._search_backlog: list[Change] = []

    def _loaded_position(self, root: str) -> int | None:
        for i, (v, _rows) in enumerate(self.loaded):
            if str(v.root) == root:
                return i
        return None

    def _set_ref_issues(self, root: str, issues: dict[tuple[str, str], dict[str, str]]) -> None:
        self.ref_issues = {k: v for k, v in self.ref_issues.items() if k[0] != root}
        self.ref_issues.update(issues)

    def register_main_screen(self, screen: MainScreen) -> None:
        self._main_screen = screen

    def main_screen(self) -> MainScreen | None:
        """The memories screen, once it exists (it is created on first use of its mode)."""
        return self._main_screen

    def _mode_screen(self, mode: str) -> Screen[Any] | None:
        """The screen of a mode, if it was created (modes are created on first use)."""
        stack = self._screen_stacks.get(mode)
        return stack[0] if stack else None

    def report_error(self, title: str, error: BaseException | str) -> None:
        """Show an error in a modal and keep going."""
        if isinstance(error, BaseException):
            lines = traceback.format_exception_only(type(error), error)
            message = "".join(lines).strip()
        else:
            message = error
        self.errors.append((title, message))
        self.push_screen(ErrorModal(title, message))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            self.report_error(f"{event.worker.name} failed", event.worker.error)
