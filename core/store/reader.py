"""A vault's store opened read-only, one row at a time: for a search served without the catalog.

Why: a persisted search index (`core.search.persisted`) needs the memory of
each of its top hits as linked.  For a file holding one memory that is
exactly what the vault's store row holds, so the index keeps only a
reference to the row (its path and a hash of its raw pickle) instead of a
second copy (27 MB of the index at 100k memories).  This reader gives the
raw pickles back; the index checks the hash and falls back to the catalog
when a row is missing or differs.

Read-only means SQLite's ``mode=ro``: closing the connection never
checkpoints or removes the WAL of a store another process writes.  The
store is trusted as `core.store.files.open_store` trusts it (owner, mode,
schema, root, format, code fingerprint); anything else opens nothing.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from . import codec
from .db import SCHEMA_VERSION, StoreCorrupt, read_meta, row_id, store_path, untrusted


def _key(rel: str) -> bytes:
    return rel.encode("utf-8", "surrogateescape")


class StoreReader:
    """Raw row pickles of one vault's store (see the module doc)."""

    def __init__(self, conn: sqlite3.Connection, zdict: bytes) -> None:
        self._conn = conn
        self._zdict = zdict

    @classmethod
    def open(cls, root: Path, format_id: str, code: str) -> StoreReader | None:
        """The store of the vault at `root` if it is one this code wrote; else None."""
        path = store_path(root)
        if not path.is_file() or untrusted(path) is not None:
            return None
        expected = {
            "schema": str(SCHEMA_VERSION),
            "root": str(root),
            "format": format_id,
            "code": code,
        }
        conn: sqlite3.Connection | None = None
        try:
            conn = sqlite3.connect(path.as_uri() + "?mode=ro", uri=True, check_same_thread=False)
            if read_meta(conn) != expected:
                conn.close()
                return None
            row = conn.execute("SELECT value FROM blobs WHERE name = 'zdict'").fetchone()
        except sqlite3.Error:
            if conn is not None:
                conn.close()
            return None
        return cls(conn, b"" if row is None else bytes(row[0]))

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self._conn.close()

    def raw(self, rel: str) -> bytes | None:
        """The raw pickle of `rel`'s row (None: no row, or a damaged one)."""
        key = _key(rel)
        return self._raw("SELECT scan FROM files WHERE id = ? AND rel = ?", (row_id(key), key))

    def raw_by_id(self, rowid: int) -> bytes | None:
        """The raw pickle of the row with this id (`db.row_id` of its path)."""
        return self._raw("SELECT scan FROM files WHERE id = ?", (rowid,))

    def _raw(self, sql: str, args: tuple[object, ...]) -> bytes | None:
        try:
            found = self._conn.execute(sql, args).fetchone()
            return None if found is None else codec.decompress(found[0], self._zdict)
        except (sqlite3.Error, StoreCorrupt):
            return None

    def shas(self) -> dict[str, bytes] | None:
        """rel -> sha256 (32 bytes) of every row's file as stored; None if unreadable."""
        try:
            rows = self._conn.execute("SELECT rel, sha256 FROM files").fetchall()
        except sqlite3.Error:
            return None
        return {bytes(k).decode("utf-8", "surrogateescape"): bytes(sha) for k, sha in rows}

    def blob(self, name: str) -> bytes | None:
        """A named blob kept beside the rows (`files.put_blobs`); None if none."""
        try:
            row = self._conn.execute("SELECT value FROM blobs WHERE name = ?", (name,)).fetchone()
        except sqlite3.Error:
            return None
        return None if row is None else bytes(row[0])

    def raws(self) -> Iterator[tuple[str, bytes]]:
        """(rel, raw pickle) of every readable row."""
        try:
            rows = self._conn.execute("SELECT rel, scan FROM files").fetchall()
        except sqlite3.Error:
            return
        for key, blob in rows:
            with contextlib.suppress(StoreCorrupt):
                yield (
                    bytes(key).decode("utf-8", "surrogateescape"),
                    codec.decompress(blob, self._zdict),
                )


__all__ = ["StoreReader"]
