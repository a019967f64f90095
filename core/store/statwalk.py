"""The stamps of many vault files, fast: relative to an open folder, and in two processes.

Why: a warm `memlens search` at 100k memories spends most of its time
asking the kernel about each file (a stat is ~4 us on the 2-core test
machine, 0.4-0.7 s for 100k files, about as long as every other step
together).  Two things make it cheaper without trusting anything less:

- each folder is opened once and its files are stat'ed by name relative to
  it (``dir_fd``): the kernel does not walk the vault's path again for every
  file (10-40% of the time measured);
- above `PARALLEL_MIN` files, when a second CPU is idle, the second half is
  stat'ed by a forked child while this process does the first half (the
  system calls run in parallel; threads would queue on the GIL between
  calls).  Only a process with one thread forks (a fork copies no other
  thread's locks); the child answers through a pipe and exits with
  ``os._exit``, never running this process's cleanup.  A child that fails or
  answers garbage only means this process stats its half itself.

The answer is a flat int64 array of ``(size, mtime_ns, ctime_ns, inode)``
per file in the order asked, the key a stored row is compared by
(`FileStamp.key`); None when any file cannot be stat'ed (the caller then
takes the slow, exact path).
"""

from __future__ import annotations

import contextlib
import os
import threading
from array import array
from collections.abc import Sequence

from ..workers import PARALLEL_ENV, spare_cpu

#: Below this many files a second process costs more than it saves.
PARALLEL_MIN = 20_000
_FIELDS = 4
_ITEM = 8
#: Inode numbers are unsigned 64-bit: those above the signed range wrap (`signed_inode`).
_TOP = 1 << 63
_WRAP = 1 << 64


def signed_inode(ino: int) -> int:
    """An inode number as the int64 the stamps are packed with."""
    return ino if ino < _TOP else ino - _WRAP


def _stat_part(root: str, rels: Sequence[str]) -> array[int] | None:
    """The stamps of `rels` in order, or None when one cannot be stat'ed."""
    out: array[int] = array("q")
    add = out.extend
    stat = os.stat
    fds: dict[str, int] = {}
    try:
        for rel in rels:
            folder, _sep, name = rel.rpartition("/")
            fd = fds.get(folder)
            if fd is None:
                path = f"{root}/{folder}" if folder else root
                fd = fds[folder] = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            st = stat(name, dir_fd=fd)
            ino = st.st_ino
            add((st.st_size, st.st_mtime_ns, st.st_ctime_ns, ino if ino < _TOP else ino - _WRAP))
    except (OSError, ValueError, OverflowError):
        return None
    finally:
        for fd in fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
    return out


def _may_fork(count: int) -> bool:
    return (
        count >= PARALLEL_MIN
        and hasattr(os, "fork")
        and os.environ.get(PARALLEL_ENV) != "0"
        and threading.active_count() == 1
        and spare_cpu()
    )


def _child(root: str, rels: Sequence[str], write_fd: int) -> None:
    """In the forked child: stat `rels`, send the bytes (b"" when a stat failed), exit."""
    code = 0
    try:
        part = _stat_part(root, rels)
        data = b"" if part is None else part.tobytes()
        with os.fdopen(write_fd, "wb") as out:
            out.write(data)
    except BaseException:  # nothing may escape a forked child
        code = 1
    finally:
        os._exit(code)


def _forked(root: str, rels: Sequence[str]) -> bytes | None:
    """Stamps of `rels`: the second half from a forked child, the first here."""
    half = len(rels) // 2
    read_fd, write_fd = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_fd)
        os.close(write_fd)
        part = _stat_part(root, rels)
        return None if part is None else part.tobytes()
    if pid == 0:  # pragma: no cover - the child (coverage does not follow a fork)
        os.close(read_fd)
        _child(root, rels[half:], write_fd)
    os.close(write_fd)
    try:
        first = _stat_part(root, rels[:half])
        with os.fdopen(read_fd, "rb") as answer:
            second = answer.read()
    finally:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
    if first is None:
        return None
    if len(second) != (len(rels) - half) * _FIELDS * _ITEM:
        # The child failed or a stat there did: do that half here (exactly).
        rest = _stat_part(root, rels[half:])
        if rest is None:
            return None
        second = rest.tobytes()
    return first.tobytes() + second


def stat_stamps(root: str, rels: Sequence[str]) -> bytes | None:
    """Flat native int64 ``(size, mtime_ns, ctime_ns, inode)`` of each vault-relative file.

    In the order of `rels`; None when any of them cannot be stat'ed.  Links
    are followed, as reading the file does.
    """
    if _may_fork(len(rels)):
        return _forked(root, rels)
    part = _stat_part(root, rels)
    return None if part is None else part.tobytes()


__all__ = ["PARALLEL_MIN", "signed_inode", "stat_stamps"]
