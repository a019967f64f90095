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
  (`core.selfwrites`) is flagged `own=True` so the app can update silently.
- **Missed events**: a cheap stat walk every `rescan_interval` seconds
  compares (mtime, size, inode) of every vault file with the last walk.
- **New vaults** below a folder the user opened are discovered and scanned.

Thread safety: the watcher replaces `vault.result` and `catalog.vaults`
with new objects under `watcher.lock` (it never mutates a list a reader may
be iterating), so a reader on another thread sees either the old or the new
state of a vault.  Hold `watcher.lock` to read several vaults consistently.
"""

from __future__ import annotations

import hashlib
import logging
import os
import queue
import stat
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import MemlensError
from ..model import ScanResult
from ..safe_io import TEMP_PREFIX, read_regular
from . import selfwrites
from .changes import (
    Change,
    ChangeKind,
    added_all,
    diff_results,
    removed_all,
    vault_label,
)
from .vault import (
    Catalog,
    Vault,
    detect_format,
    discover,
    rescan_paths,
    scan_vault,
)

log = logging.getLogger(__name__)

#: Folders whose contents never matter to a vault.
NOISE_DIRS = frozenset({".git", ".memlens", ".hg", ".svn", "__pycache__", "node_modules"})
#: File name endings of editor swap/backup files and generic temp files.
NOISE_SUFFIXES = (".swp", ".swx", ".swo", "~", ".tmp")
#: Exact file names that are never memories (vim's write test file, macOS).
NOISE_NAMES = frozenset({"4913", ".DS_Store"})

#: (mtime_ns, size, inode) of a file, as the stat walk compares them.
Stat = tuple[int, int, int]

OnChanges = Callable[[list[Change]], None]
OnError = Callable[[BaseException], None]

# watchfiles reports deletions as Change.deleted (an IntEnum).
_DELETED = 3


def is_noise_name(name: str) -> bool:
    """A file name that is never part of a vault (swap, backup, temp files)."""
    return (
        name in NOISE_NAMES
        or name.startswith(TEMP_PREFIX)
        or name.endswith(NOISE_SUFFIXES)
        or name.startswith(".#")
        or (len(name) > 1 and name.startswith("#") and name.endswith("#"))
    )


def is_noise(path: Path | str) -> bool:
    """True for paths whose changes never affect a vault."""
    parts = Path(path).parts
    if not parts:
        return False
    return is_noise_name(parts[-1]) or any(p in NOISE_DIRS for p in parts[:-1])


def reload_vault(vault: Vault, changed: Collection[Path]) -> ScanResult:
    """The vault's scan after the files `changed` changed (absolute paths).

    The one place that chooses how: `rescan_paths` re-reads only those files
    and relinks; a vault that was never scanned file by file (no per-file
    scans to build on) is scanned whole.  `vault.result` is left as it was:
    the caller decides when the new result is shown.  `vault.linked` moves on
    with the per-file scans, so a batch held back and read again with the
    next one relinks from what was read, not from what is shown.
    """
    before = vault.result
    try:
        if not vault.scans:
            scan_vault(vault)
            return vault.result
        return rescan_paths(vault, changed)
    finally:
        vault.result = before


def _stat(path: Path) -> Stat | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _sha(path: Path) -> str | None:
    try:
        return hashlib.sha256(read_regular(path)).hexdigest()
    except FileNotFoundError:
        return None
    except OSError:
        return ""  # unreadable: matches nothing memlens wrote


def _readable(path: Path) -> bool | None:
    """True if readable, False if it exists but cannot be read, None if absent."""
    try:
        # O_NONBLOCK: never wait on a FIFO put in a vault (it counts as unreadable).
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError:
        return False
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            return True
        if not stat.S_ISREG(mode):
            return False
        os.read(fd, 1)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def _rel(root: Path, path: Path) -> str:
    return Path(os.path.relpath(path, root)).as_posix()


def _walk_tree(folder: Path) -> Iterator[Path]:
    """Every non-noise file below `folder` (no symlinked folders, no hidden ones)."""
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if d not in NOISE_DIRS and not d.startswith(".")]
        for name in filenames:
            if not is_noise_name(name):
                yield Path(dirpath) / name


def vault_files(vault: Vault) -> list[Path]:
    """The files that make up a vault, as its adapter lists them."""
    try:
        return vault.adapter.files(vault.root)
    except OSError:
        return []


def _owns(vault: Vault, rel: str) -> bool:
    try:
        return vault.adapter.owns(vault.root, rel)
    except Exception:  # an adapter bug must not stop the watcher
        return True


def _parents(rel: str) -> Iterator[str]:
    while "/" in rel:
        rel = rel.rsplit("/", 1)[0]
        yield rel


@dataclass(slots=True)
class _VaultState:
    """What the watcher tracks for one vault between batches."""

    vault: Vault
    #: The user path the vault was found below (None: watched on its own).
    base: Path | None
    #: The scan the catalog shows (what changes are computed against).
    committed: ScanResult
    stats: dict[str, Stat] = field(default_factory=dict)
    #: Vault-relative folders holding known files (to expand folder deletes).
    dirs: set[str] = field(default_factory=set)
    #: Files to re-read.
    pending: set[str] = field(default_factory=set)
    #: Folders that appeared (walk them for files).
    walk_dirs: set[str] = field(default_factory=set)
    full_walk: bool = False
    #: rel -> monotonic time a removal at that path was first held back.
    suspect: dict[str, float] = field(default_factory=dict)
    #: When the current hold began (caps how long a vault is held).
    hold_since: float | None = None
    retry_at: float = 0.0
    #: Ids already reported `unknown` in the current hold.
    unknown_sent: set[str] = field(default_factory=set)
    root_missing_since: float | None = None

    def busy(self) -> bool:
        return bool(self.pending or self.walk_dirs or self.full_walk or self.root_missing_since)

    def set_stat(self, rel: str, st: Stat | None) -> None:
        if st is None:
            self.stats.pop(rel, None)
            return
        self.stats[rel] = st
        for d in _parents(rel):
            if d in self.dirs:
                break
            self.dirs.add(d)


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
    ) -> None:
        self.catalog = catalog
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
        self._states: dict[Path, _VaultState] = {}
        self._discover: set[tuple[Path, Path]] = set()
        for v in catalog.vaults:
            self._states[v.root] = _VaultState(v, self._base_of(v.root), v.result)

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

    def _initial_walk(self, st: _VaultState, since_ns: int | None) -> None:
        root = st.vault.root
        for p in vault_files(st.vault):
            s = _stat(p)
            rel = _rel(root, p)
            st.set_stat(rel, s)
            if since_ns is not None and s is not None and s[0] >= since_ns:
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
                    listing = {_rel(root, p): _stat(p) for p in vault_files(st.vault)}
                    self._walked.put((root, listing))
                self._walked.put(None)
            except Exception as exc:
                self._report(exc)

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

    def _state_for(self, path: Path) -> _VaultState | None:
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
            rel = _rel(root, path)
            if rel == ".":
                st.full_walk = True
                continue
            if is_noise(rel):
                continue
            if change != _DELETED:
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
            elif _owns(st.vault, rel):
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
                st = _VaultState(v, base, ScanResult())
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

    def _process(self, st: _VaultState, now: float) -> list[Change]:
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

        if st.full_walk:
            st.full_walk = False
            listing = {_rel(root, p): _stat(p) for p in vault_files(vault)}
            st.pending.update(rel for rel, s in listing.items() if st.stats.get(rel) != s)
            st.pending.update(rel for rel in st.stats if rel not in listing)
        if st.walk_dirs:
            for d in st.walk_dirs:
                for p in _walk_tree(root / d):
                    rel = _rel(root, p)
                    if rel in st.stats or _owns(vault, rel):
                        st.pending.add(rel)
            st.walk_dirs.clear()
        if not st.pending:
            return []

        rels = sorted(st.pending)
        stats_now = {rel: _stat(root / rel) for rel in rels}
        own = {
            rel
            for rel in rels
            if selfwrites.expecting(root / rel)
            and selfwrites.is_own_write(root / rel, _sha(root / rel))
        }
        with self.lock:  # the rescan updates the vault's per-file scans in place
            new = reload_vault(vault, [root / rel for rel in rels])
            vault_wide = vault.last_rescan_vault_wide
        changes = diff_results(st.committed, new, everything=vault_wide)

        held, changes = self._hold_back(st, changes, stats_now, now)
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
        if st.unknown_sent:
            # Memories reported `unknown` that came back unchanged still get
            # a notice, so a front end can clear its "unknown" mark.
            told = {c.id for c in changes}
            for m in new.memories:
                if m.id in st.unknown_sent and m.id not in told:
                    changes.append(
                        Change(
                            ChangeKind.CHANGED,
                            m.vault_root,
                            m.format,
                            m.id,
                            m.path,
                            line=m.line,
                            index=m.index,
                            memory=m,
                        )
                    )
                    told.add(m.id)
            st.unknown_sent.clear()
        if own:
            everything_own = own.issuperset(rels)
            changes = [
                replace(c, own=True)
                if everything_own or (c.path in own and (c.old_path is None or c.old_path in own))
                else c
                for c in changes
            ]
        return changes

    def _hold_back(
        self,
        st: _VaultState,
        changes: list[Change],
        read_stats: dict[str, Stat | None],
        now: float,
    ) -> tuple[bool, list[Change]]:
        """Decide about removals whose file vanished, is unreadable or broken.

        Returns (hold, changes): hold=True means do not commit yet (changes
        are then only the `unknown` notices to send now); otherwise the final
        changes to commit, with removals that are really breakages dropped
        (their `problem` stands) or turned into `unknown`.
        """
        removed = [c for c in changes if c.kind is ChangeKind.REMOVED]
        if not removed:
            return False, changes
        root = st.vault.root
        broken_paths = {c.path for c in changes if c.kind is ChangeKind.PROBLEM}
        deadlines: list[float] = []
        verdict: dict[int, str] = {}
        for i, c in enumerate(changes):
            if c.kind is not ChangeKind.REMOVED:
                continue
            readable = _readable(root / c.path)
            if readable is None:
                kind, wait = "missing", self.grace
            elif readable is False:
                kind, wait = "unreadable", self.unreadable_timeout
            elif c.path in broken_paths:
                kind, wait = "broken", self.grace
            elif c.path in read_stats and _stat(root / c.path) != read_stats[c.path]:
                # It was (re)written after it was read (an atomic save that
                # landed mid-rescan): read it again before believing it.
                kind, wait = "raced", self.grace
            else:
                continue  # the file is there and fine: the memory really went
            verdict[i] = kind
            since = st.suspect.setdefault(c.path, now)
            deadlines.append(since + wait)
        if not verdict:
            return False, changes
        if st.hold_since is None:
            st.hold_since = now
        cap = st.hold_since + max(self.unreadable_timeout, self.grace)
        pending_deadline = min((d for d in deadlines if d > now), default=None)
        if pending_deadline is not None and now < cap:
            st.retry_at = min(pending_deadline, now + self.tick_ms / 1000, cap)
            notices = []
            for i, kind in verdict.items():
                c = changes[i]
                if kind == "unreadable" and c.id is not None and c.id not in st.unknown_sent:
                    st.unknown_sent.add(c.id)
                    notices.append(replace(c, kind=ChangeKind.UNKNOWN))
            return True, notices
        out: list[Change] = []
        for i, c in enumerate(changes):
            kind = verdict.get(i, "")
            if kind == "broken" or (kind == "unreadable" and c.path in broken_paths):
                continue  # the `problem` at this path says what happened
            if kind == "unreadable":
                out.append(replace(c, kind=ChangeKind.UNKNOWN))
                continue
            out.append(c)
        return False, out

    def _drop_vault(self, st: _VaultState) -> list[Change]:
        root = st.vault.root
        with self.lock:
            self.catalog.vaults = [v for v in self.catalog.vaults if v.root != root]
            del self._states[root]
        return removed_all(st.committed)
