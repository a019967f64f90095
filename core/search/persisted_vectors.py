"""Meaning vectors of a persisted index's slots, kept in its file beside the terms.

Why: a search with meaning-based matching on (`embeddings`) needs a vector
for every row; computing them means reading every memory's text (every
file of the vault), far too slow for each CLI call at 100k memories.  So
the first semantic search of an index saves its vectors here and later
ones read them back: 512 bytes per slot (float16, the precision every
`embeddings.SemanticIndex` keeps, so a vector read back scores exactly as
one just computed), in chunks of `CHUNK` slots.

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
from .embeddings import DIM, MODEL, HalfVectors

CHUNK = 1024
SCHEMA = "CREATE TABLE IF NOT EXISTS vecs (chunk INTEGER PRIMARY KEY, data BLOB NOT NULL)"
MODEL_KEY = "vecmodel"
SLOTS_KEY = "vecslots"


@dataclass(slots=True)
class VectorFile:
    """Where an index's vectors are read (its open connection) and saved (a new one)."""

    path: Path
    conn: sqlite3.Connection
    generation: bytes

    def load(self) -> HalfVectors | None:
        """The saved vectors of slots ``0..vecslots-1``, or None (none saved, another model)."""
        try:
            meta = dict(
                self.conn.execute(
                    "SELECT key, value FROM meta WHERE key IN (?, ?)", (MODEL_KEY, SLOTS_KEY)
                )
            )
            if bytes(meta.get(MODEL_KEY, b"")) != MODEL.encode():
                return None
            slots = int(bytes(meta[SLOTS_KEY]))
            chunks = self.conn.execute("SELECT chunk, data FROM vecs ORDER BY chunk").fetchall()
        except (sqlite3.Error, KeyError, ValueError):
            return None
        out = np.zeros((slots, DIM), dtype=np.float16)
        covered = 0
        for chunk, data in chunks:
            lo = int(chunk) * CHUNK
            if lo >= slots:
                break
            block = np.frombuffer(data, dtype=np.float16)
            if lo != covered or len(block) % DIM:
                return None  # a chunk missing or damaged: computed again
            block = block.reshape(-1, DIM)[: slots - lo]
            out[lo : lo + len(block)] = block
            covered = lo + len(block)
            if len(block) < min(CHUNK, slots - lo):
                return None
        return out if covered == slots else None

    def save(self, vectors: HalfVectors, first: int) -> None:
        """Save slots ``first..len(vectors)-1`` (the earlier ones are saved already)."""
        if len(vectors) <= first:
            return
        with contextlib.suppress(sqlite3.Error, OSError):
            conn = connect(self.path)
            try:
                _write(conn, vectors, first, self.generation)
            finally:
                conn.close()


def _write(conn: sqlite3.Connection, vectors: HalfVectors, first: int, generation: bytes) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        now = dict(
            conn.execute(
                "SELECT key, value FROM meta WHERE key IN (?, ?, ?)",
                ("generation", MODEL_KEY, SLOTS_KEY),
            )
        )
        saved = (
            int(bytes(now[SLOTS_KEY])) if bytes(now.get(MODEL_KEY, b"")) == MODEL.encode() else 0
        )
        # From 0: all of them again (none saved, or unreadable); else appended.
        if bytes(now.get("generation", b"")) != generation or (first and saved != first):
            conn.execute("ROLLBACK")  # another process moved the file on meanwhile
            return
        rows = []
        for chunk in range(first // CHUNK, (len(vectors) + CHUNK - 1) // CHUNK):
            block = vectors[chunk * CHUNK : (chunk + 1) * CHUNK]
            rows.append((chunk, np.ascontiguousarray(block, dtype=np.float16).tobytes()))
        conn.executemany("INSERT OR REPLACE INTO vecs (chunk, data) VALUES (?, ?)", rows)
        conn.executemany(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
            [(MODEL_KEY, MODEL.encode()), (SLOTS_KEY, str(len(vectors)).encode())],
        )
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


__all__ = ["CHUNK", "MODEL_KEY", "SCHEMA", "SLOTS_KEY", "VectorFile"]
