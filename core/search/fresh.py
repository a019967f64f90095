"""Search without opening the catalog, when no file changed since the index was saved.

Opening the catalog decodes every stored row and links every vault (4 s at
100k memories): a search needs none of that when nothing changed.  So a
search first asks, per vault, only what is cheap: the index's manifest of
the files it was made from (`persisted_files`) and a stat walk of the
vault's files as the adapter lists them (`core.store.statwalk`, in two
processes for a large vault), compared byte for byte.  When every vault is
unchanged, the index is served from its file (`persisted`) with its rows'
memories decoded on demand (`stored_memories`); anything else (a changed,
new, gone or racy file, a new `as_of`, an index that does not check out)
returns None and the caller opens the catalog, which updates the index.
The answer is the same either way: the same index, the same memories as
linked.  The vault stores are not opened at all.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, cast

import numpy as np

from ..model import Memory
from ..store.db import StoreCorrupt
from .fresh_check import Checked, begin, read_only, stored_memories, unchanged
from .persisted_rows import restore_state
from .persisted_vectors import VectorFile
from .stored_lexical import load_lexical
from .stored_terms import StoredTerms

if TYPE_CHECKING:
    from datetime import date

    from ..scan.vault import Vault
    from .aliases import IntArray, RowSegment
    from .index import SearchIndex


def open_fresh(vaults: list[Vault], as_of: date) -> SearchIndex | None:
    """The persisted index of these vaults if no file changed since it was saved, else None.

    The index is for searching only (its memories load on demand; it is
    not updated).  None costs a stat walk: the caller opens the catalog.
    """
    checked = begin(vaults, as_of)  # (its stat walks end in `confirm`)
    if checked is None:
        return None
    if not checked.confirm():
        checked.conn.close()
        return None
    return serve(checked)


def serve(checked: Checked) -> SearchIndex | None:
    """The index `checked` found, loaded; maybe before `checked.confirm()` (then only
    its answer decides whether a query's result stands).  None: it does not load
    (its connection is closed then)."""
    try:
        index = _fresh(checked)
    except (sqlite3.Error, OSError, ValueError, KeyError, StoreCorrupt):
        index = None
    if index is None:
        checked.close()
        checked.conn.close()
    return index


def _fresh(checked: Checked) -> SearchIndex | None:
    conn, meta, manifests = checked.conn, checked.load_meta(), checked.manifests
    vaults, path = checked.vaults, checked.path
    if path is None:
        return None
    index, norms = restore_state(meta)
    slot_array = np.frombuffer(meta["slot_vault"], dtype=np.int32)
    memories, slot_ids = stored_memories(conn, vaults, meta, manifests)
    roots = [v.root for v in vaults]
    # Read-only use: nothing appends to a fresh index's rows.
    index._memories = cast("list[Memory]", memories)
    index._defer_rows(_segments(slot_array, slot_ids, [str(r) for r in roots]))
    index._place_ranks = np.frombuffer(meta["place"], dtype=np.int64)
    # The live rows, counted without building the key map.
    index.state.terms = StoredTerms(conn, int(np.count_nonzero(slot_array >= 0)), norms)
    index._lexical = load_lexical(conn, len(slot_ids))
    index.vector_file = VectorFile(path, conn, meta["generation"])
    return index


def _segments(slot_vault: IntArray, slot_ids: list[str], roots: list[str]) -> list[RowSegment]:
    """Runs of consecutive live slots of one vault, as the index defers its key map."""
    if not len(slot_vault):
        return []
    cuts = np.flatnonzero(np.diff(slot_vault)) + 1
    starts = [0, *cuts.tolist()]
    ends = [*cuts.tolist(), len(slot_vault)]
    return [
        (roots[number], slot_ids[lo:hi], lo)
        for lo, hi in zip(starts, ends, strict=True)
        if (number := int(slot_vault[lo])) >= 0
    ]


__all__ = ["begin", "open_fresh", "read_only", "serve", "unchanged"]
