"""A vault's file scans packed together: what a warm start decodes in one stream.

Why: a warm start at 100k files decoded 100k rows one by one (a zstd frame
and a pickle each), ~1.5 s.  The same scans pickled together, PART to a
pickle, share that pickle's memo: a format id, a tag, a date or a field
name repeated by thousands of memories is one object, written once and
built once.  They decode in ~0.8 s and leave fewer objects behind.

The pack is a copy beside the rows, never their replacement: rows stay
whole because a search index reads single rows (`core.store.reader`).  Each
entry carries the sha256 of the file bytes its scan was read from, and a
row takes its pack entry only when that is the row's own sha256.  A row
written since the pack (one changed file: the store's usual small write)
is decoded from its own blob instead, so the pack is never rewritten for
one file.  The scan that finds the pack serving less than MIN_SHARE of the
vault's files writes it again (`wanted`).

Layout: one zstd frame with its content checksum, holding successive
pickles: a header (`MAGIC`, version, number of parts), then the parts, each
a list of (path key, sha256, FileScan) in path-key order, memories without
bodies and without the vault root, as a row holds them (`core.store.codec`).
The checksum is checked when the last part has been read (`PackReader.finish`).
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import zstandard

from ..model import FileScan
from .codec import ZSTD_LEVEL, rows_table, with_root
from .db import StoreCorrupt

#: The blob the pack is kept in (`blobs` table).
PACK = "pack"
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

#: (path key as stored, sha256 of the file's bytes (32 bytes), its scan).
Entry = tuple[bytes, bytes, FileScan]


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
        pickle.dump((MAGIC, VERSION, len(parts)), sink, protocol=pickle.HIGHEST_PROTOCOL)
        for part in parts:
            pickler = pickle.Pickler(sink, protocol=pickle.HIGHEST_PROTOCOL)
            pickler.dispatch_table = rows_table((fs for _k, _s, fs in part), root, False)
            pickler.dump(part)
    return out.getvalue()


class PackReader:
    """A pack's entries, read part by part as the rows that want them come (in path order)."""

    def __init__(self, blob: bytes, root: Path) -> None:
        self._stream = zstandard.ZstdDecompressor().stream_reader(blob)
        self._root = root
        #: Entries read and not taken yet.
        self._entries: dict[bytes, tuple[bytes, FileScan]] = {}
        #: The greatest key read so far (b"": none yet).
        self._last = b""
        self._parts = self._call(self._header)
        #: Rows served from the pack.
        self.served = 0

    def take(self, key: bytes, sha: bytes) -> FileScan | None:
        """The pack's scan of row `key` if it was read from the row's bytes (`sha`), else None."""
        while self._parts and key > self._last:
            self._call(self._read_part)
        entry = self._entries.pop(key, None)
        if entry is None or entry[0] != sha:
            return None
        self.served += 1
        return entry[1]

    def finish(self) -> None:
        """Read the parts left and check the frame's checksum (StoreCorrupt if damaged)."""
        while self._parts:
            self._call(self._read_part)
        self._entries.clear()
        if self._call(self._stream.read) != b"":
            raise StoreCorrupt("the pack holds more than its parts")

    def _header(self) -> int:
        header = pickle.Unpickler(self._stream).load()
        if (
            not isinstance(header, tuple)
            or header[:2] != (MAGIC, VERSION)
            or len(header) != 3
            or not isinstance(header[2], int)
        ):
            raise StoreCorrupt("not a pack this code wrote")
        return header[2]

    def _read_part(self) -> None:
        part = pickle.Unpickler(self._stream).load()
        self._parts -= 1
        if not isinstance(part, list):
            raise StoreCorrupt("a pack part is no list")
        last, root, entries = self._last, self._root, self._entries
        for entry in part:
            if not (isinstance(entry, tuple) and len(entry) == 3):
                raise StoreCorrupt("a pack entry is malformed")
            key, sha, fs = entry
            if not (type(key) is bytes and key > last and type(sha) is bytes and len(sha) == 32):
                raise StoreCorrupt("a pack entry's path or checksum is malformed")
            if not isinstance(fs, FileScan):
                raise StoreCorrupt("a pack entry holds no FileScan")
            entries[key] = (sha, with_root(fs, root))
            last = key
        self._last = last

    def _call(self, read: Callable[[], _T]) -> _T:
        """`read()`, any failure of the stream or of a pickle in it as StoreCorrupt."""
        try:
            return read()
        except StoreCorrupt:
            raise
        except Exception as exc:  # a damaged pack: none of it is trusted
            raise StoreCorrupt(f"unreadable pack ({type(exc).__name__})") from exc


__all__ = ["MIN_FILES", "MIN_SHARE", "PACK", "PART", "Entry", "PackReader", "pack_blob", "wanted"]
