"""One SQLite file per vault in the user's cache folder: where it lives, how it is opened.

Why SQLite: it is in the standard library, writes one changed row in one
transaction instead of a whole file, and lets the app and a cron CLI share
the file (WAL mode: readers never wait; a writer waits up to BUSY_TIMEOUT_S
for another, then skips saving, which only costs speed).

The store is a cache, never trusted blindly.  It is opened only if it is a
regular file owned by this user and writable by no one else, in a 0700
folder, with our schema version, vault root, format and a fingerprint of
the scanning code in its `meta` table.  Anything else (a foreign or old
store, a file that is not a database) is emptied or replaced and rebuilt;
the reason goes to `CacheStats.reason` (core never prints).  Corruption
found while reading (SQLite's own errors, a row blob whose zlib checksum
fails) is handled the same way by the caller (`StoreCorrupt`).

The schema:
    meta(key, value)          schema, root, format, code fingerprint
    files(id, rel, stamp..., scan) one row per vault file: its stat stamp,
                              its sha256 (32 bytes) and its FileScan without
                              bodies (`core.store.codec`); `rel` as UTF-8
                              bytes with surrogateescape (file names need not
                              be UTF-8).  A rowid table: rows of ~0.5-1 KB
                              fill pages badly WITHOUT ROWID (3.5 MB against
                              2.0 MB for 2k rows).  The rowid is a 64-bit
                              hash of `rel` (`row_id`), not a unique index on
                              it: that index held every path a second time
                              (9 MB of 58 at 100k files).  Two paths with the
                              same hash (odds ~1e-10 at 100k files) take
                              turns in one row: the other file is re-read,
                              which a cache may cost.  `gen`: the row's
                              generation, higher for every save (indexed: a
                              warm start reads the rows newer than its pack)
    blobs(name, value)        other per-vault data: `zdict`, the preset
                              dictionary rows are compressed with (`codec`);
                              `pack` and `pack-gen`, every file's stamp and
                              scan in one stream and the generation of the
                              rows it was made from (`pack`)
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

#: Environment variable that moves the cache folder (tests point it at a tmp dir).
CACHE_DIR_ENV = "MEMLENS_CACHE_DIR"
#: Bump when the tables change.  Code changes are caught by the fingerprint.
SCHEMA_VERSION = 4
#: How long a writer waits for another process's write before giving up.
BUSY_TIMEOUT_S = 2.0
SUFFIX = ".sqlite3"

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS files ("
    " id INTEGER PRIMARY KEY, rel BLOB NOT NULL, size INTEGER NOT NULL,"
    " mtime_ns INTEGER NOT NULL, ctime_ns INTEGER NOT NULL, inode INTEGER NOT NULL,"
    " sha256 BLOB NOT NULL, racy INTEGER NOT NULL, scan BLOB NOT NULL, gen INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS files_gen ON files (gen)",
    "CREATE TABLE IF NOT EXISTS blobs (name TEXT PRIMARY KEY, value BLOB NOT NULL)",
)
_TABLES = ("files", "blobs", "meta")


class StoreCorrupt(Exception):
    """A row of the store could not be read back: the store is discarded."""


def cache_dir() -> Path:
    """`$MEMLENS_CACHE_DIR`, else the platform's user cache dir for memlens."""
    env = os.environ.get(CACHE_DIR_ENV)
    if env:
        return Path(env)
    import platformdirs  # lazy: only when the cache is used

    return Path(platformdirs.user_cache_dir("memlens"))


def vault_key(root: Path | str) -> str:
    """A name for the vault at `root`, from its real path (a symlink shares it)."""
    real = os.path.realpath(root)
    return hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def row_id(key: bytes) -> int:
    """The rowid of the row of a path (as stored): a signed 64-bit hash of it."""
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big", signed=True)


def store_path(root: Path | str) -> Path:
    """The store file of the vault at `root`."""
    return cache_dir() / f"store-{vault_key(root)}{SUFFIX}"


def private_dir(folder: Path) -> None:
    """Create `folder` (and parents) 0700, or tighten it to 0700."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(OSError):
        if stat.S_IMODE(folder.stat().st_mode) & 0o077:
            folder.chmod(0o700)


def untrusted(path: Path) -> str | None:
    """Why the file at `path` must not be trusted (None: fine, or absent)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot stat the store: {exc.strerror or exc}"
    if not stat.S_ISREG(st.st_mode):
        return "the store path is not a regular file"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return "the store belongs to another user"
    if st.st_mode & 0o022:
        return "the store is writable by others"
    return None


def remove_files(path: Path) -> None:
    """Remove a store and its SQLite side files (-wal, -shm)."""
    for name in (path.name, path.name + "-wal", path.name + "-shm"):
        with contextlib.suppress(FileNotFoundError):
            (path.parent / name).unlink()


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating 0600 if absent) the SQLite file at `path`, WAL mode, autocommit.

    Transactions are explicit (`write`); `check_same_thread` is off because
    the app saves from a worker thread (one thread at a time uses it).
    """
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
    conn = sqlite3.connect(
        path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
    )
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        # A cache: losing the last transaction in a power cut is fine, a
        # torn one is not (WAL keeps that guarantee at NORMAL).
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=OFF")
    except BaseException:
        conn.close()
        raise
    return conn


@contextlib.contextmanager
def write(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction: BEGIN IMMEDIATE (waits for another writer), COMMIT or ROLLBACK."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def read_meta(conn: sqlite3.Connection) -> dict[str, str]:
    """The meta table ({} for a new, empty database)."""
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "meta" not in names:
        return {}
    return dict(conn.execute("SELECT key, value FROM meta").fetchall())


def reset(conn: sqlite3.Connection, meta: dict[str, str]) -> None:
    """Empty the store and stamp it with `meta`, in one transaction.

    Tables are dropped rather than the file deleted: another process may
    hold the file open, and a file deleted under it would take its writes.
    """
    with write(conn):
        for table in _TABLES:
            conn.execute(f"DROP TABLE IF EXISTS {table}")
        for statement in _SCHEMA:
            conn.execute(statement)
        conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", sorted(meta.items()))


def sweep_old_caches(folder: Path) -> int:
    """Remove the scan caches memlens wrote before the store (``scan-*.pickle``); how many."""
    removed = 0
    try:
        names = [e.name for e in os.scandir(folder)]
    except OSError:
        return 0
    for name in names:
        if name.startswith("scan-") and name.endswith(".pickle"):
            with contextlib.suppress(OSError):
                (folder / name).unlink()
                removed += 1
    return removed


__all__ = [
    "BUSY_TIMEOUT_S",
    "CACHE_DIR_ENV",
    "SCHEMA_VERSION",
    "StoreCorrupt",
    "cache_dir",
    "connect",
    "private_dir",
    "read_meta",
    "remove_files",
    "reset",
    "row_id",
    "store_path",
    "sweep_old_caches",
    "untrusted",
    "vault_key",
    "write",
]
