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

A vault that changed since its rows were kept gets a patch, not a rewrite
(`PATCH_BLOB`): the rows of the changed, new or moved files, and runs saying
which kept rows the others are, in order.  It is sealed like the rows (the
files, date and code it was made for, and the rows it applies to), so the
next start takes the kept rows with their patch for linked rows again.  At
100k memories with one file changed: a patch of a few hundred bytes, where
the ~7 MB of rows written whole took ~2 s.  A patch holding more than
PATCH_SHARE of the rows is not made: the rows are written whole.
"""

from __future__ import annotations

import contextlib
import hashlib
import pickle
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from operator import attrgetter
from pathlib import Path
from typing import Any

from ..decay import decay_of
from ..model import Memory
from ..safe_io import read_regular
from ..scan.progress import quiet_gc
from ..scan.stored import code_fingerprint
from ..scan.vault import Vault
from ..store import blobs
from ..store.files import FILES_TOKEN, put_blob_if_files, put_blobs
from ..store.reader import StoreReader
from .rows import MemoryRow, problem_row
from .sharing import share_with_memories, shared

#: The store blobs the rows are kept in, and a digest of what they were made from.
BLOB = "list-rows"
KEY_BLOB = "list-rows-key"
#: The patch of the kept rows for a vault changed since, and its seal: the
#: digest of what the patched rows were made from, the rows blob's sha256
#: and the patch's own.  Empty: no patch.
PATCH_BLOB = "list-rows-patch"
PATCH_KEY_BLOB = "list-rows-patch-key"
#: The store's files token (`core.store.files.FILES_TOKEN`) and the digest
#: of what the kept rows (with their patch) were made from, written when the
#: store's files were checked to be exactly those: while the token stays, a
#: start takes every kept row's file as unchanged without reading 100k
#: file rows (0.4-0.6 s at 100k).
FILES_BLOB = "list-rows-files"
VERSION = 4
#: The largest share of a vault's rows a patch holds; more, and the rows are written whole.
PATCH_SHARE = 0.1
#: ... but a small vault's patch may always hold this many.
PATCH_MIN = 64
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
#: Columns whose values repeat across rows, kept as one object per value
#: (`sharing.shared`; at 100k: 11 kinds, ~500 ages, ~130 tags in ~38k tag
#: sets, titles written many times over).  Not the numbers: pickle writes
#: each float or int again anyway.
_SHARED = frozenset(("title", "kind", "tags", "health", "status", "when", "when_key"))
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


def save_rows(vault: Vault, rows: list[MemoryRow], as_of: date) -> bool:
    """Keep the vault's memory rows at `as_of` in its store; False if not kept.

    Not rewritten when the kept ones (with their patch) were made from the
    same files (every file's sha256: the rows are a function of them) at the
    same date and by the same code: a warm start with nothing changed writes
    nothing.  When the kept rows are of the same date and code but the vault
    changed, only a patch is written (`PATCH_BLOB`), unless it would hold
    more than PATCH_SHARE of the rows.  Then the store's files are sealed
    for them (`FILES_BLOB`) if they are still the ones the rows were made from.
    """
    code = rows_code(vault.format)
    key = _key(vault, code, as_of)
    store_code = code_fingerprint(vault.format)
    if not _save_rows(vault, rows, (key, code, store_code), as_of):
        return False
    _seal_files(vault, key, store_code)
    return True


def _seal_files(vault: Vault, key: bytes, store_code: str) -> None:
    """Write `FILES_BLOB` for rows of `key` unless it is there (see FILES_BLOB)."""
    reader = StoreReader.open(vault.root, vault.format, store_code)
    if reader is None:
        return
    try:
        token, sealed = reader.blob(FILES_TOKEN), reader.blob(FILES_BLOB)
    finally:
        reader.close()
    if token is not None and sealed == token + key:
        return
    files = {
        rel.encode("utf-8", "surrogateescape"): bytes.fromhex(stamp.sha256)
        for rel, stamp in vault.stamps.items()
    }
    put_blob_if_files(vault.root, vault.format, store_code, FILES_BLOB, files, key)


def _save_rows(
    vault: Vault, rows: list[MemoryRow], codes: tuple[bytes, str, str], as_of: date
) -> bool:
    """`save_rows` without the files seal; `codes`: the rows' key, code and store code."""
    key, code, store_code = codes
    kept, rels, shas = _memory_rows(vault, rows)
    base: dict[str, Any] | None = None
    base_digest = b""
    reader = StoreReader.open(vault.root, vault.format, store_code)
    if reader is not None:
        try:
            seal, blob = reader.blob(KEY_BLOB), reader.blob(BLOB)
            patch_seal = reader.blob(PATCH_KEY_BLOB)
            patch_blob = reader.blob(PATCH_BLOB) if patch_seal else None
        finally:
            reader.close()
        # A damaged rows blob (its digest is in the seal) is written again.
        if blob is not None and seal is not None and seal[32:] == _sha(blob):
            base_digest = seal[32:]
            if seal[:32] == key:
                if patch_seal:  # the vault is back as the rows were made: no patch
                    return put_blobs(vault.root, vault.format, store_code, _NO_PATCH)
                return True
            if patch_seal and patch_blob and patch_seal == key + base_digest + _sha(patch_blob):
                return True  # the patch was made for these files, and is whole
            base = _doc(blob)
    if base is not None and base.get("code") == code and base.get("as_of") == as_of.isoformat():
        with quiet_gc():  # 100k small tuples and lists, no cycles: the passes cost seconds
            patch = _patch(base, kept, rels, shas)
        if patch is not None:
            runs, added = patch
            columns = _columns(
                [kept[i] for i in added], [rels[i] for i in added], [shas[i] for i in added], added
            )
            doc = {"version": VERSION, "runs": runs, **columns}
            blob = _pack(doc)
            patch_seal = key + base_digest + _sha(blob)
            blobs = {PATCH_BLOB: blob, PATCH_KEY_BLOB: patch_seal}
            return put_blobs(vault.root, vault.format, store_code, blobs)
    doc = {"version": VERSION, "code": code, "as_of": as_of.isoformat()}
    doc.update(_columns(kept, rels, shas, range(len(kept))))
    blob = _pack(doc)
    seal = key + _sha(blob)
    blobs = {BLOB: blob, KEY_BLOB: seal, **_NO_PATCH}
    return put_blobs(vault.root, vault.format, store_code, blobs)


#: The blobs that say there is no patch.
_NO_PATCH = {PATCH_BLOB: b"", PATCH_KEY_BLOB: b""}


def _memory_rows(
    vault: Vault, rows: list[MemoryRow]
) -> tuple[list[MemoryRow], list[str], list[bytes]]:
    """The rows of valid memories whose file the vault stamped, with that file and its sha256."""
    kept: list[MemoryRow] = []
    rels: list[str] = []
    shas: list[bytes] = []
    digests: dict[str, bytes] = {}
    for row in rows:
        m = row.memory
        stamp = vault.stamps.get(m.path) if m is not None else None
        if m is None or stamp is None:
            continue
        sha = digests.get(m.path)
        if sha is None:
            sha = digests[m.path] = bytes.fromhex(stamp.sha256)
        kept.append(row)
        rels.append(m.path)
        shas.append(sha)
    return kept, rels, shas


def _columns(
    rows: list[MemoryRow], rels: list[str], shas: list[bytes], places: Iterable[int]
) -> dict[str, Any]:
    """The rows as a document's columns, each row's file given by its place in `files`.

    A row's `order` is its place among the vault's memory rows (`places`),
    never read from the row: the UI thread renumbers the rows it lists
    (`MemoryList.extend`) while the load worker keeps them.
    """
    files: dict[str, int] = {}
    file_shas: list[bytes] = []
    row_file: list[int] = []
    for rel, sha in zip(rels, shas, strict=True):
        at = files.get(rel)
        if at is None:
            at = files[rel] = len(file_shas)
            file_shas.append(sha)
        row_file.append(at)
    columns: dict[str, list[Any]] = {}
    for name in COLUMNS:
        if name == "order":
            columns[name] = list(places)
        elif name in _SHARED:
            columns[name] = shared([getattr(r, name) for r in rows])
        else:
            columns[name] = [getattr(r, name) for r in rows]
    return {"files": list(files), "shas": file_shas, "row_file": row_file, "columns": columns}


def _pack(doc: dict[str, Any]) -> bytes:
    with quiet_gc():
        # A zstd frame (`store.blobs`): at 100k rows (25 MB pickled) it unpacks
        # in ~45 ms where zlib took ~125 ms of every warm start, and is smaller.
        return blobs.pack(pickle.dumps(doc, protocol=pickle.HIGHEST_PROTOCOL))


#: The columns a kept row must agree on to stand for a row now (its place is the run's).
_SAME = tuple(c for c in COLUMNS if c != "order")


def _patch(
    base: dict[str, Any], rows: list[MemoryRow], rels: list[str], shas: list[bytes]
) -> tuple[list[int], list[int]] | None:
    """Runs over the kept rows and the patch's rows that give `rows`; None: write them whole.

    The patch's rows are given by their places in `rows`.

    A kept row stands for a row now when its file holds the same bytes, its
    id is the same and every kept field is equal (a row can depend on other
    files: comparing is what makes the patch exact).  Runs are flat pairs:
    (start, count) of kept rows, or (-1 - start, count) of the patch's rows.
    """
    limit = max(PATCH_MIN, int(PATCH_SHARE * len(rows)))
    files: list[str] = base["files"]
    base_shas: list[bytes] = base["shas"]
    cols = base["columns"]
    file_at = {rel: i for i, rel in enumerate(files)}
    # Each (file, id) of the kept rows, its rows last first (`pop` takes the first).
    where: dict[tuple[int, str], list[int]] = {}
    for i, place in zip(
        range(len(cols["id"]) - 1, -1, -1),
        reversed(list(zip(base["row_file"], cols["id"], strict=True))),
        strict=True,
    ):
        where.setdefault(place, []).append(i)
    kept_values = list(zip(*(cols[c] for c in _SAME), strict=True))
    values_now = list(map(attrgetter(*_SAME), rows))
    ident = _SAME.index("id")
    runs: list[int] = []
    added: list[int] = []
    for pos, (rel, sha, now) in enumerate(zip(rels, shas, values_now, strict=True)):
        at = file_at.get(rel)
        found = where.get((at, now[ident])) if at is not None and base_shas[at] == sha else None
        b = found.pop() if found else -1
        if b >= 0 and now == kept_values[b]:
            start = b
        else:
            if len(added) >= limit:
                return None
            start = -1 - len(added)
            added.append(pos)
        if runs and _run_end(runs) == start:
            runs[-1] += 1
        else:
            runs += [start, 1]
    return runs, added


def _run_end(runs: list[int]) -> int:
    """Where the last run would go on: the next kept row, or the next patch row."""
    start, count = runs[-2], runs[-1]
    return start + count if start >= 0 else start - count


def _sha(blob: bytes) -> bytes:
    return hashlib.sha256(blob).digest()


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
        share_with_memories(self.rows, memories)
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
            blob is None
            or doc is None
            or doc.get("code") != rows_code(vault.format)
            or doc.get("as_of") != as_of.isoformat()
        ):
            return none
        seal = reader.blob(KEY_BLOB)
        patch_seal = reader.blob(PATCH_KEY_BLOB)
        patch_blob = reader.blob(PATCH_BLOB) if patch_seal else None
        key, patch = _effective(blob, seal, patch_seal, patch_blob)
        token, sealed = reader.blob(FILES_TOKEN), reader.blob(FILES_BLOB)
        # Every file as the rows were made from it: no need to read them.
        unchanged = key is not None and token is not None and sealed == token + key
        now = None if unchanged else reader.shas()
    finally:
        reader.close()
    if now is None and not unchanged:
        return none
    try:
        with quiet_gc():  # 100k rows hold no cycles: the collector's passes cost a third
            rows, count = _rows(vault, doc, now, as_of, patch)
        return KeptRows(rows, key, len(rows) == count)
    except (KeyError, TypeError, ValueError, IndexError):
        return none  # a blob of another shape: only slower


def _effective(
    blob: bytes, seal: bytes | None, patch_seal: bytes | None, patch_blob: bytes | None
) -> tuple[bytes | None, dict[str, Any] | None]:
    """The digest of what the kept rows were made from (None: unknown), and their patch."""
    if seal is None or seal[32:] != (digest := _sha(blob)):
        return None, None
    # The patch counts only for these very rows, and only whole (else the
    # rows as kept, for the files they were made from).
    if patch_seal and patch_blob and patch_seal[32:] == digest + _sha(patch_blob):
        patch = _doc(patch_blob)
        if patch is not None:
            return patch_seal[:32], patch
    return seal[:32], None


def _rows(
    vault: Vault,
    doc: dict[str, Any],
    now: dict[str, bytes] | None,
    as_of: date,
    patch: dict[str, Any] | None = None,
) -> tuple[list[MemoryRow], int]:
    """The kept rows (`patch` applied) whose files are as they were; and how many were kept.

    `now`: every file's sha256 in the store (None: each row's file is as it was).
    With a patch, a row's place is its place in the runs.
    """
    if patch is None:
        parts = [(doc, 0, len(doc["row_file"]))]
    else:
        runs = patch["runs"]
        parts = [
            (doc, a, n) if a >= 0 else (patch, -1 - a, n)
            for a, n in zip(runs[::2], runs[1::2], strict=True)
        ]
    same_of: dict[int, list[bool]] = {}
    name, root, fmt = vault.name, vault.root, vault.format
    out: list[MemoryRow] = []
    add = out.append
    pos = 0
    for src, start, count in parts:
        same = same_of.get(id(src))
        if same is None:
            if now is None:
                same = [True] * len(src["files"])
            else:
                pairs = zip(src["files"], src["shas"], strict=True)
                same = [now.get(rel) == sha for rel, sha in pairs]
            same_of[id(src)] = same
        cols = src["columns"]
        stop = start + count
        column_runs = (cols[c][start:stop] for c in COLUMNS)
        for file_at, *values in zip(src["row_file"][start:stop], *column_runs, strict=True):
            pos += 1
            if not same[file_at]:
                continue
            # COLUMNS' order; MemoryRow's fields are given by position (faster at 100k).
            ident, title, kind, tags, health, status, strong, imp, conf, when, key, exp, at, e = (
                values
            )
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
                    at if patch is None else pos - 1,
                    "\n".join((title, " ".join(tags), ident)).lower(),
                    e,
                    as_of,
                )
            )
    expected = sum(n for _src, _start, n in parts)
    return out, expected if pos == expected else -1


def _doc(blob: bytes | None) -> dict[str, Any] | None:
    """The kept document, or None when absent, damaged or of another version.

    Pickle is safe here for the reason the store's rows are (`core.store.db`):
    our own file in a private folder, checked by the store's owner and mode.
    """
    if blob is None:
        return None
    try:
        with quiet_gc():
            doc = pickle.loads(blobs.unpack(blob))
    except Exception:  # a damaged blob is only a slower start
        return None
    if not isinstance(doc, dict) or doc.get("version") != VERSION:
        return None
    return doc


__all__ = [
    "BLOB",
    "PATCH_BLOB",
    "KeptRows",
    "attach",
    "kept_rows",
    "rows_code",
    "save_rows",
    "stored_rows",
]
