"""Project Ocean rescans in varied batches equal a full scan.

The live-reload watcher hands `rescan_paths` the paths of each batch of
events, and holds a batch back (shows the previous result, re-reads the
paths later) while a removed file may only be mid-save.  Whatever the
batching, the result must equal a full scan of the vault as it is.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from memlens.core.formats.project_ocean.adapter import ProjectOceanAdapter
from memlens.core.model import ScanResult
from memlens.core.scan.vault import Vault, rescan_paths, scan_vault
from memlens.core.scan.watch import reload_vault

FOLDERS = (
    "agents/hawk/memory/vault",
    "agents/hawk/memory/archive",
    "agents/scout/memory/vault",
    "agents/scout/memory/archive",
    "shared/observations",
    "shared/observations/archive",
)
STEMS = tuple(f"obs-2026-11-{d:02d}-{n:03d}" for d in range(1, 4) for n in range(1, 5))


def _doc(rng: random.Random) -> str:
    """A valid observation naming up to three others (sometimes broken on purpose)."""
    if rng.random() < 0.05:
        return "---\nconfidence: [\n---\n"
    links = rng.sample(STEMS, rng.randint(0, 3))
    source = rng.choice(["hawk", "scout", "nobody"])
    if rng.random() < 0.5:
        # The second generation: backlinks resolve in the scripts' agent order
        # (scout before hawk), and ref_by names agent/stem ids.
        cited = [f"{rng.choice(['hawk', 'scout'])}/{s}" for s in rng.sample(STEMS, 2)]
        return (
            f"---\ntags: [a]\nimportance: 0.{rng.randint(1, 9)}\nmax_age: 30d\n"
            f"created: 2026-11-0{rng.randint(1, 9)}\nsource: {source}\n"
            f"ref_by: [{', '.join(cited[: rng.randint(0, 2)])}]\n"
            f"backlinks: [{', '.join(links)}]\n---\nNote {rng.randint(0, 10**6)}\n"
        )
    return (
        f"---\ntags: [a]\nconfidence: 0.{rng.randint(1, 9)}\n"
        f"created: 2026-11-0{rng.randint(1, 9)}\nsource: {source}\n"
        f"backlinks: [{', '.join(links)}]\n---\nNote {rng.randint(0, 10**6)}\n"
    )


class Ops:
    """Random external creates, edits, deletes, moves, renames; each gives the paths touched."""

    def __init__(self, root: Path, rng: random.Random) -> None:
        self.root, self.rng = root, rng
        for folder in FOLDERS:
            (root / folder).mkdir(parents=True)
        for stem in rng.sample(STEMS, 8):
            (root / rng.choice(FOLDERS[:3]) / f"{stem}.md").write_text(_doc(rng))

    def existing(self) -> list[Path]:
        return sorted(self.root.rglob("obs-*.md"))

    def step(self) -> list[Path]:
        rng, files = self.rng, self.existing()
        op = rng.choice(["create", "edit", "delete", "move", "rename", "twin"])
        if op == "create" or not files:
            path = self.root / rng.choice(FOLDERS) / f"{rng.choice(STEMS)}.md"
            path.write_text(_doc(rng))
            return [path]
        src = rng.choice(files)
        if op == "edit":
            src.write_text(_doc(rng))
            return [src]
        if op == "delete":
            src.unlink()
            return [src]
        # move: same name, another folder; rename: another name, maybe another folder;
        # twin: a vault <-> archive copy of the same id (a duplicate).
        if op == "move":
            dst = self.root / rng.choice(FOLDERS) / src.name
        elif op == "rename":
            dst = self.root / rng.choice(FOLDERS) / f"{rng.choice(STEMS)}.md"
        else:
            other = "archive" if src.parent.name != "archive" else "vault"
            folder = src.parent.parent / other if "agents" in src.parts else src.parent
            dst = folder / src.name
            if dst.exists() or not dst.parent.is_dir():
                return []
            dst.write_bytes(src.read_bytes())
            return [dst]
        if dst.exists():
            return []
        src.rename(dst)
        return [src, dst]


@pytest.fixture
def relinks(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """One entry per relink: True when the fast path answered, False for a full link."""
    used: list[bool] = []
    original = ProjectOceanAdapter.relink

    def spy(self: ProjectOceanAdapter, *args: Any) -> Any:
        out = original(self, *args)
        used.append(out is not None)
        return out

    monkeypatch.setattr(ProjectOceanAdapter, "relink", spy)
    return used


def assert_same(got: ScanResult, want: ScanResult) -> None:
    assert [(m.id, m.path) for m in got.memories] == [(m.id, m.path) for m in want.memories]
    assert got.memories == want.memories
    assert got.problems == want.problems
    assert got.ref_problems == want.ref_problems


@pytest.mark.parametrize("seed", range(6))
def test_random_batches_rescan_like_a_full_scan(
    tmp_path: Path, seed: int, relinks: list[bool]
) -> None:
    rng = random.Random(seed)
    root = tmp_path / "ocean"
    ops = Ops(root, rng)
    vault = scan_vault(Vault(root=root, format="project-ocean", rel="."))
    for _ in range(60):
        touched = [p for _ in range(rng.randint(1, 6)) for p in ops.step()]
        got = rescan_paths(vault, touched)
        assert_same(got, vault.adapter.scan(root))
    assert any(relinks), "the relink fast path was never taken"
    assert not all(relinks), "the full link fallback was never taken"


@pytest.mark.parametrize("seed", range(6))
def test_batches_held_back_then_rescanned_like_a_full_scan(
    tmp_path: Path, seed: int, relinks: list[bool]
) -> None:
    """As the watcher does: a held batch is not shown, its paths are read again with the next."""
    rng = random.Random(100 + seed)
    root = tmp_path / "ocean"
    ops = Ops(root, rng)
    vault = scan_vault(Vault(root=root, format="project-ocean", rel="."))
    pending: set[Path] = set()
    for _ in range(80):
        pending.update(p for _ in range(rng.randint(1, 4)) for p in ops.step())
        new = reload_vault(vault, sorted(pending))
        if rng.random() < 0.4:
            continue  # held back: the shown result stays, the paths stay pending
        vault.result = new
        pending.clear()
        assert_same(new, vault.adapter.scan(root))
    assert any(relinks), "the relink fast path was never taken"
    assert not all(relinks), "the full link fallback was never taken"


def _write(root: Path, rel: str, links: str = "") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "---\ntags: [a]\nconfidence: 0.5\ncreated: 2026-11-01\nsource: hawk\n"
        f"backlinks: [{links}]\n---\nNote\n"
    )
    return path


def test_a_held_batch_read_again_relinks_from_what_was_read(tmp_path: Path) -> None:
    """The reported KeyError: a relink from the shown (older) result after a hold.

    The held batch removed `a` (which backlinks `b`) and, with a new agent,
    needed a full link; the next batch removes `b`.  Relinking from the
    shown result would look for `a`, whose file is no longer read.
    """
    root = tmp_path / "ocean"
    a = _write(root, "agents/hawk/memory/vault/obs-2026-11-01-001.md", "obs-2026-11-01-002")
    b = _write(root, "agents/hawk/memory/vault/obs-2026-11-01-002.md")
    _write(root, "agents/hawk/memory/vault/obs-2026-11-01-003.md")
    vault = scan_vault(Vault(root=root, format="project-ocean", rel="."))
    a.unlink()
    scout = _write(root, "agents/scout/memory/vault/obs-2026-11-01-004.md")
    reload_vault(vault, [a, scout])  # held back: not shown
    b.unlink()
    new = reload_vault(vault, [a, scout, b])
    assert_same(new, vault.adapter.scan(root))


def test_a_duplicate_pair_removed_in_one_batch(tmp_path: Path) -> None:
    """A vault and an archive copy of one id are duplicates; both going at once clears both."""
    root = tmp_path / "ocean"
    pair = [
        _write(root, f"agents/hawk/memory/{area}/obs-2026-11-01-001.md")
        for area in ("vault", "archive")
    ]
    for n in (2, 3, 4):  # hawk keeps memories: the agent list stays the same
        _write(root, f"agents/hawk/memory/vault/obs-2026-11-01-00{n}.md", "obs-2026-11-01-001")
    vault = scan_vault(Vault(root=root, format="project-ocean", rel="."))
    assert len(vault.problems) == 2
    for path in pair:
        path.unlink()
    assert_same(rescan_paths(vault, pair), vault.adapter.scan(root))
    assert not vault.problems
