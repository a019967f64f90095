"""The packed cache blobs: what goes in comes out, anything else is refused."""

from __future__ import annotations

import threading

import pytest

from memlens.core.store import blobs


def test_blobs_round_trip_and_refuse_damage() -> None:
    data = b"".join(i.to_bytes(8, "little") for i in range(50_000))
    packed = blobs.pack(data)
    assert len(packed) < len(data) // 4
    assert blobs.unpack(packed) == data
    assert blobs.unpack(blobs.pack(b"")) == b""
    flipped = bytearray(packed)
    flipped[len(flipped) // 2] ^= 0x10
    for bad in (bytes(flipped), packed[:-5], packed + b"\0", b"", b"not zstd at all"):
        with pytest.raises(blobs.BlobCorrupt):
            blobs.unpack(bad)
    assert issubclass(blobs.BlobCorrupt, ValueError)  # what the index loaders catch


def test_blobs_pack_and_unpack_from_many_threads() -> None:
    texts = [bytes([i]) * (10_000 + i) for i in range(8)]
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for _ in range(50):
                assert blobs.unpack(blobs.pack(texts[i])) == texts[i]
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
