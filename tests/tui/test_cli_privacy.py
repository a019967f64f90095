"""`memlens secrets` and `memlens redact` on planted vaults: found, masked, redacted, undone."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import privacy_plant as pp
import pytest
from click.testing import CliRunner

from memlens.core.actions import undo
from memlens.core.scan.vault import discover
from memlens.tui.cli.main import cli


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Path, list[Any]]:
    root = tmp_path / "vaults"
    root.mkdir()
    return root, pp.plant(root)


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".memlens" not in p.parts
    }


def _assert_masked(text: str, secrets: list[Any]) -> None:
    for p in secrets:
        for part in p.secret.splitlines():
            if len(part) >= 6:
                assert part not in text, f"{p.kind} printed unmasked"


def test_secrets_json_lists_every_planted_secret_masked(planted: tuple[Path, list[Any]]) -> None:
    root, secrets = planted
    res = run("secrets", str(root), "--json", "--as-of", "2026-11-22")
    assert res.exit_code == 1
    records = json.loads(res.stdout)
    assert len(records) == len(secrets)
    assert {r["kind"] for r in records} == {p.kind for p in secrets}
    for r in records:
        assert set(r) >= {"vault", "format", "id", "path", "field", "line", "kind", "masked"}
        assert r["line"] >= 1
    _assert_masked(res.output, secrets)  # stdout and stderr


def test_secrets_text_output_is_masked_and_counts(planted: tuple[Path, list[Any]]) -> None:
    root, secrets = planted
    res = run("secrets", str(root))
    assert res.exit_code == 1
    assert f"{len(secrets)} findings" in res.stderr
    assert len(res.stdout.splitlines()) == len(secrets) + 1  # header + one line each
    _assert_masked(res.output, secrets)


def test_secrets_exit_0_when_clean_and_2_on_usage(tmp_path: Path, own_fixtures_dir: Path) -> None:
    shutil.copytree(own_fixtures_dir / "project-ocean", tmp_path / "ocean")
    res = run("secrets", str(tmp_path / "ocean"), "--json")
    assert res.exit_code == 0 and json.loads(res.stdout) == []
    assert run("secrets", str(tmp_path / "ocean"), "--kind", "nonsense").exit_code == 2


def test_redact_all_of_kind_then_undo_restores_every_byte(
    planted: tuple[Path, list[Any]],
) -> None:
    root, secrets = planted
    before = _tree(root)
    dry = run("redact", str(root), "--all-of-kind", "aws-key", "--dry-run", "--json")
    assert dry.exit_code == 0 and _tree(root) == before
    assert len(json.loads(dry.stdout)["would_change"]) == 6
    res = run("redact", str(root), "--all-of-kind", "aws-key", "--yes")
    assert res.exit_code == 0, res.output
    _assert_masked(res.output, secrets)
    left = json.loads(run("secrets", str(root), "--json", "--kind", "aws-key").stdout)
    # Only the experience record's raw line still holds its key (tombstoned, immutable).
    assert [(r["format"], r["health"]) for r in left] == [("experience-records", "tombstoned")]
    for v in discover(root):
        if (v.root / ".memlens" / "journal.jsonl").exists():
            undo(v.root)
    assert _tree(root) == before


def test_bulk_without_yes_off_a_terminal_changes_nothing(
    planted: tuple[Path, list[Any]],
) -> None:
    root, _ = planted
    before = _tree(root)
    res = run("redact", str(root), "--all-of-kind", "email")
    assert res.exit_code == 1 and "--yes" in res.stderr
    assert _tree(root) == before


def test_redact_refuses_a_memory_without_secrets(planted: tuple[Path, list[Any]]) -> None:
    root, _ = planted
    res = run("redact", str(root), "atlas/obs-2026-11-21-001")
    assert res.exit_code == 1 and "no secret found" in res.stderr
    assert run("redact", str(root)).exit_code == 2  # no ID and no --all-of-kind


def test_redact_in_a_git_repository_says_history_still_holds_it(
    planted: tuple[Path, list[Any]],
) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root, secrets = planted
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    res = run("redact", str(root), "atlas/obs-2026-11-20-001")
    assert res.exit_code == 0, res.output
    assert "history still holds" in res.stderr and "git filter-repo" in res.stderr
    _assert_masked(res.output, secrets)


def test_erase_archives_and_says_the_archive_keeps_the_text(
    planted: tuple[Path, list[Any]],
) -> None:
    root, secrets = planted
    res = run("redact", str(root), "atlas/obs-2026-11-10-001", "--erase")
    assert res.exit_code == 0, res.output
    assert (root / "ocean/agents/atlas/memory/archive/obs-2026-11-10-001.md").exists()
    assert "redact the memory before" in res.stderr
    _assert_masked(res.output, secrets)


def test_redact_takes_the_masked_id_that_secrets_printed(tmp_path: Path) -> None:
    """A Dream Cycle heading's password is in its id: the printed (masked) id names it."""
    vault = tmp_path / "dream"
    vault.mkdir()
    comment = "<!-- dc:type=fact dc:importance=5.0 dc:ttl=90 dc:date=2026-11-14 -->"
    (vault / "observations.md").write_text(
        f"# Observations\n\n## Router password is tulip482x\n{comment}\nNoted.\n\n"
        f"## Other\n{comment}\nNothing here.\n",
        encoding="utf-8",
    )
    res = run("secrets", str(vault), "--json")
    shown = json.loads(res.stdout)[0]["id"]
    assert "tulip482x" not in shown and "…" in shown
    assert run("redact", str(vault), "router-password-is-tulip…(99)-000000").exit_code == 1
    res = run("redact", str(vault), shown, "--yes")
    assert res.exit_code == 0
    assert "tulip482x" not in res.output
    text = (vault / "observations.md").read_text(encoding="utf-8")
    assert "## Router password is [REDACTED:password]\n" in text
    assert "tulip482x" not in text and "Nothing here." in text


def test_redact_a_key_pasted_with_crlf(tmp_path: Path) -> None:
    body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"
    key = "\r\n".join(
        [
            "-----BEGIN OPENSSH PRIVATE KEY-----",
            body,
            body[::-1],
            "-----END OPENSSH PRIVATE KEY-----",
        ]
    )
    vault = tmp_path / "agents" / "atlas" / "memory" / "vault"
    vault.mkdir(parents=True)
    (tmp_path / "agents" / "atlas" / "memory" / "archive").mkdir()
    note = vault / "obs-2026-11-01-001.md"
    note.write_bytes(
        b"---\r\ntags: [ops]\r\nconfidence: 0.9\r\ncreated: 2026-11-10\r\nsource: atlas\r\n---\r\n"
        + f"\r\npasted from Windows:\r\n{key}\r\nend\r\n".encode()
    )
    assert run("secrets", str(tmp_path)).exit_code == 1
    assert run("redact", str(tmp_path), "atlas/obs-2026-11-01-001").exit_code == 0
    assert note.read_bytes().endswith(b"pasted from Windows:\r\n[REDACTED:private-key]\r\nend\r\n")
    assert run("secrets", str(tmp_path)).exit_code == 0


def test_secrets_in_invalid_items_are_listed_and_never_redacted(tmp_path: Path) -> None:
    from privacy_invalid import AWS, GITHUB, NAS, plant_invalid

    plant_invalid(tmp_path)
    before = _tree(tmp_path)
    res = run("secrets", str(tmp_path), "--json")
    assert res.exit_code == 1
    records = json.loads(res.stdout)
    invalid = [r for r in records if r.get("invalid")]
    assert {r["kind"] for r in invalid} == {"github-token", "aws-key", "email", "phone"}
    assert all(r["health"] == "invalid" for r in invalid)
    assert "1 memory and 4 invalid items" in res.stderr
    assert "never rewrites" in res.stderr
    for secret in (AWS, GITHUB, NAS):
        assert secret not in res.output
    # Named by the id `secrets` printed: refused, with why.
    refused = run("redact", str(tmp_path), "experiences.jsonl", "--yes")
    assert refused.exit_code == 1
    assert "is invalid, not a memory" in refused.stderr
    # Every finding of a kind: the valid memory's only; the invalid ones are left, and said so.
    res = run("redact", str(tmp_path), "--all-of-kind", "github-token", "--yes")
    assert res.exit_code == 1  # nothing to redact: the only token is in an invalid section
    assert "1 github-token finding(s) left alone" in res.stderr
    assert _tree(tmp_path) == before
