"""Meaning-based matching, offline: memories and queries as vectors of a model shipped on PyPI.

"database storage running out" shares no word with "Postgres disk at 71%";
a sentence embedding puts them near each other.  The model is WordLlama's
``l2_supercat`` at 256 dimensions: its weights (16 MB) and tokenizer config
ship inside the `wordllama` wheel, so it loads with no model hub and no
network (``disable_download=True``, the package folder as its cache, where
its tokenizer config already sits).  Measured on the 2-core machine: import
1.5 s, load 0.55 s, about 860 one-kilobyte memories a second, 130 MB RSS.
That does not fit the start-up and memory budgets by default, so it is the
optional ``semantic`` extra (``make demo`` installs it): without it, or with
``MEMLENS_SEMANTIC=0``, search is lexical only.

Vectors are kept per memory text (sha256 of what was embedded) in one
SQLite file in the cache folder, so a memory is embedded once, whichever
index or process asks again, and a changed memory only its new text.

The relevance ranking fuses the two lists by reciprocal rank fusion
(Cormack, Clarke and Büttcher, SIGIR 2009): ``Σ 1 / (RRF_K + rank)`` over
the lexical ranking (BM25F, every matching row) and the semantic one (the
SEMANTIC_TOP rows nearest the query with cosine >= MIN_COSINE: a query
that means nothing near any memory adds nothing).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

from ..model import Memory
from ..store.bodies import unkept_body
from ..store.db import cache_dir, private_dir
from .aliases import FloatArray, IntArray
from .bm25 import field_texts
from .packed_vectors import DIM, PackedVectors
from .query_vectors import QueryEmbedder

#: Turns meaning-based matching off ("0") even when the extra is installed.
ENV = "MEMLENS_SEMANTIC"
MODEL = "wordllama-l2_supercat-256"
#: Characters of a memory's text that are embedded (WordLlama averages
#: token vectors: a long tail mostly dilutes the start).
TEXT_CHARS = 2000
RRF_K = 60
SEMANTIC_TOP = 30
MIN_COSINE = 0.3
_BATCH = 256

Vectors = npt.NDArray[np.float32]
#: Memories whose texts are embedded at once when an index's vectors are made.
_EMBED_SLICE = 4096
#: The same with a `stop` to ask between slices (~0.25 s each: a quitting app
#: waits for its worker threads).
_STOPPABLE_SLICE = 512


def semantic_available() -> bool:
    """The extra is installed and not switched off."""
    if os.environ.get(ENV, "1") == "0":
        return False
    return importlib.util.find_spec("wordllama") is not None


class Embedder:
    """WordLlama's l2_supercat vectors, from the files its wheel ships (never downloaded).

    Computed by `query_vectors.QueryEmbedder` (the same numbers, measured bit
    for bit against WordLlama itself in tests/core/test_query_vectors.py)
    rather than by importing `wordllama`: that import pulls pydantic and
    requests (~0.7 s, ~130 MB), and embedding 2,048 one-kilobyte memories
    took 2.8 s this way against 4.5 s through WordLlama.  A text with no
    tokens is a zero vector (WordLlama divides 0 by 0).  Subclassed in tests
    by stand-ins.
    """

    def __init__(self) -> None:
        self._model = QueryEmbedder()  # ImportError without the `semantic` extra

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Unit vectors of `texts` (float32, one row each)."""
        return self._model.embed(list(texts))


class VectorSource(Protocol):
    """Where an index's rows' vectors are kept between runs (`SearchIndex.enable_semantic`)."""

    def load(self) -> PackedVectors | None:
        """The kept vectors of rows ``0..n-1`` (n may be short of the rows), or None."""
        ...

    def save(self, vectors: PackedVectors, first: int) -> None:
        """Keep these vectors; rows below `first` were kept already."""
        ...

    def close(self) -> None:
        """Let go of what holds them (the index is not queried after this)."""
        ...


class KeptVectors:
    """Vectors kept in memory, pickled with the app's index cache (`index_cache`)."""

    def __init__(self, vectors: PackedVectors | None = None) -> None:
        self.vectors = vectors

    def load(self) -> PackedVectors | None:
        return self.vectors

    def save(self, vectors: PackedVectors, first: int) -> None:
        self.vectors = vectors

    def close(self) -> None:
        return None


def memory_text(m: Memory) -> str:
    """What is embedded of a memory: its fields in `bm25.field_texts` order, cut.

    The body is read without being kept (`unkept_body`): embedding reads
    every memory's text once, and each body would otherwise stay loaded.
    """
    return "\n".join(t for t in field_texts(m, unkept_body(m)) if t)[:TEXT_CHARS]


def _digest(text: str) -> bytes:
    return hashlib.sha256(f"{MODEL}\0{text}".encode("utf-8", "surrogateescape")).digest()


#: `PRAGMA user_version` of a vectors file holding float16 rows only.
HALF_ROWS_ONLY = 1


class VectorStore:
    """sha256 of an embedded text -> its vector, in the cache folder (a cache: never fails).

    Kept as float16: half the bytes (51 MB at 100k memories), and an index
    packs every vector from its float16 rounding (`packed_vectors`), so a
    vector read back from here gives the index exactly what embedding the
    text again would.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or cache_dir() / "vectors.sqlite"
        self._conn: sqlite3.Connection | None = None
        with contextlib.suppress(sqlite3.Error, OSError):
            private_dir(self.path.parent)
            with contextlib.suppress(FileExistsError):  # owner-only, as every cache file
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            conn = sqlite3.connect(self.path, check_same_thread=False)
            conn.execute(
                "CREATE TABLE IF NOT EXISTS vectors (digest BLOB PRIMARY KEY, vec BLOB NOT NULL)"
            )
            with contextlib.suppress(sqlite3.Error):  # busy elsewhere: next time
                self._drop_float32(conn)
            self._conn = conn

    @staticmethod
    def _drop_float32(conn: sqlite3.Connection) -> None:
        """Once: remove the float32 rows an older memlens kept (never read: 100k of them
        made the file 141 MB), and give their pages back."""
        if conn.execute("PRAGMA user_version").fetchone()[0] >= HALF_ROWS_ONLY:
            return
        with conn:
            conn.execute("DELETE FROM vectors WHERE length(vec) != ?", (DIM * 2,))
        conn.execute("VACUUM")
        conn.execute(f"PRAGMA user_version = {HALF_ROWS_ONLY}")

    def get(self, digests: list[bytes]) -> dict[bytes, Vectors]:
        found: dict[bytes, Vectors] = {}
        if self._conn is None:
            return found
        with contextlib.suppress(sqlite3.Error):
            for i in range(0, len(digests), 500):
                chunk = digests[i : i + 500]
                marks = ",".join("?" * len(chunk))
                sql = f"SELECT digest, vec FROM vectors WHERE digest IN ({marks})"
                for digest, vec in self._conn.execute(sql, chunk):
                    arr = np.frombuffer(vec, dtype=np.float16)
                    if arr.shape == (DIM,):  # (a float32 row of an older memlens: not used)
                        found[bytes(digest)] = arr.astype(np.float32)
        return found

    def put(self, pairs: list[tuple[bytes, Vectors]]) -> None:
        if self._conn is None or not pairs:
            return
        with contextlib.suppress(sqlite3.Error), self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO vectors (digest, vec) VALUES (?, ?)",
                [(d, v.astype(np.float16).tobytes()) for d, v in pairs],
            )


def embed_texts(
    texts: list[str],
    embedder: Embedder,
    store: VectorStore,
    on_model: Callable[[], None] | None = None,
) -> Vectors:
    """Vectors of `texts`: from the store where kept, the rest embedded (and kept).

    `on_model` is called before the model embeds anything (not when every
    vector was kept).
    """
    digests = [_digest(t) for t in texts]
    known = store.get(list(dict.fromkeys(digests)))
    missing = list(dict.fromkeys(d for d in digests if d not in known))
    if missing:
        if on_model is not None:
            on_model()
        text_of = dict(zip(digests, texts, strict=True))
        for i in range(0, len(missing), _BATCH):
            chunk = missing[i : i + _BATCH]
            vecs = embedder.embed([text_of[d] for d in chunk])
            pairs = list(zip(chunk, vecs, strict=True))
            known.update(pairs)
            store.put(pairs)
    out = np.zeros((len(texts), DIM), dtype=np.float32)
    for i, d in enumerate(digests):
        out[i] = known[d]
    return out


class SemanticIndex:
    """One unit vector per row of a search index (zeros for dead rows), packed (`packed_vectors`).

    The model is loaded only when a memory must be embedded or a query
    asked: an index whose vectors were saved (`persisted_vectors`) loads it
    for the query alone.
    """

    def __init__(
        self,
        vectors: PackedVectors,
        embedder: Embedder | None = None,
        store: VectorStore | None = None,
    ) -> None:
        self.vectors = vectors
        #: Rows the vectors were made for (`extend`; later rows come through `add`).
        self.rows = len(vectors)
        #: Rows of those read back from where they were kept (not embedded).
        self.kept = 0
        self._embedder = embedder
        self._store = store
        #: What embeds a query: a given embedder (a stand-in in tests), else the
        #: light `query_vectors.QueryEmbedder` (the same vectors, no wordllama import).
        self._query: Embedder | QueryEmbedder | None = embedder

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = Embedder()
        return self._embedder

    @property
    def store(self) -> VectorStore:
        if self._store is None:
            self._store = VectorStore()
        return self._store

    @store.setter
    def store(self, store: VectorStore) -> None:
        self._store = store

    @classmethod
    def build(
        cls,
        memories: Sequence[Memory],
        alive: Sequence[bool],
        embedder: Embedder | None = None,
        store: VectorStore | None = None,
    ) -> SemanticIndex:
        return cls.extend(None, memories, alive, embedder, store)

    @classmethod
    def extend(
        cls,
        known: PackedVectors | None,
        memories: Sequence[Memory],
        alive: Sequence[bool],
        embedder: Embedder | None = None,
        store: VectorStore | None = None,
        *,
        stop: Callable[[], bool] | None = None,
        on_model: Callable[[], None] | None = None,
    ) -> SemanticIndex:
        """The vectors of rows ``0..len(known)-1`` as given, the later live rows embedded.

        The rows are those of `alive` (`memories` may have grown since: a
        front end's live changes while the vectors are made aside).
        `on_model`: see `embed_texts`.
        """
        n = len(alive)
        start = 0 if known is None else min(len(known), n)
        kept = PackedVectors.zeros(0) if known is None else known
        # Every row kept (a warm search): used as read, not copied (51 MB at 100k).
        whole = kept if len(kept) == n else kept.resized(n)
        index = cls(whole, embedder, store)
        index.kept = start
        rows = [r for r in range(start, n) if alive[r]]
        # In slices: at 100k memories the texts alone would hold hundreds of MB at once.
        size = _EMBED_SLICE if stop is None else _STOPPABLE_SLICE
        for lo in range(0, len(rows), size):
            if stop is not None and stop():
                break  # left unfinished: the caller drops it
            part = rows[lo : lo + size]
            texts = [memory_text(memories[r]) for r in part]
            vecs = embed_texts(texts, index.embedder, index.store, on_model)
            index.vectors.put(part, vecs)
        return index

    def add(self, row: int, m: Memory) -> None:
        """The vector of a row added after the build."""
        if row >= len(self.vectors):
            self.vectors = self.vectors.resized(max(row + 1, 2 * len(self.vectors)))
        self.vectors.put([row], embed_texts([memory_text(m)], self.embedder, self.store))
        self.rows = max(self.rows, row + 1)

    def query_scores(self, text: str, n: int) -> FloatArray:
        """Cosine of every row (first `n`) with the query text."""
        if self._query is None:
            self._query = QueryEmbedder()
        q = self._query.embed([text])[0]
        return self.row_scores(q, n)

    def row_scores(self, vector: Vectors, n: int) -> FloatArray:
        """Cosine of every row (first `n`) with a unit vector."""
        return self.vectors.scores(vector, n)


@dataclass(slots=True)
class FusedParts:
    """Per row, the parts of its fused score; worked out only for the rows asked (a page)."""

    lexical: FloatArray
    semantic: FloatArray
    fused: FloatArray
    #: 1-based rank in each list, 0 where the row is not in it.
    lex_rank: IntArray
    sem_rank: IntArray

    def get(self, row: int, default: dict[str, float] | None = None) -> dict[str, float] | None:
        lr, sr = int(self.lex_rank[row]), int(self.sem_rank[row])
        if not lr and not sr:
            return default
        part: dict[str, float] = {"lexical_rank": lr} if lr else {}
        part["bm25"] = float(self.lexical[row])
        if sr:
            part.update(semantic_rank=sr, cosine=float(self.semantic[row]))
        part["fused"] = float(self.fused[row])
        return part


def rrf(
    lexical: FloatArray, semantic: FloatArray, alive: npt.NDArray[np.bool_]
) -> tuple[FloatArray, FusedParts]:
    """Reciprocal rank fusion of the lexical scores and the semantic cosines.

    Returns the fused score per row and its parts (for explain).  In numpy:
    a common word matches tens of thousands of rows at 100k memories, and
    most rows are near a query by meaning.  Ties go to the lower row: the
    rows come ascending from `flatnonzero` and the sorts are stable.
    """
    n = len(lexical)
    fused = np.zeros(n, dtype=np.float64)
    lex_rank = np.zeros(n, dtype=np.int64)
    sem_rank = np.zeros(n, dtype=np.int64)
    lex_rows = np.flatnonzero((lexical > 0) & alive)
    lex_order: IntArray = lex_rows[np.argsort(-lexical[lex_rows], kind="stable")]
    ranks = np.arange(1, len(lex_order) + 1, dtype=np.int64)
    lex_rank[lex_order] = ranks
    fused[lex_order] += 1.0 / (RRF_K + ranks)
    sem_rows = np.flatnonzero((semantic >= MIN_COSINE) & alive)
    if len(sem_rows) > SEMANTIC_TOP:
        # Only rows up to the SEMANTIC_TOP-th cosine can rank (all of a tie kept).
        cos = semantic[sem_rows]
        cut = len(cos) - SEMANTIC_TOP
        sem_rows = sem_rows[cos >= np.partition(cos, cut)[cut]]
    sem_order = sem_rows[np.argsort(-semantic[sem_rows], kind="stable")][:SEMANTIC_TOP]
    ranks = np.arange(1, len(sem_order) + 1, dtype=np.int64)
    sem_rank[sem_order] = ranks
    fused[sem_order] += 1.0 / (RRF_K + ranks)
    return fused, FusedParts(lexical, semantic, fused, lex_rank, sem_rank)


__all__ = [
    "DIM",
    "ENV",
    "MODEL",
    "Embedder",
    "FusedParts",
    "KeptVectors",
    "SemanticIndex",
    "VectorSource",
    "VectorStore",
    "embed_texts",
    "memory_text",
    "rrf",
    "semantic_available",
]
