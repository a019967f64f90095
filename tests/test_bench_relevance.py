"""The relevance benchmark's arithmetic and its judgements (bench/relevance.py)."""

from __future__ import annotations

import json
import math

import pytest

from bench.relevance import KINDS, QUERIES, Judged, summarise


def test_metrics_worked_by_hand() -> None:
    # Relevant a, b; hits put b at rank 2 and a at rank 7.
    j = Judged("lexical", "q", ["a", "b"], hits=["x", "b", "y", "z", "w", "v", "a"])
    assert j.ranks() == [2, 7]
    assert j.reciprocal_rank() == 0.5
    # DCG = 1/log2(3) + 1/log2(8); ideal = 1/log2(2) + 1/log2(3).
    dcg = 1 / math.log2(3) + 1 / 3
    ideal = 1 + 1 / math.log2(3)
    assert j.ndcg() == pytest.approx(dcg / ideal)
    assert j.recall() == 0.5  # b within the first five, a not
    none = Judged("typo", "q", ["a"], hits=["x", "y"])
    assert (none.reciprocal_rank(), none.ndcg(), none.recall()) == (0.0, 0.0, 0.0)


def test_summary_per_kind_and_overall() -> None:
    judged = [
        Judged("lexical", "q1", ["a"], hits=["a"]),
        Judged("lexical", "q2", ["a"], hits=["x", "a"]),
        Judged("typo", "q3", ["a"], hits=[]),
    ]
    figures = summarise(judged)
    assert figures["lexical"]["mrr"] == pytest.approx(0.75)
    assert figures["typo"]["mrr"] == 0.0
    assert figures["overall"]["mrr"] == pytest.approx(1.5 / 3)
    assert figures["overall"]["queries"] == 3
    assert "paraphrase" not in figures


def test_judgement_file_is_well_formed() -> None:
    spec = json.loads(QUERIES.read_text(encoding="utf-8"))
    queries = spec["queries"]
    assert {q["kind"] for q in queries} == set(KINDS)
    assert len({q["q"] for q in queries}) == len(queries), "no query twice"
    for q in queries:
        assert q["relevant"], q["q"]
        assert all("/" in key for key in q["relevant"]), q["q"]


def test_every_judged_memory_is_in_the_test_vaults() -> None:
    from memlens.core.scan.vault import open_catalog

    spec = json.loads(QUERIES.read_text(encoding="utf-8"))
    root = QUERIES.parent.parent / spec["vaults"]
    catalog = open_catalog(root)
    held = {f"{m.vault_root.relative_to(root).as_posix()}/{m.id}" for m in catalog.memories()}
    judged = {key for q in spec["queries"] for key in q["relevant"]}
    assert judged <= held, sorted(judged - held)
