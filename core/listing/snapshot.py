"""The list rows of a vault, kept in its store so a warm start can show them all at once.

At 100,000 memories a warm start spends ~10 s before its rows are listed:
every stored memory is decoded (~6 s), the vault linked and each row's decay
computed.  The rows themselves are small and need none of that to be shown,
so after each full load the front end keeps them (`save_rows`) beside the
store's file rows (`core.store.files.put_blobs`: a store discarded takes them
along), as columns of plain values, and the next start lists them
(`stored_rows`) while the vault loads, to be replaced by the linked rows.

They are early rows: what the store held when they were kept.  A row is
shown only when its file's sha256 in the store is still the one it was
computed from, and only at the same `as_of` (decay columns depend on it)
and code (`rows_code`); new files' rows come with the linked ones.  Such a
row has no `memory` (nor `info`): `MemoryRow.pending` says so, and the front
ends wait for the linked row before opening or changing it.  Invalid items
are not kept (they come with the linked rows).

When the vault turns out to be exactly what the rows were made from (every
file's sha256, the date and the code: the seal `save_rows` wrote), the kept
rows *are* its linked rows: `KeptRows.matching` pairs them with the linked
memories, and a front end gives each row its memory instead of computing
100k rows again and swapping them on screen (at 100k: ~1.1 s of decay
passes and ~0.8 s of list updates saved on every unchanged warm start).
Their `info` is worked out when asked (`MemoryRow.full_info`).
"""

from __future__ import annotations

import contextlib
import hashlib
import pickle
import sys
import zlib
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from ..decay import decay_of
from ..model import Memory
from ..safe_io import read_regular
from ..scan.progress import quiet_gc
from ..scan.stored import code_fingerprint
from ..scan.vault import Vault
from ..store.files import put_blobs
from ..store.reader import StoreReader
from .rows import MemoryRow, problem_row

#: The store blobs the rows are kept in, and a digest of what they were made from.
BLOB = "list-rows"
KEY_BLOB = "list-rows-key"
VERSION = 2
#: Share of a vault's rows a start must have shown from the kept ones for
#: them to be left as they are.
FRESH_ENOUGH = 0.98
#: Each kept row's fields, in this order (the rest are derived or not kept).
COLUMNS = (
    "id",
    "title",
    "kind",
    "tags",
    "health",
    "status",
    "strength",
    "importance",
    "confidence",
    "when",
    "when_key",
    "expires_on",
    "order",
    "decay_error",
)
_codes: dict[str, str] = {}


def rows_code(format_id: str) -> str:
    """sha256 over what decides a row: the store's code, the rows and decay modules, the format."""
    found = _codes.get(format_id)
    if found is None:
        digest = hashlib.sha256(f"v{VERSION}:{code_fingerprint(format_id)}".encode())
        sources = [Path(__file__).with_name("rows.py"), Path(__file__).with_name("snapshot.py")]
        decay_module = sys.modules.get(decay_of.__module__)
        if decay_module is not None and decay_module.__file__:
            sources.append(Path(decay_module.__file__))
        for path in sources:
            with contextlib.suppress(OSError):
                digest.update(path.name.encode() + b"\0" + read_regular(path))
        found = _codes[format_id] = digest.hexdigest()
    return found


def save_rows(vault: Vault, rows: list[MemoryRow], as_of: date, *, shown: int = 0) -> bool:
    """Keep the vault's memory rows at `as_of` in its store; False if not kept.

    Not rewritten when the kept ones were made from the same files (every
    file's sha256: the rows are a function of them) at the same date and by
    the same code: a warm start with nothing changed writes nothing.  Nor
    when this start `shown` nearly all of them (FRESH_ENOUGH): the rows of
    the few files changed since come as the vault is read, and rewriting
    ~7 MB at 100k memories after every start with one changed file cost ~2 s.
    """
    if shown and shown >= FRESH_ENOUGH * sum(1 for r in rows if r.memory is not None):
        return True
    code = rows_code(vault.format)
    key = _key(vault, code, as_of)
    store_code = code_fingerprint(vault.format)
    reader = StoreReader.open(vault.root, vault.format, store_code)
    if reader is not None:
        try:
            # The key, and the digest of the rows blob it was written with
            # (a damaged blob is written again).
            seal, blob = reader.blob(KEY_BLOB), reader.blob(BLOB)
            if blob is not None and seal == key + hashlib.sha256(blob).digest():
                return True
        finally:
            reader.close()
    kept: list[MemoryRow] = []
    files: dict[str, int] = {}
    shas: list[bytes] = []
    row_file: list[int] = []
    for row in rows:
        m = row.memory
        stamp = vault.stamps.get(m.path) if m is not None else None
        if m is None or stamp is None:
            continue
        at = files.get(m.path)
        if at is None:
            at = files[m.path] = len(shas)
            shas.append(bytes.fromhex(stamp.sha256))
        row_file.append(at)
        kept.append(row)
    doc = {
        "version": VERSION,
        "code": code,
        "as_of": as_of.isoformat(),
        "files": list(files),
        "shas": shas,
        "row_file": row_file,
        "columns": {name: [getattr(r, name) for r in kept] for name in COLUMNS},
    }
    with quiet_gc():
        # Level 1: 3x faster than 6 for 5% more bytes (100k rows: ~7 MB).
        blob = zlib.compress(pickle.dumps(doc, protocol=pickle.HIGHEST_PROTOCOL), 1)
    seal = key + hashlib.sha256(blob).digest()
    return put_blobs(vault.root, vault.format, store_code, {BLOB: blob, KEY_BLOB: seal})


def _key(vault: Vault, code: str, as_of: date) -> bytes:
    """What the rows were made from: the code, the date and every file's sha256."""
    digest = hashlib.sha256(f"{VERSION}\0{code}\0{as_of.isoformat()}".encode())
    for rel in sorted(vault.stamps):
        digest.update(b"\0" + rel.encode("utf-8", "surrogateescape") + b"\0")
        digest.update(vault.stamps[rel].sha256.encode("ascii"))
    return digest.digest()


@dataclass(slots=True)
class KeptRows:
    """The rows a vault's store kept (`kept_rows`), and what they were made from."""

    rows: list[MemoryRow]
    #: The digest of the files, date and code the rows were made from (`_key`);
    #: None when unknown (then they are never taken for linked rows).
    key: bytes | None = None
    #: Every kept row is in `rows` (none dropped for a changed file).
    whole: bool = False

    def matching(self, vault: Vault, as_of: date) -> list[Memory] | None:
        """The linked vault's memories, one per row in order, if the rows are its rows.

        That is: the vault's files, `as_of` and the code are what the rows
        were made from, every row was kept, and the ids agree one by one.
        None otherwise (the caller computes the rows: `rows_for_vault`).
        """
        memories = vault.memories
        if (
            self.key is None
            or not self.whole
            or len(memories) != len(self.rows)
            or any(r.as_of != as_of for r in self.rows[:1])
            or self.key != _key(vault, rows_code(vault.format), as_of)
        ):
            return None
        if any(r.id != m.id for r, m in zip(self.rows, memories, strict=True)):
            return None
        return memories

    def linked(self, vault: Vault) -> list[MemoryRow]:
        """The vault's full row list once `matching` paired it: these rows, then invalid items.

        The rows are not changed here: a front end that shows them gives
        each its memory on its own thread (`attach`).
        """
        base = len(self.rows)
        name = vault.name
        return [*self.rows, *(problem_row(name, p, base + i) for i, p in enumerate(vault.problems))]


def attach(rows: list[MemoryRow], memories: list[Memory]) -> None:
    """Give kept rows their linked memories (`KeptRows.matching`), pairwise."""
    for row, memory in zip(rows, memories, strict=False):
        row.memory = memory


def stored_rows(vault: Vault, as_of: date) -> list[MemoryRow]:
    """The kept rows whose files the store still holds as they were, at `as_of` ([] if none)."""
    return kept_rows(vault, as_of).rows


def kept_rows(vault: Vault, as_of: date) -> KeptRows:
    """`stored_rows`, with what a front end needs to take them for the linked rows later."""
    none = KeptRows([])
    reader = StoreReader.open(vault.root, vault.format, code_fingerprint(vault.format))
    if reader is None:
        return none
    try:
        blob = reader.blob(BLOB)
        doc = _doc(blob)
        if (
            doc is None
            or doc.get("code") != rows_code(vault.format)
            or doc.get("as_of") != as_of.isoformat()
        ):
            return none
        seal = reader.blob(KEY_BLOB)
        now = reader.shas()
    finally:
        reader.close()
    if now is None:
        return none
    key: bytes | None = None
    if blob is not None and seal is not None and seal[32:] == hashlib.sha256(blob).digest():
        key = seal[:32]
    try:
        with quiet_gc():  # 100k rows hold no cycles: the collector's passes cost a third
            rows = _rows(vault, doc, now, as_of)
        return KeptRows(rows, key, len(rows) == len(doc["row_file"]))
    except (KeyError, TypeError, ValueError, IndexError):
        return none  # a blob of another shape: only slower


def _rows(vault: Vault, doc: dict[str, Any], now: dict[str, bytes], as_of: date) -> list[MemoryRow]:
    pairs = zip(doc["files"], doc["shas"], strict=True)
    same = [now.get(rel) == sha for rel, sha in pairs]
    cols = doc["columns"]
    name, root, fmt = vault.name, vault.root, vault.format
    out: list[MemoryRow] = []
    add = out.append
    for file_at, *values in zip(doc["row_file"], *(cols[c] for c in COLUMNS), strict=True):
        if not same[file_at]:
            continue
        # COLUMNS' order; MemoryRow's fields are given by position (faster at 100k).
        ident, title, kind, tags, health, status, strong, imp, conf, when, key, exp, at, e = values
        add(
            MemoryRow(
                name,
                root,
                fmt,
                ident,
                title,
                kind,
                tags,
                health,
                status,
                strong,
                imp,
                conf,
                when,
                key,
                exp,
                None,
                None,
                None,
                at,
                "\n".join((title, " ".join(tags), ident)).lower(),
                e,
                as_of,
            )
        )
    return out


def _doc(blob: bytes | None) -> dict[str, Any] | None:
    """The kept document, or None when absent, damaged or of another version.

    Pickle is safe here for the reason the store's rows are (`core.store.db`):
    our own file in a private folder, checked by the store's owner and mode.
    """
    if blob is None:
        return None
    try:
        with quiet_gc():
            doc = pickle.loads(zlib.decompress(blob))
    except Exception:  # a damaged blob is only a slower start
        return None
    if not isinstance(doc, dict) or doc.get("version") != VERSION:
        return None
    return doc


__all__ = ["BLOB", "KeptRows", "attach", "kept_rows", "rows_code", "save_rows", "stored_rows"]
