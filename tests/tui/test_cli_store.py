"""The CLI prints the same bytes with the per-vault store (cold, warm, after changes) as without."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from memlens.core.scan.cache import cache_path
from memlens.core.scan.vault import discover
from memlens.tui.cli.main import cli

AS_OF = ("--as-of", "2026-11-22")


def run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return res.exit_code, res.output


def commands(root: Path) -> list[tuple[str, ...]]:
    code, out = run("--no-cache", "list", str(root), *AS_OF, "--json")
    assert code == 0, out
    ids = [r["id"] for r in json.loads(out)]
    linked = ids[len(ids) // 2]
    return [
        ("list", str(root), *AS_OF, "--json"),
        ("list", str(root), *AS_OF, "--json", "--all"),
        ("validate", str(root), "--json"),
        ("search", str(root), "memory agent", *AS_OF, "--json"),
        ("search", str(root), "decay", *AS_OF, "--json", "--limit", "50"),
        # Typos, word forms and the text output's explain lines (relevance, the default).
        ("search", str(root), "memries decaying agnet", *AS_OF, "--json"),
        ("search", str(root), "archived memories", *AS_OF, "--explain"),
        ("search", str(root), "decay", *AS_OF, "--rank", "recall", "--json"),
        # Another day: the kept index's decay columns are recomputed for it.
        ("search", str(root), "decay memory", "--as-of", "2027-03-01", "--json"),
        ("graph", str(root), "--health", "--json"),
        ("graph", str(root), linked, "--depth", "2", "--json"),
        ("show", str(root), linked, "--json"),
    ]


def outputs(root: Path, cmds: list[tuple[str, ...]], *, store: bool) -> list[tuple[int, str]]:
    prefix = () if store else ("--no-cache",)
    return [run(*prefix, *c) for c in cmds]


def _change_files(root: Path) -> None:
    """Edit one memory file, remove another, add a third: what agents do between calls."""
    for vault in discover(root):
        files = sorted(p for p in vault.root.rglob("*.md") if p.is_file() and "/." not in str(p))
        if len(files) < 3:
            continue
        edited, removed, source = files[0], files[1], files[2]
        edited.write_bytes(edited.read_bytes() + b"\nAn edit between two calls, about decay.\n")
        removed.unlink()
        added = source.with_name("added-" + source.name)
        added.write_bytes(source.read_bytes().replace(b"a", b"e"))


def test_output_is_identical_with_and_without_the_store(
    own_fixtures_copy: Path, private_cache: Path
) -> None:
    root = own_fixtures_copy
    cmds = commands(root)
    plain = outputs(root, cmds, store=False)
    assert not private_cache.exists() or not any(private_cache.iterdir())
    cold = outputs(root, cmds, store=True)
    assert [cache_path(v.root).is_file() for v in discover(root)] == [True] * len(discover(root))
    warm = outputs(root, cmds, store=True)
    assert cold == plain
    assert warm == plain

    _change_files(root)
    cmds = commands(root)
    plain = outputs(root, cmds, store=False)
    assert outputs(root, cmds, store=True) == plain  # the kept index updated
    assert outputs(root, cmds, store=True) == plain  # and served as updated


def test_acceptance_fixtures_identical_with_the_store(
    fixtures_copy: Path, private_cache: Path
) -> None:
    cmds = commands(fixtures_copy)
    plain = outputs(fixtures_copy, cmds, store=False)
    outputs(fixtures_copy, cmds, store=True)
    assert outputs(fixtures_copy, cmds, store=True) == plain


def test_no_cache_flag_goes_before_the_command(own_fixtures_copy: Path, tmp_path: Path) -> None:
    code, out = run("--no-cache", "validate", str(own_fixtures_copy / "project-ocean"), "--json")
    assert code in (0, 1) and isinstance(json.loads(out), list)


def test_a_store_of_a_moved_vault_is_rebuilt(own_fixtures_copy: Path, tmp_path: Path) -> None:
    cmds = commands(own_fixtures_copy)
    first = outputs(own_fixtures_copy, cmds, store=True)
    moved = tmp_path / "moved"
    shutil.move(own_fixtures_copy, moved)
    moved_cmds = [tuple(str(moved) if a == str(own_fixtures_copy) else a for a in c) for c in cmds]
    assert outputs(moved, moved_cmds, store=True) == outputs(moved, moved_cmds, store=False)
    assert first[0][0] == 0
