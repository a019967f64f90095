"""The store's pack: every file's scan in one stream, a copy the rows fall back from."""

from __future__ import annotations

import pickle
import sqlite3
from pathlib import Path

import pytest
import zstandard

from memlens.core.model import FileScan, Memory, ScanResult
from memlens.core.scan import reading as scan_reading
from memlens.core.scan.cache import cache_path
from memlens.core.scan.vault import Vault, discover, scan_vault
from memlens.core.store import pack
from memlens.core.store.db import StoreCorrupt
from memlens.core.store.pack import PackReader, pack_blob

FORMATS = (
    "dream-cycle",
    "observation-v1",
    "experience-records",
    "project-ocean",
    "cognitive-memory",
)

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


def _damaged(blob: bytes) -> bytes:
    at = len(blob) // 2
    return blob[:at] + bytes([blob[at] ^ 0xFF]) + blob[at + 1 :]


def _frame(*pickles: object) -> bytes:
    data = b"".join(pickle.dumps(p, protocol=pickle.HIGHEST_PROTOCOL) for p in pickles)
    return zstandard.ZstdCompressor(write_checksum=True).compress(data)


SHA = bytes(32)


@pytest.mark.parametrize(
    "bad",
    [
        "damaged",
        "checksum",
        "not_a_pack",
        "more_parts_than_said",
        "fewer_parts_than_said",
        "keys_out_of_order",
        "short_sha",
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
    header = (pack.MAGIC, pack.VERSION)
    replaced = {
        "damaged": _damaged(blob),
        "checksum": blob[:-1] + bytes([blob[-1] ^ 1]),
        "not_a_pack": _frame(("another", 1, 0)),
        "more_parts_than_said": _frame((*header, 0), []),
        "fewer_parts_than_said": _frame((*header, 2), []),
        "keys_out_of_order": _frame(
            (*header, 1), [(b"b", SHA, FileScan("b")), (b"a", SHA, FileScan("a"))]
        ),
        "short_sha": _frame((*header, 1), [(b"a", b"x", FileScan("a"))]),
        "no_filescan": _frame((*header, 1), [(b"a", SHA, {"rel": "a"})]),
    }[bad]
    set_pack(root, replaced)

    vault = cached(root, fmt)
    stats = vault.cache_stats
    assert stats is not None and stats.status == "discarded"
    assert stats.reason is not None and "pack" in stats.reason
    assert as_data(vault.result) == as_data(vault.adapter.scan(root))
    assert cached(root, fmt).cache_stats.status == "warm"  # type: ignore[union-attr]


def test_the_reader_serves_only_entries_of_the_same_bytes(tmp_path: Path) -> None:
    scans = {key: FileScan(key.decode()) for key in (b"a", b"c", b"e", b"g", b"i")}
    entries = [(key, bytes([n]) * 32, fs) for n, (key, fs) in enumerate(scans.items())]
    blob = pack_blob(list(reversed(entries)), tmp_path)  # sorted by the packer
    reader = PackReader(blob, tmp_path)
    assert reader.take(b"0", SHA) is None  # before every entry: none read for it
    assert reader.take(b"a", bytes([0]) * 32) == scans[b"a"]
    assert reader.take(b"b", SHA) is None  # between entries
    assert reader.take(b"c", SHA) is None  # another file's bytes
    assert reader.take(b"g", bytes([3]) * 32) == scans[b"g"]
    assert reader.take(b"g", bytes([3]) * 32) is None  # taken once
    assert reader.served == 2
    reader.finish()
    with pytest.raises(StoreCorrupt):
        PackReader(_damaged(blob), tmp_path).finish()


def test_a_pack_keeps_memories_without_bodies_and_binds_the_vault_root(tmp_path: Path) -> None:
    m = Memory(
        format="cognitive-memory", vault_root=tmp_path, id="x", kind="fact", title="X",
        body="the body", path="x.md",
    )  # fmt: skip
    blob = pack_blob([(b"x.md", SHA, FileScan("x.md", memories=[m]))], tmp_path)
    assert b"the body" not in zstandard.ZstdDecompressor().stream_reader(blob).readall()
    reader = PackReader(blob, tmp_path)
    got = reader.take(b"x.md", SHA)
    reader.finish()
    assert got is not None and got.memories[0].vault_root is tmp_path
    assert got.memories[0].id == "x"
