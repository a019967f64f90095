"""Meaning vectors kept in the persisted index: read back, not recomputed; new rows embedded."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bench.generate import generate
from memlens.core import open_catalog
from memlens.core.scan.vault import survey_all
from memlens.core.search.embeddings import DIM, Embedder, VectorStore
from memlens.core.search.fresh import open_fresh
from memlens.core.search.index import SearchIndex
from memlens.core.search.persisted import open_index

AS_OF = date(2026, 1, 15)
QUERIES = ["database storage", "postgres deadlock", "retry storm cache"]


class HashEmbedder(Embedder):
    """A stand-in model: each word a fixed pseudo-random direction; counts what it embeds."""

    def __init__(self) -> None:  # no model
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:  # type: ignore[type-arg]
        self.texts.extend(texts)
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split()[:40]:
                rng = np.random.default_rng(abs(hash(w)) % (2**32))
                out[i] += rng.standard_normal(DIM).astype(np.float32)
            n = float(np.linalg.norm(out[i]))
            out[i] = out[i] / n if n else out[i]
        return out


def _pages(index: SearchIndex) -> list[list[tuple[Any, ...]]]:
    return [
        [(h.memory.key, h.score, h.explain) for h in index.run(q, 10, rank="relevance").hits]
        for q in QUERIES
    ]


@pytest.fixture(autouse=True)
def _no_racy_stamps(monkeypatch: pytest.MonkeyPatch) -> None:
    from memlens.core.scan import reading

    monkeypatch.setattr(reading, "RACY_WINDOW_NS", 0)


@pytest.fixture
def no_vector_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every text is embedded by the model (no per-text cache): the counts below are exact."""
    monkeypatch.setattr(VectorStore, "get", lambda self, digests: {})
    monkeypatch.setattr(VectorStore, "put", lambda self, pairs: None)


@pytest.mark.usefixtures("no_vector_store")
def test_vectors_are_saved_read_back_and_extended(tmp_path: Path) -> None:
    root = tmp_path / "vaults"
    generate(root, 300, seed=5)

    # Without a persisted index: every live row is embedded.
    fresh_build = SearchIndex.from_catalog(open_catalog(root, cache=False), AS_OF)
    first = HashEmbedder()
    fresh_build.enable_semantic(first)
    assert len(first.texts) == len(fresh_build)
    expected = _pages(fresh_build)

    # The persisted index embeds them once and saves them ...
    index, _ = open_index(open_catalog(root, cache=True), AS_OF)
    embedder = HashEmbedder()
    heard: list[int] = []
    index.enable_semantic(embedder, on_embed=heard.append)
    assert len(embedder.texts) == len(index) == heard[0]
    assert _pages(index) == expected

    # ... and a search served without the catalog reads them back: only queries are embedded.
    served = open_fresh(survey_all(root).vaults, AS_OF)
    assert served is not None
    reader = HashEmbedder()
    served.enable_semantic(reader, on_embed=heard.append)
    assert served.semantic is not None
    assert reader.texts == [] and heard == [len(index)]  # nothing more to embed
    assert _pages(served) == expected
    assert reader.texts == QUERIES

    # A new file: the index is updated, and only its memory is embedded next time.
    src = sorted((root / "cognitive-memory").rglob("*.md"))[0]
    added = src.with_name("added-" + src.name)
    text = src.read_text(encoding="utf-8")
    old_id = text.split("\nid: ", 1)[1].split("\n", 1)[0]
    added.write_text(text.replace(old_id, "0f0f0f0f-aaaa-4bbb-8ccc-123456789abc", 1), "utf-8")
    updated, stats = open_index(open_catalog(root, cache=True), AS_OF)
    assert stats.added == 1
    later = HashEmbedder()
    updated.enable_semantic(later)
    assert len(later.texts) == 1
    rebuilt = SearchIndex.from_catalog(open_catalog(root, cache=False), AS_OF)
    rebuilt.enable_semantic(HashEmbedder())
    assert _pages(updated) == _pages(rebuilt)


@pytest.mark.usefixtures("no_vector_store")
def test_a_damaged_vector_chunk_is_computed_again(tmp_path: Path) -> None:
    import sqlite3

    root = tmp_path / "vaults"
    generate(root, 60, seed=7)
    index, stats = open_index(open_catalog(root, cache=True), AS_OF)
    index.enable_semantic(HashEmbedder())
    path = stats.path
    assert path is not None
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE vecs SET data = x'0102' WHERE chunk = 0")
    conn.close()
    again, _ = open_index(open_catalog(root, cache=True), AS_OF)
    embedder = HashEmbedder()
    again.enable_semantic(embedder)
    assert len(embedder.texts) == len(again)  # not trusted: embedded again, and saved
    third, _ = open_index(open_catalog(root, cache=True), AS_OF)
    repaired = HashEmbedder()
    third.enable_semantic(repaired)
    assert repaired.texts == []


@pytest.mark.usefixtures("no_vector_store")
def test_the_app_index_cache_keeps_the_relevance_index_and_vectors(tmp_path: Path) -> None:
    from memlens.core.search.index_cache import load_index, save_index

    root = tmp_path / "vaults"
    generate(root, 200, seed=9)
    catalog = open_catalog(root, cache=True)
    index, stats = load_index(catalog, AS_OF, save=False)
    assert stats.status == "built" and not index.has_lexical()
    index.lexical()
    first = HashEmbedder()
    assert index.enable_semantic(first) == len(index)
    expected = _pages(index)
    save_index(index, catalog)

    again, stats = load_index(open_catalog(root, cache=True), AS_OF, save=False)
    assert stats.status == "loaded" and not stats.stale
    assert again.has_lexical()  # not built again from every body
    reader = HashEmbedder()
    assert again.enable_semantic(reader) == 0
    assert _pages(again) == expected
    assert reader.texts == QUERIES  # only the queries were embedded


@pytest.mark.usefixtures("no_vector_store")
def test_a_missing_vector_chunk_is_computed_again(tmp_path: Path) -> None:
    import sqlite3

    from memlens.core.search import persisted_vectors

    root = tmp_path / "vaults"
    generate(root, 40, seed=8)
    index, stats = open_index(open_catalog(root, cache=True), AS_OF)
    index.enable_semantic(HashEmbedder())
    assert stats.path is not None
    conn = sqlite3.connect(stats.path)
    with conn:  # as if the file said more slots were saved than its chunks hold
        conn.execute(
            "UPDATE meta SET value = ? WHERE key = ?",
            (str(persisted_vectors.CHUNK + 5).encode(), persisted_vectors.SLOTS_KEY),
        )
    conn.close()
    again, _ = open_index(open_catalog(root, cache=True), AS_OF)
    assert again.vector_file is not None and again.vector_file.load() is None


@pytest.mark.usefixtures("no_vector_store")
def test_float16_vectors_of_an_older_file_are_read_and_saved_again_packed(tmp_path: Path) -> None:
    import sqlite3

    from memlens.core.search import persisted_vectors as pv

    root = tmp_path / "vaults"
    generate(root, 80, seed=4)
    index, stats = open_index(open_catalog(root, cache=True), AS_OF)
    index.enable_semantic(HashEmbedder())
    assert index.semantic is not None and stats.path is not None
    expected = _pages(index)
    kept = index.semantic.vectors
    half = kept.rows(range(len(kept))).astype(np.float16)
    conn = sqlite3.connect(stats.path)
    with conn:  # the file as memlens wrote it before the vectors were packed
        conn.execute("DELETE FROM vecs")
        conn.execute("DELETE FROM meta WHERE key = ?", (pv.FORMAT_KEY,))
        conn.executemany(
            "INSERT INTO vecs (chunk, data) VALUES (?, ?)",
            [
                (c, half[c * pv.CHUNK : (c + 1) * pv.CHUNK].tobytes())
                for c in range((len(half) + pv.CHUNK - 1) // pv.CHUNK)
            ],
        )
    conn.close()

    older, _ = open_index(open_catalog(root, cache=True), AS_OF)
    reader = HashEmbedder()
    assert older.enable_semantic(reader) == 0  # read, not embedded again
    assert older.semantic is not None
    assert np.array_equal(older.semantic.vectors.codes, kept.codes)
    assert _pages(older) == expected
    conn = sqlite3.connect(stats.path)
    fmt = conn.execute("SELECT value FROM meta WHERE key = ?", (pv.FORMAT_KEY,)).fetchone()
    sizes = {n for (n,) in conn.execute("SELECT length(data) FROM vecs")}
    conn.close()
    assert bytes(fmt[0]) == pv.PACKED  # saved again, packed
    assert sizes <= {pv.CHUNK * (DIM * 2 + 4), len(half) % pv.CHUNK * (DIM * 2 + 4)}
    index.close()
    older.close()  # the last reader closed: the saved vectors are folded into the file
    assert not stats.path.with_name(stats.path.name + "-wal").exists()


@pytest.mark.usefixtures("no_vector_store")
def test_vectors_saved_through_a_read_only_index_leave_no_wal_once_closed(
    tmp_path: Path,
) -> None:
    """The first semantic search of a kept lexical index: its vectors pass through the WAL."""
    root = tmp_path / "vaults"
    generate(root, 60, seed=6)
    built, stats = open_index(open_catalog(root, cache=True), AS_OF)
    built.close()
    assert stats.path is not None
    wal = stats.path.with_name(stats.path.name + "-wal")
    served = open_fresh(survey_all(root).vaults, AS_OF)  # read-only, no vectors kept yet
    assert served is not None
    assert served.enable_semantic(HashEmbedder()) == len(served)
    assert wal.exists() and wal.stat().st_size > 0
    served.close()
    assert not wal.exists() or wal.stat().st_size == 0
    again = open_fresh(survey_all(root).vaults, AS_OF)
    assert again is not None and again.enable_semantic(HashEmbedder()) == 0
    again.close()


def test_the_embedding_note_comes_only_when_the_model_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rebuilt index whose vectors the per-text cache holds says nothing (it is quick)."""
    monkeypatch.setenv("MEMLENS_CACHE_DIR", str(tmp_path / "cache"))  # an empty per-text cache
    root = tmp_path / "vaults"
    generate(root, 50, seed=3)
    first, _ = open_index(open_catalog(root, cache=True), AS_OF)
    heard: list[int] = []
    embedder = HashEmbedder()
    first.build_semantic(embedder, on_embed=heard.append)  # fills the per-text cache
    assert heard == [len(first)] and len(embedder.texts) == len(first)

    again = SearchIndex.from_catalog(open_catalog(root, cache=False), AS_OF)
    again.vector_file = first.vector_file  # a kept index with no vectors saved yet
    quiet: list[int] = []
    cached = HashEmbedder()
    again.build_semantic(cached, on_embed=quiet.append)
    assert cached.texts == [] and quiet == []
    first.close()


@pytest.mark.usefixtures("no_vector_store")
def test_the_review_queues_meaning_leaves_no_wal_and_still_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`meaning_of` saves the vectors through the persisted index, then lets go of its file."""
    from memlens.core.search.meaning import meaning_of
    from memlens.core.search.persisted_name import index_path

    monkeypatch.setenv("MEMLENS_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "vaults"
    generate(root, 40, seed=2)
    catalog = open_catalog(root, cache=True)
    meaning = meaning_of(catalog, AS_OF, embedder=HashEmbedder())
    assert meaning is not None
    memories = list(catalog.memories())
    vectors = meaning(memories)
    assert vectors is not None and vectors.shape == (len(memories), DIM)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=2e-3)
    path = index_path(catalog.vaults)
    assert path.is_file() and not path.with_name(path.name + "-wal").exists()
