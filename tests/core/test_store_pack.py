"""The store's pack: every file's scan in one stream, a copy the rows fall back from."""

from __future__ import annotations

import pickle
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest
import zstandard

from memlens.core.formats import adapters
from memlens.core.model import FileScan, Memory, ScanResult
from memlens.core.scan import reading as scan_reading
from memlens.core.scan.cache import cache_path
from memlens.core.scan.vault import Vault, discover, scan_vault
from memlens.core.store import pack
from memlens.core.store.db import StoreCorrupt
from memlens.core.store.pack import PackReader, pack_blob
from memlens.core.store.stamps import FileStamp

#: Every registered format (a new one is covered without editing this file).
FORMATS = tuple(adapter.format_id for adapter in adapters())

#: Each test with a cache folder of its own (`private_cache` in tests/conftest.py).
pytestmark = pytest.mark.usefixtures("private_cache")


@pytest.fixture(autouse=True)
def small_packs(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pack for the fixtures' few files, in parts of two; stamps never racy."""
    monkeypatch.setattr(pack, "MIN_FILES", 1)
    monkeypatch.setattr(pack, "PART", 2)
    monkeypatch.setattr(scan_reading, "RACY_WINDOW_NS", 0)


def cached(root: Path, fmt: str) -> Vault:
    return scan_vault(Vault(root=root, format=fmt, rel="."), cache=True)


def root_of(fixtures: Path, fmt: str) -> Path:
    (vault,) = [v for v in discover(fixtures) if v.format == fmt]
    return vault.root


def pack_of(root: Path) -> bytes | None:
    conn = sqlite3.connect(cache_path(root))
    try:
        row = conn.execute("SELECT value FROM blobs WHERE name = 'pack'").fetchone()
    finally:
        conn.close()
    return None if row is None else bytes(row[0])


def set_pack(root: Path, blob: bytes) -> None:
    conn = sqlite3.connect(cache_path(root), isolation_level=None)
    try:
        conn.execute("UPDATE blobs SET value = ? WHERE name = 'pack'", (blob,))
    finally:
        conn.close()


def as_data(result: ScanResult) -> list[object]:
    """What a scan shows, bodies and native fields read (equality leaves some out)."""
    out: list[object] = [result.problems, result.ref_problems, result.records]
    for m in result.memories:
        out.append((m, m.body, dict(m.fields), m.relations))
    return out


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_warm_scan_from_the_pack_equals_a_plain_scan(own_fixtures_copy: Path, fmt: str) -> None:
    root = root_of(own_fixtures_copy, fmt)
    cold = cached(root, fmt)
    assert cold.cache_stats is not None and cold.cache_stats.packed == len(cold.stamps)
    assert pack_of(root) is not None

    warm = cached(root, fmt)
    stats = warm.cache_stats
    assert stats is not None and stats.status == "warm" and stats.parsed == 0
    assert stats.packed == stats.reused == len(warm.stamps) > 0
    assert as_data(warm.result) == as_data(warm.adapter.scan(root))


def test_a_file_changed_since_the_pack_comes_from_its_row(own_fixtures_copy: Path) -> None:
    fmt = "cognitive-memory"
    root = root_of(own_fixtures_copy, fmt)
    first = cached(root, fmt)
    packed = pack_of(root)
    rel = next(rel for rel, fs in first.scans.items() if len(fs.memories) == 1)
    path = root / rel
    path.write_bytes(path.read_bytes().replace(b"\n---\n", b"\n---\nA line added later.\n", 1))

    second = cached(root, fmt)  # parses the one file and writes its row, not the pack
    assert second.cache_stats is not None and second.cache_stats.parsed == 1
    assert pack_of(root) == packed

    third = cached(root, fmt)
    stats = third.cache_stats
    assert stats is not None and stats.parsed == 0
    assert stats.packed == len(third.stamps) - 1  # the changed file: its own row
    assert "A line added later." in third.scans[rel].memories[0].body
    assert as_data(third.result) == as_data(third.adapter.scan(root))


def test_a_pack_serving_too_few_files_is_written_again(
    own_fixtures_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fmt = "project-ocean"
    root = root_of(own_fixtures_copy, fmt)
    first = cached(root, fmt)
    old = pack_of(root)
    rel = next(rel for rel, fs in first.scans.items() if len(fs.memories) == 1)
    (root / rel).write_bytes((root / rel).read_bytes() + b"\nMore.\n")
    cached(root, fmt)
    assert pack_of(root) == old  # one file of many: under the share, kept

    monkeypatch.setattr(pack, "MIN_SHARE", 1.0)
    again = cached(root, fmt)  # served all but one: now below the share
    assert again.cache_stats is not None and again.cache_stats.packed == len(again.stamps)
    assert pack_of(root) != old
    last = cached(root, fmt)
    assert last.cache_stats is not None and last.cache_stats.packed == len(last.stamps)


def test_no_pack_for_a_vault_under_the_minimum(
    own_fixtures_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pack, "MIN_FILES", 10_000)
    root = root_of(own_fixtures_copy, "cognitive-memory")
    cached(root, "cognitive-memory")
    assert pack_of(root) is None
    warm = cached(root, "cognitive-memory")
    assert warm.cache_stats is not None and warm.cache_stats.packed == 0
    assert warm.cache_stats.reused == len(warm.stamps)


def test_files_removed_and_added_after_the_pack(
    own_fixtures_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fmt = "cognitive-memory"
    root = root_of(own_fixtures_copy, fmt)
    first = cached(root, fmt)
    ones = sorted(rel for rel, fs in first.scans.items() if len(fs.memories) == 1)
    changed, template = root / ones[0], (root / ones[1]).read_bytes()
    new = (root / ones[1]).with_name("zz-added-later.md")
    # The newest row is the changed file's, and a new pack is made over it.
    changed.write_bytes(changed.read_bytes() + b"\nMore.\n")
    monkeypatch.setattr(pack, "MIN_SHARE", 1.0)
    cached(root, fmt)
    cached(root, fmt)
    monkeypatch.setattr(pack, "MIN_SHARE", 0.5)
    packed = pack_of(root)

    changed.unlink()  # the newest row goes; its pack entry stays
    removed = cached(root, fmt)
    assert ones[0] not in removed.scans
    assert as_data(removed.result) == as_data(removed.adapter.scan(root))

    # A file saved after the newest row was removed is newer than the pack all the same.
    new.write_bytes(template.replace(b"\nid: ", b"\nid: z", 1))
    added = cached(root, fmt)
    assert added.cache_stats is not None and added.cache_stats.parsed == 1
    assert pack_of(root) == packed
    again = cached(root, fmt)
    stats = again.cache_stats
    assert stats is not None and stats.status == "warm" and stats.parsed == 0
    assert new.relative_to(root).as_posix() in again.scans
    assert as_data(again.result) == as_data(again.adapter.scan(root))


def test_a_pack_is_kept_only_when_it_is_every_file_row(own_fixtures_copy: Path) -> None:
    from memlens.core.scan.stored import code_fingerprint
    from memlens.core.store.files import open_store

    fmt = "cognitive-memory"
    root = root_of(own_fixtures_copy, fmt)
    vault = cached(root, fmt)
    store = open_store(root, fmt, code_fingerprint(fmt)).store
    assert store is not None
    try:
        files = [(rel, stamp, vault.scans[rel]) for rel, stamp in vault.stamps.items()]
        assert not store.save_pack(files[1:])  # one file short
        stamp = files[0][1]
        other = replace(stamp, size=stamp.size + 1)
        assert not store.save_pack([(files[0][0], other, files[0][2]), *files[1:]])
        assert store.save_pack(files)
    finally:
        store.close()


def _damaged(blob: bytes) -> bytes:
    at = len(blob) // 2
    return blob[:at] + bytes([blob[at] ^ 0xFF]) + blob[at + 1 :]


def _frame(*pickles: object) -> bytes:
    data = b"".join(pickle.dumps(p, protocol=pickle.HIGHEST_PROTOCOL) for p in pickles)
    return zstandard.ZstdCompressor(write_checksum=True).compress(data)


STAMP = FileStamp(1, 2, 3, 4, "00" * 32)


@pytest.mark.parametrize(
    "bad",
    [
        "damaged",
        "checksum",
        "not_a_pack",
        "more_parts_than_said",
        "fewer_parts_than_said",
        "keys_out_of_order",
        "no_stamp",
        "no_filescan",
    ],
)
def test_a_damaged_pack_discards_the_store_and_the_scan_is_right(
    own_fixtures_copy: Path, bad: str
) -> None:
    fmt = "cognitive-memory"
    root = root_of(own_fixtures_copy, fmt)
    cached(root, fmt)
    blob = pack_of(root)
    assert blob is not None
    head = (pack.MAGIC, pack.VERSION)
    b, a = (b"b", STAMP, FileScan("b")), (b"a", STAMP, FileScan("a"))
    replaced = {
        "damaged": _damaged(blob),
        "checksum": blob[:-1] + bytes([blob[-1] ^ 1]),
        "not_a_pack": _frame(("another", 1, 0, 0)),
        "more_parts_than_said": _frame((*head, 1, 1), [a], [b]),
        "fewer_parts_than_said": _frame((*head, 2, 1), [a]),
        "keys_out_of_order": _frame((*head, 1, 2), [b, a]),
        "no_stamp": _frame((*head, 1, 1), [(b"a", ("1", 2), FileScan("a"))]),
        "no_filescan": _frame((*head, 1, 1), [(b"a", STAMP, {"rel": "a"})]),
    }[bad]
    set_pack(root, replaced)

    vault = cached(root, fmt)
    stats = vault.cache_stats
    assert stats is not None and stats.status == "discarded"
    assert stats.reason is not None and "pack" in stats.reason
    assert as_data(vault.result) == as_data(vault.adapter.scan(root))
    assert cached(root, fmt).cache_stats.status == "warm"  # type: ignore[union-attr]


def test_the_reader_gives_the_entries_in_path_order_and_checks_the_frame(tmp_path: Path) -> None:
    entries = [
        (bytes([k]), replace(STAMP, size=n), FileScan(chr(k))) for n, k in enumerate(b"eacdb")
    ]
    blob = pack_blob(entries, tmp_path)  # sorted by the packer
    reader = PackReader(blob, tmp_path)
    assert reader.count == 5
    got = [e for part in reader.parts() for e in part]
    assert [k for k, _st, _fs in got] == [b"a", b"b", b"c", b"d", b"e"]
    assert {k: (st.size, fs.rel) for k, st, fs in got} == {
        bytes([k]): (n, chr(k)) for n, k in enumerate(b"eacdb")
    }
    with pytest.raises(StoreCorrupt):
        [e for part in PackReader(_damaged(blob), tmp_path).parts() for e in part]


def test_a_pack_keeps_memories_without_bodies_and_binds_the_vault_root(tmp_path: Path) -> None:
    m = Memory(
        format="cognitive-memory", vault_root=tmp_path, id="x", kind="fact", title="X",
        body="the body", path="x.md",
    )  # fmt: skip
    blob = pack_blob([(b"x.md", STAMP, FileScan("x.md", memories=[m]))], tmp_path)
    assert b"the body" not in zstandard.ZstdDecompressor().stream_reader(blob).readall()
    ((key, stamp, got),) = [e for part in PackReader(blob, tmp_path).parts() for e in part]
    assert key == b"x.md" and stamp == STAMP
    assert got.memories[0].vault_root is tmp_path and got.memories[0].id == "x"
