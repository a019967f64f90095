"""Is the persisted search index still its vaults' (no file changed)? And one memory from it.

`fresh` serves a whole search from the index when this holds; `memlens
show` and `memlens history` need one memory only (`fresh_memory`), so this
module imports neither numpy nor the index code: at a few hundred files
that import is most of the answer's time.
"""

from __future__ import annotations

import json
import sqlite3
from array import array
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

from ..formats import adapter_for
from ..formats.files import recorded_listing
from ..formats.listed_folders import FolderStamp, unchanged_folders
from ..model import Memory
from ..store.db import StoreCorrupt, untrusted
from ..store.statwalk import stat_stamps
from . import persisted_files as files_io
from .persisted_meta import Meta, read_meta
from .persisted_name import index_path, persisted_code
from .stored_memories import StoredMemories
from .stored_refs import StaleRow

if TYPE_CHECKING:
    from datetime import date

    from ..scan.vault import Vault


def read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection: closing it never checkpoints or removes the WAL."""
    return sqlite3.connect(path.as_uri() + "?mode=ro", uri=True, check_same_thread=False)


def open_kept(vaults: list[Vault]) -> tuple[Path, sqlite3.Connection] | None:
    """The kept index file of these vaults, opened read-only; None when there is none to trust."""
    if not vaults:
        return None
    path = index_path(vaults)
    if not path.is_file() or untrusted(path) is not None:
        return None
    return path, read_only(path)


def checked_meta(
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
    listed: list[tuple[int, files_io.Manifest, dict[str, FolderStamp]]] = []
    for number, (v, manifest) in enumerate(zip(vaults, manifests, strict=True)):
        kept = None if manifest is None else files_io.read_folders(conn, number, manifest)
        got = unchanged(v, manifest, kept)
        if got is None:
            return None
        if got and manifest is not None:
            listed.append((number, manifest, got))
    if listed:
        _keep_folders(conn, listed)
    return meta, manifests


def _keep_folders(
    conn: sqlite3.Connection, listed: list[tuple[int, files_io.Manifest, dict[str, FolderStamp]]]
) -> None:
    """Keep the folders these vaults' listings looked at, so the next search need not list.

    Through a connection of its own (this one reads a snapshot, read-only),
    waiting for no one: a busy or read-only cache only means the next search
    lists again.
    """
    path = conn.execute("PRAGMA database_list").fetchone()[2]
    try:
        writer = sqlite3.connect(path, timeout=0, isolation_level=None)
    except sqlite3.Error:
        return
    try:
        writer.execute("BEGIN IMMEDIATE")
        for number, manifest, folders in listed:
            files_io.write_folders(writer, number, manifest.digest, folders)
        writer.execute("COMMIT")
    except sqlite3.Error:
        pass
    finally:
        writer.close()


def stored_memories(
    conn: sqlite3.Connection,
    vaults: list[Vault],
    meta: Meta,
    manifests: list[files_io.Manifest | None],
) -> tuple[StoredMemories, list[str]]:
    """Every slot's memory (decoded on demand) and id ("" for none)."""
    slots = array("i")  # int32, as the index writes it (numpy's native order)
    slots.frombytes(meta["slot_vault"])
    slot_vault: list[int] = slots.tolist()
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
    kept = open_kept(vaults)
    if kept is None:
        return None
    conn = kept[1]
    memories: StoredMemories | None = None
    try:
        got = checked_meta(conn, vaults, None)
        if got is None:
            return None
        memories, slot_ids = stored_memories(conn, vaults, *got)
        slots = [s for s, i in enumerate(slot_ids) if i == memory_id]
        live = [s for s in slots if memories.live(s)]
        if len(live) != 1 or not memories.body_intact(live[0]):
            return None
        return memories[live[0]]
    except (sqlite3.Error, OSError, ValueError, KeyError, StoreCorrupt, StaleRow):
        return None
    finally:
        if memories is not None:
            memories.close()
        conn.close()


def unchanged(
    v: Vault, manifest: files_io.Manifest | None, folders: dict[str, FolderStamp] | None = None
) -> dict[str, FolderStamp] | Literal[False] | None:
    """Does the vault hold exactly the files of `manifest`, with the same stamps, none racy?

    None: no.  Otherwise what to keep for next time: the folders its listing
    looked at, when the vault was listed and that listing may be trusted
    (`core.formats.listed_folders`), else False.  `folders`: the ones kept
    after the last listing for this manifest; while each holds its stamp,
    the vault is not listed again, only its files stat'ed.
    """
    if manifest is None or manifest.racy:
        return None
    root = str(v.root)
    if folders is not None and unchanged_folders(root, folders):
        same = stat_stamps(root, manifest.names) == manifest.stamps
        return False if same else None
    listing = recorded_listing(adapter_for(v.format).file_listing, Path(v.root))
    if listing.skipped or len(listing.names) != len(manifest.names):
        return None  # a new, gone or unreadable file: the catalog's way
    expected = manifest.stamps
    if listing.names != manifest.names:
        # The same number of files in another order (or other files).
        where = dict(zip(manifest.names, range(len(manifest.names)), strict=True))
        order = [where.get(rel, -1) for rel in listing.names]
        if -1 in order:
            return None
        import numpy as np  # here: only a reordered listing needs it

        expected = np.frombuffer(expected, dtype=np.int64).reshape(-1, 4)[order].tobytes()
    if stat_stamps(root, listing.names) != expected:
        return None
    if listing.folders is not None and listing.names == manifest.names:
        return listing.folders
    return False


__all__ = [
    "checked_meta",
    "fresh_memory",
    "open_kept",
    "read_only",
    "stored_memories",
    "unchanged",
]
