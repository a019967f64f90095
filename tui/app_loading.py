"""Loading the vaults: discovery, the progressive read in a thread worker, sidebar summaries.

The loader posts messages (`VaultsDiscovered`, `VaultProgress`,
`VaultLoaded`, `VaultFailed`, `LoadFinished`); their handlers here put the
rows in `loaded` and start live reload once everything is read.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import time
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.worker import get_current_worker

from memlens.core.errors import MemlensError
from memlens.core.listing import MemoryRow, health_counts, memory_row, rows_for_vault
from memlens.core.listing.snapshot import KeptRows, attach, kept_rows, save_rows
from memlens.core.model import Memory
from memlens.core.scan.cache import ScanProgress
from memlens.core.scan.vault import Vault, scan_progressive, start_walk_ahead, survey
from memlens.core.scan.walk_ahead import WalkAhead
from memlens.core.write.recovery import needs_recovery, recover

from .action_common import tell
from .app_live import LiveReloadApp
from .lazy_modes import import_panes
from .live import VaultDelta, ref_issues_of
from .messages import LoadFinished, VaultFailed, VaultLoaded, VaultProgress, VaultsDiscovered
from .widgets.vault_sidebar import VaultSummary

if TYPE_CHECKING:
    pass


#: Memories per progressive-load step (first rows show after this many).
LOAD_BATCH = 2000
#: Seconds a vault may take to read before its early (unlinked) rows are shown
#: (the app's very first batch always is).  Early rows cost a decay pass of
#: their own and work on the UI thread (a cold 100k load took 13.0 s with
#: them after 0.5 s, 9.3-12.7 s without); meanwhile the sidebar shows the
#: vault as scanning.
PROGRESS_AFTER = 5.0
#: A vault that re-read at most this many files writes them to its store at
#: once, after posting its rows; a bigger save (a cold start's) waits until
#: every vault is listed.  Why: a start after a few changes then has its
#: store current within milliseconds of listing (measured at 100k with one
#: changed file: the deferred save finished ~0.7 s after the listing, while
#: the app was busy putting the rows on screen).
SAVE_AT_ONCE = 256


class LoadingApp(LiveReloadApp):
    """Loading: discover, then read vault by vault in a worker; sidebar summaries."""

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
        # Scans whose cache file is still to be written: after every vault is
        # listed; then each vault's rows are kept for the next start's list.
        unsaved: list[Iterator[ScanProgress]] = []
        listed: list[tuple[Vault, list[MemoryRow]]] = []  # rows to keep for the next start
        # On a warm start another process stat-walks the vaults meanwhile.
        ahead = start_walk_ahead(found, cache=self.config.cache)
        try:
            kept = self._post_kept_rows(found, as_of, generation) if self.config.cache else {}
            shown[0] = bool(kept)
            for v in found:
                if worker.is_cancelled:
                    return
                try:
                    got = self._scan_one(v, as_of, generation, shown, ahead, kept.get(v.root))
                except Exception as exc:
                    # Why: an adapter bug in one vault must not hide the others;
                    # the failure is shown in the sidebar and the error dialog.
                    self.post_message(VaultFailed(v.name, exc, v.root))
                else:
                    if got is not None:
                        unsaved.append(got[0])
                        if got[1] is not None:
                            listed.append((v, got[1]))
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
        if self.config.cache:
            for v, rows in listed:
                if worker.is_cancelled:
                    return
                with contextlib.suppress(Exception):  # rows not kept: only a slower start
                    save_rows(v, rows, as_of)

    def _post_kept_rows(
        self, vaults: list[Vault], as_of: date, generation: int
    ) -> dict[Path, KeptRows]:
        """Every vault's rows as the last run kept them, before any is read (the shown ones)."""
        worker = get_current_worker()
        kept: dict[Path, KeptRows] = {}
        for v in vaults:
            if worker.is_cancelled:
                break
            with contextlib.suppress(Exception):  # none kept: the vault's rows come as read
                held = kept_rows(v, as_of)
                if held.rows:
                    self.post_message(VaultProgress(v, held.rows, generation))
                    kept[v.root] = held
        return kept

    def _scan_one(
        self,
        vault: Vault,
        as_of: date,
        generation: int,
        shown: list[bool],
        ahead: WalkAhead | None = None,
        kept: KeptRows | None = None,
    ) -> tuple[Iterator[ScanProgress], list[MemoryRow] | None] | None:
        """One vault: early rows, the linked rows; the scan left to save, and the rows to keep.

        `kept`: the rows the last run listed, shown already (`load`, from
        `core.listing.snapshot`): no early rows then, and when the vault is
        exactly what they were made from they are its rows (the UI thread
        gives them their memories; no rows to keep: they are kept).  Else early rows
        cost a second decay pass, so they are only shown when they help: for
        the very first rows of the app, or once a vault has been read for
        PROGRESS_AFTER seconds (a cold parse).  A vault served whole from the
        cache gives at most the app's first batch early: its linked rows
        follow at once.
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
                # after every vault is listed (a few changed files: now).
                memories = kept.matching(vault, as_of) if kept is not None else None
                if kept is not None and memories is not None:
                    rows = kept.linked(vault)
                    self.post_message(VaultLoaded(vault, rows, generation, attach=memories))
                else:
                    rows = rows_for_vault(vault, as_of)
                    self.post_message(VaultLoaded(vault, rows, generation))
                shown[0] = True
                keep = None if memories is not None else rows
                if progress.stats.parsed <= SAVE_AT_ONCE:
                    with contextlib.suppress(Exception):  # a cache not written is only slower
                        for _ in steps:
                            pass
                    return iter(()), keep
                return steps, keep
            if kept is not None:
                continue  # the kept rows stand until the linked ones come
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
        if message.attach is not None and self._attach_kept(message):
            return
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

    def _attach_kept(self, message: VaultLoaded) -> bool:
        """The kept rows on screen are the vault's rows: give them their memories.

        False when they are not the rows this app shows for the vault (then
        the rows are computed here and go the usual way).
        """
        vault, memories = message.vault, message.attach or []
        root = str(vault.root)
        position = self._loaded_position(root)
        count = len(memories)
        shown = self.loaded[position][1] if position is not None else []
        if (
            position is None
            or len(shown) != count
            or any(a is not b for a, b in zip(shown, message.rows[:count], strict=False))
        ):
            message.rows = rows_for_vault(vault, self.as_of)
            message.attach = None
            return False
        attach(shown, memories)
        self.live.register(vault, message.rows)
        self._set_ref_issues(root, ref_issues_of(vault))
        self.loaded[position] = (vault, message.rows)
        self.partial.discard(root)
        problems = message.rows[count:]
        # Invalid items go right after the vault's last row (ties go after).
        last = max((r.order for r in shown), default=-1)
        for r in problems:
            r.order = last
        parts = self._main_parts()
        open_row = parts[2].row if parts is not None else None
        self._update_main([VaultDelta(vault, "update", message.rows, added=problems)])
        if parts is not None and open_row is not None and any(open_row is r for r in shown):
            # The row being read was waiting for its memory: show it now.
            self._rerender_detail(parts[0], parts[2], open_row)
        self.catalog_version += 1
        return True

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
        self._import_panes()

    @work(thread=True, exit_on_error=False, group="import-panes", name="import panes")
    def _import_panes(self) -> None:
        # Between modules it gives way to typing: imports are seconds of Python
        # holding the GIL, and search queries typed meanwhile waited on it
        # (p95 per keystroke 20 ms against 4 ms in a quiet process, at 100k).
        import_panes(before_each=self.wait_while_typing)

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
