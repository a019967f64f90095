"""The relevance ranking on hand-made memories: stems, stopwords, fields, BM25F by hand.

Every expected number below is worked out in the comments from the BM25F
formula (`memlens.core.search.bm25`): k1 = 1.2, b = 0.75, field weights
title 3, tags 2, format text fields 1.5, body 1.
"""

from __future__ import annotations

import math
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from memlens.core.model import DecayInfo, Health, Memory
from memlens.core.search.bm25 import LexicalIndex, doc_terms, field_counts
from memlens.core.search.index import SearchIndex
from memlens.core.search.relevance import add_field_counts
from memlens.core.search.stemming import STOPWORDS, term_of, terms

AS_OF = date(2026, 11, 22)
ROOT = Path("/vaults/alpha")


def fake_decay(memory: Memory, as_of: date) -> DecayInfo:
    """Weight and health from `native` (the ranking must not use them)."""
    weight = float(memory.native.get("w", 1.0))
    health = Health(memory.native.get("h", "active"))
    return DecayInfo(status=health.value, health=health, strength=weight, weight=weight)


def mem(
    id: str,
    title: str,
    body: str = "",
    *,
    fmt: str = "project-ocean",
    tags: tuple[str, ...] = (),
    fields: dict[str, Any] | None = None,
    confidence: float | None = None,
    **native: Any,
) -> Memory:
    return Memory(
        format=fmt,
        vault_root=ROOT,
        id=id,
        kind="observation",
        title=title,
        body=body,
        path=f"{id}.md",
        tags=tags,
        confidence=confidence,
        fields=dict(fields or {}),
        native=dict(native),
    )


def corpus() -> list[Memory]:
    return [
        # title: refund ×3, approv ×3; body: refund, approv ("the", "was" are
        # stopwords).  tf~ refund 4, approv 4; dl = 3·2 + 1·2 = 8.
        mem("d0", "Refund approvals", "The refund was approved.", w=0.01, confidence=0.1),
        # title: parcel ×3, delay ×3; tags: refund ×2; body: parcel, arriv, late.
        # tf~ parcel 4, delay 3, refund 2, arriv 1, late 1; dl = 6 + 2 + 3 = 11.
        mem("d1", "Parcel delay", "Parcels arrive late.", tags=("refund",)),
        # title: seed ×3; body: order, seed ("more" is a stopword).
        # tf~ seed 4, order 1; dl = 3 + 2 = 5.
        mem("d2", "Seeds", "Order more seeds"),
    ]


def build(memories: list[Memory]) -> SearchIndex:
    return SearchIndex.build(memories, AS_OF, decay=fake_decay)


def bm25(tf: float, dl: float, df: int, n: int = 3, avgdl: float = 8.0) -> float:
    """The formula written out once more, independently of the module."""
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    return idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * dl / avgdl))


def test_stopwords_are_dropped_and_words_stemmed() -> None:
    assert terms("The refunds were approved for approvals") == ["refund", "approv", "approv"]
    assert term_of("the") is None and term_of("x") is None
    assert term_of("running") == "run"
    # Negations carry meaning in a memory: never stopwords.
    assert {"no", "not", "nor"}.isdisjoint(STOPWORDS)


def test_fields_weigh_into_one_tf_and_length() -> None:
    d0, d1, _ = corpus()
    # Kept doubled (every weight is a multiple of 0.5): tf~ 4 is 8.
    doc = doc_terms(d0)
    assert doc.tf2 == {"refund": 8, "approv": 8}
    assert doc.length2 == 16
    doc = doc_terms(d1)
    assert doc.tf2 == {"parcel": 8, "delay": 6, "refund": 4, "arriv": 2, "late": 2}
    assert doc.length2 == 22
    counts = dict(field_counts(d1))
    assert counts["tags"] == {"refund": 1}
    assert counts["body"] == {"parcel": 1, "arriv": 1, "late": 1}
    assert dict(field_counts(d0))["body"] == {"refund": 1, "approv": 1}


def test_bm25_scores_by_hand() -> None:
    index = build(corpus())
    lex = index.lexical().view(index.state.columns.alive.view)
    assert lex.n_docs == 3 and lex.avgdl == 8.0
    hits = index.run("refunds", 10, rank="relevance").hits
    assert [h.memory.id for h in hits] == ["d0", "d1"]
    # refund: df 2 of 3.  d0: tf~ 4, dl 8 -> ln(1.6) · 8.8 / 5.2;
    # d1: tf~ 2, dl 11 -> ln(1.6) · 4.4 / (2 + 1.2 · (0.25 + 0.75 · 11/8)).
    assert hits[0].score == pytest.approx(math.log(1.6) * 8.8 / 5.2, rel=1e-12)
    assert hits[1].score == pytest.approx(math.log(1.6) * 4.4 / 3.5375, rel=1e-12)
    assert hits[1].score == pytest.approx(bm25(2.0, 11.0, 2), rel=1e-12)
    part = add_field_counts(hits[0]).explain["terms"][0]
    assert (part["term"], part["tf"], part["via"]) == ("refund", 4.0, "exact")
    assert part["idf"] == pytest.approx(math.log(1.6), rel=1e-12)
    assert part["fields"] == {"title": 1, "body": 1}
    assert hits[0].explain["rank"] == "relevance"


def test_decay_and_confidence_are_shown_not_multiplied() -> None:
    """d0 has decay weight 0.01 and confidence 0.1; relevance ignores both, recall does not."""
    index = build(corpus())
    hit = index.run("refunds", 10, rank="relevance").hits[0]
    assert hit.memory.id == "d0"
    assert hit.explain["decay_weight"] == 0.01 and hit.explain["confidence"] == 0.1
    assert hit.score == hit.explain["relevance"]
    recall = index.run("refunds", 10, rank="recall").hits
    assert recall[0].memory.id == "d1"  # the decayed d0 sinks when recalled


def test_two_words_add_up() -> None:
    index = build(corpus())
    hits = index.run("refund approval", 10, rank="relevance").hits
    # approv: df 1 -> idf ln(1 + 2.5/1.5); d0 tf~ 4, dl 8.
    expected = bm25(4.0, 8.0, 2) + bm25(4.0, 8.0, 1)
    assert hits[0].memory.id == "d0"
    assert hits[0].score == pytest.approx(expected, rel=1e-12)
    assert sum(p["contribution"] for p in hits[0].explain["terms"]) == pytest.approx(
        expected, rel=1e-12
    )


def test_a_typo_counts_as_its_word_a_little_less() -> None:
    index = build(corpus())
    hits = index.run("refnud", 10, rank="relevance").hits
    assert [h.memory.id for h in hits] == ["d0", "d1"]
    # One transposition in six letters: similarity 1 - 1/6.
    assert hits[0].score == pytest.approx(5 / 6 * bm25(4.0, 8.0, 2), rel=1e-12)
    part = hits[0].explain["terms"][0]
    assert (part["via"], part["matched"], part["similarity"]) == ("fuzzy", "refund", 5 / 6)


def test_stopwords_and_nonsense_find_nothing() -> None:
    index = build(corpus())
    assert index.run("the was more for in", 10, rank="relevance").hits == []
    assert index.run("zzzzqx qqqqvv", 10, rank="relevance").hits == []
    # Short unknown words are not guessed at (too many near words).
    assert index.run("rfd", 10, rank="relevance").hits == []
    # The recall ranking still matches on "the" (a term there): the reason for relevance.
    assert index.run("the", 10, rank="recall").hits


def test_completion_of_the_word_being_typed() -> None:
    index = build(corpus())
    hits = index.run("parc", 10, rank="relevance", as_you_type=True).hits
    assert [h.memory.id for h in hits] == ["d1"]
    assert hits[0].explain["terms"][0]["via"] == "prefix"
    assert index.run("parc", 10, rank="relevance").hits == []  # not while not typing


def test_format_text_fields_are_searched() -> None:
    """The format declares its text fields; a word only in one is found, weighted 1.5."""
    docs = [
        mem(
            "o1",
            "Webhook rejected",
            "",
            fmt="observation-v1",
            fields={"event": "Gateway signature mismatch", "context": {"task": "register"}},
        ),
        mem("o2", "Unrelated", "nothing here", fmt="observation-v1"),
    ]
    index = build(docs)
    hit = add_field_counts(index.run("signature", 10, rank="relevance").hits[0])
    assert hit.memory.id == "o1"
    assert hit.explain["terms"][0]["fields"] == {"fields": 1}
    assert hit.explain["terms"][0]["tf"] == 1.5
    assert index.run("register", 10, rank="relevance").hits[0].memory.id == "o1"


def test_archived_are_found_and_keep_their_score() -> None:
    """Relevance leaves no health out unless the query does; recall skips archived."""
    docs = [*corpus(), mem("old", "Refund desk closed", "", w=0.0, h="archived")]
    index = build(docs)
    for query in ("refund", "refund health:all"):
        hits = index.run(query, 10, rank="relevance").hits
        old = next(h for h in hits if h.memory.id == "old")
        assert old.score > 0 and old.explain["health"] == "archived"
    ids = [h.memory.id for h in index.run("refund -health:archived", 10, rank="relevance").hits]
    assert "old" not in ids and ids
    assert "old" not in [h.memory.id for h in index.run("refund", 10, rank="recall").hits]


def test_updates_are_searchable_and_removed_rows_gone() -> None:
    index = build(corpus())
    index.lexical()
    index.add(mem("d3", "Greenhouse sensors", "soil moisture gaps"))
    hits = index.run("greenhouse", 10, rank="relevance").hits
    assert [h.memory.id for h in hits] == ["d3"]
    index.remove((str(ROOT), "d0"))
    assert [h.memory.id for h in index.run("approval", 10, rank="relevance").hits] == []


def test_ties_keep_the_documented_total_order() -> None:
    """Equal relevance comes in place order (vault, path, ...), so pages are prefixes."""
    docs = [mem(f"t{i}", "Tied words", "tied body") for i in (3, 1, 2)]
    index = build(docs)
    full = index.run("tied", 10, rank="relevance").hits
    assert [h.memory.id for h in full] == ["t1", "t2", "t3"]
    for k in (1, 2):
        assert [h.memory.id for h in index.run("tied", k, rank="relevance").hits] == [
            h.memory.id for h in full[:k]
        ]


def test_unknown_ranking_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown ranking"):
        build(corpus()).run("refund", 10, rank="best")


def test_lexical_index_skips_dead_rows() -> None:
    import numpy as np

    alive = np.array([True, False, True])
    lex = LexicalIndex.build(corpus(), alive.tolist())
    assert lex.view(alive).n_docs == 2
    assert lex.term_id("parcel") is None
    assert "parcel" not in lex.surface.values()


def _ocean_vault(root: Path) -> Path:
    vault = root / "agents" / "scout" / "memory" / "vault"
    vault.mkdir(parents=True)
    (root / "agents" / "scout" / "memory" / "archive").mkdir()
    (vault / "obs-2026-11-12-001.md").write_text(
        "---\ntags: []\nsource: scout\nconfidence: 0.8\n"
        "created: 2026-11-12\ndecay: linear-40d\n---\nalpha\n"
    )
    (vault / "obs-2026-11-07-001.md").write_text(
        "---\ntags: []\nsource: scout\nconfidence: 0.5\n"
        "created: 2026-11-07\ndecay: exponential-30d\n---\n"
        "beta\nalpha gamma\n"
    )
    return root


def test_recall_ranks_by_the_reference_formula_worked_by_hand(tmp_path: Path) -> None:
    """Project Ocean's recall: cosine × confidence × decay weight (+ the title bonus), by hand.

    Documents are ``title title tags tags body`` with the title the first
    body line.  obs-11-12: "alpha" three times, one term: cosine 1, its
    title word matches (fuzzy 100): relevance 1 + 0.25; weight linear
    1 − 10/40.  obs-11-07: beta ×3, alpha, gamma; N = 2, idf alpha
    ln(3/3) + 1 = 1, idf beta = idf gamma = ln(3/2) + 1; sublinear tf
    1 + ln 3 for beta; cosine = 1 / ‖v‖; no title match; weight
    e^(−3 · 15/30).
    """
    from memlens.core import open_catalog

    catalog = open_catalog(_ocean_vault(tmp_path), cache=False)
    index = SearchIndex.from_catalog(catalog, AS_OF)
    hits = index.run("alpha", 10, rank="recall").hits
    assert [h.memory.id for h in hits] == ["scout/obs-2026-11-12-001", "scout/obs-2026-11-07-001"]
    assert hits[0].score == pytest.approx((1 + 0.25) * 0.8 * 0.75, rel=1e-12)
    idf = math.log(1.5) + 1
    norm = math.sqrt(((1 + math.log(3)) * idf) ** 2 + 1 + idf**2)
    assert hits[1].score == pytest.approx((1 / norm) * 0.5 * math.exp(-1.5), rel=1e-12)
    # The same vault by relevance: no decay or confidence in the score.
    rel = index.run("alpha", 10, rank="relevance").hits
    assert all(h.score == h.explain["relevance"] for h in rel)


def _relevance_page(index: SearchIndex, query: str) -> list[tuple[str, float, Any]]:
    hits = index.run(query, 10, rank="relevance").hits
    return [(h.memory.id, h.score, h.explain) for h in hits]


@pytest.mark.parametrize("query", ["refunds parcel", "seed order", "parcl", "late arrivals"])
def test_an_updated_index_scores_as_a_fresh_build(query: str) -> None:
    """N, df and avgdl are counted over the live rows: removals and additions leave no trace."""
    d0, d1, d2 = corpus()
    d3 = mem("d3", "Parcel refunds", "A refund for the late parcel was approved.")
    d1_edited = mem("d1", "Parcel delay", "Parcels arrive late; the seller refunds.")
    index = build([d0, d1, d2])
    index.run(query, 10, rank="relevance")  # the relevance index exists before the updates
    index.remove(d0.key)
    index.update(d1_edited)
    index.add(d3)
    fresh = build([d1_edited, d2, d3])
    assert _relevance_page(index, query) == _relevance_page(fresh, query)


def test_a_word_only_removed_rows_held_is_not_matched() -> None:
    d0, d1, d2 = corpus()
    index = build([d0, d1, d2])
    index.run("parcel", 10, rank="relevance")
    index.remove(d1.key)
    # "parcel" is gone with d1: neither an exact match nor a typo's guess.
    assert index.run("parcel", 10, rank="relevance").hits == []
    assert index.run("parcels", 10, rank="relevance").hits == []
    assert index.run("parcl", 10, rank="relevance").hits == []


@pytest.fixture(params=["one process", "half in a worker", "a worker that fails", "no packed sort"])
def collect_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Build the relevance index in one process, with half the rows collected by a
    parse worker, with a worker that answers nothing (collected here again), and
    summed by a stable argsort instead of the packed sort."""
    import memlens.core.search.bm25_build as bulk
    from memlens.core import workers

    mode: str = request.param
    if mode in ("one process", "no packed sort"):
        monkeypatch.setattr(bulk, "PARALLEL_MIN", 10**9)
        if mode == "no packed sort":  # as for a vocabulary too big to pack with the rows
            monkeypatch.setattr(bulk, "_VALUE_BITS", 0)
        return mode
    monkeypatch.setattr(bulk, "PARALLEL_MIN", 2)
    monkeypatch.setattr(workers, "spare_cpu", lambda: True)
    monkeypatch.delenv(workers.PARALLEL_ENV, raising=False)
    if mode == "a worker that fails":
        monkeypatch.setattr(workers, "run_in_worker", lambda _req: lambda: None)
    else:
        real = workers.run_in_worker

        def only_real(req: tuple[object, ...]) -> object:
            wait = real(req)
            assert wait is not None, "no worker started"
            return wait

        monkeypatch.setattr(workers, "run_in_worker", only_real)
    return mode


def test_the_bulk_build_equals_summing_each_rows_terms(collect_mode: str) -> None:
    """`build_source` gives exactly the postings, lengths, term order and words of
    adding up `doc_terms` row by row: dead rows skipped, fields weighted, a word
    in several fields of a row summed once, non-ASCII words, capped tf; the
    same when a worker collected the later rows (its words renumbered)."""
    import numpy as np

    from memlens.core.search.bm25 import TF2_MAX, build_source

    memories = [
        *corpus(),
        mem("e0", "Été café", "Le café d'été; CAFÉ again, and naïve résumés.", tags=("café",)),
        mem("e1", "Empty", ""),
        mem("e2", "the of and", "a an the"),  # nothing but stopwords
        mem("e3", "Parcel refunds", "parcel " * 40_000, tags=("parcel", "refund")),
        mem("e4", "Seeds and parcels", "Seeds, seeds; parcels!", fields={"event": "x"}),
        mem("e5", "Late words", "zebra café parcels quokka; the late refund"),  # new and old words
    ]
    alive = [True, True, False, True, True, True, True, True, True]
    source, dl2 = build_source(memories, alive)

    expected: dict[str, dict[int, int]] = {}
    order: list[str] = []
    surface: dict[str, str] = {}
    lengths = [0] * len(memories)
    for row, m in enumerate(memories):
        if not alive[row]:
            continue
        doc = doc_terms(m)
        lengths[row] = doc.length2
        surface.update(doc.surface)
        for t, v in doc.tf2.items():
            if t not in expected:
                order.append(t)
            expected.setdefault(t, {})[row] = v
    assert source.terms == order
    assert list(source.surface.items()) == list(surface.items())
    assert dl2.tolist() == lengths and dl2.dtype == np.int64
    for t, rows, tf2 in source.items():
        assert dict(zip(rows.tolist(), tf2.tolist(), strict=True)) == expected[t]
        assert rows.tolist() == sorted(expected[t])
    assert "order" not in source.surface  # only the dead row says it
    assert max(expected[term_of("parcel") or ""].values()) == TF2_MAX  # capped, not wrapped
