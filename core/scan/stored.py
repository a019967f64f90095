"""The scan's side of the store: which code wrote a row, reading and writing whole sets of rows.

`code_fingerprint` names the scanning code (a store written by other code
is rebuilt); `load_entries` / `save_entries` / `save_rows` read and write a
vault's rows outside a scan (the app after rescans, tests); `scan_files`
in `core.scan.cache` does its own in the scan.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import sys
from collections.abc import Iterable
from pathlib import Path

from ..formats import adapter_for
from ..model import FileScan
from ..safe_io import read_regular
from ..store import Entries, FileStamp, StoreCorrupt, VaultStore, open_store, store_path
from ..store.db import SCHEMA_VERSION, remove_files

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
    "store/codec.py",
    "store/stamps.py",
    "store/bodies.py",
    "formats/adapter.py",
    "formats/files.py",
    "formats/linking.py",
    "formats/reading.py",
)


def cache_path(root: Path) -> Path:
    """The store file of the vault at `root` (keyed by its real path; `core.store.db`)."""
    return store_path(root)


_fingerprints: dict[str, str] = {}


def code_fingerprint(format_id: str) -> str:
    """sha256 over the source of the modules that decide a format's FileScans.

    The shared readers and model, the row codec, the adapter base and its
    helpers, and the modules of the format's own package that reading and
    linking depend on (`format_modules`); not the writers or anything else
    that does not change what a scan produces.
    """
    cached = _fingerprints.get(format_id)
    if cached is not None:
        return cached
    here = Path(__file__).parents[1]  # core/
    digest = hashlib.sha256(f"v{SCHEMA_VERSION}:{format_id}".encode())
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


def load_entries(root: Path, format_id: str) -> tuple[Entries, str | None]:
    """The stored entries of a vault, or ({}, reason) when there is nothing to trust.

    The reason is None only when there simply is no store yet (or it is fine).
    """
    try:
        opened = open_store(root, format_id, code_fingerprint(format_id))
    except (OSError, sqlite3.Error) as exc:
        return {}, f"cannot open the store: {exc}"
    assert opened.store is not None
    try:
        return opened.store.load_files(), opened.reason
    except StoreCorrupt as exc:
        return {}, str(exc)
    finally:
        opened.store.close()


def save_entries(root: Path, format_id: str, entries: Entries) -> int:
    """Make the vault's store hold exactly `entries`; how many rows were written.

    Raises OSError or sqlite3.Error when the store cannot be written (a
    store that cannot be written is only slower: callers report it).
    """
    opened = open_store(root, format_id, code_fingerprint(format_id))
    assert opened.store is not None
    try:
        return save_delta(opened.store, entries)
    finally:
        opened.store.close()


def save_delta(store: VaultStore, entries: Entries) -> int:
    """Write the rows of `entries` the store does not hold as they are, drop the others.

    Only stamps are compared (no blobs read): a row whose stamp equals the
    entry's holds the scan of the same bytes.
    """
    held = store.stamps()
    upserts = [
        (rel, stamp, fs) for rel, (stamp, fs) in entries.items() if held.pop(rel, None) != stamp
    ]
    return store.save(upserts, list(held))


def save_rows(
    root: Path,
    format_id: str,
    rels: Iterable[str],
    scans: dict[str, FileScan],
    stamps: dict[str, FileStamp],
) -> int:
    """Write the rows of `rels` as `scans`/`stamps` have them now (gone or unstamped: deleted).

    One transaction, whatever else the store holds; how many rows were written.
    """
    upserts: list[tuple[str, FileStamp, FileScan]] = []
    deletes: list[str] = []
    for rel in rels:
        fs, stamp = scans.get(rel), stamps.get(rel)
        if fs is not None and stamp is not None:
            upserts.append((rel, stamp, fs))
        else:
            deletes.append(rel)
    opened = open_store(root, format_id, code_fingerprint(format_id))
    assert opened.store is not None
    try:
        if opened.status != "warm":
            # A new or rebuilt store: it must hold every row, not just these.
            return save_delta(opened.store, entries_of(scans, stamps))
        return opened.store.save(upserts, deletes)
    finally:
        opened.store.close()


def clear(root: Path) -> bool:
    """Remove a vault's store; True if there was one."""
    path = cache_path(root)
    there = path.exists()
    remove_files(path)
    return there


def entries_of(scans: dict[str, FileScan], stamps: dict[str, FileStamp]) -> Entries:
    """Store entries for the files that have a stamp (unreadable ones are left out)."""
    return {rel: (stamps[rel], fs) for rel, fs in scans.items() if rel in stamps}


__all__ = [
    "cache_path",
    "clear",
    "code_fingerprint",
    "entries_of",
    "load_entries",
    "save_delta",
    "save_entries",
    "save_rows",
]
