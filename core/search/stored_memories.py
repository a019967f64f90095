"""The memories of a persisted index's rows, as the catalog linked them, decoded on demand.

A search that finds every vault unchanged (`core.search.fresh`) never opens
the catalog: it needs the memories of its top hits only.  So the persisted
index keeps each row's memory as linked (relations resolved, state
applied), pickled without its body like a store row (`core.store.codec`)
and compressed with a dictionary made from the first rows; its body is
read from its file on first use (`core.store.bodies`), checked against the
file's sha256, once per file for all its memories (a Dream Cycle file
holds hundreds: a phrase check may read many of them).

Linking makes a memory depend on other files: when files change, the
memories of new rows are written, and so are those whose relations name a
memory id or path that appeared or went away (`affected`); a change to a
file that changes the whole vault rebuilds the index anyway.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from itertools import zip_longest
from pathlib import Path
from typing import overload

from ..formats import adapter_for
from ..model import RAW_BODY, FileScan, Memory
from ..safe_io import read_regular
from ..store.bodies import SINGLE_READS
from ..store.codec import (
    compress,
    decode_scan,
    has_body,
    make_zdict,
    pickle_scan,
    unpickle_scan,
)
from ..store.reader import StoreReader
from .persisted_files import SHA_BYTES, Manifest
from .stored_refs import StaleRow, StoreRefs, open_reader, parse_ref, row_hash


def memory_blobs(
    memories: Iterable[tuple[int, Memory]], zdict: bytes, refs: StoreRefs | None = None
) -> Iterator[tuple[int, bytes]]:
    """(slot, reference to the store row or compressed copy) per memory (`stored_refs`)."""
    for slot, m in memories:
        ref = None if refs is None else refs.ref(m)
        if ref is not None:
            yield slot, ref
            continue
        # A memory linking made (not its file's own) keeps its body: read
        # from the file alone, an erased record would show its text again.
        inline = has_body(m) and (refs is None or not refs.as_scanned(m))
        raw = pickle_scan(FileScan(rel=m.path, memories=[m]), m.vault_root, bodies=inline)
        yield slot, compress(raw, zdict)


def zdict_of(memories: Sequence[Memory]) -> bytes:
    """A preset dictionary from a few memories of every format, interleaved.

    The dictionary is the last `ZDICT_BYTES` of the sample, about nine
    memories: taken from the first rows alone (one vault, one format) it
    compressed the other formats' memories barely better than no dictionary.
    """
    by_format: dict[str, list[Memory]] = {}
    for m in memories:
        group = by_format.setdefault(m.format, [])
        if len(group) < 16:
            group.append(m)
    sample = [m for row in zip_longest(*by_format.values()) for m in row if m is not None]
    raws = [pickle_scan(FileScan(rel=m.path, memories=[m]), m.vault_root) for m in sample[:64]]
    return make_zdict(raws)


def affected(
    memories: Iterable[tuple[int, Memory]], ids: set[str], paths: set[str]
) -> list[tuple[int, Memory]]:
    """Memories whose relations name one of these ids or paths (their links may have changed)."""
    out: list[tuple[int, Memory]] = []
    for slot, m in memories:
        for r in m.relations:
            if (
                r.target in ids
                or r.target in paths
                or (r.resolved is not None and r.resolved in ids)
            ):
                out.append((slot, m))
                break
    return out


class _FileBodies:
    """The bodies of one file's memories, read from the file when the first is asked for.

    As `core.store.bodies.FileBodies`, but for memories decoded one at a
    time: the file is parsed once and its bodies kept for the others.
    """

    __slots__ = ("bodies", "data", "format_id", "intact", "rel", "root", "sha256", "singles")

    def __init__(self, root: Path, rel: str, format_id: str, sha256: bytes) -> None:
        self.root = root
        self.rel = rel
        self.format_id = format_id
        self.sha256 = sha256
        self.bodies: dict[str, str] | None = None
        #: The file's bytes once read and checked (b"": changed or unreadable).
        self.data: bytes | None = None
        self.singles = 0
        #: The file's bytes were read and are the ones indexed (False: changed or unreadable).
        self.intact = False

    def fill(self, memory: Memory) -> None:
        if self.bodies is None:
            one = self._one(memory) if self.singles < SINGLE_READS else None
            if one is not None:
                RAW_BODY.__set__(memory, one)
                self.singles += 1
                return
            self.bodies = self._read()
        # A file changed since it was indexed no longer holds the body: "".
        RAW_BODY.__set__(memory, self.bodies.get(memory.id, ""))

    def _bytes(self) -> bytes:
        if self.data is None:
            self.data = b""
            with contextlib.suppress(OSError):
                data = read_regular(self.root / self.rel)
                digest = hashlib.sha256(data).digest()
                if self.sha256 and digest[: len(self.sha256)] == self.sha256:
                    self.data = data
                    self.intact = True
        return self.data

    def _one(self, memory: Memory) -> str | None:
        """Only this memory's body, when its format can read it alone (a big file's section)."""
        data = self._bytes()
        if not data:
            return None
        adapter = adapter_for(self.format_id)
        found = adapter.bodies_of(self.root, self.rel, data, [memory])
        return None if found is None else found.get(memory.id)

    def _read(self) -> dict[str, str]:
        data = self._bytes()
        if not data:
            return {}
        path = self.root / self.rel
        fs = adapter_for(self.format_id).scan_file(self.root, path, data)
        self.data = None  # parsed: the bytes are no longer needed
        return {m.id: m.body for m in fs.memories}


class StoredMemories(Sequence[Memory]):
    """Row -> memory, decoded from the ``memories`` table when first asked for."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        rows: int,
        roots: list[Path],
        formats: list[str],
        slot_vault: list[int],
        zdict: bytes,
        manifests: list[Manifest],
    ) -> None:
        self._conn = conn
        self._rows = rows
        self._roots = roots
        self._formats = formats
        self._slot_vault = slot_vault
        self._zdict = zdict
        self._decoded: dict[int, Memory] = {}
        #: Rows kept with their bodies (`memory_blobs`): no file is read for them.
        self._inline: set[int] = set()
        self._files: dict[tuple[int, str], _FileBodies] = {}
        self._manifests = manifests
        #: Per vault, path -> place in its manifest (built when a body is first needed).
        self._places: dict[int, dict[str, int]] = {}
        #: Per vault, its store opened read-only when a reference is first read.
        self._readers: dict[int, StoreReader | None] = {}

    def close(self) -> None:
        """Close the vault stores opened for references."""
        for reader in self._readers.values():
            if reader is not None:
                reader.close()
        self._readers = {}

    def __len__(self) -> int:
        return self._rows

    @overload
    def __getitem__(self, row: int) -> Memory: ...

    @overload
    def __getitem__(self, row: slice) -> Sequence[Memory]: ...

    def __getitem__(self, row: int | slice) -> Memory | Sequence[Memory]:
        if isinstance(row, slice):
            return [self[r] for r in range(*row.indices(self._rows))]
        if row < 0:
            row += self._rows
        m = self._decoded.get(row)
        if m is None:
            m = self._decoded[row] = self._decode(row)
        return m

    def _decode(self, row: int) -> Memory:
        number = self._slot_vault[row]
        found = self._conn.execute("SELECT blob FROM memories WHERE slot = ?", (row,)).fetchone()
        if number < 0 or found is None:
            raise IndexError(f"no memory at row {row}")
        root = self._roots[number]
        ref = parse_ref(found[0])
        if ref is None:
            m = decode_scan(found[0], root, self._zdict).memories[0]
        else:
            m = self._referenced(number, *ref)
        if has_body(m):
            self._inline.add(row)
            return m  # kept with its body (see `memory_blobs`)
        source = self._files.get((number, m.path))
        if source is None:
            source = _FileBodies(root, m.path, self._formats[number], self._sha(number, m.path))
            self._files[(number, m.path)] = source
        m.body_source = source  # type: ignore[attr-defined]  # the slot of model._LazyBody
        return m

    def live(self, row: int) -> bool:
        """Row `row` holds a memory (a changed memory's old row is dead)."""
        return self._slot_vault[row] >= 0

    def body_intact(self, row: int) -> bool:
        """Row `row`'s body was read from the very file it was indexed from.

        Why: a file changed after the freshness check gives the body "" (a
        search shows no snippet); a caller printing the body must know.
        """
        m = self[row]
        if row in self._inline:
            return True  # kept with its body: the file is not read
        m.body  # noqa: B018  (read it: that checks the file)
        source = self._files.get((self._slot_vault[row], m.path))
        return source is not None and source.intact

    def _referenced(self, number: int, expected: bytes, rowid: int) -> Memory:
        """The memory a reference names, from the vault's store row (`stored_refs`)."""
        if number not in self._readers:
            self._readers[number] = open_reader((str(self._roots[number]), self._formats[number]))
        reader = self._readers[number]
        raw = None if reader is None else reader.raw_by_id(rowid)
        if raw is None or row_hash(raw) != expected:
            raise StaleRow(f"store row {rowid} changed since the search index was saved")
        fs = unpickle_scan(raw, self._roots[number])
        if len(fs.memories) != 1:
            raise StaleRow(f"store row {rowid} holds more than one memory")
        return fs.memories[0]

    def _sha(self, number: int, rel: str) -> bytes:
        """The sha256 prefix `rel` of vault `number` was indexed with (b"": not indexed)."""
        manifest = self._manifests[number]
        places = self._places.get(number)
        if places is None:
            names = manifest.names
            places = self._places[number] = dict(zip(names, range(len(names)), strict=True))
        at = places.get(rel)
        if at is None:
            return b""
        return manifest.shas[at * SHA_BYTES : (at + 1) * SHA_BYTES]
