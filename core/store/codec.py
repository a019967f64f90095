"""How a file's FileScan and a vault's linked result become row blobs, and back.

A row is a pickle of our own objects (what the old cache file held, now one
per file), compressed with zstd and its content checksum: that checksum is
what catches a damaged row (SQLite itself does not checksum pages).  Rows
are small (~1 KB raw) and alike (the same classes, field names and keys),
so they are compressed with a dictionary trained on the vault's first rows
(`make_zdict`, kept in the store).  Why zstd and not zlib with a preset
dictionary, as before: zlib sets its dictionary up again for every row
(a decompressor per row), which was 1.26 s of a warm start's decoding at
100k rows; zstd sets a dictionary up once per thread (`_codecs`) and
decodes the same rows in 0.40 s, 22 MB instead of 28 MB stored.

Two things are left out of every row:

- memory bodies: they are read from the memory files when first used
  (`core.store.bodies`), so the store stays well under the size of the
  vault's text;
- the vault root `Path` of the file's memories and problems: None in the
  row, the one root object of the vault again on load.  Why not a
  persistent id: the pickler then calls a Python hook for every object it
  writes (~120 a row), which cost a third of writing a cold store's 100k
  rows; a loaded row is plain `pickle.loads` too.

One is kept packed: each memory's native `fields` mapping is one pickled
bytes value inside the row (`_fields_as_stored`), unpacked the first time
it is read (`model.Memory.fields`).  A warm start reads none of them; at
100k rows the decoded catalog holds ~85 MB less (`memlens list --json`
peak RSS 712 -> 627 MB) for rows ~20% larger compressed.

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
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import zstandard

from ..model import (
    RAW_BODY,
    RAW_FIELDS,
    FileScan,
    Memory,
    Problem,
    ReferenceProblem,
    Relation,
    ScanResult,
)
from .db import StoreCorrupt
from .stamps import FileStamp

#: zstd level: 3 (the library's default) compresses 100k rows in 0.9 s; 9
#: saves 7% more for 4x the time.
ZSTD_LEVEL = 3
#: Size of the dictionary trained on a vault's first rows.
ZDICT_BYTES = 16384
#: Rows the dictionary is trained on (more rows barely shrink the others).
ZDICT_ROWS = 256


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


_NAMES = [f.name for f in dataclasses.fields(Memory)]
_BODY_AT = _NAMES.index("body")
_FIELDS_AT = _NAMES.index("fields")
assert _BODY_AT + 2 < _FIELDS_AT < len(_NAMES) - 2 and _BODY_AT > 1  # each getter gives a tuple
#: Every field but the body and the native mapping, in three runs around them: the
#: body is never read here (reading it would load it from the file), nor are the
#: fields unpacked (`_fields_as_stored`).
_BEFORE_BODY = operator.attrgetter(*_NAMES[:_BODY_AT])
_BETWEEN = operator.attrgetter(*_NAMES[_BODY_AT + 1 : _FIELDS_AT])
_AFTER_FIELDS = operator.attrgetter(*_NAMES[_FIELDS_AT + 1 :])


def _values(m: Memory, body: str | None, fields: object) -> tuple[Any, ...]:
    return (*_BEFORE_BODY(m), body, *_BETWEEN(m), fields, *_AFTER_FIELDS(m))


def _fields_as_stored(m: Memory) -> bytes:
    """The memory's `fields` as a row keeps them: one pickled bytes value.

    Unpacked only when read (`model.Memory.fields`): decoding a row builds no
    mapping, and a memory whose fields were never read is written back with
    the very bytes it was read with.
    """
    value = RAW_FIELDS.__get__(m, Memory)
    return value if type(value) is bytes else pickle.dumps(value, pickle.HIGHEST_PROTOCOL)


def _memory_without_body(m: Memory) -> tuple[Any, ...]:
    # None: left out, read from the file when used.
    return (Memory, _values(m, None, _fields_as_stored(m)))


def _memory_as_is(m: Memory) -> tuple[Any, ...]:
    # The fields as they are held (a store row's bytes stay packed).
    return (Memory, _values(m, m.body, RAW_FIELDS.__get__(m, Memory)))


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


def _without_root(values: tuple[Any, ...]) -> tuple[Any, ...]:
    return (*values[:_ROOT_AT], None, *values[_ROOT_AT + 1 :])


def rows_table(scans: Iterable[FileScan], root: Path, bodies: bool) -> dict[type[Any], Any]:
    """The reducers of rows: the scans' own memories and problems without the vault root."""
    owned: set[int] = set()
    for fs in scans:
        owned.update(id(m) for m in fs.memories)
        owned.update(id(p) for p in fs.problems)

    def memory(m: Memory) -> tuple[Any, ...]:
        values = _values(m, m.body if bodies else None, _fields_as_stored(m))
        if id(m) not in owned or m.vault_root is not root:
            return (Memory, values)
        return (Memory, _without_root(values))

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
    pickler.dispatch_table = rows_table((fs,), root, bodies)
    pickler.dump(fs)
    return out.getvalue()


def make_zdict(raws: list[bytes]) -> bytes:
    """A dictionary for the rows that follow `raws` (some rows' raw pickles; they are alike).

    Trained by zstd on up to `ZDICT_ROWS` of them; too few or too small
    samples to train on give their raw bytes as the dictionary instead
    (zstd tells the two kinds apart by the trained one's magic number).
    """
    samples: list[bytes | bytearray | memoryview] = list(raws[:ZDICT_ROWS])
    try:
        return zstandard.train_dictionary(ZDICT_BYTES, samples).as_bytes()
    except zstandard.ZstdError:
        return b"".join(raws[:ZDICT_ROWS])[-ZDICT_BYTES:]


class _Codecs(threading.local):
    """This thread's compressor and decompressor per dictionary (neither may be shared
    between threads; setting a dictionary up costs more than a row)."""

    def __init__(self) -> None:
        self.by_zdict: dict[bytes, tuple[zstandard.ZstdCompressor, zstandard.ZstdDecompressor]] = {}


_CODECS = _Codecs()
#: Dictionaries a thread keeps set up (a process has one per open store).
_KEEP = 16


def _codecs(zdict: bytes) -> tuple[zstandard.ZstdCompressor, zstandard.ZstdDecompressor]:
    kept = _CODECS.by_zdict
    pair = kept.get(zdict)
    if pair is None:
        if len(kept) >= _KEEP:
            kept.clear()
        data = zstandard.ZstdCompressionDict(zdict) if zdict else None
        pair = kept[zdict] = (
            zstandard.ZstdCompressor(
                level=ZSTD_LEVEL, dict_data=data, write_checksum=True, write_dict_id=False
            ),
            zstandard.ZstdDecompressor(dict_data=data),
        )
    return pair


def compress(raw: bytes, zdict: bytes) -> bytes:
    """A row's raw pickle compressed with the store's dictionary (b"": none)."""
    try:
        return _codecs(zdict)[0].compress(raw)
    except zstandard.ZstdError as exc:  # the stored dictionary is damaged
        raise StoreCorrupt(f"unusable row dictionary ({exc})") from exc


def decompress(blob: bytes, zdict: bytes) -> bytes:
    """A row blob's raw pickle (StoreCorrupt when its checksum, length or framing is wrong)."""
    try:
        return _codecs(zdict)[1].decompress(blob, allow_extra_data=False)
    except zstandard.ZstdError as exc:  # a damaged row: never trust any of it
        raise StoreCorrupt(f"unreadable row ({type(exc).__name__})") from exc


#: Classes rows name, as looked up once (`_RowUnpickler`).
_CLASSES: dict[tuple[str, str], Any] = {}


class _RowUnpickler(pickle.Unpickler):
    """`pickle.loads` with each class looked up once per process.

    The C unpickler imports a row's module again for every class it names
    (five a row: FileScan, Memory, datetime's three), ~1 us each: about a
    tenth of decoding a warm start's 100k rows.
    """

    def find_class(self, module: str, name: str) -> Any:
        key = (module, name)
        found = _CLASSES.get(key)
        if found is None:
            found = _CLASSES[key] = super().find_class(module, name)
        return found


def unpickle_scan(raw: bytes, root: Path) -> FileScan:
    """A row's raw pickle back into a FileScan whose memories have no body yet."""
    try:
        fs = _RowUnpickler(io.BytesIO(raw)).load()
    except Exception as exc:  # a damaged row: never trust any of it
        raise StoreCorrupt(f"unreadable row ({type(exc).__name__})") from exc
    if not isinstance(fs, FileScan):
        raise StoreCorrupt("a file row holds no FileScan")
    return with_root(fs, root)


def with_root(fs: FileScan, root: Path) -> FileScan:
    """`fs` with the vault root its row left out set again on its memories and problems."""
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
    "rows_table",
    "unpickle_scan",
    "with_root",
]
