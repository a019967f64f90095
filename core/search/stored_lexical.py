"""The relevance index (`bm25`) persisted beside the TF-IDF terms, read one term at a time.

What the file holds, in the persisted index's SQLite file (`persisted`):

- ``lex``: one row per term: the slots holding it (packed gaps, as the
  TF-IDF rows: `stored_terms.encode_rows`) and the doubled weighted tf
  there.  No document frequency: `bm25.LexView` counts it over the live
  slots at query time, so dead slots stay in a row (masked by the
  ``alive`` column) until the next rebuild compacts them, and an update
  only appends the new slots to the terms their memories hold.
- meta ``lexdl2``: every slot's doubled weighted length.
- meta ``lexwords``: every word seen and its term, for typos and
  completions; only read when a query word is not a known term.

A search thus reads its own terms' rows and one array of lengths, never
the memories' bodies: the scores are those of a build over the same
memories, to the bit (the statistics are counted the same way).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

import numpy as np

from ..model import Memory
from ..store import blobs
from .aliases import IntArray
from .bm25 import ArraySource, LexicalIndex, U16Array, doc_terms
from .stored_terms import decode_counts, decode_rows, encode_counts, encode_rows, unpack_ints

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS lex (term TEXT PRIMARY KEY, rows BLOB NOT NULL, tf2 BLOB NOT NULL)"
)
DL2_KEY = "lexdl2"
WORDS_KEY = "lexwords"


def encode_words(surface: dict[str, str]) -> bytes:
    """Word -> term pairs, one ``word<TAB>term`` line each, sorted by word, zstd-packed."""
    text = "\n".join(f"{w}\t{surface[w]}" for w in sorted(surface))
    return blobs.pack(text.encode("utf-8", "surrogateescape"))


def decode_words(blob: bytes) -> dict[str, str]:
    text = blobs.unpack(blob).decode("utf-8", "surrogateescape")
    if not text:
        return {}
    out: dict[str, str] = {}
    for line in text.split("\n"):
        word, _, term = line.partition("\t")
        out[word] = term
    return out


class StoredSource:
    """A `bm25.PostingSource` reading the ``lex`` table of an open connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def lookup(self, term: str) -> tuple[IntArray, U16Array] | None:
        row = self._conn.execute("SELECT rows, tf2 FROM lex WHERE term = ?", (term,)).fetchone()
        if row is None:
            return None
        rows = decode_rows(row[0])
        return rows, decode_counts(row[1], len(rows)).astype(np.uint16)

    def words(self) -> dict[str, str]:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (WORDS_KEY,)).fetchone()
        return {} if row is None else decode_words(row[0])


def load_lexical(conn: sqlite3.Connection, n_slots: int) -> LexicalIndex:
    """The persisted relevance index of `n_slots` slots (ValueError when damaged)."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (DL2_KEY,)).fetchone()
    if row is None:
        raise ValueError("the search index has no relevance lengths")
    dl2 = decode_counts(row[0], n_slots).astype(np.int64)
    return LexicalIndex(StoredSource(conn), dl2)


def save_lexical(conn: sqlite3.Connection, lex: LexicalIndex, n_slots: int) -> None:
    """Write a fresh build's relevance index (inside the caller's transaction)."""
    source = lex.source
    if not isinstance(source, ArraySource) or lex.delta:
        raise ValueError("only a fresh build's relevance index is saved whole")
    conn.executemany(
        "INSERT INTO lex (term, rows, tf2) VALUES (?, ?, ?)",
        (
            (t, encode_rows(rows), encode_counts(tf2.astype(np.int64)))
            for t, rows, tf2 in source.items()
        ),
    )
    dl2 = np.zeros(n_slots, dtype=np.int64)
    have = lex.dl2_array()[:n_slots]
    dl2[: len(have)] = have
    _put_meta(conn, {DL2_KEY: encode_counts(dl2), WORDS_KEY: encode_words(source.surface)})


def update_lexical(
    conn: sqlite3.Connection, new: Iterable[tuple[int, Memory]], n_slots: int
) -> None:
    """Append new slots' memories (inside the caller's transaction).

    Only the terms the new memories hold are rewritten; dead slots stay in
    their rows, masked at query time.
    """
    added: dict[str, tuple[list[int], list[int]]] = {}
    words: dict[str, str] = {}
    lengths: dict[int, int] = {}
    for slot, m in new:
        doc = doc_terms(m)
        lengths[slot] = doc.length2
        words.update(doc.surface)
        for t, weighted in doc.tf2.items():
            slots, tfs = added.setdefault(t, ([], []))
            slots.append(slot)
            tfs.append(weighted)
    writes: list[tuple[str, bytes, bytes]] = []
    for term in sorted(added):
        slots, tfs = added[term]
        old = conn.execute("SELECT rows, tf2 FROM lex WHERE term = ?", (term,)).fetchone()
        rows: IntArray = np.asarray(slots, dtype=np.int64)
        tf: IntArray = np.asarray(tfs, dtype=np.int64)
        if old is not None:
            old_rows = decode_rows(old[0]).astype(np.int64)
            old_tf = decode_counts(old[1], len(old_rows)).astype(np.int64)
            rows, tf = np.concatenate([old_rows, rows]), np.concatenate([old_tf, tf])
        writes.append((term, encode_rows(rows), encode_counts(tf)))
    conn.executemany("INSERT OR REPLACE INTO lex (term, rows, tf2) VALUES (?, ?, ?)", writes)
    sql = "SELECT key, value FROM meta WHERE key IN (?, ?)"
    meta = dict(conn.execute(sql, (DL2_KEY, WORDS_KEY)))
    old_dl2 = meta.get(DL2_KEY)
    if old_dl2 is None:
        raise ValueError("the search index has no relevance lengths")
    dl2_old = unpack_ints(bytes(old_dl2)).astype(np.int64)
    dl2 = np.zeros(n_slots, dtype=np.int64)
    dl2[: min(len(dl2_old), n_slots)] = dl2_old[:n_slots]
    for slot, length2 in lengths.items():
        dl2[slot] = length2
    surface = decode_words(bytes(meta[WORDS_KEY])) if WORDS_KEY in meta else {}
    surface.update(words)
    _put_meta(conn, {DL2_KEY: encode_counts(dl2), WORDS_KEY: encode_words(surface)})


def _put_meta(conn: sqlite3.Connection, items: dict[str, bytes]) -> None:
    conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", list(items.items()))


__all__ = [
    "DL2_KEY",
    "SCHEMA",
    "WORDS_KEY",
    "StoredSource",
    "decode_words",
    "encode_words",
    "load_lexical",
    "save_lexical",
    "update_lexical",
]
