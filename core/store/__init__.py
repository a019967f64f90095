"""The persistent per-vault store shared by the app and the CLI (SQLite, in the user cache folder).

`db`: where the file lives and how it is opened and checked; `stamps`: the
file stamps that say a row is current; `codec`: rows as blobs (bodies left
out); `bodies`: bodies read back from the memory files on first use;
`files`: one vault's store and its file rows; `reader`: a store opened
read-only for single rows (what a search index refers to); `statwalk`: the
stamps of many files at once (relative to their folder, in two processes
when a CPU is idle); `blobs`: big cache blobs as checked zstd frames;
`pack`: every file's scan in one stream, decoded at once by a warm start.
"""

from __future__ import annotations

from .db import CACHE_DIR_ENV, StoreCorrupt, cache_dir, store_path
from .files import Entries, Opened, Row, RowLoader, VaultStore, open_store
from .stamps import FileStamp

__all__ = [
    "CACHE_DIR_ENV",
    "Entries",
    "FileStamp",
    "Opened",
    "Row",
    "RowLoader",
    "StoreCorrupt",
    "VaultStore",
    "cache_dir",
    "open_store",
    "store_path",
]
