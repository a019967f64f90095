"""The review queue's precision: observations that vary over time, templated notes, meaning.

- clause pairs that are (or are not) a contradiction once time is taken
  into account: a standing fact against an observation of one moment;
- notes written from templates (`bench.generate`) hold no contradiction
  and no duplicate by construction, so the queue over them must be empty;
- paraphrases found by the search index's meaning vectors, here from a
  stand-in model (the tests run with MEMLENS_SEMANTIC=0), and the JSON
  saying which similarities were used.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from pathlib import Path

import pytest
import review_vaults as rv

from bench.generate import generate
from memlens.core.curation import review, review_json, review_run
from memlens.core.curation.conflicts import claims, compare
from memlens.core.scan.vault import open_catalog
from memlens.core.search.index import SearchIndex

AS_OF = date(2026, 11, 22)
DAY1, DAY2 = "2026-11-01", "2026-11-02"


def _conflicts(a: str, b: str, day_a: str = DAY1, day_b: str = DAY2) -> list[str]:
    found = [compare(x, y) for x in claims("", a, day_a) for y in claims("", b, day_b)]
    return [c.how for c in found if c is not None]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # A reading of a measured quantity on two days.
        ("Disk usage on db-03 is at 71%.", "Disk usage on db-03 is at 80%."),
        ("The p95 latency of checkout is 120ms.", "The p95 latency of checkout is 340ms."),
        (
            "The gateway serves 500 requests per second.",
            "The gateway serves 90 requests per second.",
        ),
        # Past events and log lines with counts.
        ("The nightly backup took 40 minutes.", "The nightly backup took 95 minutes."),
        ("Logs showed 12 timeouts from the gateway.", "Logs showed 30 timeouts from the gateway."),
        (
            "We raised max_connections to 20 on the primary.",
            "We raised max_connections to 50 on the primary.",
        ),
        ("We split socket_timeout to 500 for now.", "We split socket_timeout to 10 for now."),
        (
            "`emit_batch` was called 90 times per request.",
            "`emit_batch` was called 60 times per request.",
        ),
        # Anchored to a happening.
        (
            "After that restores take 8 minutes end to end.",
            "After that restores take 20 minutes end to end.",
        ),
        # A question, a heading that asks, a label.
        ("Should the checkout pool size be 20?", "The checkout pool size is 50."),
        (
            "How to grep the postgres connection pool (517)",
            "How to grep the postgres connection pool (714)",
        ),
        # Two dated events of different days.
        (
            "On 2026-11-14 the restore took 40 minutes.",
            "On 2026-11-15 the restore took 95 minutes.",
        ),
    ],
)
def test_observations_of_different_times_do_not_conflict(a: str, b: str) -> None:
    assert _conflicts(a, b) == []


@pytest.mark.parametrize(
    ("a", "b", "how", "same_day"),
    [
        # Standing facts conflict whenever they were written.
        ("The deploy window is Tuesday.", "The deploy window is Thursday.", "value", False),
        ("max_connections is 100", "max_connections is 200", "setting", False),
        (
            "The connection pool size for orders is 20.",
            "The connection pool size for orders is 50.",
            "value",
            False,
        ),
        (
            "The feature is enabled for admins.",
            "The feature is not enabled for admins.",
            "negation",
            False,
        ),
        # When a one-off thing happened is a fact too.
        ("Alice joined the team in 2023.", "Alice joined the team in 2021.", "value", False),
        (
            "The billing release shipped on 2026-03-01.",
            "The billing release shipped on 2026-03-15.",
            "value",
            False,
        ),
        # An event of one named date, or readings of one day, are one moment.
        (
            "On 2026-11-14 the restore took 40 minutes.",
            "On 2026-11-14 the restore took 95 minutes.",
            "value",
            False,
        ),
        ("Disk usage on db-03 is at 71%.", "Disk usage on db-03 is at 80%.", "value", True),
    ],
)
def test_facts_and_one_moment_conflict(a: str, b: str, how: str, same_day: bool) -> None:
    assert _conflicts(a, b, DAY1, DAY1 if same_day else DAY2) == [how]


def test_generated_template_notes_hold_no_candidate(tmp_path: Path) -> None:
    # bench.generate composes notes from sentence templates with random
    # numbers: many share a sentence shape ("After that restores take N
    # minutes", "We raised X to N") but none states another's fact.
    generate(tmp_path / "gen", 400, seed=7)
    catalog = open_catalog(tmp_path / "gen")
    assert len(list(catalog.memories())) == 400
    items = review(catalog.vaults, AS_OF)
    assert [(i.candidate.kind, i.candidate.reason) for i in items] == []


# ------------------------------------------------------------------ meaning


def _pairs(items: Sequence[object]) -> dict[frozenset[str], tuple[str, dict[str, float]]]:
    out = {}
    for item in items:
        c = item.candidate  # type: ignore[attr-defined]
        out[frozenset(m.id for m in c.members)] = (c.kind, c.measures)
    return out


@pytest.mark.parametrize("fmt", rv.FORMATS)
def test_meaning_vectors_find_the_paraphrase_pair(tmp_path: Path, fmt: str) -> None:
    root = rv.build(tmp_path, fmt)
    catalog = open_catalog(root)
    ids = rv.ids(catalog.memories())
    index = SearchIndex.build(catalog.memories(), AS_OF, vaults=catalog.vaults)
    index.enable_semantic(rv.StandInEmbedder())
    run = review_run(catalog.vaults, AS_OF, meaning=index.meaning_vectors)
    assert "meaning" in run.similarities
    found = _pairs(run.items)
    pair = frozenset(ids[k] for k in rv.VECTOR_PAIR)
    kind, measures = found[pair]
    assert kind == "duplicate" and measures["meaning"] >= 0.9
    # Meaning adds that pair only: planted pairs kept their kind, no decoy came in.
    for (a, b), planted in rv.PLANTED.items():
        assert found[frozenset((ids[a], ids[b]))][0] == planted
    for a, b in rv.DECOYS:
        assert frozenset((ids[a], ids[b])) not in found
    assert len(found) == len(rv.PLANTED) + 1
    doc = review_json(run.items, AS_OF, run.similarities)
    assert doc["similarities"]["meaning"] is True
    assert "meaning" in doc["similarities"]["used"]


def test_without_meaning_the_json_says_lexical_only(tmp_path: Path) -> None:
    root = rv.build(tmp_path, "observation-v1")
    catalog = open_catalog(root)
    index = SearchIndex.build(catalog.memories(), AS_OF)  # semantic never enabled
    run = review_run(catalog.vaults, AS_OF, meaning=index.meaning_vectors)
    doc = review_json(run.items, AS_OF, run.similarities)
    assert doc["similarities"]["meaning"] is False
    assert doc["similarities"]["used"] == ["char3", "jaccard", "tfidf"]
    assert "lexical only" in doc["similarities"]["note"]
    ids = rv.ids(catalog.memories())
    assert frozenset(ids[k] for k in rv.VECTOR_PAIR) not in _pairs(run.items)
