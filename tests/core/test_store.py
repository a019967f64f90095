"""The per-vault SQLite store: rows without bodies, bodies read back, shared by processes."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memlens.core.model import RAW_BODY, RAW_FIELDS, FileScan, Memory
from memlens.core.scan.cache import cache_path
from memlens.core.scan.vault import (
    Vault,
    discover,
    rescan_paths,
    save_cache,
    scan_progressive,
    scan_vault,
)
from memlens.core.store.codec import has_body, pickle_scan, unpickle_scan

FORMATS = (
    "dream-cycle",
    "observation-v1",
    "experience-records",
    "project-ocean",
    "cognitive-memory",
)


#: Each test with a cache folder of its own (`private_cache` in tests/conftest.py).
pytestmark = pytest.mark.usefixtures("private_cache")


def vault_at(root: Path, fmt: str) -> Vault:
    (vault,) = [v for v in discover(root) if v.format == fmt]
    return Vault(root=vault.root, format=fmt, rel=".")


def rows(path: Path) -> dict[str, bytes]:
    """rel -> the stored sha256 (32 bytes) and row blob."""
    conn = sqlite3.connect(path)
    try:
        got = conn.execute("SELECT rel, sha256, scan FROM files").fetchall()
        return {rel.decode(): bytes(sha) + blob for rel, sha, blob in got}
    finally:
        conn.close()


@pytest.mark.parametrize("fmt", FORMATS)
def test_bodies_are_not_stored_and_read_back_on_use(own_fixtures_copy: Path, fmt: str) -> None:
    root = vault_at(own_fixtures_copy, fmt).root
    cold = scan_vault(vault_at(root, fmt), cache=True)
    bodies = {m.id: m.body for m in cold.memories}
    assert any(len(b) > 20 for b in bodies.values())
    stored = rows(cache_path(root))
    longest = max(bodies.values(), key=len)
    assert not any(longest.encode() in blob for blob in stored.values())

    warm = scan_vault(vault_at(root, fmt), cache=True)
    assert warm.cache_stats is not None and warm.cache_stats.parsed == 0
    served = [m for fs in warm.scans.values() for m in fs.memories]
    assert served and not any(has_body(m) for m in served)
    assert {m.id: m.body for m in warm.memories} == bodies
    assert all(has_body(m) for m in served if m in warm.memories)


@pytest.mark.parametrize("fmt", FORMATS)
def test_fields_stay_packed_until_read_then_are_the_parsed_ones(
    own_fixtures_copy: Path, fmt: str
) -> None:
    root = vault_at(own_fixtures_copy, fmt).root
    cold = scan_vault(vault_at(root, fmt), cache=True)
    parsed = {
        (rel, i): list(m.fields.items())
        for rel, fs in cold.scans.items()
        for i, m in enumerate(fs.memories)
    }
    assert any(parsed.values())
    rows = {rel: pickle_scan(fs, root) for rel, fs in cold.scans.items()}
    loaded = {rel: unpickle_scan(raw, root) for rel, raw in rows.items()}
    served = [m for fs in loaded.values() for m in fs.memories]
    assert served and all(type(RAW_FIELDS.__get__(m, Memory)) is bytes for m in served)
    # A row written again from memories whose fields were never read: the same bytes.
    assert {rel: pickle_scan(fs, root) for rel, fs in loaded.items()} == rows
    for rel, fs in loaded.items():
        for i, m in enumerate(fs.memories):
            # Unpacked on first read: the parsed mapping, in its key order.
            assert list(m.fields.items()) == parsed[(rel, i)]
            assert type(RAW_FIELDS.__get__(m, Memory)) is dict
    assert {rel: pickle_scan(fs, root) for rel, fs in loaded.items()} == rows


@pytest.mark.parametrize("fmt", FORMATS)
def test_rows_leave_the_vault_root_out_and_bind_the_vaults_one_root_again(
    own_fixtures_copy: Path, fmt: str
) -> None:
    from memlens.core.store import codec

    root = vault_at(own_fixtures_copy, fmt).root
    cold = scan_vault(vault_at(root, fmt), cache=True)
    for fs in cold.scans.values():
        raw = codec.pickle_scan(fs, cold.root)
        assert str(cold.root).encode() not in raw  # not once per memory, not at all
        back = codec.unpickle_scan(raw, cold.root)
        assert [m.id for m in back.memories] == [m.id for m in fs.memories]
        assert [p.detail for p in back.problems] == [p.detail for p in fs.problems]
        assert all(m.vault_root is cold.root for m in back.memories)
        assert all(p.vault_root is cold.root for p in back.problems)
    warm = scan_vault(vault_at(root, fmt), cache=True)
    assert warm.cache_stats is not None and warm.cache_stats.parsed == 0
    assert all(m.vault_root is warm.root for m in warm.memories)
    assert all(p.vault_root is warm.root for p in warm.problems)
    assert [(m.id, m.path) for m in warm.memories] == [(m.id, m.path) for m in cold.memories]


def test_a_body_whose_file_changed_since_is_empty_not_another_text(
    own_fixtures_copy: Path,
) -> None:
    root = vault_at(own_fixtures_copy, "project-ocean").root
    scan_vault(vault_at(root, "project-ocean"), cache=True)
    warm = scan_vault(vault_at(root, "project-ocean"), cache=True)
    memory = next(m for m in warm.memories if m.body_source is not None)
    assert RAW_BODY.__get__(memory, Memory) is None
    path = root / memory.path
    path.write_bytes(path.read_bytes().replace(b"\n---\n", b"\n---\nA new first line.\n", 1))
    assert memory.body == ""


def test_one_changed_file_writes_one_row(own_fixtures_copy: Path) -> None:
    root = vault_at(own_fixtures_copy, "cognitive-memory").root
    vault = scan_vault(vault_at(root, "cognitive-memory"), cache=True)
    before = rows(cache_path(root))
    rel = next(r for r, fs in vault.scans.items() if len(fs.memories) == 1)
    target = root / rel
    target.write_bytes(target.read_bytes() + b"\nOne more line.\n")
    rescan_paths(vault, [target])
    assert save_cache(vault).saved
    after = rows(cache_path(root))
    assert after.keys() == before.keys()
    assert [r for r in after if after[r] != before[r]] == [rel]


def test_old_pickle_caches_are_swept(own_fixtures_copy: Path, private_cache: Path) -> None:
    private_cache.mkdir(mode=0o700)
    old = private_cache / f"scan-{'a' * 32}.pickle"
    old.write_bytes(b"an old cache")
    other = private_cache / "notes.txt"
    other.write_bytes(b"not ours")
    root = vault_at(own_fixtures_copy, "observation-v1").root
    scan_vault(vault_at(root, "observation-v1"), cache=True)
    assert not old.exists() and other.exists()


_SAVER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from memlens.core.scan.vault import Vault, scan_vault

    root = Path(sys.argv[1])
    for _ in range(int(sys.argv[2])):
        v = scan_vault(Vault(root=root, format="cognitive-memory", rel="."), cache=True)
        assert v.cache_stats is not None
        assert v.cache_stats.status in ("cold", "warm"), v.cache_stats
        for m in v.memories:
            m.body
    """
)


def test_two_processes_sharing_a_store_while_files_change(
    own_fixtures_copy: Path, private_cache: Path
) -> None:
    root = vault_at(own_fixtures_copy, "cognitive-memory").root
    env = {**os.environ, "MEMLENS_CACHE_DIR": str(private_cache)}
    procs = [
        subprocess.Popen([sys.executable, "-c", _SAVER, str(root), "15"], env=env) for _ in range(2)
    ]
    files = sorted(p for p in (root / "graph").rglob("*.md"))
    for n in range(30):
        target = files[n % len(files)]
        target.write_bytes(target.read_bytes() + f"\nEdit {n}.\n".encode())
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    final = scan_vault(vault_at(root, "cognitive-memory"), cache=True)
    assert final.cache_stats is not None and final.cache_stats.status == "warm"
    full = final.adapter.scan(root)
    assert final.result.memories == full.memories
    assert final.result.problems == full.problems


def test_a_warm_progressive_scan_shows_a_first_batch_before_the_rest(
    own_fixtures_copy: Path,
) -> None:
    root = vault_at(own_fixtures_copy, "cognitive-memory").root
    scan_vault(vault_at(root, "cognitive-memory"), cache=True)
    vault = vault_at(root, "cognitive-memory")
    steps = list(scan_progressive(vault, batch=3, cache=True))
    first, last = steps[0], steps[-1]
    assert not first.done and first.stats.files == first.stats.reused == first.files_total
    assert len(first.memories) > 0 and first.files_done == 3
    # No memory object shown twice (ids may repeat: early rows are not linked,
    # duplicates not dropped yet).
    shown = [id(m) for s in steps for m in s.memories]
    assert len(shown) == len(set(shown))
    assert last.stats.status == "warm" and last.stats.parsed == 0
    assert last.result is not None
    assert last.result.memories == vault.adapter.scan(root).memories


def test_row_codec_round_trips_and_refuses_damaged_rows() -> None:
    import threading

    from memlens.core.store import codec
    from memlens.core.store.db import StoreCorrupt

    raws = [f"row {i}: {'alpha beta gamma ' * (i % 7)} {i * 7919}".encode() for i in range(400)]
    trained = codec.make_zdict(raws)
    assert trained[:4] == b"\x37\xa4\x30\xec"  # zstd's magic: a trained dictionary
    few = codec.make_zdict(raws[:2])  # too little to train on: the rows' bytes themselves
    assert few == b"".join(raws[:2])[-codec.ZDICT_BYTES :]
    for zdict in (trained, few, b""):
        blobs = [codec.compress(raw, zdict) for raw in raws]
        assert [codec.decompress(b, zdict) for b in blobs] == raws
        blob = blobs[100]
        damaged = [blob[:-1], blob + b"\0", blob[:8] + bytes([blob[8] ^ 0x10]) + blob[9:]]
        for bad in damaged:
            with pytest.raises(StoreCorrupt, match="unreadable row"):
                codec.decompress(bad, zdict)
    # A blob packed with another dictionary is refused, not decoded into other bytes.
    with pytest.raises(StoreCorrupt):
        codec.decompress(codec.compress(raws[5], trained), few)

    # Each thread has its own (de)compressor: many threads at once decode alike.
    blobs = [codec.compress(raw, trained) for raw in raws]
    wrong: list[int] = []

    def decode_all() -> None:
        for _ in range(20):
            wrong.extend(i for i, b in enumerate(blobs) if codec.decompress(b, trained) != raws[i])

    threads = [threading.Thread(target=decode_all) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []


def test_decoding_fetched_rows_lets_each_go_and_keeps_their_order(own_fixtures_copy: Path) -> None:
    from memlens.core.scan.stored import code_fingerprint
    from memlens.core.store.files import open_store

    vault = vault_at(own_fixtures_copy, "cognitive-memory")
    scan_vault(vault, cache=True)
    store = open_store(vault.root, vault.format, code_fingerprint(vault.format)).store
    assert store is not None
    try:
        fetched = store.fetch()
        count = len(fetched)
        assert count > 2
        first = fetched.take(2)
        assert len(first) == 2 and len(fetched) == count - 2  # each row let go once decoded
        entries = {**first, **fetched.take()}
        assert len(fetched) == 0
        order = [rel.encode() for rel in entries]
        assert order == sorted(order)  # path order
        again = store.load_files()
    finally:
        store.close()
    assert _ids_by_file(entries) == _ids_by_file(again)


def _ids_by_file(entries: dict[str, tuple[object, FileScan]]) -> dict[str, list[str]]:
    return {rel: [m.id for m in fs.memories] for rel, (_stamp, fs) in entries.items()}


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_unkept_body_is_the_body_and_a_lone_memory_keeps_none(
    own_fixtures_copy: Path, fmt: str
) -> None:
    from memlens.core.store.bodies import unkept_body

    root = vault_at(own_fixtures_copy, fmt).root
    scan_vault(vault_at(root, fmt), cache=True)
    bodies = {m.id: m.body for m in scan_vault(vault_at(root, fmt), cache=True).memories}
    warm = scan_vault(vault_at(root, fmt), cache=True).memories
    per_file: dict[str, int] = {}
    for m in warm:
        per_file[m.path] = per_file.get(m.path, 0) + 1
    lone = [m for m in warm if per_file[m.path] == 1 and not has_body(m)]
    if fmt in ("observation-v1", "project-ocean", "cognitive-memory"):
        assert lone  # one memory per file: none of them loaded yet
    for m in warm:
        assert unkept_body(m) == bodies[m.id]
    # Alone in its file: read and let go; one of many: filled as `m.body` fills.
    assert not any(has_body(m) for m in lone)


def test_an_unkept_body_of_a_changed_file_is_empty(own_fixtures_copy: Path) -> None:
    from memlens.core.store.bodies import unkept_body

    root = vault_at(own_fixtures_copy, "cognitive-memory").root
    scan_vault(vault_at(root, "cognitive-memory"), cache=True)
    warm = scan_vault(vault_at(root, "cognitive-memory"), cache=True).memories
    m = warm[0]
    path = root / m.path
    path.write_bytes(path.read_bytes() + b"\nappended since\n")
    assert unkept_body(m) == ""
    assert not has_body(m)


def test_a_warm_scan_holds_each_path_once(own_fixtures_copy: Path) -> None:
    from memlens.core.model import BODY_SOURCE

    vault = vault_at(own_fixtures_copy, "cognitive-memory")
    scan_vault(vault, cache=True)
    warm = vault_at(vault.root, "cognitive-memory")
    scan_vault(warm, cache=True)
    assert warm.listing is not None
    names = {name: name for name in warm.listing.names}
    assert warm.memories
    for m in warm.memories:
        # The listing, the scan's keys and the memory share one string.
        assert names[m.path] is m.path
        assert next(k for k in warm.scans if k == m.path) is m.path
        assert BODY_SOURCE.__get__(m, type(m)).rel is m.path


def test_rows_packed_before_another_writer_made_the_dictionary_are_packed_again(
    own_fixtures_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows are compressed outside the write lock; the store's first dictionary wins."""
    from memlens.core.scan.stored import code_fingerprint
    from memlens.core.store import codec
    from memlens.core.store.files import open_store, store_path

    vault = vault_at(own_fixtures_copy, "cognitive-memory")
    scan_vault(vault, cache=True)
    code = code_fingerprint(vault.format)
    first = open_store(vault.root, vault.format, code).store
    assert first is not None
    entries = first.load_files()
    first.close()
    for path in store_path(vault.root).parent.glob(store_path(vault.root).name + "*"):
        path.unlink()
    mine = open_store(vault.root, vault.format, code).store
    other = open_store(vault.root, vault.format, code).store
    assert mine is not None and other is not None
    items = [(rel, stamp, fs) for rel, (stamp, fs) in entries.items()]
    made = codec.make_zdict
    dictionaries: list[bytes] = []

    def meanwhile(raws: list[bytes]) -> bytes:
        if not dictionaries:  # `mine` trains its dictionary: `other` writes first
            dictionaries.append(b"")
            other.save(items[len(items) // 2 :])
        dictionaries.append(made(raws))
        return dictionaries[-1]

    monkeypatch.setattr(codec, "make_zdict", meanwhile)
    try:
        assert mine.save(items[: len(items) // 2]) == len(items) // 2
        stored = mine._zdict()
    finally:
        mine.close()
        other.close()
    assert stored == dictionaries[1] != dictionaries[2]  # `other`'s, not the one `mine` trained
    again = open_store(vault.root, vault.format, code).store
    assert again is not None
    try:
        got = again.load_files()
    finally:
        again.close()
    assert _ids_by_file(got) == _ids_by_file(entries)


@pytest.mark.parametrize("fmt", FORMATS)
def test_first_files_are_files_the_full_listing_holds(own_fixtures_copy: Path, fmt: str) -> None:
    vault = vault_at(own_fixtures_copy, fmt)
    root = vault.root
    (root / "stray.txt").write_text("not a memory", encoding="utf-8")
    names = set(vault.adapter.file_listing(root).names)
    first = vault.adapter.first_files(root, 1000)
    assert set(first) <= names
    assert len(first) == len(set(first))
    assert vault.adapter.first_files(root, 2) == first[:2]
    if fmt in ("cognitive-memory", "project-ocean", "observation-v1"):
        assert first  # a file-per-memory format finds some at once


def test_first_files_leave_out_hidden_files_links_and_folders(tmp_path: Path) -> None:
    from memlens.core.formats.files import some_md

    root = tmp_path / "v"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "a.md").write_text("a", encoding="utf-8")
    (root / "notes" / ".hidden.md").write_text("h", encoding="utf-8")
    (root / "notes" / "dir.md").mkdir()
    (root / "notes" / "link.md").symlink_to(root / "notes" / "a.md")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "b.md").write_text("b", encoding="utf-8")
    (root / "linked").symlink_to(outside)
    assert some_md(root, ["notes", "linked", "absent"], 10) == ["notes/a.md"]
    assert some_md(root, ["notes"], 0) == []


def test_a_cold_progressive_scan_shows_first_rows_before_listing_the_vault(
    own_fixtures_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The peeked files' memories come first, are not parsed or shown twice, and the
    result equals a plain scan's."""
    from memlens.core.scan import cache as scan_cache
    from memlens.core.scan import parallel as parse_parallel

    vault = vault_at(own_fixtures_copy, "cognitive-memory")
    events: list[str] = []
    listing = scan_cache.recorded_listing
    scan_new = scan_cache.scan_new
    parses: list[str] = []

    def noted_listing(*args: object) -> object:
        events.append("listed")
        return listing(*args)  # type: ignore[arg-type]

    def noted_parse(adapter: object, root: Path, rel: str) -> object:
        parses.append(rel)
        return scan_new(adapter, root, rel)  # type: ignore[arg-type]

    monkeypatch.setattr(scan_cache, "recorded_listing", noted_listing)
    monkeypatch.setattr(scan_cache, "scan_new", noted_parse)
    monkeypatch.setattr(parse_parallel, "scan_new", noted_parse)  # the other files
    monkeypatch.setattr(scan_cache, "PEEK", 3)
    steps = []
    for step in scan_progressive(vault, batch=2, cache=True, parallel=False):
        events.append("step")
        steps.append(step)
    assert events[:2] == ["step", "listed"]
    assert len(steps[0].memories) > 0 and steps[0].files_done == 3
    shown = [id(m) for s in steps for m in s.memories]
    assert len(shown) == len(set(shown))
    last = steps[-1]
    assert last.stats.status == "cold" and last.stats.parsed == last.stats.files
    assert last.result is not None
    assert last.result.memories == vault.adapter.scan(vault.root).memories
    assert sorted(parses[:3]) == sorted(vault.adapter.first_files(vault.root, 3))
    assert len(parses) == len(set(parses)) == last.stats.files  # each file parsed once
