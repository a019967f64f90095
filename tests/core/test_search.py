"""SearchIndex on hand-made memories: ranking, filters, explain, incremental, similar."""

from __future__ import annotations

import json
import math
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from memlens.core.model import DecayInfo, Health, Memory
from memlens.core.search.index import FUZZY_WEIGHT, Hit, SearchIndex, analyze, index_text
from memlens.core.search.query import QueryError

AS_OF = date(2026, 11, 22)
ROOT_A = Path("/vaults/alpha")
ROOT_B = Path("/vaults/beta")


def fake_decay(memory: Memory, as_of: date) -> DecayInfo:
    """Weight and health from `native`; weight halves once as_of passes `native['halve_on']`."""
    weight = float(memory.native.get("w", 1.0))
    halve_on = memory.native.get("halve_on")
    if halve_on is not None and as_of >= halve_on:
        weight /= 2
    health = Health(memory.native.get("h", "active"))
    return DecayInfo(
        status=memory.native.get("s", health.value), health=health, strength=weight, weight=weight
    )


def mem(
    id: str,
    title: str,
    body: str = "",
    *,
    root: Path = ROOT_A,
    fmt: str = "project-ocean",
    kind: str = "observation",
    tags: tuple[str, ...] = (),
    confidence: float | str | None = 0.8,
    importance: float | None = None,
    created: date | None = date(2026, 11, 1),
    source: str | None = None,
    **native: Any,
) -> Memory:
    return Memory(
        format=fmt,
        vault_root=root,
        id=id,
        kind=kind,
        title=title,
        body=body,
        path=f"{id}.md",
        tags=tags,
        importance=importance,
        confidence=confidence,
        created=created,
        source=source,
        native=dict(native),
    )


def corpus() -> list[Memory]:
    return [
        mem("a1", "Consent rule for lead forms", "Every lead form must name one seller.",
            tags=("consent", "tcpa"), confidence=0.9, agent="hawk", source="hawk"),
        mem("a2", "Consent checkbox pre-ticked", "Blocked LeadFlowX on mobile.",
            tags=("consent", "block"), confidence=0.5, agent="shield", source="shield"),
        mem("a3", "Queue depth incident", "Intake queue depth hit 4,200; consumers scaled.",
            tags=("intake", "queue"), confidence=None, agent="shared", source="watchtower"),
        mem("a4", "Expired latency note", "Lead API latency reached 1.8 s.",
            tags=("latency",), h="expired", w=0.0),
        mem("a5", "Archived pricing", "Pricing agreed with Apex: 65 per lead.",
            tags=("pricing",), h="archived", w=0.0),
        mem("b1", "Restic prune lock", "Restic left a stale lock after an OOM kill.",
            root=ROOT_B, fmt="cognitive-memory", kind="fix", tags=("restic", "backup"),
            confidence=0.8, importance=0.6, created=date(2026, 6, 30), w=0.5),
        mem("b2", "Backups need a restore drill", "A backup is real only after a restore.",
            root=ROOT_B, fmt="cognitive-memory", kind="insight", tags=("backup",),
            confidence="high", importance=0.95, created=date(2025, 9, 14)),
        mem("b3", "Tombstoned", "", root=ROOT_B, fmt="experience-records", kind="occurrence",
            h="tombstoned", w=0.0),
    ]  # fmt: skip


@pytest.fixture
def index() -> SearchIndex:
    return SearchIndex.build(corpus(), AS_OF, decay=fake_decay)


def ids(hits: list[Hit]) -> list[str]:
    return [h.memory.id for h in hits]


def assert_explained(hit: Hit) -> None:
    """The explain parts combine to the score exactly as documented."""
    e = hit.explain
    assert math.isclose(
        e["cosine"], math.fsum(t["contribution"] for t in e["terms"]), abs_tol=1e-15
    )
    for t in e["terms"]:
        assert t["contribution"] == t["query_weight"] * t["doc_weight"]
    assert e["fuzzy_bonus"] == FUZZY_WEIGHT * e["fuzzy"] / 100.0
    relevance = 1.0 if e["filter_only"] else e["cosine"] + e["fuzzy_bonus"]
    assert e["relevance"] == relevance
    assert hit.score == e["score"] == relevance * e["confidence"] * e["decay_weight"]


# ----------------------------------------------------------------- tf-idf


def test_analyzer_matches_scikit_learn_default() -> None:
    from sklearn.feature_extraction.text import TfidfVectorizer

    text = "Debt-relief CPL $38.20 — 客户说 pg_dump_nightly.sh x DR-14 Québec"
    assert analyze(text) == TfidfVectorizer().build_analyzer()(text)


def test_own_transform_equals_the_fitted_rows(index: SearchIndex) -> None:
    # incremental updates rely on re-deriving exactly what scikit-learn fitted
    for row, m in enumerate(corpus()):
        ids_, weights = index.state.terms.vector(index_text(m), extend=False)
        for tid, w in zip(ids_, weights, strict=True):
            assert math.isclose(index.state.terms.doc_weight(row, tid), w, rel_tol=1e-12)
        assert math.isclose(math.fsum(w * w for w in weights), 1.0) or not weights


def test_score_is_cosine_times_confidence_times_weight(index: SearchIndex) -> None:
    hits = index.search("restore drill backup")
    assert ids(hits)[0] == "b2"
    for h in hits:
        assert_explained(h)
    b2 = hits[0].explain
    assert b2["confidence"] == 0.9 and b2["confidence_from"] == "word"
    assert {t["term"] for t in b2["terms"]} == {"restore", "drill", "backup"}


def test_missing_confidence_counts_as_one(index: SearchIndex) -> None:
    (hit,) = index.search("intake")
    assert hit.memory.id == "a3"
    assert hit.explain["confidence"] == 1.0 and hit.explain["confidence_from"] == "missing"


def test_confidence_orders_equal_text(index: SearchIndex) -> None:
    hits = index.search("consent")
    assert ids(hits) == ["a1", "a2"]  # 0.9 beats 0.5


def test_decay_weight_scales_the_score() -> None:
    ms = [
        mem("x", "Restic lock", "stale restic lock", w=1.0),
        mem("y", "Restic lock", "stale restic lock", w=0.25),
    ]
    index = SearchIndex.build(ms, AS_OF, decay=fake_decay)
    hx, hy = index.search("restic lock")
    assert (hx.memory.id, hy.memory.id) == ("x", "y")
    assert math.isclose(hy.score, hx.score * 0.25)


def test_as_of_recomputes_decay() -> None:
    ms = [mem("x", "Restic lock", "restic", halve_on=AS_OF + timedelta(days=10))]
    index = SearchIndex.build(ms, AS_OF, decay=fake_decay)
    now = index.search("restic")[0].score
    later = index.search("restic", as_of=AS_OF + timedelta(days=10))[0].score
    assert math.isclose(later, now / 2)
    assert index.as_of == AS_OF + timedelta(days=10)


# ------------------------------------------------------------------ fuzzy


def test_misspelt_word_found_by_fuzzy_title_match(index: SearchIndex) -> None:
    hits = index.search("restik")
    assert ids(hits)[0] == "b1"
    e = hits[0].explain
    assert e["cosine"] == 0.0 and e["terms"] == []
    assert e["fuzzy_matches"][0]["matched"] == "restic"
    assert 80 <= e["fuzzy"] < 100
    assert_explained(hits[0])


def test_search_as_you_type_completes_the_last_word(index: SearchIndex) -> None:
    assert ids(index.search("consent chec")) == ["a1", "a2"]  # "chec" is no word
    hits = index.search("consent chec", as_you_type=True)
    assert ids(hits)[0] == "a2"  # "chec" -> "checkbox"
    assert any(t["term"] == "checkbox" for t in hits[0].explain["terms"])


# ---------------------------------------------------------------- filters


def test_default_excludes_expired_archived_tombstoned(index: SearchIndex) -> None:
    assert index.search("latency") == []
    assert ids(index.search("latency health:expired")) == ["a4"]
    assert ids(index.search("pricing status:archived")) == ["a5"]
    assert ids(index.search("health:tombstoned")) == ["b3"]
    assert set(ids(index.search("lead health:all"))) >= {"a1", "a4", "a5"}
    assert "a4" in ids(index.search("latency", include_inactive=True))
    # a negated health filter keeps the default exclusion
    assert ids(index.search("lead -health:fading")) == ["a1"]


def test_tag_filters(index: SearchIndex) -> None:
    assert ids(index.search("tag:consent")) == ["a1", "a2"]
    assert ids(index.search("tag:block,queue")) == ["a3", "a2"]  # a3 conf 1.0
    assert set(ids(index.search("tag:con*"))) == {"a1", "a2"}
    assert ids(index.search("tag:consent -tag:block")) == ["a1"]
    assert ids(index.search("tag:consent tag:tcpa")) == ["a1"]


def test_kind_format_vault_agent_source(index: SearchIndex) -> None:
    assert ids(index.search("type:fix")) == ["b1"]
    assert set(ids(index.search("format:cognitive"))) == {"b1", "b2"}
    assert set(ids(index.search("-format:ocean"))) == {"b1", "b2"}
    assert set(ids(index.search("vault:beta"))) == {"b1", "b2"}
    assert ids(index.search("agent:hawk")) == ["a1"]
    assert set(ids(index.search("agent:hawk,shared"))) == {"a1", "a3"}
    assert set(ids(index.search("-agent:hawk tag:consent"))) == {"a2"}
    assert ids(index.search("source:watch")) == ["a3"]
    assert set(ids(index.search("agent:beta"))) == {"b1", "b2"}  # a vault name counts


def test_dates_and_numbers(index: SearchIndex) -> None:
    assert ids(index.search("before:2026-01-01")) == ["b2"]
    assert set(ids(index.search("after:2026-10-31"))) == {"a1", "a2", "a3"}
    assert set(ids(index.search("-after:2026-10-31"))) == {"b1", "b2"}
    assert ids(index.search("importance>0.9")) == ["b2"]
    assert ids(index.search("importance<=0.6")) == ["b1"]
    assert set(ids(index.search("confidence>=0.9"))) == {"a3", "a1", "b2"}
    assert ids(index.search("confidence<0.6")) == ["a2"]
    assert ids(index.search("confidence:high")) == ["a1", "b2"]  # 0.9 and "high"
    assert ids(index.search("-importance>0.5 format:cognitive")) == []


def test_excluded_words_and_phrases(index: SearchIndex) -> None:
    assert ids(index.search("consent -mobile")) == ["a1"]
    assert ids(index.search('consent -"one seller"')) == ["a2"]
    assert ids(index.search("backup -restic")) == ["b2"]


def test_phrases_must_appear(index: SearchIndex) -> None:
    assert ids(index.search('"queue depth"')) == ["a3"]
    assert ids(index.search('"depth hit 4,200"')) == ["a3"]
    assert index.search('"pth hi"') == []  # phrases start and end at word boundaries
    assert index.search('"queue dep"') == []  # closed: "dep" is not a word here
    assert ids(index.search('"queue dep')) == ["a3"]  # open (being typed): a prefix
    assert ids(index.search('"dep')) == ["a3"]
    assert index.search('"f') == []  # no word of two letters yet
    assert index.search('"depth queue"') == []
    assert ids(index.search('consent "pre-ticked"')) == ["a2"]


def test_filter_only_query_ranks_by_confidence_and_weight(index: SearchIndex) -> None:
    hits = index.search("format:ocean")
    assert ids(hits) == ["a3", "a1", "a2"]
    for h in hits:
        assert h.explain["filter_only"] and h.explain["relevance"] == 1.0
        assert_explained(h)


def test_empty_and_unknown(index: SearchIndex) -> None:
    assert index.search("") == []
    assert index.search("zzzqqq") == []
    with pytest.raises(QueryError):
        index.search("nosuch:filter")
    res = index.run("consent", limit=1)
    assert res.total == 2 and len(res.hits) == 1


# ------------------------------------------------------------ incremental


def rebuild_ids(memories: list[Memory], query: str) -> list[str]:
    return ids(SearchIndex.build(memories, AS_OF, decay=fake_decay).search(query))


def test_update_add_remove_match_a_rebuild(index: SearchIndex) -> None:
    docs = {m.id: m for m in corpus()}
    changed = mem("a2", "Consent checkbox fixed", "LeadFlowX fixed the consent checkbox.",
                  tags=("consent",), confidence=0.95, agent="shield")  # fmt: skip
    index.update(changed)
    docs["a2"] = changed
    new = mem("c1", "Consent audit", "Quarterly consent audit of every lead source.",
              tags=("consent", "audit"), confidence=0.7)  # fmt: skip
    index.add(new)
    docs["c1"] = new
    index.remove((str(ROOT_B), "b1"))
    del docs["b1"]
    for query in ("consent", "consent checkbox", "audit", "restic", "lead", "tag:consent"):
        assert ids(index.search(query)) == rebuild_ids(list(docs.values()), query), query
    assert "a2" not in ids(index.search("mobile"))  # the old text is gone
    assert len(index) == len(docs)
    for h in index.search("consent audit lead"):
        assert_explained(h)


def test_new_terms_are_searchable_before_a_rebuild(index: SearchIndex) -> None:
    index.add(mem("c2", "Zeppelin hangar", "The zeppelin hangar lease renews in May."))
    hits = index.search("zeppelin")
    assert ids(hits) == ["c2"]
    assert hits[0].explain["terms"][0]["term"] == "zeppelin"
    assert ids(index.search("-zeppelin hangar")) == []
    assert_explained(hits[0])


def test_remove_unknown_key_raises(index: SearchIndex) -> None:
    from memlens.core.errors import NotFoundError

    with pytest.raises(NotFoundError):
        index.remove((str(ROOT_A), "nope"))


def test_needs_rebuild_after_many_changes(index: SearchIndex) -> None:
    assert not index.needs_rebuild
    for m in corpus():
        index.update(m)
    assert index.needs_rebuild


# ------------------------------------------------- similar and duplicates


def test_similar_by_tfidf(index: SearchIndex) -> None:
    a1 = corpus()[0]
    hits = index.similar(a1, k=3)
    assert ids(hits)[0] == "a2"  # shares "consent" in title and tags
    assert "a1" not in ids(hits)
    assert all(0 < h.score <= 1 for h in hits)
    assert math.isclose(
        hits[0].score, math.fsum(t["contribution"] for t in hits[0].explain["terms"])
    )


def test_similar_by_stored_vectors(tmp_path: Path) -> None:
    ms = [
        mem("u1", "One", "alpha", root=tmp_path, fmt="cognitive-memory"),
        mem("u2", "Two", "beta", root=tmp_path, fmt="cognitive-memory"),
        mem("u3", "Three", "gamma", root=tmp_path, fmt="cognitive-memory"),
    ]
    (tmp_path / "_embeddings.json").write_text(
        json.dumps({"model": "m", "entries": {"u1": [1, 0], "u2": [0.9, 0.1], "u3": [0, 1]}})
    )
    index = SearchIndex.build(ms, AS_OF, decay=fake_decay)
    hits = index.similar(ms[0], k=2, by="vectors")
    assert ids(hits) == ["u2", "u3"]
    assert math.isclose(hits[0].score, 0.9 / math.hypot(0.9, 0.1))
    assert hits[1].score == 0.0
    assert index.has_vectors(ms[0])
    # a vault without vectors: nothing, not an error
    other = SearchIndex.build(corpus(), AS_OF, decay=fake_decay)
    assert other.similar(corpus()[0], by="vectors") == []


def test_near_duplicates_across_vaults() -> None:
    text = "Runbook: when the intake queue backs up, scale the consumer deployment first."
    ms = [
        mem("d1", "Runbook intake", text, root=ROOT_A),
        mem("d2", "Runbook intake", text, root=ROOT_B),
        mem("d3", "Runbook intake", text + " Then check buyers.", root=ROOT_A),
        mem("d4", "Unrelated", "Garage shelving project and paint colours."),
    ]
    index = SearchIndex.build(ms, AS_OF, decay=fake_decay)
    groups = index.near_duplicates(0.99)
    assert len(groups) == 1
    assert {m.id for m in groups[0].memories} == {"d1", "d2"}
    assert groups[0].cross_vault
    assert math.isclose(groups[0].pairs[0][2], 1.0)
    loose = index.near_duplicates(0.8)
    assert {m.id for m in loose[0].memories} == {"d1", "d2", "d3"}
    assert index.near_duplicates(0.99, cross_vault_only=True)[0].cross_vault


def test_core_search_imports_no_scikit_learn_until_built() -> None:
    import subprocess
    import sys

    code = (
        "import sys, memlens.core.search.index as s; "
        "assert 'sklearn' not in sys.modules, 'sklearn imported eagerly'; "
        "assert 'textual' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_many_phrase_candidates_are_checked_lazily(monkeypatch: pytest.MonkeyPatch) -> None:
    import memlens.core.search.phrases as search_mod

    ms = [
        mem(f"p{i:03d}", f"Note {i}", f"alpha beta {'gamma' if i % 3 else 'delta'} {i}")
        for i in range(60)
    ]
    index = SearchIndex.build(ms, AS_OF, decay=fake_decay)
    exact = index.run('"alpha beta gamma"', limit=5)
    assert exact.total_exact and exact.total == 40
    monkeypatch.setattr(search_mod, "VERIFY_ALL_MAX", 10)
    lazy = index.run('"alpha beta gamma"', limit=5)
    assert not lazy.total_exact and lazy.total >= 40
    assert ids(lazy.hits) == ids(exact.hits)
    assert ids(index.search('alpha -"beta delta"', limit=60)) == ids(
        index.search("alpha -delta", limit=60)
    )


def test_an_empty_index_builds_and_answers_nothing() -> None:
    from datetime import date

    from memlens.core.search.index import SearchIndex

    index = SearchIndex.build([], date(2026, 11, 22))
    assert len(index) == 0
    assert index.search("anything") == []
