"""A shared file's memories in every version, read once for all of them (the `splits` rows).

A Dream Cycle section or a JSON Lines record has no history of its own in
git: every version of its file is inflated and the memory found in each.
That pass is most of a first read (3,000 versions of a 50 KB file on the
10,000-commit benchmark), so it keeps what it saw for every memory of the
file, not only the one asked for:

- the versions are read in the log's order, newest first, by one or two
  `cat-file --batch` processes (git.BlobReader.stream_split), and each is
  compared with the next one (the version before it): the splitter names
  the few memories that may differ (`changed`), and only those are
  extracted and kept, as a delta row; a version with no such neighbour
  (the oldest, or one after a merge) keeps every memory (a full row);
- a memory's digest in a version is the value of the nearest row on the
  way down its chain of deltas that lists it (`resolve`);
- the bytes of each part found are kept by digest, so the entries of any
  memory of the file are made without git.

So the second memory of a file, in this process or any later one, asks git
for no blob; after a new commit only the new versions (and the one before
each) are read.  The result equals `history_extract` of every version
(tests/core/test_history_split.py, test_history_cache.py).
"""

from __future__ import annotations

from collections.abc import Callable

from ..formats.history_split import HistorySplitter
from .cache import HistoryCache, SplitRow, digest
from .git import BlobReader, Repo
from .log import FileChange

#: A resolution that found no row on its way (read that version from git).
_UNKNOWN = object()


def log_versions(changes: list[FileChange]) -> tuple[list[str], dict[str, str]]:
    """The file's distinct versions newest first, and each one's previous version."""
    order: dict[str, None] = {}
    before: dict[str, str] = {}
    for c in changes:
        if c.new_blob is not None:
            order.setdefault(c.new_blob)
            if c.old_blob is not None:
                before.setdefault(c.new_blob, c.old_blob)
        if c.old_blob is not None:
            order.setdefault(c.old_blob)
    return list(order), before


def resolve(
    rows: dict[str, SplitRow], key: str, blobs: list[str], more: Callable[[str], SplitRow | None]
) -> dict[str, bytes | None]:
    """Memory `key`'s digest in each of `blobs` that a chain of rows answers.

    A version's row lists the memory, or is full (not listed: not there),
    or sends on to its base.  A chain that meets a version with no row
    (`more` asked for it first: a base outside this log), or comes back on
    itself (rows written by different logs), answers nothing; each version
    walked is answered at once, so all of `blobs` cost one walk each.
    """
    out: dict[str, object] = {}
    for blob in blobs:
        chain: list[str] = []
        cur: str | None = blob
        value: object = _UNKNOWN
        while cur is not None:
            if cur in out:
                value = out[cur]
                break
            row = rows.get(cur)
            if row is None:
                row = more(cur)
                if row is None:
                    break
                rows[cur] = row
            out[cur] = _UNKNOWN  # a chain that comes back here answers nothing
            chain.append(cur)
            base, listed = row
            if key in listed:
                value = listed[key]
                break
            if base is None:
                value = None
                break
            cur = base
        for c in chain:
            out[c] = value
    return {b: v for b, v in out.items() if v is not _UNKNOWN}  # type: ignore[misc]


class _Pass:
    """What one reading of versions finds: rows and parts, filled by one or two visitors."""

    def __init__(self, splitter: HistorySplitter, wanted: set[str], before: dict[str, str]):
        self.splitter = splitter
        self.wanted = wanted
        self.before = before
        self.rows: dict[str, SplitRow] = {}
        self.parts: dict[bytes, bytes] = {}

    def _listed(self, found: dict[str, bytes | None]) -> dict[str, bytes | None]:
        """Digests of memories' parts, their bytes kept."""
        listed: dict[str, bytes | None] = {}
        for k, part in found.items():
            d = digest(part)
            listed[k] = d
            if part is not None and d is not None:
                self.parts[d] = part
        return listed

    def visitor(self, last: bool) -> Callable[[str | None, bytes | None], None]:
        """A visitor of versions in log order: a wanted one's row is made when the next arrives.

        The next is the version before it (a delta row) or another (a full
        row); `None` ends the half, and the first half's final version is
        left to the second half, which sees it again followed by its base.
        """
        prev: list[tuple[str, bytes | None]] = []

        def visit(name: str | None, data: bytes | None) -> None:
            if prev and (name is not None or last):
                p_name, p_data = prev.pop()
                if p_name in self.wanted and p_data is not None:
                    if name is not None and data is not None and self.before.get(p_name) == name:
                        delta = self.splitter.delta(data, p_data)
                        self.rows[p_name] = (name, self._listed(delta))
                    else:
                        self.rows[p_name] = (None, self._listed(dict(self.splitter.parts(p_data))))
            prev.clear()
            if name is not None:
                prev.append((name, data))

        return visit


def read_rows(
    repo: Repo,
    splitter: HistorySplitter,
    versions: list[str],
    before: dict[str, str],
    wanted: set[str],
) -> tuple[dict[str, SplitRow], dict[bytes, bytes]]:
    """Rows of the `wanted` versions, and their parts' bytes by digest, read from git.

    Each wanted version is read with the version before it, in the log's
    order, so that it is compared with its neighbour (a delta row).
    """
    needed = wanted | {before[w] for w in wanted if w in before}
    state = _Pass(splitter, wanted, before)
    BlobReader(repo).stream_split([b for b in versions if b in needed], state.visitor)
    return state.rows, state.parts


class SplitReader:
    """A shared file's memory through the `splits` rows: digests per version, bytes on demand."""

    def __init__(
        self,
        repo: Repo,
        guard: Callable[[Callable[[HistoryCache], object]], object],
        splitter: HistorySplitter,
        family: str,
        key: str,
    ) -> None:
        self.repo = repo
        self.guard = guard
        self.splitter = splitter
        self.family = family
        self.key = key
        #: Parts' bytes found by this reading, by digest.
        self.fresh: dict[bytes, bytes] = {}

    def _more(self, asked: set[str]) -> Callable[[str], SplitRow | None]:
        def more(blob: str) -> SplitRow | None:
            if blob in asked:
                return None
            asked.add(blob)
            got = self.guard(lambda c: c.split_rows(self.family, [blob]))
            return got.get(blob) if isinstance(got, dict) else None

        return more

    def digests(self, changes: list[FileChange]) -> dict[str, bytes | None]:
        """The memory's digest in every version of the log (a version git lacks is left out)."""
        versions, before = log_versions(changes)
        kept = self.guard(lambda c: c.split_rows(self.family, versions))
        rows: dict[str, SplitRow] = kept if isinstance(kept, dict) else {}
        more = self._more(set(versions))
        got = resolve(rows, self.key, versions, more)
        missing = {v for v in versions if v not in got}
        if missing:
            new, self.fresh = read_rows(self.repo, self.splitter, versions, before, missing)
            self.guard(lambda c: c.save_splits(self.family, new, self.fresh))
            rows.update(new)
            got = resolve(rows, self.key, versions, more)
        return got

    def parts(self, blobs: set[str], digests: dict[str, bytes | None]) -> dict[str, bytes | None]:
        """The memory's bytes in each of `blobs`: found by this reading, kept, or read from git."""
        out: dict[str, bytes | None] = {}
        wanted: dict[str, bytes] = {}
        for b in blobs:
            d = digests.get(b)
            if d is None:
                out[b] = None
            elif d in self.fresh:
                out[b] = self.fresh[d]
            else:
                wanted[b] = d
        stored = self.guard(lambda c: c.part_data(wanted.values())) if wanted else None
        data: dict[bytes, bytes] = stored if isinstance(stored, dict) else {}
        rest = sorted(b for b, d in wanted.items() if d not in data)
        out.update({b: data[d] for b, d in wanted.items() if d in data})
        if rest:
            got = BlobReader(self.repo).map(rest, lambda v: (self.splitter.part(v, self.key),))
            out.update({b: v[0] for b, v in got.items() if v is not None})
        return out


__all__ = ["SplitReader", "log_versions", "read_rows", "resolve"]
