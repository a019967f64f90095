"""Files known to hold no secret, kept between runs so a start does not scan every file again.

The app scans every loaded vault for secrets once it is listed, and
`memlens secrets` scans on every call: at 100,000 memories that is reading
every file and running the detectors over every text field (minutes of
CPU, and in the app a thread holding the GIL while the user types).  The
scan is pure over content (`incremental`), so what a file held is known from
its sha256 (the scan stamp), the vault's vault-wide files and its name, and
the code that reads and scans it.

Only files with **no** finding are kept: a finding holds the secret itself,
and a cache must never become one more copy of a secret (nor keep one after
it was redacted).  Files with findings are few; they are scanned again.

One SQLite file (`privacy.sqlite3`) in the private cache folder: per vault
the context its rows hold in (code fingerprint, vault-wide digest, name),
and one row per clean file: (vault, path) -> (sha256, memories in the file);
~90 bytes a file.  Each scan writes only the rows that changed, in one
transaction; several processes may share it (WAL).
Anything wrong with the file (damaged, foreign, unreadable) only makes the
scan slower: the file is remade, or the scan goes on without it.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import threading
from pathlib import Path

from ..safe_io import read_regular
from ..scan.stored import code_fingerprint
from ..store.db import cache_dir, connect, private_dir, read_meta, remove_files, untrusted, write

FILE_NAME = "privacy.sqlite3"
SCHEMA = "3"
#: A clean file's row: its sha256 (hex) and how many memories it holds.
Clean = tuple[str, int]
#: What every row of a vault was computed under: the code (`privacy_code`),
#: the digest of the vault's vault-wide files, the vault's name.
Context = tuple[str, str, str]

_TABLES = (
    "CREATE TABLE vaults (id INTEGER PRIMARY KEY, path BLOB UNIQUE NOT NULL,"
    " context TEXT NOT NULL)",
    "CREATE TABLE clean (vault INTEGER NOT NULL, rel BLOB NOT NULL, sha256 BLOB NOT NULL,"
    " memories INTEGER NOT NULL, PRIMARY KEY (vault, rel)) WITHOUT ROWID",
)
#: Rows written at once past which the WAL file is truncated after the write.
CHECKPOINT_ROWS = 5000
_fingerprints: dict[str, str] = {}


def privacy_code(format_id: str) -> str:
    """sha256 over the detectors' source and the format's reading code (`code_fingerprint`)."""
    cached = _fingerprints.get(format_id)
    if cached is None:
        digest = hashlib.sha256(code_fingerprint(format_id).encode())
        # Every module of the package: whichever holds a rule, a new one included.
        for path in sorted(Path(__file__).parent.glob("*.py")):
            with contextlib.suppress(OSError):
                digest.update(path.name.encode() + b"\0" + read_regular(path))
        cached = _fingerprints[format_id] = digest.hexdigest()
    return cached


class CleanFiles:
    """The open file; a method that fails closes it and the caller goes on without it."""

    def __init__(self, conn: sqlite3.Connection | None) -> None:
        self._conn = conn
        #: Two scans of the app may overlap for a moment (a newer one cancels
        #: the older): one connection, one user at a time.
        self._lock = threading.Lock()

    @classmethod
    def open(cls, path: Path | None = None) -> CleanFiles:
        """The kept file, made (or remade when damaged or foreign); unusable: an empty one."""
        where = path or cache_dir() / FILE_NAME
        for attempt in range(2):
            try:
                return cls(_open(where))
            except (sqlite3.Error, OSError):
                if attempt == 0:
                    with contextlib.suppress(OSError):
                        remove_files(where)
        return cls(None)

    @property
    def usable(self) -> bool:
        return self._conn is not None

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _drop(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None

    def load(self, vault: Path, context: Context) -> dict[str, Clean]:
        """path -> (sha256, memories) of the vault's clean files, if kept in this `context`."""
        with self._lock:
            if self._conn is None:
                return {}
            try:
                found = self._conn.execute(
                    "SELECT id, context FROM vaults WHERE path = ?", (_raw(str(vault)),)
                ).fetchone()
                if found is None or found[1] != _joined(context):
                    return {}
                rows = self._conn.execute(
                    "SELECT rel, sha256, memories FROM clean WHERE vault = ?", (found[0],)
                ).fetchall()
            except sqlite3.Error:
                self._drop()
                return {}
        return {_text(r[0]): (bytes(r[1]).hex(), int(r[2])) for r in rows}

    def update(
        self, vault: Path, context: Context, before: dict[str, Clean], now: dict[str, Clean]
    ) -> int:
        """Make the vault's rows `now` (they were `before`): only differences are written.

        A vault kept in another context (new detectors, its vault-wide files
        or name changed) has all its rows replaced.  Returns rows written or removed.
        """
        with self._lock:
            if self._conn is None:
                return 0
            try:
                with write(self._conn):
                    written = self._update(_raw(str(vault)), _joined(context), before, now)
                if written > CHECKPOINT_ROWS:  # a first scan: give the WAL's space back
                    self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error:
                self._drop()
                return 0
        return written

    def _update(
        self, path: bytes, context: str, before: dict[str, Clean], now: dict[str, Clean]
    ) -> int:
        conn = self._conn
        assert conn is not None
        found = conn.execute("SELECT id, context FROM vaults WHERE path = ?", (path,)).fetchone()
        if found is None:
            number = conn.execute(
                "INSERT INTO vaults (path, context) VALUES (?, ?)", (path, context)
            ).lastrowid
            before = {}
        else:
            number = found[0]
            if found[1] != context:
                conn.execute("DELETE FROM clean WHERE vault = ?", (number,))
                conn.execute("UPDATE vaults SET context = ? WHERE id = ?", (context, number))
                before = {}
        put = [
            (number, _raw(rel), bytes.fromhex(sha), memories)
            for rel, (sha, memories) in now.items()
            if before.get(rel) != (sha, memories)
        ]
        drop = [(number, _raw(rel)) for rel in before.keys() - now.keys()]
        conn.executemany("DELETE FROM clean WHERE vault = ? AND rel = ?", drop)
        conn.executemany(
            "INSERT OR REPLACE INTO clean (vault, rel, sha256, memories) VALUES (?, ?, ?, ?)",
            put,
        )
        return len(put) + len(drop)


def _joined(context: Context) -> str:
    return "\0".join(context)


def _raw(text: str) -> bytes:
    """A path as stored: its bytes (a file name need not be UTF-8: surrogate escapes)."""
    return text.encode("utf-8", "surrogateescape")


def _text(raw: bytes) -> str:
    return bytes(raw).decode("utf-8", "surrogateescape")


def _open(path: Path) -> sqlite3.Connection:
    private_dir(path.parent)
    if untrusted(path) is not None:
        remove_files(path)
    conn = connect(path)
    try:
        if read_meta(conn).get("schema") != SCHEMA:
            with write(conn):
                for table in ("clean", "vaults", "meta"):
                    conn.execute(f"DROP TABLE IF EXISTS {table}")
                conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                for statement in _TABLES:
                    conn.execute(statement)
                conn.execute("INSERT INTO meta (key, value) VALUES ('schema', ?)", (SCHEMA,))
            conn.execute("VACUUM")  # an older schema's pages back to the disk
        conn.execute("SELECT count(*) FROM clean WHERE vault = ''").fetchone()
    except BaseException:
        conn.close()
        raise
    return conn


__all__ = ["FILE_NAME", "Clean", "CleanFiles", "Context", "privacy_code"]
