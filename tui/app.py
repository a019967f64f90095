"""The memlens Textual app: vaults, memories, decay triage and problems.

The app owns the loaded data and the loader thread; screens watch
`catalog_version` and read `loaded`.  Messages go up (the loader thread and
screens post them), calls go down (the app calls screen methods).  Every
failure ends in `report_error`, which opens one modal; the app never exits on
bad input.
"""

from __future__ import annotations

import argparse
import traceback
from collections.abc import Callable, Sequence
from datetime import date
from functools import partial
from pathlib import Path

from textual import work
from textual.app import App
from textual.binding import Binding
from textual.reactive import reactive
from textual.worker import Worker, WorkerState, get_current_worker

from memlens.core.errors import MemlensError
from memlens.core.listing import COLUMNS, MemoryRow, health_counts, rows_for_vault
from memlens.core.vault import Vault, discover, scan_vault

from .commands import MemlensCommands, PaletteCommand
from .messages import LoadFinished, OpenMemory, OpenRaw, VaultFailed, VaultLoaded, VaultsDiscovered
from .screens.error import ErrorModal
from .screens.graph import GraphScreen
from .screens.help import HelpScreen
from .screens.main import MainScreen
from .screens.problems import ProblemsScreen
from .screens.raw import RawScreen
from .screens.search import SearchScreen
from .screens.triage import TriageScreen
from .widgets.detail import MemoryDetail
from .widgets.vault_sidebar import VaultSummary


class MemlensApp(App[None]):
    """Browse memory vaults.  `as_of` (or `clock`) fixes the date decay is judged at."""

    CSS_PATH = "app.tcss"
    TITLE = "memlens"

    #: One mode per top-level pane (keys 1-5, palette entries in `palette_commands`).
    MODES = {
        "memories": MainScreen,
        "triage": TriageScreen,
        "problems": ProblemsScreen,
        "search": SearchScreen,
        "graph": GraphScreen,
    }
    DEFAULT_MODE = "memories"
    COMMANDS = App.COMMANDS | {MemlensCommands}

    BINDINGS = [
        Binding("1", "show('memories')", "Memories", id="app.memories"),
        Binding("2", "show('triage')", "Triage", id="app.triage"),
        Binding("3", "show('problems')", "Problems", id="app.problems"),
        Binding("4", "show('search')", "Search", id="app.search"),
        Binding("5", "show('graph')", "Graph", id="app.graph"),
        Binding("question_mark", "help", "Help", id="app.help"),
        Binding("ctrl+r", "reload", "Reload", show=False, id="app.reload"),
        Binding("q", "quit", "Quit", id="app.quit"),
    ]

    #: Bumped whenever `loaded` changes; screens watch it.
    catalog_version: reactive[int] = reactive(0, init=False, always_update=True)

    def __init__(
        self,
        paths: Sequence[Path | str] = (),
        as_of: date | None = None,
        *,
        clock: Callable[[], date] = date.today,
    ) -> None:
        super().__init__()
        #: What the user opened (vaults are discovered below each).
        self.paths: list[Path] = [Path(p) for p in paths] or [Path(".")]
        #: The date every decay is judged at (the clock is read once, here).
        self.as_of: date = as_of if as_of is not None else clock()
        #: Scanned vaults and their rows, in the order they finished.
        self.loaded: list[tuple[Vault, list[MemoryRow]]] = []
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
        self._main_screen: MainScreen | None = None
        self._summaries: tuple[int, list[VaultSummary]] | None = None

    # ------------------------------------------------------------------ loading
    def on_mount(self) -> None:
        self.sub_title = f"as of {self.as_of.isoformat()}"
        self.load(self.paths, self.as_of)

    @work(thread=True, exclusive=True, group="load", exit_on_error=False, name="load")
    def load(self, paths: list[Path], as_of: date) -> None:
        """Discover then scan vault by vault, posting each as it completes."""
        worker = get_current_worker()
        seen: set[Path] = set()
        found: list[Vault] = []
        for path in paths:
            try:
                vaults = discover(path)
            except (MemlensError, OSError) as exc:
                self.post_message(VaultFailed(str(path), exc))
                continue
            for v in vaults:
                if v.root not in seen:
                    seen.add(v.root)
                    found.append(v)
        self.post_message(VaultsDiscovered(list(found)))
        for v in found:
            if worker.is_cancelled:
                return
            try:
                scan_vault(v)
                rows = rows_for_vault(v, as_of)
            except Exception as exc:
                # Why: an adapter bug in one vault must not hide the others;
                # the failure is shown in the sidebar and the error dialog.
                self.post_message(VaultFailed(v.name, exc, v.root))
                continue
            self.post_message(VaultLoaded(v, rows))
        self.post_message(LoadFinished())

    def on_vaults_discovered(self, message: VaultsDiscovered) -> None:
        self.discovered = message.vaults
        self.catalog_version += 1

    def on_vault_loaded(self, message: VaultLoaded) -> None:
        vault = message.vault
        self.loaded.append((vault, message.rows))
        for rp in vault.ref_problems:
            key = (str(rp.vault_root), rp.id)
            self.ref_issues.setdefault(key, {})[rp.ref] = rp.reason.value
        self.catalog_version += 1

    def on_vault_failed(self, message: VaultFailed) -> None:
        if message.root is not None:
            self.failed[str(message.root)] = str(message.error)
        self.report_error(f"Could not read {message.where}", message.error)
        self.catalog_version += 1

    def on_load_finished(self, _message: LoadFinished) -> None:
        self.loading = False
        if not self.discovered and not self.failed:
            where = ", ".join(str(p) for p in self.paths)
            self.notify(f"No memory vault found at or below {where}.", severity="warning")
        self.catalog_version += 1

    def action_reload(self) -> None:
        """Scan everything again (e.g. after editing files outside memlens)."""
        self.loaded = []
        self.discovered = []
        self.failed = {}
        self.ref_issues = {}
        self.loading = True
        self.catalog_version += 1
        self.load(self.paths, self.as_of)

    def summaries(self) -> list[VaultSummary]:
        """Sidebar summaries: every discovered vault, scanned or not (cached per version)."""
        if self._summaries is not None and self._summaries[0] == self.catalog_version:
            return self._summaries[1]
        summaries = self._build_summaries()
        self._summaries = (self.catalog_version, summaries)
        return summaries

    def _build_summaries(self) -> list[VaultSummary]:
        loaded = {str(v.root): (v, rows) for v, rows in self.loaded}
        out: list[VaultSummary] = []
        for v in self.discovered:
            summary = VaultSummary(root=v.root, name=v.name, format=v.format)
            if str(v.root) in loaded:
                vault, rows = loaded[str(v.root)]
                summary.loaded = True
                summary.memories = len(vault.memories)
                summary.health = health_counts(r for r in rows if r.problem is None)
                summary.problems = len(vault.problems)
                summary.ref_problems = len(vault.ref_problems)
            summary.error = self.failed.get(str(v.root))
            out.append(summary)
        return out

    # ------------------------------------------------------------------ the one error path
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

    # ------------------------------------------------------------------ navigation
    async def action_show(self, mode: str) -> None:
        await self.switch_mode(mode)

    def register_main_screen(self, screen: MainScreen) -> None:
        self._main_screen = screen

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def main_screen(self) -> MainScreen | None:
        """The memories screen, once it exists (it is created on first use of its mode)."""
        return self._main_screen

    async def on_open_memory(self, message: OpenMemory) -> None:
        await self.switch_mode("memories")
        while len(self.screen_stack) > 1 and not isinstance(self.screen, MainScreen):
            self.pop_screen()
        main = self.main_screen()
        if main is not None and not main.select_memory(message.vault_root, message.memory_id):
            self.notify("That memory is not loaded.", severity="warning")

    def on_open_raw(self, message: OpenRaw) -> None:
        self.push_screen(RawScreen(message.path, message.line, message.title, message.needle))

    async def settle(self) -> None:
        """Wait for loading, workers and the detail body (tests, screenshots)."""
        await self.workers.wait_for_complete()
        for _ in range(3):
            await self.workers.wait_for_complete()
            for detail in self.screen.query(MemoryDetail):
                await detail.settled()

    # ------------------------------------------------------------------ palette
    def palette_commands(self) -> list[PaletteCommand]:
        """Everything the command palette offers (see `commands.MemlensCommands`)."""
        show = partial(self.run_action)
        cmds = [
            PaletteCommand("Show memories", partial(show, "show('memories')"), "key 1"),
            PaletteCommand("Show decay triage", partial(show, "show('triage')"), "key 2"),
            PaletteCommand("Show problems", partial(show, "show('problems')"), "key 3"),
            PaletteCommand("Search memories", partial(show, "show('search')"), "key 4"),
            PaletteCommand("Show relation graph", partial(show, "show('graph')"), "key 5"),
            PaletteCommand("Help: keys", self.action_help, "key ?"),
            PaletteCommand("Reload vaults", self.action_reload, "ctrl+r"),
            PaletteCommand("Filter memories", self._palette_filter, "key /"),
            PaletteCommand("Reverse sort order", partial(self._on_main, "action_sort_reverse")),
            PaletteCommand(
                "Show or hide invalid items", partial(self._on_main, "action_toggle_invalid")
            ),
        ]
        for column in COLUMNS:
            cmds.append(
                PaletteCommand(f"Sort by {column.label}", partial(self._palette_sort, column.key))
            )
        for day, label in ((1, "a day"), (7, "a week")):
            cmds.append(
                PaletteCommand(
                    f"Triage: forward {label}", partial(self._palette_triage, day), "time travel"
                )
            )
            cmds.append(
                PaletteCommand(
                    f"Triage: back {label}", partial(self._palette_triage, -day), "time travel"
                )
            )
        for i, v in enumerate(self.discovered):
            cmds.append(
                PaletteCommand(
                    f"Show vault {v.name}", partial(self._palette_vault, i + 1), v.format
                )
            )
        return cmds

    async def _on_main(self, method: str) -> None:
        await self.switch_mode("memories")
        main = self.main_screen()
        if main is not None:
            getattr(main, method)()

    async def _palette_filter(self) -> None:
        await self._on_main("action_focus_filter")

    async def _palette_sort(self, column: str) -> None:
        await self.switch_mode("memories")
        main = self.main_screen()
        if main is not None:
            main.sort_by(column)

    async def _palette_triage(self, days: int) -> None:
        await self.switch_mode("triage")
        if isinstance(self.screen, TriageScreen):
            self.screen.action_shift_days(days)

    async def _palette_vault(self, option: int) -> None:
        await self.switch_mode("memories")
        main = self.main_screen()
        if main is not None:
            main.show_vault(option)


def run_app(paths: Sequence[Path | str], as_of: date | None = None) -> None:
    """Open the app on `paths` (the CLI's `memlens [PATH...] [--as-of D]`)."""
    MemlensApp(paths, as_of).run()


def _main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m memlens.tui.app")
    parser.add_argument("paths", nargs="*", default=["."])
    parser.add_argument("--as-of", type=date.fromisoformat, default=None)
    args = parser.parse_args(argv)
    run_app(args.paths, args.as_of)


if __name__ == "__main__":
    _main()
