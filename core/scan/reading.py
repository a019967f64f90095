"""Reading one file with the stamp its bytes belong to, and scanning it.

`read_stamped` takes fstat before and after the read on one descriptor, so a
stamp never vouches for bytes it did not describe; `scan_one` hands the bytes
to the format's adapter, and gives a file that only grew (an append-only
store) to the adapter's `scan_appended`.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from pathlib import Path

from ..formats import FormatAdapter
from ..model import FileScan
from ..safe_io import NotRegularFileError, kind_of
from ..store import (
    FileStamp,
)

#: Files whose timestamps are this close to the moment they were read are
#: re-checked by content on the next start (coarse file system clocks).
RACY_WINDOW_NS = 2_000_000_000


# --------------------------------------------------------------------------- reading files


def read_stamped(path: Path) -> tuple[bytes, FileStamp]:
    """The bytes of `path` and the stamp they belong to.

    fstat before and after the read on the same descriptor: a write that
    lands during the read shows up as a difference, and the read is retried,
    so a stamp never vouches for bytes it did not describe.
    """
    data, stamp, _prefix = _read_stamped(path, None)
    return data, stamp


def _read_all(fd: int, size: int) -> bytes:
    """Every byte from the descriptor's position to the end (`size`: the expected length).

    Exactly `size` bytes for a request of `size + 1` is the end of the file
    (the caller's fstat after the read confirms the size), so the usual case
    takes one read; anything else reads on until a read returns nothing.
    """
    data = os.read(fd, size + 1)
    if len(data) == size:
        return data
    parts = [data]
    while chunk := os.read(fd, max(size + 1 - len(data), 1 << 16)):
        parts.append(chunk)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _read_stamped(path: Path | str, prefix: int | None) -> tuple[bytes, FileStamp, str | None]:
    """`read_stamped`, plus the sha256 of the first `prefix` bytes (in the same pass)."""
    # os.open/os.read, not open(): no file object per file (half the cost of
    # reading a small file, which is what a vault mostly holds).
    # O_NONBLOCK: a FIFO put where a memory file was opens at once (and is
    # refused below) instead of waiting for a writer forever.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        for _ in range(3):
            before = os.fstat(fd)
            if not stat.S_ISREG(before.st_mode):
                raise NotRegularFileError(path, kind_of(before.st_mode))
            data = _read_all(fd, before.st_size)
            after = os.fstat(fd)
            if (before.st_mtime_ns, before.st_ctime_ns, before.st_size) == (
                after.st_mtime_ns,
                after.st_ctime_ns,
                after.st_size,
            ) and after.st_size == len(data):
                break
            os.lseek(fd, 0, os.SEEK_SET)
    finally:
        os.close(fd)
    digest = hashlib.sha256()
    prefix_sha: str | None = None
    if prefix is not None and 0 < prefix <= len(data):
        view = memoryview(data)
        digest.update(view[:prefix])
        prefix_sha = digest.copy().hexdigest()
        digest.update(view[prefix:])
    else:
        digest.update(data)
    newest = max(after.st_mtime_ns, after.st_ctime_ns)
    stamp = FileStamp(
        size=after.st_size,
        mtime_ns=after.st_mtime_ns,
        ctime_ns=after.st_ctime_ns,
        inode=after.st_ino,
        sha256=digest.hexdigest(),
        racy=time.time_ns() - newest < RACY_WINDOW_NS,
    )
    return data, stamp, prefix_sha


def scan_one(
    adapter: FormatAdapter,
    root: Path,
    path: Path,
    previous: tuple[FileScan, FileStamp] | None = None,
) -> tuple[FileScan, FileStamp | None]:
    """One file through the adapter, with its stamp (None if it could not be read).

    An unreadable file is left to the adapter, which reports it its own way;
    without a stamp it is never cached, so it is read again next time.

    With `previous` (the file's last FileScan and stamp), a file that only
    grew, its old bytes intact up to a line end (an append-only JSON Lines
    store), is handed to the adapter's `scan_appended` so only the
    new lines are parsed (the line they start on comes from the previous
    FileScan's optional `data["newlines"]`, else by counting); otherwise
    the adapter's `rescan_file` may reuse what the previous read
    made of unchanged parts.
    """
    old_size = previous[1].size if previous is not None else None
    try:
        data, stamp, prefix_sha = _read_stamped(path, old_size)
    except OSError:
        return adapter.scan_file(root, path), None
    if (
        previous is not None
        and old_size is not None
        and prefix_sha == previous[1].sha256
        and len(data) > old_size
        and data[old_size - 1 : old_size] == b"\n"
    ):
        # The previous read may know its line count (`newlines`: the same
        # bytes the stamp hashed); counting 10 MB again costs ~7 ms.
        known = previous[0].data.get("newlines")
        first_line = (known if isinstance(known, int) else data.count(b"\n", 0, old_size)) + 1
        grown = adapter.scan_appended(root, path, previous[0], data[old_size:], first_line)
        if grown is not None:
            return grown, stamp
    if previous is not None:
        redone = adapter.rescan_file(root, path, data, previous[0])
        if redone is not None:
            return redone, stamp
    return adapter.scan_file(root, path, data), stamp


def scan_new(adapter: FormatAdapter, root: Path, rel: str) -> tuple[FileScan, FileStamp | None]:
    """`scan_one` for a file with no previous scan, named by its vault-relative path.

    Through the adapter's `scan_rel` (the same as `scan_file`, by relative
    path; formats override it to build no Path): a cold scan reads every
    file this way.
    """
    full = f"{root}{os.sep}{rel}"
    try:
        data, stamp, _prefix = _read_stamped(full, None)
    except OSError:
        return adapter.scan_file(root, Path(full)), None
    return adapter.scan_rel(root, rel, data), stamp
