"""`memlens review`: the JSON document over every format, the actions, and bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import review_vaults as rv
from click.testing import CliRunner

from memlens.core.scan.vault import open_catalog
from memlens.tui.cli.main import cli


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _all(tmp_path: Path) -> Path:
    for fmt in rv.FORMATS:
        rv.build(tmp_path / "vaults", fmt)
    return tmp_path / "vaults"


def test_review_json_over_every_format(tmp_path: Path) -> None:
    path = _all(tmp_path)
    res = run("review", str(path), "--as-of", "2026-11-22", "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["as_of"] == "2026-11-22" and doc["count"] == len(doc["candidates"])
    found: dict[str, set[tuple[frozenset[str], str]]] = {}
    for c in doc["candidates"]:
        assert set(c) >= {"id", "kind", "confidence", "reason", "members", "differing_words"}
        assert c["id"].startswith("rv-") and 0 < c["confidence"] <= 1
        for m in c["members"]:
            assert set(m) == {"vault", "format", "id", "path", "title", "health"}
        found.setdefault(c["vault"], set()).add(
            (frozenset(m["id"] for m in c["members"]), c["kind"])
        )
    for fmt in rv.FORMATS:
        ids = rv.ids(open_catalog(path / fmt).memories())
        for (a, b), kind in rv.PLANTED.items():
            assert (frozenset((ids[a], ids[b])), kind) in found[fmt], (fmt, a, b)
        reported = {pair for pair, _kind in found[fmt]}
        for a, b in rv.DECOYS:
            assert frozenset((ids[a], ids[b])) not in reported, (fmt, a, b)
    confidences = [c["confidence"] for c in doc["candidates"]]
    assert confidences == sorted(confidences, reverse=True)


def test_kind_and_limit(tmp_path: Path) -> None:
    path = _all(tmp_path)
    res = run(
        "review",
        str(path),
        "--as-of",
        "2026-11-22",
        "--json",
        "--kind",
        "duplicate",
        "--limit",
        "3",
    )
    doc = json.loads(res.output)
    assert doc["count"] == 3 and {c["kind"] for c in doc["candidates"]} == {"duplicate"}


def test_merge_dry_run_then_merge_then_undo(tmp_path: Path) -> None:
    root = rv.build(tmp_path, "observation-v1")
    before = {p: p.read_bytes() for p in root.rglob("*.md")}
    dry = run("review", str(root), "--merge", "obs-001", "obs-002", "--dry-run")
    assert dry.exit_code == 0 and "dry run: nothing written" in dry.output
    assert {p: p.read_bytes() for p in root.rglob("*.md")} == before
    done = run("review", str(root), "--merge", "obs-001", "obs-002", "--as-of", "2026-11-22")
    assert done.exit_code == 0, done.output
    assert (root / "archive/observations/obs-002.md").is_file()
    assert b"merged_from: [obs-002]" in (root / "observations/obs-001.md").read_bytes()
    assert run("undo", str(root)).exit_code == 0
    assert {p: p.read_bytes() for p in root.rglob("*.md")} == before


def test_dismiss_by_candidate_id(tmp_path: Path) -> None:
    root = rv.build(tmp_path, "project-ocean")
    doc = json.loads(run("review", str(root), "--as-of", "2026-11-22", "--json").output)
    first = doc["candidates"][0]["id"]
    res = run("review", str(root), "--as-of", "2026-11-22", "--dismiss", first)
    assert res.exit_code == 0, res.output
    again = json.loads(run("review", str(root), "--as-of", "2026-11-22", "--json").output)
    assert first not in {c["id"] for c in again["candidates"]}
    assert again["count"] == doc["count"] - 1


def test_bad_input_is_one_clear_line(tmp_path: Path) -> None:
    root = rv.build(tmp_path, "project-ocean")
    missing = run("review", str(root), "--dismiss", "rv-000000000000")
    assert missing.exit_code == 1 and "no open review candidate" in missing.output
    unknown = run("review", str(root), "--merge", "alpha/nope", "alpha/obs-2026-11-01-001")
    assert unknown.exit_code == 1 and "no memory with id" in unknown.output
    both = run("review", str(root), "--merge", "a", "b", "--dismiss", "c")
    assert both.exit_code == 2
    keep_old = run("review", str(root), "--keep-old")
    assert keep_old.exit_code == 2


def test_review_json_says_which_similarities_were_used(tmp_path: Path) -> None:
    # The tests run with MEMLENS_SEMANTIC=0: lexical only, and the document says so.
    path = _all(tmp_path)
    doc = json.loads(run("review", str(path), "--as-of", "2026-11-22", "--json").output)
    sims = doc["similarities"]
    assert sims["meaning"] is False and "lexical only" in sims["note"]
    # The cognitive-memory vault ships `_embeddings.json`: its vectors were compared.
    assert sims["used"] == ["char3", "jaccard", "tfidf", "vector"]
    text = run("review", str(path / "observation-v1"), "--as-of", "2026-11-22")
    assert "lexical similarity only" in text.output
