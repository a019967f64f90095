"""The search index, kept between runs beside the scan caches.

Building the TF-IDF index is the slowest part of a start at 100k memories,
so the built `SearchIndex` is pickled too, one file per set of vaults
(the paths a user opened), in the same private cache directory as the scan
caches (`core.cache`), with the same safeguards: magic bytes, a format
version, a CRC-32 of the payload, a fingerprint of the code that built it,
owner-only permissions.  Anything that does not check out is rebuilt.

The big arrays of the index (the term postings and the relevance index's:
~126 MB of the ~136 MB at 100k memories) are not unpickled: they are written out-of-band (pickle
protocol 5) after the pickles, 64-byte aligned, and on load the file is
memory-mapped copy-on-write and the arrays are views of it.  Loading then
costs the checksum and the small pickles only, and only the pages a query
touches become resident (measured at 100k: CPU to load 0.45 -> 0.30 s, RSS
after loading 803 -> 676 MB; the pages queries touch count in RSS again,
but as page cache the kernel can drop).  Why copy-on-write: an index patched in place
(a live change) writes into its arrays; those pages become private, the
file is never written through the map.  A cache file is only ever replaced
by rename, so a mapped one is never truncated under the app.

The index refers to memories; those are not stored again.  Each row is
saved as (vault number, memory id) and, on load, bound to the memory with
that id in the catalog just opened, so the index and the catalog share
objects.  What changed on disk since the index was saved is found from the
scan stamps: a vault whose digest of (path, sha256) pairs still matches is
unchanged; otherwise the saved sha256 prefix per file says which files changed,
their memories are re-indexed, missing keys removed, new keys added.  A
change to a vault-wide file (a WAL, a view store, `_state.json`:
`FileScan.vault_wide`) may change any memory of its vault, so that whole
vault is re-indexed.  When more than a tenth of the index would change, it is simply
rebuilt.
"""

from __future__ import annotations

import copy
import hashlib
import io
import mmap
import pickle
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np
import numpy.typing as npt

from ..model import Memory
from ..scan.cache import cache_dir
from ..scan.progress import quiet_gc
from ..store import blobs
from .bm25 import ArraySource
from .embeddings import KeptVectors
from .index_file import open_checked, pack, write_checked
from .keys import search_code_fingerprint, vault_set_key

if TYPE_CHECKING:
    from ..scan.vault import Catalog, Vault
    from .index import SearchIndex

INDEX_VERSION = 8
MAGIC = b"MEMLENS-INDEX-CACHE\0"
#: Above this share of changed rows an incremental fix-up costs more than a rebuild.
REBUILD_FRACTION = 0.1
#: Arrays at least this big are written out-of-band and memory-mapped on load.
MAPPED_MIN_BYTES = 1 << 16
#: Alignment of each mapped array in the file (a cache line; numpy wants 8).
MAPPED_ALIGN = 64

Key = tuple[str, str]


@dataclass(slots=True)
class IndexCacheStats:
    """How the search index was obtained.  Timings are seconds."""

    path: Path | None = None
    #: "loaded" (from the cache, maybe patched), "built", or "rebuilt" (cache unusable).
    status: str = "built"
    reason: str | None = None
    updated: int = 0
    removed: int = 0
    added: int = 0
    load_s: float = 0.0
    patch_s: float = 0.0
    build_s: float = 0.0
    #: The cache file does not hold this index (built or patched): save it.
    stale: bool = False


def index_cache_path(vaults: list[Vault]) -> Path:
    """The index cache of exactly this set of vaults (as named from these paths)."""
    return cache_dir() / f"index-{vault_set_key(vaults)}.pickle"


def _fingerprint(vaults: list[Vault]) -> str:
    return search_code_fingerprint(vaults, f"index-v{INDEX_VERSION}")


#: Bytes of each file's sha256 the cache keeps: plenty to tell a changed file.
SHA_PREFIX = 16


def _shas_of(v: Vault) -> dict[str, bytes]:
    """Every file's sha256 prefix (a stamp without one: zeros, as it was saved)."""
    return {
        rel: bytes.fromhex(stamp.sha256)[:SHA_PREFIX].ljust(SHA_PREFIX, b"\0")
        for rel, stamp in v.stamps.items()
    }


def _packed_files(v: Vault) -> tuple[bytes, bytes]:
    """(every file's path, NUL-separated and zstd-packed; their sha256 prefixes, in order).

    Why not a dict of hex digests: that pickle was 14 MB of a 136 MB cache at
    100k files, and is read only when files changed since the save.
    """
    shas = _shas_of(v)
    names = blobs.pack("\0".join(shas).encode("utf-8", "surrogateescape"))
    return names, b"".join(shas.values())


def _unpacked_files(packed: Any) -> dict[str, bytes]:
    """What `_packed_files` packed, as path -> sha256 prefix; ValueError if damaged."""
    names, shas = packed
    text = blobs.unpack(names).decode("utf-8", "surrogateescape")
    rels = text.split("\0") if text else []
    if len(shas) != SHA_PREFIX * len(rels):
        raise ValueError("the index cache's file list is damaged")
    return {rel: shas[i * SHA_PREFIX : (i + 1) * SHA_PREFIX] for i, rel in enumerate(rels)}


def _files_digest(v: Vault) -> str:
    """One hash of every file's path and sha256, in scan order (unchanged vault: same digest)."""
    text = "\n".join([f"{rel}\0{stamp.sha256}" for rel, stamp in v.stamps.items()])
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def _vault_meta(v: Vault) -> dict[str, Any]:
    return {
        "format": v.format,
        "rel": v.rel,
        "digest": _files_digest(v),
        "wide": sorted(rel for rel, fs in v.scans.items() if fs.vault_wide),
    }


def save_index(index: SearchIndex, catalog: Catalog) -> Path:
    """Write the index cache for this catalog (atomically, 0600).

    The payload is three pickles back to back: what the index was built
    from (code fingerprint, vaults, a digest of their files), the index
    itself with its rows named by (vault number, memory id) instead of the
    memories (the catalog already holds them), and every file's sha256
    (read only when a vault's digest no longer matches).
    """
    path = index_cache_path(catalog.vaults)
    roots = [str(v.root) for v in catalog.vaults]
    vault_no = {root: i for i, root in enumerate(roots)}
    rows = len(index._memories)
    row_vault = np.full(rows, -1, dtype=np.int32)
    row_ids = [""] * rows
    for (root, mem_id), row in index._row_of.items():
        number = vault_no.get(root)
        if number is not None:
            row_vault[row] = number
            row_ids[row] = mem_id
    body = copy.copy(index)
    body._memories = []
    body._row_of = {}
    body._lower = {}
    body._vectors = {}
    # The relevance index of a build is kept (reading every body again costs
    # seconds at 100k); the meaning vectors too, without their model.
    lexical = index._lexical
    if lexical is None or not isinstance(lexical.source, ArraySource):
        body._lexical = None
    body.semantic = None
    if index.semantic is not None:
        body.vector_file = KeptVectors(index.semantic.vectors)
    elif not isinstance(index.vector_file, KeptVectors):
        body.vector_file = None
    alive = index.state.columns.alive
    outside = alive.view & (row_vault < 0)
    if outside.any():  # memories of vaults not in this catalog: not kept
        body.state = copy.copy(index.state)
        body.state.columns = copy.copy(index.state.columns)
        body.state.columns.alive = copy.deepcopy(alive)
        body.state.columns.alive.view[outside] = False
        body.state.dead += int(outside.sum())
    files = {str(v.root): _packed_files(v) for v in catalog.vaults}
    meta = {
        "code": _fingerprint(catalog.vaults),
        "roots": roots,
        "vaults": {str(v.root): _vault_meta(v) for v in catalog.vaults},
    }

    dump = _Layout(meta, {"index": body, "row_vault": row_vault, "row_ids": row_ids}, files)
    write_checked(path, MAGIC, INDEX_VERSION, dump.write)
    return path


def _in_band(buffer: pickle.PickleBuffer) -> bool:
    """Small arrays stay inside the pickle; big ones go out-of-band (mapped on load)."""
    with buffer.raw() as view:
        return view.nbytes < MAPPED_MIN_BYTES


def _align(offset: int) -> int:
    return -(-offset // MAPPED_ALIGN) * MAPPED_ALIGN


class _Layout:
    """The payload of an index cache file, in the order `_restore` reads it.

    meta pickle | table pickle | body pickle | files pickle | padding |
    the out-of-band arrays, each at an aligned offset.  The table gives the
    body's and the files pickle's lengths and each array's (offset from the
    first array, length), so a reader can map the arrays without reading
    the files pickle (only needed when files changed).
    """

    def __init__(self, meta: dict[str, Any], body: dict[str, Any], files: Any) -> None:
        self.meta = pickle.dumps(meta, protocol=pickle.HIGHEST_PROTOCOL)
        buffers: list[pickle.PickleBuffer] = []

        def keep(buffer: pickle.PickleBuffer) -> bool:
            # pickle's buffer_callback: a true result keeps the buffer in-band.
            if _in_band(buffer):
                return True
            buffers.append(buffer)
            return False

        out = io.BytesIO()
        pickle.Pickler(out, protocol=5, buffer_callback=keep).dump(body)
        self.body = out.getvalue()
        self.files = pickle.dumps(files, protocol=pickle.HIGHEST_PROTOCOL)
        self.buffers = buffers
        spans: list[tuple[int, int]] = []
        at = 0
        for b in buffers:
            with b.raw() as view:
                spans.append((at, view.nbytes))
                at = _align(at + view.nbytes)
        self.table = pickle.dumps(
            (len(self.body), len(self.files), spans), protocol=pickle.HIGHEST_PROTOCOL
        )

    def write(self, out: Any) -> None:
        """Stream the payload into `out` (`write_checked`'s hashing writer)."""
        # Where the payload starts in the file: after magic and header.
        at = len(pack(MAGIC, INDEX_VERSION, b""))
        for part in (self.meta, self.table, self.body, self.files):
            out.write(part)
            at += len(part)
        for b in self.buffers:
            pad = _align(at) - at
            out.write(bytes(pad))
            with b.raw() as view:
                out.write(view)
                at += pad + view.nbytes


def _dirty_paths(vault: Vault, files: dict[str, bytes], wide: set[str]) -> set[str] | None:
    """Files of `vault` changed since the index was saved; None: the whole vault."""
    now = _shas_of(vault)
    # A file without a stamp could not be read: count it as changed.
    changed = {rel for rel in files.keys() | vault.scans.keys() if files.get(rel) != now.get(rel)}
    for rel in changed:
        fs = vault.scans.get(rel)
        if rel in wide or (fs is not None and fs.vault_wide):
            return None  # a state/WAL/view file: any memory may have changed
    return changed


def load_index(
    catalog: Catalog, as_of: date, *, save: bool = True, patch: bool = True
) -> tuple[SearchIndex, IndexCacheStats]:
    """The catalog's search index: from the cache when it is usable, else built.

    Saves a fresh cache when it had to build or patch the index (`save`;
    pass False to call `save_index` later, off the critical path; then
    `IndexCacheStats.stale` says whether it is worth it).  `patch=False`
    rebuilds instead of patching when files changed since the save: a
    patched index keeps its fitted idf (scores drift slightly from a
    rebuild's), so only an unchanged index gives exactly a build's scores.
    """
    from .index import SearchIndex

    path = index_cache_path(catalog.vaults)
    stats = IndexCacheStats(path=path)
    t = time.perf_counter()
    index: SearchIndex | None = None
    fh, reason = open_checked(path, MAGIC, INDEX_VERSION, "index cache")
    if fh is not None:
        with fh:
            index, reason = _restore(fh, catalog, as_of, stats, patch)
    stats.load_s = time.perf_counter() - t
    if index is None:
        stats.status = "rebuilt" if reason else "built"
        stats.reason = reason
        t = time.perf_counter()
        with quiet_gc():
            index = SearchIndex.from_catalog(catalog, as_of)
        stats.build_s = time.perf_counter() - t
    stats.stale = stats.status != "loaded" or bool(stats.updated or stats.removed or stats.added)
    if save and stats.stale:
        try:
            save_index(index, catalog)
            stats.stale = False
        except Exception as exc:  # a cache that cannot be written is only slower
            stats.reason = f"index cache not saved: {exc}"
    return index, stats


Bound = tuple[list[Memory], dict[Key, int], list[int], list[Key]]


def _bind_in_order(
    vaults: list[Vault],
    roots: list[str],
    row_vault: list[int],
    row_ids: list[str],
    alive: npt.NDArray[np.bool_],
) -> tuple[list[Memory], list[tuple[str, list[str], int]]] | None:
    """Rows bound to memories when each vault's rows are its memories, in order.

    That is every index saved right after a build of an unchanged catalog:
    whole lists compared and copied at C speed.  Returns the memories by row
    and the (root, ids, first row) segments the key -> row table is made
    of; None: bind row by row.
    """
    if not bool(alive.all()):
        return None
    memories: list[Memory] = []
    segments: list[tuple[str, list[str], int]] = []
    start = 0
    for number, v in enumerate(vaults):
        end = start + len(v.memories)
        if row_vault[start:end] != [number] * len(v.memories):
            return None
        ids = [m.id for m in v.memories]
        if row_ids[start:end] != ids:
            return None
        memories.extend(v.memories)
        # The memories' own id strings: the cache's copies (~9 MB at 100k) go.
        segments.append((roots[number], ids, start))
        start = end
    if start != len(row_ids):
        return None
    return memories, segments


def _bind(
    vaults: list[Vault],
    roots: list[str],
    row_vault: list[int],
    row_ids: list[str],
    index: SearchIndex,
) -> Bound:
    """Rows bound to the memories with their ids, one by one (anything may have moved)."""
    lookups = [{m.id: m for m in v.memories} for v in vaults]
    alive: list[bool] = index.state.columns.alive.view.tolist()
    found = [0] * len(vaults)
    memories: list[Memory] = []
    row_of: dict[Key, int] = {}
    gone: list[Key] = []
    for row, (number, mem_id) in enumerate(zip(row_vault, row_ids, strict=True)):
        if number < 0:
            memories.append(_placeholder("", mem_id))
            continue
        root = roots[number]
        m = lookups[number].get(mem_id)
        if m is None:
            m = _placeholder(root, mem_id)
            if alive[row]:
                gone.append((root, mem_id))
        elif alive[row]:
            found[number] += 1
        memories.append(m)
        if alive[row]:
            row_of[(root, mem_id)] = row
    return memories, row_of, found, gone


def _placeholder(root: str, mem_id: str) -> Memory:
    """Stands in for a memory gone since the index was saved (its row is removed)."""
    return Memory(format="", vault_root=Path(root), id=mem_id, kind="", title="", body="", path="")


def _load_body(fh: BinaryIO) -> tuple[Any, int]:
    """The body pickle, its big arrays views of the file mapped copy-on-write;
    and where the files pickle starts.  `fh` stands just after the meta pickle."""
    body_len, files_len, spans = pickle.load(fh)
    body_at = fh.tell()
    files_at = body_at + body_len
    first = _align(files_at + files_len)
    data = fh.read(body_len)
    views: list[memoryview] = []
    if spans:
        mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY)
        whole = memoryview(mapped)
        for offset, length in spans:
            start = first + offset
            if start + length > len(whole):
                raise ValueError("index cache array out of bounds")
            views.append(whole[start : start + length])
    return pickle.loads(data, buffers=views), files_at


def _restore(
    fh: BinaryIO, catalog: Catalog, as_of: date, stats: IndexCacheStats, patch: bool = True
) -> tuple[SearchIndex | None, str | None]:
    from .index import SearchIndex

    try:
        with quiet_gc():
            meta = pickle.load(fh)
    except Exception as exc:  # checksummed, so this means a bug: never trust it
        return None, f"index cache unreadable: {type(exc).__name__}"
    if not isinstance(meta, dict):
        return None, "index cache payload is not a mapping"
    if meta.get("code") != _fingerprint(catalog.vaults):
        return None, "index cache written by a different version of the code"
    saved_vaults: dict[str, Any] = meta.get("vaults", {})
    roots: list[str] = meta.get("roots", [])
    by_root = {str(v.root): v for v in catalog.vaults}
    if set(saved_vaults) != set(by_root) or set(roots) != set(by_root):
        return None, "index cache is for another set of vaults"
    try:
        with quiet_gc():
            body, files_at = _load_body(fh)
        index = body["index"]
        row_vault: list[int] = body["row_vault"].tolist()
        row_ids: list[str] = body["row_ids"]
    except Exception as exc:
        return None, f"index cache unreadable: {type(exc).__name__}"
    if not isinstance(index, SearchIndex) or len(row_ids) != len(row_vault):
        return None, "index cache holds no search index"

    t = time.perf_counter()
    vaults = [by_root[root] for root in roots]
    in_order = _bind_in_order(vaults, roots, row_vault, row_ids, index.state.columns.alive.view)
    if in_order is not None:
        # Ids are unique within a vault, so every row is one key: the table
        # is built when first used (a search does not need it).
        index._memories, segments = in_order
        index._defer_rows(segments)
        found = [len(v.memories) for v in vaults]
        gone: list[Key] = []
    else:
        memories, row_of, found, gone = _bind(vaults, roots, row_vault, row_ids, index)
        index._memories = memories
        index._row_of = row_of

    changes = _changed_since_save(fh, files_at, vaults, roots, saved_vaults, found, index)
    if isinstance(changes, str):
        return None, changes
    stale, new = changes
    current = sum(len(v.memories) for v in vaults)
    if not patch and (stale or gone or new):
        return None, "files changed since the index was saved"
    if len(stale) + len(gone) + len(new) > REBUILD_FRACTION * max(1, current):
        return None, "too much changed since the index was saved"
    for key in gone:
        index.remove(key)
    for m in {id(m): m for m in [*stale, *new]}.values():
        index.add(m)
    stats.removed, stats.added, stats.updated = len(gone), len(new), len(stale)
    if index.as_of != as_of:
        index.set_as_of(as_of)
    stats.patch_s = time.perf_counter() - t
    stats.status = "loaded"
    return index, None


def _changed_since_save(
    fh: BinaryIO,
    files_at: int,
    vaults: list[Vault],
    roots: list[str],
    saved_vaults: dict[str, Any],
    found: list[int],
    index: SearchIndex,
) -> tuple[list[Memory], list[Memory]] | str:
    """(stale, new): the memories changed or added on disk since the save, or why unknown.

    A vault whose files digest still matches is unchanged; otherwise the
    saved sha256 per file (read only then) says which files changed.
    `found[i]`: how many of vault i's memories the saved rows bound.
    """
    stale: list[Memory] = []
    new: list[Memory] = []
    files: dict[str, Any] | None = None
    for number, v in enumerate(vaults):
        saved = saved_vaults[roots[number]]
        if found[number] != len(v.memories):
            new.extend(m for m in v.memories if (roots[number], m.id) not in index._row_of)
        if saved.get("digest") == _files_digest(v):
            continue
        if files is None:
            try:
                fh.seek(files_at)
                with quiet_gc():
                    files = pickle.load(fh)
            except Exception as exc:
                return f"index cache unreadable: {type(exc).__name__}"
            if not isinstance(files, dict):
                return "index cache file list is not a mapping"
        try:
            packed = files.get(roots[number])
            shas = {} if packed is None else _unpacked_files(packed)
        except Exception as exc:
            return f"index cache unreadable: {type(exc).__name__}"
        dirty = _dirty_paths(v, shas, set(saved.get("wide", ())))
        if dirty is None:
            stale.extend(v.memories)
        elif dirty:
            stale.extend(m for m in v.memories if m.path in dirty)
    return stale, new


__all__ = ["IndexCacheStats", "index_cache_path", "load_index", "save_index"]
