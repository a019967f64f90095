"""The persisted index's `meta` table: blobs by name, the big ones zstd-packed.

Apart from `persisted_rows` (which needs numpy) so that a caller reading
only the meta (`fresh_check`: one memory for `memlens show`) imports
nothing heavy.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from ..store import blobs

Meta = dict[str, bytes]

#: Meta values kept packed (`core.store.blobs`): the row-sized columns, postings and
#: id lists, most of them small integers or repeated values (23 MB -> a few
#: at 100k memories).  Not the norms (random floats: nothing to gain) nor the
#: small scalars compared as stored (`generation`, `code`).
_PACKED = ("col:", "words:", "tags:", "slot_", "place", "codes", "vault_names", "vaults")
#: What only an update reads (a search leaves these on disk).
UPDATE_ONLY = ("slot_words:", "slot_tags:", "lexwords")


def pack_meta(meta: Meta) -> list[tuple[str, bytes]]:
    """Meta items as stored: the big ones packed (see `_PACKED`)."""
    return [
        (key, blobs.pack(value) if key.startswith(_PACKED) else value)
        for key, value in meta.items()
    ]


def unpack_meta(rows: Iterable[tuple[str, bytes]]) -> Meta:
    """Meta rows as read back into their values (`blobs.BlobCorrupt` on a damaged one)."""
    return {
        key: blobs.unpack(value) if key.startswith(_PACKED) else bytes(value) for key, value in rows
    }


#: What tells whether an index is this code's, for this date and these vaults: read
#: first, alone (`fresh_check.begin_check` starts its stat walk right after).
HEAD_KEYS = ("code", "as_of", "vaults")


def read_meta(
    conn: sqlite3.Connection, *, for_update: bool, keys: Iterable[str] | None = None
) -> Meta:
    """The meta table; without what only an update needs unless `for_update`.

    `keys`: only those (the ones the table has).  What is left out is not read at all.
    """
    if keys is None:
        names = [str(k) for (k,) in conn.execute("SELECT key FROM meta")]
        wanted = names if for_update else [k for k in names if not k.startswith(UPDATE_ONLY)]
    else:
        wanted = list(keys)
    rows: list[tuple[str, bytes]] = []
    for i in range(0, len(wanted), 500):  # SQLite's limit on variables is 999+
        chunk = wanted[i : i + 500]
        marks = ",".join("?" * len(chunk))
        rows += conn.execute(f"SELECT key, value FROM meta WHERE key IN ({marks})", chunk)
    return unpack_meta(rows)


__all__ = ["HEAD_KEYS", "UPDATE_ONLY", "Meta", "pack_meta", "read_meta", "unpack_meta"]
