"""Term postings read from a persisted index one term at a time.

A persisted index (`core.search.persisted`) keeps, per term, its document
frequency, the rows holding it and the raw counts there, plus every row's
l2 norm.  A query needs only its own terms: `StoredTerms` loads a term's row
when the query first names it and computes its weights there, as every
index makes them (`weights.idf_of`, `weights.term_weights`), so each
weight equals a fresh build's bit for bit:
``(1 + ln tf) · idf / norm``.
"""

from __future__ import annotations

import sqlite3
from collections import Counter

import numpy as np

from ..store import blobs
from .aliases import FloatArray, IntArray
from .postings import TermPostings, Vector
from .weights import idf_of, term_weights

#: Terms fetched per SQL statement (SQLite's default limit on variables is 999+).
_CHUNK = 500
#: The first byte of a packed array names its item type (the narrowest that fits).
_WIDTHS: dict[int, type[np.generic]] = {1: np.uint8, 2: np.uint16, 4: np.int32}


def _pack(values: IntArray) -> bytes:
    """Non-negative ints as the narrowest of uint8 / uint16 / int32, zstd-packed.

    Narrow integers first, then zstd (`core.store.blobs`): at 100k memories
    the postings take 14.0 MB, as zlib at level 6 made them (13.9 MB), in
    0.23 s where zlib took 3.0 s, and unpack 3x faster.
    """
    top = int(values.max()) if len(values) else 0
    width = 1 if top < 0x100 else 2 if top < 0x10000 else 4
    return bytes([width]) + blobs.pack(values.astype(_WIDTHS[width]).tobytes())


def _unpack(blob: bytes) -> IntArray:
    dtype = _WIDTHS.get(blob[0]) if blob else None
    if dtype is None:
        raise ValueError("a term row of the search index is damaged")
    return np.frombuffer(blobs.unpack(blob[1:]), dtype=dtype).astype(np.int32)


def unpack_ints(blob: bytes) -> IntArray:
    """A packed array of non-negative ints whose length the caller does not know."""
    return _unpack(blob)


def encode_rows(rows: IntArray) -> bytes:
    """A term's rows (ascending) as packed gaps: mostly small numbers, most of them
    one byte (the postings are most of the file)."""
    return _pack(np.diff(rows.astype(np.int64), prepend=0).astype(np.int64))


def decode_rows(blob: bytes) -> IntArray:
    return np.cumsum(_unpack(blob), dtype=np.int64).astype(np.int32)


def encode_counts(tf: IntArray) -> bytes:
    """A term's raw counts, packed (most are 1 or 2: one byte each)."""
    return _pack(tf)


def decode_counts(blob: bytes, df: int) -> IntArray:
    """A term's raw counts (`df` of them, else the row is damaged)."""
    counts = _unpack(blob)
    if len(counts) != df:
        raise ValueError("a term row of the search index is damaged")
    return counts


class StoredTerms(TermPostings):
    """`TermPostings` whose terms are loaded from the ``terms`` table as queries name them.

    Only searching is supported (no `add_row`): the persisted index is
    updated by `core.search.persisted`, which then makes a new one.  Term
    ids are given in load order; the vocabulary holds the loaded terms only,
    which are all a query looks up (`prepare` weighs every query term first).
    """

    def __init__(self, conn: sqlite3.Connection, n_docs: int, norms: FloatArray) -> None:
        super().__init__()
        self._conn = conn
        self._norms = norms
        self.n_fit_docs = n_docs
        # Rows beyond the base are never asked (every row is in `_rows`).
        self.n_base_rows = len(norms)
        self._rows: list[IntArray] = []
        self._weights: list[FloatArray] = []
        self._absent: set[str] = set()

    def _load(self, wanted: list[str]) -> None:
        """Load the terms not loaded or known absent yet (one query per chunk)."""
        todo = [t for t in dict.fromkeys(wanted) if t not in self.vocab and t not in self._absent]
        found: dict[str, tuple[int, bytes, bytes]] = {}
        for i in range(0, len(todo), _CHUNK):
            chunk = todo[i : i + _CHUNK]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT term, df, rows, counts FROM terms WHERE term IN ({marks})"
            for term, df, rows, counts in self._conn.execute(sql, chunk):
                found[term] = (df, rows, counts)
        self._absent.update(t for t in todo if t not in found)
        self._add(found)

    def _add(self, found: dict[str, tuple[int, bytes, bytes]]) -> None:
        if not found:
            return
        names = sorted(found)
        dfs = np.array([found[t][0] for t in names], dtype=np.int64)
        idf = idf_of(dfs, self.n_fit_docs)
        for j, term in enumerate(names):
            df, rows_blob, counts_blob = found[term]
            rows = decode_rows(rows_blob)
            weights = term_weights(decode_counts(counts_blob, df), float(idf[j]), rows, self._norms)
            self.vocab[term] = len(self.terms)
            self.terms.append(term)
            self.idf.append(float(idf[j]))
            self._rows.append(rows)
            self._weights.append(weights)

    def weigh(self, counts: Counter[str], *, extend: bool) -> Vector:
        if extend:
            raise ValueError("a persisted index is updated by core.search.persisted")
        self._load(list(counts))
        return super().weigh(counts, extend=False)

    def postings(self, term_id: int) -> tuple[IntArray, FloatArray]:
        return self._rows[term_id], self._weights[term_id]

    def term_rows(self, term: str) -> IntArray:
        self._load([term])
        return super().term_rows(term)

    def doc_weight(self, row: int, term_id: int) -> float:
        rows = self._rows[term_id]
        i = int(np.searchsorted(rows, row))
        if i < len(rows) and int(rows[i]) == row:
            return float(self._weights[term_id][i])
        return 0.0

    def page_weights(self, rows: list[int], term_ids: list[int]) -> dict[int, list[float]]:
        return {r: [self.doc_weight(r, tid) for tid in term_ids] for r in rows}

    def _prefixed(self, prefix: str, limit: int | None) -> list[str]:
        """Terms starting with `prefix`, in sorted order (at most `limit`)."""
        sql = "SELECT term FROM terms WHERE term >= ? ORDER BY term"
        found: list[str] = []
        for (term,) in self._conn.execute(sql, (prefix,)):
            if not term.startswith(prefix):
                break
            found.append(term)
            if limit is not None and len(found) >= limit:
                break
        return found

    def prefix_terms(self, prefix: str, limit: int) -> list[str]:
        # As the base: stop once more than 50 × limit are found, shortest first.
        found = self._prefixed(prefix, 50 * limit + 1)
        found.sort(key=lambda t: (len(t), t))
        return found[:limit]

    def prefix_rows(self, prefix: str) -> IntArray:
        terms = self._prefixed(prefix, None)
        self._load(terms)
        parts = [self._rows[self.vocab[t]] for t in terms]
        if not parts:
            return np.zeros(0, dtype=np.int64)
        return np.concatenate(parts)
