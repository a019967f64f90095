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
from .pack import PACK, PACK_GEN, Entry, PackReader, pack_blob
from .stamps import FileStamp
from .temps import sweep_once

#: The blob every write of file rows sets to 16 new random bytes: equal tokens
#: mean no file row was written or removed in between (`put_blob_if_files`).
FILES_TOKEN = "files-token"
#: The blob holding the generation of the last save of file rows (8 bytes,
#: big-endian): each save's rows get the next one (`files.gen`).
FILES_GEN = "files-gen"
#: Blob names only this module writes.
_OWN_BLOBS = frozenset({"zdict", FILES_TOKEN, FILES_GEN, PACK, PACK_GEN})

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

        With a pack (`core.store.pack`), only the rows newer than it are read.
        """
        try:
            # One read transaction: the rows, their dictionary and the pack.
            self.conn.execute("BEGIN")
            try:
                zdict = self._zdict()
                packed, gen = self._blob(PACK), self._blob(PACK_GEN)
                if packed is None or gen is None or len(gen) != 8:
                    packed, since = None, ""
                else:
                    since = f" WHERE gen > {int.from_bytes(gen, 'big')}"
                rows: list[Row] = self.conn.execute(
                    "SELECT rel, size, mtime_ns, ctime_ns, inode, sha256, racy, scan FROM files"
                    + since
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
        pack = PackReader(packed, self.root) if packed is not None else None
        return RowLoader(self, zdict or b"", rows, pack)

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
            gen = self._gen() + 1
            conn.execute(
                "INSERT OR REPLACE INTO blobs (name, value) VALUES (?, ?)",
                (FILES_GEN, gen.to_bytes(8, "big")),
            )
            conn.executemany(
                "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(*row, gen) for row in rows],
            )
            # (Not a row of another path that shares the hash: see `db.row_id`.)
            conn.executemany("DELETE FROM files WHERE id = ? AND rel = ?", gone)
            if rows or gone:
                conn.execute(
                    "INSERT OR REPLACE INTO blobs (name, value) VALUES (?, ?)",
                    (FILES_TOKEN, os.urandom(16)),
                )
        return len(rows)

    def save_pack(self, files: Iterable[tuple[str, FileStamp, FileScan]]) -> bool:
        """Keep the pack of these files (`core.store.pack`) if they are exactly the file rows.

        Packed outside the write lock; compared with the rows under it (every
        path and stamp), so the pack and the generation it notes always say
        what the rows said.  False when they differ (another writer): not kept.
        """
        entries = [(_key(rel), s, fs) for rel, s, fs in files]
        blob = pack_blob(entries, self.root)
        want = {key: _stamp_columns(s) for key, s, _fs in entries}
        del entries
        with write(self.conn) as conn:
            rows = conn.execute(
                "SELECT rel, size, mtime_ns, ctime_ns, inode, sha256, racy FROM files"
            ).fetchall()
            if len(rows) != len(want) or any(want.get(bytes(r[0])) != r[1:] for r in rows):
                return False
            gen = self._gen().to_bytes(8, "big")
            conn.executemany(
                "INSERT OR REPLACE INTO blobs (name, value) VALUES (?, ?)",
                [(PACK, blob), (PACK_GEN, gen)],
            )
        return True

    def _gen(self) -> int:
        """The generation of the last save of rows (0: none).

        A counter of its own, not the rows' greatest: that one goes down when
        its row is removed, and a row saved next would seem older than a pack.
        """
        value = self._blob(FILES_GEN)
        return int.from_bytes(value, "big") if value is not None and len(value) == 8 else 0

    def _zdict(self) -> bytes | None:
        """The preset dictionary the rows are packed with (None before the first row)."""
        return self._blob("zdict")

    def _blob(self, name: str) -> bytes | None:
        row = self.conn.execute("SELECT value FROM blobs WHERE name = ?", (name,)).fetchone()
        return None if row is None else bytes(row[0])


class RowLoader:
    """A store's rows as one read fetched them, decoded in steps: a few first, then the rest.

    Without a pack, the rows (let go once decoded, so a blob's memory is
    reused for the objects decoded after it: at 100k rows the fetched blobs
    were ~45 MB).  With one, its entries in path order, and then the rows
    newer than it, which replace the entries of their paths.
    """

    def __init__(self, store: VaultStore, zdict: bytes, rows: list[Row], pack: PackReader | None):
        rows.reverse()  # popped from the end: first row first, O(1) each
        self._store = store
        self._zdict = zdict
        self._rows = rows
        self._pack = pack
        self._parts = pack.parts() if pack is not None else iter(())
        self._part: list[Entry] = []
        self._newer = {row[0] for row in rows} if pack is not None else set()
        #: Files the pack served so far.
        self.packed = 0

    def __len__(self) -> int:
        """Rows and pack entries not decoded yet (pack entries of newer rows counted too)."""
        return len(self._rows) + (self._pack.count - self.packed if self._pack is not None else 0)

    def take(self, count: int | None = None) -> Entries:
        """The next `count` files as entries; None: all left (StoreCorrupt if one is damaged)."""
        out: Entries = {}
        left = -1 if count is None else count
        if self._pack is not None:
            self._from_pack(out, left)
            if count is not None:
                return out
        rows, root, zdict = self._rows, self._store.root, self._zdict
        decode, pop = codec.decode_scan, rows.pop
        for _ in range(len(rows) if count is None else min(count, len(rows))):
            row = pop()
            key, size, mtime, ctime, inode, sha, racy, blob = row
            if len(sha) != 32:
                raise StoreCorrupt("a file row's sha256 is damaged")
            stamp = FileStamp(size, mtime, ctime, inode, sha.hex(), bool(racy))
            self._add(out, key, stamp, decode(blob, root, zdict))
        return out

    def _from_pack(self, out: Entries, left: int) -> None:
        """Up to `left` (-1: every) pack entries into `out`, those of newer rows left out."""
        newer, add = self._newer, self._add
        while left:
            if not self._part:
                part = next(self._parts, None)
                if part is None:
                    return
                part.reverse()
                self._part = part
            key, stamp, fs = self._part.pop()
            if key in newer:
                continue
            add(out, key, stamp, fs)
            self.packed += 1
            left -= 1

    def _add(self, out: Entries, key: bytes, stamp: FileStamp, fs: FileScan) -> None:
        rel = _rel(key)
        if fs.memories and fs.memories[0].path == rel:
            rel = fs.memories[0].path  # one string for the path, not two
        bodies.attach(self._store.root, rel, self._store.format_id, stamp.sha256, fs.memories)
        out[rel] = (stamp, fs)


def _stamp_columns(s: FileStamp) -> tuple[int, int, int, int, bytes, int]:
    """A stamp as the file row's columns hold it (size, mtime, ctime, inode, sha256, racy)."""
    return (s.size, s.mtime_ns, s.ctime_ns, s.inode, bytes.fromhex(s.sha256), int(s.racy))


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
