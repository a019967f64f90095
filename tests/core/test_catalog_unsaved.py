"""`open_catalog_unsaved`: the catalog at once, the stores written by the call it returns."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

import pytest

from memlens.core.scan.cache import cache_path
from memlens.core.scan.deferred import open_catalog_unsaved
from memlens.core.scan.vault import open_catalog

#: Each test with a cache folder of its own (`private_cache` in tests/conftest.py).
pytestmark = pytest.mark.usefixtures("private_cache")


def _listing(catalog: object) -> list[tuple[str, str, str, str]]:
    from memlens.core.scan.vault import Catalog

    assert isinstance(catalog, Catalog)
    return sorted((m.format, m.id, m.path, m.body) for m in catalog.memories())


def _stored_files(root: Path) -> int:
    path = cache_path(root)
    if not path.exists():
        return 0
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT count(*) FROM files").fetchone()[0])
    except sqlite3.OperationalError:  # no table yet
        return 0
    finally:
        conn.close()


def test_the_catalog_is_the_same_and_nothing_is_written_before_save(
    own_fixtures_copy: Path,
) -> None:
    catalog, save = open_catalog_unsaved(own_fixtures_copy, cache=True)
    assert len(catalog.vaults) == 5
    assert all(_stored_files(v.root) == 0 for v in catalog.vaults)
    assert _listing(catalog) == _listing(open_catalog(own_fixtures_copy, cache=False))
    problems = sorted((p.path, p.detail) for p in catalog.problems())
    assert problems == sorted(
        (p.path, p.detail) for p in open_catalog(own_fixtures_copy, cache=False).problems()
    )
    save()
    for v in catalog.vaults:
        assert _stored_files(v.root) > 0, v.root
    warm = open_catalog(own_fixtures_copy, cache=True)
    for v in warm.vaults:
        assert v.cache_stats is not None and v.cache_stats.status == "warm", v.root
        assert v.cache_stats.parsed == 0
    assert _listing(warm) == _listing(catalog)


def test_save_runs_in_another_thread_while_the_catalog_is_read(own_fixtures_copy: Path) -> None:
    catalog, save = open_catalog_unsaved(own_fixtures_copy, cache=True)
    saver = threading.Thread(target=save)
    saver.start()
    seen = _listing(catalog)  # read while the rows are written
    saver.join()
    assert seen == _listing(open_catalog(own_fixtures_copy, cache=True))


def test_a_store_that_cannot_be_written_is_no_error(
    own_fixtures_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder should be\n")
    monkeypatch.setenv("MEMLENS_CACHE_DIR", os.fspath(blocked))
    catalog, save = open_catalog_unsaved(own_fixtures_copy, cache=True)
    save()  # never raises: the stores are a cache
    assert _listing(catalog) == _listing(open_catalog(own_fixtures_copy, cache=False))


def test_without_cache_save_writes_nothing(own_fixtures_copy: Path) -> None:
    catalog, save = open_catalog_unsaved(own_fixtures_copy, cache=False)
    save()
    assert all(not cache_path(v.root).exists() for v in catalog.vaults)
