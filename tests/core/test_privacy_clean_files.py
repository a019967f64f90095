"""Files found clean kept between runs (core/privacy/clean_files.py).

A later run (a new `FindingsCache` on the same kept file: the app's next
start, the next `memlens secrets`) scans only the files that hold findings
or changed, finds exactly what a whole scan finds, and the kept file never
holds a secret.
"""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import privacy_plant as pp
import pytest
from test_privacy_incremental import _shape

from memlens.core.privacy import incremental, scan_vault
from memlens.core.privacy.clean_files import CleanFiles
from memlens.core.privacy.incremental import FindingsCache
from memlens.core.scan.vault import Catalog, open_catalog, rescan_paths

AS_OF = date(2026, 11, 27)


@pytest.fixture
def kept_path(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "privacy.sqlite3"


def _run(catalog: Catalog, kept_path: Path) -> tuple[int, int]:
    """One run through a fresh cache on the kept file: (files scanned, files with findings)."""
    kept = CleanFiles.open(kept_path)
    assert kept.usable
    cache = FindingsCache(kept)
    scanned = holding = 0
    for vault in catalog.vaults:
        got = cache.scan_vault(vault, AS_OF)
        assert got is not None
        assert _shape(got) == _shape(scan_vault(vault, AS_OF))
        scanned += cache.rescanned
        holding += len({f.path for f in got})
    kept.close()
    return scanned, holding


def _files(catalog: Catalog) -> int:
    return sum(len({m.path for m in v.memories}) for v in catalog.vaults)


def test_a_later_run_scans_only_files_with_findings(tmp_path: Path, kept_path: Path) -> None:
    pp.plant(tmp_path / "vaults")
    catalog = open_catalog(tmp_path / "vaults", cache=False)
    scanned, holding = _run(catalog, kept_path)
    assert scanned == _files(catalog)
    assert 0 < holding < scanned  # the planted vaults have clean files too
    again, holding_again = _run(catalog, kept_path)
    assert (again, holding_again) == (holding, holding)


def test_the_kept_file_holds_no_secret(tmp_path: Path, kept_path: Path) -> None:
    planted = pp.plant(tmp_path / "vaults")
    catalog = open_catalog(tmp_path / "vaults", cache=False)
    _run(catalog, kept_path)
    stored = b"".join(p.read_bytes() for p in kept_path.parent.iterdir())
    assert planted
    for p in planted:
        assert p.secret.encode() not in stored, p.kind


def test_a_changed_clean_file_is_scanned_again(tmp_path: Path, kept_path: Path) -> None:
    pp.plant(tmp_path / "vaults")
    catalog = open_catalog(tmp_path / "vaults", cache=False)
    _run(catalog, kept_path)
    vault = next(v for v in catalog.vaults if v.format == "project-ocean")
    clean = {f.path for f in scan_vault(vault, AS_OF)}
    target = next(m for m in vault.memories if m.path not in clean)
    secret = "ghp_" + "x7Qm2Zr9Lk4Tn8Vb3Wc6Yd1Pf5Hs0Ja2Ge7"
    path = target.abs_path
    path.write_text(path.read_text() + f"\nThe deploy token is {secret}.\n")
    rescan_paths(vault, [path])
    _scanned, holding = _run(catalog, kept_path)
    assert secret in {f.secret for f in scan_vault(vault, AS_OF)}
    assert _run(catalog, kept_path)[0] == holding  # now a file with a finding: scanned each run


def test_new_detector_code_scans_everything_again(
    tmp_path: Path, kept_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pp.plant(tmp_path / "vaults")
    catalog = open_catalog(tmp_path / "vaults", cache=False)
    _run(catalog, kept_path)
    monkeypatch.setattr(incremental, "privacy_code", lambda fmt: f"other-{fmt}")
    assert _run(catalog, kept_path)[0] == _files(catalog)


def test_a_damaged_kept_file_is_remade(tmp_path: Path, kept_path: Path) -> None:
    pp.plant(tmp_path / "vaults")
    catalog = open_catalog(tmp_path / "vaults", cache=False)
    _run(catalog, kept_path)
    kept_path.write_bytes(b"not a database" * 100)
    for side in ("-wal", "-shm"):
        kept_path.with_name(kept_path.name + side).unlink(missing_ok=True)
    scanned, holding = _run(catalog, kept_path)
    assert scanned == _files(catalog)
    assert _run(catalog, kept_path)[0] == holding


def test_a_cancelled_scan_keeps_what_it_found_clean(tmp_path: Path, kept_path: Path) -> None:
    pp.plant(tmp_path / "vaults")
    catalog = open_catalog(tmp_path / "vaults", cache=False)
    # observation/v1's planted files: a clean one before the last.
    vault = next(v for v in catalog.vaults if v.format == "observation-v1")
    files = list(dict.fromkeys(m.path for m in vault.memories))
    holding = {f.path for f in scan_vault(vault, AS_OF)}
    # Cancelled once the first clean file was scanned.
    upto = next(n for n, p in enumerate(files) if p not in holding) + 1
    calls = [0]

    def cancel_midway() -> bool:
        calls[0] += 1
        return calls[0] > upto

    kept = CleanFiles.open(kept_path)
    assert FindingsCache(kept).scan_vault(vault, AS_OF, cancel_midway) is None
    kept.close()
    clean_seen = [p for p in files[:upto] if p not in holding]
    assert upto < len(files) and clean_seen
    later = FindingsCache(CleanFiles.open(kept_path))
    got = later.scan_vault(vault, AS_OF)
    assert got is not None and _shape(got) == _shape(scan_vault(vault, AS_OF))
    assert later.rescanned == len(files) - len(clean_seen)


def test_a_file_name_that_is_not_utf8_is_kept_too(tmp_path: Path, kept_path: Path) -> None:
    pp.plant(tmp_path / "vaults")
    vault_dir = tmp_path / "vaults" / "observation" / "observations"
    source = next(vault_dir.glob("*.md"))
    odd = vault_dir / os.fsdecode(b"obs-\xff-odd.md")
    text = source.read_text().replace("id: ", "id: odd-", 1)
    odd.write_text(text)
    catalog = open_catalog(tmp_path / "vaults", cache=False)
    scanned, holding = _run(catalog, kept_path)
    assert scanned == _files(catalog)
    assert _run(catalog, kept_path)[0] == holding
