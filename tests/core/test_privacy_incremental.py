"""The app's incremental privacy scan (core/privacy/incremental.py) finds what a whole scan finds.

On the planted vaults of tests/privacy_plant.py: the first scan, a scan
after nothing changed (no file scanned), after one file changed (that file
only), after a vault-wide file appeared (its whole vault), and after a
cancelled scan, each compared with `privacy.scan_vault`.
"""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path
from typing import Any

import privacy_plant as pp
import pytest

from memlens.core.privacy import Finding, incremental, scan_vault
from memlens.core.privacy.incremental import FindingsCache
from memlens.core.scan.vault import Catalog, Vault, open_catalog, rescan_paths

AS_OF = date(2026, 11, 27)


@pytest.fixture
def planted(tmp_path: Path) -> Catalog:
    pp.plant(tmp_path)
    return open_catalog(tmp_path, cache=False)


def _shape(found: list[Finding]) -> list[tuple[Any, ...]]:
    """Every field of every finding, the secret and health included, in order."""
    return [
        (
            f.vault,
            f.format,
            f.id,
            f.path,
            f.field,
            f.line,
            f.kind,
            f.secret,
            f.health,
            f.record_line,
            f.index,
            str(f.vault_root),
        )
        for f in found
    ]


def _check(cache: FindingsCache, vault: Vault) -> int:
    """Scan `vault` through the cache, compare with a whole scan; files scanned again."""
    got = cache.scan_vault(vault, AS_OF)
    assert got is not None
    assert _shape(got) == _shape(scan_vault(vault, AS_OF))
    return cache.rescanned


def _vault(catalog: Catalog, fmt: str) -> Vault:
    return next(v for v in catalog.vaults if v.format == fmt)


def test_first_and_unchanged_scans_equal_a_whole_scan(planted: Catalog) -> None:
    cache = FindingsCache()
    total = 0
    for vault in planted.vaults:
        files = len({m.path for m in vault.memories})
        assert _check(cache, vault) == files
        total += len(scan_vault(vault, AS_OF))
        assert _check(cache, vault) == 0  # nothing changed: nothing scanned
    assert total > 0  # the planted secrets are there to compare


def test_one_changed_file_is_the_only_one_scanned(planted: Catalog) -> None:
    cache = FindingsCache()
    vault = _vault(planted, "project-ocean")
    _check(cache, vault)
    target = vault.memories[0]
    path = target.abs_path
    secret = "ghp_" + "x7Qm2Zr9Lk4Tn8Vb3Wc6Yd1Pf5Hs0Ja2Ge7"
    path.write_text(path.read_text() + f"\nThe deploy token is {secret}.\n")
    rescan_paths(vault, [path])
    assert _check(cache, vault) == 1
    assert secret in {f.secret for f in scan_vault(vault, AS_OF)}


def test_each_format_after_a_change(planted: Catalog) -> None:
    cache = FindingsCache()
    for vault in planted.vaults:
        _check(cache, vault)
        first = vault.memories[0].abs_path
        first.write_bytes(first.read_bytes() + b"\n")  # new bytes, same memories
        rescan_paths(vault, [first])
        assert _check(cache, vault) == 1


def test_a_vault_wide_file_rescans_its_vault(planted: Catalog) -> None:
    cache = FindingsCache()
    vault = _vault(planted, "cognitive-memory")
    files = len({m.path for m in vault.memories})
    _check(cache, vault)
    state = vault.root / "_state.json"
    state.write_text('{"version": 1, "memories": {}}\n')
    rescan_paths(vault, [state])
    assert any(fs.vault_wide for fs in vault.scans.values())
    assert _check(cache, vault) == files


def test_a_removed_file_leaves_no_finding(planted: Catalog) -> None:
    cache = FindingsCache()
    vault = _vault(planted, "cognitive-memory")
    _check(cache, vault)
    holder = next(f for f in scan_vault(vault, AS_OF))
    gone = vault.root / holder.path
    shutil.move(gone, vault.root.parent / "moved-away.md")
    rescan_paths(vault, [gone])
    assert _check(cache, vault) == 0
    assert holder.path not in {f.path for f in scan_vault(vault, AS_OF)}


def test_a_cancelled_scan_keeps_its_work(planted: Catalog) -> None:
    cache = FindingsCache()
    vault = _vault(planted, "project-ocean")
    calls = [0]

    def cancel_after_two() -> bool:
        calls[0] += 1
        return calls[0] > 2

    assert cache.scan_vault(vault, AS_OF, cancel_after_two) is None
    files = len({m.path for m in vault.memories})
    assert _check(cache, vault) == files - 2


def test_health_follows_as_of_without_a_rescan(planted: Catalog) -> None:
    cache = FindingsCache()
    vault = _vault(planted, "project-ocean")
    _check(cache, vault)
    later = date(2031, 1, 1)
    got = cache.scan_vault(vault, later)
    assert got is not None and cache.rescanned == 0
    assert _shape(got) == _shape(scan_vault(vault, later))


def test_a_changed_section_alone_goes_through_the_detectors(
    planted: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = FindingsCache()
    vault = _vault(planted, "dream-cycle")
    _check(cache, vault)
    path = vault.root / "observations.md"
    text = path.read_text(encoding="utf-8")
    heading = next(line for line in text.splitlines() if line.startswith("## "))
    secret = "ghp_" + "x7Qm2Zr9Lk4Tn8Vb3Wc6Yd1Pf5Hs0Ja2Ge7Q"
    path.write_text(
        text.replace(heading, f"{heading}\nThe bot token is {secret}.", 1), encoding="utf-8"
    )
    rescan_paths(vault, [path])
    seen: list[str] = []
    real = incremental.detect

    def spy(text: str, field: str = "") -> Any:
        seen.append(text)
        return real(text, field)

    monkeypatch.setattr(incremental, "detect", spy)
    assert _check(cache, vault) == 1
    assert seen and all(secret in t for t in seen)  # only the changed section's text
    assert secret in {f.secret for f in scan_vault(vault, AS_OF)}
