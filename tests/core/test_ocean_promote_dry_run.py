"""Project Ocean `promote --dry-run` reports exactly what the real run then does.

Randomized vault shapes (seeded, so every failure replays): several agents
whose vaults share file names, existing shared and archived shared copies,
invalid files, archived files, verified flags and thresholds.  For each, a
dry run on one copy and a real run on another must print the same promoted /
skipped / refused lines with the same reasons and exit the same way, and the
real run must have written exactly the promoted copies.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memlens.core.formats.project_ocean.runs import promotion_candidates, split_name_clashes
from memlens.core.scan.vault import open_catalog
from memlens.tui.cli.main import cli

AGENTS = ("hawk", "scout", "shield", "watchtower")
NAMES = tuple(f"obs-2026-11-{day:02d}-{seq:03d}.md" for day in (19, 21) for seq in (1, 2))


def _obs(rng: random.Random, source: str) -> str:
    confidence = rng.choice(["0.55", "0.8", "0.9", "1", "0.79"])
    lines = [
        "---",
        "tags: [leads]",
        f"confidence: {confidence}",
        "created: 2026-11-18",
        "decay: linear-30d",
        f"source: {source}",
    ]
    if rng.random() < 0.5:
        lines.append(f"verified: {rng.choice(['true', 'false'])}")
    lines += ["---", f"Observation by {source}: {rng.randrange(10**6)}.", ""]
    return "\n".join(lines)


def _vault(root: Path, rng: random.Random) -> None:
    """One random Project Ocean vault whose agents reuse a few file names."""
    for agent in rng.sample(AGENTS, rng.randint(2, 4)):
        for name in rng.sample(NAMES, rng.randint(1, len(NAMES))):
            area = "archive" if rng.random() < 0.15 else "vault"
            path = root / "agents" / agent / "memory" / area / name
            path.parent.mkdir(parents=True, exist_ok=True)
            text = _obs(rng, agent)
            if rng.random() < 0.1:  # invalid: no confidence
                text = text.replace("confidence:", "confidence_note:")
            path.write_text(text, encoding="utf-8")
    (root / "agents" / AGENTS[0] / "memory" / "vault").mkdir(parents=True, exist_ok=True)
    shared = root / "shared" / "observations"
    shared.mkdir(parents=True)
    for name in NAMES:
        roll = rng.random()
        if roll < 0.15:
            (shared / name).write_text(_obs(rng, "hawk"), encoding="utf-8")
        elif roll < 0.25:
            (shared / "archive").mkdir(exist_ok=True)
            (shared / "archive" / name).write_text(_obs(rng, "scout"), encoding="utf-8")


def _files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".memlens" not in p.relative_to(root).parts
    }


def _promote(root: Path, options: list[str], *, dry_run: bool) -> Result:
    args = ["promote", str(root), "--as-of", "2026-11-22", *options]
    if dry_run:
        args.append("--dry-run")
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def _report(result: Result) -> list[str]:
    # The real run also says where its one journal entry went; a dry run writes none.
    return [
        line.replace(" (dry run)", "")
        for line in result.stderr.splitlines()
        if not line.endswith("memlens undo PATH reverts the run")
    ]


def _options(rng: random.Random) -> list[str]:
    options = ["--threshold", rng.choice(["0.5", "0.8", "0.9"])]
    if rng.random() < 0.25:
        options.append("--require-verified")
    if rng.random() < 0.2:
        options += ["--agent", rng.choice(AGENTS)]
    return options


@pytest.mark.parametrize("seed", range(40))
def test_dry_run_agrees_with_the_real_run(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    _vault(tmp_path / "dry", rng)
    shutil.copytree(tmp_path / "dry", tmp_path / "real")
    options = _options(rng)
    before = _files(tmp_path / "dry")

    dry = _promote(tmp_path / "dry", options, dry_run=True)
    assert _files(tmp_path / "dry") == before
    real = _promote(tmp_path / "real", options, dry_run=False)

    assert _report(dry) == _report(real)
    assert dry.exit_code == real.exit_code

    # The real run wrote exactly the copies it reported, each from its agent.
    promoted = [
        line.split(":", 1)[0].removeprefix("promote ")
        for line in _report(real)
        if line.startswith("promote ")
    ]
    after = _files(tmp_path / "real")
    new = {rel for rel in after if rel not in before}
    assert new == {f"shared/observations/{mem_id.split('/')[1]}.md" for mem_id in promoted}
    for mem_id in promoted:
        agent, stem = mem_id.split("/")
        assert f"promoted_from: {agent}\n" in after[f"shared/observations/{stem}.md"].decode()
    assert {rel: after[rel] for rel in before} == before


def test_a_clash_is_refused_in_both_runs(tmp_path: Path) -> None:
    for agent in ("hawk", "scout"):
        folder = tmp_path / "agents" / agent / "memory" / "vault"
        folder.mkdir(parents=True)
        (folder / "obs-2026-11-21-001.md").write_text(
            f"---\ntags: [a]\nconfidence: 0.9\ncreated: 2026-11-21\nsource: {agent}\n---\nx\n",
            encoding="utf-8",
        )
    cands, _ = promotion_candidates(open_catalog(tmp_path))
    kept, clashes = split_name_clashes(cands)
    assert [m.id for m in kept] == ["hawk/obs-2026-11-21-001"]
    assert [m.id for m, _ in clashes] == ["scout/obs-2026-11-21-001"]
    assert "also the copy of hawk/obs-2026-11-21-001" in clashes[0][1]

    dry = _promote(tmp_path, [], dry_run=True)
    assert dry.exit_code == 1
    assert "refused scout/obs-2026-11-21-001: shared/observations/obs-2026-11-21-001.md" in (
        dry.stderr
    )
    assert "1 to promote (dry run), 0 skipped, 1 refused" in dry.stderr
    real = _promote(tmp_path, [], dry_run=False)
    assert _report(real) == _report(dry)
    copy = tmp_path / "shared/observations/obs-2026-11-21-001.md"
    assert "promoted_from: hawk\n" in copy.read_text(encoding="utf-8")
