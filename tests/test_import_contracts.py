"""The import contracts in pyproject.toml hold: core's layers, no cycles, the core/UI wall.

`make test` runs `lint-imports` right after mypy; this runs the same check
inside pytest, so `pytest` on its own (an editor, one file, the CI copy)
also fails on a new cycle or an import against the layers.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_import_contract_is_kept() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "importlinter"
    ]["contracts"]
    lint = Path(sys.executable).with_name("lint-imports")
    # --no-cache: nothing written into the checkout, and xdist workers never share a cache.
    done = subprocess.run(
        [str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Contracts: {len(contracts)} kept, 0 broken." in done.stdout
