"""The search index, kept between runs beside the scan caches.

Building the TF-IDF index is the slowest part of a start at 100k memories,
so the built `SearchIndex` is pickled too, one file per set of vaults
(the paths a user opened), in the same private cache directory as the scan
caches (`core.cache`), with the same safeguards: magic bytes, a format
version, a sha256 of the payload, a fingerprint of the code that built it,
owner-only permissions.  Anything that does not check out is rebuilt.

The index refers to memories; those are not stored again.  Each reference
is pickled as the memory's key (vault root, id) and, on load, bound to the
memory of that key in the catalog just opened (`persistent_id`), so the
index and the catalog share objects.  What changed on disk since the index
was saved is found from the scan stamps (sha256 per file): memories of
changed files are re-indexed, missing keys removed, new keys added.  A
change to a vault-wide file (a WAL, a view store, `_state.json`:
`FileScan.vault_wide`) may change any memory of its vault, so that whole
vault is re-indexed.  When more than a tenth of the index would change, it is simply
rebuilt.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import pickle
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from .cache import cache_dir, code_fingerprint, open_checked, pack, quiet_gc
from .model import Memory

if TYPE_CHECKING:
    from .search import SearchIndex
    from .vault import Catalog, Vault

INDEX_VERSION = 1
MAGIC = b"MEMLENS-INDEX-CACHE\0"
#: Above this share of changed rows an incremental fix-up costs more than a rebuild.
REBUILD_FRACTION = 0.1

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
    ident = "\n".join(sorted(f"{os.path.realpath(v.root)}\0{v.rel}\0{v.format}" for v in vaults))
    key = hashlib.sha256(ident.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return cache_dir() / f"index-{key}.pickle"


def _fingerprint(vaults: list[Vault]) -> str:
    here = Path(__file__).parent
    digest = hashlib.sha256(f"index-v{INDEX_VERSION}".encode())
    for fmt in sorted({v.format for v in vaults}):
        digest.update(code_fingerprint(fmt).encode())
    for name in ("search.py", "query.py", "decay.py"):
        with contextlib.suppress(OSError):
            digest.update((here / name).read_bytes())
    return digest.hexdigest()


def _vault_meta(v: Vault) -> dict[str, Any]:
    return {
        "format": v.format,
        "rel": v.rel,
        "files": {rel: stamp.sha256 for rel, stamp in v.stamps.items()},
        "wide": sorted(rel for rel, fs in v.scans.items() if fs.vault_wide),
    }


class _RefPickler(pickle.Pickler):
    """Pickles memories as their key: the catalog already stores them."""

    def persistent_id(self, obj: Any) -> Any:
        if type(obj) is Memory:
            return (str(obj.vault_root), obj.id)
        return None


class _RefUnpickler(pickle.Unpickler):
    def __init__(self, fh: BinaryIO, current: dict[Key, Memory]) -> None:
        super().__init__(fh)
        self.current = current
        self.missing: set[Key] = set()

    def persistent_load(self, pid: Any) -> Any:
        root, mem_id = pid
        key = (str(root), str(mem_id))
        found = self.current.get(key)
        if found is not None:
            return found
        # Gone since the index was saved: a placeholder until its row is removed.
        self.missing.add(key)
        return Memory(
            format="", vault_root=Path(root), id=key[1], kind="", title="", body="", path=""
        )


def save_index(index: SearchIndex, catalog: Catalog) -> Path:
    """Write the index cache for this catalog (atomically, 0600).

    The payload is two pickles back to back: what the index was built from,
    then the index itself (memories by key).
    """
    from .writes import atomic_write

    path = index_cache_path(catalog.vaults)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    buf = io.BytesIO()
    pickle.dump(
        {
            "code": _fingerprint(catalog.vaults),
            "vaults": {str(v.root): _vault_meta(v) for v in catalog.vaults},
        },
        buf,
        protocol=pickle.HIGHEST_PROTOCOL,
    )
    _RefPickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(index)
    atomic_write(path, pack(MAGIC, INDEX_VERSION, buf.getvalue()), None)
    with contextlib.suppress(OSError):
        os.chmod(path, 0o600)
    return path


def _dirty_paths(vault: Vault, saved: dict[str, Any]) -> set[str] | None:
    """Files of `vault` changed since the index was saved; None: the whole vault."""
    files: dict[str, str] = saved.get("files", {})
    now = {rel: stamp.sha256 for rel, stamp in vault.stamps.items()}
    # A file without a stamp could not be read: count it as changed.
    changed = {rel for rel in files.keys() | vault.scans.keys() if files.get(rel) != now.get(rel)}
    wide = set(saved.get("wide", ()))
    for rel in changed:
        fs = vault.scans.get(rel)
        if rel in wide or (fs is not None and fs.vault_wide):
            return None  # a state/WAL/view file: any memory may have changed
    return changed


def load_index(
    catalog: Catalog, as_of: date, *, save: bool = True
) -> tuple[SearchIndex, IndexCacheStats]:
    """The catalog's search index: from the cache when it is usable, else built.

    Saves a fresh cache when it had to build or patch the index (`save`;
    pass False to call `save_index` later, off the critical path; then
    `IndexCacheStats.stale` says whether it is worth it).
    """
    from .search import SearchIndex

    path = index_cache_path(catalog.vaults)
    stats = IndexCacheStats(path=path)
    t = time.perf_counter()
    index: SearchIndex | None = None
    fh, reason = open_checked(path, MAGIC, INDEX_VERSION, "index cache")
    if fh is not None:
        with fh:
            index, reason = _restore(fh, catalog, as_of, stats)
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


def _restore(
    fh: BinaryIO, catalog: Catalog, as_of: date, stats: IndexCacheStats
) -> tuple[SearchIndex | None, str | None]:
    from .search import SearchIndex

    try:
        with quiet_gc():
            data = pickle.load(fh)
    except Exception as exc:  # checksummed, so this means a bug: never trust it
        return None, f"index cache unreadable: {type(exc).__name__}"
    if not isinstance(data, dict):
        return None, "index cache payload is not a mapping"
    if data.get("code") != _fingerprint(catalog.vaults):
        return None, "index cache written by a different version of the code"
    saved_vaults: dict[str, Any] = data.get("vaults", {})
    if set(saved_vaults) != {str(v.root) for v in catalog.vaults}:
        return None, "index cache is for another set of vaults"
    current: dict[Key, Memory] = {}
    for m in catalog.memories():
        current[(str(m.vault_root), m.id)] = m
    unpickler = _RefUnpickler(fh, current)
    try:
        with quiet_gc():
            index = unpickler.load()
    except Exception as exc:
        return None, f"index cache unreadable: {type(exc).__name__}"
    if not isinstance(index, SearchIndex):
        return None, "index cache holds no search index"

    t = time.perf_counter()
    stale: list[Memory] = []
    for v in catalog.vaults:
        dirty = _dirty_paths(v, saved_vaults[str(v.root)])
        if dirty is None:
            stale.extend(v.memories)
        elif dirty:
            stale.extend(m for m in v.memories if m.path in dirty)
    indexed = {m.key for m in index.memories()}
    gone = [k for k in indexed if k not in current] + [
        k for k in unpickler.missing if k in indexed and k not in current
    ]
    new = [m for key, m in current.items() if key not in indexed]
    if len(stale) + len(gone) + len(new) > REBUILD_FRACTION * max(1, len(current)):
        return None, "too much changed since the index was saved"
    for key in dict.fromkeys(gone):
        index.remove(key)
    for m in {id(m): m for m in [*stale, *new]}.values():
        index.add(m)
    stats.removed, stats.added, stats.updated = len(set(gone)), len(new), len(stale)
    if index.as_of != as_of:
        index.set_as_of(as_of)
    stats.patch_s = time.perf_counter() - t
    stats.status = "loaded"
    return index, None


__all__ = ["IndexCacheStats", "index_cache_path", "load_index", "save_index"]
