"""A checked pickle file in the cache folder: magic bytes, version, length, CRC-32, 0600.

What the search index cache (`core.search.index_cache`) is written as.  The
payload is verified before a single byte is unpickled; the file is written
to a temp beside it (named after its writer, `core.store.temps`) and
renamed into place.

Why CRC-32 and not sha256: the check is against damage (a disk, a killed
writer), not against an attacker (the folder is the user's own, 0700, and
whoever can write it can run code as the user anyway).  CRC-32 catches
every damaged stretch up to 32 bits and any other damage but once in 4
billion, at a fifth of the cost: at 100k memories the file is 208 MB, and
its sha256 was 0.15-0.18 s of a 0.29 s load.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import stat
import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from ..safe_io import open_regular
from ..store.codec import FULL_DISPATCH
from ..store.db import private_dir
from ..store.temps import sweep_once, temp_path

_HEADER = struct.Struct(">IQI")  # version, payload length, CRC-32 of the payload


def open_checked(
    path: Path, magic: bytes, version: int, what: str
) -> tuple[BinaryIO | None, str | None]:
    """`path` opened at its payload once everything about it checks out; else (None, reason).

    Owner-only permissions, magic bytes, format version, payload length and
    CRC-32 are all verified before a single byte is unpickled.  The payload
    is checked a chunk at a time (`_crc_from`), so a 200 MB cache is never
    copied, nor held in RSS, to be checked.  The reason is None only when
    there is no file at all.  The caller closes the file.  The first open of a folder
    also removes the temps killed writers left in it (`core.store.temps`).
    """
    sweep_once(path.parent)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"cannot stat the {what}: {exc.strerror or exc}"
    if not stat.S_ISREG(st.st_mode):
        return None, f"the {what} path is not a regular file"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return None, f"the {what} belongs to another user"
    if st.st_mode & 0o022:
        return None, f"the {what} is writable by others"
    try:
        fh = os.fdopen(open_regular(path), "rb")  # returned to the caller, who closes it
    except OSError as exc:
        return None, f"cannot read the {what}: {exc.strerror or exc}"
    try:
        head = fh.read(len(magic) + _HEADER.size)
        if not head.startswith(magic):
            cut = bool(head) and magic.startswith(head)
            fh.close()
            return (
                None,
                f"truncated {what} (no header)" if cut else f"not a memlens {what} (bad magic)",
            )
        if len(head) < len(magic) + _HEADER.size:
            fh.close()
            return None, f"truncated {what} (no header)"
        found, length, crc = _HEADER.unpack_from(head, len(magic))
        if found != version:
            fh.close()
            return None, f"{what} format version {found}, expected {version}"
        at = len(magic) + _HEADER.size
        size = os.fstat(fh.fileno()).st_size - at
        if size != length:
            fh.close()
            return None, f"truncated {what} ({size} of {length} payload bytes)"
        if _crc_from(fh, at) != crc:
            fh.close()
            return None, f"{what} checksum mismatch"
        fh.seek(at)
    except OSError as exc:
        fh.close()
        return None, f"cannot read the {what}: {exc.strerror or exc}"
    return fh, None


#: Bytes read at a time to checksum a cache file.
_CRC_CHUNK = 1 << 20


def _crc_from(fh: BinaryIO, at: int) -> int:
    """CRC-32 of the file from byte `at` to its end, read a chunk at a time into one buffer.

    Why not through a map of the whole file: every page checked then
    counted in the process's RSS until the map closed (a 200 MB index:
    +190 MB of peak RSS at a warm start, for a checksum); nor one read:
    that copies it all.
    """
    view = memoryview(bytearray(_CRC_CHUNK))
    crc = zlib.crc32(b"")
    fh.seek(at)
    while n := fh.readinto(view):  # type: ignore[attr-defined]
        crc = zlib.crc32(view[:n], crc)
    return crc


class _CheckingWriter:
    """A write-only file for pickle that checksums and counts what passes through."""

    __slots__ = ("crc", "fh", "size")

    def __init__(self, fh: BinaryIO) -> None:
        self.fh = fh
        self.crc = 0
        self.size = 0

    def write(self, data: Any) -> int:
        # Pickle protocol 5 hands large buffers over as PickleBuffer objects.
        view = memoryview(data)
        self.crc = zlib.crc32(view, self.crc)
        self.size += view.nbytes
        return self.fh.write(view)


def write_checked(path: Path, magic: bytes, version: int, dump: Callable[[Any], None]) -> None:
    """Write what `open_checked` reads, atomically (0600 in a 0700 directory).

    `dump(writer)` streams the payload into `writer` (any number of
    pickles); the header's length and CRC-32 are filled in afterwards.  The
    payload is never held in memory: saving a 60 MB index cache used to cost
    twice its size on top of the index itself.
    """
    private_dir(path.parent)
    sweep_once(path.parent)
    tmp = temp_path(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(magic + _HEADER.pack(version, 0, 0))
            writer = _CheckingWriter(fh)
            dump(writer)
            fh.seek(len(magic))
            fh.write(_HEADER.pack(version, writer.size, writer.crc))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):
        os.chmod(path, 0o600)


def pickler(writer: Any) -> pickle.Pickler:
    """A pickler with the cache's constructor reducers (`core.store.codec`)."""
    out = pickle.Pickler(writer, protocol=pickle.HIGHEST_PROTOCOL)
    out.dispatch_table = FULL_DISPATCH
    return out


def pack(magic: bytes, version: int, payload: bytes) -> bytes:
    """Magic, header (version, length, CRC-32) and payload, as `open_checked` reads them."""
    return magic + _HEADER.pack(version, len(payload), zlib.crc32(payload)) + payload


__all__ = ["open_checked", "pack", "pickler", "write_checked"]
