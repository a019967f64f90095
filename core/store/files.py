"""One vault's store: open and check it, load its file rows, save what changed.

Rows are self-validating (each carries the stamp of the bytes its FileScan
came from, and a scan trusts a row only if the file still has that stamp),
so two processes saving at once cannot leave a wrong row behind, only an
older one: whichever transaction commits last wins row by row, and the
next scan re-reads whatever does not match.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..model import FileScan
from . import bodies, codec
from .db import (
    SCHEMA_VERSION,
    StoreCorrupt,
    connect,
    private_dir,
    read_meta,
    remove_files,
    reset,
    row_id,
    store_path,
    sweep_old_caches,
    untrusted,
    write,
)
from .pack import PACK, PackReader, pack_blob
from .stamps import FileStamp
from .temps import sweep_once

#: The blob every write of file rows sets to 16 new random bytes: equal tokens
#: mean no file row was written or removed in between (`put_blob_if_files`).
FILES_TOKEN = "files-token"
#: Blob names only this module writes.
_OWN_BLOBS = frozenset({"zdict", FILES_TOKEN, PACK})
#: Paths per `IN (...)` query when rows are read again (SQLite allows 999 parameters).
_IN_CHUNK = 500

Entries = dict[str, tuple[FileStamp, FileScan]]
#: A file row as fetched: rel, size, mtime_ns, ctime_ns, inode, sha256 (32 bytes), racy, blob.
Row = tuple[bytes, int, int, int, int, bytes, int, bytes]


def _key(rel: str) -> bytes:
    """A vault-relative path as stored (a file name need not be UTF-8)."""
    return rel.encode("utf-8", "surrogateescape")


def _rel(key: bytes) -> str:
    return key.decode("utf-8", "surrogateescape")


def _row_path(row: Row) -> bytes:
    return row[0]


_swept: set[Path] = set()
_swept_lock = threading.Lock()


@dataclass(slots=True)
class Opened:
    """What `open_store` found."""

    store: VaultStore | None
    #: "cold" (a new store), "warm" (rows to use) or "discarded" (rebuilt).
    status: str
    reason: str | None = None


#: A `files` row as written: (id, rel, size, mtime, ctime, inode, sha256, racy, blob).
FileRow = tuple[int, bytes, int, int, int, int, bytes, int, bytes]


def _file_row(rel: str, s: FileStamp, blob: bytes) -> FileRow:
    key = _key(rel)
    return (
        row_id(key), key, s.size, s.mtime_ns, s.ctime_ns, s.inode,
        bytes.fromhex(s.sha256), int(s.racy), blob,
    )  # fmt: skip


def _repacked(row: FileRow, was: bytes, zdict: bytes) -> FileRow:
    """`row` with its blob packed with `zdict` instead of `was`."""
    return (*row[:-1], codec.compress(codec.decompress(row[-1], was), zdict))


class VaultStore:
    """An open store of one vault (see `core.store.db` for the file and its checks)."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        path: Path,
        root: Path,
        format_id: str,
        meta: dict[str, str],
    ) -> None:
        self.conn = conn
        self.path = path
        self.root = root
        self.format_id = format_id
        #: What this store's meta table says (schema, root, format, code).
        self.meta = meta

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()

    def discard(self) -> None:
        """Empty the store (its rows could not be read back)."""
        reset(self.conn, self.meta)

    # ------------------------------------------------------------------ reading

    def load_files(self) -> Entries:
        """Every file row: rel -> (stamp, FileScan without bodies, loading them on use).

        Raises StoreCorrupt when a row cannot be read back.
        """
        return self.fetch().take()

    def fetch(self) -> RowLoader:
        """The rows as stored, to decode (`RowLoader.take`); StoreCorrupt if unreadable.

        With a pack (`core.store.pack`) the rows come without their blobs:
        the pack serves them, and the few it cannot are read again.
        """
        try:
            # One read transaction: the rows, their dictionary and the pack.
            self.conn.execute("BEGIN")
            try:
                zdict = self._zdict()
                packed = self._blob(PACK)
                blob = "scan" if packed is None else "X''"
                rows: list[Row] = self.conn.execute(
                    f"SELECT rel, size, mtime_ns, ctime_ns, inode, sha256, racy, {blob} FROM files"
                ).fetchall()
            finally:
                self.conn.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            raise StoreCorrupt(f"store unreadable: {exc}") from exc
        if rows and zdict is None:
            raise StoreCorrupt("store rows without their dictionary")
        # Rows come in rowid (path hash) order: decoded in that order, a
        # vault's memories lay scattered in memory and linking them in path
        # order took 1.6x as long at 100k (cache misses).  Path order again
        # (the pack's order too).
        rows.sort(key=_row_path)
        pack = PackReader(packed, self.root) if packed is not None and rows else None
        return RowLoader(self, zdict or b"", rows, pack)

    def rows_of(self, keys: list[bytes]) -> list[Row]:
        """The rows of these stored paths, blobs included, as they are now (gone ones left out)."""
        out: list[Row] = []
        try:
            for at in range(0, len(keys), _IN_CHUNK):
                chunk = keys[at : at + _IN_CHUNK]
                marks = ", ".join("?" * len(chunk))
                found = self.conn.execute(
                    "SELECT rel, size, mtime_ns, ctime_ns, inode, sha256, racy, scan"
                    f" FROM files WHERE id IN ({marks})",
                    [row_id(key) for key in chunk],
                ).fetchall()
                wanted = set(chunk)
                out.extend(row for row in found if bytes(row[0]) in wanted)
        except sqlite3.DatabaseError as exc:
            raise StoreCorrupt(f"store unreadable: {exc}") from exc
        return out

    def stamps(self) -> dict[str, FileStamp]:
        """rel -> stamp of every row (no blobs read)."""
        rows = self.conn.execute(
            "SELECT rel, size, mtime_ns, ctime_ns, inode, sha256, racy FROM files"
        ).fetchall()
        return {_rel(r[0]): FileStamp(r[1], r[2], r[3], r[4], r[5].hex(), bool(r[6])) for r in rows}

    # ------------------------------------------------------------------ writing

    def save(
        self, upserts: Iterable[tuple[str, FileStamp, FileScan]], deletes: Iterable[str] = ()
    ) -> int:
        """Write changed rows, drop gone ones, in one transaction; how many rows were written.

        Each row is pickled and compressed at once, outside the write lock,
        so only the compressed rows are held (at 100k rows the raw pickles
        were ~120 MB more at a cold start's peak).  The dictionary they are
        packed with is read again under the lock: when another writer made
        the store's first one meanwhile, the rows are packed again with it.
        """
        root = self.root
        todo = iter(upserts)
        zdict = self._zdict()
        first: list[tuple[str, FileStamp, bytes]] = []
        if zdict is None:  # a new store: its dictionary comes from the first rows
            for rel, s, fs in itertools.islice(todo, codec.ZDICT_ROWS):
                first.append((rel, s, codec.pickle_scan(fs, root)))
            zdict = codec.make_zdict([raw for _rel, _s, raw in first]) if first else b""
        rows = [_file_row(rel, s, codec.compress(raw, zdict)) for rel, s, raw in first]
        rows += [
            _file_row(rel, s, codec.compress(codec.pickle_scan(fs, root), zdict))
            for rel, s, fs in todo
        ]
        gone = [(row_id(key), key) for key in map(_key, deletes)]
        with write(self.conn) as conn:
            # Read inside the write lock: the first writer's dictionary is everyone's.
            kept = self._zdict()
            if kept is None and rows:
                conn.execute("INSERT INTO blobs (name, value) VALUES ('zdict', ?)", (zdict,))
            elif kept is not None and kept != zdict:
                rows = [_repacked(row, zdict, kept) for row in rows]
            # In rowid order: a first save then appends to full pages (in hash
            # order, the pages of a new store were left a third empty).
            rows.sort(key=lambda row: row[0])
            conn.executemany(
                "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows
            )
            # (Not a row of another path that shares the hash: see `db.row_id`.)
            conn.executemany("DELETE FROM files WHERE id = ? AND rel = ?", gone)
            if rows or gone:
                conn.execute(
                    "INSERT OR REPLACE INTO blobs (name, value) VALUES (?, ?)",
                    (FILES_TOKEN, os.urandom(16)),
                )
        return len(rows)

    def save_pack(self, files: Iterable[tuple[str, FileStamp, FileScan]]) -> None:
        """Keep the pack of these files' scans (`core.store.pack`), packed outside the lock."""
        entries = [(_key(rel), bytes.fromhex(s.sha256), fs) for rel, s, fs in files]
        blob = pack_blob(entries, self.root)
        del entries
        with write(self.conn) as conn:
            conn.execute("INSERT OR REPLACE INTO blobs (name, value) VALUES (?, ?)", (PACK, blob))

    def _zdict(self) -> bytes | None:
        """The preset dictionary the rows are packed with (None before the first row)."""
        return self._blob("zdict")

    def _blob(self, name: str) -> bytes | None:
        row = self.conn.execute("SELECT value FROM blobs WHERE name = ?", (name,)).fetchone()
        return None if row is None else bytes(row[0])


class RowLoader:
    """A store's rows as one read fetched them, decoded in steps: a few first, then the rest.

    Rows are let go once decoded, so a blob's memory is reused for the
    objects decoded after it (at 100k rows the fetched blobs were ~45 MB;
    held to the end, they sat on top of every decoded row at the peak of a
    warm start).  A row fetched without its blob that the pack cannot serve
    (written since the pack) is read again at the end, stamp and blob
    together: a row another process rewrote meanwhile is taken as it is now.
    """

    def __init__(self, store: VaultStore, zdict: bytes, rows: list[Row], pack: PackReader | None):
        rows.reverse()  # popped from the end: first row first, O(1) each
        self._store = store
        self._zdict = zdict
        self._rows = rows
        self._pack = pack
        self._missed: list[bytes] = []

    def __len__(self) -> int:
        """Rows not decoded yet."""
        return len(self._rows) + len(self._missed)

    @property
    def packed(self) -> int:
        """Rows the pack served so far."""
        return 0 if self._pack is None else self._pack.served

    def take(self, count: int | None = None) -> Entries:
        """The next `count` rows as entries; None: every row left (StoreCorrupt: one is damaged)."""
        out: Entries = {}
        rows, pack, root, zdict = self._rows, self._pack, self._store.root, self._zdict
        decode, pop = codec.decode_scan, rows.pop
        for _ in range(len(rows) if count is None else min(count, len(rows))):
            row = pop()
            blob = row[7]
            if blob:
                self._add(out, row, decode(blob, root, zdict))
                continue
            fs = pack.take(row[0], row[5]) if pack is not None else None
            if fs is None:
                self._missed.append(row[0])
            else:
                self._add(out, row, fs)
        if count is None:
            if pack is not None:
                pack.finish()
            for row in self._store.rows_of(self._missed):
                self._add(out, row, decode(row[7], root, zdict))
            self._missed = []
        return out

    def _add(self, out: Entries, row: Row, fs: FileScan) -> None:
        key, size, mtime, ctime, inode, sha, racy, _blob = row
        rel = _rel(key)
        if fs.memories and fs.memories[0].path == rel:
            rel = fs.memories[0].path  # one string for the path, not two
        if len(sha) != 32:
            raise StoreCorrupt("a file row's sha256 is damaged")
        hex_sha = sha.hex()
        bodies.attach(self._store.root, rel, self._store.format_id, hex_sha, fs.memories)
        out[rel] = (FileStamp(size, mtime, ctime, inode, hex_sha, bool(racy)), fs)


def open_store(root: Path, format_id: str, code: str) -> Opened:
    """The store of the vault at `root`, checked, or a reason it cannot be used.

    A store that fails a check is emptied (or, if not a database at all,
    replaced) and comes back "discarded" with the reason; a new one "cold".
    Raises OSError when the cache folder or file cannot be made: the caller
    scans without a store.
    """
    path = store_path(root)
    private_dir(path.parent)
    sweep_once(path.parent)  # temps killed writers of the old pickle caches left
    with _swept_lock:
        if path.parent not in _swept:
            _swept.add(path.parent)
            sweep_old_caches(path.parent)
    expected = {
        "schema": str(SCHEMA_VERSION),
        "root": str(root),
        "format": format_id,
        "code": code,
    }
    reason = untrusted(path)
    if reason is not None:
        remove_files(path)
    conn: sqlite3.Connection | None = None
    try:
        conn = connect(path)
        meta = read_meta(conn)
    except sqlite3.DatabaseError as exc:
        if conn is not None:
            conn.close()
        reason = reason or f"not a memlens store ({exc})"
        remove_files(path)
        conn = connect(path)
        meta = {}
    store = VaultStore(conn, path, root, format_id, expected)
    if meta == expected and reason is None:
        return Opened(store, "warm")
    if meta and reason is None:
        reason = _mismatch(meta, expected)
    try:
        reset(conn, expected)
    except sqlite3.Error as exc:
        store.close()
        raise OSError(f"cannot prepare the store: {exc}") from exc
    return Opened(store, "discarded" if reason else "cold", reason)


def put_blobs(root: Path, format_id: str, code: str, blobs: dict[str, bytes]) -> bool:
    """Keep named blobs beside the rows of an existing store this code wrote (one transaction).

    What is derived from the rows as a whole (the list rows of a vault:
    `core.listing.snapshot`) lives there so that a store discarded or
    emptied takes it along.  False when there is no such store or it is busy.
    """
    if _OWN_BLOBS & blobs.keys():
        raise ValueError("the rows' dictionary, files token and pack are not named blobs")
    try:
        with _blob_write(root, format_id, code) as conn:
            if conn is None:
                return False
            conn.executemany(
                "INSERT OR REPLACE INTO blobs (name, value) VALUES (?, ?)", blobs.items()
            )
    except sqlite3.Error:
        return False
    return True


def put_blob_if_files(
    root: Path, format_id: str, code: str, name: str, files: Mapping[bytes, bytes], value: bytes
) -> bool:
    """Keep blob `name` = the files token + `value` if the file rows are exactly `files`.

    `files`: stored path -> sha256 (32 bytes) of every row.  The check and
    the write are one transaction, so no write of file rows comes between:
    while the token is unchanged, a reader may take the rows as `files`
    without reading them (`core.listing.snapshot.kept_rows`).  False when
    not kept (no such store, busy, or other files).
    """
    if name in _OWN_BLOBS:
        raise ValueError("the rows' dictionary, files token and pack are not named blobs")
    try:
        with _blob_write(root, format_id, code) as conn:
            if conn is None:
                return False
            token = conn.execute(
                "SELECT value FROM blobs WHERE name = ?", (FILES_TOKEN,)
            ).fetchone()
            rows = conn.execute("SELECT rel, sha256 FROM files").fetchall()
            if token is None or len(rows) != len(files):
                return False
            if any(files.get(bytes(rel)) != bytes(sha) for rel, sha in rows):
                return False
            conn.execute(
                "INSERT OR REPLACE INTO blobs (name, value) VALUES (?, ?)",
                (name, bytes(token[0]) + value),
            )
    except sqlite3.Error:
        return False
    return True


@contextlib.contextmanager
def _blob_write(root: Path, format_id: str, code: str) -> Iterator[sqlite3.Connection | None]:
    """A write transaction on the store this code wrote for `root`; None when there is none."""
    path = store_path(root)
    if not path.is_file() or untrusted(path) is not None:
        yield None
        return
    expected = {"schema": str(SCHEMA_VERSION), "root": str(root), "format": format_id, "code": code}
    try:
        conn = connect(path)
    except (sqlite3.Error, OSError):
        yield None
        return
    try:
        if read_meta(conn) != expected:
            yield None
            return
        with write(conn):
            yield conn
    finally:
        conn.close()


def _mismatch(found: dict[str, str], expected: dict[str, str]) -> str:
    if found.get("schema") != expected["schema"]:
        return f"store schema version {found.get('schema')}, expected {expected['schema']}"
    if found.get("root") != expected["root"] or found.get("format") != expected["format"]:
        return "store belongs to another vault or format"
    if found.get("code") != expected["code"]:
        return "store written by a different version of the scanning code"
    return "store meta does not match"


__all__ = [
    "FILES_TOKEN",
    "Entries",
    "Opened",
    "RowLoader",
    "VaultStore",
    "open_store",
    "put_blob_if_files",
    "put_blobs",
]
