"""`memlens search --format ocean` against memory-search.py's own outputs, both generations.

`tests/fixtures/.ocean-parity/expected/memory-search-reference.json` holds
what the real script printed (`--json`) for 82 queries on five vaults: our
first-generation fixture (`tests/fixtures/project-ocean`), a generated
2,000-file first-generation vault (`bench.generate`), the second-generation
fixture, and two vaults of edge cases written for this (`.ocean-parity/
gen1-edge`, `gen2-edge`: values YAML and the script read differently, BOM and
CRLF files, ties across agents, lifespans ending today, future dates).  Its
"how" says how it was made; no script code is in the repository.

memlens runs on each vault less the files it finds invalid, BOM files left
as they are (the script's copy had the BOM taken off: memlens reads such a
file's frontmatter on purpose).  Every case must give the script's hits in
its order with its scores (1e-6) and its JSON: the same keys in the same
order, the same values, and the same text, byte for byte.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bench.generate import GENERATOR, generate
from memlens.tui.cli.main import cli

REPO = Path(__file__).resolve().parents[2]
REF: dict[str, Any] = json.loads(
    (REPO / "tests/fixtures/.ocean-parity/expected/memory-search-reference.json").read_text()
)
AS_OF = REF["as_of"]
CASES = [(key, case) for key, vault in REF["vaults"].items() for case in vault["cases"]]


def _make(key: str, dest: Path) -> Path:
    """The vault memlens searches for `key`: a copy less its invalid files, or generated."""
    spec = REF["vaults"][key]
    gen = spec.get("generate")
    if gen is not None:
        assert gen["generator"] == GENERATOR, "bench.generate changed: remake the reference"
        generate(dest, gen["total"], seed=gen["seed"], mix=gen["mix"])
        return dest / gen["folder"]
    shutil.copytree(REPO / spec["source"], dest)
    for rel in spec["removed"]:
        (dest / rel).unlink()
    return dest


@pytest.fixture(scope="module")
def vault_of(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """Each vault made once, when its first case runs."""
    made: dict[str, Path] = {}

    def get(key: str) -> Path:
        if key not in made:
            made[key] = _make(key, tmp_path_factory.mktemp(key) / "v")
        return made[key]

    return get


def _absolute(output: dict[str, Any], root: Path) -> dict[str, Any]:
    """The reference output with its paths as the script prints them for `root`."""
    results = [dict(r, path=str(root.resolve() / r["path"])) for r in output["results"]]
    return {"results": results, "total": output["total"]}


@pytest.mark.parametrize(
    ("key", "case"), CASES, ids=[f"{k}: {' '.join(c['args'])}" for k, c in CASES]
)
def test_search_is_the_scripts(
    vault_of: Callable[[str], Path], key: str, case: dict[str, Any]
) -> None:
    root = vault_of(key)
    args = [*case["args"], "--format", "ocean", "--as-of", AS_OF]
    res = CliRunner().invoke(cli, ["--no-cache", "search", str(root), *args])
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    want = _absolute(case["output"], root)
    assert list(got) == ["results", "total"] and got["total"] == want["total"]
    assert [r["path"] for r in got["results"]] == [r["path"] for r in want["results"]]
    for ours, theirs in zip(got["results"], want["results"], strict=True):
        assert list(ours) == list(theirs)  # the script's keys, in its order
        assert ours["score"] == pytest.approx(theirs["score"], abs=1e-6)
        assert {k: v for k, v in ours.items() if k != "score"} == {
            k: v for k, v in theirs.items() if k != "score"
        }
    # And the text itself: the script prints json.dumps(..., indent=2).
    assert res.stdout == json.dumps(want, indent=2) + "\n"


def test_every_vault_has_hits_and_ties() -> None:
    """The reference is not trivially empty: hits in every vault, and tied scores
    across agents (the load order decides) in the edge-case vaults."""
    for key, vault in REF["vaults"].items():
        assert any(c["output"]["results"] for c in vault["cases"]), key
    for key in ("e1", "e2"):
        tied = [
            c
            for c in REF["vaults"][key]["cases"]
            if len({r["score"] for r in c["output"]["results"]}) < len(c["output"]["results"])
        ]
        assert tied, key
