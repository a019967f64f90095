"""What a scan reports as it goes (`ScanProgress`), how it used the store
(`CacheStats`), and the collector pause for building long-lived objects."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..formats.files import Listing
from ..model import FileScan, Memory, ScanResult
from ..store import (
    FileStamp,
)


@dataclass(slots=True)
class CacheStats:
    """How one vault scan used the cache.  Timings are seconds."""

    #: The cache file (None when the cache is off).
    path: Path | None = None
    #: "off", "cold" (no cache file yet), "warm" (entries used) or "discarded".
    status: str = "off"
    #: Why a cache file was not used or not saved.
    reason: str | None = None
    files: int = 0
    reused: int = 0
    parsed: int = 0
    #: Cached entries whose file is gone.
    dropped: int = 0
    #: Racy entries re-read and found unchanged.
    verified: int = 0
    #: Files parsed by worker processes.
    parallel: int = 0
    #: Stored rows the store's pack served (`core.store.pack`).
    packed: int = 0
    saved: bool = False
    load_s: float = 0.0
    walk_s: float = 0.0
    parse_s: float = 0.0
    link_s: float = 0.0
    save_s: float = 0.0


@dataclass(slots=True)
class ScanProgress:
    """One step of a progressive scan.

    `memories` are the new ones since the last step, read but not linked yet
    (no duplicate check or resolved references: good for showing first
    rows).  The last step has `done` set and carries the linked `result`.
    """

    memories: list[Memory]
    files_done: int
    #: The vault's files once it is listed (a cold start's first step, before
    #: the listing, counts its own few: `cache.PEEK`).
    files_total: int
    done: bool = False
    result: ScanResult | None = None
    scans: dict[str, FileScan] = field(default_factory=dict)
    stamps: dict[str, FileStamp] = field(default_factory=dict)
    stats: CacheStats = field(default_factory=CacheStats)
    #: The done step's listing of the vault (names and the folders it looked at).
    listing: Listing | None = None


# --------------------------------------------------------------------------- garbage collector


@contextlib.contextmanager
def quiet_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building long-lived objects, then freeze them.

    Why: a scan creates millions of small objects (memories, their field
    dicts, relations) that live as long as the catalog.  With the collector
    on, every few thousand allocations trigger a pass, and the first passes
    after a big load walk all of them: at 100k memories that cost seconds.
    Frozen objects (`gc.freeze`) are skipped by every later pass.  They are
    still freed by reference counting; only garbage *cycles* created before
    the freeze would linger, and scan results hold none.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
