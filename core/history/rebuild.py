"""Every version of a shared file, from the kept `versions` rows where it can be, else from git.

A Dream Cycle section or a JSON Lines record is found by inflating every
version of its file.  The first memory of a file read does it from git
(`cat-file --batch`, in the log's order, newest first) and keeps, beside the
memory's own parts, each version as the edits that turn the version after
it into it (`bytediff`: a few hundred bytes each) and the newest whole.
Any later memory of the same file, in this process or another, rebuilds the
versions from those rows (slices joined in C, no git) and extracts itself
from each with its format's `history_extract`, exactly as from git's bytes.

The rows are checked where it costs little: zlib (a whole version) and
the edits' own framing catch a damaged row, and each chain's first and last rebuilt
version are hashed as git hashes a blob and compared with its id, so a
wrong chain is dropped and read from git.  A version that cannot be rebuilt
(no row, a row whose base is not the version before it in this log) is read
from git with the rest.
"""

from __future__ import annotations

import hashlib
import itertools
import zlib
from collections.abc import Callable

from ..formats.adapter import FormatAdapter, HistoryScope
from . import bytediff
from .cache import HistoryCache, VersionRow
from .git import BlobReader, Repo

#: What a reading does with one version: its memory's part.
Extract = Callable[[bytes], bytes | None]


def blob_id(data: bytes, name: str) -> str:
    """The id git gives `data` as a blob (SHA-1, or SHA-256 when `name` is that long)."""
    algo = hashlib.sha256 if len(name) == 64 else hashlib.sha1
    h = algo(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


def pack_full(data: bytes) -> VersionRow:
    return (None, zlib.compress(data, 1))


def pack_edits(base: str, edits: list[bytediff.Edit]) -> VersionRow:
    return (base, bytediff.encode(edits))  # a few hundred bytes: not worth zlib's time


class _Rebuilt:
    """The versions rebuilt from rows, in order; what could not be is left to git."""

    def __init__(self) -> None:
        self.parts: dict[str, bytes | None] = {}
        self.unresolved: list[str] = []
        #: Versions rebuilt from a full row: a newer version read from git may replace it.
        self.fulls: dict[str, bytes] = {}


def _rebuild(
    order: list[str], rows: dict[str, VersionRow], wanted: set[str], extract: Extract
) -> _Rebuilt:
    """Walk `order` (newest first) through the rows; extract the wanted versions' parts.

    A chain runs from a full row through rows whose base is the version
    just before in `order`; its first and last versions are checked
    against their blob ids (a failed check drops the whole chain to git).
    The walk stops once every wanted version is done and the last one
    walked was rebuilt (after a new commit only the newest are wanted: the
    older versions are not rebuilt for nothing).
    """
    out = _Rebuilt()
    chain: list[str] = []
    prev: tuple[str, bytes] | None = None
    left = set(wanted)

    def close(last: tuple[str, bytes] | None) -> None:
        if chain and (last is None or blob_id(last[1], last[0]) != last[0]):
            out.unresolved.extend(chain)
            for name in chain:
                out.parts.pop(name, None)
        chain.clear()

    for name in order:
        row = rows.get(name)
        data: bytes | None = None
        try:
            if row is not None and row[0] is None:
                close(prev)
                data = zlib.decompress(row[1])
                if blob_id(data, name) != name:
                    data = None
                else:
                    out.fulls[name] = data
            elif row is not None and prev is not None and row[0] == prev[0]:
                data = bytediff.apply(prev[1], bytediff.decode(row[1]))
        except (zlib.error, ValueError):
            data = None
        left.discard(name)
        if data is None:
            close(prev)
            out.unresolved.append(name)
            prev = None
            continue
        chain.append(name)
        if name in wanted:
            out.parts[name] = extract(data)
        prev = (name, data)
        if not left:
            break
    close(prev)
    return out


class _Reading:
    """Versions read from git in order: parts extracted, each kept as edits of the one before."""

    def __init__(self, wanted: set[str], extract: Extract) -> None:
        self.wanted = wanted
        self.extract = extract
        self.parts: dict[str, bytes | None] = {}
        self.rows: dict[str, VersionRow] = {}
        self.newest: dict[str, bytes] = {}

    def visitor(self, shares_first: bool) -> Callable[[str | None, bytes | None], None]:
        """A visitor of versions in order: each kept as edits of the one read before it.

        A version with none before it is kept whole, except the first of a
        half that `shares_first` with the half before (whose visitor made
        that version's row).
        """
        prev: list[tuple[str, bytes]] = []
        skip = [shares_first]

        def visit(name: str | None, data: bytes | None) -> None:
            if name is None:
                return
            skip_row, skip[0] = skip[0], False
            if data is None:
                prev.clear()
                return
            if name in self.wanted:
                self.parts[name] = self.extract(data)
            if prev:
                base, base_data = prev.pop()
                self.rows[name] = pack_edits(base, bytediff.diff(base_data, data))
            elif not skip_row:
                self.rows[name] = pack_full(data)
                self.newest[name] = data
            prev.append((name, data))

        return visit


def read_versions(
    repo: Repo,
    guard: Callable[[Callable[[HistoryCache], object]], object],
    order: list[str],
    wanted: set[str],
    extract: Extract,
) -> dict[str, bytes | None]:
    """The part of each wanted version (newest first in `order`): rebuilt from rows, else git.

    Rows for the versions read from git are kept, each relative to the
    version read just before it; a version whose full row a newer one read
    now can replace is rewritten as edits of it (one full row per file).
    """
    kept = guard(lambda c: c.version_rows(order))
    rows: dict[str, VersionRow] = kept if isinstance(kept, dict) else {}
    done = _rebuild(order, rows, wanted, extract)
    parts = dict(done.parts)
    if not done.unresolved:
        return parts
    todo = set(done.unresolved)
    state = _Reading(wanted & todo, extract)
    BlobReader(repo).stream_split([b for b in order if b in todo], state.visitor)
    parts.update(state.parts)
    new_rows = dict(state.rows)
    for newer, older in itertools.pairwise(order):
        if newer in state.newest and older in done.fulls:
            new_rows[older] = pack_edits(
                newer, bytediff.diff(state.newest[newer], done.fulls[older])
            )
    guard(lambda c: c.save_versions(new_rows))
    return parts


def shared_extract(adapter: FormatAdapter, scope: HistoryScope) -> Extract:
    def extract(data: bytes) -> bytes | None:
        return adapter.history_extract(scope, data)

    return extract


__all__ = ["blob_id", "read_versions", "shared_extract"]
