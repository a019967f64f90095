"""The search index persisted in SQLite, read per term and updated per changed file.

One SQLite file per set of vaults (the paths a user opened; idf is over
all of them, so a per-vault file could not keep scores exact) in the cache
folder.  What it holds, and why in that shape:

- ``terms``: one row per term: its document frequency, the rows holding
  it (as gaps) and the raw counts there, each packed as the narrowest
  integers that fit, zstd-packed (`stored_terms`).  Raw counts,
  not weights: a weight depends on idf, which every added or removed
  document changes, and on the row's norm; counts never change for an
  unchanged document.  A query reads its own terms' rows only
  (`stored_terms.StoredTerms`).
- ``meta``: everything sized by rows, one blob each: the filter/score
  columns, the title-word and tag postings, the row norms, which memory
  each row is (vault number and id), the vaults' file digests, most of
  them zstd-packed (`persisted_meta.pack_meta`: 23 -> 8 MB at 100k
  memories), read by every search but the blobs only an update needs.
- ``memories``: each row's memory as linked, for a search served without
  the catalog (`fresh`): a reference to its vault store's row when its
  file holds only it (17 bytes, `stored_refs`), else a compressed copy.
- ``manifest``: per vault, which files as which bytes the index was made
  from (paths, stat stamps, sha256 prefixes, packed: `persisted_files`).
  A search stats the vault's files and compares them with it; the sha256s
  tell which files changed when a vault's digest no longer matches.

Scores equal a fresh build's bit for bit: a term's weights are computed
from its counts, its idf and the rows' norms as every index makes them
(`weights.term_weights`, `weights.idf_of`, `weights.weigh_pairs`), and every norm is
summed in sorted term order as the fit sums it.  Rows are slots that never
move: a changed memory's old slot is masked dead and it gets a new one, so
an update rewrites only the term rows its documents touch; ties are ordered
by the memory's place, not its row, so slots do not show in the output.
After a change every norm is recomputed from all counts (a new document
count changes every idf): the one whole pass of an update.  Title words
and tags are recounted from the memories (titles and tags only, no
bodies) in catalog order, so fuzzy ties break as in a fresh build.  Once
a tenth of the slots are dead, or a tenth of the memories changed, the
index is rebuilt.  Decay columns follow `as_of`: a new date recomputes them
for every memory (adapter calls, no file reads) and saves them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..model import Memory
from ..scan.progress import quiet_gc
from ..store.db import connect, private_dir, remove_files, untrusted
from ..store.stamps import FileStamp
from . import persisted_files as files_io
from . import persisted_meta as meta_io
from . import persisted_rows as rows_io
from . import persisted_vectors as vectors_io
from . import stored_lexical as lexical_io
from .persisted_name import index_path, persisted_code
from .stored_memories import affected, memory_blobs, zdict_of
from .stored_refs import StoreRefs, parse_ref
from .stored_terms import StoredTerms

if TYPE_CHECKING:
    from ..scan.vault import Catalog, Vault
    from .index import SearchIndex

#: Above this share of changed memories (or dead slots) a rebuild is cheaper.
REBUILD_FRACTION = 0.1

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS terms (id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE,"
    " df INTEGER NOT NULL, rows BLOB NOT NULL, counts BLOB NOT NULL)",
    files_io.SCHEMA,
    files_io.FOLDERS_SCHEMA,
    "CREATE TABLE IF NOT EXISTS memories (slot INTEGER PRIMARY KEY, blob BLOB NOT NULL)",
    lexical_io.SCHEMA,
    vectors_io.SCHEMA,
)
_TABLES = ("meta", "terms", "files", "manifest", "listed_folders", "memories", "lex", "vecs")


@dataclass(slots=True)
class PersistedStats:
    """How the index was obtained.  Timings are seconds."""

    path: Path | None = None
    #: "loaded" (maybe updated), "built", or "rebuilt" (the file was unusable or too stale).
    status: str = "built"
    reason: str | None = None
    updated: int = 0
    removed: int = 0
    added: int = 0
    load_s: float = 0.0
    update_s: float = 0.0
    build_s: float = 0.0
    save_s: float = 0.0


def files_digest(stamps: Mapping[str, FileStamp]) -> str:
    """One hash of every file's path and sha256 (an unchanged vault: the same digest)."""
    return pairs_digest(sorted((path_key(rel), stamp.sha256) for rel, stamp in stamps.items()))


def path_key(rel: str) -> bytes:
    """A vault-relative path as bytes (a file name need not be UTF-8)."""
    return rel.encode("utf-8", "surrogateescape")


def _stored_files(conn: sqlite3.Connection, number: int) -> dict[str, bytes]:
    """rel -> sha256 prefix of one vault's files as indexed."""
    manifest = files_io.read(conn, number)
    return {} if manifest is None else manifest.sha_of()


def _sha_now(v: Vault) -> dict[str, bytes]:
    """rel -> sha256 prefix of one vault's files as the catalog read them."""
    return {rel: files_io.sha_prefix(stamp.sha256) for rel, stamp in v.stamps.items()}


def pairs_digest(pairs: Iterable[tuple[bytes, str]]) -> str:
    """The digest of (path as stored, sha256) pairs in byte order of the paths.

    Byte order is SQLite's for the vault store's keys, so `core.search.fresh`
    hashes the store's rows as they come, without decoding them.
    """
    digest = hashlib.sha256()
    digest.update(b"\n".join([key + b"\0" + sha.encode() for key, sha in pairs]))
    return digest.hexdigest()


def _vaults_meta(catalog: Catalog) -> dict[str, Any]:
    return {
        "roots": [str(v.root) for v in catalog.vaults],
        "digests": [files_digest(v.stamps) for v in catalog.vaults],
        "wide": [
            sorted(rel for rel, fs in v.scans.items() if fs.vault_wide) for v in catalog.vaults
        ],
    }


def open_index(
    catalog: Catalog, as_of: date, *, recheck: bool = False
) -> tuple[SearchIndex, PersistedStats]:
    """The catalog's search index from its persisted file, updated, or built and saved.

    Scores are always exactly a fresh build's.  A file that cannot be
    read or written only makes this slower (a build); it never fails.
    `recheck`: a search served without the catalog found a referenced store
    row changed (`stored_refs.StaleRow`): check every reference again.
    """
    path = index_path(catalog.vaults)
    stats = PersistedStats(path=path)
    t = time.perf_counter()
    index: SearchIndex | None = None
    conn: sqlite3.Connection | None = None
    try:
        private_dir(path.parent)
        bad = untrusted(path)
        if bad is not None:
            remove_files(path)
        conn = connect(path)
        index, stats.reason = _load(conn, path, catalog, as_of, stats, recheck)
    except (sqlite3.Error, OSError, ValueError, KeyError) as exc:
        stats.reason = f"search index unusable: {type(exc).__name__}: {exc}"
        index = None
        if conn is not None:  # a cache: start it again
            conn.close()
            conn = None
    stats.load_s = time.perf_counter() - t - stats.update_s
    if index is not None:
        stats.status = "loaded"
        return index, stats
    stats.status = "rebuilt" if stats.reason else "built"
    return _build_and_save(conn, path, catalog, as_of, stats), stats


def _build_and_save(
    conn: sqlite3.Connection | None,
    path: Path,
    catalog: Catalog,
    as_of: date,
    stats: PersistedStats,
) -> SearchIndex:
    from .index import SearchIndex

    t = time.perf_counter()
    with quiet_gc():
        index = SearchIndex.build(catalog.memories(), as_of, vaults=catalog.vaults)
        index.lexical()  # the bodies are in memory now: the relevance index is saved too
    stats.build_s = time.perf_counter() - t
    t = time.perf_counter()
    try:
        if conn is None:
            remove_files(path)
            conn = connect(path)
        _save_new(conn, index, catalog)
    except (sqlite3.Error, OSError) as exc:
        stats.reason = f"search index not saved: {exc}"
    else:
        index.vector_file = vectors_io.VectorFile(path, conn, b"1")
    stats.save_s = time.perf_counter() - t
    return index


def _save_new(conn: sqlite3.Connection, index: SearchIndex, catalog: Catalog) -> None:
    """Write a fresh build (rows = slots) over whatever the file held."""
    terms = index.state.terms
    indptr, rows, counts = terms.xt_indptr, terms.xt_indices, terms.xt_counts
    n = len(index._memories)
    norms = terms.row_norms
    conn.execute("PRAGMA journal_mode=WAL")
    with _transaction(conn):
        for table in _TABLES:
            conn.execute(f"DROP TABLE IF EXISTS {table}")
        for sql in _SCHEMA:
            conn.execute(sql)
        conn.executemany(
            "INSERT INTO terms (term, df, rows, counts) VALUES (?, ?, ?, ?)",
            rows_io.term_records(terms.terms, indptr, rows, counts),
        )
        _save_files(
            conn, [(n, files_io.pack(v.stamps)) for n, v in enumerate(catalog.vaults)], catalog
        )
        zdict = zdict_of(index._memories)
        conn.executemany(
            "INSERT INTO memories (slot, blob) VALUES (?, ?)",
            memory_blobs(enumerate(index._memories), zdict, StoreRefs(catalog)),
        )
        meta = rows_io.state_meta(index, catalog.vaults, norms)
        meta.update(rows_io.slot_words_meta(index._memories))
        meta.update(code=persisted_code(catalog.vaults).encode(), generation=b"1", zdict=zdict)
        meta["vaults"] = json.dumps(_vaults_meta(catalog)).encode()
        conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", meta_io.pack_meta(meta))
        lexical_io.save_lexical(conn, index.lexical(), n)
    _checkpoint(conn)
    # A rebuild over an older index leaves its pages free: give them back.
    free = conn.execute("PRAGMA freelist_count").fetchone()[0]
    total = conn.execute("PRAGMA page_count").fetchone()[0]
    if free * 4 > total:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("VACUUM")
        _checkpoint(conn)


def _checkpoint(conn: sqlite3.Connection) -> None:
    """Fold the WAL into the file now (a read-only search never does; a busy one skips)."""
    with contextlib.suppress(sqlite3.Error):
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


@contextlib.contextmanager
def _transaction(conn: sqlite3.Connection) -> Any:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _load(
    conn: sqlite3.Connection,
    path: Path,
    catalog: Catalog,
    as_of: date,
    stats: PersistedStats,
    recheck: bool = False,
) -> tuple[SearchIndex | None, str | None]:
    """The persisted index bound to the catalog and brought up to date; None: build it."""
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "meta" not in names:
        return None, None
    meta = meta_io.read_meta(conn, for_update=True)
    if meta.get("code") != persisted_code(catalog.vaults).encode():
        return None, "search index written by a different version of the code"
    saved = json.loads(meta["vaults"])
    roots = [str(v.root) for v in catalog.vaults]
    if saved["roots"] != roots:
        return None, "search index is for another set of vaults"
    index, norms = rows_io.restore(meta, catalog)
    changes = _changes(conn, catalog, saved)
    if changes is None:
        return None, "a vault-wide file changed"
    stale, new = rows_io.stale_and_new(index, catalog, changes)
    live = len(index._row_of)
    generation = meta["generation"]
    if stale or new:
        if len(stale) + len(new) > REBUILD_FRACTION * max(1, live):
            return None, "too much changed since the index was saved"
        if index.state.dead + len(stale) > REBUILD_FRACTION * max(1, len(index._memories)):
            return None, "too many dead rows: compacted by a rebuild"
        t = time.perf_counter()
        done = _update(conn, index, catalog, meta, stale, new)
        stats.update_s = time.perf_counter() - t
        if not done:
            return None, "another process updated the search index meanwhile"
        _checkpoint(conn)
        stats.removed, stats.added = len(stale), len(new)
        generation = str(int(generation) + 1).encode()
        norms = np.frombuffer(
            conn.execute("SELECT value FROM meta WHERE key='norms'").fetchone()[0], np.float64
        )
    else:
        _refresh_files(conn, catalog, generation)
        if recheck:
            _recheck_refs(conn, index, catalog, meta)
    if index.as_of != as_of:
        index.set_as_of(as_of)
        _save_decay(conn, index)
    # Queries read term rows later: from one snapshot, the one this index is.
    conn.execute("BEGIN")
    now = conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
    if now is None or now[0] != generation:
        conn.execute("ROLLBACK")
        return None, "another process updated the search index meanwhile"
    index.state.terms = StoredTerms(conn, len(index._row_of), norms)
    index._lexical = lexical_io.load_lexical(conn, len(index._memories))
    index.vector_file = vectors_io.VectorFile(path, conn, generation)
    return index, None


def _changes(
    conn: sqlite3.Connection, catalog: Catalog, saved: dict[str, Any]
) -> list[set[str]] | None:
    """Per vault, the files changed since the save; None: a vault-wide file changed."""
    out: list[set[str]] = []
    for number, v in enumerate(catalog.vaults):
        if saved["digests"][number] == files_digest(v.stamps):
            out.append(set())
            continue
        old = _stored_files(conn, number)
        now = _sha_now(v)
        changed = {
            rel for rel in old.keys() | now.keys() | v.scans.keys() if old.get(rel) != now.get(rel)
        }
        wide = set(saved["wide"][number])
        for rel in changed:
            fs = v.scans.get(rel)
            if rel in wide or (fs is not None and fs.vault_wide):
                return None
        out.append(changed)
    return out


def _update(
    conn: sqlite3.Connection,
    index: SearchIndex,
    catalog: Catalog,
    meta: dict[str, bytes],
    stale: list[tuple[str, str]],
    new: list[Memory],
) -> bool:
    """Apply changed memories to the file: dead slots, new slots, touched terms, norms.

    False when another process changed the file since it was read (nothing written).
    """
    for key in stale:
        index.remove(key)
    first = len(index._memories)
    for m in new:
        index._append_row(m)
    with _transaction(conn):
        now = conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
        if now is None or now[0] != meta["generation"]:
            return False
        norms = rows_io.update_terms(conn, index, new, first)
        memories = index._memories
        added = ((s, memories[s]) for s in range(first, len(memories)))
        lexical_io.update_lexical(conn, added, len(memories))
        titles = rows_io.retitle(index, catalog, meta, first)
        _save_memories(conn, index, catalog, meta["zdict"], stale, first)
        out = rows_io.state_meta(index, catalog.vaults, norms)
        out.update(titles)
        out["vaults"] = json.dumps(_vaults_meta(catalog)).encode()
        out["generation"] = str(int(meta["generation"]) + 1).encode()
        conn.executemany(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", meta_io.pack_meta(out)
        )
        _save_files(conn, _stale_manifests(conn, catalog), catalog)
    return True


def _save_memories(
    conn: sqlite3.Connection,
    index: SearchIndex,
    catalog: Catalog,
    zdict: bytes,
    stale: list[tuple[str, str]],
    first: int,
) -> None:
    """The memories of new slots, and of live ones whose links may have changed."""
    memories = index._memories
    new = list(range(first, len(memories)))
    ids = {mem_id for _root, mem_id in stale} | {memories[s].id for s in new}
    paths = {memories[s].path for s in new}
    live = sorted(index._row_of.values())
    touched = affected(((s, memories[s]) for s in live if s < first), ids, paths)
    written = [*touched, *((s, memories[s]) for s in new)]
    only: dict[str, set[str]] = {}
    for _slot, m in written:
        only.setdefault(str(m.vault_root), set()).add(m.path)
    conn.executemany(
        "INSERT OR REPLACE INTO memories (slot, blob) VALUES (?, ?)",
        memory_blobs(written, zdict, StoreRefs(catalog, only)),
    )


def _recheck_refs(
    conn: sqlite3.Connection, index: SearchIndex, catalog: Catalog, meta: dict[str, bytes]
) -> None:
    """Rewrite the references whose store rows changed (a search found one stale).

    Each such memory becomes a reference to its row as it is now, or a copy.
    Only if the index is still the generation loaded; a failure is only slower.
    """
    rows = conn.execute("SELECT slot, blob FROM memories").fetchall()
    slots = [slot for slot, blob in rows if parse_ref(blob) is not None]
    if not slots:
        return
    memories = index._memories
    refs = StoreRefs(catalog)
    live = set(index._row_of.values())
    fresh = dict(memory_blobs(((s, memories[s]) for s in slots if s in live), meta["zdict"], refs))
    with contextlib.suppress(sqlite3.Error), _transaction(conn):
        now = conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
        if now is None or now[0] != meta["generation"]:
            return
        conn.executemany(
            "UPDATE memories SET blob = ? WHERE slot = ? AND blob != ?",
            [(blob, slot, blob) for slot, blob in fresh.items()],
        )


def _stale_manifests(
    conn: sqlite3.Connection, catalog: Catalog
) -> list[tuple[int, tuple[bytes, bytes, bytes, int]]]:
    """(vault number, packed manifest) of every vault whose files differ from its manifest."""
    out = []
    for number, v in enumerate(catalog.vaults):
        packed = files_io.pack(v.stamps)
        row = conn.execute(
            "SELECT names, stamps, shas, racy FROM manifest WHERE vault = ?", (number,)
        ).fetchone()
        if row is None or tuple(row) != packed:
            out.append((number, packed))
    return out


def _save_files(
    conn: sqlite3.Connection,
    stale: list[tuple[int, tuple[bytes, bytes, bytes, int]]],
    catalog: Catalog,
) -> None:
    """Write these manifests (inside the caller's transaction), and the folders proving
    a vault's listing when its last full scan listed exactly the manifest's files."""
    conn.executemany(
        "INSERT OR REPLACE INTO manifest (vault, names, stamps, shas, racy) VALUES (?, ?, ?, ?, ?)",
        [(number, *packed) for number, packed in stale],
    )
    for number, (names, stamps, _shas, _racy) in stale:
        v = catalog.vaults[number]
        folders = files_io.folders_proving(v.listing, v.stamps)
        if folders is not None:
            files_io.write_folders(conn, number, files_io.digest_of(names, stamps), folders)


def _refresh_files(conn: sqlite3.Connection, catalog: Catalog, generation: bytes) -> None:
    """Bring the manifests up to the catalog's stamps when only stamps changed.

    A file touched without a change of content (or a racy stamp verified
    since) leaves the digest as it was, but a search compares stamps: with
    the old ones it would open the catalog every time.  Written only if the
    index is still the `generation` this process loaded (the manifest must
    describe the files that index was made from); a failure is only slower.
    """
    stale = _stale_manifests(conn, catalog)
    if not stale:
        return
    with contextlib.suppress(sqlite3.Error), _transaction(conn):
        now = conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
        if now is not None and now[0] == generation:
            _save_files(conn, stale, catalog)


def _save_decay(conn: sqlite3.Connection, index: SearchIndex) -> None:
    """The decay columns of a new `as_of` (a save that fails is only slower next time)."""
    with contextlib.suppress(sqlite3.Error), _transaction(conn):
        conn.executemany(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
            meta_io.pack_meta(rows_io.columns_meta(index)),
        )


__all__ = ["PersistedStats", "index_path", "open_index"]
