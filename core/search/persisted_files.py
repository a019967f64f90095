"""Which files, as which bytes, a persisted search index was made from: one row per vault.

Why one row of packed blobs and not a row per file: the index used to keep
(vault, path, sha256 as hex text) per file (16 MB at 100k files), and a
search had to open every vault's store and fetch and hash 100k rows of it
to learn that nothing changed (0.4-0.8 s).  Now a vault's row holds:

- ``names``: every stamped file's path (UTF-8, surrogateescape), in the
  order of the vault's stamps (the scan's order, which is the adapter's
  listing order), joined by NUL (no path holds one), zstd-packed (`core.store.blobs`);
- ``stamps``: their ``(size, mtime_ns, ctime_ns, inode)`` as native int64,
  zstd-packed: a fresh search stats the listed files in the listing's order
  and compares the two byte strings (`core.store.statwalk`);
- ``shas``: the first `SHA_BYTES` bytes of each file's sha256, which tell
  the files that changed when the catalog updates the index and check that
  a file still holds the bytes a body is read from;
- ``racy``: how many stamps were taken within the racy window of their
  file's mtime; such a stamp does not prove the bytes are the same, so a
  search then opens the catalog (which verifies them by content).

The store of the vault is not needed at all to serve an unchanged vault.

Beside it, ``listed_folders`` keeps, per vault, the folders a listing
looked at when it last gave exactly the manifest's names, with their stamps
(`core.formats.listed_folders`) and the digest of the manifest row they
prove: while they all hold, a search need not list the vault again.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass

from ..formats.files import Listing
from ..formats.listed_folders import FolderStamp
from ..store import blobs
from ..store.stamps import FileStamp
from ..store.statwalk import signed_inode

#: Bytes of each sha256 kept: a changed file keeping its first 16 bytes is a
#: 2^-128 event; the whole digest would add 1.6 MB at 100k files.
SHA_BYTES = 16
_SEP = "\0"

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS manifest (vault INTEGER PRIMARY KEY, names BLOB NOT NULL,"
    " stamps BLOB NOT NULL, shas BLOB NOT NULL, racy INTEGER NOT NULL)"
)
FOLDERS_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS listed_folders (vault INTEGER PRIMARY KEY,"
    " manifest BLOB NOT NULL, folders TEXT NOT NULL)"
)


def sha_prefix(sha256_hex: str) -> bytes:
    """The part of a hex sha256 the manifest keeps."""
    return bytes.fromhex(sha256_hex[: 2 * SHA_BYTES])


@dataclass(slots=True)
class Manifest:
    """One vault's files as indexed (see the module doc)."""

    names: list[str]
    #: Native int64 bytes, four per file, in `names` order.
    stamps: bytes
    #: SHA_BYTES per file, in `names` order.
    shas: bytes
    racy: int
    #: What identifies this manifest row (its packed names and stamps).
    digest: bytes = b""

    def sha_of(self) -> dict[str, bytes]:
        """path -> sha prefix."""
        n = SHA_BYTES
        return {rel: self.shas[i * n : (i + 1) * n] for i, rel in enumerate(self.names)}


def _key(rel: str) -> bytes:
    return rel.encode("utf-8", "surrogateescape")


def pack(stamps: Mapping[str, FileStamp]) -> tuple[bytes, bytes, bytes, int]:
    """(names, stamps, shas, racy) of a vault's stamps, as the ``manifest`` row holds them."""
    from array import array

    flat: array[int] = array("q")
    shas = bytearray()
    racy = 0
    for stamp in stamps.values():
        flat.extend((stamp.size, stamp.mtime_ns, stamp.ctime_ns, signed_inode(stamp.inode)))
        shas += sha_prefix(stamp.sha256)
        racy += stamp.racy
    names = _key(_SEP.join(stamps))
    return (
        blobs.pack(names),
        blobs.pack(flat.tobytes()),
        bytes(shas),
        racy,
    )


def read(conn: sqlite3.Connection, number: int) -> Manifest | None:
    """Vault `number`'s manifest (None when there is none)."""
    row = conn.execute(
        "SELECT names, stamps, shas, racy FROM manifest WHERE vault = ?", (number,)
    ).fetchone()
    if row is None:
        return None
    names_blob, stamps_blob, shas, racy = row
    text = blobs.unpack(names_blob).decode("utf-8", "surrogateescape")
    names = text.split(_SEP) if text else []
    flat = blobs.unpack(stamps_blob)
    if len(flat) != 32 * len(names) or len(shas) != SHA_BYTES * len(names):
        raise ValueError("search index manifest does not add up")
    return Manifest(names, flat, bytes(shas), int(racy), digest_of(names_blob, stamps_blob))


def digest_of(names_blob: bytes, stamps_blob: bytes) -> bytes:
    """What identifies a manifest row: a hash of its packed names and stamps."""
    return hashlib.blake2b(bytes(names_blob) + bytes(stamps_blob), digest_size=16).digest()


def read_folders(
    conn: sqlite3.Connection, number: int, manifest: Manifest
) -> dict[str, FolderStamp] | None:
    """The folders last listed for vault `number` while its files were exactly `manifest`'s."""
    try:
        row = conn.execute(
            "SELECT manifest, folders FROM listed_folders WHERE vault = ?", (number,)
        ).fetchone()
    except sqlite3.OperationalError:  # an index written before the table existed
        return None
    if row is None or bytes(row[0]) != manifest.digest:
        return None
    return {rel: None if st is None else tuple(st) for rel, st in json.loads(row[1]).items()}


def write_folders(
    conn: sqlite3.Connection, number: int, digest: bytes, folders: dict[str, FolderStamp]
) -> None:
    """Keep the folders a listing that gave exactly the names of manifest `digest` looked at."""
    conn.execute(
        "INSERT OR REPLACE INTO listed_folders (vault, manifest, folders) VALUES (?, ?, ?)",
        (number, digest, json.dumps(folders)),
    )


def folders_proving(
    listing: Listing | None, stamps: Mapping[str, FileStamp]
) -> dict[str, FolderStamp] | None:
    """The folders `listing` looked at, if its names are exactly the stamped files, in order."""
    if listing is None or listing.folders is None or len(listing.names) != len(stamps):
        return None
    return listing.folders if listing.names == list(stamps) else None


__all__ = [
    "FOLDERS_SCHEMA",
    "SCHEMA",
    "SHA_BYTES",
    "Manifest",
    "digest_of",
    "folders_proving",
    "pack",
    "read",
    "read_folders",
    "sha_prefix",
    "write_folders",
]
