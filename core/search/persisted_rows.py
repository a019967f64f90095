"""The persisted index's data both ways: blobs of columns and postings, term rows, norms.

`core.search.persisted` decides when to load, update or build; this module
turns an index's state into the blobs and rows it saves and back, and
holds the two whole passes of an update (norms from every count, title
words and tags recounted in catalog order).  Every number goes through the
functions every index uses (`weights.sublinear_tf`, `idf_of`, `weigh_pairs`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..model import Memory
from .aliases import FloatArray, IntArray, Key
from .analysis import SINGLE, texts
from .columns import Codes, Columns
from .fit import Counted
from .persisted_meta import Meta
from .postings import Postings, TitleWords
from .stored_terms import decode_counts, decode_rows, encode_counts, encode_rows
from .title_slots import SlotWords, heads
from .weights import idf_of, sublinear_tf, weigh_pairs

if TYPE_CHECKING:
    from ..scan.vault import Catalog, Vault
    from .index import SearchIndex

#: `Columns.all()` order.
COLUMN_NAMES = (
    "alive",
    "fmt",
    "kind",
    "vault",
    "agent",
    "health",
    "status",
    "source",
    "created",
    "importance",
    "conf",
    "weight",
    "score",
)
CODE_NAMES = ("fmt", "kind", "vault", "agent", "status", "source")


def _codes(columns: Columns) -> list[Codes]:
    c = columns
    return [c.fmt_codes, c.kind_codes, c.vault_codes, c.agent_codes, c.status_codes, c.source_codes]


def columns_meta(index: SearchIndex) -> Meta:
    """The per-row columns, their code tables, `as_of` and the dead count."""
    columns = index.state.columns
    out: Meta = {
        f"col:{name}": col.view.tobytes()
        for name, col in zip(COLUMN_NAMES, columns.all(), strict=True)
    }
    out["codes"] = json.dumps([c.values for c in _codes(columns)]).encode()
    out["vault_names"] = json.dumps({k: list(v) for k, v in columns.vault_names.items()}).encode()
    out["as_of"] = index.state.as_of.isoformat().encode()
    out["dead"] = str(index.state.dead).encode()
    return out


def _postings_meta(name: str, postings: Postings) -> Meta:
    keys, flat, bounds = postings.__getstate__()
    return {
        f"{name}:keys": json.dumps(keys).encode(),
        f"{name}:flat": np.asarray(flat, dtype=np.int32).tobytes(),
        f"{name}:bounds": np.asarray(bounds, dtype=np.int64).tobytes(),
    }


def state_meta(index: SearchIndex, vaults: list[Vault], norms: FloatArray) -> Meta:
    """Every row-sized blob of an index (columns, postings, slots, norms)."""
    out = columns_meta(index)
    out.update(_postings_meta("words", index.state.words.rows))
    out.update(_postings_meta("tags", index.state.tags))
    number = {str(v.root): i for i, v in enumerate(vaults)}
    alive = index.state.columns.alive.view
    slot_vault = np.array(
        [
            number.get(str(m.vault_root), -1) if ok else -1
            for m, ok in zip(index._memories, alive.tolist(), strict=True)
        ],
        dtype=np.int32,
    )
    out["slot_vault"] = slot_vault.tobytes()
    out["slot_ids"] = json.dumps([m.id for m in index._memories]).encode()
    out["norms"] = norms.tobytes()
    # Every row's rank by place (ties of equal scores), so a search never
    # needs every memory to order a large tie.
    index._place_ranks = None
    out["place"] = index._place_rank().astype(np.int64).tobytes()
    return out


def _restore_postings(meta: Meta, name: str) -> tuple[list[str], IntArray, IntArray]:
    keys: list[str] = json.loads(meta[f"{name}:keys"])
    flat = np.frombuffer(meta[f"{name}:flat"], dtype=np.int32)
    bounds = np.frombuffer(meta[f"{name}:bounds"], dtype=np.int64)
    return keys, flat, bounds


def restore(meta: Meta, catalog: Catalog) -> tuple[SearchIndex, FloatArray]:
    """An index from the saved blobs, its slots bound to the catalog's memories; the norms."""
    index, norms = restore_state(meta)
    slot_vault = np.frombuffer(meta["slot_vault"], dtype=np.int32)
    _bind(index, catalog, slot_vault, json.loads(meta["slot_ids"]))
    return index, norms


def restore_state(meta: Meta) -> tuple[SearchIndex, FloatArray]:
    """An index from the saved blobs without its memories (no rows bound yet); the norms."""
    from .index import SearchIndex

    index = SearchIndex(date.fromisoformat(meta["as_of"].decode()))
    state = index.state
    for name, col in zip(COLUMN_NAMES, state.columns.all(), strict=True):
        col.data = np.frombuffer(meta[f"col:{name}"], dtype=col.data.dtype).copy()
        col.size = len(col.data)
    for codes, values in zip(_codes(state.columns), json.loads(meta["codes"]), strict=True):
        codes.values = list(values)
        codes.code = {v: i for i, v in enumerate(values)}
    names = json.loads(meta["vault_names"])
    state.columns.vault_names = {k: tuple(v) for k, v in names.items()}
    state.words.pack(*_restore_postings(meta, "words"))
    state.tags.pack(*_restore_postings(meta, "tags"))
    state.dead = int(meta["dead"])
    return index, np.frombuffer(meta["norms"], dtype=np.float64)


def _bind(index: SearchIndex, catalog: Catalog, slot_vault: IntArray, slot_ids: list[str]) -> None:
    """Each slot's memory (by vault and id); a slot whose memory is gone keeps a placeholder."""
    vaults = catalog.vaults
    lookups = [{m.id: m for m in v.memories} for v in vaults]
    memories: list[Memory] = []
    row_of: dict[Key, int] = {}
    for slot, (number, mem_id) in enumerate(zip(slot_vault.tolist(), slot_ids, strict=True)):
        m = lookups[number].get(mem_id) if number >= 0 else None
        if m is None:
            root = str(vaults[number].root) if number >= 0 else ""
            m = Memory(
                format="", vault_root=Path(root), id=mem_id, kind="", title="", body="", path=""
            )
        if number >= 0:  # a live slot (dead ones are saved with -1)
            row_of[(str(vaults[number].root), mem_id)] = slot
        memories.append(m)
    index._memories = memories
    index._row_of = row_of


def stale_and_new(
    index: SearchIndex, catalog: Catalog, changes: list[set[str]]
) -> tuple[list[Key], list[Memory]]:
    """Keys whose slot must die (gone or in a changed file) and memories that need a new slot."""
    if not any(changes):
        return [], []
    current: dict[Key, Memory] = {}
    for m in catalog.memories():
        current[m.key] = m
    row_of = index._row_of
    changed: set[Key] = set()
    for v, paths in zip(catalog.vaults, changes, strict=True):
        if paths:
            changed.update(m.key for m in v.memories if m.path in paths)
    stale = [k for k in row_of if k not in current or k in changed]
    new = [m for k, m in current.items() if k not in row_of or k in changed]
    return stale, new


def term_records(
    terms: list[str], indptr: IntArray, rows: IntArray, counts: IntArray
) -> Iterator[tuple[str, int, bytes, bytes]]:
    """(term, df, rows blob, counts blob) per term of a fit."""
    bounds = indptr.tolist()
    for i, term in enumerate(terms):
        lo, hi = bounds[i], bounds[i + 1]
        yield term, hi - lo, encode_rows(rows[lo:hi]), encode_counts(counts[lo:hi])


def _norms(
    term: IntArray, rows: IntArray, counts: IntArray, df: IntArray, n_docs: int, n_slots: int
) -> FloatArray:
    weights = sublinear_tf(counts)
    return weigh_pairs(term, rows, weights, idf_of(df.astype(np.int64), n_docs), n_slots)


def _count_new(new: list[Memory], first: int) -> dict[str, tuple[IntArray, IntArray]]:
    """Term -> (slots, counts) of the new documents (slots from `first`, ascending)."""
    counted = Counted()
    singles = len(list(map(counted.term_of, SINGLE)))
    counted.count(texts(new))
    vocab = list(counted.term_id)
    tids = np.frombuffer(counted.terms, dtype=np.int32)
    counts = np.frombuffer(counted.counts, dtype=np.int32)
    slots = np.repeat(
        np.arange(first, first + len(new), dtype=np.int32),
        np.frombuffer(counted.doc_len, dtype=np.int32),
    )
    order = np.argsort(tids, kind="stable")  # slots stay ascending within a term
    tids, counts, slots = tids[order], counts[order], slots[order]
    cuts = np.flatnonzero(np.diff(tids)) + 1
    out: dict[str, tuple[IntArray, IntArray]] = {}
    starts = [0, *cuts.tolist()]
    for start, t_slots, t_counts in zip(
        starts, np.split(slots, cuts), np.split(counts, cuts), strict=True
    ):
        tid = int(tids[start]) if len(tids) else -1
        if tid >= singles:
            out[vocab[tid]] = (t_slots, t_counts)
    return out


def _read_terms(conn: sqlite3.Connection) -> tuple[list[str], IntArray, IntArray, IntArray]:
    """Every term row, sorted by term: (terms, df, all slots, all counts) concatenated."""
    terms: list[str] = []
    dfs: list[int] = []
    slot_parts: list[IntArray] = []
    count_parts: list[IntArray] = []
    for term, df, rows, counts in conn.execute(
        "SELECT term, df, rows, counts FROM terms ORDER BY term"
    ):
        terms.append(term)
        dfs.append(df)
        slot_parts.append(decode_rows(rows))
        count_parts.append(decode_counts(counts, df))
    empty = np.zeros(0, dtype=np.int32)
    all_slots = np.concatenate(slot_parts) if slot_parts else empty
    all_counts = np.concatenate(count_parts) if count_parts else empty
    return terms, np.asarray(dfs, dtype=np.int64), all_slots, all_counts


def update_terms(
    conn: sqlite3.Connection, index: SearchIndex, new: list[Memory], first: int
) -> FloatArray:
    """Rewrite the term rows that dead or new slots touch; every slot's new norm.

    Runs inside the caller's transaction.  The whole pass: all counts are
    read once, to find the rows of dead slots and to sum the norms in term
    order (every idf moved with the document count).
    """
    added = _count_new(new, first)
    terms, dfs, slots, counts = _read_terms(conn)
    alive = index.state.columns.alive.view
    bounds = np.zeros(len(terms) + 1, dtype=np.int64)
    np.cumsum(dfs, out=bounds[1:])
    keep = alive[slots]
    touched = set(np.unique(np.repeat(np.arange(len(terms)), dfs)[~keep]).tolist())
    position = {t: i for i, t in enumerate(terms)}
    merged = sorted(position.keys() | added.keys())
    parts_s: list[IntArray] = []
    parts_c: list[IntArray] = []
    out_df: list[int] = []
    writes: list[tuple[str, int, bytes, bytes]] = []
    gone: list[tuple[str]] = []
    for term in merged:
        i = position.get(term)
        if i is not None and i not in touched and term not in added:
            lo, hi = int(bounds[i]), int(bounds[i + 1])
            t_slots, t_counts = slots[lo:hi], counts[lo:hi]
        else:
            t_slots, t_counts = _merged_row(i, bounds, slots, counts, keep, added.get(term))
            if not len(t_slots):
                gone.append((term,))
                continue
            writes.append((term, len(t_slots), encode_rows(t_slots), encode_counts(t_counts)))
        parts_s.append(t_slots)
        parts_c.append(t_counts)
        out_df.append(len(t_slots))
    conn.executemany("DELETE FROM terms WHERE term = ?", gone)
    conn.executemany(
        "INSERT OR REPLACE INTO terms (term, df, rows, counts) VALUES (?, ?, ?, ?)", writes
    )
    df = np.asarray(out_df, dtype=np.int64)
    term_of = np.repeat(np.arange(len(df), dtype=np.int32), df)
    all_s = np.concatenate(parts_s) if parts_s else np.zeros(0, np.int32)
    all_c = np.concatenate(parts_c) if parts_c else np.zeros(0, np.int32)
    return _norms(term_of, all_s, all_c, df, len(index._row_of), len(alive))


def _merged_row(
    i: int | None,
    bounds: IntArray,
    slots: IntArray,
    counts: IntArray,
    keep: IntArray,
    added: tuple[IntArray, IntArray] | None,
) -> tuple[IntArray, IntArray]:
    """A touched term's live old slots, then its new ones (all new slots are higher)."""
    s_parts: list[IntArray] = []
    c_parts: list[IntArray] = []
    if i is not None:
        lo, hi = int(bounds[i]), int(bounds[i + 1])
        k = keep[lo:hi]
        s_parts.append(slots[lo:hi][k])
        c_parts.append(counts[lo:hi][k])
    if added is not None:
        s_parts.append(added[0])
        c_parts.append(added[1])
    return (
        np.concatenate(s_parts).astype(np.int32),
        np.concatenate(c_parts).astype(np.int32),
    )


def retitle(index: SearchIndex, catalog: Catalog, meta: Meta, first: int) -> Meta:
    """Title words and tags renumbered as a fit over the catalog would; their new blobs.

    Only the new slots' (from `first`) titles are analysed (`title_slots`).
    """
    words = SlotWords.from_meta(meta, "slot_words")
    tags = SlotWords.from_meta(meta, "slot_tags")
    added = [heads(m) for m in index._memories[first:]]
    words.extend(w for w, _t in added)
    tags.extend(t for _w, t in added)
    docs: dict[Key, Memory] = {}
    for m in catalog.memories():
        docs[m.key] = m
    row_of = index._row_of
    order = np.fromiter((row_of[k] for k in docs), dtype=np.int64, count=len(docs))
    index.state.words = TitleWords()
    index.state.words.pack(*words.postings(order))
    index.state.tags = Postings()
    index.state.tags.pack(*tags.postings(order))
    return {**words.to_meta("slot_words"), **tags.to_meta("slot_tags")}


def slot_words_meta(memories: list[Memory]) -> Meta:
    """The title words and tags of every slot of a build (`title_slots`)."""
    words, tags = SlotWords(), SlotWords()
    added = [heads(m) for m in memories]
    words.extend(w for w, _t in added)
    tags.extend(t for _w, t in added)
    return {**words.to_meta("slot_words"), **tags.to_meta("slot_tags")}
