"""Secrets in files that hold no memory: episode logs, CORE.md, view and stance stores.

They are loaded into prompts as memories are, so the scan reads them
(`FormatAdapter.side_files`) and lists their findings as `side`: the file is
the id and the path, the health is "no memory", and nothing redacts them.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner
from privacy_side import ANTHROPIC, HUGGING, PERSON, SLACK, plant_side

from memlens.core.privacy import SIDE_HEALTH, scan_catalog, scan_vault
from memlens.core.privacy.incremental import FindingsCache
from memlens.core.scan.vault import Catalog, open_catalog
from memlens.tui.cli.main import cli

AS_OF = date(2026, 11, 27)


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    plant_side(tmp_path)
    return open_catalog(tmp_path, cache=False)


def test_each_side_file_s_secret_is_found_and_marked(catalog: Catalog) -> None:
    found = scan_catalog(catalog, AS_OF)
    got = {(f.format, f.id, f.path, f.field, f.line, f.kind, f.health, f.side) for f in found}
    assert got == {
        ("cognitive-memory", "CORE.md", "CORE.md", "file", 4, "api-token", SIDE_HEALTH, True),
        (
            "cognitive-memory",
            "episodes/2026-11-20.md",
            "episodes/2026-11-20.md",
            "file",
            5,
            "slack-token",
            SIDE_HEALTH,
            True,
        ),
        (
            "experience-records",
            "views.jsonl",
            "views.jsonl",
            "line",
            2,
            "anthropic-key",
            SIDE_HEALTH,
            True,
        ),
        (
            "cognitive-memory",
            "REFLECTION.md",
            "REFLECTION.md",
            "file",
            3,
            "email",
            SIDE_HEALTH,
            True,
        ),
    }
    assert {f.secret for f in found} == {SLACK, HUGGING, ANTHROPIC, PERSON}
    assert all(f.memoryless and not f.invalid for f in found)
    for f in found:
        record = f.to_dict()
        assert record["side_file"] is True and "invalid" not in record
        assert f.secret not in json.dumps(record)


def test_the_app_s_incremental_scan_finds_the_same(catalog: Catalog, tmp_path: Path) -> None:
    cache = FindingsCache()
    for v in catalog.vaults:
        whole = scan_vault(v, AS_OF)
        for _ in range(2):  # the second time from what the first kept
            got = cache.scan_vault(v, AS_OF)
            assert got is not None
            assert [(f, f.secret) for f in got] == [(f, f.secret) for f in whole]
    # The episode cleaned by hand: its finding is gone, CORE.md's stays.
    episode = tmp_path / "cognitive" / "episodes" / "2026-11-20.md"
    episode.write_text(episode.read_text(encoding="utf-8").replace(SLACK, "[removed]"))
    cognitive = next(v for v in catalog.vaults if v.format == "cognitive-memory")
    got = cache.scan_vault(cognitive, AS_OF)
    assert got is not None
    assert [(f.id, f.kind) for f in got] == [("CORE.md", "api-token"), ("REFLECTION.md", "email")]


def test_the_cli_lists_them_and_redacts_none(tmp_path: Path) -> None:
    plant_side(tmp_path)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    res = CliRunner().invoke(cli, ["secrets", str(tmp_path), "--json"], catch_exceptions=False)
    assert res.exit_code == 1
    records = json.loads(res.stdout)
    assert sorted(r["path"] for r in records if r.get("side_file")) == [
        "CORE.md",
        "REFLECTION.md",
        "episodes/2026-11-20.md",
        "views.jsonl",
    ]
    assert "holding no memory" in res.stderr
    for secret in (SLACK, HUGGING, ANTHROPIC, PERSON):
        assert secret[6:] not in res.stdout + res.stderr
    res = CliRunner().invoke(
        cli,
        ["redact", str(tmp_path), "--all-of-kind", "slack-token", "--yes"],
        catch_exceptions=False,
    )
    assert "left alone" in res.stderr
    assert {
        p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and ".memlens" not in p.parts
    } == {p: b for p, b in before.items()}
