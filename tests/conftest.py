"""Shared test fixtures: where the read-only fixture vaults are, and copies of them."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from datetime import date
from pathlib import Path
from typing import Any

import pytest

# Tests never read the developer's own settings or cache: an empty config
# file and a private cache directory for this test process.
_ISOLATED = Path(tempfile.mkdtemp(prefix="memlens-tests-"))
(_ISOLATED / "config.toml").write_text("", encoding="utf-8")
os.environ["MEMLENS_CONFIG"] = str(_ISOLATED / "config.toml")
os.environ["MEMLENS_CACHE_DIR"] = str(_ISOLATED / "cache")
# The app's first-run hint counts as seen (tests of the hint use a state dir of their own).
os.environ["MEMLENS_STATE_DIR"] = str(_ISOLATED / "state")
(_ISOLATED / "state").mkdir()
(_ISOLATED / "state" / "first-run-hint-seen").write_text("shown\n", encoding="utf-8")

FIXTURES = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures"
AS_OF = date(2026, 11, 22)


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    if not FIXTURES.is_dir():
        pytest.skip(f"shared fixtures not found at {FIXTURES}")
    return FIXTURES


@pytest.fixture(scope="session")
def expected(fixtures_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((fixtures_dir / "expected.json").read_text())
    return data


@pytest.fixture
def fixtures_copy(fixtures_dir: Path, tmp_path: Path) -> Path:
    """A writable copy of every fixture vault (the originals are read-only)."""
    dest = tmp_path / "fixtures"
    shutil.copytree(fixtures_dir, dest)
    for p in [dest, *dest.rglob("*")]:
        p.chmod(p.stat().st_mode | 0o200)
    return dest
