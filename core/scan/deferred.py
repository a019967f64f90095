"""A catalog read now, its stores written later: for a command whose own work can overlap the write.

`open_catalog` returns once every vault's store is written.  A command
that next waits on something else (`memlens history` waits on `git log`
and `git cat-file`, another process) can write the stores meanwhile:
on a cold store at a few hundred files the write is about a third of the
load (0.17 of 0.45 s).  The catalog is complete and linked when
`open_catalog_unsaved` returns; only the store rows are still to be written.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

from ..errors import MemlensError
from .progress import ScanProgress
from .vault import Catalog, scan_progressive, start_walk_ahead, survey_all


def open_catalog_unsaved(
    *paths: Path | str, cache: bool = False
) -> tuple[Catalog, Callable[[], None]]:
    """Every vault below the paths, scanned and linked, and the call that writes their stores.

    Call the second once, from any one thread (the app's or a worker's),
    after or while the catalog is used; not calling it leaves the stores as
    they were (the next run reads the changed files again).  It never
    raises: a store that cannot be written is a cache not kept.
    """
    found = survey_all(*paths)
    stack = contextlib.ExitStack()
    ahead = start_walk_ahead(found.vaults, cache=cache)
    if ahead is not None:
        stack.callback(ahead.close)
    rests: list[Iterator[ScanProgress]] = []
    try:
        for v in found.vaults:
            steps = scan_progressive(v, batch=None, cache=cache, ahead=ahead)
            for step in steps:
                if step.done:
                    break
            rests.append(steps)
    except BaseException:
        stack.close()
        raise

    def save() -> None:
        with stack:
            for steps in rests:
                with contextlib.suppress(MemlensError, OSError, sqlite3.Error):
                    for _ in steps:
                        pass

    return Catalog(found.vaults, found.unreadable), save


__all__ = ["open_catalog_unsaved"]
