"""How a file's FileScan and a vault's linked result become row blobs, and back.

A row is a pickle of our own objects (what the old cache file held, now one
per file), compressed with zlib: its adler32 checksum is what catches a
damaged row (SQLite itself does not checksum pages).  Rows are small (a
few hundred bytes) and alike (the same classes, field names and keys), so
they are compressed with a preset dictionary (`ZDICT_BYTES` of the vault's
first rows, kept in the store): measured on 2,000 cognitive-memory rows,
plain zlib made 650 bytes a row, with an 8 KB dictionary 289 (level 6,
~55 us a row; 32 KB dictionaries shrink rows a little more but cost 4x the
time to set up per row).  Two things are left out of every row:

- memory bodies: they are read from the memory files when first used
  (`core.store.bodies`), so the store stays well under the size of the
  vault's text;
- the vault root `Path` of the file's memories and problems: None in the
  row, the one root object of the vault again on load.  Why not a
  persistent id: the pickler then calls a Python hook for every object it
  writes (~120 a row), which cost a third of writing a cold store's 100k
  rows; a loaded row is plain `pickle.loads` too.

Why pickle is acceptable: see `core.store.db` (a private folder, our own
file, code fingerprint checked); someone who can write the user's cache
folder can already run code as that user.
"""

from __future__ import annotations

import copyreg
import dataclasses
import io
import operator
import pickle
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..model import RAW_BODY, FileScan, Memory, Problem, ReferenceProblem, Relation, ScanResult
from .db import StoreCorrupt
from .stamps import FileStamp

#: zlib level (with the dictionary, 6 costs no more time than 1 and saves 8%).
ZLIB_LEVEL = 6
#: Size of the preset dictionary made from a vault's first rows.
ZDICT_BYTES = 8192
#: Rows the dictionary is made from (their raw pickles, the last ZDICT_BYTES).
ZDICT_ROWS = 64


def _fields_getter(cls: type[Any]) -> Callable[[Any], tuple[Any, ...]]:
    return operator.attrgetter(*(f.name for f in dataclasses.fields(cls)))


def _constructor_reducer(cls: type[Any]) -> Callable[[Any], tuple[Any, ...]]:
    """Pickle a dataclass instance as a call of its class with every field, in order.

    Unpickling then runs the generated __init__ (one call), where the default
    pickling of a slotted dataclass builds a dict of its state and sets each
    slot from it (frozen ones through a Python __setstate__): about twice as
    slow for 100k memories.
    """
    get = _fields_getter(cls)

    def reduce(obj: Any) -> tuple[Any, ...]:
        return (cls, get(obj))

    return reduce


_MEMORY_VALUES = _fields_getter(Memory)
_NAMES = [f.name for f in dataclasses.fields(Memory)]
_BODY_AT = _NAMES.index("body")
#: Every field before the body, and every one after it (the body itself is
#: never read: reading it would load it from the file).
_BEFORE_BODY = operator.attrgetter(*_NAMES[:_BODY_AT])
_AFTER_BODY = operator.attrgetter(*_NAMES[_BODY_AT + 1 :])


def _memory_without_body(m: Memory) -> tuple[Any, ...]:
    # None: left out, read from the file when used.
    return (Memory, (*_BEFORE_BODY(m), None, *_AFTER_BODY(m)))


def _memory_as_is(m: Memory) -> tuple[Any, ...]:
    return (Memory, _MEMORY_VALUES(m))


_SHARED: dict[type[Any], Any] = {
    **copyreg.dispatch_table,
    **{
        cls: _constructor_reducer(cls)
        for cls in (FileScan, FileStamp, Relation, Problem, ReferenceProblem, ScanResult)
    },
}
#: Reducers for file rows (memories without bodies), and for everything else
#: (a parse worker's answer, the search index cache).
ROW_DISPATCH: dict[type[Any], Any] = {**_SHARED, Memory: _memory_without_body}
FULL_DISPATCH: dict[type[Any], Any] = {**_SHARED, Memory: _memory_as_is}
_ROOT_AT = _NAMES.index("vault_root")
_PROBLEM_ROOT_AT = [f.name for f in dataclasses.fields(Problem)].index("vault_root")
_PROBLEM_VALUES = _fields_getter(Problem)


def _row_table(fs: FileScan, root: Path, bodies: bool) -> dict[type[Any], Any]:
    """The reducers of one row: its own memories and problems without the vault root."""
    owned = {id(m) for m in fs.memories}
    owned.update(id(p) for p in fs.problems)
    memory_values = _memory_as_is if bodies else _memory_without_body

    def memory(m: Memory) -> tuple[Any, ...]:
        reduced = memory_values(m)
        if id(m) not in owned or m.vault_root is not root:
            return reduced
        values = list(reduced[1])
        values[_ROOT_AT] = None
        return (Memory, tuple(values))

    def problem(p: Problem) -> tuple[Any, ...]:
        values = _PROBLEM_VALUES(p)
        if id(p) in owned and p.vault_root is root:
            values = (*values[:_PROBLEM_ROOT_AT], None, *values[_PROBLEM_ROOT_AT + 1 :])
        return (Problem, values)

    return {**(FULL_DISPATCH if bodies else ROW_DISPATCH), Memory: memory, Problem: problem}


def pickle_scan(fs: FileScan, root: Path, *, bodies: bool = False) -> bytes:
    """A file's FileScan pickled for a row (bodies left out unless `bodies`), not compressed yet.

    `bodies`: for a memory whose body its file alone would not give (one
    linking changed: an erased record's is "", an edited one's the edit).
    """
    out = io.BytesIO()
    pickler = pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _row_table(fs, root, bodies)
    pickler.dump(fs)
    return out.getvalue()


def make_zdict(raws: list[bytes]) -> bytes:
    """A preset dictionary from some rows' raw pickles (the rows that follow are alike)."""
    return b"".join(raws[:ZDICT_ROWS])[-ZDICT_BYTES:]


def compress(raw: bytes, zdict: bytes) -> bytes:
    """A row's raw pickle compressed with the store's dictionary."""
    packer = zlib.compressobj(ZLIB_LEVEL, zdict=zdict) if zdict else zlib.compressobj(ZLIB_LEVEL)
    return packer.compress(raw) + packer.flush()


def decompress(blob: bytes, zdict: bytes) -> bytes:
    """A row blob's raw pickle (StoreCorrupt when its checksum or length is wrong)."""
    try:
        unpacker = zlib.decompressobj(zdict=zdict) if zdict else zlib.decompressobj()
        raw = unpacker.decompress(blob)
        if not unpacker.eof or unpacker.unused_data:
            raise zlib.error("incomplete row")
    except zlib.error as exc:  # a damaged row: never trust any of it
        raise StoreCorrupt(f"unreadable row ({type(exc).__name__})") from exc
    return raw


def unpickle_scan(raw: bytes, root: Path) -> FileScan:
    """A row's raw pickle back into a FileScan whose memories have no body yet."""
    try:
        fs = pickle.loads(raw)
    except Exception as exc:  # a damaged row: never trust any of it
        raise StoreCorrupt(f"unreadable row ({type(exc).__name__})") from exc
    if not isinstance(fs, FileScan):
        raise StoreCorrupt("a file row holds no FileScan")
    for m in fs.memories:
        if m.vault_root is None:
            m.vault_root = root
    for p in fs.problems:
        if p.vault_root is None:
            object.__setattr__(p, "vault_root", root)  # frozen: set once, as it is made
    return fs


def decode_scan(blob: bytes, root: Path, zdict: bytes) -> FileScan:
    """A row blob back into a FileScan whose memories have no body yet (`RAW_BODY` None)."""
    return unpickle_scan(decompress(blob, zdict), root)


def has_body(m: Memory) -> bool:
    """The memory holds its body (False: left out by the store, not read yet)."""
    return RAW_BODY.__get__(m, Memory) is not None


__all__ = [
    "FULL_DISPATCH",
    "ROW_DISPATCH",
    "compress",
    "decode_scan",
    "decompress",
    "has_body",
    "make_zdict",
    "pickle_scan",
    "unpickle_scan",
]
