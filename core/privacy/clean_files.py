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

One SQLite file (`privacy.sqlite3`) in the private cache folder, one row per
clean file: (vault, path) -> (sha256, vault-wide digest, vault name,
memories in the file, code fingerprint).  Each scan writes only the rows
that changed, in one transaction; several processes may share it (WAL).
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
SCHEMA = "2"
#: What a clean file's row says it was computed from: (sha256, vault-wide
#: digest, vault name, memories in the file).
Clean = tuple[str, str, str, int]

_TABLE = (
    "CREATE TABLE IF NOT EXISTS clean (vault BLOB NOT NULL, rel BLOB NOT NULL,"
    " code TEXT NOT NULL, sha256 TEXT NOT NULL, wide TEXT NOT NULL, name TEXT NOT NULL,"
    " memories INTEGER NOT NULL, PRIMARY KEY (vault, rel)) WITHOUT ROWID"
)
#: The modules whose rules decide the findings (besides each format's reading code).
_PRIVACY_MODULES = ("__init__.py", "checks.py", "detectors.py", "findings.py")
_fingerprints: dict[str, str] = {}


def privacy_code(format_id: str) -> str:
    """sha256 over the detectors' source and the format's reading code (`code_fingerprint`)."""
    cached = _fingerprints.get(format_id)
    if cached is None:
        digest = hashlib.sha256(code_fingerprint(format_id).encode())
        here = Path(__file__).parent
        for name in _PRIVACY_MODULES:
            with contextlib.suppress(OSError):
                digest.update(name.encode() + b"\0" + read_regular(here / name))
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

    def load(self, vault: Path, code: str) -> dict[str, Clean]:
        """path -> what it was clean as, for the vault's files kept under `code`."""
        with self._lock:
            if self._conn is None:
                return {}
            try:
                rows = self._conn.execute(
                    "SELECT rel, sha256, wide, name, memories FROM clean"
                    " WHERE vault = ? AND code = ?",
                    (_raw(str(vault)), code),
                ).fetchall()
            except sqlite3.Error:
                self._drop()
                return {}
        return {_text(r[0]): (str(r[1]), str(r[2]), str(r[3]), int(r[4])) for r in rows}

    def update(
        self, vault: Path, code: str, before: dict[str, Clean], now: dict[str, Clean]
    ) -> int:
        """Make the vault's rows `now` (rows were `before`): only differences are written.

        Returns how many rows were written or removed.
        """
        key = _raw(str(vault))
        put = [
            (key, _raw(rel), code, *clean) for rel, clean in now.items() if before.get(rel) != clean
        ]
        drop = [(key, _raw(rel)) for rel in before.keys() - now.keys()]
        if not put and not drop:
            return 0
        with self._lock:
            if self._conn is None:
                return 0
            try:
                with write(self._conn):
                    self._conn.executemany("DELETE FROM clean WHERE vault = ? AND rel = ?", drop)
                    self._conn.executemany(
                        "INSERT OR REPLACE INTO clean"
                        " (vault, rel, code, sha256, wide, name, memories)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?)",
                        put,
                    )
            except sqlite3.Error:
                self._drop()
                return 0
        return len(put) + len(drop)


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
                conn.execute("DROP TABLE IF EXISTS clean")
                conn.execute("DROP TABLE IF EXISTS meta")
                conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                conn.execute(_TABLE)
                conn.execute("INSERT INTO meta (key, value) VALUES ('schema', ?)", (SCHEMA,))
        conn.execute("SELECT count(*) FROM clean WHERE vault = ''").fetchone()
    except BaseException:
        conn.close()
        raise
    return conn


__all__ = ["FILE_NAME", "Clean", "CleanFiles", "privacy_code"]
