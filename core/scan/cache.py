"""Per-file scanning, reusing what the vault's persistent store holds for unchanged files.

A vault is scanned file by file (`FormatAdapter.files` / `scan_file` /
`link`).  This module drives that: it reads each file once (bytes, a stat
taken before and after the read, and a sha256), hands the bytes to the
adapter, and, when asked (`cache`), keeps every file's `FileScan` as a row
of the vault's store (`core.store`: SQLite in the user's cache folder, never
inside the vault) so the next run re-parses only the files whose stat
changed, and writes only their rows.  Memory bodies are not stored: a
memory served from the store reads its body from its file on first use
(`core.store.bodies`).

The linked result is not stored: `link` costs a small fraction of loading
the rows (measured at 100k memories, see the store's notes), and a linked
result kept beside per-file rows would have to be rewritten whole whenever
one file changes (the memories of unchanged files carry link results).

Parallel cold parse
    A parse of many files may be shared with worker processes
    (`scan.parallel`, see PARALLEL_MIN_FILES): they return the pickled
    FileScans, which this process binds to the vault root.  Reading one file
    with its stamp is `scan.reading`; the stats and progress a scan reports
    are in `scan.progress`.

When a stored row is trusted
    Only when the file's size, mtime_ns, ctime_ns and inode all equal what
    they were when it was read.  ctime catches a same-size rewrite whose
    mtime was put back with `os.utime` (utime itself bumps ctime); the inode
    catches an atomic replace.  A file whose timestamps were within
    `reading.RACY_WINDOW_NS` of the moment it was read could be rewritten again in the
    same clock tick without any stat change ("racily clean", as git calls
    it): such rows are re-read and compared by sha256 before being reused.
    The store itself is checked as `core.store.db` describes (owner-only,
    schema, vault, code fingerprint); anything else is rebuilt, with the
    reason in `CacheStats.reason` (core never prints).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..formats import FormatAdapter
from ..formats.files import Listing, recorded_listing, rel_posix, skipped_scan
from ..model import FileScan, Memory, ScanResult
from ..store import (
    CACHE_DIR_ENV,
    Entries,
    FileStamp,
    RowLoader,
    StoreCorrupt,
    VaultStore,
    cache_dir,
    open_store,
    pack,
)
from . import parallel as parallel_parse
from .parallel import parse_files, parse_rels
from .progress import CacheStats, ScanProgress, quiet_gc
from .reading import read_stamped, scan_new, scan_one
from .stored import (
    cache_path,
    clear,
    code_fingerprint,
    entries_of,
    load_entries,
    save_delta,
    save_entries,
    save_rows,
)

#: Memories in a progressive scan's first step (then `batch` each): a cold
#: 100k start showed its first rows once a whole batch of 2,000 files was
#: parsed (~0.4 s after the stat walk); 200 fill the screen.
FIRST_STEP = 200
#: Files a cold start parses before listing the vault: a screenful of first rows.
PEEK = 100

# --------------------------------------------------------------------------- scanning


def scan_files(
    adapter: FormatAdapter,
    root: Path,
    *,
    cache: bool = False,
    batch: int | None = None,
    parallel: bool | None = None,
    save: bool = True,
    walk: Callable[[], tuple[Listing, list[tuple[int, int, int, int] | None]] | None] | None = None,
) -> Iterator[ScanProgress]:
    """Scan a vault file by file, yielding progress; the last step is linked.

    With `cache`, unchanged files come from the vault's store (their
    memories are yielded first, at once, bodies read from the files on use)
    and only new or changed files are parsed.  `batch` sets how many
    memories a progress step carries (None: one final step only).  The rows
    of changed, new and gone files are written in one transaction (`save`)
    after the final (`done`) step is yielded: iterate to the end to save.
    `walk`, called once the store is loaded, gives the vault's listing and
    stat keys as another process took them meanwhile (`core.walk_ahead`);
    when it is absent or returns None the scan walks the vault itself.
    """
    stats = CacheStats()
    store: VaultStore | None = None
    entries: Entries = {}
    early: set[str] = set()
    try:
        if cache:
            t = time.perf_counter()
            store, rows = _open_store(root, adapter.format_id, stats)
            if store is not None and rows is not None and batch is not None and len(rows) > batch:
                # A first batch at once (before the other rows are decoded and
                # the vault walked): early rows, replaced by the linked ones.
                # Until the walk, every stored row counts as reused (what a warm
                # start expects; a front end shows no more early rows then); the
                # done step carries the real counts.
                stats.files = stats.reused = len(rows)
                entries = _decode(store, stats, rows, batch)
                early = set(entries)
                first = [m for _stamp, fs in entries.values() for m in fs.memories]
                yield ScanProgress(first, len(early), stats.files, stats=stats)
                del first
            if store is not None and rows is not None and stats.status == "warm":
                entries.update(_decode(store, stats, rows, None))
                stats.packed = rows.packed
                if stats.status == "discarded":
                    entries = {}  # the first batch too: one damaged row and none is trusted
                elif not entries:
                    stats.status = "cold"
            # Why: the fetched rows (their compressed blobs, ~45 MB at 100k
            # files) would otherwise live as long as this generator, through
            # the walk, the link and the listing: the peak of a warm start.
            del rows
            stats.load_s = time.perf_counter() - t
        yield from _scan(adapter, root, stats, store, entries, batch, parallel, save, walk, early)
    finally:
        if store is not None:
            store.close()


def _open_store(
    root: Path, format_id: str, stats: CacheStats
) -> tuple[VaultStore | None, RowLoader | None]:
    """The vault's store and its rows to decode; (None, None) with `stats.reason` if no store."""
    stats.path = cache_path(root)
    try:
        opened = open_store(root, format_id, code_fingerprint(format_id))
    except (OSError, sqlite3.Error) as exc:  # a store that cannot be made is only slower
        stats.status, stats.reason = "off", f"cache not saved: {exc}"
        return None, None
    store = opened.store
    assert store is not None
    stats.status, stats.reason = opened.status, opened.reason
    if opened.status != "warm":
        return store, None
    try:
        rows = store.fetch()
    except StoreCorrupt as exc:
        return _discarded(store, stats, exc), None
    if not len(rows):
        stats.status = "cold"
    return store, rows


def _decode(store: VaultStore, stats: CacheStats, rows: RowLoader, count: int | None) -> Entries:
    """The next `count` rows (None: all) as entries; a damaged row empties the store ({})."""
    try:
        with quiet_gc():
            return rows.take(count)
    except StoreCorrupt as exc:
        _discarded(store, stats, exc)
        return {}


def _discarded(store: VaultStore, stats: CacheStats, exc: StoreCorrupt) -> VaultStore | None:
    """Empty a store whose rows could not be read (None if even that fails)."""
    stats.status, stats.reason = "discarded", str(exc)
    try:
        store.discard()
    except sqlite3.Error as again:
        stats.reason = f"{exc}; cache not saved: {again}"
        return None
    return store


def _scan(
    adapter: FormatAdapter,
    root: Path,
    stats: CacheStats,
    store: VaultStore | None,
    entries: Entries,
    batch: int | None,
    parallel: bool | None,
    save: bool,
    walk: Callable[[], tuple[Listing, list[tuple[int, int, int, int] | None]] | None] | None,
    early: set[str],
) -> Iterator[ScanProgress]:
    """`scan_files` once the store (if any) is open and its rows loaded into `entries`.

    `early`: files whose stored memories were already yielded (not again).
    """
    #: Racy rows found unchanged by content: stored again with their fresh stamp.
    renewed: list[tuple[str, FileStamp, FileScan]] = []
    # A cold start: a few files parsed before the listing, for first rows.
    cold = batch is not None and not entries and not early
    peeked = (yield from _first_rows(adapter, root, stats)) if cold else {}
    listing, slots, todo = _stat_walk(adapter, root, entries, stats, renewed, walk)
    rels = listing.names

    pending: list[Memory] = []
    done = 0
    # The first step comes after FIRST_STEP memories: a front end's first rows.
    size = None if batch is None else min(batch, FIRST_STEP)

    def step() -> Iterator[ScanProgress]:
        nonlocal pending, size
        if size is not None and len(pending) >= size:
            out, pending, size = pending, [], batch
            yield ScanProgress(out, done, len(rels), stats=stats)

    if batch is not None:
        done = len(early)
        for rel, reused, _stamp in slots:
            if reused is not None and rel not in early:
                pending.extend(reused.memories)
                done += 1
                yield from step()

    t = time.perf_counter()
    # Peeked files the listing holds are parsed (and their memories shown) already.
    parsed = {rel: peeked[rel] for rel in todo if rel in peeked} if peeked else {}
    done += len(parsed)
    rest = [rel for rel in todo if rel not in parsed] if parsed else todo
    chunks = _parse_chunks(adapter, root, rest, batch, parallel, stats)
    while True:
        with quiet_gc():
            chunk = next(chunks, None)
        if chunk is None:
            break
        for rel, got, got_stamp in chunk:
            parsed[rel] = (got, got_stamp)
            if batch is not None:
                pending.extend(got.memories)
                done += 1
        yield from step()
    stats.parse_s = time.perf_counter() - t
    stats.parsed = len(todo)

    assembled, result = _assemble_and_link(adapter, root, listing, slots, parsed, stats)
    # The linked result first: a front end can list everything while the
    # store is being written (continue the iteration to save).
    yield ScanProgress(
        pending,
        len(rels),
        len(rels),
        done=True,
        result=result,
        scans=assembled.scans,
        stamps=assembled.stamps,
        stats=stats,
        listing=listing,
    )
    if store is not None and save:
        _persist(store, stats, assembled, renewed, entries)


def _persist(
    store: VaultStore,
    stats: CacheStats,
    assembled: _Assembled,
    renewed: list[tuple[str, FileStamp, FileScan]],
    entries: Entries,
) -> None:
    """The scan's new and renewed rows saved; the pack too when it serves too few files."""
    _save(store, stats, assembled.upserts + renewed, [*entries, *assembled.unstamped])
    # At least this many files came from the pack and are current (the
    # files gone and re-read may have been its entries).
    current = stats.packed - stats.dropped - stats.parsed
    if stats.status != "off" and pack.wanted(len(assembled.stamps), current):
        _save_pack(store, stats, assembled.scans, assembled.stamps)


def _first_rows(
    adapter: FormatAdapter, root: Path, stats: CacheStats
) -> Generator[ScanProgress, None, dict[str, tuple[FileScan, FileStamp | None]]]:
    """`_peek`'s files, their memories yielded as a cold start's first rows."""
    peeked = _peek(adapter, root)
    if peeked:
        first = [m for fs, _stamp in peeked.values() for m in fs.memories]
        yield ScanProgress(first, len(peeked), len(peeked), stats=stats)
    return peeked


def _peek(adapter: FormatAdapter, root: Path) -> dict[str, tuple[FileScan, FileStamp | None]]:
    """A few files parsed before the vault is listed (`FormatAdapter.first_files`).

    Why: a cold start lists every file before it parses one (~0.25 s at
    100k files); these give its first rows at once.
    """
    with quiet_gc():
        return {rel: scan_new(adapter, root, rel) for rel in adapter.first_files(root, PEEK)}


def _parse_chunks(
    adapter: FormatAdapter,
    root: Path,
    todo: list[str],
    batch: int | None,
    parallel: bool | None,
    stats: CacheStats,
) -> Iterator[list[tuple[str, FileScan, FileStamp | None]]]:
    """The files to parse, parsed in chunks no larger than a front end's progress steps."""
    chunk_size = (
        parallel_parse.PARALLEL_CHUNK
        if batch is None
        else max(1, min(batch, parallel_parse.PARALLEL_CHUNK))
    )
    return parse_rels(
        adapter,
        root,
        todo,
        parallel=parallel,
        chunk_size=chunk_size,
        stats=stats,
        first_chunk=None if batch is None else FIRST_STEP,
    )


def _assemble_and_link(
    adapter: FormatAdapter,
    root: Path,
    listing: Listing,
    slots: list[tuple[str, FileScan | None, FileStamp | None]],
    parsed: dict[str, tuple[FileScan, FileStamp | None]],
    stats: CacheStats,
) -> tuple[_Assembled, ScanResult]:
    """Every file's scan in scan order, linked by the format (timed in `stats.link_s`)."""
    assembled = _assemble(adapter, root, listing, slots, parsed)
    t = time.perf_counter()
    with quiet_gc():
        result = adapter.link(root, assembled.scans)
    stats.link_s = time.perf_counter() - t
    return assembled, result


@dataclass(slots=True)
class _Assembled:
    """A scan's files in scan order, and what the store must learn of them."""

    scans: dict[str, FileScan]
    stamps: dict[str, FileStamp]
    #: Rows to write: the files parsed (with a stamp).
    upserts: list[tuple[str, FileStamp, FileScan]]
    #: Files parsed without a stamp (unreadable): their old rows go.
    unstamped: list[str]


def _assemble(
    adapter: FormatAdapter,
    root: Path,
    listing: Listing,
    slots: list[tuple[str, FileScan | None, FileStamp | None]],
    parsed: dict[str, tuple[FileScan, FileStamp | None]],
) -> _Assembled:
    """Stored and parsed scans in scan order, skipped entries first."""
    # Entries the listing left out (a link out of the vault, a pipe, ...)
    # show as one Problem each.  They come first: their empty order sorts
    # before every file's, so the dict stays in scan order.
    out = _Assembled(
        {s.rel: skipped_scan(adapter.format_id, root, s) for s in listing.skipped}, {}, [], []
    )
    scans, stamps = out.scans, out.stamps
    for rel, cached_scan, cached_stamp in slots:
        if cached_scan is not None and cached_stamp is not None:
            scans[rel], stamps[rel] = cached_scan, cached_stamp
            continue
        new_scan, new_stamp = parsed[rel]
        scans[rel] = new_scan
        if new_stamp is not None:
            stamps[rel] = new_stamp
            out.upserts.append((rel, new_stamp, new_scan))
        else:
            out.unstamped.append(rel)
    return out


def _stat_walk(
    adapter: FormatAdapter,
    root: Path,
    entries: Entries,
    stats: CacheStats,
    renewed: list[tuple[str, FileStamp, FileScan]],
    walk: Callable[[], tuple[Listing, list[tuple[int, int, int, int] | None]] | None] | None,
) -> tuple[Listing, list[tuple[str, FileScan | None, FileStamp | None]], list[str]]:
    """The listing, each file's slot (its stored scan if still current), the files to parse."""
    t = time.perf_counter()
    ahead = walk() if walk is not None else None
    with quiet_gc():
        if ahead is not None:
            listing, keys = ahead
            slots, todo = _match(root, listing.names, keys, entries, stats, renewed)
        else:
            listing = recorded_listing(adapter.file_listing, root)
            slots, todo = _walk(root, listing.names, entries, stats, renewed)
    stats.files = len(listing.names)
    stats.dropped = len(entries)
    stats.reused = len(listing.names) - len(todo)
    stats.walk_s = time.perf_counter() - t
    return listing, slots, todo


def _save(
    store: VaultStore,
    stats: CacheStats,
    upserts: list[tuple[str, FileStamp, FileScan]],
    deletes: list[str],
) -> None:
    """Write the changed rows in one transaction (nothing when nothing changed)."""
    if not upserts and not deletes:
        return
    t = time.perf_counter()
    try:
        store.save(upserts, deletes)
        stats.saved = True
    except sqlite3.Error as exc:  # busy beyond the timeout, disk full: only slower
        stats.reason = f"cache not saved: {exc}"
    stats.save_s = time.perf_counter() - t


def _save_pack(
    store: VaultStore, stats: CacheStats, scans: dict[str, FileScan], stamps: dict[str, FileStamp]
) -> None:
    """Keep every stamped file's scan in the store's pack (`core.store.pack`)."""
    t = time.perf_counter()
    try:
        if store.save_pack((rel, stamp, scans[rel]) for rel, stamp in stamps.items()):
            stats.packed = len(stamps)
    except sqlite3.Error as exc:  # busy beyond the timeout, disk full: only slower
        stats.reason = f"pack not saved: {exc}"
    stats.save_s += time.perf_counter() - t


def _walk(
    root: Path,
    rels: list[str],
    entries: Entries,
    stats: CacheStats,
    renewed: list[tuple[str, FileStamp, FileScan]],
) -> tuple[list[tuple[str, FileScan | None, FileStamp | None]], list[str]]:
    """Stat every file: cached entries still valid fill their slot, the rest go to `todo`.

    Entries found are popped from `entries`, so what is left there vanished;
    racy entries verified by content go to `renewed` with their fresh stamp.
    """
    slots: list[tuple[str, FileScan | None, FileStamp | None]] = []
    todo: list[str] = []
    base = str(root) + os.sep
    stat, pop, add = os.stat, entries.pop, slots.append
    for at, rel in enumerate(rels):
        entry = pop(rel, None) if entries else None
        if entry is not None:
            stamp, fs = entry
            full = base + rel
            try:
                st = stat(full)
            except OSError:
                st = None
            if st is not None and stamp.matches(st):
                rel = rels[at] = _shared_path(rel, fs)
                if not stamp.racy:
                    add((rel, fs, stamp))
                    continue
                fresh = _verify(Path(full), stamp)
                if fresh is not None:
                    stats.verified += 1
                    slots.append((rel, fs, fresh))
                    renewed.append((rel, fresh, fs))
                    continue
        slots.append((rel, None, None))
        todo.append(rel)
    return slots, todo


def _match(
    root: Path,
    rels: list[str],
    keys: list[tuple[int, int, int, int] | None],
    entries: Entries,
    stats: CacheStats,
    renewed: list[tuple[str, FileStamp, FileScan]],
) -> tuple[list[tuple[str, FileScan | None, FileStamp | None]], list[str]]:
    """`_walk` with the stat of each file already taken (`core.walk_ahead`)."""
    slots: list[tuple[str, FileScan | None, FileStamp | None]] = []
    todo: list[str] = []
    pop, add = entries.pop, slots.append
    for at, (rel, key) in enumerate(zip(rels, keys, strict=True)):
        entry = pop(rel, None) if entries else None
        if entry is not None and key is not None:
            stamp, fs = entry
            if key == (stamp.size, stamp.mtime_ns, stamp.ctime_ns, stamp.inode):
                rel = rels[at] = _shared_path(rel, fs)
                if not stamp.racy:
                    add((rel, fs, stamp))
                    continue
                fresh = _verify(root / rel, stamp)
                if fresh is not None:
                    stats.verified += 1
                    add((rel, fs, fresh))
                    renewed.append((rel, fresh, fs))
                    continue
        add((rel, None, None))
        todo.append(rel)
    return slots, todo


def _shared_path(rel: str, fs: FileScan) -> str:
    """`rel` as the string its stored memories hold, when equal (set in the listing too).

    Why: the listing, the scan's keys and each memory's `path` are the same
    path; one string instead of two is ~12 MB at 100k files, for the vault's
    lifetime (`Vault.listing` keeps the names).
    """
    memories = fs.memories
    if memories:
        path = memories[0].path
        if path == rel:
            return path
    return rel


def _verify(path: Path, stamp: FileStamp) -> FileStamp | None:
    """A fresh stamp if the file still holds the bytes `stamp` hashed, else None."""
    try:
        _data, fresh = read_stamped(path)
    except OSError:
        return None
    return fresh if fresh.sha256 == stamp.sha256 else None


def stale_files(adapter: FormatAdapter, root: Path, stamps: dict[str, FileStamp]) -> list[Path]:
    """Files added, changed or removed since they were stamped (a stat walk only).

    For a periodic cheap rescan that catches what a file watcher missed;
    pass the result to `vault.rescan_paths`.
    """
    out: list[Path] = []
    seen: set[str] = set()
    for path in adapter.files(root):
        rel = rel_posix(root, path)
        seen.add(rel)
        stamp = stamps.get(rel)
        try:
            st = os.stat(path)
        except OSError:
            out.append(path)
            continue
        if stamp is None or not stamp.matches(st) or stamp.racy:
            out.append(path)
    out.extend(root / rel for rel in stamps if rel not in seen)
    return out


def run_to_end(steps: Iterable[ScanProgress]) -> ScanProgress:
    """The final step of a progressive scan, once the scan is over (cache saved)."""
    last: ScanProgress | None = None
    for step in steps:
        last = step
    assert last is not None and last.done
    return last


__all__ = [
    "CACHE_DIR_ENV",
    "CacheStats",
    "Entries",
    "FileStamp",
    "ScanProgress",
    "cache_dir",
    "cache_path",
    "clear",
    "code_fingerprint",
    "entries_of",
    "load_entries",
    "parse_files",
    "read_stamped",
    "run_to_end",
    "save_delta",
    "save_entries",
    "save_rows",
    "scan_files",
    "scan_one",
    "stale_files",
]
