"""Search without opening the catalog, when no file changed since the index was saved.

Opening the catalog decodes every stored row and links every vault (4 s at
100k memories): a search needs none of that when nothing changed.  So a
search first asks, per vault, only what is cheap: the vault store's stamps
(no rows decoded), a stat walk of the vault's files against them, and the
digest of (path, sha256) the persisted index was saved with.  When every
vault is unchanged, the index is served from its file (`persisted`) with
its rows' memories decoded on demand (`stored_memories`); anything else
(a changed, new or racy file, a new `as_of`, a store or index that does not
check out) returns None and the caller opens the catalog, which updates
both.  The answer is the same either way: the same index, the same
memories as linked.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np

from ..formats import adapter_for
from ..model import Memory
from ..scan.stored import code_fingerprint
from ..store.db import SCHEMA_VERSION, StoreCorrupt, read_meta, store_path, untrusted
from .persisted import index_path, pairs_digest, persisted_code
from .persisted_rows import restore_state
from .stored_memories import StoredMemories
from .stored_terms import StoredTerms

if TYPE_CHECKING:
    from datetime import date

    from ..scan.vault import Vault
    from .index import SearchIndex


def open_fresh(vaults: list[Vault], as_of: date) -> SearchIndex | None:
    """The persisted index of these vaults if no file changed since it was saved, else None.

    The index is for searching only (its memories load on demand; it is
    not updated).  None costs a stat walk: the caller opens the catalog.
    """
    if not vaults:
        return None
    path = index_path(vaults)
    if not path.is_file() or untrusted(path) is not None:
        return None
    conn = read_only(path)
    try:
        index = _fresh(conn, vaults, as_of)
    except (sqlite3.Error, OSError, ValueError, KeyError, StoreCorrupt):
        index = None
    if index is None:
        conn.close()
    return index


def _fresh(conn: sqlite3.Connection, vaults: list[Vault], as_of: date) -> SearchIndex | None:
    # One snapshot for the meta and every term or memory read after it.
    conn.execute("BEGIN")
    meta: dict[str, bytes] = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    if meta.get("code") != persisted_code(vaults).encode():
        return None
    if meta.get("as_of") != as_of.isoformat().encode():
        return None  # decay for a new date needs every memory: the catalog's way
    saved = json.loads(meta["vaults"])
    if saved["roots"] != [str(v.root) for v in vaults]:
        return None
    for number, v in enumerate(vaults):
        if not unchanged(v, saved["digests"][number]):
            return None
    index, norms = restore_state(meta)
    slot_vault: list[int] = np.frombuffer(meta["slot_vault"], dtype=np.int32).tolist()
    slot_ids: list[str] = json.loads(meta["slot_ids"])
    roots = [v.root for v in vaults]
    memories = StoredMemories(
        conn, len(slot_ids), roots, [v.format for v in vaults], slot_vault, meta["zdict"]
    )
    # Read-only use: nothing appends to a fresh index's rows.
    index._memories = cast("list[Memory]", memories)
    names = [str(r) for r in roots]
    index._row_of = {
        (names[n], mem_id): slot
        for slot, (n, mem_id) in enumerate(zip(slot_vault, slot_ids, strict=True))
        if n >= 0
    }
    index._place_ranks = np.frombuffer(meta["place"], dtype=np.int64)
    index.state.terms = StoredTerms(conn, len(index._row_of), norms)
    return index


def read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection: closing it never checkpoints or removes the WAL."""
    return sqlite3.connect(path.as_uri() + "?mode=ro", uri=True, check_same_thread=False)


#: A file row's stamp as compared with a stat: (size, mtime_ns, ctime_ns, inode).
StatKey = tuple[int, int, int, int]


def _stored_stamps(v: Vault, digest: str) -> dict[bytes, StatKey] | None:
    """The stamps of the vault's store if it holds the files the index was made from.

    That is a store this code wrote, without racy rows, whose (path, sha256)
    digest is the index's (no rows decoded, no stamp objects made).
    """
    path = store_path(v.root)
    if not path.is_file() or untrusted(path) is not None:
        return None
    expected = {
        "schema": str(SCHEMA_VERSION),
        "root": str(v.root),
        "format": v.format,
        "code": code_fingerprint(v.format),
    }
    conn = read_only(path)
    try:
        conn.execute("BEGIN")
        if read_meta(conn) != expected:
            return None
        if conn.execute("SELECT 1 FROM files WHERE racy LIMIT 1").fetchone() is not None:
            return None
        rows = conn.execute(
            "SELECT rel, sha256, size, mtime_ns, ctime_ns, inode FROM files ORDER BY rel"
        ).fetchall()
    finally:
        conn.close()
    if pairs_digest((key, sha) for key, sha, *_ in rows) != digest:
        return None
    return {key: (size, mtime, ctime, inode) for key, _sha, size, mtime, ctime, inode in rows}


def unchanged(v: Vault, digest: str) -> bool:
    """The vault's store holds every file as it is now, and those are the files indexed."""
    stamps = _stored_stamps(v, digest)
    if stamps is None:
        return False
    listing = adapter_for(v.format).file_listing(Path(v.root))
    if listing.skipped or len(listing.names) != len(stamps):
        return False
    base = str(v.root) + os.sep
    stat, get = os.stat, stamps.get
    for rel in listing.names:
        try:
            st = stat(base + rel)
        except OSError:
            return False
        if get(rel.encode("utf-8", "surrogateescape")) != (
            st.st_size,
            st.st_mtime_ns,
            st.st_ctime_ns,
            st.st_ino,
        ):
            return False
    return True
