"""Big cache blobs (the search index's meta, manifests and words) as zstd frames.

Why zstd and not zlib, as before: a warm `memlens search` at 100k memories
unpacks ~20 MB of these on every call; zlib took 83 ms of it, zstd 25 ms,
for the same size on disk.  Each frame carries its content size and a
content checksum, so a damaged blob is refused (`BlobCorrupt`), never read
as other numbers.  Compressors are kept per thread: zstd's contexts may not
be shared between threads.
"""

from __future__ import annotations

import threading

import zstandard

#: zstd's default level: ~300 MB/s packing, and higher levels barely shrink these.
LEVEL = 3


class BlobCorrupt(ValueError):
    """A packed blob that does not unpack: its cache is discarded and rebuilt."""


class _Contexts(threading.local):
    def __init__(self) -> None:
        self.packer = zstandard.ZstdCompressor(level=LEVEL, write_checksum=True)
        self.unpacker = zstandard.ZstdDecompressor()


_contexts = _Contexts()


def pack(data: bytes) -> bytes:
    """`data` as one zstd frame with its size and checksum."""
    return _contexts.packer.compress(data)


def unpack(blob: bytes) -> bytes:
    """What `pack` was given; `BlobCorrupt` for anything else (damaged, cut, padded)."""
    try:
        return _contexts.unpacker.decompress(blob, allow_extra_data=False)
    except zstandard.ZstdError as exc:
        raise BlobCorrupt(f"a packed blob does not unpack: {exc}") from exc


__all__ = ["LEVEL", "BlobCorrupt", "pack", "unpack"]
