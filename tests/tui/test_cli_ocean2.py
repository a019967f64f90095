"""The command line on Project Ocean's second generation: search --rank recall, decay --apply,
promote, ref, list and validate, on a copy of tests/fixtures/.second-generation/."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from memlens.tui.cli.main import cli

GEN2 = Path(__file__).resolve().parents[1] / "fixtures" / ".second-generation"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    dest = tmp_path / "gen2"
    shutil.copytree(GEN2 / "project-ocean-gen2", dest)
    return dest


def test_search_recall_in_the_scripts_json_shape(vault: Path) -> None:
    res = run(
        "search", str(vault), "insurance", "cpl", "--rank", "recall", "--format", "ocean",
        "--as-of", "2026-11-22", "--agent", "hawk",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    out: dict[str, Any] = json.loads(res.stdout)
    assert out["total"] == len(out["results"]) > 0
    first = out["results"][0]
    # The permanent 0.92 rule ranks first; the script's fields are there.
    assert first["file"] == "obs-2026-11-20-001.md"
    assert {"importance", "refs", "verified", "score", "snippet", "tags", "path"} <= first.keys()
    scores = [r["score"] for r in out["results"]]
    assert scores == sorted(scores, reverse=True)
    # --agent hawk: hawk's own vault and shared/ only.
    mine = (f"{vault.resolve()}/agents/hawk/", f"{vault.resolve()}/shared/")
    assert all(r["path"].startswith(mine) for r in out["results"])


def test_search_recall_refuses_filters(vault: Path) -> None:
    res = run("search", str(vault), "insurance tag:cpl", "--rank", "recall")
    assert res.exit_code == 2 and "--rank recall takes words only" in res.output


def test_search_relevance_ranks_gen2_by_importance_and_freshness(vault: Path) -> None:
    res = run("search", str(vault), "insurance", "--json", "--as-of", "2026-11-22")
    hits = json.loads(res.stdout)
    assert hits
    for h in hits:
        if h["health"] in ("archived", "expired"):
            # Relevance finds archived and expired files too (their weight is shown, not
            # multiplied in); the formula below is the one of live files.
            continue
        # Confidence is absent (1.0); the decay weight is importance × freshness.
        want = h["importance"] * h["freshness"]  # freshness is printed to 4 places
        assert abs(h["explain"]["decay_weight"] - want) < 1e-4
        assert h["explain"]["confidence"] == 1.0


def test_decay_apply_ref_promote_and_undo(vault: Path) -> None:
    res = run("decay", str(vault), "--as-of", "2026-11-22")
    assert "would write captain/obs-2026-10-01-001: neglect penalty" in res.stderr
    assert "would write shield/obs-2026-10-13-001: extend: max_age 30d → 45d" in res.stderr
    res = run("decay", str(vault), "--as-of", "2026-11-22", "--apply")
    assert res.exit_code == 0 and "6 changed (3 to archive, 3 to write back)" in res.stderr
    res = run("decay", str(vault), "--as-of", "2026-11-22", "--apply")
    assert "0 changed (0 to archive, 0 to write back)" in res.stderr
    res = run("ref", str(vault), "--json")
    assert res.exit_code == 0, res.output
    updates = {u["id"]: u for u in json.loads(res.stdout)}
    assert updates["captain/obs-2026-11-01-001"]["importance"] == 0.95
    assert updates["captain/obs-2026-11-01-001"]["cross_agent_refs"] == 3
    assert json.loads(run("ref", str(vault), "--json").stdout) == []
    res = run("promote", str(vault), "--as-of", "2026-11-22", "--dry-run")
    assert "captain/obs-2026-11-01-001: promote: copy" in res.stderr  # 0.95 after ref
    assert not (vault / "shared/observations/captain-obs-2026-11-01-001.md").exists()
    assert run("undo", str(vault)).exit_code == 0  # the references run
    text = (vault / "agents/captain/memory/vault/obs-2026-11-01-001.md").read_text()
    assert "importance: 0.50\n" in text and "refs: 0\n" in text


def test_list_and_validate(vault: Path) -> None:
    records = json.loads(run("list", str(vault), "--json", "--as-of", "2026-11-22").stdout)
    statuses = {r["status"] for r in records}
    assert statuses == {
        "active", "near_expiry", "review", "extend", "expired", "archived", "permanent",
    }  # fmt: skip
    res = run("validate", str(vault), "--json")
    assert res.exit_code == 1
    reasons = {(r["reason"], r.get("field")) for r in json.loads(res.stdout)}
    assert ("unsafe_reference", "ref_by") in reasons and ("wrong_type", None) in reasons
