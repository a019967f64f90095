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
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gc
import importlib
import pkgutil
import time
import traceback
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import date
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events, work
from textual.app import App
from textual.binding import Binding
from textual.dom import DOMNode
from textual.reactive import reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.worker import Worker, WorkerState, get_current_worker

from memlens.core.config import Config
from memlens.core.errors import MemlensError
from memlens.core.listing import COLUMNS, MemoryRow, health_counts, memory_row, rows_for_vault
from memlens.core.model import Memory
from memlens.core.scan.cache import ScanProgress
from memlens.core.scan.changes import Change, ChangeKind, diff_results
from memlens.core.scan.vault import (
    Catalog,
    Vault,
    rescan_paths,
    scan_progressive,
    start_walk_ahead,
    survey,
)
from memlens.core.scan.walk_ahead import WalkAhead
from memlens.core.write.recovery import needs_recovery, recover

from .action_common import tell
from .commands import MemlensCommands, PaletteCommand
from .hints import HINT_TEXT, hint_seen, mark_hint_seen, state_dir
from .live import LiveRows, VaultDelta, keep_place, place_of, ref_issues_of
from .maintenance_runs import palette_commands as actions_palette_commands
from .messages import (
    LiveChanges,
    LiveFailed,
    LoadFinished,
    OpenMemory,
    OpenRaw,
    VaultFailed,
    VaultLoaded,
    VaultProgress,
    VaultsDiscovered,
)
from .safe_text import visible
from .screens.episodes import EpisodesScreen
from .screens.error import ErrorModal
from .screens.graph import GraphScreen
from .screens.help import HelpScreen
from .screens.main import MainScreen
from .screens.problems import ProblemsScreen
from .screens.raw import RawScreen
from .screens.search import SearchScreen
from .screens.triage import TriageScreen
from .widgets.detail import MemoryDetail
from .widgets.hint_bar import HintBar
from .widgets.live_banner import LiveBanner
from .widgets.memory_table import MemoryTable
from .widgets.vault_sidebar import VaultSummary

if TYPE_CHECKING:
    from memlens.core.scan.watch import VaultWatcher

#: Memories per progressive-load step (first rows show after this many).
LOAD_BATCH = 2000
#: Seconds a vault may take to read before its early (unlinked) rows are shown
#: (the app's very first batch always is).  Early rows cost a decay pass of
#: their own and work on the UI thread (a cold 100k load took 13.0 s with
#: them after 0.5 s, 9.3-12.7 s without); meanwhile the sidebar shows the
#: vault as scanning.
PROGRESS_AFTER = 5.0
#: Seconds between graph rebuilds caused by live changes.
GRAPH_REBUILD_DELAY = 2.0
#: How many applied changes `live_log` keeps.
LIVE_LOG_SIZE = 10_000
#: Seconds the first-run hint stays unless dismissed.
HINT_SECONDS = 30.0


class MemlensApp(App[None]):
    """Browse memory vaults.  `as_of` (or the config's, or `clock`) fixes the decay date."""

    CSS_PATH = "app.tcss"
    TITLE = "memlens"

    #: One mode per top-level pane (keys 1-6, palette entries in `palette_commands`).
    MODES = {
        "memories": MainScreen,
        "triage": TriageScreen,
        "problems": ProblemsScreen,
        "search": SearchScreen,
        "graph": GraphScreen,
        "episodes": EpisodesScreen,
    }
    DEFAULT_MODE = "memories"
    COMMANDS = App.COMMANDS | {MemlensCommands}

    BINDINGS = [
        Binding("1", "show('memories')", "Memories", id="app.memories"),
        Binding("2", "show('triage')", "Triage", id="app.triage"),
        Binding("3", "show('problems')", "Problems", id="app.problems"),
        Binding("4", "show('search')", "Search", id="app.search"),
        Binding("5", "show('graph')", "Graph", id="app.graph"),
        Binding("6", "show('episodes')", "Episodes", id="app.episodes"),
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

    # ------------------------------------------------------------------ start-up
    def on_mount(self) -> None:
        self.sub_title = f"as of {self.as_of.isoformat()}"
        self._apply_config()
        self.call_after_refresh(self._show_first_run_hint)
        self.load(self.paths, self.as_of, self._generation)

    def on_unmount(self) -> None:
        self._stop_watching()

    def _apply_config(self) -> None:
        """Theme and keymap from the config: what only the app can check."""
        for warning in self.config_warnings:
            # Already printed to stderr, but the app's screen hides it.
            self.errors.append(("config", warning))
            self.notify(visible(warning), title="Config", severity="warning", markup=False)
        theme = self.config.theme
        if theme is not None:
            if theme in self.available_themes:
                self.theme = theme
            else:
                known = ", ".join(sorted(self.available_themes))
                self._config_warning(f"theme: unknown theme {theme!r}; known: {known}")
        keymap = dict(self.config.keymap)
        if keymap:
            known_ids = binding_ids()
            unknown = sorted(k for k in keymap if k not in known_ids)
            for binding_id in unknown:
                self._config_warning(f"keymap.{binding_id}: no binding with this id; ignored")
            self.set_keymap({k: v for k, v in keymap.items() if k in known_ids})

    def _config_warning(self, text: str) -> None:
        where = str(self.config.path) if self.config.path is not None else "config"
        message = f"{where}: {text}"
        self.errors.append(("config", message))
        self.notify(visible(message), title="Config", severity="warning", markup=False, timeout=8)

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

    # ------------------------------------------------------------------ loading
    def _recover(self, vaults: list[Vault]) -> None:
        """Roll back actions a crash interrupted, before reading (from the load worker)."""
        for v in vaults:
            if not needs_recovery(v.root):
                continue
            try:
                lines = recover(v.root).lines()
            except (MemlensError, OSError) as exc:
                lines = [f"{v.root}: could not recover an interrupted action: {exc}"]
            for line in lines:
                self.call_from_thread(tell, self, line, "warning")

    @work(thread=True, exclusive=True, group="load", exit_on_error=False, name="load")
    def load(self, paths: list[Path], as_of: date, generation: int = 0) -> None:
        """Discover, then read vault by vault: first rows early, each vault when linked."""
        worker = get_current_worker()
        seen: set[Path] = set()
        found: list[Vault] = []
        for path in paths:
            try:
                vaults, unreadable = survey(path)
            except (MemlensError, OSError) as exc:
                self.post_message(VaultFailed(str(path), exc))
                continue
            if unreadable:
                # Folders that may hold a vault but cannot be listed: one
                # report for all of them; every other vault still loads.
                where = ", ".join(str(p.vault_root / p.path) for p in unreadable)
                self.post_message(VaultFailed(where, MemlensError(unreadable[0].detail)))
            for v in vaults:
                if v.root not in seen:
                    seen.add(v.root)
                    found.append(v)
        self._recover(found)
        self.post_message(VaultsDiscovered(list(found)))
        shown = [False]  # any rows posted yet (set by `_scan_one`)
        # Scans whose cache file is still to be written: after every vault is listed.
        unsaved: list[Iterator[ScanProgress]] = []
        # On a warm start another process stat-walks the vaults meanwhile.
        ahead = start_walk_ahead(found, cache=self.config.cache)
        try:
            for v in found:
                if worker.is_cancelled:
                    return
                try:
                    rest = self._scan_one(v, as_of, generation, shown, ahead)
                except Exception as exc:
                    # Why: an adapter bug in one vault must not hide the others;
                    # the failure is shown in the sidebar and the error dialog.
                    self.post_message(VaultFailed(v.name, exc, v.root))
                else:
                    if rest is not None:
                        unsaved.append(rest)
        finally:
            if ahead is not None:
                ahead.close()
        if worker.is_cancelled:
            return
        self.post_message(LoadFinished(generation))
        for rest in unsaved:
            if worker.is_cancelled:
                return
            with contextlib.suppress(Exception):  # a cache not written is only slower
                for _ in rest:
                    pass

    def _scan_one(
        self,
        vault: Vault,
        as_of: date,
        generation: int,
        shown: list[bool],
        ahead: WalkAhead | None = None,
    ) -> Iterator[ScanProgress] | None:
        """One vault: early rows if reading it takes a while, the linked rows, the cache.

        Early rows cost a second decay pass, so they are only shown when
        they help: for the very first rows of the app, or once a vault has
        been read for PROGRESS_AFTER seconds (a cold parse).  A vault served
        whole from the cache gives at most the app's first batch early: its
        linked rows follow at once.
        """
        worker = get_current_worker()
        started = time.perf_counter()
        pending: list[Memory] = []
        steps: Iterator[ScanProgress] = scan_progressive(
            vault, batch=LOAD_BATCH, cache=self.config.cache, ahead=ahead
        )
        for progress in steps:
            if worker.is_cancelled:
                return None
            if progress.done:
                # Rows of the linked result replace the early ones.  The
                # cache file is written when the caller finishes `steps`:
                # after every vault is listed.
                self.post_message(VaultLoaded(vault, rows_for_vault(vault, as_of), generation))
                shown[0] = True
                return steps
            stats = progress.stats
            if shown[0] and stats.files and stats.reused == stats.files:
                # Every file comes from the cache: the linked rows follow
                # without a parse, so more early rows would only delay them
                # (the app's very first batch still paints at once).
                continue
            pending.extend(progress.memories)
            elapsed = time.perf_counter() - started
            if pending and (not shown[0] or elapsed >= PROGRESS_AFTER):
                rows = [memory_row(vault.name, m, as_of) for m in pending]
                pending = []
                self.post_message(VaultProgress(vault, rows, generation))
                shown[0] = True
        return None  # cancelled before the vault was linked

    def on_vaults_discovered(self, message: VaultsDiscovered) -> None:
        self.discovered = message.vaults
        self.catalog_version += 1

    def on_vault_progress(self, message: VaultProgress) -> None:
        if message.generation != self._generation:
            return
        root = str(message.vault.root)
        position = self._loaded_position(root)
        if position is None:
            self.partial.add(root)
            self.loaded.append((message.vault, list(message.rows)))
            self.catalog_version += 1
            return
        vault, rows = self.loaded[position]
        self.loaded[position] = (vault, rows + message.rows)
        for r in message.rows:
            r.order = -1  # after everything shown: this vault is the last one read
        self._update_main(
            [VaultDelta(vault, "update", rows + message.rows, added=list(message.rows))]
        )
        self.catalog_version += 1

    def on_vault_loaded(self, message: VaultLoaded) -> None:
        if message.generation != self._generation:
            return
        vault = message.vault
        root = str(vault.root)
        self.live.register(vault, message.rows)
        self._set_ref_issues(root, ref_issues_of(vault))
        position = self._loaded_position(root)
        if position is None:
            self.loaded.append((vault, message.rows))
        else:
            # Early rows out, linked rows in (same place in the list).
            _vault, early = self.loaded[position]
            self.loaded[position] = (vault, message.rows)
            self.partial.discard(root)
            for r in message.rows:
                r.order = -1
            self._update_main(
                [VaultDelta(vault, "update", message.rows, added=message.rows, removed=early)],
                by_key=True,
            )
        self.catalog_version += 1

    def on_vault_failed(self, message: VaultFailed) -> None:
        if message.root is not None:
            root = str(message.root)
            self.failed[root] = str(message.error)
            position = self._loaded_position(root)
            if position is not None and root in self.partial:
                # Its early rows go: the vault could not be read to the end.
                _vault, early = self.loaded.pop(position)
                self.partial.discard(root)
                self._update_main([VaultDelta(_vault, "dropped", [], removed=early)])
        self.report_error(f"Could not read {message.where}", message.error)
        self.catalog_version += 1

    def on_load_finished(self, message: LoadFinished) -> None:
        if message.generation != self._generation:
            return
        self.loading = False
        if not self.discovered and not self.failed:
            where = ", ".join(str(p) for p in self.paths)
            self.notify(
                f"No memory vault found at or below {where}.", severity="warning", markup=False
            )
        self.catalog_version += 1
        # Why: 100k memories are millions of long-lived objects; without this
        # every full collection walks them all (100+ ms pauses in the middle
        # of a live update).  Frozen objects are still freed by refcounting.
        gc.collect()
        gc.freeze()
        if self.live_reload:
            self._start_watching()

    def action_reload(self) -> None:
        """Scan everything again (e.g. after editing files outside memlens)."""
        self._stop_watching()
        self._generation += 1
        self._load_started = time.time()
        self.loaded = []
        self.partial = set()
        self.discovered = []
        self.failed = {}
        self.ref_issues = {}
        self.live.clear()
        self._ghost = None
        self.loading = True
        self.catalog_version += 1
        self.load(self.paths, self.as_of, self._generation)

    def _loaded_position(self, root: str) -> int | None:
        for i, (v, _rows) in enumerate(self.loaded):
            if str(v.root) == root:
                return i
        return None

    def _set_ref_issues(self, root: str, issues: dict[tuple[str, str], dict[str, str]]) -> None:
        self.ref_issues = {k: v for k, v in self.ref_issues.items() if k[0] != root}
        self.ref_issues.update(issues)

    # ------------------------------------------------------------------ sidebar summaries
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
        cache: dict[str, tuple[list[MemoryRow], VaultSummary]] = {}
        for v in self.discovered:
            root = str(v.root)
            summary = VaultSummary(root=v.root, name=v.name, format=v.format)
            if root in loaded and root not in self.partial:
                vault, rows = loaded[root]
                cached = self._summary_cache.get(root)
                if cached is not None and cached[0] is rows:
                    # Live reload replaces a vault's row list when it changes:
                    # an unchanged list needs no recount (100k rows: ~20 ms).
                    summary = cached[1]
                else:
                    summary.loaded = True
                    summary.memories = len(vault.memories)
                    summary.health = health_counts(r for r in rows if r.problem is None)
                    summary.problems = len(vault.problems)
                    summary.ref_problems = len(vault.ref_problems)
                cache[root] = (rows, summary)
            error = self.failed.get(root)
            if summary.error != error:
                # A new object: the sidebar compares with the list it shows.
                summary = dataclasses.replace(summary, error=error)
            out.append(summary)
        self._summary_cache = cache
        return out

    # ------------------------------------------------------------------ live reload
    def _start_watching(self) -> None:
        """Follow the loaded vaults on disk (a thread of its own, not a worker)."""
        from memlens.core.scan.watch import VaultWatcher

        self._stop_watching()
        vaults = [v for v, _ in self.loaded if str(v.root) not in self.partial]
        watcher = VaultWatcher(
            Catalog(vaults),
            partial(self._watch_changes, self.live.epoch),
            paths=self.paths,
            since=self._load_started,
            on_error=self._watch_error,
        )
        self.watcher = watcher
        watcher.start()

    def _stop_watching(self) -> None:
        watcher, self.watcher = self.watcher, None
        if watcher is not None:
            watcher.stop()

    @property
    def live_ready(self) -> bool:
        """True once the watcher follows the vaults (tests wait for it)."""
        return self.watcher is not None and self.watcher.ready.is_set()

    def _watch_changes(self, epoch: int, changes: list[Change]) -> None:
        """Watcher thread: compute row deltas here, wake the UI to show them."""
        watcher = self.watcher
        if watcher is None:
            return
        with watcher.lock:
            vaults = list(watcher.catalog.vaults)
        if self.live.submit(changes, vaults, epoch):
            self.post_message(LiveChanges())

    def _watch_error(self, error: BaseException) -> None:
        # Watcher thread: never block it on the UI (it may be shutting down).
        self.post_message(LiveFailed(error))

    def on_live_failed(self, message: LiveFailed) -> None:
        self.report_error("Live reload", message.error)

    def on_live_changes(self, _message: LiveChanges) -> None:
        self._drain_live()

    def refresh_paths(self, paths: Iterable[Path | str]) -> None:
        """Re-read these files now and show the result (call after memlens wrote them).

        Only the vaults holding the paths are touched, each through
        `rescan_paths`; rows, the search index and the graph follow as for a
        change on disk, silently (the changes count as memlens's own).
        Paths outside every loaded vault are ignored.  Safe while the watcher
        runs (its lock is held); the watcher's own notice for the same write
        later changes nothing visible.
        """
        by_vault: dict[str, tuple[Vault, list[Path]]] = {}
        vaults = [v for v, _ in self.loaded if str(v.root) not in self.partial]
        for item in paths:
            path = Path(item).resolve()  # vault roots are resolved too
            for v in vaults:
                if path == v.root or path.is_relative_to(v.root):
                    by_vault.setdefault(str(v.root), (v, []))[1].append(path)
                    break
        if not by_vault:
            return
        watcher = self.watcher
        lock = watcher.lock if watcher is not None else contextlib.nullcontext()
        changes: list[Change] = []
        with lock:
            for vault, changed in by_vault.values():
                before = vault.result
                after = rescan_paths(vault, changed)
                found = diff_results(before, after, everything=vault.last_rescan_vault_wide)
                changes += [_own(c) for c in found]
            current = list(watcher.catalog.vaults) if watcher is not None else vaults
        if changes:
            self.live.submit(changes, current)
            self._drain_live()

    def _drain_live(self) -> None:
        """Show every queued delta: rows, sidebar, screens, search index, graph, notices."""
        deltas = self.live.take()
        if not deltas:
            return
        row_deltas: list[VaultDelta] = []
        for delta in deltas:
            root = delta.root
            self.live_log.extend(delta.changes)
            position = self._loaded_position(root)
            if delta.kind == "new":
                if position is None:
                    # The memories screen takes the new batch from `loaded`.
                    self.loaded.append((delta.vault, delta.rows))
                if all(str(v.root) != root for v in self.discovered):
                    self.discovered = [*self.discovered, delta.vault]
                self.failed.pop(root, None)
            elif delta.kind == "dropped":
                if position is not None:
                    self.loaded.pop(position)
                self.discovered = [v for v in self.discovered if str(v.root) != root]
                row_deltas.append(delta)
                # Now, before any vault is appended: the memories screen sees
                # `loaded` shrink and rebuilds, then takes new vaults as usual.
                self.catalog_version += 1
            elif position is not None:
                _vault, before = self.loaded[position]
                self.loaded[position] = (delta.vault, delta.rows)
                self._count_delta(before, delta)
                row_deltas.append(delta)
            self._set_ref_issues(root, delta.ref_issues)
        if row_deltas:
            self._update_main(row_deltas, by_key=False)
        self._announce(deltas)
        self._feed_search([c for d in deltas for c in d.changes])
        self._invalidate_graph()
        self.catalog_version += 1

    def _count_delta(self, before: list[MemoryRow], delta: VaultDelta) -> None:
        """The vault's sidebar summary after `delta`, from the one before (no recount)."""
        cached = self._summary_cache.get(delta.root)
        if cached is None or cached[0] is not before:
            return
        old = cached[1]
        health = Counter(old.health)
        for r in [*delta.removed, *(o for o, _ in delta.replaced)]:
            if r.problem is None:
                health[r.health] -= 1
        for r in [*delta.added, *(n for _, n in delta.replaced)]:
            if r.problem is None:
                health[r.health] += 1
        vault = delta.vault
        summary = dataclasses.replace(
            old,
            memories=len(vault.memories),
            health=+health,
            problems=len(vault.problems),
            ref_problems=len(vault.ref_problems),
        )
        self._summary_cache[delta.root] = (delta.rows, summary)

    def _update_main(self, deltas: list[VaultDelta], *, by_key: bool = True) -> None:
        """Change the memories screen's rows in place, keeping the cursor and the view."""
        parts = self._main_parts()
        if parts is None:
            return
        main, table, detail = parts
        model = main.model
        current = table.current_row()
        before = place_of(table, current)
        target = current
        open_row = detail.row
        for delta in deltas:
            removed = delta.removed
            replaced = list(delta.replaced)
            added = list(delta.added)
            ghost = self._ghost
            if ghost is not None:
                # A memory that comes back while its ghost is shown takes its place.
                back = next((r for r in added if r.key == ghost.key), None)
                if back is not None:
                    added = [r for r in added if r is not back]
                    replaced.append((ghost, back))
                    self._ghost = None
                    if target is ghost:
                        target = back
            if target is not None and any(r is target for r in removed):
                same = next((r for r in added if r.key == target.key), None)
                if same is not None:
                    target = same
                elif target.problem is None and target is open_row and not by_key:
                    # Keep the memory being read on screen, marked removed,
                    # until the cursor leaves it (see `_ghost_row`).
                    removed = [r for r in removed if r is not target]
                    self._ghost_row(target)
            for old, new in replaced:
                if old is target:
                    target = new
            model.update(replaced=replaced, added=added, removed=removed)
        keep_place(table, model, before, target)
        if target is not None and target is not current and open_row is current:
            # The row being read changed: show the new content now (the
            # debounced redraw would also scroll the detail back to the top).
            self._rerender_detail(main, detail, target)

    def _ghost_row(self, row: MemoryRow) -> None:
        row.when = "removed"
        row.status = "removed from disk"
        self._ghost = row

    def _rerender_detail(self, main: MainScreen, detail: MemoryDetail, row: MemoryRow) -> None:
        y = detail.scroll_y
        main.show_detail(row)

        async def restore() -> None:
            await detail.settled()
            detail.scroll_to(y=y, animate=False, immediate=True)

        self.run_worker(restore(), group="live-detail", name="live detail")

    def on_memory_table_highlighted(self, event: MemoryTable.Highlighted) -> None:
        """The cursor left a removed memory's ghost, or the banner's memory: tidy up."""
        ghost = self._ghost
        parts = self._main_parts()
        if parts is None:
            return
        main, table, detail = parts
        banner = self._banner(detail, create=False)
        if banner is not None and banner.key is not None and banner.key != event.row.key:
            banner.hide()
        if ghost is not None and event.row is not ghost:
            self._ghost = None
            current = table.current_row()
            before = place_of(table, current)
            main.model.update(removed=[ghost])
            keep_place(table, main.model, before, current)

    def _main_parts(self) -> tuple[MainScreen, MemoryTable, MemoryDetail] | None:
        """The memories screen with its list and detail, once they are mounted."""
        main = self.main_screen()
        if main is None or not main.is_mounted:
            return None
        parts = self._parts
        if parts is not None and parts[0] is main and parts[1].is_attached and parts[2].is_attached:
            return parts  # a DOM query costs milliseconds on every live change
        tables = main.query(MemoryTable)
        details = main.query(MemoryDetail)
        if not tables or not details:
            return None  # still composing: the loader's rows arrive through `loaded`
        self._parts = (main, tables.first(), details.first())
        return self._parts

    def _banner(self, detail: MemoryDetail, *, create: bool = True) -> LiveBanner | None:
        found = detail.query(LiveBanner)
        if found:
            return found.first()
        if not create:
            return None
        banner = LiveBanner(id="live-banner")
        detail.mount(banner, before=0)
        return banner

    def _announce(self, deltas: list[VaultDelta]) -> None:
        """Tell the user about external changes to what they read or edit; own ones are silent."""
        parts = self._main_parts()
        detail = parts[2] if parts is not None else None
        open_row = detail.row if detail is not None else None
        open_key = open_row.key if open_row is not None else None
        for delta in deltas:
            for change in delta.changes:
                key = change.key
                if change.own or key is None or not change.is_memory:
                    continue
                title = change.memory.title if change.memory is not None else change.id or ""
                kind = change.kind
                what = {
                    ChangeKind.REMOVED: "was removed from disk",
                    ChangeKind.UNKNOWN: "cannot be read right now",
                }.get(kind, "changed on disk")
                if key in self.editing:
                    text = f"{visible(title)} {what} while you edit it"
                    self.change_notices.append(text)
                    self.notify(text, title="Changed on disk", severity="warning", markup=False)
                if key == open_key and detail is not None:
                    ghost = self._ghost
                    if kind is ChangeKind.REMOVED and (ghost is None or ghost.key != key):
                        continue  # it came back in the same batch: a plain change
                    banner_kind = {
                        ChangeKind.REMOVED: "removed",
                        ChangeKind.UNKNOWN: "unknown",
                    }.get(kind, "changed")
                    clock = time.strftime("%H:%M:%S")
                    text = f"{'✗' if banner_kind == 'removed' else '↻'} {what} ({clock})"
                    if banner_kind == "removed":
                        text += ": the last content read is shown"
                    banner = self._banner(detail)
                    if banner is not None:
                        banner.show_notice(key, banner_kind, text)
                    self.change_notices.append(f"{visible(title)} {what}")

    def _feed_search(self, changes: list[Change]) -> None:
        """Bring the search pane's index in step (incremental; it rebuilds when it must)."""
        screen = self._mode_screen("search")
        if not isinstance(screen, SearchScreen) or not changes:
            return
        if not screen.index_ready:
            # An index being built may have read the vaults before these
            # changes: apply them once it is there (applying twice is harmless).
            self._search_backlog.extend(changes)
            return
        self._apply_search_changes(screen, changes)

    def on_search_screen_index_built(self, _message: SearchScreen.IndexBuilt) -> None:
        screen = self._mode_screen("search")
        backlog, self._search_backlog = self._search_backlog, []
        if isinstance(screen, SearchScreen) and backlog:
            self._apply_search_changes(screen, backlog)

    @work(thread=True, group="live-search", exit_on_error=False, name="search update")
    def _apply_search_changes(self, screen: SearchScreen, changes: list[Change]) -> None:
        """Off the UI thread, under the pane's index lock (queries hold it too)."""
        rebuild = screen.apply_changes(changes)
        self.call_from_thread(self._search_updated, screen, rebuild)

    def _search_updated(self, screen: SearchScreen, rebuild: bool) -> None:
        if screen.is_mounted:
            screen.changes_applied(rebuild)

    def _invalidate_graph(self) -> None:
        """Rebuild the graph after changes, at most every GRAPH_REBUILD_DELAY seconds."""
        screen = self._mode_screen("graph")
        if not isinstance(screen, GraphScreen) or self._graph_timer is not None:
            return

        def rebuild() -> None:
            self._graph_timer = None
            if screen.is_mounted and not self.loading:
                screen.rebuild()

        self._graph_timer = self.set_timer(GRAPH_REBUILD_DELAY, rebuild)

    def _mode_screen(self, mode: str) -> Screen[Any] | None:
        """The screen of a mode, if it was created (modes are created on first use)."""
        stack = self._screen_stacks.get(mode)
        return stack[0] if stack else None

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
        self._dismiss_hint()
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

    async def on_event(self, event: events.Event) -> None:
        # The first-run hint goes once the user presses `?` (it names it).
        if isinstance(event, events.Key) and event.key == "question_mark":
            self._dismiss_hint()
        await super().on_event(event)

    # ------------------------------------------------------------------ clipboard
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
        memory: Memory | None = None
        getter = getattr(screen, "current_memory", None)
        if callable(getter):
            found = getter()
            memory = found if isinstance(found, Memory) else None
        elif isinstance(screen, SearchScreen):
            from .widgets.search_results import SearchResults

            hit = screen.query_one(SearchResults).current()
            memory = hit.memory if hit is not None else None
        elif isinstance(screen, GraphScreen):
            from .widgets.graph_view import GraphView

            layout_row = screen.query_one(GraphView).current()
            main = self.main_screen()
            if layout_row is not None and layout_row.key is not None and main is not None:
                row = main.model.find(*layout_row.key)
                memory = row.memory if row is not None else None
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

    # ------------------------------------------------------------------ palette
    def palette_commands(self, screen: Screen[Any] | None = None) -> list[PaletteCommand]:
        """Everything the command palette offers (see `commands.MemlensCommands`).

        `screen` is the screen the palette was opened over: the keys active
        there (its widgets' and its own) are offered too, so every action
        with a key is also a command.
        """
        show = partial(self.run_action)
        cmds = [
            PaletteCommand("Show memories", partial(show, "show('memories')"), "key 1"),
            PaletteCommand("Show decay triage", partial(show, "show('triage')"), "key 2"),
            PaletteCommand("Show problems", partial(show, "show('problems')"), "key 3"),
            PaletteCommand("Search memories", partial(show, "show('search')"), "key 4"),
            PaletteCommand("Show relation graph", partial(show, "show('graph')"), "key 5"),
            PaletteCommand("Show episodes timeline", partial(show, "show('episodes')"), "key 6"),
            PaletteCommand("Help: keys", self.action_help, "key ?"),
            PaletteCommand("Reload vaults", self.action_reload, "ctrl+r"),
            PaletteCommand("Copy memory id", self.action_copy_id, "key y"),
            PaletteCommand("Copy memory file path", self.action_copy_path, "key Y"),
            PaletteCommand("Quit", partial(show, "quit"), "key q"),
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
        # Maintenance runs (actions_ui): each previewed before anything is written.
        cmds.extend(actions_palette_commands(self))
        if screen is not None:
            cmds.extend(self._screen_key_commands(screen, {c.name for c in cmds}))
        return cmds

    def _screen_key_commands(self, screen: Screen[Any], taken: set[str]) -> list[PaletteCommand]:
        """A command for each key binding active on `screen` (its own and its widgets')."""
        out: list[PaletteCommand] = []
        seen: set[tuple[int, str]] = set()
        try:
            active = list(screen.active_bindings.values())
        except Exception:  # a screen mid-teardown has no binding chain
            return out
        for item in active:
            node, binding = item.node, item.binding
            if node is self or not binding.description or not item.enabled:
                continue
            if (id(node), binding.action) in seen:
                continue
            seen.add((id(node), binding.action))
            name = binding.tooltip or binding.description
            if name in taken:
                continue
            taken.add(name)
            keys = self.get_key_display(binding)
            out.append(
                PaletteCommand(name, partial(self.run_action, binding.action, node), f"key {keys}")
            )
        return out

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


def _own(change: Change) -> Change:
    from dataclasses import replace

    return change if change.own else replace(change, own=True)


def binding_ids() -> set[str]:
    """Every binding id of every memlens (and Textual) class: what a keymap may name.

    Screens and widgets are imported first, so ids of screens not opened yet
    count too.
    """
    for package in ("memlens.tui.screens", "memlens.tui.widgets"):
        pkg = importlib.import_module(package)
        for info in pkgutil.iter_modules(pkg.__path__):
            with contextlib.suppress(Exception):  # a broken module has no ids to offer
                importlib.import_module(f"{package}.{info.name}")
    ids: set[str] = set()
    stack: list[type] = [DOMNode]
    seen: set[type] = set()
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen.add(cls)
        for b in cls.__dict__.get("BINDINGS", ()):
            if isinstance(b, Binding) and b.id:
                ids.add(b.id)
        stack.extend(cls.__subclasses__())
    return ids


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
