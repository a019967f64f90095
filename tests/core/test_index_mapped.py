"""The search index cache with its big arrays memory-mapped (`core.search.index_cache`).

The fixtures are small, so every test here maps every array (the threshold
set to 0): what a 100k index does with its postings.
"""

from __future__ import annotations

import mmap
import zlib
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from memlens.core.scan.vault import open_catalog
from memlens.core.search import index_cache
from memlens.core.search.index import SearchIndex
from memlens.core.search.index_cache import index_cache_path, load_index

AS_OF = date(2026, 11, 22)
QUERIES = ("sqlite", "backup", "retry", "memory decay", "tag:ops")


@pytest.fixture(autouse=True)
def mapped_cache(private_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of the test's own, every index file memory-mapped however small."""
    monkeypatch.setattr(index_cache, "MAPPED_MIN_BYTES", 0)
    return private_cache


def _mapped(array: np.ndarray) -> bool:
    """`array` is a view of a memory-mapped file."""
    base: object = array
    while isinstance(base, np.ndarray):
        base = base.base
    return isinstance(base, memoryview) and isinstance(base.obj, mmap.mmap)


def _ranked(index: SearchIndex, query: str) -> list[tuple[str, str, float]]:
    return [
        (str(h.memory.vault_root), h.memory.id, h.score)
        for h in index.search(query, 50, include_inactive=True)
    ]


def test_mapped_arrays_give_the_built_index(own_fixtures_copy: Path) -> None:
    built, stats = load_index(open_catalog(own_fixtures_copy, cache=True), AS_OF)
    assert stats.status == "built"
    catalog = open_catalog(own_fixtures_copy, cache=True)
    loaded, stats = load_index(catalog, AS_OF)
    assert stats.status == "loaded"
    postings = loaded.state.terms
    # The postings are views of the mapped file, not copies.
    assert _mapped(postings.xt_indices)
    assert not _mapped(built.state.terms.xt_indices)
    assert len(postings.xt_counts) == len(built.state.terms.xt_counts) > 0
    assert np.array_equal(postings.base_weights(), built.state.terms.base_weights())
    for query in QUERIES:
        assert _ranked(loaded, query) == _ranked(built, query)
    fresh = SearchIndex.from_catalog(catalog, AS_OF)
    for query in QUERIES:
        assert _ranked(loaded, query) == _ranked(fresh, query)


def test_changing_a_mapped_index_never_writes_the_file(own_fixtures_copy: Path) -> None:
    catalog = open_catalog(own_fixtures_copy, cache=True)
    load_index(catalog, AS_OF)
    path = index_cache_path(catalog.vaults)
    before = path.read_bytes()
    loaded, _stats = load_index(open_catalog(own_fixtures_copy, cache=True), AS_OF)
    gone = loaded.memories()[0]
    loaded.remove(gone.key)  # writes into the mapped alive mask
    loaded.state.terms.xt_indices[:] = 0  # and into the biggest mapped array
    assert gone.id not in [m for _root, m, _s in _ranked(loaded, gone.title.split()[0])]
    assert path.read_bytes() == before
    again, stats = load_index(open_catalog(own_fixtures_copy, cache=True), AS_OF)
    assert stats.status == "loaded"
    assert _ranked(again, "sqlite") == _ranked(SearchIndex.from_catalog(catalog, AS_OF), "sqlite")


@pytest.mark.parametrize("where", ["array", "table"])
def test_a_damaged_mapped_cache_is_rebuilt(own_fixtures_copy: Path, where: str) -> None:
    catalog = open_catalog(own_fixtures_copy, cache=True)
    load_index(catalog, AS_OF)
    path = index_cache_path(catalog.vaults)
    blob = bytearray(path.read_bytes())
    at = len(blob) - 3 if where == "array" else len(blob) // 2
    blob[at] ^= 0x55
    path.write_bytes(bytes(blob))
    path.chmod(0o600)
    index, stats = load_index(open_catalog(own_fixtures_copy, cache=True), AS_OF)
    assert stats.status == "rebuilt" and stats.reason == "index cache checksum mismatch"
    assert _ranked(index, "sqlite") == _ranked(SearchIndex.from_catalog(catalog, AS_OF), "sqlite")


def test_a_patched_mapped_index_is_saved_and_loaded_again(own_fixtures_copy: Path) -> None:
    catalog = open_catalog(own_fixtures_copy, cache=True)
    load_index(catalog, AS_OF)
    vault = next(v for v in catalog.vaults if v.format == "project-ocean")
    target = next(
        vault.root / rel
        for rel, fs in vault.scans.items()
        if len(fs.memories) == 1 and not fs.problems
    )
    target.write_bytes(target.read_bytes() + b"\nzanzibarquux appears now.\n")
    again = open_catalog(own_fixtures_copy, cache=True)
    index, stats = load_index(again, AS_OF)  # patched (mapped arrays), then saved
    assert stats.status == "loaded" and stats.updated == 1 and not stats.stale
    third, stats = load_index(open_catalog(own_fixtures_copy, cache=True), AS_OF)
    assert stats.status == "loaded" and stats.updated == 0
    want = [m.id for m in again.memories() if m.abs_path == target]
    assert [m for _r, m, _s in _ranked(third, "zanzibarquux")] == want
    assert _ranked(third, "sqlite") == _ranked(index, "sqlite")


@pytest.mark.parametrize("chunk", [1, 7, 4096, 1 << 20])
def test_the_checksum_is_of_every_byte_after_the_header_however_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    from memlens.core.search import index_file

    monkeypatch.setattr(index_file, "_CRC_CHUNK", chunk)
    data = bytes(range(256)) * 40 + b"tail"
    path = tmp_path / "cache.bin"
    path.write_bytes(data)
    with path.open("rb") as fh:
        for at in (0, 5, 300, len(data) - 1, len(data)):
            assert index_file._crc_from(fh, at) == zlib.crc32(data[at:])
