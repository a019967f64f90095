"""Meaning-based matching: reciprocal rank fusion by hand, the vector store, the real model.

The fusion and the store are tested with a stand-in embedder (no model);
the last tests load the real WordLlama model from its wheel, offline, and
skip when the optional extra is not installed.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Sequence
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from memlens.core.model import Memory
from memlens.core.search.embeddings import (
    DIM,
    Embedder,
    VectorStore,
    embed_texts,
    rrf,
)
from memlens.core.search.index import SearchIndex

from .test_relevance import fake_decay, mem

AS_OF = date(2026, 11, 22)


class CountingEmbedder(Embedder):
    """A stand-in: one fixed axis per known word, counting what it was asked to embed."""

    AXES = ("disk", "refund", "seed")

    def __init__(self) -> None:  # no model
        self.calls: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:  # type: ignore[type-arg]
        self.calls.extend(texts)
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, t in enumerate(texts):
            for j, word in enumerate(self.AXES):
                if word in t.lower() or (word == "disk" and "storage" in t.lower()):
                    out[i, j] = 1.0
            n = float(np.linalg.norm(out[i]))
            out[i] = out[i] / n if n else out[i]
        return out


def test_reciprocal_rank_fusion_by_hand() -> None:
    lexical = np.array([3.0, 0.0, 1.0, 2.0])
    semantic = np.array([0.9, 0.5, 0.1, 0.35])
    fused, parts = rrf(lexical, semantic, np.ones(4, dtype=bool))
    # Lexical order 0, 3, 2; by meaning (cosine >= 0.3) 0, 1, 3.
    assert fused[0] == 1 / 61 + 1 / 61
    assert fused[1] == 1 / 62
    assert fused[2] == 1 / 63
    assert math.isclose(fused[3], 1 / 62 + 1 / 63, rel_tol=1e-15)
    assert parts.get(1) == {"bm25": 0.0, "semantic_rank": 2, "cosine": 0.5, "fused": 1 / 62}
    assert parts.get(3) == {
        "lexical_rank": 2,
        "bm25": 2.0,
        "semantic_rank": 3,
        "cosine": 0.35,
        "fused": fused[3],
    }
    # A dead row takes part in neither list.
    dead = np.array([False, True, True, True])
    fused, parts = rrf(lexical, semantic, dead)
    assert fused[0] == 0 and parts.get(0) is None and fused[3] == 1 / 61 + 1 / 62


def test_store_keeps_each_text_once(tmp_path: Path) -> None:
    emb = CountingEmbedder()
    store = VectorStore(tmp_path / "vectors.sqlite")
    first = embed_texts(["disk full", "refund", "disk full"], emb, store)
    assert emb.calls == ["disk full", "refund"]
    again = embed_texts(["refund", "disk full"], emb, VectorStore(tmp_path / "vectors.sqlite"))
    assert emb.calls == ["disk full", "refund"]  # both from the store this time
    assert np.array_equal(again[0], first[1]) and np.array_equal(again[1], first[0])


def _corpus() -> list[Memory]:
    return [
        mem("disk", "Postgres disk at 71%", "the primary volume fills up"),
        mem("refund", "Refunds over 150", "need a second approver"),
        mem("seeds", "Seed order", "tomatoes and beans"),
    ]


def test_fused_relevance_finds_other_words_and_explains(tmp_path: Path) -> None:
    index = SearchIndex.build(_corpus(), AS_OF, decay=fake_decay)
    assert index.run("storage", 10, rank="relevance").hits == []  # no shared word
    index.enable_semantic(CountingEmbedder())
    assert index.semantic is not None
    index.semantic.store = VectorStore(tmp_path / "v.sqlite")
    hits = index.run("storage", 10, rank="relevance").hits
    assert [h.memory.id for h in hits] == ["disk"]
    ex = hits[0].explain
    assert ex["semantic"] == {"bm25": 0.0, "semantic_rank": 1, "cosine": 1.0, "fused": 1 / 61}
    assert hits[0].score == 1 / 61 == ex["score"]
    # Both lists: lexical rank 1 and meaning rank 1.
    hits = index.run("refund", 10, rank="relevance").hits
    assert hits[0].memory.id == "refund" and hits[0].score == 2 / 61
    # The same vectors give more like this.
    similar = index.similar((str(hits[0].memory.vault_root), "disk"), 2, by="semantic")
    assert similar and all(h.explain["method"] == "semantic" for h in similar)
    # Recall never uses them.
    assert index.run("storage", 10, rank="recall").hits == []


def test_vectors_made_aside_then_attached_cover_rows_added_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """build_semantic while queries run by words; attach_semantic embeds what came since."""
    monkeypatch.setenv("MEMLENS_CACHE_DIR", str(tmp_path))  # an empty per-text vector store
    index = SearchIndex.build(_corpus(), AS_OF, decay=fake_decay)
    assert index.meaning_pending() == 3
    emb = CountingEmbedder()
    aside = index.build_semantic(emb)
    assert index.semantic is None and len(emb.calls) == 3  # not on yet: words only
    assert index.run("storage", 10, rank="relevance").hits == []
    index.add(mem("vol", "Volume for storage", "the second disk"))  # a live change meanwhile
    index.remove((str(_corpus()[1].vault_root), "refund"))
    assert index.attach_semantic(aside) == 4
    assert len(emb.calls) == 4 and index.meaning_pending() == 0
    ids = [h.memory.id for h in index.run("storage", 10, rank="relevance").hits]
    assert set(ids) == {"disk", "vol"}

    # The same as turning it on at once after the change.
    at_once = SearchIndex.build(_corpus(), AS_OF, decay=fake_decay)
    at_once.add(mem("vol", "Volume for storage", "the second disk"))
    at_once.remove((str(_corpus()[1].vault_root), "refund"))
    monkeypatch.setenv("MEMLENS_CACHE_DIR", str(tmp_path / "again"))
    at_once.enable_semantic(CountingEmbedder())
    assert [h.memory.id for h in at_once.run("storage", 10, rank="relevance").hits] == ids


def test_semantic_falls_back_to_tfidf_without_vectors() -> None:
    index = SearchIndex.build(_corpus(), AS_OF, decay=fake_decay)
    hits = index.similar((str(_corpus()[0].vault_root), "disk"), 2, by="semantic")
    assert all(h.explain.get("method") != "semantic" for h in hits)


def test_the_real_model_loads_offline_and_matches_meaning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("wordllama")
    monkeypatch.setenv("MEMLENS_CACHE_DIR", str(tmp_path))
    # No network: a download attempt would fail here, so loading proves it is offline.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr("socket.socket.connect", _no_network)
    docs = [
        mem("disk", "Postgres disk at 71%", "The primary volume is nearly full."),
        mem("seeds", "Seed order for spring", "Tomatoes, beans and basil from Nordlys."),
        mem("judo", "Judo grading", "Luka moves up to the orange belt in March."),
    ]
    index = SearchIndex.build(docs, AS_OF, decay=fake_decay)
    query = "database storage running out"
    assert index.run(query, 10, rank="relevance").hits == []  # no word in common
    index.enable_semantic()
    hits = index.run(query, 10, rank="relevance").hits
    assert hits[0].memory.id == "disk"
    vecs = index.semantic.vectors if index.semantic else None
    assert vecs is not None and vecs.codes.shape == (3, DIM) and len(vecs) == 3
    # Kept packed from float16: unit length to within float16's precision.
    assert np.allclose(np.linalg.norm(vecs.rows(range(3)), axis=1), 1.0, atol=2e-3)


def _no_network(*_args: object) -> None:
    raise OSError("network used")


def test_the_vectors_file_is_owner_only_and_sheds_float32_rows(tmp_path: Path) -> None:
    path = tmp_path / "vectors.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE vectors (digest BLOB PRIMARY KEY, vec BLOB NOT NULL)")
    half = np.ones(DIM, dtype=np.float16).tobytes()
    conn.execute("INSERT INTO vectors VALUES (?, ?)", (b"old", np.ones(DIM, np.float32).tobytes()))
    conn.execute("INSERT INTO vectors VALUES (?, ?)", (b"new", half))
    conn.commit()
    conn.close()
    store = VectorStore(path)
    assert list(store.get([b"old", b"new"])) == [b"new"]
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT digest FROM vectors").fetchall() == [(b"new",)]
    conn.close()
    fresh = tmp_path / "fresh" / "vectors.sqlite"
    VectorStore(fresh)
    assert fresh.stat().st_mode & 0o777 == 0o600
