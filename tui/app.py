"""The memlens Textual app: vaults, memories, decay triage, problems, episodes.

The app owns the loaded data, the loader thread and the live-reload watcher;
screens watch `catalog_version` and read `loaded`.  Messages go up (the
loader thread, the watcher thread and screens post them), calls go down
(the app calls screen methods).  Every failure ends in `report_error`, which
opens one modal; the app never exits on bad input.

Live reload (`tui/live.py`): after loading, a `VaultWatcher` follows the
vaults; its changes become row deltas in the watcher thread and are applied
here, in place, keeping the cursor on the same memory and the view where it
was.  `refresh_paths` does the same at once after memlens itself wrote files.

The class is built in layers, one concern each: `app_state.AppState` (what
the app holds, the error path), `app_live.LiveReloadApp`,
`app_loading.LoadingApp`, `app_privacy.PrivacyApp` (the secrets scan), then
`MemlensApp` here (modes, keys, navigation, clipboard); the config is
applied by `app_config`, the palette's entries come from `app_palette`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

from memlens.core.config import Config

from .app_config import apply_config, binding_ids
from .app_palette import palette_commands
from .app_privacy import PrivacyApp
from .commands import MemlensCommands, PaletteCommand
from .hints import HINT_TEXT, hint_seen, mark_hint_seen
from .lazy_modes import LAZY_MODES
from .messages import OpenMemory, OpenRaw
from .safe_text import visible
from .screens.base import MemlensScreen
from .screens.main import MainScreen
from .widgets.detail import MemoryDetail
from .widgets.hint_bar import HintBar
from .widgets.memory_table import MemoryTable

if TYPE_CHECKING:
    pass

__all__ = ["MemlensApp", "binding_ids", "run_app"]

#: Seconds the first-run hint stays unless dismissed.
HINT_SECONDS = 30.0
#: Seconds quitting waits for the live-reload watcher's threads to stop.
QUIT_WAIT = 0.5


class MemlensApp(PrivacyApp):
    """Browse memory vaults.  `as_of` (or the config's, or `clock`) fixes the decay date."""

    CSS_PATH = "app.tcss"
    TITLE = "memlens"

    #: One mode per top-level pane (keys 1-6, palette entries in `palette_commands`).
    #: The other panes' modules load when first shown (`lazy_modes`).
    MODES = {"memories": MainScreen, **LAZY_MODES}
    DEFAULT_MODE = "memories"
    COMMANDS = App.COMMANDS | {MemlensCommands}

    BINDINGS = [
        Binding("1", "show('memories')", "Memories", id="app.memories"),
        Binding("2", "show('triage')", "Triage", id="app.triage"),
        Binding("3", "show('problems')", "Problems", id="app.problems"),
        Binding("4", "show('search')", "Search", id="app.search"),
        Binding("5", "show('graph')", "Graph", id="app.graph"),
        Binding("6", "show('episodes')", "Episodes", id="app.episodes"),
        # No description yet: a described key would shift the help screen
        # (its snapshot); the palette offers it as "Show what the agent sees".
        Binding("7", "show('privacy')", "", show=False, id="app.privacy"),
        Binding("8", "show('preview')", "", show=False, id="app.preview"),
        # The review queue (issue 21 item 1); palette: "Review duplicates and contradictions".
        Binding("9", "show('review')", "", show=False, id="app.review"),
        Binding("question_mark", "help", "Help", id="app.help"),
        Binding(
            "y",
            "copy_id",
            "Copy id",
            show=False,
            tooltip="Copy the id of the memory under the cursor",
            id="app.copy_id",
        ),
        Binding(
            "Y",
            "copy_path",
            "Copy path",
            show=False,
            tooltip="Copy the file path of the memory under the cursor",
            id="app.copy_path",
        ),
        Binding("ctrl+r", "reload", "Reload", show=False, id="app.reload"),
        Binding("q", "quit", "Quit", id="app.quit"),
    ]

    def on_mount(self) -> None:
        self.sub_title = f"as of {self.as_of.isoformat()}"
        apply_config(self)
        self.call_after_refresh(self._show_first_run_hint)
        self.load(self.paths, self.as_of, self._generation)

    def on_unmount(self) -> None:
        # Quitting does not wait for a watcher still listing a big vault
        # (its first walk lists every file: ~3 s at 100k); its threads are
        # daemons and stop at their next check.
        self._stop_watching(wait=QUIT_WAIT)

    def _show_first_run_hint(self) -> None:
        folder = self.state_folder
        if hint_seen(folder):
            return
        mark_hint_seen(folder)
        screen = self.main_screen()
        if screen is not None and screen.is_mounted:
            bar = HintBar(HINT_TEXT, id="first-run-hint")
            screen.mount(bar, before=0 if screen.children else None)
            self.set_timer(HINT_SECONDS, self._dismiss_hint)

    def _dismiss_hint(self) -> None:
        main = self.main_screen()
        if main is not None:
            for bar in main.query(HintBar):
                bar.remove()

    async def action_show(self, mode: str) -> None:
        await self.switch_mode(mode)

    def action_help(self) -> None:
        from .screens.help import HelpScreen

        self._dismiss_hint()
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    async def on_open_memory(self, message: OpenMemory) -> None:
        await self.switch_mode("memories")
        while len(self.screen_stack) > 1 and not isinstance(self.screen, MainScreen):
            self.pop_screen()
        main = self.main_screen()
        if main is not None and not main.select_memory(message.vault_root, message.memory_id):
            self.notify("That memory is not loaded.", severity="warning")

    def on_open_raw(self, message: OpenRaw) -> None:
        from .screens.raw import RawScreen

        self.push_screen(RawScreen(message.path, message.line, message.title, message.needle))

    async def settle(self) -> None:
        """Wait for loading, workers and the detail body (tests, screenshots)."""
        await self.workers.wait_for_complete()
        for _ in range(3):
            await self.workers.wait_for_complete()
            for detail in self.screen.query(MemoryDetail):
                await detail.settled()

    async def on_event(self, event: events.Event) -> None:
        # The first-run hint goes once the user presses `?` (it names it).
        if isinstance(event, events.Key) and event.key == "question_mark":
            self._dismiss_hint()
        await super().on_event(event)

    def current_memory(self) -> tuple[str, Path] | None:
        """(id, file path) of the memory (or invalid item) under the cursor, on any screen."""
        screen = self.screen
        if isinstance(screen, MainScreen):
            row = screen.query_one(MemoryTable).current_row()
            if row is None:
                return None
            if row.memory is not None:
                return row.memory.id, row.memory.abs_path
            if row.problem is not None:
                return row.id, row.problem.vault_root / row.problem.path
            return None
        memory = screen.current_memory() if isinstance(screen, MemlensScreen) else None
        if memory is None:
            return None
        return memory.id, memory.abs_path

    def action_copy_id(self) -> None:
        self._copy(0)

    def action_copy_path(self) -> None:
        self._copy(1)

    def _copy(self, which: int) -> None:
        target = self.current_memory()
        if target is None:
            self.notify("No memory under the cursor to copy.", severity="warning")
            return
        text = str(target[which])
        self.copy_to_clipboard(text)
        label = "id" if which == 0 else "path"
        self.notify(f"Copied {label}: {visible(text)}", markup=False, timeout=4)

    def palette_commands(self, screen: Screen[Any] | None = None) -> list[PaletteCommand]:
        """Everything the command palette offers (see `app_palette.palette_commands`)."""
        return palette_commands(self, screen)


def run_app(
    paths: Sequence[Path | str],
    as_of: date | None = None,
    config: Config | None = None,
    config_warnings: Sequence[str] = (),
) -> None:
    """Open the app on `paths` (the CLI's `memlens [PATH...] [--as-of D]`)."""
    MemlensApp(paths, as_of, config=config, config_warnings=config_warnings).run()


def _main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m memlens.tui.app")
    parser.add_argument("paths", nargs="*", default=["."])
    parser.add_argument("--as-of", type=date.fromisoformat, default=None)
    args = parser.parse_args(argv)
    run_app(args.paths, args.as_of)


if __name__ == "__main__":
    _main()
