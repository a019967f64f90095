"""Per-file scanning with a persistent cache of what each file yielded.

A vault is scanned file by file (`FormatAdapter.files` / `scan_file` /
`link`).  This module drives that: it reads each file once (bytes, a stat
taken before and after the read, and a sha256), hands the bytes to the
adapter, and, when asked, keeps every file's `FileScan` in a cache file so
the next start re-parses only the files whose stat changed.

Where the cache lives
    One file per vault in the user's cache directory
    (``platformdirs.user_cache_dir("memlens")``, or ``$MEMLENS_CACHE_DIR``),
    named by a hash of the vault's real path.  Never inside the vault.

The linked result
    For adapters that declare ``cache_linked = True`` the cache also keeps
    the vault's linked `ScanResult` (memories shared with the per-file
    scans; `link_state` tables keyed by identity re-key themselves, see
    `core.identity`).  A start that finds every file unchanged uses it as is
    instead of linking again; any changed, added or removed file means a
    fresh link.

Parallel cold parse
    A parse of many files may be shared with worker processes
    (`core.parse_worker`, see PARALLEL_MIN_FILES): they return the pickled
    FileScans, which this process binds to the vault root.

When a cached entry is trusted
    Only when the file's size, mtime_ns, ctime_ns and inode all equal what
    they were when it was read.  ctime catches a same-size rewrite whose
    mtime was put back with `os.utime` (utime itself bumps ctime); the inode
    catches an atomic replace.  A file whose timestamps were within
    `RACY_WINDOW_NS` of the moment it was read could be rewritten again in the
    same clock tick without any stat change ("racily clean", as git calls
    it): such entries are re-read and compared by sha256 before being reused.

Why pickle is acceptable here
    The cache holds only our own objects, in a file we wrote ourselves
    (atomically, through `write_checked`), in a per-user cache
    directory created 0700 with the file 0600.  It is loaded only if it is a
    regular file owned by this user and writable by no one else, carries our
    magic bytes and format version, a matching code fingerprint (any change to
    the scanning code invalidates it), and a sha256 of the payload that
    matches.  Anything else is discarded and rebuilt, never trusted; the
    reason is recorded in `CacheStats.reason` (core never prints).  Someone
    who can write the user's cache directory can already run code as that
    user, so unpickling it adds no new power.  It is loaded with the garbage
    collector paused (about 3x faster for 100k small objects).
"""

from __future__ import annotations

import atexit
import contextlib
import copyreg
import dataclasses
import gc
import hashlib
import io
import operator
import os
import pickle
import stat
import struct
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from ..formats import FormatAdapter, adapter_for
from ..formats.files import Listing, rel_posix, skipped_scan
from ..model import FileScan, Memory, Problem, ReferenceProblem, Relation, ScanResult
from ..safe_io import NotRegularFileError, kind_of, open_regular, read_regular
from .cache_temps import sweep_once, temp_path

#: Environment variable that moves the cache (tests point it at a tmp dir).
CACHE_DIR_ENV = "MEMLENS_CACHE_DIR"
#: Bump when the cache file layout changes.  Code changes are caught by the
#: fingerprint of the scanning modules, not by this number.
CACHE_VERSION = 2
MAGIC = b"MEMLENS-SCAN-CACHE\0"
_HEADER = struct.Struct(">IQ32s")  # version, payload length, sha256 of payload
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

#: Modules whose code decides what a FileScan holds: their source is hashed
#: into the cache so a new memlens never trusts an old memlens's parse.
_CODE_MODULES = (
    "model.py",
    "errors.py",
    "text/dates.py",
    "decay.py",
    "text/frontmatter.py",
    "text/fastyaml.py",
    "identity.py",
    "text/paths.py",
    "text/textio.py",
    "scan/cache.py",
    "formats/adapter.py",
    "formats/files.py",
    "formats/linking.py",
    "formats/reading.py",
)


@dataclass(slots=True)
class FileStamp:
    """What a file looked like when it was read (treat as immutable).

    Not a frozen dataclass on purpose: frozen slotted dataclasses unpickle
    through a Python-level `__setstate__`, which doubled the time to load
    100k cache entries.
    """

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    #: sha256 of the bytes read (for reporting and conflict checks).
    sha256: str
    #: Timestamps were within RACY_WINDOW_NS of the read: verify by content.
    racy: bool = False

    def matches(self, st: os.stat_result) -> bool:
        return (
            st.st_size == self.size
            and st.st_mtime_ns == self.mtime_ns
            and st.st_ctime_ns == self.ctime_ns
            and st.st_ino == self.inode
        )


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


# --------------------------------------------------------------------------- locations


def cache_dir() -> Path:
    """`$MEMLENS_CACHE_DIR`, else the platform's user cache dir for memlens."""
    env = os.environ.get(CACHE_DIR_ENV)
    if env:
        return Path(env)
    import platformdirs  # lazy: only when the cache is used

    return Path(platformdirs.user_cache_dir("memlens"))


def cache_path(root: Path) -> Path:
    """The cache file of the vault at `root` (keyed by its real path)."""
    real = os.path.realpath(root)
    key = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return cache_dir() / f"scan-{key}.pickle"


_fingerprints: dict[str, str] = {}


def format_modules(package: Path) -> list[Path]:
    """The modules of a format package that reading and linking depend on.

    All of them but the writer side (`writer.py`, `write_*.py`) and the runs
    (`runs.py`, `runs_*.py`): a helper moved out of the adapter module still
    decides what a scan produces.
    """
    return sorted(
        p
        for p in package.glob("*.py")
        if p.name != "writer.py" and not p.name.startswith(("write_", "runs"))
    )


def code_fingerprint(format_id: str) -> str:
    """sha256 over the source of the modules that decide a format's FileScans.

    The shared readers and model, this module, the adapter base and its
    helpers, and the format's package (`format_modules`); not the writers or
    anything else that does not change what a scan produces.
    """
    cached = _fingerprints.get(format_id)
    if cached is not None:
        return cached
    here = Path(__file__).parents[1]  # core/
    digest = hashlib.sha256(f"v{CACHE_VERSION}:{format_id}".encode())
    names = [here / n for n in _CODE_MODULES]
    module = sys.modules.get(type(adapter_for(format_id)).__module__)
    source = getattr(module, "__file__", None)
    if source:
        names.extend(format_modules(Path(source).parent))
    for path in names:
        with contextlib.suppress(OSError):
            digest.update(path.name.encode() + b"\0" + read_regular(path))
    _fingerprints[format_id] = value = digest.hexdigest()
    return value


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


class _WorkerFailed(Exception):
    """A parse worker ended or answered nothing."""


class _Worker:
    """One `parse_worker` process and its pipes."""

    def __init__(self) -> None:
        import subprocess

        self.proc = subprocess.Popen(
            [sys.executable, "-m", f"{__package__}.parse_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            close_fds=True,
        )

    def send(self, body: bytes) -> None:
        from .parse_worker import write_message

        assert self.proc.stdin is not None
        write_message(self.proc.stdin, body)

    def receive(self) -> bytes:
        from .parse_worker import read_message

        assert self.proc.stdout is not None
        body = read_message(self.proc.stdout)
        if body is None:
            raise _WorkerFailed
        return body

    def close(self) -> None:
        with contextlib.suppress(OSError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=2)
        except Exception:
            self.proc.kill()
            with contextlib.suppress(Exception):
                self.proc.wait(timeout=2)
        with contextlib.suppress(OSError):
            if self.proc.stdout is not None:
                self.proc.stdout.close()


class _Pool:
    """Parse workers kept for a few seconds between vaults (one scan at a time).

    Starting a worker costs an interpreter and the scanning imports (a few
    hundred ms); opening several large vaults in a row reuses them.  Idle
    workers are stopped after IDLE_S seconds and at exit.
    """

    IDLE_S = 10.0

    def __init__(self) -> None:
        import threading

        self.lock = threading.Lock()
        self.idle: list[_Worker] = []
        self.busy = False
        self.timer: Any = None

    def acquire(self, n: int) -> list[_Worker]:
        """`n` workers for one parse; [] if another parse has them or none starts."""
        with self.lock:
            if self.busy:
                return []
            self.busy = True
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
            workers, self.idle = self.idle[:n], self.idle[n:]
        try:
            while len(workers) < n:
                workers.append(_Worker())
        except OSError:
            for w in workers:
                w.close()
            with self.lock:
                self.busy = False
            return []
        return workers

    def release(self, workers: list[_Worker]) -> None:
        import threading

        with self.lock:
            self.idle.extend(workers)
            self.busy = False
            self.timer = threading.Timer(self.IDLE_S, self.close)
            self.timer.daemon = True
            self.timer.start()

    def discard(self, workers: list[_Worker]) -> None:
        for w in workers:
            w.close()
        with self.lock:
            self.busy = False

    def close(self) -> None:
        """Stop the idle workers."""
        with self.lock:
            idle, self.idle = self.idle, []
        for w in idle:
            w.close()


_pool = _Pool()
atexit.register(_pool.close)


def run_in_worker(request: tuple[Any, ...]) -> Callable[[], Any] | None:
    """Send `request` to one parse worker; a function that waits for its answer.

    The answer is None if the worker fails.  None instead of a function when
    no worker is free (another parse has them) or none starts.  The worker
    goes back to the pool once answered.  See `parse_worker.serve` for the
    requests it understands.
    """
    workers = _pool.acquire(1)
    if not workers:
        return None
    (worker,) = workers
    try:
        worker.send(pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL))
    except OSError:
        _pool.discard(workers)
        return None

    def wait() -> Any:
        try:
            answer = pickle.loads(worker.receive())
        except Exception:
            _pool.discard(workers)
            return None
        _pool.release(workers)
        return answer

    return wait


# --------------------------------------------------------------------------- the cache file


Entries = dict[str, tuple[FileStamp, FileScan]]


def _private_dir(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(OSError):
        if stat.S_IMODE(folder.stat().st_mode) & 0o077:
            folder.chmod(0o700)


def open_checked(
    path: Path, magic: bytes, version: int, what: str
) -> tuple[BinaryIO | None, str | None]:
    """`path` opened at its payload once everything about it checks out; else (None, reason).

    Owner-only permissions, magic bytes, format version, payload length and
    sha256 are all verified before a single byte is unpickled.  The payload
    is hashed in chunks and then unpickled from the file, so a 100 MB cache
    never sits in memory twice.  The reason is None only when there is no
    file at all.  The caller closes the file.  The first open of a folder
    also removes the temps killed writers left in it (`core.cache_temps`).
    """
    sweep_once(path.parent)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"cannot stat the {what}: {exc.strerror or exc}"
    if not stat.S_ISREG(st.st_mode):
        return None, f"the {what} path is not a regular file"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return None, f"the {what} belongs to another user"
    if st.st_mode & 0o022:
        return None, f"the {what} is writable by others"
    try:
        fh = os.fdopen(open_regular(path), "rb")  # returned to the caller, who closes it
    except OSError as exc:
        return None, f"cannot read the {what}: {exc.strerror or exc}"
    try:
        head = fh.read(len(magic) + _HEADER.size)
        if not head.startswith(magic):
            cut = bool(head) and magic.startswith(head)
            fh.close()
            return (
                None,
                f"truncated {what} (no header)" if cut else f"not a memlens {what} (bad magic)",
            )
        if len(head) < len(magic) + _HEADER.size:
            fh.close()
            return None, f"truncated {what} (no header)"
        found, length, digest = _HEADER.unpack_from(head, len(magic))
        if found != version:
            fh.close()
            return None, f"{what} format version {found}, expected {version}"
        hasher = hashlib.sha256()
        size = 0
        while chunk := fh.read(1 << 20):
            hasher.update(chunk)
            size += len(chunk)
        if size != length:
            fh.close()
            return None, f"truncated {what} ({size} of {length} payload bytes)"
        if hasher.digest() != digest:
            fh.close()
            return None, f"{what} checksum mismatch"
        fh.seek(len(magic) + _HEADER.size)
    except OSError as exc:
        fh.close()
        return None, f"cannot read the {what}: {exc.strerror or exc}"
    return fh, None


class _HashingWriter:
    """A write-only file for pickle that hashes and counts what passes through."""

    __slots__ = ("digest", "fh", "size")

    def __init__(self, fh: BinaryIO) -> None:
        self.fh = fh
        self.digest = hashlib.sha256()
        self.size = 0

    def write(self, data: Any) -> int:
        # Pickle protocol 5 hands large buffers over as PickleBuffer objects.
        view = memoryview(data)
        self.digest.update(view)
        self.size += view.nbytes
        return self.fh.write(view)


def write_checked(path: Path, magic: bytes, version: int, dump: Callable[[Any], None]) -> None:
    """Write what `open_checked` reads, atomically (0600 in a 0700 directory).

    `dump(writer)` streams the payload into `writer` (any number of
    pickles); the header's length and sha256 are filled in afterwards.  The
    payload is never held in memory: saving a 60 MB index cache used to cost
    twice its size on top of the index itself.
    """
    _private_dir(path.parent)
    sweep_once(path.parent)
    tmp = temp_path(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(magic + _HEADER.pack(version, 0, bytes(32)))
            writer = _HashingWriter(fh)
            dump(writer)
            fh.seek(len(magic))
            fh.write(_HEADER.pack(version, writer.size, writer.digest.digest()))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):
        os.chmod(path, 0o600)


def pickler(writer: Any) -> pickle.Pickler:
    """A pickler with the cache's constructor reducers (see `_constructor_reducer`)."""
    out = pickle.Pickler(writer, protocol=pickle.HIGHEST_PROTOCOL)
    out.dispatch_table = _DISPATCH
    return out


def pack(magic: bytes, version: int, payload: bytes) -> bytes:
    """Magic, header (version, length, sha256) and payload, as `open_checked` reads them."""
    return magic + _HEADER.pack(version, len(payload), hashlib.sha256(payload).digest()) + payload


def _constructor_reducer(cls: type[Any]) -> Any:
    """Pickle a dataclass instance as a call of its class with every field, in order.

    Unpickling then runs the generated __init__ (one call), where the default
    pickling of a slotted dataclass builds a dict of its state and sets each
    slot from it (frozen ones through a Python __setstate__): loading 100k
    cached memories took about twice as long that way.
    """
    get = operator.attrgetter(*(f.name for f in dataclasses.fields(cls)))

    def reduce(obj: Any) -> tuple[Any, ...]:
        return (cls, get(obj))

    return reduce


_DISPATCH: dict[type[Any], Any] = {
    **copyreg.dispatch_table,
    **{
        cls: _constructor_reducer(cls)
        for cls in (Memory, FileScan, FileStamp, Relation, Problem, ReferenceProblem, ScanResult)
    },
}


def _dumps(payload: Any) -> bytes:
    buf = io.BytesIO()
    pickler(buf).dump(payload)
    return buf.getvalue()


def load_entries(
    root: Path, format_id: str, path: Path | None = None
) -> tuple[Entries, str | None]:
    """Cached entries of a vault, or ({}, reason) when there is nothing to trust.

    The reason is None only when there simply is no cache file yet.
    """
    entries, _result, reason = _load(root, format_id, path)
    return entries, reason


def _load(
    root: Path, format_id: str, path: Path | None = None
) -> tuple[Entries, ScanResult | None, str | None]:
    """`load_entries`, plus the linked result saved with them (None if there is none)."""
    path = path or cache_path(root)
    fh, reason = open_checked(path, MAGIC, CACHE_VERSION, "cache file")
    if fh is None:
        return {}, None, reason
    try:
        with fh, quiet_gc():
            data = pickle.load(fh)
    except Exception as exc:  # checksummed, so this means a bug: never trust it
        return {}, None, f"cache payload unreadable: {type(exc).__name__}"
    if not isinstance(data, dict):
        return {}, None, "cache payload is not a mapping"
    if data.get("root") != str(root) or data.get("format") != format_id:
        return {}, None, "cache belongs to another vault or format"
    if data.get("code") != code_fingerprint(format_id):
        return {}, None, "cache written by a different version of the scanning code"
    entries = data.get("entries")
    if not isinstance(entries, dict):
        return {}, None, "cache entries missing"
    result = data.get("result")
    return entries, result if isinstance(result, ScanResult) else None, None


def save_entries(
    root: Path,
    format_id: str,
    entries: Entries,
    path: Path | None = None,
    result: ScanResult | None = None,
) -> None:
    """Write the cache file atomically (0600, in a 0700 directory).

    `result` is the vault's linked result for exactly these entries, kept
    only for adapters that declare ``cache_linked = True`` (their result,
    `link_state` included, survives pickling); a start that finds every file
    unchanged then uses it instead of linking again.
    """
    path = path or cache_path(root)
    if result is not None and not adapter_for(format_id).cache_linked:
        result = None
    payload = {
        "root": str(root),
        "format": format_id,
        "code": code_fingerprint(format_id),
        "entries": entries,
        "result": result,
    }
    write_checked(path, MAGIC, CACHE_VERSION, lambda out: pickler(out).dump(payload))


def clear(root: Path) -> bool:
    """Remove a vault's cache file; True if there was one."""
    try:
        cache_path(root).unlink()
    except FileNotFoundError:
        return False
    return True


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

    With `cache`, unchanged files come from the cache file (their memories
    are yielded first, at once) and only new or changed files are parsed.
    `batch` sets how many memories a progress step carries (None: one final
    step only).  The cache file is rewritten when anything changed (`save`),
    after the final (`done`) step is yielded: iterate to the end to save.
    `walk`, called once the cache file is loaded, gives the vault's listing
    and stat keys as another process took them meanwhile (`core.walk_ahead`);
    when it is absent or returns None the scan walks the vault itself.
    """
    stats = CacheStats()
    entries: Entries = {}
    cached_result: ScanResult | None = None
    if cache:
        stats.path = cache_path(root)
        t = time.perf_counter()
        entries, cached_result, reason = _load(root, adapter.format_id, stats.path)
        stats.load_s = time.perf_counter() - t
        if reason is not None:
            stats.status, stats.reason = "discarded", reason
        else:
            stats.status = "warm" if entries else "cold"

    t = time.perf_counter()
    ahead = walk() if walk is not None else None
    with quiet_gc():
        if ahead is not None:
            listing, keys = ahead
            rels = listing.names
            slots, todo = _match(root, rels, keys, entries, stats)
        else:
            listing = adapter.file_listing(root)
            rels = listing.names
            slots, todo = _walk(root, rels, entries, stats)
    stats.files = len(rels)
    stats.dropped = len(entries)
    stats.reused = len(rels) - len(todo)
    stats.walk_s = time.perf_counter() - t

    pending: list[Memory] = []
    done = 0

    def step() -> Iterator[ScanProgress]:
        nonlocal pending
        if batch is not None and len(pending) >= batch:
            out, pending = pending, []
            yield ScanProgress(out, done, len(rels), stats=stats)

    if batch is not None:
        for _rel, reused, _stamp in slots:
            if reused is not None:
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

    # Entries the listing left out (a link out of the vault, a pipe, ...)
    # show as one Problem each.  They come first: their empty order sorts
    # before every file's, so the dict stays in scan order.
    scans: dict[str, FileScan] = {
        s.rel: skipped_scan(adapter.format_id, root, s) for s in listing.skipped
    }
    stamps: dict[str, FileStamp] = {}
    for rel, cached_scan, cached_stamp in slots:
        if cached_scan is not None and cached_stamp is not None:
            scans[rel], stamps[rel] = cached_scan, cached_stamp
        else:
            new_scan, new_stamp = parsed[rel]
            scans[rel] = new_scan
            if new_stamp is not None:
                stamps[rel] = new_stamp

    t = time.perf_counter()
    if cached_result is not None and not stats.parsed and not stats.dropped and not listing.skipped:
        # Every file is as it was when the cache was written, and so is the
        # linked result saved with it (link is a function of the scans).
        result = cached_result
    else:
        with quiet_gc():
            result = adapter.link(root, scans)
    stats.link_s = time.perf_counter() - t

    # The linked result first: a front end can list everything while the
    # cache file is still being written (continue the iteration to save).
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
    if (
        cache
        and save
        and (stats.parsed or stats.dropped or stats.verified or stats.status != "warm")
    ):
        t = time.perf_counter()
        try:
            # A linked result showing skipped entries is not kept: they have
            # no stamp, so a later start could not tell they were gone.
            kept = None if listing.skipped else result
            save_entries(
                root, adapter.format_id, entries_of(scans, stamps), stats.path, result=kept
            )
            stats.saved = True
        except Exception as exc:  # a cache that cannot be written is only slower
            stats.reason = f"cache not saved: {exc}"
        stats.save_s = time.perf_counter() - t


def _walk(
    root: Path, rels: list[str], entries: Entries, stats: CacheStats
) -> tuple[list[tuple[str, FileScan | None, FileStamp | None]], list[str]]:
    """Stat every file: cached entries still valid fill their slot, the rest go to `todo`.

    Entries found are popped from `entries`, so what is left there vanished.
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
                    continue
        add((rel, None, None))
        todo.append(rel)
    return slots, todo


def _cpus() -> int:
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


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


def spare_cpu() -> bool:
    """More than one CPU, and one of them idle.

    Idle by the one-minute load average (leaving at least half a CPU), or,
    since that average still counts work that ended up to a minute ago (a
    cold start that just used both cores), by the threads runnable right
    now: this one and fewer than one per other CPU.
    """
    cpus = _cpus()
    if cpus <= 1:
        return False
    if _load_average() < cpus - 0.5:
        return True
    running = _running_now()
    return running is not None and running <= cpus - 1


def _load_average() -> float:
    """The one-minute load average (0 where there is none)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):  # pragma: no cover - not Unix
        return 0.0


def _running_now() -> int | None:
    """Threads runnable at this instant, this one included (Linux; None elsewhere)."""
    try:
        with open("/proc/loadavg", encoding="ascii") as fh:
            return int(fh.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return None


def _verify(path: Path, stamp: FileStamp) -> FileStamp | None:
    """A fresh stamp if the file still holds the bytes `stamp` hashed, else None."""
    try:
        _data, fresh = read_stamped(path)
    except OSError:
        return None
    return fresh if fresh.sha256 == stamp.sha256 else None


def entries_of(scans: dict[str, FileScan], stamps: dict[str, FileStamp]) -> Entries:
    """Cache entries for the files that have a stamp (unreadable ones are left out)."""
    return {rel: (stamps[rel], fs) for rel, fs in scans.items() if rel in stamps}


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
    "CACHE_VERSION",
    "CacheStats",
    "FileStamp",
    "ScanProgress",
    "cache_dir",
    "cache_path",
    "clear",
    "entries_of",
    "load_entries",
    "parse_files",
    "read_stamped",
    "run_to_end",
    "save_entries",
    "scan_files",
    "scan_one",
    "stale_files",
]
