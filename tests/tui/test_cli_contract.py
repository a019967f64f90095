"""The CLI contract of DESIGN.md, driven through click on the fixture vaults."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from memlens.tui.cli.main import cli

LIST_FIELDS = {
    "vault",
    "format",
    "id",
    "path",
    "kind",
    "title",
    "tags",
    "importance",
    "confidence",
    "created",
    "updated",
    "status",
    "health",
    "score",
    "current_importance",
    "importance_band",
    "linear_weight",
    "expires_on",
    "relations",
}


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_list_json_has_contract_fields(
    own_fixtures_dir: Path, own_expected: dict[str, Any]
) -> None:
    res = run("list", str(own_fixtures_dir), "--as-of", "2026-11-22", "--json")
    assert res.exit_code == 0, res.output
    records = json.loads(res.output)
    for rec in records:
        assert rec.keys() >= LIST_FIELDS
        assert ("days_elapsed" in rec) or ("age_days" in rec)
    by_format: dict[str, int] = {}
    for rec in records:
        by_format[rec["format"]] = by_format.get(rec["format"], 0) + 1
    for fmt, data in own_expected["formats"].items():
        assert by_format.get(fmt) == data["valid_count"], fmt
    vaults = {rec["vault"] for rec in records}
    assert vaults == set(own_expected["formats"])  # vault roots relative to PATH


def test_list_json_positions(own_fixtures_dir: Path) -> None:
    res = run("list", str(own_fixtures_dir / "dream-cycle"), "--as-of", "2026-11-22", "--json")
    records = json.loads(res.output)
    assert {r["vault"] for r in records} == {"."}
    sections = [r for r in records if r["path"] == "observations.md"]
    assert all(isinstance(r["index"], int) for r in sections)
    archived = [r for r in records if r["path"] == "archive.jsonl"]
    assert archived and all(r["health"] == "archived" and r["line"] for r in archived)


def test_validate_json_lists_every_problem_and_exits_1(
    own_fixtures_dir: Path, own_expected: dict[str, Any]
) -> None:
    res = run("validate", str(own_fixtures_dir), "--json")
    assert res.exit_code == 1
    records = json.loads(res.output)
    invalid = [
        r
        for r in records
        if r["reason"] not in {"dangling_reference", "unsafe_reference", "references_tombstoned"}
    ]
    refs = [r for r in records if r not in invalid]
    assert len(invalid) == sum(len(d["invalid"]) for d in own_expected["formats"].values())
    assert len(refs) == sum(len(d["references"]) for d in own_expected["formats"].values())
    for r in invalid:
        assert {"vault", "format", "path", "id", "reason", "detail"} <= r.keys()
    for r in refs:
        assert {"vault", "format", "path", "id", "reason", "field", "ref"} <= r.keys()


def test_validate_clean_vault_exits_0(tmp_path: Path) -> None:
    from memlens.core.demo import copy_demo

    root = copy_demo(tmp_path)
    assert run("validate", str(root)).exit_code == 1  # the demo carries two faults
    (root / "project-ocean/agents/quill/memory/vault/obs-2026-11-21-001.md").unlink()
    (root / "project-ocean/agents/atlas/memory/vault/obs-2026-11-21-002.md").unlink()
    res = run("validate", str(root))
    assert res.exit_code == 0, res.output


def test_show_known_and_unknown_ids(own_fixtures_dir: Path) -> None:
    res = run(
        "show",
        str(own_fixtures_dir),
        "courier/obs-2026-11-18-001",
        "--as-of",
        "2026-11-22",
        "--json",
    )
    assert res.exit_code == 0, res.output
    rec = json.loads(res.output)
    assert rec["status"] == "active" and rec["linear_weight"] == 0.7143
    assert "body" in rec and "fields" in rec
    res = run("show", str(own_fixtures_dir), "no-such-id")
    assert res.exit_code == 1


def test_show_text_never_prints_raw_escapes(own_fixtures_dir: Path) -> None:
    res = run("list", str(own_fixtures_dir), "--as-of", "2026-11-22")
    assert res.exit_code == 0
    assert "\x1b" not in res.output
    for rec in json.loads(run("list", str(own_fixtures_dir), "--json").output):
        shown = run("show", str(own_fixtures_dir / rec["vault"]), rec["id"])
        assert "\x1b" not in shown.output and "\x9b" not in shown.output


def test_decay_report_lists_expired_not_pinned(own_fixtures_dir: Path) -> None:
    res = run("decay", str(own_fixtures_dir), "--as-of", "2026-11-22", "--json")
    assert res.exit_code == 0, res.output
    ids = {r["id"] for r in json.loads(res.output)}
    assert "ledger/obs-2026-10-30-001" in ids  # expired linear-14d
    assert "courier/obs-2026-11-18-001" not in ids  # active
    assert "sentinel/obs-2026-02-03-001" not in ids  # permanent


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    assert run("list", str(tmp_path / "missing")).exit_code == 2
    assert run("list", str(tmp_path)).exit_code == 2  # no vault there
    assert run("list", str(tmp_path), "--as-of", "tomorrow").exit_code == 2


def test_version() -> None:
    res = run("--version")
    assert res.exit_code == 0 and "memlens" in res.output


def test_json_output_escapes_c1_bidi_and_separators(tmp_path: Path) -> None:
    """Raw C1 controls, bidi overrides and line separators never reach stdout."""
    vault = tmp_path / "v" / "agents" / "a" / "memory" / "vault"
    vault.mkdir(parents=True)
    (vault / "obs-2026-11-20-001.md").write_text(
        "---\ntags: [x]\nconfidence: 0.9\ncreated: 2026-11-20\nsource: a\n---\n"
        "evil \x9b31m title \u202e reversed \u2028 sep \x1b[2J\n",
        encoding="utf-8",
    )
    for args in (
        ["list", str(tmp_path / "v"), "--json"],
        ["show", str(tmp_path / "v"), "a/obs-2026-11-20-001"],
    ):
        out = CliRunner().invoke(cli, args, catch_exceptions=False).output
        for bad in ("\x9b", "\u202e", "\u2028", "\x1b"):
            assert bad not in out, (args, repr(bad))
    records = json.loads(run("list", str(tmp_path / "v"), "--json").output)
    assert "\u202e" in records[0]["title"]  # escaped in the text, intact in the data
