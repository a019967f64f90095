"""A start that re-read a few files writes them to the vault's store at once, not after all vaults.

A cold start (every file parsed) still lists every vault before writing
any store; a warm start with a few changes writes those rows right after
their vault's rows are posted, so the store is current when the load ends.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import memlens.tui.app_loading as app_module
from memlens.core.scan.cache import cache_path
from memlens.core.scan.vault import discover
from memlens.tui.messages import LoadFinished

from .conftest import SIZE, AppFactory, settle

#: Each test with a cache folder of its own (`private_cache` in tests/conftest.py).
pytestmark = pytest.mark.usefixtures("private_cache")


def _stored_sha(root: Path, rel: str) -> bytes | None:
    conn = sqlite3.connect(cache_path(root))
    try:
        row = conn.execute("SELECT sha256 FROM files WHERE rel = ?", (rel.encode(),)).fetchone()
    finally:
        conn.close()
    return None if row is None else bytes(row[0])


async def test_a_few_changed_files_are_stored_before_the_load_ends(
    make_app: AppFactory, own_fixtures_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hashlib

    vault = next(v for v in discover(own_fixtures_copy) if v.format == "cognitive-memory")
    app = make_app([vault.root])
    async with app.run_test(size=SIZE) as pilot:  # a cold start: writes the store
        await settle(pilot)
    changed = sorted(p for p in (vault.root / "graph").rglob("*.md"))[0]
    rel = changed.relative_to(vault.root).as_posix()
    changed.write_bytes(changed.read_bytes() + b"\nOne more line, written between two starts.\n")
    new_sha = hashlib.sha256(changed.read_bytes()).digest()
    assert _stored_sha(vault.root, rel) != new_sha
    at_finish: list[bytes | None] = []
    real = app_module.LoadFinished

    def spy(generation: int) -> LoadFinished:
        at_finish.append(_stored_sha(vault.root, rel))  # in the load worker, as it ends
        return real(generation)

    monkeypatch.setattr(app_module, "LoadFinished", spy)
    app = make_app([vault.root])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not app.loading and app.errors == []
    assert at_finish == [new_sha]


async def test_a_cold_start_lists_every_vault_before_writing_a_store(
    make_app: AppFactory, own_fixtures_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    roots = [v.root for v in discover(own_fixtures_copy)]
    at_finish: list[list[bool]] = []
    real = app_module.LoadFinished

    def spy(generation: int) -> LoadFinished:
        at_finish.append([cache_path(r).exists() and _has_rows(r) for r in roots])
        return real(generation)

    monkeypatch.setattr(app_module, "LoadFinished", spy)
    monkeypatch.setattr(app_module, "SAVE_AT_ONCE", 0)  # the fixtures are small: as at 100k
    app = make_app([own_fixtures_copy])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
    assert at_finish == [[False] * len(roots)]
    assert all(_has_rows(r) for r in roots)  # written after


def _has_rows(root: Path) -> bool:
    try:
        conn = sqlite3.connect(cache_path(root))
        try:
            return bool(conn.execute("SELECT count(*) FROM files").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return False
