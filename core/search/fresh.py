"""Search without opening the catalog, when no file changed since the index was saved.

Opening the catalog decodes every stored row and links every vault (4 s at
100k memories): a search needs none of that when nothing changed.  So a
search first asks, per vault, only what is cheap: the index's manifest of
the files it was made from (`persisted_files`) and a stat walk of the
vault's files as the adapter lists them (`core.store.statwalk`, in two
processes for a large vault), compared byte for byte.  When every vault is
unchanged, the index is served from its file (`persisted`) with its rows'
memories decoded on demand (`stored_memories`); anything else (a changed,
new, gone or racy file, a new `as_of`, an index that does not check out)
returns None and the caller opens the catalog, which updates the index.
The answer is the same either way: the same index, the same memories as
linked.  The vault stores are not opened at all.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np

from ..formats import adapter_for
from ..model import Memory
from ..store.db import StoreCorrupt, untrusted
from ..store.statwalk import stat_stamps
from . import persisted_files as files_io
from .persisted import index_path, persisted_code
from .persisted_rows import Meta, read_meta, restore_state
from .persisted_vectors import VectorFile
from .stored_lexical import load_lexical
from .stored_memories import StoredMemories
from .stored_refs import StaleRow
from .stored_terms import StoredTerms

if TYPE_CHECKING:
    from datetime import date

    from ..scan.vault import Vault
    from .aliases import IntArray, RowSegment
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
        index = _fresh(conn, path, vaults, as_of)
    except (sqlite3.Error, OSError, ValueError, KeyError, StoreCorrupt, zlib.error):
        index = None
    if index is None:
        conn.close()
    return index


def _checked(
    conn: sqlite3.Connection, vaults: list[Vault], as_of: date | None
) -> tuple[Meta, list[files_io.Manifest | None]] | None:
    """The index's meta and manifests when it is this code's, for these vaults, none changed.

    `as_of`: the date its decay columns must be for (None: any, for a caller
    that reads memories only).
    """
    # One snapshot for the meta and every term or memory read after it.
    conn.execute("BEGIN")
    meta = read_meta(conn, for_update=False)
    if meta.get("code") != persisted_code(vaults).encode():
        return None
    if as_of is not None and meta.get("as_of") != as_of.isoformat().encode():
        return None  # decay for a new date needs every memory: the catalog's way
    saved = json.loads(meta["vaults"])
    if saved["roots"] != [str(v.root) for v in vaults]:
        return None
    manifests = [files_io.read(conn, number) for number in range(len(vaults))]
    for v, manifest in zip(vaults, manifests, strict=True):
        if not unchanged(v, manifest):
            return None
    return meta, manifests


def _stored(
    conn: sqlite3.Connection,
    vaults: list[Vault],
    meta: Meta,
    manifests: list[files_io.Manifest | None],
) -> tuple[StoredMemories, list[str]]:
    """Every slot's memory (decoded on demand) and id ("" for none)."""
    slot_vault: list[int] = np.frombuffer(meta["slot_vault"], dtype=np.int32).tolist()
    slot_ids: list[str] = json.loads(meta["slot_ids"])
    memories = StoredMemories(
        conn,
        len(slot_ids),
        [v.root for v in vaults],
        [v.format for v in vaults],
        slot_vault,
        meta["zdict"],
        cast("list[files_io.Manifest]", manifests),
    )
    return memories, slot_ids


def fresh_memory(vaults: list[Vault], memory_id: str) -> Memory | None:
    """The one memory with this id, as linked, from the persisted index when no file changed.

    None when the index is absent, stale or for other vaults or code, when
    no memory or several have the id, or when its file changed while it was
    read: the caller opens the catalog (which says why an id is not found).
    Costs a stat walk and one row, not every memory: `memlens show`.
    """
    if not vaults:
        return None
    path = index_path(vaults)
    if not path.is_file() or untrusted(path) is not None:
        return None
    conn = read_only(path)
    memories: StoredMemories | None = None
    try:
        got = _checked(conn, vaults, None)
        if got is None:
            return None
        memories, slot_ids = _stored(conn, vaults, *got)
        slots = [s for s, i in enumerate(slot_ids) if i == memory_id]
        live = [s for s in slots if memories.live(s)]
        if len(live) != 1 or not memories.body_intact(live[0]):
            return None
        return memories[live[0]]
    except (sqlite3.Error, OSError, ValueError, KeyError, StoreCorrupt, zlib.error, StaleRow):
        return None
    finally:
        if memories is not None:
            memories.close()
        conn.close()


def _fresh(
    conn: sqlite3.Connection, path: Path, vaults: list[Vault], as_of: date
) -> SearchIndex | None:
    got = _checked(conn, vaults, as_of)
    if got is None:
        return None
    meta, manifests = got
    index, norms = restore_state(meta)
    slot_array = np.frombuffer(meta["slot_vault"], dtype=np.int32)
    memories, slot_ids = _stored(conn, vaults, meta, manifests)
    roots = [v.root for v in vaults]
    # Read-only use: nothing appends to a fresh index's rows.
    index._memories = cast("list[Memory]", memories)
    index._defer_rows(_segments(slot_array, slot_ids, [str(r) for r in roots]))
    index._place_ranks = np.frombuffer(meta["place"], dtype=np.int64)
    # The live rows, counted without building the key map.
    index.state.terms = StoredTerms(conn, int(np.count_nonzero(slot_array >= 0)), norms)
    index._lexical = load_lexical(conn, len(slot_ids))
    index.vector_file = VectorFile(path, conn, meta["generation"])
    return index


def read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection: closing it never checkpoints or removes the WAL."""
    return sqlite3.connect(path.as_uri() + "?mode=ro", uri=True, check_same_thread=False)


def _segments(slot_vault: IntArray, slot_ids: list[str], roots: list[str]) -> list[RowSegment]:
    """Runs of consecutive live slots of one vault, as the index defers its key map."""
    if not len(slot_vault):
        return []
    cuts = np.flatnonzero(np.diff(slot_vault)) + 1
    starts = [0, *cuts.tolist()]
    ends = [*cuts.tolist(), len(slot_vault)]
    return [
        (roots[number], slot_ids[lo:hi], lo)
        for lo, hi in zip(starts, ends, strict=True)
        if (number := int(slot_vault[lo])) >= 0
    ]


def unchanged(v: Vault, manifest: files_io.Manifest | None) -> bool:
    """The vault holds exactly the files of `manifest`, with the same stamps, none racy."""
    if manifest is None or manifest.racy:
        return False
    listing = adapter_for(v.format).file_listing(Path(v.root))
    if listing.skipped or len(listing.names) != len(manifest.names):
        return False  # a new, gone or unreadable file: the catalog's way
    expected = manifest.stamps
    if listing.names != manifest.names:
        # The same number of files in another order (or other files).
        where = dict(zip(manifest.names, range(len(manifest.names)), strict=True))
        order = [where.get(rel, -1) for rel in listing.names]
        if -1 in order:
            return False
        expected = np.frombuffer(expected, dtype=np.int64).reshape(-1, 4)[order].tobytes()
    return stat_stamps(str(v.root), listing.names) == expected
