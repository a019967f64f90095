"""`memlens graph` through click's CliRunner, on the fixtures and on tiny vaults."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memlens.tui.cli_graph import graph

AS_OF = ["--as-of", "2026-11-22"]


def run(*args: str) -> Any:
    return CliRunner().invoke(graph, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def health_json(fixtures_dir: Path) -> list[dict[str, Any]]:
    res = run(str(fixtures_dir), "--health", "--json")
    data: list[dict[str, Any]] = json.loads(res.stdout)
    if not data:
        pytest.skip("format adapters not written yet")
    assert res.exit_code == 1
    return data


def test_health_json_lists_every_expected_reference(
    health_json: list[dict[str, Any]], expected: dict[str, Any]
) -> None:
    refs = [r for r in health_json if r["kind"] == "reference"]
    for fmt, data in expected["formats"].items():
        for want in data["references"]:
            assert any(
                r["format"] == fmt
                and r["vault"] == fmt
                and r["ref"] == want["ref"]
                and r["reason"] == want["issue"]
                and r["field"] == want["field"]
                and want["from"] in (r["path"], r["id"])
                for r in refs
            ), want
    assert len(refs) == sum(len(d["references"]) for d in expected["formats"].values())


def test_health_json_lists_orphans(health_json: list[dict[str, Any]]) -> None:
    orphans = [r for r in health_json if r["kind"] == "orphan"]
    assert orphans
    for r in orphans:
        assert r["reason"] == "orphan"
        assert {"vault", "format", "path", "id", "title"} <= set(r)
    assert not any(r["format"] == "dream-cycle" for r in orphans)
    assert {"hawk/obs-2026-11-18-001"} <= {r["id"] for r in orphans}


def test_health_text(fixtures_dir: Path) -> None:
    res = run(str(fixtures_dir), "--health")
    assert res.exit_code == 1
    out = res.stdout
    assert "Broken references (12)" in out
    assert "unsafe_reference" in out and "../../../../etc/passwd" in out
    assert "Orphans (" in out
    assert "broken reference(s)" in res.stderr


def test_health_is_clean_for_a_vault_without_links(fixtures_dir: Path) -> None:
    res = run(str(fixtures_dir / "dream-cycle"), "--health", "--json")
    assert res.exit_code == 0, res.stdout
    assert json.loads(res.stdout) == []


def _centre_id(fixtures_dir: Path) -> str:
    (p,) = (fixtures_dir / "cognitive-memory" / "graph" / "solutions").glob("*-0539aa.md")
    for line in p.read_text(encoding="utf-8-sig").splitlines():
        if line.startswith("id:"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(p)


def test_graph_id_json(fixtures_dir: Path) -> None:
    mid = _centre_id(fixtures_dir)
    res = run(str(fixtures_dir), mid, "--json", *AS_OF)
    if res.exit_code == 1 and "no memory" in res.stderr:
        pytest.skip("format adapters not written yet")
    assert res.exit_code == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["centre"] == mid
    ids = {n["id"] for n in data["nodes"]}
    assert mid in ids
    for n in data["nodes"]:
        assert {"id", "title", "format", "vault", "kind", "health"} <= set(n)
        assert n["format"] == "cognitive-memory" and n["vault"] == "cognitive-memory"
        assert n["health"] in {"stable", "active", "fading", "expired", "archived"}
    assert data["edges"]
    for e in data["edges"]:
        assert {"source", "target", "type", "strength", "direction"} <= set(e)
        assert e["source"] in ids and e["target"] in ids
        assert mid in (e["source"], e["target"])  # depth 1
    # Fixture relations written in the incoming form on the centre are
    # edges pointing at it.
    fm = (next((fixtures_dir / "cognitive-memory").rglob("*-0539aa.md"))).read_text(
        encoding="utf-8-sig"
    )
    if "direction: incoming" in fm:
        assert any(e["target"] == mid for e in data["edges"])
    deeper = json.loads(run(str(fixtures_dir), mid, "--json", "--depth", "3").stdout)
    assert len(deeper["nodes"]) >= len(data["nodes"])
    assert max(n["distance"] for n in deeper["nodes"]) <= 3


def test_graph_id_text(fixtures_dir: Path) -> None:
    mid = _centre_id(fixtures_dir)
    res = run(str(fixtures_dir / "cognitive-memory"), mid, "--depth", "2", "--width", "72")
    if res.exit_code == 1:
        pytest.skip("format adapters not written yet")
    lines = res.stdout.splitlines()
    assert lines[0].startswith("● ")
    assert any(line.startswith(("├─ ", "└─ ")) for line in lines)
    assert all(len(line) <= 72 for line in lines)


def test_view_ids_are_centres_too(fixtures_dir: Path) -> None:
    res = run(str(fixtures_dir), "view_2026-10-27T09:02:11Z_c41e", "--json")
    if res.exit_code == 1:
        pytest.skip("format adapters not written yet")
    data = json.loads(res.stdout)
    assert data["nodes"][0]["kind"] == "view" and data["nodes"][0]["node"] == "view"
    assert {e["type"] for e in data["edges"]} >= {"applied_to"}


def test_unknown_id_exits_1(fixtures_dir: Path) -> None:
    res = run(str(fixtures_dir / "dream-cycle"), "no-such-id")
    assert res.exit_code == 1
    assert "no memory with id" in res.stderr


@pytest.mark.parametrize(
    "args",
    [
        [],  # neither ID nor --health
        ["some-id", "--health"],
        ["some-id", "--depth", "4"],
        ["some-id", "--depth", "0"],
    ],
)
def test_usage_errors_exit_2(fixtures_dir: Path, args: list[str]) -> None:
    res = run(str(fixtures_dir / "dream-cycle"), *args)
    assert res.exit_code == 2


def test_no_vault_is_a_usage_error(tmp_path: Path) -> None:
    assert run(str(tmp_path), "--health").exit_code == 2
