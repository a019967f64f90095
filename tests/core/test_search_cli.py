"""`memlens search` through click's CliRunner, on the public fixtures."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from memlens.tui.cli.search import search

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def run(*args: str) -> Result:
    return CliRunner().invoke(search, [str(FIXTURES), *args, "--as-of", "2026-11-22"])


def as_json(*args: str) -> Any:
    result = run(*args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_json_hits_are_list_records_plus_score_and_explain() -> None:
    # The recall ranking's formula (the default is relevance: see below).
    hits = as_json("northline", "--json", "--rank", "recall")
    assert len(hits) == 2 and hits[0]["id"] == "courier/obs-2026-11-18-001"
    for rank, h in enumerate(hits, 1):
        for key in ("vault", "format", "id", "path", "kind", "title", "tags", "status", "health"):
            assert key in h
        assert h["vault"] == "project-ocean"
        assert h["rank"] == rank
        # Project Ocean ranks recall by its own script's formula (`adapter.recall`).
        e = h["explain"]
        assert e["rank"] == "recall" and "formula" in e
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)


def test_limit_and_negation_argument() -> None:
    hits = as_json("fraud", "-agent:shared", "--json", "--limit", "2")
    assert len(hits) == 2 and not any(h["id"].startswith("shared/") for h in hits)
    longer = as_json("fraud", "-agent:shared", "--json", "--limit", "3")
    assert [h["id"] for h in longer[:2]] == [h["id"] for h in hits]


def test_ocean_format_and_script_flags() -> None:
    out = as_json("fraud", "--agent", "sentinel", "--format", "ocean")
    assert out["total"] == len(out["results"]) <= 5  # the script's default limit
    first = out["results"][0]
    assert set(first) >= {
        "score",
        "file",
        "path",
        "source",
        "tags",
        "confidence",
        "created",
        "snippet",
    }
    assert first["file"] == "obs-2026-02-03-001.md"
    # The script prints absolute paths (its repository root, resolved).
    vault = (FIXTURES / "project-ocean").resolve()
    assert first["path"] == str(vault / "agents/sentinel/memory/vault/obs-2026-02-03-001.md")
    # --agent includes shared/ unless --no-shared
    assert any(r["path"].startswith(f"{vault}/shared/") for r in out["results"])
    out = as_json("fraud", "--agent", "sentinel", "--no-shared", "--format", "ocean")
    assert not any(r["path"].startswith(f"{vault}/shared/") for r in out["results"])
    assert all("/sentinel/" in r["path"] for r in out["results"])


def test_tags_and_min_confidence_flags() -> None:
    hits = as_json("fraud", "--tags", "block,refunds", "--json")
    assert hits and all({"block", "refunds"} & set(h["tags"]) for h in hits)
    hits = as_json("policy", "--min-confidence", "0.95", "--json")
    assert {h["id"] for h in hits} == {
        "sentinel/obs-2026-02-03-001",
        "shared/obs-2026-02-03-001",
        "sentinel/obs-2026-04-01-001",
    }


def test_no_hits_is_exit_0_and_bad_query_exit_2() -> None:
    assert as_json("zzzqqqxx", "--json") == []
    result = run("nosuch:thing")
    assert result.exit_code == 2
    assert "nosuch:thing" in result.output
    assert run("x", "--agent", "a", "--all").exit_code == 2


def test_text_output_with_explain() -> None:
    result = run("playtst", "--explain", "--rank", "recall")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split("\t")[:3] == ["#", "score", "format"]
    assert "1b8e5f2c-a7d3-4e69-8f04-d2b7c61a9e30" in lines[1]
    assert "playtst~playtest" in lines[2]


def test_relevance_is_the_default_and_shows_decay_beside_the_score() -> None:
    """Relevance: the score is BM25F alone, decay and confidence are explain fields, and an
    archived memory is found without a health: filter (its health says so)."""
    hits = as_json("northline", "--json")
    assert hits and all(h["ranking"] == "relevance" for h in hits)
    for place, h in enumerate(hits, 1):
        e = h["explain"]
        assert h["rank"] == place and e["rank"] == "relevance"
        assert h["score"] == e["relevance"] == e["score"]
        assert {"confidence", "decay_weight", "importance", "health"} <= set(e)
        assert math.isclose(h["score"], math.fsum(t["contribution"] for t in e["terms"]))
    assert "archived" in {h["health"] for h in hits}
    recall = as_json("northline", "--json", "--rank", "recall")
    assert "archived" not in {h["health"] for h in recall}
    # --limit k is a prefix of --limit k+1 under relevance too.
    for k in range(1, len(hits)):
        assert [h["id"] for h in as_json("northline", "--json", "--limit", str(k))] == [
            h["id"] for h in hits[:k]
        ]
    text = run("playtst", "--explain")
    assert text.exit_code == 0 and "playtst~playtest" in text.stdout
