"""A registry of memlens's own recent writes, so the watcher does not echo them.

It sits in `write/`, below `scan/`: the writes record into it and the watcher
(`scan/watch.py`, a layer up) only reads it, so `write/` needs nothing of `scan/`.

`write.writes` notes every file it replaces or moves (with the hash of the
bytes it put there) just before the change lands on disk.  When the watcher
later sees that file change, it asks `is_own_write(path, current_sha)`: if the
file still holds exactly what memlens wrote, the change is memlens's own and
the app gets no "changed on disk" notice (the catalog still updates).

Why a content hash and not just the path: an agent may write the same file a
moment after memlens did; its bytes differ, so its change is still reported.

The registry is per process (the app and its watcher share one) and entries
expire after `TTL` seconds, which is far longer than any watcher delay.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

#: Seconds an entry is kept.
TTL = 60.0
#: Entries kept at most (oldest dropped first); a bulk action writes many files.
MAX_ENTRIES = 100_000

_lock = threading.Lock()
#: normalised path -> (sha256 of the bytes memlens left there or None if
#: memlens moved the file away, monotonic time of the note).
_entries: dict[str, tuple[str | None, float]] = {}


def _key(path: Path | str) -> str:
    # realpath: the watcher reports paths below the (resolved) vault roots,
    # writers may hold a path through a symlinked parent.
    return os.path.realpath(os.fspath(path))


def _expire(now: float) -> None:
    if len(_entries) <= MAX_ENTRIES:
        # Cheap path: drop expired entries from the front (dicts keep order).
        while _entries:
            first = next(iter(_entries))
            if now - _entries[first][1] <= TTL:
                break
            del _entries[first]
        return
    for key in list(_entries)[: len(_entries) - MAX_ENTRIES]:
        del _entries[key]


def note_write(
    path: Path | str, sha256: str | None, *, moved_from: Path | str | None = None
) -> None:
    """Record that memlens is about to leave `sha256` at `path`.

    `sha256` None means memlens removed the file from `path`.  `moved_from`
    records a move in the same call: the source is noted as gone.
    """
    pairs: list[tuple[str, str | None]] = []
    if moved_from is not None:
        pairs.append((_key(moved_from), None))
    pairs.append((_key(path), sha256))
    now = time.monotonic()
    with _lock:
        for key, value in pairs:
            _entries.pop(key, None)  # re-insert at the end: dict order is age order
            _entries[key] = (value, now)
        _expire(now)


def expecting(path: Path | str) -> bool:
    """True if memlens wrote or moved `path` recently (worth hashing the file)."""
    now = time.monotonic()
    with _lock:
        entry = _entries.get(_key(path))
        return entry is not None and now - entry[1] <= TTL


def is_own_write(path: Path | str, current_sha: str | None) -> bool:
    """True if `path` holds what memlens last left there (None: it is absent)."""
    now = time.monotonic()
    with _lock:
        entry = _entries.get(_key(path))
        return entry is not None and now - entry[1] <= TTL and entry[0] == current_sha


def clear() -> None:
    """Forget every entry (tests)."""
    with _lock:
        _entries.clear()
