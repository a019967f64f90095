"""Packed meaning vectors (`packed_vectors`): int16 codes and a scale per row."""

from __future__ import annotations

import numpy as np

from memlens.core.search.packed_vectors import DIM, PackedVectors


def _unit_rows(n: int, seed: int = 3) -> np.ndarray:  # type: ignore[type-arg]
    rng = np.random.default_rng(seed)
    rows = rng.standard_normal((n, DIM)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_scores_match_the_float16_rows_within_1e_5() -> None:
    rows = _unit_rows(3000)
    packed = PackedVectors.pack(rows)
    query = rows[17]
    half = rows.astype(np.float16).astype(np.float32)
    exact = half @ query
    got = packed.scores(query, len(rows))
    assert got.shape == (3000,) and got.dtype == np.float64
    assert np.abs(got - exact).max() < 1e-5
    assert np.allclose(packed.rows([0, 17]), half[[0, 17]], atol=1e-5)
    assert np.array_equal(packed.row(5), packed.rows([5])[0])


def test_zero_rows_stay_zero_and_scores_past_the_rows_are_zero() -> None:
    rows = _unit_rows(4)
    rows[2] = 0.0
    packed = PackedVectors.pack(rows)
    assert packed.scales[2] == 0 and not packed.codes[2].any()
    sims = packed.scores(rows[0], 6)  # two more rows asked than kept
    assert sims[2] == 0 and sims[4] == 0 and sims[5] == 0
    assert abs(sims[0] - 1.0) < 2e-3


def test_packing_the_float16_rounding_is_the_same_as_packing_the_vector() -> None:
    """What a vector just computed gets equals what it gets once read back as float16."""
    rows = _unit_rows(50)
    fresh = PackedVectors.pack(rows)
    read_back = PackedVectors.pack(rows.astype(np.float16))
    assert np.array_equal(fresh.codes, read_back.codes)
    assert np.array_equal(fresh.scales, read_back.scales)


def test_put_resize_and_bytes_round_trip() -> None:
    rows = _unit_rows(10)
    packed = PackedVectors.zeros(3)
    grown = packed.resized(10)
    grown.put(range(10), rows)
    assert np.array_equal(grown.codes, PackedVectors.pack(rows).codes)
    cut = grown.resized(4)
    assert len(cut) == 4 and np.array_equal(cut.codes, grown.codes[:4])
    back = PackedVectors.from_bytes(grown.to_bytes(2, 9))
    assert back is not None and len(back) == 7
    assert np.array_equal(back.codes, grown.codes[2:9])
    assert np.array_equal(back.scales, grown.scales[2:9])
    assert PackedVectors.from_bytes(b"\x01\x02\x03") is None


def test_rrf_ranks_as_a_full_sort_with_ties_to_the_lower_row() -> None:
    from memlens.core.search.embeddings import MIN_COSINE, RRF_K, SEMANTIC_TOP, rrf

    rng = np.random.default_rng(11)
    n = 5000
    lexical = np.where(rng.random(n) < 0.4, rng.integers(0, 6, n) / 2.0, 0.0)
    semantic = np.round(rng.random(n), 2)  # many ties, most above MIN_COSINE
    alive = rng.random(n) < 0.9
    fused, parts = rrf(lexical, semantic, alive)

    rows = [r for r in range(n) if alive[r] and lexical[r] > 0]
    lex_order = sorted(rows, key=lambda r: (-lexical[r], r))
    near = [r for r in range(n) if alive[r] and semantic[r] >= MIN_COSINE]
    sem_order = sorted(near, key=lambda r: (-semantic[r], r))[:SEMANTIC_TOP]
    expected = np.zeros(n)
    for rank, r in enumerate(lex_order, 1):
        assert parts.lex_rank[r] == rank
        expected[r] += 1 / (RRF_K + rank)
    for rank, r in enumerate(sem_order, 1):
        assert parts.sem_rank[r] == rank
        expected[r] += 1 / (RRF_K + rank)
    assert int((parts.sem_rank > 0).sum()) == SEMANTIC_TOP
    assert np.allclose(fused, expected, rtol=0, atol=1e-15)
