"""Live reload: follow file system changes of a catalog's vaults as domain changes.

`VaultWatcher` runs watchfiles in one background thread (no Textual here).
For every burst of file system events it works out which files of which
vault changed, re-reads just those (`reload_vault`), updates the catalog in
place and hands the domain changes (`core.changes.Change`) to a callback.
The app posts a message from that callback; `memlens watch` prints lines.

What it guards against:

- **Noise**: editor swap and backup files, memlens's own temp files, anything
  under `.memlens/` or `.git/` never cause a re-read (`is_noise`).
- **Atomic saves** (temp + rename, delete + create) must not look like a
  removal.  A memory whose file vanished is held back for a short grace
  window: if the file (or the id, under another path) comes back, it is
  `changed`/`moved`; only a file still missing at the end is `removed`.
- **Half-written or unreadable files**: a memory whose file exists but
  cannot be read is reported `unknown` and retried; a file that reads as
  broken for a moment (partial write) is held the same way.  Neither is ever
  reported as `removed`: if it stays broken it is a `problem`.
- **Own writes**: a file whose bytes are exactly what memlens just wrote
  (`core.write.selfwrites`) is flagged `own=True` so the app can update silently.
- **Missed events**: a cheap stat walk every `rescan_interval` seconds
  compares (mtime, size, inode) of every vault file with the last walk.
- **New vaults** below a folder the user opened are discovered and scanned.

Thread safety: the watcher replaces `vault.result` and `catalog.vaults`
with new objects under `watcher.lock` (it never mutates a list a reader may
be iterating), so a reader on another thread sees either the old or the new
state of a vault.  Hold `watcher.lock` to read several vaults consistently.

The noise rules, file stats and per-vault state are in `watch_files`; the
hold-back rules (when a removal is believed) in `watch_hold`.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from ..errors import MemlensError
from ..model import ScanResult
from ..write import selfwrites
from .changes import Change, added_all, diff_results, removed_all, vault_label
from .vault import Catalog, Vault, detect_format, discover, scan_vault
from .watch_files import (
    DELETED,
    Stat,
    VaultState,
    is_noise,
    is_noise_name,
    owns_path,
    rel_path,
    reload_vault,
    sha_of,
    stat_mtime_ns,
    stat_of,
    vault_files,
    walk_tree,
)
from .watch_hold import Waits, closing_notices, hold_back, mark_own

__all__ = ["VaultWatcher", "is_noise", "is_noise_name", "reload_vault", "vault_files"]

log = logging.getLogger(__name__)

#: Files stat'ed between two looks at the stop flag (a stat walk of 100k
#: files takes seconds: quitting must not wait for it).
STOP_CHECK = 512
#: Seconds a paused stat walk waits before asking `pause` again.
PAUSE_STEP = 0.05

OnChanges = Callable[[list[Change]], None]
OnError = Callable[[BaseException], None]


class VaultWatcher:
    """Watch a catalog's vaults (and the folders the user opened) in a thread.

    ``on_changes(list[Change])`` is called from the watcher thread after the
    catalog was updated, once per burst of events, never with an empty list.

    Parameters (times in seconds unless named ``_ms``):

    - `paths`: the folders the user opened; new vaults appearing below them
      are discovered.  Vault roots outside them are watched on their own.
    - `debounce_ms`/`step_ms`: watchfiles grouping (a burst is yielded after
      `step_ms` of quiet, or after `debounce_ms` at most).
    - `grace`: how long a vanished or half-written file is held back before
      it counts as removed/broken.
    - `unreadable_timeout`: how long an unreadable file is retried.
    - `rescan_interval`: seconds between stat walks (None: never).
    - `pause`: asked every `STOP_CHECK` files of a stat walk; while it says
      True the walk waits (the app: while the user types).
    - `since`: `time.time()` taken before the catalog was scanned; files
      modified after it are re-read at start (changes between the scan and
      the start of watching are not lost).
    """

    def __init__(
        self,
        catalog: Catalog,
        on_changes: OnChanges,
        *,
        paths: Sequence[Path | str] = (),
        debounce_ms: int = 100,
        step_ms: int = 20,
        grace: float = 0.3,
        unreadable_timeout: float = 3.0,
        rescan_interval: float | None = 30.0,
        since: float | None = None,
        on_error: OnError | None = None,
        force_polling: bool | None = None,
        tick_ms: int = 50,
        pause: Callable[[], bool] | None = None,
    ) -> None:
        self.catalog = catalog
        #: Asked every `STOP_CHECK` files of a stat walk: while it says True the
        #: walk waits (the app: while the user types; a walk of 100k files is
        #: seconds of Python sharing the GIL with the queries).  Stopping ends
        #: the wait at once.
        self.pause = pause
        self.on_changes = on_changes
        self.on_error = on_error
        self.paths = [Path(os.path.realpath(p)) for p in paths]
        self.debounce_ms = debounce_ms
        self.step_ms = step_ms
        self.grace = grace
        self.unreadable_timeout = unreadable_timeout
        self.rescan_interval = rescan_interval
        self.since = since
        self.force_polling = force_polling
        self.tick_ms = tick_ms
        #: Held while the catalog is updated.
        self.lock = threading.RLock()
        #: Set once watching has started and the first stat walk is done.
        self.ready = threading.Event()
        self._stop = threading.Event()
        self._rescan_requested = threading.Event()
        self._thread: threading.Thread | None = None
        self._walker: threading.Thread | None = None
        #: Stat walks done by the walker thread: (vault root, rel -> stat), or
        #: None at the end of a round (time to look for new vaults too).
        self._walked: queue.SimpleQueue[tuple[Path, dict[str, Stat | None]] | None] = (
            queue.SimpleQueue()
        )
        self._states: dict[Path, VaultState] = {}
        self._discover: set[tuple[Path, Path]] = set()
        for v in catalog.vaults:
            self._states[v.root] = VaultState(v, self._base_of(v.root), v.result)

    # -- public API ------------------------------------------------------------

    def start(self) -> None:
        """Start watching in a daemon thread (returns at once; see `ready`)."""
        if self._thread is not None:
            raise RuntimeError("watcher already started")
        self._thread = threading.Thread(target=self._run, name="memlens-watch", daemon=True)
        self._thread.start()
        if self.rescan_interval is not None:
            self._walker = threading.Thread(
                target=self._walk_periodically, name="memlens-watch-walk", daemon=True
            )
            self._walker.start()

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Block until watching has started (True) or `timeout` passed (False)."""
        return self.ready.wait(timeout)

    def stop(self, timeout: float | None = 5.0) -> None:
        """Stop the thread and wait for it (at most `timeout`)."""
        self._stop.set()
        for t in (self._thread, self._walker):
            if t is not None and t is not threading.current_thread():
                t.join(timeout)

    def rescan(self) -> None:
        """Ask for a stat walk of every vault soon (e.g. a manual refresh)."""
        self._rescan_requested.set()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def __enter__(self) -> VaultWatcher:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- the thread ------------------------------------------------------------

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                targets = self._targets()
                if not targets:
                    self._mark_ready()
                    self._tick([])
                    self._stop.wait(self.tick_ms / 1000)
                    continue
                self._session(targets)
        except BaseException as exc:  # the thread must report, never die silently
            self._report(exc)
        finally:
            self.ready.set()

    def _session(self, targets: list[tuple[Path, int]]) -> None:
        """Watch one set of folders until stopped or the set changes."""
        from watchfiles import watch

        try:
            for raw in watch(
                *(p for p, _ in targets),
                watch_filter=None,
                debounce=self.debounce_ms,
                step=self.step_ms,
                stop_event=self._stop,
                rust_timeout=self.tick_ms,
                yield_on_timeout=True,
                raise_interrupt=False,
                force_polling=self.force_polling,
                ignore_permission_denied=True,
            ):
                if self._stop.is_set():
                    return
                # The first yield comes once watching is live: a stat walk
                # now cannot miss a change (events meanwhile are buffered).
                self._mark_ready()
                self._tick(raw)
                if self._targets() != targets:
                    # A watched folder vanished or reappeared: watch anew and
                    # walk everything (events under it may have been lost).
                    self._rescan_requested.set()
                    return
        except (OSError, RuntimeError) as exc:
            log.debug("watch session ended: %s", exc)
            self._stop.wait(0.2)
            self._rescan_requested.set()

    def _mark_ready(self) -> None:
        if self.ready.is_set():
            return
        since_ns = None if self.since is None else int((self.since - 1.0) * 1e9)
        for st in list(self._states.values()):
            self._initial_walk(st, since_ns)
        self.ready.set()

    def _initial_walk(self, st: VaultState, since_ns: int | None) -> None:
        root = st.vault.root
        # Each known file's path held once: the vault's own string (12 MB at 100k).
        # list() copies the keys at once (the UI thread may change the vault).
        known = {rel: rel for rel in list(st.vault.stamps)}
        for n, p in enumerate(vault_files(st.vault)):
            if n % STOP_CHECK == 0 and not self._go_on():
                return  # quitting: a walk of 100k files took seconds to finish
            s = stat_of(p)
            rel = rel_path(root, p)
            rel = known.get(rel, rel)
            st.set_stat(rel, s)
            if since_ns is not None and s is not None and stat_mtime_ns(s) >= since_ns:
                st.pending.add(rel)

    def _targets(self) -> list[tuple[Path, int]]:
        """Existing folders to watch (with their inode), none below another."""
        wanted: list[Path] = [p if not p.is_file() else p.parent for p in self.paths]
        wanted += [root for root, st in self._states.items() if st.base is None]
        out: list[tuple[Path, int]] = []
        for p in sorted(set(wanted), key=lambda q: len(q.parts)):
            if any(p == q or p.is_relative_to(q) for q, _ in out):
                continue
            try:
                out.append((p, os.stat(p).st_ino))
            except OSError:
                continue
        return out

    def _base_of(self, root: Path) -> Path | None:
        real = Path(os.path.realpath(root))
        for p in self.paths:
            base = p if not p.is_file() else p.parent
            if real == base or real.is_relative_to(base):
                return base
        return None

    # -- one tick: events in, changes out ----------------------------------------

    def _tick(self, raw: Iterable[tuple[int, str]]) -> None:
        self._ingest(raw)
        now = time.monotonic()
        if self._rescan_requested.is_set():
            self._rescan_requested.clear()
            for st in self._states.values():
                st.full_walk = True
            self._discover_below_bases()
        self._take_walks()
        changes: list[Change] = []
        if self._discover:
            changes += self._discover_vaults()
        for st in list(self._states.values()):
            if st.busy() and now >= st.retry_at:
                try:
                    changes += self._process(st, now)
                except Exception as exc:
                    # A scan that crashes must not kill live reload: report
                    # it and drop this batch (the stat walk retries later).
                    st.pending.clear()
                    st.walk_dirs.clear()
                    st.full_walk = False
                    self._report(exc)
        if changes:
            try:
                self.on_changes(changes)
            except Exception as exc:
                self._report(exc)

    def _discover_below_bases(self) -> None:
        for base in self.paths:
            if base.is_dir():
                self._discover.add((base, base))

    # -- the periodic stat walk (its own thread) -----------------------------------

    def _walk_periodically(self) -> None:
        """Every `rescan_interval`: stat every file of every vault.

        It runs beside the watcher thread so that a walk over 100k files
        never holds up the reaction to an event; the watcher compares the
        result with what it knows (`_take_walks`).
        """
        interval = self.rescan_interval or 0.0
        if not self.ready.wait() or self._stop.is_set():
            return
        while not self._stop.wait(interval):
            try:
                for root, st in list(self._states.items()):
                    if self._stop.is_set():
                        return
                    listing = self._stat_all(root, st)
                    if listing is None:
                        return
                    self._walked.put((root, listing))
                self._walked.put(None)
            except Exception as exc:
                self._report(exc)

    def _go_on(self) -> bool:
        """Between files of a stat walk: False once stopping; waits while `pause` says so."""
        while self.pause is not None and self.pause():
            if self._stop.wait(PAUSE_STEP):
                return False
        return not self._stop.is_set()

    def _stat_all(self, root: Path, st: VaultState) -> dict[str, Stat | None] | None:
        """rel -> stat of every file of the vault; None when stopped meanwhile."""
        listing: dict[str, Stat | None] = {}
        for n, p in enumerate(vault_files(st.vault)):
            if n % STOP_CHECK == 0 and not self._go_on():
                return None
            listing[rel_path(root, p)] = stat_of(p)
        return listing

    def _take_walks(self) -> None:
        while True:
            try:
                item = self._walked.get_nowait()
            except queue.Empty:
                return
            if item is None:
                self._discover_below_bases()
                continue
            root, listing = item
            st = self._states.get(root)
            if st is None:
                continue
            if not root.is_dir():
                st.full_walk = True  # `_process` handles a vanished vault
                continue
            known = st.stats
            # A file read after the walk stat it shows up here as a mismatch:
            # it is only read once more, harmlessly.
            st.pending.update(rel for rel, s in listing.items() if known.get(rel) != s)
            st.pending.update(rel for rel in known if rel not in listing)

    def _report(self, exc: BaseException) -> None:
        if self.on_error is not None:
            try:
                self.on_error(exc)
                return
            except Exception:
                pass
        log.exception("memlens watcher error", exc_info=exc)

    def _state_for(self, path: Path) -> VaultState | None:
        states = self._states
        for anc in (path, *path.parents):
            st = states.get(anc)
            if st is not None:
                return st
        return None

    def _ingest(self, raw: Iterable[tuple[int, str]]) -> None:
        for change, name in raw:
            path = Path(name)
            st = self._state_for(path)
            if st is None:
                self._claim_for_discovery(path)
                continue
            root = st.vault.root
            rel = rel_path(root, path)
            if rel == ".":
                st.full_walk = True
                continue
            if is_noise(rel):
                continue
            if change != DELETED:
                # It exists (again): whatever was held back for it restarts.
                st.suspect.pop(rel, None)
            if rel in st.stats:
                st.pending.add(rel)
            elif path.is_dir():
                st.walk_dirs.add(rel)
            elif rel in st.dirs:
                # A folder went away (deleted or renamed): its files did too.
                prefix = rel + "/"
                st.pending.update(k for k in st.stats if k.startswith(prefix))
            elif owns_path(st.vault, rel):
                st.pending.add(rel)

    def _claim_for_discovery(self, path: Path) -> None:
        """Remember where to look for a vault that may have appeared (or gone)."""
        for root, st in self._states.items():
            if root.is_relative_to(path):
                # A folder holding vaults was moved or deleted as a whole
                # (one event for the folder): check those vaults' roots.
                st.full_walk = True
        for base in self.paths:
            if path == base or not path.is_relative_to(base):
                continue
            rel = path.relative_to(base)
            if is_noise(rel) or any(part.startswith(".") for part in rel.parts):
                return
            # Look from the top folder below the opened one: a vault is
            # often created folder by folder, its marker arriving last.
            top = base / rel.parts[0]
            self._discover.add((top if len(rel.parts) > 1 or path.is_dir() else base, base))
            return

    def _discover_vaults(self) -> list[Change]:
        todo, self._discover = self._discover, set()
        changes: list[Change] = []
        for folder, base in sorted(todo):
            found: list[Vault] = []
            if folder != base and base not in self._states:
                # The opened folder itself may have just become a vault root.
                adapter = detect_format(base)
                if adapter is not None:
                    found.append(Vault(root=base, format=adapter.format_id, rel="."))
            if not found:
                try:
                    found = discover(folder)
                except (MemlensError, OSError):
                    continue
            for v in found:
                if v.root in self._states or self._state_for(v.root) is not None:
                    continue
                v.rel = vault_label(v.root, base)
                st = VaultState(v, base, ScanResult())
                # Stat first, then read: a change in between is caught later.
                self._initial_walk(st, None)
                scan_vault(v)
                result = v.result
                with self.lock:
                    st.committed = result
                    self._states[v.root] = st
                    self.catalog.vaults = [*self.catalog.vaults, v]
                changes += added_all(result)
        return changes

    # -- re-reading one vault ----------------------------------------------------
    def _process(self, st: VaultState, now: float) -> list[Change]:
        """Re-read a vault's pending files; the changes to report (none while held back)."""
        vault = st.vault
        root = vault.root
        if not root.is_dir():
            if st.root_missing_since is None:
                st.root_missing_since = now
            if now - st.root_missing_since < self.grace:
                st.retry_at = now + min(self.grace, self.tick_ms / 1000)
                return []
            return self._drop_vault(st)
        st.root_missing_since = None
        self._collect_pending(st)
        if not st.pending:
            return []

        rels = sorted(st.pending)
        stats_now = {rel: stat_of(root / rel) for rel in rels}
        own = {
            rel
            for rel in rels
            if selfwrites.expecting(root / rel)
            and selfwrites.is_own_write(root / rel, sha_of(root / rel))
        }
        with self.lock:  # the rescan updates the vault's per-file scans in place
            new = reload_vault(vault, [root / rel for rel in rels])
            vault_wide = vault.last_rescan_vault_wide
        changes = diff_results(st.committed, new, everything=vault_wide)

        held, changes = hold_back(st, changes, stats_now, now, self._waits())
        if held:
            return changes  # only `unknown` notices; nothing committed

        with self.lock:
            vault.result = new
            st.committed = new
        for rel, s in stats_now.items():
            st.set_stat(rel, s)
        st.pending.clear()
        st.suspect.clear()
        st.hold_since = None
        closing_notices(st, new, changes)
        return mark_own(changes, own, rels)

    def _collect_pending(self, st: VaultState) -> None:
        """Turn a requested full walk and new folders into files to re-read."""
        vault, root = st.vault, st.vault.root
        if st.full_walk:
            st.full_walk = False
            listing = {rel_path(root, p): stat_of(p) for p in vault_files(vault)}
            st.pending.update(rel for rel, s in listing.items() if st.stats.get(rel) != s)
            st.pending.update(rel for rel in st.stats if rel not in listing)
        if st.walk_dirs:
            for d in st.walk_dirs:
                for p in walk_tree(root / d):
                    rel = rel_path(root, p)
                    if rel in st.stats or owns_path(vault, rel):
                        st.pending.add(rel)
            st.walk_dirs.clear()

    def _waits(self) -> Waits:
        return Waits(self.grace, self.unreadable_timeout, self.tick_ms / 1000)

    def _drop_vault(self, st: VaultState) -> list[Change]:
        root = st.vault.root
        with self.lock:
            self.catalog.vaults = [v for v in self.catalog.vaults if v.root != root]
            del self._states[root]
        return removed_all(st.committed)
