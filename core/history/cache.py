"""What a memory's history costs to find, kept between runs: file logs and per-blob digests.

Two things make a history slow on a long repository (bench/history_bench.py,
10,000 commits): `git log` of the file (0.2-0.4 s, more with `--follow`)
and inflating every version of a big shared file to find one section or
record in it (~1 s for a 400 KB JSON Lines file changed by 1,000 commits).
Both are pure functions of what git stores, so both are kept in one SQLite
file in the user cache folder (`history.sqlite3`, beside the scan stores):

    logs(key, head, data)   one file's log (`log.FileChange`s, JSON, zlib)
                            as of commit `head`; key = repository, path,
                            --follow.  A log of commit H is the same
                            whatever clone it is read in, so a HEAD that
                            did not move costs no `git log`, and a HEAD
                            that moved forward costs only `git log OLD..HEAD`
                            (`extend_log` says when that is exact).
    parts(scope, blob, digest)  the memory's own bytes in one version,
                            as a 16-byte blake2b (NULL: not there): a blob
                            never changes, so neither does what its format
                            extracts from it.  `scope` names the format, the
                            HistoryScope and a fingerprint of the extracting
                            code, so a changed extractor starts afresh.
    versions(blob, base, data)  a version of a file several memories share
                            (a section's, a record's): whole and zlib'd
                            (base NULL), or as the edits that turn version
                            `base` (the one after it in a log) into it
                            (`bytediff.encode`).  The next memory of that file is
                            read from these (`rebuild`), not from git.
    part_data(digest, data) those bytes, up to PART_DATA_MAX each; a bigger
                            part (a whole large file) is read from git again
                            when an entry needs it.

Why SQLite: the scan stores' reasons (stdlib, WAL: the app and a CLI may
write at once, a torn write never shows).  The file is a cache, never
trusted: made 0600 in a 0700 folder, replaced when another user owns it or
others may write it, emptied when its schema differs, and removed and made
again when SQLite or zlib finds it damaged.  A cache that cannot be used at
all only costs speed: `open_cache` returns None and history reads git.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import sqlite3
import zlib
from collections.abc import Iterable
from pathlib import Path

from ..formats.adapter import HistoryScope
from ..scan.stored import code_fingerprint
from ..store.db import (
    cache_dir,
    connect,
    private_dir,
    read_meta,
    remove_files,
    untrusted,
    write,
)
from .log import Commit, FileChange

#: Bump when a table or a row's encoding changes.
CACHE_SCHEMA = "history-2"
#: A part bigger than this keeps only its digest (read again from git when shown).
PART_DATA_MAX = 64 * 1024
#: Past this size the file is emptied before it grows further (it only costs speed).
FILE_MAX = 256 * 1024 * 1024
FILE_NAME = "history.sqlite3"

_TABLES = (
    "CREATE TABLE IF NOT EXISTS logs (key TEXT PRIMARY KEY, head TEXT NOT NULL,"
    " data BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS parts (scope TEXT NOT NULL, blob TEXT NOT NULL,"
    " digest BLOB, PRIMARY KEY (scope, blob)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS part_data (digest BLOB PRIMARY KEY, data BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS versions (blob TEXT PRIMARY KEY, base TEXT,"
    " data BLOB NOT NULL) WITHOUT ROWID",
)

#: One kept version: the version its edits apply to (None: `data` is it whole), and the data.
VersionRow = tuple[str | None, bytes]
#: Rows asked for in one statement (SQLite's bound-parameter limit is 999 on old builds).
_CHUNK = 900

#: What a damaged or busy cache raises: each means "go on without it".
CacheFailure = (sqlite3.Error, zlib.error, ValueError, TypeError, KeyError, IndexError, OSError)


def digest(part: bytes | None) -> bytes | None:
    """The digest a part is compared and stored by (None: the memory is not in that version)."""
    return None if part is None else hashlib.blake2b(part, digest_size=16).digest()


_HISTORY_CODE = (Path(__file__).parents[1] / "formats" / "history_parts.py",)


@functools.cache
def _shared_code() -> str:
    """A fingerprint of the extracting code the formats share (history_parts)."""
    h = hashlib.sha256()
    for path in _HISTORY_CODE:
        with contextlib.suppress(OSError):  # an installation without sources
            h.update(path.read_bytes())
    return h.hexdigest()


def scope_key(format_id: str, scope: HistoryScope) -> str:
    """A name for what `history_extract` takes out of a blob: format, scope, code."""
    text = json.dumps(
        [
            CACHE_SCHEMA,
            code_fingerprint(format_id),
            _shared_code(),
            format_id,
            scope.path,
            scope.whole_file,
            scope.key,
            scope.occurrence,
        ],
        ensure_ascii=True,
    )
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def log_key(top: Path, path: bytes, follow: bool) -> str:
    """The row of one file's log in one work tree."""
    real = os.path.realpath(top).encode("utf-8", "surrogateescape")
    return hashlib.sha256(real + b"\0" + path + b"\0" + bytes([follow])).hexdigest()


def encode_log(changes: list[FileChange]) -> bytes:
    """A log as zlib'd JSON: commits once each, then the changes naming them by index."""
    index: dict[str, int] = {}
    commits: list[list[object]] = []
    rows: list[list[object]] = []
    for c in changes:
        k = c.commit
        if k.id not in index:
            index[k.id] = len(commits)
            commits.append(
                [k.id, list(k.parents), k.author, k.email, k.date, k.committed, k.message]
            )
        rows.append(
            [
                index[k.id],
                c.status,
                c.old_blob,
                c.new_blob,
                c.old_path.decode("latin-1"),
                c.new_path.decode("latin-1"),
            ]
        )
    text = json.dumps({"commits": commits, "changes": rows}, ensure_ascii=False)
    return zlib.compress(text.encode("utf-8", "surrogatepass"), 1)


def decode_log(data: bytes) -> list[FileChange]:
    """`encode_log` read back; ValueError (or KeyError, TypeError) when damaged."""
    obj = json.loads(zlib.decompress(data).decode("utf-8", "surrogatepass"))
    commits = [
        Commit(str(i), tuple(str(p) for p in ps), str(a), str(e), str(d), str(c), str(m))
        for i, ps, a, e, d, c, m in obj["commits"]
    ]
    return [
        FileChange(
            commits[n],
            str(status),
            None if old is None else str(old),
            None if new is None else str(new),
            str(old_path).encode("latin-1"),
            str(new_path).encode("latin-1"),
        )
        for n, status, old, new, old_path, new_path in obj["changes"]
    ]


class HistoryCache:
    """The open cache file; every method may raise a `CacheFailure` (the caller goes on without)."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()

    # ------------------------------------------------------------ logs

    def log(self, key: str) -> tuple[str, list[FileChange]] | None:
        """The kept log of `key` and the commit it was read at; None if none."""
        row = self.conn.execute("SELECT head, data FROM logs WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return str(row[0]), decode_log(bytes(row[1]))

    def save_log(self, key: str, head: str, changes: list[FileChange]) -> None:
        data = encode_log(changes)
        with write(self.conn):
            self.conn.execute(
                "INSERT OR REPLACE INTO logs (key, head, data) VALUES (?, ?, ?)", (key, head, data)
            )

    # ------------------------------------------------------------ parts

    def digests(self, scope: str, blobs: Iterable[str]) -> dict[str, bytes | None]:
        """The kept digest of each blob of `blobs` that has one."""
        wanted = set(blobs)
        rows = self.conn.execute("SELECT blob, digest FROM parts WHERE scope = ?", (scope,))
        return {
            str(b): (None if d is None else bytes(d)) for b, d in rows.fetchall() if b in wanted
        }

    def save_parts(self, scope: str, parts: dict[str, bytes | None]) -> None:
        """Keep each blob's part: its digest, and its bytes when small."""
        rows = [(scope, blob, digest(part)) for blob, part in parts.items()]
        data = {
            d: part
            for part in parts.values()
            if part is not None and len(part) <= PART_DATA_MAX
            for d in (digest(part),)
        }
        with write(self.conn):
            self.conn.executemany(
                "INSERT OR REPLACE INTO parts (scope, blob, digest) VALUES (?, ?, ?)", rows
            )
            self.conn.executemany(
                "INSERT OR IGNORE INTO part_data (digest, data) VALUES (?, ?)", data.items()
            )
        self._bound()

    # ------------------------------------------------------------ versions

    def version_rows(self, blobs: Iterable[str]) -> dict[str, VersionRow]:
        """The kept row of each of `blobs` that has one."""
        wanted = list(dict.fromkeys(blobs))
        out: dict[str, VersionRow] = {}
        for i in range(0, len(wanted), _CHUNK):
            chunk = wanted[i : i + _CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self.conn.execute(
                f"SELECT blob, base, data FROM versions WHERE blob IN ({marks})", chunk
            )
            for blob, base, data in rows.fetchall():
                out[str(blob)] = (None if base is None else str(base), bytes(data))
        return out

    def save_versions(self, rows: dict[str, VersionRow]) -> None:
        """Keep versions (each replaces what was kept of the same blob)."""
        with write(self.conn):
            self.conn.executemany(
                "INSERT OR REPLACE INTO versions (blob, base, data) VALUES (?, ?, ?)",
                [(b, base, data) for b, (base, data) in rows.items()],
            )
        self._bound()

    def part_data(self, digests: Iterable[bytes]) -> dict[bytes, bytes]:
        """The kept bytes of each digest that has them (checked against the digest)."""
        out: dict[bytes, bytes] = {}
        for d in set(digests):
            row = self.conn.execute("SELECT data FROM part_data WHERE digest = ?", (d,)).fetchone()
            if row is not None and digest(bytes(row[0])) == d:
                out[d] = bytes(row[0])
        return out

    def _bound(self) -> None:
        """Empty the file when it has grown past FILE_MAX (rows are re-made on demand)."""
        try:
            size = self.path.stat().st_size
        except OSError:
            return
        if size > FILE_MAX:
            _reset(self.conn)


def _reset(conn: sqlite3.Connection) -> None:
    """Empty the file and make our tables, in one transaction (not `db.reset`: its tables).

    Tables are dropped rather than the file deleted: another process may
    have it open.
    """
    with write(conn):
        for name in ("logs", "parts", "part_data", "versions", "meta"):
            conn.execute(f"DROP TABLE IF EXISTS {name}")
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        for statement in _TABLES:
            conn.execute(statement)
        conn.execute("INSERT INTO meta (key, value) VALUES ('schema', ?)", (CACHE_SCHEMA,))


def cache_path() -> Path:
    return cache_dir() / FILE_NAME


def _open(path: Path) -> HistoryCache:
    private_dir(path.parent)
    if untrusted(path) is not None:
        remove_files(path)
    conn = connect(path)
    try:
        if read_meta(conn).get("schema") != CACHE_SCHEMA:
            _reset(conn)
        conn.execute("SELECT count(*) FROM logs WHERE key = ''").fetchone()
    except BaseException:
        conn.close()
        raise
    return HistoryCache(conn, path)


def open_cache(path: Path | None = None) -> HistoryCache | None:
    """The history cache, made (or remade, when damaged or foreign) if need be; None if unusable."""
    where = path or cache_path()
    try:
        return _open(where)
    except CacheFailure:
        pass
    try:
        remove_files(where)
        return _open(where)
    except CacheFailure:
        return None


def discard(cache: HistoryCache) -> HistoryCache | None:
    """Remove a cache found damaged while reading it, and open a fresh one (None if that fails)."""
    cache.close()
    with contextlib.suppress(OSError):
        remove_files(cache.path)
    return open_cache(cache.path)


__all__ = [
    "CACHE_SCHEMA",
    "CacheFailure",
    "HistoryCache",
    "VersionRow",
    "cache_path",
    "decode_log",
    "digest",
    "discard",
    "encode_log",
    "log_key",
    "open_cache",
    "scope_key",
]
