"""`memlens preview`: the JSON document's shape, the agent filter, the text output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from memlens.tui.cli.main import cli
from memlens.tui.cli.preview import budget_bar


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_preview_json_shape_over_every_format(own_fixtures_dir: Path) -> None:
    res = run(
        "preview",
        str(own_fixtures_dir),
        "--as-of",
        "2026-11-22",
        "--prompt",
        "carrier contract rates",
        "--json",
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert set(doc) >= {"as_of", "agent", "prompt", "tokens", "token_estimate", "vaults"}
    assert doc["as_of"] == "2026-11-22"
    formats = {v["format"]: v for v in doc["vaults"]}
    assert set(formats) == {
        "cognitive-memory",
        "dream-cycle",
        "experience-records",
        "observation-v1",
        "project-ocean",
    }
    for v in doc["vaults"]:
        assert set(v) >= {"vault", "format", "label", "tokens", "sections"}
        for s in v["sections"]:
            assert set(s) >= {"key", "title", "stage", "agent", "tokens", "count", "entries"}
            assert s["count"] == len(s["entries"])
            assert s["tokens"] >= 0
            for e in s["entries"]:
                assert set(e) >= {"id", "title", "path", "tokens", "chars", "score", "note"}
                assert e["tokens"] == -(-e["chars"] // 4)
    core = formats["cognitive-memory"]["sections"][0]
    assert core["key"] == "core"
    assert core["budget"]["limit_chars"] == 12_000
    assert core["budget"]["used_chars"] == len(core["text"])
    assert isinstance(core["diff"], list)  # the fixture has a CORE.md on disk
    ocean = formats["project-ocean"]["sections"]
    assert {s["key"] for s in ocean} == {"recall", "shared_adds"}
    assert all(len(s["entries"]) <= 3 for s in ocean if s["key"] == "recall")
    dream = [s["key"] for s in formats["dream-cycle"]["sections"]]
    assert dream == ["observations", "decays_7", "decays_30"]


def test_preview_agent_limits_the_vaults_and_an_unknown_agent_is_refused(
    own_fixtures_dir: Path,
) -> None:
    res = run(
        "preview",
        str(own_fixtures_dir),
        "--as-of",
        "2026-11-22",
        "--agent",
        "courier",
        "--prompt",
        "carrier rates",
        "--json",
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert [v["format"] for v in doc["vaults"]] == ["project-ocean"]
    assert {s["agent"] for s in doc["vaults"][0]["sections"]} == {"courier"}
    missing = run("preview", str(own_fixtures_dir), "--agent", "nobody-here", "--json")
    assert missing.exit_code == 1
    assert "nobody-here" in missing.output


def test_preview_text_shows_tokens_and_the_core_budget(own_fixtures_dir: Path) -> None:
    res = run("preview", str(own_fixtures_dir), "--as-of", "2026-11-22", "--diff")
    assert res.exit_code == 0, res.output
    assert "CORE.md as regenerated [load]" in res.output
    assert "budget [" in res.output
    assert "--- CORE.md (on disk)" in res.output
    assert "tok" in res.output


def test_budget_bar() -> None:
    assert budget_bar(6_000, 12_000, width=10) == "[#####.....] 6,000/12,000 chars (50%)"
    assert budget_bar(13_000, 12_000, width=4) == "[####] 13,000/12,000 chars (108%)"
