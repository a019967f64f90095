"""The persistent scan cache: reused only when provably current, rebuilt otherwise."""

from __future__ import annotations

import os
import sqlite3
import stat
from datetime import date
from pathlib import Path

import pytest

from memlens.core.formats.files import rel_posix
from memlens.core.model import ScanResult
from memlens.core.scan import cache as scan_cache
from memlens.core.scan import reading as scan_reading
from memlens.core.scan import stored
from memlens.core.scan.cache import cache_path, load_entries, save_entries
from memlens.core.scan.vault import (
    Vault,
    discover,
    open_catalog,
    rescan_paths,
    save_cache,
    scan_vault,
)
from memlens.core.search.index import SearchIndex
from memlens.core.search.index_cache import index_cache_path, load_index
from memlens.core.store.db import SCHEMA_VERSION

FORMATS = (
    "dream-cycle",
    "observation-v1",
    "experience-records",
    "project-ocean",
    "cognitive-memory",
)


#: Each test with a cache folder of its own (`private_cache` in tests/conftest.py).
pytestmark = pytest.mark.usefixtures("private_cache")


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stamps are never racy, as for files last written long before the scan.

    Test files were all written a moment ago, so by default every entry is
    re-checked by content; this isolates the stat-key path.
    """
    monkeypatch.setattr(scan_reading, "RACY_WINDOW_NS", 0)


def assert_same(got: ScanResult, want: ScanResult) -> None:
    assert got.memories == want.memories
    assert got.problems == want.problems
    assert got.ref_problems == want.ref_problems
    assert got.records == want.records


def vault_at(root: Path, fmt: str) -> Vault:
    (vault,) = [v for v in discover(root) if v.format == fmt]
    return vault


def cached_scan(root: Path, fmt: str) -> Vault:
    return scan_vault(Vault(root=root, format=fmt, rel="."), cache=True)


def memory_file(vault: Vault) -> Path:
    """A file of the vault that holds exactly one valid memory."""
    for rel, fs in vault.scans.items():
        if len(fs.memories) == 1 and not fs.problems:
            return vault.root / rel
    raise AssertionError("no one-memory file")


# --------------------------------------------------------------------------- basics


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.usefixtures("settled")
def test_warm_start_reuses_everything_and_equals_a_full_scan(
    own_fixtures_copy: Path, fmt: str, private_cache: Path
) -> None:
    root = vault_at(own_fixtures_copy, fmt).root
    cold = cached_scan(root, fmt)
    stats = cold.cache_stats
    assert stats is not None and stats.status == "cold" and stats.saved
    assert stats.parsed == stats.files > 0

    warm = cached_scan(root, fmt)
    stats = warm.cache_stats
    assert stats is not None and stats.status == "warm"
    assert stats.parsed == 0 and stats.reused == stats.files and not stats.saved
    assert_same(warm.result, warm.adapter.scan(root))
    assert stats.path is not None and stats.path.parent == private_cache


def test_cache_file_lives_outside_the_vault_and_is_private(
    own_fixtures_copy: Path, private_cache: Path
) -> None:
    root = vault_at(own_fixtures_copy, "project-ocean").root
    cached_scan(root, "project-ocean")
    path = cache_path(root)
    assert path.is_file()
    assert private_cache in path.parents and root not in path.parents
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert not [p for p in root.rglob("*") if "pickle" in p.name or "memlens" in p.name]


def test_cache_key_is_the_real_path(own_fixtures_copy: Path, tmp_path: Path) -> None:
    root = vault_at(own_fixtures_copy, "project-ocean").root
    link = tmp_path / "link-to-vault"
    link.symlink_to(root)
    assert cache_path(link) == cache_path(root)
    assert cache_path(root) != cache_path(vault_at(own_fixtures_copy, "observation-v1").root)


def test_open_catalog_with_cache(own_fixtures_copy: Path) -> None:
    first = open_catalog(own_fixtures_copy, cache=True)
    again = open_catalog(own_fixtures_copy, cache=True)
    plain = open_catalog(own_fixtures_copy)
    for a, b, c in zip(first.vaults, again.vaults, plain.vaults, strict=True):
        assert a.root == b.root == c.root
        assert_same(b.result, c.result)
        assert b.cache_stats is not None and b.cache_stats.status == "warm"
    assert all(v.cache_stats is not None and v.cache_stats.status == "off" for v in plain.vaults)


# --------------------------------------------------------------------------- stale and corrupt


def _sql(path: Path, statement: str) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute(statement)
    finally:
        conn.close()


def _flip_row(path: Path) -> None:
    """One byte of one stored row changed (SQLite does not checksum pages)."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        rel, blob = conn.execute("SELECT rel, scan FROM files LIMIT 1").fetchone()
        i = len(blob) // 2
        bad = blob[:i] + bytes([blob[i] ^ 0xFF]) + blob[i + 1 :]
        conn.execute("UPDATE files SET scan = ? WHERE rel = ?", (bad, rel))
    finally:
        conn.close()


def _corrupt_cases() -> dict[str, tuple[object, str | None]]:
    def truncate(path: Path) -> None:
        blob = path.read_bytes()
        path.write_bytes(blob[: len(blob) // 2])

    def garbage(path: Path) -> None:
        path.write_bytes(os.urandom(path.stat().st_size))

    def wrong_version(path: Path) -> None:
        _sql(path, f"UPDATE meta SET value = '{SCHEMA_VERSION + 1}' WHERE key = 'schema'")

    def other_dictionary(path: Path) -> None:
        _sql(path, "UPDATE blobs SET value = zeroblob(8192) WHERE name = 'zdict'")

    def header_only(path: Path) -> None:
        path.write_bytes(path.read_bytes()[:50])

    def empty(path: Path) -> None:
        path.write_bytes(b"")

    return {
        "truncated": (truncate, ""),
        "garbage": (garbage, "not a memlens store"),
        "wrong_version": (wrong_version, "schema version"),
        "row_checksum": (_flip_row, "unreadable row"),
        "dictionary": (other_dictionary, "unreadable row"),
        "header_only": (header_only, ""),
        # An empty file is an empty database: a new store, not a damaged one.
        "empty": (empty, None),
    }


@pytest.mark.parametrize("case", sorted(_corrupt_cases()))
def test_corrupt_cache_is_discarded_and_rebuilt(own_fixtures_copy: Path, case: str) -> None:
    damage, why = _corrupt_cases()[case]
    root = vault_at(own_fixtures_copy, "cognitive-memory").root
    cached_scan(root, "cognitive-memory")
    path = cache_path(root)
    assert not path.with_name(path.name + "-wal").exists()  # checkpointed at close
    damage(path)  # type: ignore[operator]
    path.chmod(0o600)

    vault = cached_scan(root, "cognitive-memory")
    stats = vault.cache_stats
    if why is None:
        assert stats is not None and stats.status == "cold"
    else:
        assert stats is not None and stats.status == "discarded"
        assert stats.reason is not None and why in stats.reason
    assert stats.reused == 0 and stats.parsed == stats.files
    assert_same(vault.result, vault.adapter.scan(root))
    # Rebuilt: the next start trusts the new file.
    assert stats.saved
    assert load_entries(root, "cognitive-memory")[1] is None


def test_cache_from_other_code_is_discarded(
    own_fixtures_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = vault_at(own_fixtures_copy, "observation-v1").root
    cached_scan(root, "observation-v1")
    monkeypatch.setattr(scan_cache, "code_fingerprint", lambda fmt: "another memlens")
    stats = cached_scan(root, "observation-v1").cache_stats
    assert stats is not None and stats.status == "discarded"
    assert stats.reason is not None and "different version" in stats.reason


def test_fingerprint_covers_the_reading_modules_of_a_format_package() -> None:
    package = Path(stored.__file__).parents[1] / "formats" / "dream_cycle"
    names = {p.name for p in stored.format_modules(package)}
    assert {"adapter.py", "reading.py", "rescan.py", "ids.py", "sections.py"} <= names
    assert not names & {"writer.py", "runs.py", "__pycache__"}


@pytest.mark.parametrize(("module", "counts"), [("rescan.py", True), ("writer.py", False)])
def test_fingerprint_changes_with_a_helper_module(
    monkeypatch: pytest.MonkeyPatch, module: str, counts: bool
) -> None:
    monkeypatch.setattr(stored, "_fingerprints", {})
    before = stored.code_fingerprint("dream-cycle")
    real = stored.read_regular

    def edited(path: Path | str, *, follow: bool = True) -> bytes:
        data = real(path, follow=follow)
        return data + b"\n# edited\n" if Path(path).name == module else data

    monkeypatch.setattr(stored, "read_regular", edited)
    monkeypatch.setattr(stored, "_fingerprints", {})
    assert (stored.code_fingerprint("dream-cycle") != before) is counts


def test_cache_for_another_vault_is_not_used(own_fixtures_copy: Path) -> None:
    ocean = vault_at(own_fixtures_copy, "project-ocean").root
    obs = vault_at(own_fixtures_copy, "observation-v1").root
    cached_scan(ocean, "project-ocean")
    # Someone copies one vault's store over another's.
    cache_path(obs).write_bytes(cache_path(ocean).read_bytes())
    cache_path(obs).chmod(0o600)
    stats = cached_scan(obs, "observation-v1").cache_stats
    assert stats is not None and stats.status == "discarded"
    assert stats.reason is not None and "another vault" in stats.reason


def test_cache_writable_by_others_is_not_trusted(own_fixtures_copy: Path) -> None:
    root = vault_at(own_fixtures_copy, "project-ocean").root
    cached_scan(root, "project-ocean")
    cache_path(root).chmod(0o666)
    stats = cached_scan(root, "project-ocean").cache_stats
    assert stats is not None and stats.status == "discarded"
    assert stats.reason is not None and "writable by others" in stats.reason


def test_unwritable_cache_dir_only_costs_speed(
    own_fixtures_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache dir should be")
    monkeypatch.setenv("MEMLENS_CACHE_DIR", str(blocker / "cache"))
    root = vault_at(own_fixtures_copy, "project-ocean").root
    vault = cached_scan(root, "project-ocean")
    stats = vault.cache_stats
    assert stats is not None and not stats.saved
    assert stats.reason is not None and "not saved" in stats.reason
    assert_same(vault.result, vault.adapter.scan(root))


# --------------------------------------------------------------------------- changed files


def _age_files(root: Path, seconds: int = 3600) -> None:
    """Set every file's mtime an hour back (ctime moves to now, which is fine)."""
    for p in root.rglob("*"):
        if p.is_file():
            st = p.stat()
            os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns - seconds * 1_000_000_000))


def _same_size_rewrite(path: Path) -> None:
    """New bytes of the same length, with the old mtime put back."""
    st = path.stat()
    data = path.read_bytes()
    text = data.decode("utf-8")
    swapped = text.replace("a", "e", 1) if "a" in text else text.replace("e", "a", 1)
    new = swapped.encode("utf-8")
    assert len(new) == len(data) and new != data
    path.write_bytes(new)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (st.st_size, st.st_mtime_ns)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("racy_window", [0, scan_reading.RACY_WINDOW_NS])
def test_same_size_same_mtime_rewrite_is_never_served_from_cache(
    own_fixtures_copy: Path, fmt: str, racy_window: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Caught by ctime (utime bumps it) or, for just-written files, by content."""
    monkeypatch.setattr(scan_reading, "RACY_WINDOW_NS", racy_window)
    root = vault_at(own_fixtures_copy, fmt).root
    _age_files(root)
    first = cached_scan(root, fmt)
    target = memory_file(first) if fmt not in ("dream-cycle", "experience-records") else None
    if target is None:
        target = root / next(r for r, fs in first.scans.items() if fs.memories)
    _same_size_rewrite(target)

    again = cached_scan(root, fmt)
    stats = again.cache_stats
    assert stats is not None and stats.status == "warm"
    assert stats.parsed >= 1
    rel = rel_posix(root, target)
    assert again.stamps[rel].sha256 != first.stamps[rel].sha256
    assert_same(again.result, again.adapter.scan(root))


@pytest.mark.usefixtures("settled")
def test_atomic_replace_with_same_size_and_mtime_is_reparsed(own_fixtures_copy: Path) -> None:
    root = vault_at(own_fixtures_copy, "project-ocean").root
    _age_files(root)
    first = cached_scan(root, "project-ocean")
    target = memory_file(first)
    st = target.stat()
    data = target.read_bytes()
    new = data.replace(b"0.", b"1.", 1) if b"0." in data else data[:-1] + b"!"
    assert len(new) == len(data)
    tmp = target.with_name(".tmp-" + target.name)
    tmp.write_bytes(new)
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp, target)  # a new inode under the old name
    again = cached_scan(root, "project-ocean")
    assert again.cache_stats is not None and again.cache_stats.parsed == 1
    assert_same(again.result, again.adapter.scan(root))


def test_racy_entry_is_checked_by_content(own_fixtures_copy: Path) -> None:
    """An entry stamped within the racy window is reused only if its bytes still match."""
    root = vault_at(own_fixtures_copy, "observation-v1").root
    vault = cached_scan(root, "observation-v1")
    target = memory_file(vault)
    rel = rel_posix(root, target)
    entries, reason = load_entries(root, "observation-v1")
    assert reason is None

    # Same stat key, racy, content unchanged: verified, reused.
    st = target.stat()
    stamp, fs = entries[rel]
    entries[rel] = (
        scan_cache.FileStamp(
            st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, stamp.sha256, racy=True
        ),
        fs,
    )
    save_entries(root, "observation-v1", entries)
    stats = cached_scan(root, "observation-v1").cache_stats
    assert stats is not None and stats.verified >= 1

    # Same stat key, racy, but the hash says the content differs: parsed again.
    entries, _ = load_entries(root, "observation-v1")
    st = target.stat()
    stamp, fs = entries[rel]
    fs.memories[0].title = "stale title that must never be shown"
    entries[rel] = (
        scan_cache.FileStamp(
            st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, "0" * 64, racy=True
        ),
        fs,
    )
    save_entries(root, "observation-v1", entries)
    again = cached_scan(root, "observation-v1")
    assert again.cache_stats is not None and again.cache_stats.parsed >= 1
    assert "stale title that must never be shown" not in {m.title for m in again.memories}
    assert_same(again.result, again.adapter.scan(root))


@pytest.mark.parametrize("fmt", FORMATS)
def test_added_and_removed_files_while_closed(own_fixtures_copy: Path, fmt: str) -> None:
    root = vault_at(own_fixtures_copy, fmt).root
    first = cached_scan(root, fmt)
    rels = list(first.scans)
    removed = root / rels[-1]
    removed.unlink()
    added = None
    if len(rels) > 1 and rels[0].endswith(".md") and "/" in rels[0]:
        src = root / rels[0]
        added = src.with_name("zz-added-" + src.name)
        added.write_bytes(src.read_bytes().replace(b"a", b"o"))
    again = cached_scan(root, fmt)
    stats = again.cache_stats
    assert stats is not None and stats.dropped == 1
    assert stats.parsed == (1 if added is not None else 0)
    assert_same(again.result, again.adapter.scan(root))


@pytest.mark.usefixtures("settled")
def test_rescans_then_save_cache_round_trip(own_fixtures_copy: Path) -> None:
    root = vault_at(own_fixtures_copy, "project-ocean").root
    vault = cached_scan(root, "project-ocean")
    target = memory_file(vault)
    target.write_bytes(target.read_bytes() + b"\nAppended line.\n")
    rescan_paths(vault, [target])
    saved = save_cache(vault)
    assert saved.saved
    final = cached_scan(root, "project-ocean")
    assert final.cache_stats is not None and final.cache_stats.parsed == 0
    assert any(m.body.rstrip().endswith("Appended line.") for m in final.memories)
    assert_same(final.result, final.adapter.scan(root))


# --------------------------------------------------------------------------- search index cache


AS_OF = date(2026, 11, 22)


def _ids(index: SearchIndex, query: str) -> list[str]:
    return [h.memory.id for h in index.search(query, 50, include_inactive=True)]


def test_index_cache_round_trip_shares_the_catalog_objects(own_fixtures_copy: Path) -> None:
    catalog = open_catalog(own_fixtures_copy, cache=True)
    built, stats = load_index(catalog, AS_OF)
    assert stats.status == "built"
    again = open_catalog(own_fixtures_copy, cache=True)
    loaded, stats = load_index(again, AS_OF)
    assert stats.status == "loaded" and stats.updated == stats.added == stats.removed == 0
    assert len(loaded) == len(built)
    for query in ("sqlite", "backup", "retry"):
        assert _ids(loaded, query) == _ids(built, query)
    # Counting and searching did not build the key -> row table (100k keys at 100k).
    assert loaded._row_keys is None
    assert len(loaded._row_of) == len(loaded)
    # The index holds the catalog's own memory objects, not copies.
    catalog_objects = {id(m) for m in again.memories()}
    assert all(id(m) in catalog_objects for m in loaded.memories())


def test_index_cache_patches_a_changed_file(own_fixtures_copy: Path) -> None:
    catalog = open_catalog(own_fixtures_copy, cache=True)
    load_index(catalog, AS_OF)
    vault = next(v for v in catalog.vaults if v.format == "project-ocean")
    target = memory_file(vault)
    target.write_bytes(target.read_bytes() + b"\nzanzibarquux appears now.\n")
    again = open_catalog(own_fixtures_copy, cache=True)
    index, stats = load_index(again, AS_OF)
    assert stats.status == "loaded" and stats.updated == 1
    assert _ids(index, "zanzibarquux") == [m.id for m in again.memories() if m.abs_path == target]


def test_index_cache_vault_wide_change_reindexes_that_vault(own_fixtures_copy: Path) -> None:
    catalog = open_catalog(own_fixtures_copy, cache=True)
    load_index(catalog, AS_OF)
    vault = next(v for v in catalog.vaults if v.format == "cognitive-memory")
    (vault.root / "_state.json").write_text('{"entries": {}}')
    again = open_catalog(own_fixtures_copy, cache=True)
    index, stats = load_index(again, AS_OF)
    cognitive = next(v for v in again.vaults if v.format == "cognitive-memory")
    if stats.status == "loaded":
        assert stats.updated == len(cognitive.memories)
    else:  # a small fixture: a tenth of the rows changed, so it was rebuilt
        assert stats.reason is not None and "too much changed" in stats.reason
    fresh = SearchIndex.from_catalog(again, AS_OF)
    assert _ids(index, "sqlite") == _ids(fresh, "sqlite")


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_corrupt_index_cache_is_rebuilt(own_fixtures_copy: Path, damage: str) -> None:
    catalog = open_catalog(own_fixtures_copy, cache=True)
    load_index(catalog, AS_OF)
    path = index_cache_path(catalog.vaults)
    blob = path.read_bytes()
    if damage == "truncate":
        blob = blob[: len(blob) // 3]
    else:
        blob = blob[:-5] + bytes([blob[-5] ^ 0x55]) + blob[-4:]
    path.write_bytes(blob)
    path.chmod(0o600)
    index, stats = load_index(open_catalog(own_fixtures_copy, cache=True), AS_OF)
    assert stats.status == "rebuilt" and stats.reason is not None
    assert len(index) == sum(len(v.memories) for v in catalog.vaults)
