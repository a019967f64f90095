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
# Meaning-based matching (the optional `semantic` extra) is off unless a test
# turns it on: the other tests' expected orders are the lexical ranking's,
# whether or not the extra happens to be installed.
os.environ["MEMLENS_SEMANTIC"] = "0"
(_ISOLATED / "state").mkdir()
(_ISOLATED / "state" / "first-run-hint-seen").write_text("shown\n", encoding="utf-8")

#: The project's own test vaults (one folder per format) and their expected
#: figures (`expected/<format>.json`, same shape as the acceptance set's
#: `formats.<format>` block).  Always present: the suite runs from these.
OWN_FIXTURES = Path(__file__).resolve().parent / "fixtures"

#: The acceptance layer: `../shared/fixtures` beside the checkout, present on
#: our machines and in CI, absent on a fresh clone.  `MEMLENS_SHARED_FIXTURES`
#: points elsewhere (set it to a missing path to rehearse a clone alone).
FIXTURES = Path(
    os.environ.get("MEMLENS_SHARED_FIXTURES")
    or Path(__file__).resolve().parents[1].parent / "shared" / "fixtures"
)
#: The one skip reason of every acceptance-layer test.
ACCEPTANCE_SKIP = "acceptance layer: ../shared/fixtures is not beside this checkout"
AS_OF = date(2026, 11, 22)


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """The acceptance fixtures (`../shared/fixtures`); skips cleanly when absent."""
    if not FIXTURES.is_dir():
        pytest.skip(ACCEPTANCE_SKIP)
    return FIXTURES


@pytest.fixture(scope="session")
def own_fixtures_dir() -> Path:
    """The project's own test vaults (`tests/fixtures/`), always present."""
    return OWN_FIXTURES


@pytest.fixture(scope="session")
def own_expected() -> dict[str, Any]:
    """Expected figures of the own vaults: `{"as_of", "formats": {format: {...}}}`."""
    formats: dict[str, Any] = {}
    for f in sorted((OWN_FIXTURES / "expected").glob("*.json")):
        formats[f.stem] = json.loads(f.read_text(encoding="utf-8"))
    return {"as_of": AS_OF.isoformat(), "formats": formats}


@pytest.fixture
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of the test's own (stores, kept rows, indexes start empty)."""
    folder = tmp_path / "user-cache"
    monkeypatch.setenv("MEMLENS_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def own_fixtures_copy(tmp_path: Path) -> Path:
    """A writable copy of every own test vault (without the expected figures)."""
    dest = tmp_path / "own-fixtures"
    shutil.copytree(OWN_FIXTURES, dest, ignore=shutil.ignore_patterns("expected", "README.md"))
    return dest


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


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when a test wrote into the repository's own test vaults.

    Tests write only into copies (`own_fixtures_copy`); a state folder left in
    `tests/fixtures` (an access recorded by an app opened on the originals)
    would change what later tests and later runs read.
    """
    if hasattr(session.config, "workerinput"):  # an xdist worker: the controller checks
        return
    written = sorted(str(p.relative_to(OWN_FIXTURES)) for p in OWN_FIXTURES.rglob(".memlens"))
    if written:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_line(f"error: tests wrote into tests/fixtures: {', '.join(written)}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
