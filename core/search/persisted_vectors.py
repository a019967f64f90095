"""Meaning vectors of a persisted index's slots, kept in its file beside the terms.

Why: a search with meaning-based matching on (`embeddings`) needs a vector
for every row; computing them means reading every memory's text (every
file of the vault), far too slow for each CLI call at 100k memories.  So
the first semantic search of an index saves its vectors here and later
ones read them back: 516 bytes per slot (the int16 codes and float32
scale every `embeddings.SemanticIndex` keeps: `packed_vectors`, so a vector
read back scores exactly as one just computed), in chunks of `CHUNK` slots.
A file an older memlens wrote holds float16 chunks (no `FORMAT_KEY`): they
are packed once as read, and the next save writes them all again packed.

Slots are only ever appended until a rebuild (which drops the table), so
the vectors of slots below ``vecslots`` stay right across updates; the
memories of newer slots are embedded at the next semantic search, and
saved.  A save happens only if the file is still the generation the
index was loaded from; a failure only means computing them again.
"""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..store.db import connect
from .embeddings import MODEL
from .packed_vectors import DIM, PackedVectors

CHUNK = 1024
SCHEMA = "CREATE TABLE IF NOT EXISTS vecs (chunk INTEGER PRIMARY KEY, data BLOB NOT NULL)"
MODEL_KEY = "vecmodel"
SLOTS_KEY = "vecslots"
#: How the chunks are written; absent: float16 rows (memlens before 2026-11-28).
FORMAT_KEY = "vecformat"
PACKED = b"int16+scale"


@dataclass(slots=True)
class VectorFile:
    """Where an index's vectors are read (its open connection) and saved (a new one)."""

    path: Path
    conn: sqlite3.Connection
    generation: bytes
    #: The chunks read were float16 (an older file): the next save writes every slot.
    repack: bool = False
    #: A save was committed (`close` folds the WAL back).
    wrote: bool = False

    def load(self) -> PackedVectors | None:
        """The saved vectors of slots ``0..vecslots-1``, or None (none saved, another model)."""
        try:
            meta = dict(
                self.conn.execute(
                    "SELECT key, value FROM meta WHERE key IN (?, ?, ?)",
                    (MODEL_KEY, SLOTS_KEY, FORMAT_KEY),
                )
            )
            if bytes(meta.get(MODEL_KEY, b"")) != MODEL.encode():
                return None
            slots = int(bytes(meta[SLOTS_KEY]))
            chunks = self.conn.execute("SELECT chunk, data FROM vecs ORDER BY chunk").fetchall()
        except (sqlite3.Error, KeyError, ValueError):
            return None
        packed = bytes(meta.get(FORMAT_KEY, b"")) == PACKED
        out = PackedVectors.zeros(slots)
        covered = 0
        for chunk, data in chunks:
            lo = int(chunk) * CHUNK
            if lo >= slots:
                break
            block = _block(bytes(data), packed)
            if lo != covered or block is None:
                return None  # a chunk missing or damaged: computed again
            n = min(len(block), slots - lo)
            out.codes[lo : lo + n] = block.codes[:n]
            out.scales[lo : lo + n] = block.scales[:n]
            covered = lo + n
            if n < min(CHUNK, slots - lo):
                return None
        if covered != slots:
            return None
        self.repack = not packed
        return out

    def save(self, vectors: PackedVectors, first: int) -> None:
        """Save slots ``first..len(vectors)-1`` (the earlier ones are saved already).

        After reading float16 chunks, every slot is saved again, packed.
        """
        if self.repack:
            first = 0
        if len(vectors) <= first:
            return
        with contextlib.suppress(sqlite3.Error, OSError):
            conn = connect(self.path)
            try:
                if _write(conn, vectors, first, self.generation):
                    self.repack = False
                    self.wrote = True
            finally:
                conn.close()

    def close(self) -> None:
        """Close the index's connection; after a save, fold the WAL back into the file.

        The vectors a first semantic search saves (51 MB at 100k) pass through
        the WAL, and the index's snapshot keeps them there while it is open; a
        read-only connection never folds it back when it closes.
        """
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()
        if self.wrote:
            with contextlib.suppress(sqlite3.Error, OSError):
                conn = connect(self.path)
                try:
                    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                finally:
                    conn.close()


def _block(data: bytes, packed: bool) -> PackedVectors | None:
    """One chunk's rows, packed; None if its length is wrong."""
    if packed:
        return PackedVectors.from_bytes(data)
    if len(data) % (DIM * 2):
        return None
    return PackedVectors.pack(np.frombuffer(data, dtype=np.float16).reshape(-1, DIM))


def _write(conn: sqlite3.Connection, vectors: PackedVectors, first: int, generation: bytes) -> bool:
    """Save the slots from `first` in one transaction; False if the file moved on meanwhile."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        now = dict(
            conn.execute(
                "SELECT key, value FROM meta WHERE key IN (?, ?, ?, ?)",
                ("generation", MODEL_KEY, SLOTS_KEY, FORMAT_KEY),
            )
        )
        same = bytes(now.get(MODEL_KEY, b"")) == MODEL.encode()
        same = same and bytes(now.get(FORMAT_KEY, b"")) == PACKED
        saved = int(bytes(now[SLOTS_KEY])) if same else 0
        # From 0: all of them again (none saved, or unreadable); else appended.
        if bytes(now.get("generation", b"")) != generation or (first and saved != first):
            conn.execute("ROLLBACK")  # another process moved the file on meanwhile
            return False
        rows = []
        for chunk in range(first // CHUNK, (len(vectors) + CHUNK - 1) // CHUNK):
            lo = chunk * CHUNK
            rows.append((chunk, vectors.to_bytes(lo, min(len(vectors), lo + CHUNK))))
        conn.executemany("INSERT OR REPLACE INTO vecs (chunk, data) VALUES (?, ?)", rows)
        conn.executemany(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
            [
                (MODEL_KEY, MODEL.encode()),
                (FORMAT_KEY, PACKED),
                (SLOTS_KEY, str(len(vectors)).encode()),
            ],
        )
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return True


__all__ = ["CHUNK", "FORMAT_KEY", "MODEL_KEY", "PACKED", "SCHEMA", "SLOTS_KEY", "VectorFile"]
