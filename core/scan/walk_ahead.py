"""The warm start's stat walk, done ahead in a second process.

A warm start spends most of its time in two things that do not depend on
each other: unpickling each vault's scan cache (Python objects, holding the
GIL) and the stat walk that decides which cached files are still valid
(about 60k system calls at 100k memories).  A thread cannot overlap them
(the unpickling never lets go of the GIL for long), but a second process
can: ``python -m memlens.core.scan.walk_ahead`` lists and stats every vault,
in the order the vaults will be scanned, while this process loads caches.

The result is exactly what `cache.scan_files` would have found by walking
itself: the adapter's `file_listing` and one ``(size, mtime_ns, ctime_ns,
inode)`` per listed file (None when the stat failed).  Anything that goes
wrong in the helper (it dies, answers garbage, is slow to start) only means
`take` returns None and the scan walks by itself, as without it.

Protocol (pipes between our own processes, `core.workers` framing): the
request is the pickled list of ``(root, format_id)``; each answer is the
pickled ``(root, Listing, stats)`` of one vault, in request order.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from .. import workers
from ..formats import adapter_for
from ..formats.files import Listing, recorded_listing
from ..workers import read_message, write_message

#: One file's stat as the cache compares it: size, mtime_ns, ctime_ns, inode.
StatKey = tuple[int, int, int, int]
Walk = tuple[Listing, list[StatKey | None]]

#: Environment variable that turns the helper off ("0"), like the parse workers.
ENV = "MEMLENS_WALK_AHEAD"
#: Scan caches smaller than this in total are not worth a process (~2k memories).
MIN_CACHE_BYTES = 2_000_000


def stat_keys(root: str, names: Sequence[str]) -> list[StatKey | None]:
    """The stat key of each vault-relative file (None where stat fails)."""
    out: list[StatKey | None] = []
    add, stat = out.append, os.stat
    base = root + os.sep
    for rel in names:
        try:
            st = stat(base + rel)
        except OSError:
            add(None)
            continue
        add((st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
    return out


def walk_vault(root: str, format_id: str) -> Walk:
    """What `cache.scan_files` walks for one vault: its listing and stat keys."""
    listing = recorded_listing(adapter_for(format_id).file_listing, Path(root))
    return listing, stat_keys(root, listing.names)


class WalkAhead:
    """A helper process walking the vaults ahead of their scans.

    `take(root)` returns that vault's walk (waiting for it if needed), or
    None if the helper cannot give it; `close` ends the helper.  Use it from
    one thread, taking the vaults in the order they were given.
    """

    def __init__(self, jobs: list[tuple[str, str]]) -> None:
        self._pending = [root for root, _fmt in jobs]
        self._got: dict[str, Walk] = {}
        self._failed = False
        self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
            [sys.executable, "-m", f"{__package__}.walk_ahead"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            close_fds=True,
        )
        try:
            assert self._proc.stdin is not None
            write_message(self._proc.stdin, pickle.dumps(jobs, protocol=pickle.HIGHEST_PROTOCOL))
            self._proc.stdin.close()
        except OSError:
            self._failed = True

    def take(self, root: Path | str) -> Walk | None:
        """The walk of `root`, or None (walk it yourself)."""
        key = str(root)
        got = self._got.pop(key, None)
        if got is not None:
            return got
        if key not in self._pending:
            return None
        while not self._failed and self._pending:
            answer = self._receive()
            if answer is None:
                self._failed = True
                break
            done, walk = answer
            self._pending.remove(done)
            if done == key:
                return walk
            self._got[done] = walk
        return None

    def _receive(self) -> tuple[str, Walk] | None:
        proc = self._proc
        if proc is None or proc.stdout is None:
            return None
        try:
            body = read_message(proc.stdout)
            if body is None:
                return None
            root, listing, stats = pickle.loads(body)
        except Exception:  # a helper that answers garbage is simply not used
            return None
        if not (
            isinstance(root, str)
            and isinstance(listing, Listing)
            and isinstance(stats, list)
            and len(stats) == len(listing.names)
        ):
            return None
        return root, (listing, stats)

    def close(self) -> None:
        """Stop the helper (at once if it is still walking) and drop what is left."""
        proc, self._proc = self._proc, None
        self._failed = True
        self._got.clear()
        if proc is None:
            return
        if proc.poll() is None:
            proc.kill()
        with contextlib.suppress(Exception):
            proc.wait(timeout=2)
        with contextlib.suppress(OSError):
            if proc.stdout is not None:
                proc.stdout.close()

    def __enter__(self) -> WalkAhead:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def walk_ahead(
    vaults: Sequence[tuple[Path, str]], *, cache: bool, force: bool | None = None
) -> WalkAhead | None:
    """Start walking `vaults` ((root, format_id), in scan order) ahead, when it pays.

    It pays on a warm start (`cache` on and scan caches of at least
    MIN_CACHE_BYTES in all) with a CPU to spare (see `workers.spare_cpu`).
    `force` True/False overrides the decision (tests); ``MEMLENS_WALK_AHEAD=0``
    turns it off.
    """
    # Deferred on purpose: the helper process (`serve`) never needs the cache.
    from . import cache as scan_cache

    if force is None:
        if not cache or not vaults or os.environ.get(ENV, "1") == "0":
            return None
        if not workers.spare_cpu():
            return None
        total = 0
        for root, _fmt in vaults:
            with contextlib.suppress(OSError):
                total += scan_cache.cache_path(root).stat().st_size
        if total < MIN_CACHE_BYTES:
            return None
    elif not force:
        return None
    try:
        return WalkAhead([(str(root), fmt) for root, fmt in vaults])
    except OSError:
        return None


def serve(stdin: IO[bytes], stdout: IO[bytes]) -> None:
    """The helper: read the vault list, answer one walk per vault, in order."""
    message = read_message(stdin)
    if message is None:
        return
    jobs: list[tuple[str, str]] = pickle.loads(message)
    for root, format_id in jobs:
        try:
            walk = walk_vault(root, format_id)
        except Exception:
            return  # the caller walks this vault (and the rest) itself
        write_message(stdout, pickle.dumps((root, *walk), protocol=pickle.HIGHEST_PROTOCOL))


if __name__ == "__main__":  # pragma: no cover - runs in the helper process
    serve(sys.stdin.buffer, sys.stdout.buffer)
