"""Live reload in the app: a `VaultWatcher` follows the vaults; its changes
become row deltas in the watcher thread and are applied here, in place,
keeping the cursor on the same memory and the view where it was.
`refresh_paths` does the same at once after memlens itself wrote files.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections import Counter
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from textual import events, work

from memlens.core.listing import MemoryRow
from memlens.core.scan.changes import Change, ChangeKind, diff_results
from memlens.core.scan.vault import Catalog, Vault, rescan_paths

from .app_state import AppState
from .live import VaultDelta, keep_place, place_of
from .messages import LiveChanges, LiveFailed
from .safe_text import visible
from .screens.main import MainScreen
from .widgets.detail import MemoryDetail
from .widgets.live_banner import LiveBanner
from .widgets.memory_table import MemoryTable

if TYPE_CHECKING:
    from memlens.core.search.meaning import MeaningVectors

    from .screens.search import SearchScreen
    from .screens.search_messages import IndexBuilt, MeaningReady


#: Seconds between graph rebuilds caused by live changes.
GRAPH_REBUILD_DELAY = 2.0


#: Seconds after a key press during which background work waits (the secrets
#: scan between files, the pane imports between modules, the live-reload
#: stat walks every few hundred files): they share one GIL
#: with the UI thread and the query worker, and typing comes first.
TYPING_QUIET = 0.4
#: Seconds background work sleeps at a time while the user types.
TYPING_NAP = 0.05


class LiveReloadApp(AppState):
    """Live reload: follow the vaults on disk and apply each change in place."""

    #: `time.monotonic()` of the last key press (background work waits while keys come).
    last_key_at: float = 0.0

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key):
            self.last_key_at = time.monotonic()
        await super().on_event(event)

    def typing(self, clock: Callable[[], float] = time.monotonic) -> bool:
        """A key came less than `TYPING_QUIET` seconds ago (background work waits)."""
        return clock() - self.last_key_at < TYPING_QUIET

    def wait_while_typing(
        self,
        clock: Callable[[], float] = time.monotonic,
        nap: Callable[[float], None] = time.sleep,
    ) -> None:
        """In a background thread: return once no key came for `TYPING_QUIET` seconds."""
        while self.typing(clock):
            nap(TYPING_NAP)

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
            pause=self.typing,
        )
        self.watcher = watcher
        watcher.start()

    def _stop_watching(self, wait: float = 5.0) -> None:
        """Stop following the vaults; wait at most `wait` seconds for the watcher's threads."""
        watcher, self.watcher = self.watcher, None
        if watcher is not None:
            watcher.stop(wait)

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

    def search_meaning(self) -> MeaningVectors | None:
        """The search pane's meaning vectors, once its index has them (else None).

        The review pane uses them rather than embedding every memory again.
        """
        screen = self._search_screen()
        if screen is not None and screen.has_meaning:
            return screen.meaning_vectors
        return None

    def search_meaning_pending(self) -> bool:
        """The search pane is embedding the memories (a first start): its vectors will come."""
        screen = self._search_screen()
        return screen is not None and screen.meaning_pending > 0

    def on_search_screen_meaning_ready(self, _message: MeaningReady) -> None:
        """The review pane waited for the search pane's vectors: they are there."""
        screen = self._mode_screen("review")
        if screen is None:
            return
        from .screens.review import ReviewScreen

        if isinstance(screen, ReviewScreen):
            screen.meaning_ready()

    def _feed_search(self, changes: list[Change]) -> None:
        """Bring the search pane's index in step (incremental; it rebuilds when it must)."""
        screen = self._search_screen()
        if screen is None or not changes:
            return
        if not screen.index_ready:
            # An index being built may have read the vaults before these
            # changes: apply them once it is there (applying twice is harmless).
            self._search_backlog.extend(changes)
            return
        self._apply_search_changes(screen, changes)

    def on_search_screen_index_built(self, _message: IndexBuilt) -> None:
        screen = self._search_screen()
        backlog, self._search_backlog = self._search_backlog, []
        if screen is not None and backlog:
            self._apply_search_changes(screen, backlog)

    @work(thread=True, group="live-search", exit_on_error=False, name="search update")
    def _apply_search_changes(self, screen: SearchScreen, changes: list[Change]) -> None:
        """Off the UI thread, under the pane's index lock (queries hold it too)."""
        rebuild = screen.apply_changes(changes)
        self.call_from_thread(self._search_updated, screen, rebuild)

    def _search_updated(self, screen: SearchScreen, rebuild: bool) -> None:
        if screen.is_mounted:
            screen.changes_applied(rebuild)

    def _search_screen(self) -> SearchScreen | None:
        """The search pane, once it was shown (its module is imported then: `lazy_modes`)."""
        screen = self._mode_screen("search")
        if screen is None:
            return None
        from .screens.search import SearchScreen

        return screen if isinstance(screen, SearchScreen) else None

    def _invalidate_graph(self) -> None:
        """Rebuild the graph after changes, at most every GRAPH_REBUILD_DELAY seconds."""
        screen = self._mode_screen("graph")
        if screen is None or self._graph_timer is not None:
            return
        from .screens.graph import GraphScreen

        if not isinstance(screen, GraphScreen):
            return

        def rebuild() -> None:
            self._graph_timer = None
            if screen.is_mounted and not self.loading:
                screen.rebuild()

        self._graph_timer = self.set_timer(GRAPH_REBUILD_DELAY, rebuild)


def _own(change: Change) -> Change:
    from dataclasses import replace

    return change if change.own else replace(change, own=True)
