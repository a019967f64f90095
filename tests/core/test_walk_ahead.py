"""The warm start's stat walk taken ahead by a helper process (`core.walk_ahead`).

Whatever the helper does, a scan must end exactly as if it had walked the
vault itself: same listing, same reuse of cached files, changed files
parsed again, and a helper that fails is simply not used.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memlens.core.formats import adapter_for
from memlens.core.model import ScanResult
from memlens.core.scan import walk_ahead as wa
from memlens.core.scan.vault import Vault, discover, scan_vault, start_walk_ahead


def assert_same(got: ScanResult, want: ScanResult) -> None:
    assert [m.id for m in got.memories] == [m.id for m in want.memories]
    assert got.memories == want.memories
    assert got.problems == want.problems
    assert got.ref_problems == want.ref_problems


def vaults(root: Path) -> list[Vault]:
    return sorted(discover(root), key=lambda v: str(v.root))


def test_walk_vault_is_the_scans_own_walk(own_fixtures_dir: Path) -> None:
    for v in vaults(own_fixtures_dir):
        listing, keys = wa.walk_vault(str(v.root), v.format)
        assert listing[:2] == adapter_for(v.format).file_listing(v.root)[:2]
        for rel, key in zip(listing.names, keys, strict=True):
            st = os.stat(v.root / rel)
            assert key == (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def test_a_warm_start_with_the_helper_equals_one_without(own_fixtures_copy: Path) -> None:
    for v in vaults(own_fixtures_copy):
        scan_vault(v, cache=True)  # writes the caches
        # Then one memory file of each vault changes.
        path = v.root / next(r for r, fs in v.scans.items() if fs.memories)
        path.write_bytes(path.read_bytes() + b"\n")
    found = vaults(own_fixtures_copy)
    ahead = start_walk_ahead(found, cache=True, force=True)
    assert ahead is not None
    taken: list[bool] = []
    real_take = ahead.take

    def spy(root: Path | str) -> wa.Walk | None:
        got = real_take(root)
        taken.append(got is not None)
        return got

    ahead.take = spy
    with ahead:
        for v in found:
            scan_vault(v, cache=True, ahead=ahead)
            stats = v.cache_stats
            assert stats is not None and stats.parsed >= 1, v.format  # the changed file
            assert stats.reused == stats.files - stats.parsed
            assert_same(v.result, v.adapter.scan(v.root))
    assert len(taken) == len(found) and all(taken), "the helper's walks were not used"


def test_vaults_taken_out_of_order(own_fixtures_dir: Path) -> None:
    found = vaults(own_fixtures_dir)
    with wa.WalkAhead([(str(v.root), v.format) for v in found]) as ahead:
        for v in reversed(found):
            got = ahead.take(v.root)
            assert got is not None
            assert got[0][:2] == v.adapter.file_listing(v.root)[:2]
        assert ahead.take(found[0].root) is None  # each walk is given once


def test_a_failing_helper_is_not_used(own_fixtures_copy: Path) -> None:
    (v, *_rest) = vaults(own_fixtures_copy)
    scan_vault(v, cache=True)
    with wa.WalkAhead([(str(v.root), "no-such-format")]) as ahead:
        assert ahead.take(v.root) is None
        again = scan_vault(vaults(own_fixtures_copy)[0], cache=True, ahead=ahead)
    assert again.cache_stats is not None and again.cache_stats.parsed == 0
    assert_same(again.result, again.adapter.scan(again.root))


def test_a_killed_helper_is_not_used(own_fixtures_copy: Path) -> None:
    found = vaults(own_fixtures_copy)
    ahead = wa.WalkAhead([(str(v.root), v.format) for v in found])
    ahead.close()
    assert ahead.take(found[0].root) is None


def test_when_the_helper_starts(own_fixtures_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    found = vaults(own_fixtures_copy)
    assert start_walk_ahead(found, cache=False) is None
    # The fixture vaults' caches are far below MIN_CACHE_BYTES: not worth a process.
    for v in found:
        scan_vault(v, cache=True)
    monkeypatch.setattr(wa, "MIN_CACHE_BYTES", 1)
    monkeypatch.setattr("memlens.core.workers.spare_cpu", lambda: True)
    ahead = start_walk_ahead(found, cache=True)
    assert ahead is not None
    ahead.close()
    monkeypatch.setenv(wa.ENV, "0")
    assert start_walk_ahead(found, cache=True) is None
    monkeypatch.delenv(wa.ENV)
    monkeypatch.setattr("memlens.core.workers.spare_cpu", lambda: False)
    assert start_walk_ahead(found, cache=True) is None
    monkeypatch.setattr(wa, "MIN_CACHE_BYTES", 10**12)
    monkeypatch.setattr("memlens.core.workers.spare_cpu", lambda: True)
    assert start_walk_ahead(found, cache=True) is None
