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
    (`core.parse_worker`, see PARALLEL_MIN_FILES): they return the pickled
    FileScans, which this process binds to the vault root.

When a stored row is trusted
    Only when the file's size, mtime_ns, ctime_ns and inode all equal what
    they were when it was read.  ctime catches a same-size rewrite whose
    mtime was put back with `os.utime` (utime itself bumps ctime); the inode
    catches an atomic replace.  A file whose timestamps were within
    `RACY_WINDOW_NS` of the moment it was read could be rewritten again in the
    same clock tick without any stat change ("racily clean", as git calls
    it): such rows are re-read and compared by sha256 before being reused.
    The store itself is checked as `core.store.db` describes (owner-only,
    schema, vault, code fingerprint); anything else is rebuilt, with the
    reason in `CacheStats.reason` (core never prints).
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import io
import os
import pickle
import sqlite3
import stat
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..formats import FormatAdapter, adapter_for
from ..formats.files import Listing, rel_posix, skipped_scan
from ..model import FileScan, Memory, ScanResult
from ..safe_io import NotRegularFileError, kind_of
from ..store import (
    CACHE_DIR_ENV,
    Entries,
    FileStamp,
    Row,
    StoreCorrupt,
    VaultStore,
    cache_dir,
    open_store,
)
from ..store.codec import FULL_DISPATCH
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
from .workers import (
    _cpus,
    _pool,
    _Worker,  # noqa: F401  (re-exported: tests patch it here)
    _WorkerFailed,
    run_in_worker,
    spare_cpu,
)

#: Files whose timestamps are this close to the moment they were read are
#: re-checked by content on the next start (coarse file system clocks).
RACY_WINDOW_NS = 2_000_000_000
#: Worker processes (`core.parse_worker`) share a cold parse of at least this
#: many files when a second CPU is idle (`parallel=None`, the default;
#: `parallel=False` or MEMLENS_PARALLEL=0 keeps it in one process).  The
#: workers send back FileScans pickled with the constructor reducers below,
#: about a tenth of the parse to unpickle.  Measured at 60k Markdown files on
#: the 2-core machine while other work kept it busy (load ~2): 7.4-8.3 s in
#: one process, 9.1-10.2 s with two workers, hence the load check; with the
#: machine quieter (load ~1) the 100k bench listed in ~5.2 s with workers.
#: Below ~8k files a worker's start (an interpreter and the imports, ~0.3 s)
#: costs about what it saves (2k-file vaults: 0.87 s with workers, 0.77 s
#: without).
PARALLEL_MIN_FILES = 8_000
PARALLEL_CHUNK = 2_000
#: Environment variable: "0" keeps the default cold parse in one process.
PARALLEL_ENV = "MEMLENS_PARALLEL"


@dataclass(slots=True)
class CacheStats:
    """How one vault scan used the cache.  Timings are seconds."""

    #: The cache file (None when the cache is off).
    path: Path | None = None
    #: "off", "cold" (no cache file yet), "warm" (entries used) or "discarded".
    status: str = "off"
    #: Why a cache file was not used or not saved.
    reason: str | None = None
    files: int = 0
    reused: int = 0
    parsed: int = 0
    #: Cached entries whose file is gone.
    dropped: int = 0
    #: Racy entries re-read and found unchanged.
    verified: int = 0
    #: Files parsed by worker processes.
    parallel: int = 0
    saved: bool = False
    load_s: float = 0.0
    walk_s: float = 0.0
    parse_s: float = 0.0
    link_s: float = 0.0
    save_s: float = 0.0


@dataclass(slots=True)
class ScanProgress:
    """One step of a progressive scan.

    `memories` are the new ones since the last step, read but not linked yet
    (no duplicate check or resolved references: good for showing first
    rows).  The last step has `done` set and carries the linked `result`.
    """

    memories: list[Memory]
    files_done: int
    files_total: int
    done: bool = False
    result: ScanResult | None = None
    scans: dict[str, FileScan] = field(default_factory=dict)
    stamps: dict[str, FileStamp] = field(default_factory=dict)
    stats: CacheStats = field(default_factory=CacheStats)


# --------------------------------------------------------------------------- garbage collector


@contextlib.contextmanager
def quiet_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building long-lived objects, then freeze them.

    Why: a scan creates millions of small objects (memories, their field
    dicts, relations) that live as long as the catalog.  With the collector
    on, every few thousand allocations trigger a pass, and the first passes
    after a big load walk all of them: at 100k memories that cost seconds.
    Frozen objects (`gc.freeze`) are skipped by every later pass.  They are
    still freed by reference counting; only garbage *cycles* created before
    the freeze would linger, and scan results hold none.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


# --------------------------------------------------------------------------- reading files


def read_stamped(path: Path) -> tuple[bytes, FileStamp]:
    """The bytes of `path` and the stamp they belong to.

    fstat before and after the read on the same descriptor: a write that
    lands during the read shows up as a difference, and the read is retried,
    so a stamp never vouches for bytes it did not describe.
    """
    data, stamp, _prefix = _read_stamped(path, None)
    return data, stamp


def _read_all(fd: int, size: int) -> bytes:
    """Every byte from the descriptor's position to the end (`size`: the expected length).

    Exactly `size` bytes for a request of `size + 1` is the end of the file
    (the caller's fstat after the read confirms the size), so the usual case
    takes one read; anything else reads on until a read returns nothing.
    """
    data = os.read(fd, size + 1)
    if len(data) == size:
        return data
    parts = [data]
    while chunk := os.read(fd, max(size + 1 - len(data), 1 << 16)):
        parts.append(chunk)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _read_stamped(path: Path | str, prefix: int | None) -> tuple[bytes, FileStamp, str | None]:
    """`read_stamped`, plus the sha256 of the first `prefix` bytes (in the same pass)."""
    # os.open/os.read, not open(): no file object per file (half the cost of
    # reading a small file, which is what a vault mostly holds).
    # O_NONBLOCK: a FIFO put where a memory file was opens at once (and is
    # refused below) instead of waiting for a writer forever.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        for _ in range(3):
            before = os.fstat(fd)
            if not stat.S_ISREG(before.st_mode):
                raise NotRegularFileError(path, kind_of(before.st_mode))
            data = _read_all(fd, before.st_size)
            after = os.fstat(fd)
            if (before.st_mtime_ns, before.st_ctime_ns, before.st_size) == (
                after.st_mtime_ns,
                after.st_ctime_ns,
                after.st_size,
            ) and after.st_size == len(data):
                break
            os.lseek(fd, 0, os.SEEK_SET)
    finally:
        os.close(fd)
    digest = hashlib.sha256()
    prefix_sha: str | None = None
    if prefix is not None and 0 < prefix <= len(data):
        view = memoryview(data)
        digest.update(view[:prefix])
        prefix_sha = digest.copy().hexdigest()
        digest.update(view[prefix:])
    else:
        digest.update(data)
    newest = max(after.st_mtime_ns, after.st_ctime_ns)
    stamp = FileStamp(
        size=after.st_size,
        mtime_ns=after.st_mtime_ns,
        ctime_ns=after.st_ctime_ns,
        inode=after.st_ino,
        sha256=digest.hexdigest(),
        racy=time.time_ns() - newest < RACY_WINDOW_NS,
    )
    return data, stamp, prefix_sha


def scan_one(
    adapter: FormatAdapter,
    root: Path,
    path: Path,
    previous: tuple[FileScan, FileStamp] | None = None,
) -> tuple[FileScan, FileStamp | None]:
    """One file through the adapter, with its stamp (None if it could not be read).

    An unreadable file is left to the adapter, which reports it its own way;
    without a stamp it is never cached, so it is read again next time.

    With `previous` (the file's last FileScan and stamp), a file that only
    grew, its old bytes intact up to a line end (an append-only JSON Lines
    store), is handed to the adapter's `scan_appended` so only the
    new lines are parsed (the line they start on comes from the previous
    FileScan's optional `data["newlines"]`, else by counting); otherwise
    the adapter's `rescan_file` may reuse what the previous read
    made of unchanged parts.
    """
    old_size = previous[1].size if previous is not None else None
    try:
        data, stamp, prefix_sha = _read_stamped(path, old_size)
    except OSError:
        return adapter.scan_file(root, path), None
    if (
        previous is not None
        and old_size is not None
        and prefix_sha == previous[1].sha256
        and len(data) > old_size
        and data[old_size - 1 : old_size] == b"\n"
    ):
        # The previous read may know its line count (`newlines`: the same
        # bytes the stamp hashed); counting 10 MB again costs ~7 ms.
        known = previous[0].data.get("newlines")
        first_line = (known if isinstance(known, int) else data.count(b"\n", 0, old_size)) + 1
        grown = adapter.scan_appended(root, path, previous[0], data[old_size:], first_line)
        if grown is not None:
            return grown, stamp
    if previous is not None:
        redone = adapter.rescan_file(root, path, data, previous[0])
        if redone is not None:
            return redone, stamp
    return adapter.scan_file(root, path, data), stamp


def _scan_new(adapter: FormatAdapter, root: Path, rel: str) -> tuple[FileScan, FileStamp | None]:
    """`scan_one` for a file with no previous scan, named by its vault-relative path.

    Through the adapter's `scan_rel` (the same as `scan_file`, by relative
    path; formats override it to build no Path): a cold scan reads every
    file this way.
    """
    full = f"{root}{os.sep}{rel}"
    try:
        data, stamp, _prefix = _read_stamped(full, None)
    except OSError:
        return adapter.scan_file(root, Path(full)), None
    return adapter.scan_rel(root, rel, data), stamp


def _parse_chunk(format_id: str, root: str, rels: list[str]) -> bytes:
    """Worker: parse some files of one vault (runs in another process).

    Returns the pickled [(rel, FileScan, FileStamp | None)], pickled with the
    cache's constructor reducers (about half the unpickling time of the
    default, and the unpickling happens in the one main process).
    """
    adapter = adapter_for(format_id)
    base = Path(root)
    return _dumps([(rel, *_scan_new(adapter, base, rel)) for rel in rels])


def parse_files(
    adapter: FormatAdapter,
    root: Path,
    paths: list[Path],
    *,
    parallel: bool | None = None,
    chunk_size: int = PARALLEL_CHUNK,
    stats: CacheStats | None = None,
) -> Iterator[list[tuple[str, FileScan, FileStamp | None]]]:
    """Parse files, yielding results in chunks (about `chunk_size` files), in order.

    A large parse is split over worker processes (`parallel`: None decides
    by size and CPUs, see PARALLEL_MIN_FILES; True or False forces it).  If
    the workers cannot start or break, the remaining files are parsed here.
    """
    yield from _parse_rels(
        adapter,
        root,
        [rel_posix(root, p) for p in paths],
        parallel=parallel,
        chunk_size=chunk_size,
        stats=stats,
    )


def _parse_rels(
    adapter: FormatAdapter,
    root: Path,
    rels: list[str],
    *,
    parallel: bool | None = None,
    chunk_size: int = PARALLEL_CHUNK,
    stats: CacheStats | None = None,
) -> Iterator[list[tuple[str, FileScan, FileStamp | None]]]:
    """`parse_files` by vault-relative paths."""
    if not _used_workers(len(rels), parallel):
        chunk: list[tuple[str, FileScan, FileStamp | None]] = []
        for rel in rels:
            fs, stamp = _scan_new(adapter, root, rel)
            chunk.append((rel, fs, stamp))
            if len(chunk) >= chunk_size:
                yield chunk
                chunk = []
        if chunk:
            yield chunk
        return
    workers = _pool.acquire(min(_cpus(), 4))
    if not workers:
        yield from _parse_rels(adapter, root, rels, parallel=False, chunk_size=chunk_size)
        return
    size = min(PARALLEL_CHUNK, max(1, len(rels) // (len(workers) * 4)))
    # This process parses a first piece (one progress step) itself while the
    # workers start, so a front end's first rows come at once; then it
    # gathers what the workers send.
    first = max(1, min(chunk_size, size))
    pieces = [(i, min(i + size, len(rels))) for i in range(first, len(rels), size)]
    done = 0
    own_done = False
    try:
        # The job goes out after this piece: the workers are still importing
        # the scanning code, and sending it earlier would wait for them.
        own = [(rel, *_scan_new(adapter, root, rel)) for rel in rels[:first]]
        own_done = True
        yield own
        job = pickle.dumps(("job", adapter.format_id, str(root), rels))
        for w in workers:
            w.send(job)
        # Piece i goes to worker i % n, two pieces in flight per worker.
        sent = 0
        while sent < min(len(pieces), 2 * len(workers)):
            workers[sent % len(workers)].send(pickle.dumps(("parse", *pieces[sent])))
            sent += 1
        for i in range(len(pieces)):
            worker = workers[i % len(workers)]
            blob = worker.receive()
            if sent < len(pieces):
                workers[sent % len(workers)].send(pickle.dumps(("parse", *pieces[sent])))
                sent += 1
            with quiet_gc():
                results: list[tuple[str, FileScan, FileStamp | None]] = pickle.loads(blob)
            del blob
            for _rel, fs, _stamp in results:
                # Share the one root Path object again (smaller cache file).
                for m in fs.memories:
                    m.vault_root = root
            done = i + 1
            if stats is not None:
                stats.parallel += len(results)
            yield results
        _pool.release(workers)
    except (OSError, EOFError, pickle.UnpicklingError, _WorkerFailed):
        # A worker could not start or died (no interpreter to run, killed):
        # parse the rest here.
        _pool.discard(workers)
        if not own_done:
            yield [(rel, *_scan_new(adapter, root, rel)) for rel in rels[:first]]
        for start, end in pieces[done:]:
            yield [(rel, *_scan_new(adapter, root, rel)) for rel in rels[start:end]]
    except BaseException:
        _pool.discard(workers)
        raise


# --------------------------------------------------------------------------- rows


def _dumps(payload: Any) -> bytes:
    """Pickled with the constructor reducers (bodies kept): a worker's answer."""
    buf = io.BytesIO()
    out = pickle.Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL)
    out.dispatch_table = FULL_DISPATCH
    out.dump(payload)
    return buf.getvalue()


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
            store, zdict, rows = _open_store(root, adapter.format_id, stats)
            if store is not None and batch is not None and len(rows) > batch:
                # A first batch at once (before the other rows are decoded and
                # the vault walked): early rows, replaced by the linked ones.
                entries = _decode(store, stats, zdict, rows[:batch])
                early = set(entries)
                first = [m for _stamp, fs in entries.values() for m in fs.memories]
                # Until the walk, every stored row counts as reused (what a warm
                # start expects; a front end shows no more early rows then); the
                # done step carries the real counts.
                stats.files = stats.reused = len(rows)
                yield ScanProgress(first, len(early), len(rows), stats=stats)
                rows = rows[batch:]
            if store is not None and stats.status == "warm":
                entries.update(_decode(store, stats, zdict, rows))
                if stats.status == "discarded":
                    entries = {}  # the first batch too: one damaged row and none is trusted
                elif not entries:
                    stats.status = "cold"
            stats.load_s = time.perf_counter() - t
        yield from _scan(adapter, root, stats, store, entries, batch, parallel, save, walk, early)
    finally:
        if store is not None:
            store.close()


def _open_store(
    root: Path, format_id: str, stats: CacheStats
) -> tuple[VaultStore | None, bytes, list[Row]]:
    """The vault's store and its rows as fetched; (None, ...) with `stats.reason` if none."""
    stats.path = cache_path(root)
    try:
        opened = open_store(root, format_id, code_fingerprint(format_id))
    except (OSError, sqlite3.Error) as exc:  # a store that cannot be made is only slower
        stats.status, stats.reason = "off", f"cache not saved: {exc}"
        return None, b"", []
    store = opened.store
    assert store is not None
    stats.status, stats.reason = opened.status, opened.reason
    if opened.status != "warm":
        return store, b"", []
    try:
        zdict, rows = store.fetch()
    except StoreCorrupt as exc:
        return _discarded(store, stats, exc), b"", []
    if not rows:
        stats.status = "cold"
    return store, zdict, rows


def _decode(store: VaultStore, stats: CacheStats, zdict: bytes, rows: list[Row]) -> Entries:
    """Rows as entries; a damaged row empties the store ({}, status "discarded")."""
    try:
        with quiet_gc():
            return store.decode(zdict, rows)
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
    listing, slots, todo = _stat_walk(adapter, root, entries, stats, renewed, walk)
    rels = listing.names

    pending: list[Memory] = []
    done = 0

    def step() -> Iterator[ScanProgress]:
        nonlocal pending
        if batch is not None and len(pending) >= batch:
            out, pending = pending, []
            yield ScanProgress(out, done, len(rels), stats=stats)

    if batch is not None:
        done = len(early)
        for rel, reused, _stamp in slots:
            if reused is not None and rel not in early:
                pending.extend(reused.memories)
                done += 1
                if len(pending) >= batch:
                    yield from step()

    t = time.perf_counter()
    parsed: dict[str, tuple[FileScan, FileStamp | None]] = {}
    chunk_size = PARALLEL_CHUNK if batch is None else max(1, min(batch, PARALLEL_CHUNK))
    chunks = _parse_rels(adapter, root, todo, parallel=parallel, chunk_size=chunk_size, stats=stats)
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

    assembled = _assemble(adapter, root, listing, slots, parsed)
    scans, stamps = assembled.scans, assembled.stamps

    t = time.perf_counter()
    with quiet_gc():
        result = adapter.link(root, scans)
    stats.link_s = time.perf_counter() - t

    # The linked result first: a front end can list everything while the
    # store is being written (continue the iteration to save).
    yield ScanProgress(
        pending,
        len(rels),
        len(rels),
        done=True,
        result=result,
        scans=scans,
        stamps=stamps,
        stats=stats,
    )
    if store is not None and save:
        _save(store, stats, assembled.upserts + renewed, [*entries, *assembled.unstamped])


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
            listing = adapter.file_listing(root)
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
    for rel in rels:
        entry = pop(rel, None) if entries else None
        if entry is not None:
            stamp, fs = entry
            full = base + rel
            try:
                st = stat(full)
            except OSError:
                st = None
            if st is not None and stamp.matches(st):
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
    for rel, key in zip(rels, keys, strict=True):
        entry = pop(rel, None) if entries else None
        if entry is not None and key is not None:
            stamp, fs = entry
            if key == (stamp.size, stamp.mtime_ns, stamp.ctime_ns, stamp.inode):
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


def _used_workers(n: int, parallel: bool | None) -> bool:
    """Worker processes for this parse?  None (the default): when it pays.

    That is a parse of at least PARALLEL_MIN_FILES files with a CPU to
    spare: more than one, and a load average leaving at least half of one
    idle (this process counts; on a busy machine the workers only add their
    own overhead).  `MEMLENS_PARALLEL=0`
    in the environment turns the default off.
    """
    if parallel is None:
        parallel = os.environ.get(PARALLEL_ENV, "1") != "0" and spare_cpu()
    return parallel and n >= PARALLEL_MIN_FILES and _cpus() > 1


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
    "PARALLEL_ENV",
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
    "run_in_worker",
    "run_to_end",
    "save_delta",
    "save_entries",
    "save_rows",
    "scan_files",
    "scan_one",
    "spare_cpu",
    "stale_files",
]
