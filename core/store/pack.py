"""A vault's file scans packed together: what a warm start decodes in one stream.

Why: a warm start at 100k files read 100k file rows (0.3-0.4 s for the
query alone) and decoded them one by one (a zstd frame and a pickle each,
~1.5 s).  The pack holds every file's stamp and scan, PART to a pickle: a
pickle's memo is shared by its scans, so a format id, a tag, a date or a
field name repeated by thousands of memories is one object, written once
and built once.  It decodes in ~1 s and leaves fewer objects behind.

The pack is a copy beside the rows, never their replacement: rows stay
whole because a search index reads single rows (`core.store.reader`).  The
pack is written only when the file rows are exactly its entries, checked in
its write transaction, and it notes the rows' generation then (`PACK_GEN`):
every save of rows gives them the next one (`files.gen`, indexed; the
counter is the store's `files-gen` blob).  A warm
start takes the pack's entries and, over them, the rows of a newer
generation (one changed file: the store's usual small write, never the
pack).  A pack entry whose row was removed since (its file gone) is still
served: its stamp is checked against the file like any row's.  The scan
that finds the pack serving less than MIN_SHARE of the vault's files writes
it again (`wanted`).

Layout: one zstd frame with its content checksum, holding successive
pickles: a header (`MAGIC`, version, number of parts, of entries), then the
parts, each a list of (path key, stamp, FileScan) in path-key order,
memories without bodies and without the vault root, as a row holds them
(`core.store.codec`).  The checksum is checked once the last part has been
read (`PackReader.parts`).
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

import zstandard

from ..model import FileScan
from .codec import ZSTD_LEVEL, rows_table, with_root
from .db import StoreCorrupt
from .stamps import FileStamp

#: The blobs the pack is kept in (`blobs` table), and the generation of the
#: file rows it was written from (8 bytes, big-endian).
PACK = "pack"
PACK_GEN = "pack-gen"
MAGIC = "memlens-pack"
VERSION = 1
#: Entries per pickle: the first part is what a front end's first rows need;
#: a part's memo (the objects its pickler remembers) stays bounded.
PART = 5000
#: Fewest files a vault needs for a pack (a smaller one decodes its rows in
#: tens of milliseconds).
MIN_FILES = 2000
#: The pack is written again once it serves less than this share of the files.
MIN_SHARE = 0.9

_T = TypeVar("_T")

#: (path key as stored, the file's stamp, its scan).
Entry = tuple[bytes, FileStamp, FileScan]


def wanted(files: int, served: int) -> bool:
    """A scan of `files` files, `served` of them from the pack, should write a new pack."""
    return files >= MIN_FILES and served < MIN_SHARE * files


def pack_blob(entries: Sequence[Entry], root: Path) -> bytes:
    """The pack of `entries` (sorted here by path key), compressed as it is pickled."""
    ordered = sorted(entries, key=lambda e: e[0])
    parts = [ordered[at : at + PART] for at in range(0, len(ordered), PART)]
    out = io.BytesIO()
    packer = zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_checksum=True)
    with packer.stream_writer(out, closefd=False) as sink:
        header = (MAGIC, VERSION, len(parts), len(ordered))
        pickle.dump(header, sink, protocol=pickle.HIGHEST_PROTOCOL)
        for part in parts:
            pickler = pickle.Pickler(sink, protocol=pickle.HIGHEST_PROTOCOL)
            pickler.dispatch_table = rows_table((fs for _k, _s, fs in part), root, False)
            pickler.dump(part)
    return out.getvalue()


class PackReader:
    """A pack's entries, part by part in path-key order (StoreCorrupt when damaged)."""

    def __init__(self, blob: bytes, root: Path) -> None:
        self._stream = zstandard.ZstdDecompressor().stream_reader(blob)
        self._root = root
        self._last = b""  # the greatest key read so far
        self._parts, self.count = self._call(self._header)

    def parts(self) -> Iterator[list[Entry]]:
        """Each part's entries, vault roots bound; then the frame's checksum is checked."""
        while self._parts:
            yield self._call(self._read_part)
        if self._call(self._stream.read) != b"":
            raise StoreCorrupt("the pack holds more than its parts")

    def _header(self) -> tuple[int, int]:
        header = pickle.Unpickler(self._stream).load()
        if (
            not isinstance(header, tuple)
            or len(header) != 4
            or header[:2] != (MAGIC, VERSION)
            or not all(type(n) is int and n >= 0 for n in header[2:])
        ):
            raise StoreCorrupt("not a pack this code wrote")
        return header[2], header[3]

    def _read_part(self) -> list[Entry]:
        part = pickle.Unpickler(self._stream).load()
        self._parts -= 1
        if not isinstance(part, list):
            raise StoreCorrupt("a pack part is no list")
        last, root = self._last, self._root
        for entry in part:
            if not (isinstance(entry, tuple) and len(entry) == 3):
                raise StoreCorrupt("a pack entry is malformed")
            key, stamp, fs = entry
            if not (type(key) is bytes and key > last and type(stamp) is FileStamp):
                raise StoreCorrupt("a pack entry's path or stamp is malformed")
            if not isinstance(fs, FileScan):
                raise StoreCorrupt("a pack entry holds no FileScan")
            with_root(fs, root)
            last = key
        self._last = last
        return part

    def _call(self, read: Callable[[], _T]) -> _T:
        """`read()`, any failure of the stream or of a pickle in it as StoreCorrupt."""
        try:
            return read()
        except StoreCorrupt:
            raise
        except Exception as exc:  # a damaged pack: none of it is trusted
            raise StoreCorrupt(f"unreadable pack ({type(exc).__name__})") from exc


__all__ = [
    "MIN_FILES",
    "MIN_SHARE",
    "PACK",
    "PACK_GEN",
    "PART",
    "Entry",
    "PackReader",
    "pack_blob",
    "wanted",
]
