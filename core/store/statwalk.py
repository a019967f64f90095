"""The stamps of many vault files, fast: relative to an open folder, and in two processes.

Why: a warm `memlens search` at 100k memories spends most of its time
asking the kernel about each file (a stat is ~4 us on the 2-core test
machine, 0.4-0.7 s for 100k files, about as long as every other step
together).  Two things make it cheaper without trusting anything less:

- each folder is opened once and its files are stat'ed by name relative to
  it (``dir_fd``): the kernel does not walk the vault's path again for every
  file (10-40% of the time measured);
- above `PARALLEL_MIN` files, when a second CPU is idle, a forked child
  stats a share of them while this process does the rest (the system calls
  run in parallel; threads would queue on the GIL between calls), and may
  first do other work (`StatJob`).  Only a process with one thread forks (a
  fork copies no other thread's locks); the child answers through a pipe
  and exits with ``os._exit``, never running this process's cleanup.  A
  child that fails or answers garbage only means this process stats its
  share itself.

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


class StatJob:
    """Stamps of many files being taken while the caller goes on.

    When a fork pays (`_may_fork`), a child stats the first `share` of the
    files from the start; this process stats the rest when asked
    (`result`), after whatever it does meanwhile (a search loads its index
    and runs the query).  Otherwise every file is stat'ed by `result`.
    A child that fails or answers garbage only means its part is stat'ed
    here too.  `close` lets go of a job whose result is not wanted.
    """

    def __init__(self, root: str, rels: Sequence[str], share: float = 0.5) -> None:
        self.root = root
        self.rels = rels
        self._split = 0
        self._pid = 0
        self._read_fd = -1
        if not _may_fork(len(rels)):
            return
        split = min(len(rels), max(0, round(len(rels) * share)))
        read_fd, write_fd = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read_fd)
            os.close(write_fd)
            return
        if pid == 0:  # pragma: no cover - the child (coverage does not follow a fork)
            os.close(read_fd)
            _child(root, rels[:split], write_fd)
        os.close(write_fd)
        self._split, self._pid, self._read_fd = split, pid, read_fd

    def result(self) -> bytes | None:
        """Flat stamps of every file, in order; None when one cannot be stat'ed."""
        split = self._split
        rest = _stat_part(self.root, self.rels[split:])
        first = self._child_answer()
        if rest is None:
            return None
        if first is None or len(first) != split * _FIELDS * _ITEM:
            # No child, or it failed or a stat there did: do its part here (exactly).
            part = _stat_part(self.root, self.rels[:split]) if split else array("q")
            if part is None:
                return None
            first = part.tobytes()
        return first + rest.tobytes()

    def _child_answer(self) -> bytes | None:
        if self._read_fd < 0:
            return None
        try:
            with os.fdopen(self._read_fd, "rb") as answer:
                return answer.read()
        except OSError:
            return None
        finally:
            self._read_fd = -1
            self._reap()

    def close(self) -> None:
        """Let go of the child (it exits on its closed pipe), if any."""
        if self._read_fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._read_fd)
            self._read_fd = -1
        self._reap()

    def _reap(self) -> None:
        if self._pid:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self._pid, 0)
            self._pid = 0


def stat_stamps(root: str, rels: Sequence[str]) -> bytes | None:
    """Flat native int64 ``(size, mtime_ns, ctime_ns, inode)`` of each vault-relative file.

    In the order of `rels`; None when any of them cannot be stat'ed.  Links
    are followed, as reading the file does.  Half of them in a forked child
    when that pays (`StatJob`).
    """
    return StatJob(root, rels).result()


__all__ = ["PARALLEL_MIN", "StatJob", "signed_inode", "stat_stamps"]
