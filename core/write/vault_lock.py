"""One writer per vault at a time: an OS file lock on `<vault>/.memlens/lock`.

Two memlens processes (the app and a cron job) acting on one vault at once
could each verify their plan, write, and then append to the journal in an
order that loses an entry.  Every transaction, undo and recovery therefore
holds `fcntl.flock` on the vault's lock file from the first check to the
journal line.  Threads of one process share one lock per vault (a re-entrant
thread lock in front of the file lock), because `flock` on a second open of
the same file in the same process would wait for itself.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import RefusedError, UnsafePathError
from ..safe_io import NotRegularFileError, kind_of

LOCK_NAME = "lock"

#: How long a writer waits for another memlens process before it gives up.
#: Actions hold the lock for milliseconds and whole runs for seconds, so a
#: longer wait means a stuck process; saying so beats hanging a cron job.
WAIT_SECONDS = 120.0


class VaultBusyError(RefusedError):
    """Another memlens process has held the vault's lock for longer than the wait."""


@dataclass(slots=True)
class _Held:
    """The process-wide state of one vault's lock."""

    guard: threading.RLock = field(default_factory=threading.RLock)
    fd: int | None = None
    depth: int = 0


_LOCKS: dict[str, _Held] = {}
_LOCKS_GUARD = threading.Lock()


def _held(state: Path) -> _Held:
    key = os.path.realpath(state)
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(key, _Held())


def _open_lock_file(state: Path) -> int:
    """Open (create) the lock file: never through a link, only a regular file."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(state / LOCK_NAME, flags, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePathError(f"{state / LOCK_NAME} is a symbolic link") from None
        raise
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise NotRegularFileError(state / LOCK_NAME, kind_of(mode))
    return fd


@contextlib.contextmanager
def vault_lock(state: Path, *, wait: bool = True, seconds: float = WAIT_SECONDS) -> Iterator[bool]:
    """Hold the lock of the vault whose state folder is `state`; yield whether it is held.

    With `wait=False` the lock is only taken if nobody holds it (yields False
    otherwise): recovery on open must never wait for, nor disturb, a live
    writer.  With `wait`, VaultBusyError after `seconds` (another process
    that holds the lock that long is stuck).
    """
    held = _held(state)
    if not held.guard.acquire(blocking=wait):
        yield False
        return
    try:
        if held.depth == 0:
            fd = _open_lock_file(state)
            try:
                got = _flock(fd, seconds if wait else 0.0)
            except BaseException:
                os.close(fd)
                raise
            if not got:
                os.close(fd)
                if wait:
                    raise VaultBusyError(
                        f"{state.parent}: another memlens process has been writing to this "
                        f"vault for over {seconds:g} s; try again, or stop that process"
                    )
                yield False
                return
            held.fd = fd
        held.depth += 1
        try:
            yield True
        finally:
            held.depth -= 1
            if held.depth == 0 and held.fd is not None:
                # Closing the descriptor releases the flock.
                os.close(held.fd)
                held.fd = None
    finally:
        held.guard.release()


def _flock(fd: int, seconds: float) -> bool:
    """Take the exclusive flock on `fd`, polling for up to `seconds`; whether it was taken."""
    deadline = time.monotonic() + seconds
    pause = 0.005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


def lock_depth(state: Path) -> int:
    """How many nested holds this process has on the vault's lock (0: not held)."""
    return _held(state).depth
