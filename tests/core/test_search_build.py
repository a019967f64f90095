"""The index's own TF-IDF build gives scikit-learn's numbers, in compact arrays."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlens.core.model import DecayInfo, Health, Memory
from memlens.core.search.index import SearchIndex, analyze, index_text

AS_OF = date(2026, 11, 22)
ROOT = Path("/vaults/a")


def fake_decay(memory: Memory, as_of: date) -> DecayInfo:
    return DecayInfo(status="Active", health=Health.ACTIVE, strength=1.0, weight=0.5, score=0.25)


def mem(i: int, title: str, body: str, tags: tuple[str, ...] = ()) -> Memory:
    return Memory(
        format="test", vault_root=ROOT, id=f"m{i}", kind="note", title=title, body=body,
        path=f"m{i}.md", tags=tags,
    )  # fmt: skip


WORDS = ["alpha", "beta", "gamma", "ΣΑΣ", "Québec", "pg_dump", "x", "DR-14", "客户说", "a1", "ǅx"]


def corpus(n: int, seed: int = 7) -> list[Memory]:
    rng = random.Random(seed)

    def text(k: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, k)))

    out = [
        mem(i, text(4), text(30), tuple(text(2) for _ in range(rng.randint(0, 3))))
        for i in range(n)
    ]
    out.append(mem(n, "", ""))  # no tokens at all
    out.append(mem(n + 1, "x", "- . !"))  # no token of two characters
    return out


@pytest.fixture(params=["one process", "half in a worker"])
def fit_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Run a test with the fit counted in one process, and with half in a parse worker."""
    import memlens.core.search.fit as search
    from memlens.core import workers

    mode: str = request.param
    if mode == "half in a worker":
        monkeypatch.setattr(search, "PARALLEL_FIT_MIN", 2)
        monkeypatch.setattr(workers, "spare_cpu", lambda: True)
        monkeypatch.delenv(workers.PARALLEL_ENV, raising=False)
        used: list[bool] = []
        real = workers.run_in_worker

        def spy(req: tuple[object, ...]) -> object:
            wait = real(req)
            used.append(wait is not None)
            return wait

        monkeypatch.setattr(workers, "run_in_worker", spy)
        yield mode
        assert used and all(used), "the worker was not used"
        return
    monkeypatch.setattr(search, "PARALLEL_FIT_MIN", 10**9)
    yield mode


def test_weights_and_vocabulary_match_scikit_learn(fit_mode: str) -> None:
    from sklearn.feature_extraction.text import TfidfVectorizer

    docs = corpus(300)
    index = SearchIndex.build(docs, AS_OF, decay=fake_decay)
    vec = TfidfVectorizer(analyzer=analyze, sublinear_tf=True, norm="l2", smooth_idf=True)
    x = vec.fit_transform([index_text(m) for m in docs]).tocsr()
    assert index.state.terms.vocab == {str(k): int(v) for k, v in vec.vocabulary_.items()}
    assert index.state.terms.terms == sorted(index.state.terms.vocab)
    assert np.allclose(index.state.terms.idf, vec.idf_, rtol=1e-13, atol=0)
    xt = x.T.tocsr()
    xt.sort_indices()
    assert np.array_equal(index.state.terms.xt_indptr, xt.indptr)
    assert np.array_equal(index.state.terms.xt_indices, xt.indices)
    assert np.allclose(index.state.terms.base_weights(), xt.data, rtol=1e-12, atol=0)
    assert index.state.terms.xt_indices.dtype == np.int32  # 4 bytes a posting


def test_title_word_and_tag_postings_list_every_row_once_in_order(fit_mode: str) -> None:
    docs = corpus(200, seed=3)
    index = SearchIndex.build(docs, AS_OF, decay=fake_decay)
    want_words: dict[str, list[int]] = {}
    want_tags: dict[str, list[int]] = {}
    for row, m in enumerate(docs):
        for w in set(analyze(m.title + "\n" + " ".join(m.tags))):
            want_words.setdefault(w, []).append(row)
        for t in {t.lower() for t in m.tags}:
            want_tags.setdefault(t, []).append(row)
    word_rows = index.state.words.rows
    assert {w: word_rows.rows(w).tolist() for w in word_rows} == want_words
    assert {t: index.state.tags.rows(t).tolist() for t in index.state.tags} == want_tags
    assert index.state.words.ordered == sorted(want_words)
    assert sorted(w for ws in index.state.words.by_len.values() for w in ws) == sorted(want_words)


def test_a_fit_split_with_a_worker_equals_one_in_one_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every id and array: the worker's names are renumbered in first-seen order."""
    import memlens.core.search.fit as search
    from memlens.core import workers

    docs = corpus(400, seed=11)
    monkeypatch.setattr(search, "PARALLEL_FIT_MIN", 10**9)
    alone = SearchIndex.build(docs, AS_OF, decay=fake_decay)
    monkeypatch.setattr(search, "PARALLEL_FIT_MIN", 2)
    monkeypatch.setattr(workers, "spare_cpu", lambda: True)
    monkeypatch.delenv(workers.PARALLEL_ENV, raising=False)
    split = SearchIndex.build(docs, AS_OF, decay=fake_decay)
    # A worker that fails: the main process counts the second half itself.
    monkeypatch.setattr(workers, "run_in_worker", lambda _req: lambda: None)
    failed = SearchIndex.build(docs, AS_OF, decay=fake_decay)
    for other in (split, failed):
        assert other.state.terms.vocab == alone.state.terms.vocab
        assert other.state.terms.terms == alone.state.terms.terms
        assert np.array_equal(other.state.terms.xt_indptr, alone.state.terms.xt_indptr)
        assert np.array_equal(other.state.terms.xt_indices, alone.state.terms.xt_indices)
        assert np.array_equal(other.state.terms.xt_counts, alone.state.terms.xt_counts)
        assert np.array_equal(other.state.terms.row_norms, alone.state.terms.row_norms)
        assert list(other.state.words.rows) == list(alone.state.words.rows)
        assert list(other.state.tags) == list(alone.state.tags)
        for w in alone.state.words.rows:
            assert (
                other.state.words.rows.rows(w).tolist() == alone.state.words.rows.rows(w).tolist()
            )
        for t in alone.state.tags:
            assert other.state.tags.rows(t).tolist() == alone.state.tags.rows(t).tolist()


def test_added_rows_extend_the_postings() -> None:
    docs = corpus(50, seed=5)
    index = SearchIndex.build(docs, AS_OF, decay=fake_decay)
    extra = mem(999, "Zeppelin alpha", "body", ("NewTag", "beta"))
    index.add(extra)
    row = len(docs)
    assert index.state.words.rows.rows("zeppelin").tolist() == [row]
    assert index.state.words.rows.rows("alpha").tolist()[-1] == row
    assert index.state.tags.rows("newtag").tolist() == [row]
    assert "zeppelin" in index.state.words.ordered


def test_explain_reads_the_decay_columns() -> None:
    index = SearchIndex.build(corpus(40), AS_OF, decay=fake_decay)
    hit = index.search("alpha")[0]
    assert hit.explain["status"] == "Active"  # as the format wrote it
    assert hit.explain["health"] == "active"
    assert hit.explain["decay_weight"] == 0.5
    assert hit.explain["decay_score"] == 0.25
    assert math.isclose(hit.score, hit.explain["relevance"] * hit.explain["confidence"] * 0.5)
    assert index.search("status:active")  # status filters match case-insensitively


@pytest.mark.parametrize("n", [0, 1])
def test_tiny_builds(n: int) -> None:
    index = SearchIndex.build([mem(i, "alpha beta", "gamma") for i in range(n)], AS_OF)
    assert len(index) == n
    assert len(index.search("alpha")) == n


def test_pickled_index_answers_the_same_after_incremental_changes() -> None:
    import pickle

    docs = corpus(80, seed=11)
    index = SearchIndex.build(docs, AS_OF, decay=fake_decay)
    index.add(mem(500, "Zeppelin alpha", "hangar beta", ("NewTag",)))
    index.remove((str(ROOT), "m3"))
    again = pickle.loads(pickle.dumps(index))
    for query in ("alpha", "zeppelin", "tag:newtag", "beta gam", "ΣΑΣ"):
        before = [(h.memory.id, h.score) for h in index.search(query, 50, as_you_type=True)]
        after = [(h.memory.id, h.score) for h in again.search(query, 50, as_you_type=True)]
        assert after == before, query
    assert (
        again.state.words.rows.rows("zeppelin").tolist()
        == index.state.words.rows.rows("zeppelin").tolist()
    )


@settings(max_examples=500, deadline=None)
@given(st.text(st.sampled_from(list("aZ09_ -.,'\"\\x\t\n!é€ΣK")), max_size=40))
def test_analyze_equals_the_regex_rule(text: str) -> None:
    from memlens.core.search.analysis import TOKEN_RE

    assert analyze(text) == TOKEN_RE.findall(text.lower())


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(max_codepoint=127), max_size=60))
def test_analyze_equals_the_regex_rule_on_any_ascii(text: str) -> None:
    from memlens.core.search.analysis import TOKEN_RE

    assert analyze(text) == TOKEN_RE.findall(text.lower())


@pytest.mark.parametrize("days", [-400, 0, 30, 200, 5000])
def test_decay_brief_equals_decay(own_fixtures_dir: Path, days: int) -> None:
    from datetime import timedelta

    from memlens.core.scan.vault import open_catalog

    as_of = AS_OF + timedelta(days=days)
    catalog = open_catalog(own_fixtures_dir)
    checked = 0
    formats = set()
    for vault in catalog.vaults:
        brief = vault.adapter.decay_brief
        for m in vault.memories:
            info = vault.adapter.decay(m, as_of)
            assert brief(m, as_of) == (info.status, info.health, info.weight, info.score), m.id
            checked += 1
        formats.add(vault.format)
    assert checked > 50
    assert len(formats) == 5  # every format has the brief


def test_bulk_rows_equal_rows_added_one_by_one(own_fixtures_dir: Path) -> None:
    from memlens.core.scan.vault import open_catalog

    catalog = open_catalog(own_fixtures_dir)
    bulk = SearchIndex.from_catalog(catalog, AS_OF)
    one_by_one = SearchIndex(AS_OF)
    for m in catalog.memories():
        one_by_one._append_row(m)
    for a, b in zip(bulk.state.columns.all(), one_by_one.state.columns.all(), strict=True):
        assert np.array_equal(a.view, b.view, equal_nan=a.view.dtype.kind == "f")
    for name in ("fmt_codes", "kind_codes", "status_codes", "source_codes", "agent_codes"):
        bulk_codes = getattr(bulk.state.columns, name)
        assert bulk_codes.values == getattr(one_by_one.state.columns, name).values, name


def test_a_loaded_index_builds_its_key_table_on_first_use(own_fixtures_copy: Path) -> None:
    from memlens.core.scan.vault import open_catalog
    from memlens.core.search.index_cache import load_index, save_index

    built, _ = load_index(open_catalog(own_fixtures_copy, cache=True), AS_OF)
    catalog = open_catalog(own_fixtures_copy, cache=True)
    loaded, stats = load_index(catalog, AS_OF)
    assert stats.status == "loaded"
    assert loaded._row_keys is None  # pending until something needs it
    query = "backup"
    assert [h.memory.id for h in loaded.search(query)] == [h.memory.id for h in built.search(query)]
    assert loaded._row_keys is None  # searching did not need it
    assert len(loaded) == len(built)
    assert loaded._row_of == {m.key: row for row, m in enumerate(loaded._memories)}
    m = next(iter(catalog.memories()))
    loaded.remove(m.key)
    assert m.key not in loaded and len(loaded) == len(built) - 1
    again, _ = load_index(catalog, AS_OF, save=False)  # still pending: saved as is
    save_index(again, catalog)
    assert load_index(catalog, AS_OF)[1].status == "loaded"
