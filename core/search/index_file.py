"""A checked pickle file in the cache folder: magic bytes, version, length, sha256, 0600.

What the search index cache (`core.search.index_cache`) is written as.  The
payload is verified before a single byte is unpickled; the file is written
to a temp beside it (named after its writer, `core.store.temps`) and
renamed into place.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import stat
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from ..safe_io import open_regular
from ..store.codec import FULL_DISPATCH
from ..store.db import private_dir
from ..store.temps import sweep_once, temp_path

_HEADER = struct.Struct(">IQ32s")  # version, payload length, sha256 of payload


def open_checked(
    path: Path, magic: bytes, version: int, what: str
) -> tuple[BinaryIO | None, str | None]:
    """`path` opened at its payload once everything about it checks out; else (None, reason).

    Owner-only permissions, magic bytes, format version, payload length and
    sha256 are all verified before a single byte is unpickled.  The payload
    is hashed in chunks and then unpickled from the file, so a 100 MB cache
    never sits in memory twice.  The reason is None only when there is no
    file at all.  The caller closes the file.  The first open of a folder
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
        found, length, digest = _HEADER.unpack_from(head, len(magic))
        if found != version:
            fh.close()
            return None, f"{what} format version {found}, expected {version}"
        hasher = hashlib.sha256()
        size = 0
        while chunk := fh.read(1 << 20):
            hasher.update(chunk)
            size += len(chunk)
        if size != length:
            fh.close()
            return None, f"truncated {what} ({size} of {length} payload bytes)"
        if hasher.digest() != digest:
            fh.close()
            return None, f"{what} checksum mismatch"
        fh.seek(len(magic) + _HEADER.size)
    except OSError as exc:
        fh.close()
        return None, f"cannot read the {what}: {exc.strerror or exc}"
    return fh, None


class _HashingWriter:
    """A write-only file for pickle that hashes and counts what passes through."""

    __slots__ = ("digest", "fh", "size")

    def __init__(self, fh: BinaryIO) -> None:
        self.fh = fh
        self.digest = hashlib.sha256()
        self.size = 0

    def write(self, data: Any) -> int:
        # Pickle protocol 5 hands large buffers over as PickleBuffer objects.
        view = memoryview(data)
        self.digest.update(view)
        self.size += view.nbytes
        return self.fh.write(view)


def write_checked(path: Path, magic: bytes, version: int, dump: Callable[[Any], None]) -> None:
    """Write what `open_checked` reads, atomically (0600 in a 0700 directory).

    `dump(writer)` streams the payload into `writer` (any number of
    pickles); the header's length and sha256 are filled in afterwards.  The
    payload is never held in memory: saving a 60 MB index cache used to cost
    twice its size on top of the index itself.
    """
    private_dir(path.parent)
    sweep_once(path.parent)
    tmp = temp_path(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(magic + _HEADER.pack(version, 0, bytes(32)))
            writer = _HashingWriter(fh)
            dump(writer)
            fh.seek(len(magic))
            fh.write(_HEADER.pack(version, writer.size, writer.digest.digest()))
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
    """Magic, header (version, length, sha256) and payload, as `open_checked` reads them."""
    return magic + _HEADER.pack(version, len(payload), hashlib.sha256(payload).digest()) + payload


__all__ = ["open_checked", "pack", "pickler", "write_checked"]
