"""Weights made from raw counts on demand equal the fit's, however they are read."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from test_search_build import AS_OF, corpus, fake_decay

from memlens.core.search import weights
from memlens.core.search.index import SearchIndex


def test_sublinear_tf_is_one_plus_log_and_a_count_keeps_its_value_as_the_table_grows() -> None:
    small = np.array([1, 2, 3, 255, 7], dtype=np.uint8)
    first = weights.sublinear_tf(small)
    assert np.allclose(first, 1.0 + np.log(small.astype(np.float64)), rtol=1e-15, atol=0)
    big = np.array([70_000, 3, 1], dtype=np.int32)
    assert np.allclose(weights.sublinear_tf(big), 1.0 + np.log(big.astype(np.float64)))
    # The table grew past 70,000; earlier counts still give the same bits.
    assert np.array_equal(weights.sublinear_tf(small), first)
    assert weights.sublinear_tf(np.zeros(0, dtype=np.uint8)).shape == (0,)


@pytest.mark.parametrize(
    ("top", "dtype"),
    [(0, np.uint8), (255, np.uint8), (256, np.uint16), (65_535, np.uint16), (65_536, np.int32)],
)
def test_counts_are_kept_in_the_narrowest_type(top: int, dtype: type[np.generic]) -> None:
    counts = np.array([1, top], dtype=np.int32)
    narrowed = weights.narrow_counts(counts)
    assert narrowed.dtype == dtype
    assert narrowed.tolist() == [1, top]


def test_every_way_of_reading_a_weight_gives_the_fits_number_bit_for_bit() -> None:
    docs = corpus(400, seed=5)
    index = SearchIndex.build(docs, AS_OF, decay=fake_decay)
    terms = index.state.terms
    assert terms.xt_counts.dtype == np.uint8
    # The weights as the fit used to keep them: one pass over every posting.
    n_terms = terms.n_base_terms
    term = np.repeat(np.arange(n_terms), np.diff(terms.xt_indptr))
    want = 1.0 + np.log(terms.xt_counts.astype(np.float64))
    want *= np.asarray(terms.idf[:n_terms])[term]
    want /= terms.row_norms[terms.xt_indices]
    got = terms.base_weights()
    assert np.allclose(got, want, rtol=1e-15, atol=0)
    # Every row with a term is a unit vector.
    sums = np.bincount(terms.xt_indices, weights=got * got, minlength=terms.n_base_rows)
    assert np.allclose(sums[terms.row_norms > 0], 1.0)
    assert not sums[terms.row_norms == 0].any()
    for tid in range(n_terms):
        lo, hi = int(terms.xt_indptr[tid]), int(terms.xt_indptr[tid + 1])
        rows, data = terms.postings(tid)
        assert np.array_equal(rows, terms.xt_indices[lo:hi])
        assert np.array_equal(data, got[lo:hi])
        some = rows[:: max(1, len(rows) // 5)].tolist()
        assert [terms.doc_weight(r, tid) for r in some] == got[lo:hi][
            :: max(1, len(rows) // 5)
        ].tolist()
        page = terms.page_weights([*some, len(docs) - 1], [tid])
        for r in some:
            assert page[r] == [terms.doc_weight(r, tid)]


def test_the_weight_cache_keeps_the_latest_terms_within_its_limit_and_pickles_empty() -> None:
    import pickle

    cache = weights.WeightCache(limit=10)
    made: list[int] = []

    def maker(key: int, n: int) -> Callable[[], np.ndarray]:
        def make() -> np.ndarray:
            made.append(key)
            return np.full(n, float(key))

        return make

    first = cache.get(1, maker(1, 4))
    assert cache.get(1, maker(1, 4)) is first and made == [1]  # a hit makes nothing
    assert not first.flags.writeable
    cache.get(2, maker(2, 4))
    cache.get(1, maker(1, 4))  # 1 is now the most recent
    cache.get(3, maker(3, 4))  # 12 floats > 10: the oldest (2) goes
    cache.get(1, maker(1, 4))
    cache.get(2, maker(2, 4))
    assert made == [1, 2, 3, 2]
    big = cache.get(9, maker(9, 11))  # larger than the whole cache: not kept
    assert len(big) == 11 and cache.get(9, maker(9, 11)) is not big
    again = pickle.loads(pickle.dumps(cache))
    assert again.limit == 10 and again.get(1, maker(1, 4)) is not first


def test_the_weight_cache_is_safe_to_share_between_threads() -> None:
    from concurrent.futures import ThreadPoolExecutor

    cache = weights.WeightCache(limit=64)

    def hammer(seed: int) -> None:
        for i in range(2000):
            key = (seed * 7 + i) % 40
            got = cache.get(key, lambda key=key: np.full(1 + key % 9, float(key)))
            assert got[0] == float(key) and len(got) == 1 + key % 9

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(hammer, range(8)))
    held = cache._held
    assert cache._size == sum(len(a) for a in held.values()) <= cache.limit
