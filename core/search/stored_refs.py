"""A persisted index's memory kept as a reference to its vault store's row, not a copy.

Why: for a file that holds one memory (every cognitive-memory, Project
Ocean and observation/v1 memory), the vault's store row already holds that
memory as linked, pickled without its body (`core.store.codec`).  The
index used to keep a second compressed copy per memory (27 MB of 82 at
100k memories).  Now such a memory's row in the index's ``memories`` table
is `REF`, an 8-byte hash of the store row's raw pickle, and the row's id
(`core.store.db.row_id` of the path: 17 bytes, where the path itself took
~85 at 100k memories).

A reference is written only when the store row holds exactly what the
index would have copied: the catalog's FileScan of the file, with this one
memory, pickles to the same bytes as the row (checked by hash when the
index is saved).  When read back (`core.search.stored_memories`), the row
must still hash the same, else `StaleRow`: the caller searches through the
catalog instead and has the references checked again (`StoreRefs`), so a
row rewritten meanwhile (another process relinking the vault) costs one
slow search, never a wrong memory.  Files with several memories (Dream
Cycle, experience records) keep copies: decoding their whole row for one
hit would cost more than it saves.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from ..model import Memory
from ..scan.stored import code_fingerprint
from ..store.codec import pickle_scan
from ..store.db import row_id
from ..store.reader import StoreReader

if TYPE_CHECKING:
    from ..scan.vault import Catalog

#: First byte of a reference (a zstd frame, a copy, never starts with it).
REF = b"@"
HASH_BYTES = 8


class StaleRow(Exception):
    """A referenced store row is gone or changed: search through the catalog instead."""


def row_hash(raw: bytes) -> bytes:
    """What a reference checks a store row's raw pickle by."""
    return hashlib.sha256(raw).digest()[:HASH_BYTES]


def parse_ref(blob: bytes) -> tuple[bytes, int] | None:
    """(hash, store row id) of a reference; None for a copy."""
    if blob[:1] != REF or len(blob) != 1 + HASH_BYTES + 8:
        return None
    rowid = int.from_bytes(blob[1 + HASH_BYTES :], "big", signed=True)
    return bytes(blob[1 : 1 + HASH_BYTES]), rowid


def open_reader(root_format: tuple[str, str]) -> StoreReader | None:
    """The read-only store of a vault (root, format), if this code wrote it."""
    from pathlib import Path

    root, fmt = root_format
    return StoreReader.open(Path(root), fmt, code_fingerprint(fmt))


class StoreRefs:
    """Which memories of a catalog may be kept as references, and the references."""

    def __init__(self, catalog: Catalog, only: dict[str, set[str]] | None = None) -> None:
        """Hash the store rows of every vault (or, per vault root, of `only` those paths)."""
        self._vaults = {str(v.root): v for v in catalog.vaults}
        self._hashes: dict[str, dict[str, bytes]] = {}
        #: Per vault, the object ids of the memories its file scans hold.
        self._scanned: dict[str, set[int]] = {}
        for key, v in self._vaults.items():
            wanted = None if only is None else only.get(key, set())
            if wanted is not None and not wanted:
                continue
            reader = open_reader((key, v.format))
            if reader is None:
                continue
            try:
                if wanted is None:
                    self._hashes[key] = {rel: row_hash(raw) for rel, raw in reader.raws()}
                else:
                    found = ((rel, reader.raw(rel)) for rel in wanted)
                    self._hashes[key] = {rel: row_hash(raw) for rel, raw in found if raw}
            finally:
                reader.close()

    def as_scanned(self, m: Memory) -> bool:
        """`m` is the very memory its file's scan made: linking did not replace it.

        Only such a memory's body is what its file alone gives; linking makes
        new memories where a vault-wide file changes one (an erasure, an edit).
        """
        key = str(m.vault_root)
        seen = self._scanned.get(key)
        if seen is None:
            v = self._vaults.get(key)
            scans = v.scans.values() if v is not None else ()
            seen = self._scanned[key] = {id(x) for fs in scans for x in fs.memories}
        return id(m) in seen

    def ref(self, m: Memory) -> bytes | None:
        """The reference for `m` if its store row holds exactly it, else None (keep a copy)."""
        key = str(m.vault_root)
        hashes = self._hashes.get(key)
        if hashes is None:
            return None
        expected = hashes.get(m.path)
        v = self._vaults[key]
        fs = v.scans.get(m.path)
        if expected is None or fs is None or len(fs.memories) != 1 or fs.memories[0] is not m:
            return None
        if row_hash(pickle_scan(fs, v.root)) != expected:
            return None
        rowid = row_id(m.path.encode("utf-8", "surrogateescape"))
        return REF + expected + rowid.to_bytes(8, "big", signed=True)


__all__ = ["HASH_BYTES", "REF", "StaleRow", "StoreRefs", "open_reader", "parse_ref", "row_hash"]
