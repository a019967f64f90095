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
from ..store.statwalk import StatJob
from . import persisted_files as files_io
from .persisted_meta import HEAD_KEYS, Meta, read_meta
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


class Checked:
    """The index's meta and manifests, its vaults' stat walks maybe still running.

    `confirm` finishes them: True when no file changed (then the folders the
    listings looked at are kept for next time).  A search may load the index
    and run its query before (`fresh.serve`); its answer stands only once
    confirmed.  `close` lets go of walks whose answer is not wanted.
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        vaults: list[Vault],
        meta: Meta,
        manifests: list[files_io.Manifest | None],
        pending: list[tuple[int, files_io.Manifest, _Pending]],
    ) -> None:
        self.conn = conn
        #: The index file (`begin` sets it).
        self.path: Path | None = None
        self.vaults = vaults
        self.meta = meta
        self.manifests = manifests
        self._pending = pending
        self._answer: bool | None = None
        self._full_meta = False

    def load_meta(self) -> Meta:
        """Every meta item a search reads (`begin_check` read the deciding few only).

        In the snapshot the first read began: the same index as checked.
        """
        if not self._full_meta:
            self.meta = read_meta(self.conn, for_update=False)
            self._full_meta = True
        return self.meta

    def confirm(self) -> bool:
        if self._answer is None:
            listed: list[tuple[int, files_io.Manifest, dict[str, FolderStamp]]] = []
            same = True
            for number, manifest, pending in self._pending:
                if not same:  # one vault changed: the others' answers are not needed
                    pending.close()
                    continue
                got = pending.finish()
                if got is None:
                    same = False
                elif got:
                    listed.append((number, manifest, got))
            if same and listed:
                _keep_folders(self.conn, listed)
            self._pending = []
            self._answer = same
        return self._answer

    def close(self) -> None:
        for _number, _manifest, pending in self._pending:
            pending.close()
        self._pending = []


def begin_check(
    conn: sqlite3.Connection, vaults: list[Vault], as_of: date | None, share: float = 0.5
) -> Checked | None:
    """`checked_meta` with the vaults' stat walks left running (`Checked.confirm` ends them).

    `share`: of each big vault's files, the part a forked child stats meanwhile.
    """
    # One snapshot for the meta and every term or memory read after it.
    conn.execute("BEGIN")
    # The few keys that decide first; the rest once the stat walk runs (`load_meta`).
    meta = read_meta(conn, for_update=False, keys=HEAD_KEYS)
    if meta.get("code") != persisted_code(vaults).encode():
        return None
    if as_of is not None and meta.get("as_of") != as_of.isoformat().encode():
        return None  # decay for a new date needs every memory: the catalog's way
    saved = json.loads(meta["vaults"])
    if saved["roots"] != [str(v.root) for v in vaults]:
        return None
    manifests = [files_io.read(conn, number) for number in range(len(vaults))]
    pending: list[tuple[int, files_io.Manifest, _Pending]] = []
    try:
        for number, (v, manifest) in enumerate(zip(vaults, manifests, strict=True)):
            kept = None if manifest is None else files_io.read_folders(conn, number, manifest)
            got = _start_unchanged(v, manifest, kept, share)
            if got is None or manifest is None:
                for *_rest, started in pending:
                    started.close()
                if got is not None:
                    got.close()
                return None
            pending.append((number, manifest, got))
    except BaseException:
        for *_rest, started in pending:
            started.close()
        raise
    return Checked(conn, vaults, meta, manifests, pending)


def begin(vaults: list[Vault], as_of: date, share: float = 0.5) -> Checked | None:
    """The kept index of these vaults, opened and checked, its stat walks left running.

    None when there is none to trust, or it is another code's, date's or
    vaults', or a file changed already (its connection closed then).
    """
    kept = open_kept(vaults)
    if kept is None:
        return None
    path, conn = kept
    try:
        checked = begin_check(conn, vaults, as_of, share)
    except (sqlite3.Error, OSError, ValueError, KeyError, StoreCorrupt):
        checked = None
    if checked is None:
        conn.close()
        return None
    checked.path = path
    return checked


def checked_meta(
    conn: sqlite3.Connection, vaults: list[Vault], as_of: date | None
) -> tuple[Meta, list[files_io.Manifest | None]] | None:
    """The index's meta and manifests when it is this code's, for these vaults, none changed.

    `as_of`: the date its decay columns must be for (None: any, for a caller
    that reads memories only).
    """
    checked = begin_check(conn, vaults, as_of)
    if checked is None or not checked.confirm():
        return None
    return checked.load_meta(), checked.manifests


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


class _Pending:
    """One vault's stat walk, and what `unchanged` answers if it matches."""

    def __init__(
        self, job: StatJob | None, expected: bytes, keep: dict[str, FolderStamp] | Literal[False]
    ) -> None:
        self.job = job
        self.expected = expected
        self.keep = keep

    def finish(self) -> dict[str, FolderStamp] | Literal[False] | None:
        if self.job is None:
            return self.keep
        same = self.job.result() == self.expected
        self.job = None
        return self.keep if same else None

    def close(self) -> None:
        if self.job is not None:
            self.job.close()
            self.job = None


def _start_unchanged(
    v: Vault,
    manifest: files_io.Manifest | None,
    folders: dict[str, FolderStamp] | None,
    share: float,
) -> _Pending | None:
    """`unchanged` up to its stat walk, which is left running (None: changed already)."""
    if manifest is None or manifest.racy:
        return None
    root = str(v.root)
    if folders is not None and unchanged_folders(root, folders):
        return _Pending(StatJob(root, manifest.names, share), manifest.stamps, False)
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
    keep: dict[str, FolderStamp] | Literal[False] = False
    if listing.folders is not None and listing.names == manifest.names:
        keep = listing.folders
    return _Pending(StatJob(root, listing.names, share), expected, keep)


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
    pending = _start_unchanged(v, manifest, folders, 0.5)
    return None if pending is None else pending.finish()


__all__ = [
    "Checked",
    "begin",
    "begin_check",
    "checked_meta",
    "fresh_memory",
    "open_kept",
    "read_only",
    "stored_memories",
    "unchanged",
]
