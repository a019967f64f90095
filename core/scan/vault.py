"""Discovering vaults below a path and scanning them into one catalog."""

from __future__ import annotations

import bisect
import contextlib
import os
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import NamedTuple

from ..errors import NotFoundError
from ..formats import FORMAT_IDS, FormatAdapter, adapter_for, detects
from ..formats.files import (
    Listing,
    cannot_read,
    dir_state,
    entry_skip,
    skip_entry,
    skipped_problem,
    skipped_scan,
)
from ..model import FileScan, Memory, Problem, ReferenceProblem, ScanResult
from ..text.sanitize import undecodable
from . import cache as _cache
from .cache import CacheStats, FileStamp, ScanProgress
from .walk_ahead import WalkAhead, walk_ahead

#: Folders never worth descending into while looking for vaults.
_SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".memlens"}


@dataclass(slots=True)
class Vault:
    """One vault root of one format, and what scanning it found."""

    root: Path
    format: str
    #: Vault root relative to the path the user gave (`.` if it is that path).
    rel: str
    result: ScanResult = field(default_factory=ScanResult)
    #: Per-file scans the result was linked from (rel path -> FileScan, in
    #: scan order); `rescan_paths` replaces entries and relinks.
    scans: dict[str, FileScan] = field(default_factory=dict)
    #: What each file looked like when it was read (stat key and sha256).
    stamps: dict[str, FileStamp] = field(default_factory=dict)
    #: The result linked from `scans` as they are now: what the next
    #: `rescan_paths` relinks from and the cache keeps.  Usually `result`
    #: itself, but the watcher keeps showing an older `result` while it holds
    #: a batch back, and a relink from that one would start from files that
    #: are no longer the ones read (stale references, a KeyError).
    linked: ScanResult | None = None
    #: How the persistent cache served the last full scan (None: not scanned).
    cache_stats: CacheStats | None = None
    #: Files rescanned or gone since the store last had this vault's rows
    #: (what `save_cache` writes); None: unknown, compare every stamp.
    unsaved: set[str] | None = None
    #: Set by `rescan_paths`: a changed file was vault-wide (a state file, a
    #: WAL, a view store; `FileScan.vault_wide`), so any memory may differ.
    last_rescan_vault_wide: bool = False
    #: The listing of the last full scan, with the folders it looked at
    #: (`core.formats.listed_folders`): kept by the search index beside its
    #: manifest while the files are still exactly its names.
    listing: Listing | None = None

    @property
    def adapter(self) -> FormatAdapter:
        return adapter_for(self.format)

    @property
    def memories(self) -> list[Memory]:
        return self.result.memories

    @property
    def problems(self) -> list[Problem]:
        return self.result.problems

    @property
    def ref_problems(self) -> list[ReferenceProblem]:
        return self.result.ref_problems

    @property
    def name(self) -> str:
        return self.root.name if self.rel == "." else self.rel


def detect_format(root: Path) -> FormatAdapter | None:
    """The adapter whose markers `root` carries, if any.

    Formats are tried in registry order by their light detection modules
    (`formats.detects`): only the adapter of the format found is imported.
    """
    for format_id in FORMAT_IDS:
        try:
            if detects(format_id, root):
                return adapter_for(format_id)
        except OSError:
            continue
    return None


class Survey(NamedTuple):
    """What `survey` found below a path: vault roots, and folders it could not look into."""

    vaults: list[Vault]
    #: One `unreadable` problem per folder that could not be listed (it may
    #: hold a vault); `format` is "" and `path` is relative to `base`.
    unreadable: list[Problem]


def discover(path: Path, max_depth: int = 6) -> list[Vault]:
    """Every vault root at or below `path`, each with its format (see `survey`)."""
    return survey(path, max_depth).vaults


def survey(path: Path, max_depth: int = 6) -> Survey:
    """Every vault root at or below `path`, and every folder that could not be read.

    A vault root is not searched further: vaults do not nest, and a
    cognitive-memory `vault/` folder must not be mistaken for anything else.
    A folder the OS refuses to list is reported, never raised: the other
    vaults still load.
    """
    path = Path(path)
    if not path.exists():
        raise NotFoundError(f"{path}: no such file or directory")
    if path.is_file():
        path = path.parent
    base = path.resolve()
    found: list[Vault] = []
    refused: list[Problem] = []

    def walk(folder: Path, depth: int) -> None:
        adapter = detect_format(folder)
        rel = Path(os.path.relpath(folder, base)).as_posix()
        if adapter is not None:
            found.append(Vault(root=folder, format=adapter.format_id, rel=rel))
            return
        if depth >= max_depth:
            return
        try:
            children = _subfolders(folder)
        except OSError as exc:
            skip = skip_entry(rel, cannot_read(exc))
            refused.append(skipped_problem("", base, skip))
            return
        for child in children:
            walk(child, depth + 1)

    walk(base, 0)
    return Survey(found, refused)


def _subfolders(folder: Path) -> list[Path]:
    """Sub-folders worth looking into for vaults, sorted; raises OSError if
    `folder` cannot be listed."""
    with os.scandir(folder) as entries:
        names = [
            e.name
            for e in entries
            if e.name not in _SKIP_DIRS and not e.name.startswith(".") and _is_real_dir(e)
        ]
    return [folder / n for n in sorted(names)]


def _is_real_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


@dataclass(slots=True)
class Catalog:
    """Every vault found below the paths given, scanned."""

    vaults: list[Vault]
    #: Folders discovery could not look into (see `Survey.unreadable`).
    unreadable: list[Problem] = field(default_factory=list)

    def memories(self) -> Iterator[Memory]:
        for v in self.vaults:
            yield from v.memories

    def problems(self) -> Iterator[Problem]:
        """Every vault's problems, then the folders discovery could not read."""
        for v in self.vaults:
            yield from v.problems
        yield from self.unreadable

    def ref_problems(self) -> Iterator[ReferenceProblem]:
        for v in self.vaults:
            yield from v.ref_problems

    def vault_of(self, memory: Memory | Problem | ReferenceProblem) -> Vault:
        for v in self.vaults:
            if v.root == memory.vault_root:
                return v
        raise NotFoundError(f"no vault at {memory.vault_root}")

    def find(self, memory_id: str) -> list[Memory]:
        """Memories with this id (one per vault at most).

        An id made from a file name that is not UTF-8 is also found by the
        text `list --json` shows for it (`sanitize.undecodable`).
        """
        hits = [m for m in self.memories() if m.id == memory_id]
        if not hits and "\\" in memory_id:
            hits = [m for m in self.memories() if undecodable(m.id) == memory_id]
        return hits

    def get(self, memory_id: str) -> Memory:
        """The memory with this id; NotFoundError if none, or ambiguous."""
        hits = self.find(memory_id)
        if not hits:
            raise NotFoundError(f"no memory with id {memory_id!r}")
        if len(hits) > 1:
            where = ", ".join(str(m.vault_root) for m in hits)
            raise NotFoundError(f"id {memory_id!r} is in several vaults: {where}")
        return hits[0]


def scan_progressive(
    vault: Vault,
    *,
    batch: int | None = 2000,
    cache: bool = False,
    parallel: bool | None = None,
    ahead: WalkAhead | None = None,
) -> Iterator[ScanProgress]:
    """Scan one vault in steps of about `batch` memories; the `done` step is linked.

    Early steps (none when `batch` is None) carry memories read but not linked yet (duplicates not
    dropped, references unresolved), so a front end can show first rows
    while the rest is read.  With `cache`, unchanged files come from the
    persistent cache and their memories arrive in the first steps.  The
    vault is updated in place when the `done` step is produced; the cache
    file is written after it, when the iteration is continued to its end
    (a front end can list everything first, then finish in a worker).
    `ahead` (see `start_walk_ahead`) may hold the vault's stat walk, taken
    by another process while earlier vaults were loading.
    """
    walk = partial(ahead.take, vault.root) if ahead is not None and cache else None
    for progress in _cache.scan_files(
        vault.adapter, vault.root, cache=cache, batch=batch, parallel=parallel, walk=walk
    ):
        if progress.done:
            _adopt(vault, progress)
        yield progress


def scan_vault(
    vault: Vault,
    *,
    cache: bool = False,
    parallel: bool | None = None,
    ahead: WalkAhead | None = None,
) -> Vault:
    """Scan one discovered vault in place and return it.

    `cache` uses (and refreshes) the persistent per-vault cache so only
    changed files are parsed.  `parallel` forces worker processes for the
    cold parse on or off (None: only for large vaults, where it pays).
    `ahead`: see `scan_progressive`.
    """
    walk = partial(ahead.take, vault.root) if ahead is not None and cache else None
    last = _cache.run_to_end(
        _cache.scan_files(vault.adapter, vault.root, cache=cache, parallel=parallel, walk=walk)
    )
    _adopt(vault, last)
    return vault


def _adopt(vault: Vault, progress: ScanProgress) -> None:
    assert progress.result is not None
    vault.result = vault.linked = progress.result
    vault.scans = progress.scans
    vault.stamps = progress.stamps
    vault.cache_stats = progress.stats
    vault.listing = progress.listing
    # A scan with the store saves its rows itself (a failed save only
    # leaves rows the next scan finds stale).
    vault.unsaved = set() if progress.stats.path is not None else None


def rescan_paths(vault: Vault, changed: Iterable[Path | str]) -> ScanResult:
    """Re-read only the files named in `changed`, then relink the vault.

    Paths may be absolute or relative to the vault root, files or folders
    (a folder stands for every vault file below it: a moved or removed
    folder).  A path that exists and is one of the vault's files is (re)read;
    one that no longer exists is dropped; anything else (editor swap files,
    temp files, files of no format) is ignored.  The result equals a full
    scan of the vault as it is on disk for those paths.  The live-reload
    watcher calls this with the paths of each batch of events.
    """
    root = vault.root
    adapter = vault.adapter
    scans = vault.scans
    todo = _Reread(vault)
    for item in changed:
        todo.path(Path(item))
    fresh, gone = todo.fresh, todo.gone
    gone.update(_readable_again(scans, fresh))
    vault_wide = False
    changes: dict[str, tuple[FileScan | None, FileScan | None]] = {}
    for rel in gone - fresh.keys():
        old = scans.pop(rel, None)
        if old is not None:
            changes[rel] = (old, None)
            vault_wide = vault_wide or old.vault_wide
        vault.stamps.pop(rel, None)
    added = False
    for rel, (fs, stamp) in fresh.items():
        old = scans.get(rel)
        if old is None:
            added = True
        else:
            _keep_unchanged(old, fs)
        changes[rel] = (old, fs)
        vault_wide = vault_wide or fs.vault_wide or (old is not None and old.vault_wide)
        scans[rel] = fs
        if stamp is not None:
            vault.stamps[rel] = stamp
        else:
            vault.stamps.pop(rel, None)
    if added:
        vault.scans = scans = _in_scan_order(scans)
    vault.last_rescan_vault_wide = vault_wide
    if vault.unsaved is not None:
        vault.unsaved.update(changes)
    result: ScanResult | None = None
    previous = vault.linked
    if previous is not None and previous.link_state is not None and not vault_wide:
        # Only what the changed files affect (see each adapter's relink);
        # None when the change needs a full link after all.
        result = adapter.relink(root, scans, previous, changes)
    vault.result = vault.linked = result if result is not None else adapter.link(root, scans)
    return vault.result


class _Reread:
    """What `rescan_paths` re-reads (`fresh`) and drops (`gone`), path by path."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.fresh: dict[str, tuple[FileScan, FileStamp | None]] = {}
        self.gone: set[str] = set()
        self._listing: Listing | None = None

    def listing(self) -> Listing:
        """The vault's listing, taken once (only folders and refusals need it)."""
        if self._listing is None:
            self._listing = self.vault.adapter.file_listing(self.vault.root)
        return self._listing

    def path(self, path: Path) -> None:
        vault, root, fresh, gone = self.vault, self.vault.root, self.fresh, self.gone
        if not path.is_absolute():
            path = root / path
        try:
            rel = path.relative_to(root).as_posix()
        except ValueError:
            return  # outside this vault
        state = dir_state(path)
        if state is None:
            # A folder on the way can no longer be read.  A full scan shows
            # that folder as one problem and nothing below it: do the same.
            refused = [s.rel for s in self.listing().skipped if rel.startswith(s.rel + "/")]
            if refused:
                self.folder(refused[0])
                return
        if state:
            self.folder(rel)
            return
        adapter, scans = vault.adapter, vault.scans
        owned = adapter.owns(root, rel)
        if owned or rel in scans:
            skip = entry_skip(root, rel) if owned else None
            if skip is not None:
                # Now a link out of the vault (or a pipe, unreadable...): shown, never read.
                fresh[rel] = skipped_scan(adapter.format_id, root, skip), None
            elif owned and os.path.isfile(path):
                fresh[rel] = _cache.scan_one(adapter, root, path, _previous(vault, rel))
            else:
                gone.add(rel)
                # A removed folder: everything known below it is gone too.
                gone.update(r for r in scans if r.startswith(rel + "/"))
        else:
            gone.update(r for r in scans if r.startswith(rel + "/"))

    def folder(self, rel: str) -> None:
        """Every vault file below folder `rel` (a moved, removed or refused folder)."""
        adapter, root, listing = self.vault.adapter, self.vault.root, self.listing()
        prefix = "" if rel == "." else rel + "/"
        # (`rel` itself too: the folder's own problem, once it was unreadable.)
        known = [r for r in self.vault.scans if r.startswith(prefix) or r == rel]
        listed = [r for r in listing.names if r.startswith(prefix)]
        skipped = [s for s in listing.skipped if s.rel.startswith(prefix) or s.rel == rel]
        self.gone.update(set(known) - set(listed) - {s.rel for s in skipped})
        for r in listed:
            self.fresh[r] = _cache.scan_one(adapter, root, root / r)
        for s in skipped:
            self.fresh[s.rel] = skipped_scan(adapter.format_id, root, s), None


def _readable_again(scans: dict[str, FileScan], fresh: Iterable[str]) -> set[str]:
    """Folders shown as unreadable (a scan keyed by the folder) with a file
    read below them now: readable again, so their problem goes.  Only a
    folder has files below it, so any such key is one."""
    out: set[str] = set()
    for rel in fresh:
        while "/" in rel:
            rel = rel.rpartition("/")[0]
            if rel in scans and rel not in fresh:
                out.add(rel)
    return out


def _keep_unchanged(old: FileScan, new: FileScan) -> None:
    """Reuse the old object of every memory a re-read file still holds unchanged.

    A file with many memories (a dream-cycle observations.md, a JSON Lines
    store) is re-read whole when one entry changes; keeping the other
    entries' objects lets `diff_results` (and so the search index and the
    app) see only the entry that really changed.
    """
    if len(old.memories) < 2 or not new.memories or new.kept_objects:
        # (`kept_objects`: the adapter's rescan already kept them.)
        return
    by_id = {m.id: m for m in old.memories}
    new.memories = [
        prev if (prev := by_id.get(m.id)) is not None and prev is not m and prev == m else m
        for m in new.memories
    ]


def _previous(vault: Vault, rel: str) -> tuple[FileScan, FileStamp] | None:
    fs, stamp = vault.scans.get(rel), vault.stamps.get(rel)
    return (fs, stamp) if fs is not None and stamp is not None else None


def _in_scan_order(scans: dict[str, FileScan]) -> dict[str, FileScan]:
    """The same scans ordered by `FileScan.order` (cheap when nearly sorted)."""
    items = list(scans.items())
    orders = [fs.order for _rel, fs in items]
    # Usually only a few new files sit out of place at the end: insert them
    # by binary search instead of sorting everything.
    cut = len(items)
    while cut > 1 and orders[cut - 2] <= orders[cut - 1]:
        cut -= 1
    if cut == 1:
        return scans
    head, tail = items[: cut - 1], items[cut - 1 :]
    head_orders = orders[: cut - 1]
    if any(head_orders[i] > head_orders[i + 1] for i in range(len(head_orders) - 1)):
        return dict(sorted(items, key=lambda kv: kv[1].order))
    for rel, fs in tail:
        i = bisect.bisect_right(head_orders, fs.order)
        head_orders.insert(i, fs.order)
        head.insert(i, (rel, fs))
    return dict(head)


def stale_paths(vault: Vault) -> list[Path]:
    """Files added, changed or removed since the vault was read (stat walk only).

    A cheap periodic check for anything a file watcher missed; pass the
    result to `rescan_paths`.
    """
    return _cache.stale_files(vault.adapter, vault.root, vault.stamps)


def save_cache(vault: Vault) -> CacheStats:
    """Write the rows of the files rescanned since the vault was read to its store.

    One transaction for just those rows (`Vault.unsaved`); a vault read
    without the store has every stamp compared with the stored ones.
    """
    stats = vault.cache_stats or CacheStats()
    stats.path = _cache.cache_path(vault.root)
    try:
        if vault.unsaved is None:
            _cache.save_entries(
                vault.root, vault.format, _cache.entries_of(vault.scans, vault.stamps)
            )
        else:
            rels, vault.unsaved = vault.unsaved, set()
            _cache.save_rows(vault.root, vault.format, rels, vault.scans, vault.stamps)
        stats.saved = True
    except (OSError, sqlite3.Error) as exc:  # a cache that cannot be written is only slower
        stats.saved = False
        stats.reason = f"cache not saved: {exc}"
    vault.cache_stats = stats
    return stats


def iter_catalog(
    *paths: Path | str, cache: bool = False, parallel: bool | None = None
) -> Iterator[Vault]:
    """Discover every vault below the paths and yield each as soon as it is scanned."""
    yield from _scan_all(survey_all(*paths).vaults, cache=cache, parallel=parallel)


def survey_all(*paths: Path | str) -> Survey:
    """`survey` of every path, each vault (and unreadable folder) once."""
    seen: set[Path] = set()
    found: list[Vault] = []
    refused: dict[tuple[Path, str], Problem] = {}
    for p in paths:
        got = survey(Path(p))
        for v in got.vaults:
            if v.root not in seen:
                seen.add(v.root)
                found.append(v)
        for problem in got.unreadable:
            refused.setdefault((problem.vault_root / problem.path, problem.detail), problem)
    return Survey(found, list(refused.values()))


def _scan_all(found: list[Vault], *, cache: bool, parallel: bool | None) -> Iterator[Vault]:
    with contextlib.ExitStack() as stack:
        ahead = start_walk_ahead(found, cache=cache)
        if ahead is not None:
            stack.callback(ahead.close)
        for v in found:
            yield scan_vault(v, cache=cache, parallel=parallel, ahead=ahead)


def start_walk_ahead(
    vaults: list[Vault], *, cache: bool, force: bool | None = None
) -> WalkAhead | None:
    """Have another process stat-walk `vaults` (in this order) while their caches load.

    None when it does not pay (a cold start, small vaults, no CPU to
    spare); pass the result to `scan_progressive` / `scan_vault` of each
    vault, in order, and close it after.  See `core.walk_ahead`.
    """
    return walk_ahead([(v.root, v.format) for v in vaults], cache=cache, force=force)


def open_catalog(*paths: Path | str, cache: bool = False, parallel: bool | None = None) -> Catalog:
    """Discover and scan every vault below the given paths.

    `cache` serves unchanged files from the persistent per-vault cache (in
    the user's cache directory) and refreshes it.
    """
    found = survey_all(*paths)
    vaults = list(_scan_all(found.vaults, cache=cache, parallel=parallel))
    return Catalog(vaults, found.unreadable)
