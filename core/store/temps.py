"""Temp files of the cache folder: named after their writer, removed once it is gone.

A scan or index cache is written to a temp file beside it and renamed into
place (`core.cache.write_checked`).  A process killed mid-write (SIGKILL, a
closed terminal, a power cut) never gets to remove its temp, and those are
as big as the cache: 85-100 MB at 100k memories, left forever.

So a temp's name says who writes it: ``.<cache name>.<pid>-<token>.<ns>.tmp``,
where the token identifies that process beyond its pid (a hash of the boot
id and the process's start time, read from ``/proc``), so a pid reused by
another process, or by the same pid after a reboot, is not mistaken for the
writer.  Whoever next opens the cache folder removes the temps whose writer
no longer exists (`sweep_once`: one ``os.scandir`` per folder and process).
A live writer's temp is never touched: two memlens processes may share the
folder.  When nothing can tell (no ``/proc``, another user's process), the
temp is kept.

Names without a token (memlens before this module) are judged by pid alone.
Vault-side temps (`core.safe_io.TEMP_PREFIX`) are not this module's business:
journal recovery handles them.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
import threading
import time
from pathlib import Path

#: ``.<name>.<pid>[-<token>].<ns>.tmp``; the token is absent in older names.
_TEMP_RE = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)(?:-(?P<token>[0-9a-f]+))?\.(?P<ns>\d+)\.tmp$")
#: Token length in hex digits (a sha256 prefix).
_TOKEN_LEN = 16

_swept: set[str] = set()
_swept_lock = threading.Lock()
_boot_id: str | None = None
_own: tuple[int, str | None] | None = None


def _read_boot_id() -> str:
    """The kernel's boot id (changes at every boot); "" where there is none."""
    global _boot_id
    if _boot_id is None:
        try:
            with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as fh:
                _boot_id = fh.read().strip()
        except OSError:
            _boot_id = ""
    return _boot_id


def _proc_stat(pid: int) -> tuple[str, str] | None:
    """(state, start time in clock ticks since boot) of `pid` from /proc; None if unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces or
    # parentheses itself: the fields that follow start after the last ")".
    fields = raw[raw.rfind(b")") + 2 :].split()
    if len(fields) < 20:
        return None
    return fields[0].decode("ascii", "replace"), fields[19].decode("ascii", "replace")


def process_token(pid: int) -> str | None:
    """What tells process `pid` from any later process with the same pid; None if unknown."""
    found = _proc_stat(pid)
    if found is None:
        return None
    text = f"{_read_boot_id()}:{found[1]}"
    return hashlib.sha256(text.encode("ascii", "replace")).hexdigest()[:_TOKEN_LEN]


def _own_identity() -> tuple[int, str | None]:
    """This process's (pid, token), recomputed after a fork (the pid tells)."""
    global _own
    pid = os.getpid()
    if _own is None or _own[0] != pid:
        _own = (pid, process_token(pid))
    return _own


def temp_path(final: Path) -> Path:
    """A fresh temp name beside `final`, naming this process as its writer."""
    pid, token = _own_identity()
    writer = f"{pid}-{token}" if token else str(pid)
    return final.with_name(f".{final.name}.{writer}.{time.time_ns()}.tmp")


def writer_gone(pid: int, token: str | None) -> bool:
    """True only when the process that named a temp surely no longer runs.

    Gone: no process has the pid, it is a zombie (killed, not yet reaped:
    it writes nothing more), or the process now holding the pid has another
    token (the pid was reused).  Anything uncertain counts as alive.
    """
    if pid <= 0:
        return False  # not a pid a writer can have; 0 and -1 would signal groups
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # it exists, as another user: its /proc entry may still be readable
    except OSError:
        return False
    found = _proc_stat(pid)
    if found is None:
        return False
    if found[0] == "Z":
        return True
    return token is not None and process_token(pid) not in (None, token)


def sweep_stale_temps(folder: Path) -> list[Path]:
    """Remove the temps in `folder` whose writer is gone; return them.

    One ``os.scandir``; only regular files whose name has the temp shape
    are looked at, symlinks never followed.
    """
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed  # no folder yet: nothing left behind
    for entry in entries:
        match = _TEMP_RE.match(entry.name)
        if match is None:
            continue
        with contextlib.suppress(OSError):
            if not stat.S_ISREG(entry.stat(follow_symlinks=False).st_mode):
                continue
            if writer_gone(int(match["pid"]), match["token"]):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed


def sweep_once(folder: Path) -> list[Path]:
    """`sweep_stale_temps` the first time this process opens `folder`; later calls do nothing.

    Why once: the cache folder is opened for every vault and the index, and a
    writer killed after this process started is cleaned by the next start.
    """
    key = os.fspath(folder)
    with _swept_lock:
        if key in _swept:
            return []
        _swept.add(key)
    return sweep_stale_temps(folder)


__all__ = ["process_token", "sweep_once", "sweep_stale_temps", "temp_path", "writer_gone"]
