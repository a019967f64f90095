"""A memory's history through the kept cache (`cache`): what git must still be asked for.

Three steps, each reading git only for what the cache lacks:

1. The file's log: kept per (work tree, path, --follow) with the commit it
   was read at.  HEAD unchanged: no `git log`.  HEAD moved forward along
   a line of new commits: `git log OLD..HEAD` is put in front of the kept
   log (`_extend`).  Anything else: the whole log again.
2. The memory's digest in every version of the file: kept per (scope,
   blob); only blobs never seen are inflated (`cat-file --batch`).  A file
   several memories share (sections, records) is read through `rebuild`:
   the first memory of it read keeps every version (as the bytes that
   differ from the next), and the others are extracted from versions
   rebuilt from those, without git.
3. The memory's bytes, only for the versions where its digest changed:
   kept when small, else read from git again.

The result equals `versions`' uncached reading (tests/core/test_history_cache.py
compares the two); any failure of the cache file drops back to that reading.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..formats.adapter import FormatAdapter, HistoryScope
from .cache import CacheFailure, HistoryCache, digest, discard, log_key, open_cache, scope_key
from .git import BlobReader, HistoryError, Repo
from .log import FileChange, file_log
from .rebuild import read_versions, shared_extract


class Kept:
    """The cache as one history read uses it: a failing cache is remade once, then left alone."""

    def __init__(self, cache: HistoryCache | None) -> None:
        self.cache = cache
        self.failed = False

    @classmethod
    def open(cls) -> Kept:
        return cls(open_cache())

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()

    def guard(self, action: Callable[[HistoryCache], object]) -> object:
        """`action` on the cache; None when there is none or it fails (then it is remade)."""
        if self.cache is None:
            return None
        try:
            return action(self.cache)
        except CacheFailure:
            self.fail()
            return None

    def fail(self) -> None:
        """The cache file misbehaved: replace it with a fresh one (or none)."""
        if self.cache is not None:
            self.cache = None if self.failed else discard(self.cache)
        self.failed = True


def head_commit(repo: Repo) -> str | None:
    """The full id of HEAD's commit; None when the repository has no commit."""
    if not repo.has_commits:
        return None
    return repo.run(["rev-parse", "--verify", "-q", "HEAD^{commit}"]).decode("ascii").strip()


def _extend(
    repo: Repo, path: bytes, follow: bool, old_head: str, old: list[FileChange], head: str
) -> list[FileChange] | None:
    """The log at `head` from the log kept at `old_head`; None when only a full log is exact.

    Exact when `old_head` is an ancestor of `head` and the commits between
    are one line (no merge): git's walk from `head` then passes through
    them, in order, before it reaches `old_head` and walks on as it did
    from there.  Under --follow, a rename in the new commits changes the
    path followed into the kept part, so that case is read whole too.
    """
    try:
        repo.run(["merge-base", "--is-ancestor", old_head, head])
    except HistoryError:
        return None  # not an ancestor (a rewritten branch), or no longer there
    if repo.run(["rev-list", "--merges", f"{old_head}..{head}"]).strip():
        return None
    new = file_log(repo, path, follow=follow, rev=head, since=old_head)
    if follow and any(c.old_path != c.new_path for c in new):
        return None
    return new + old


def cached_log(repo: Repo, kept: Kept, path: bytes, follow: bool) -> list[FileChange]:
    """`file_log` of `path` at HEAD, from the cache where it can be."""
    head = head_commit(repo)
    if head is None:
        return []
    cache = kept.cache
    if cache is None or repo.shallow:
        # A shallow clone's log of a commit grows when the clone is deepened.
        return file_log(repo, path, follow=follow, rev=head)
    key = log_key(repo.top, path, follow)
    try:
        found = cache.log(key)
    except CacheFailure:
        kept.fail()
        found = None
    if found is not None and found[0] == head:
        return found[1]
    changes = _extend(repo, path, follow, *found, head) if found is not None else None
    if changes is None:
        changes = file_log(repo, path, follow=follow, rev=head)
    if kept.cache is not None:
        try:
            kept.cache.save_log(key, head, changes)
        except CacheFailure:
            kept.fail()
    return changes


def _read_parts(
    repo: Repo, adapter: FormatAdapter, scope: HistoryScope, blobs: Iterable[str]
) -> dict[str, bytes | None]:
    """`history_extract` of each blob that git has (a blob it lacks is left out)."""
    got = BlobReader(repo).map(sorted(blobs), lambda d: (adapter.history_extract(scope, d),))
    return {b: v[0] for b, v in got.items() if v is not None}


class PartReader:
    """The memory's digest in each blob and, on demand, its bytes, through the cache."""

    def __init__(
        self, repo: Repo, kept: Kept, adapter: FormatAdapter, format_id: str, scope: HistoryScope
    ) -> None:
        self.repo = repo
        self.kept = kept
        self.adapter = adapter
        self.scope = scope
        self.key = scope_key(format_id, scope)
        #: Bytes read from git in this call, by blob.
        self.fresh: dict[str, bytes | None] = {}

    def _guard(self, action: Callable[[HistoryCache], object]) -> object:
        return self.kept.guard(action)

    def digests(self, blobs: set[str], order: list[str]) -> dict[str, bytes | None]:
        """Every blob's digest of the memory: kept ones, and the rest read once.

        `order`: the file's versions newest first.  The versions of a file
        several memories share are read through `rebuild` (kept for every
        memory of the file, in the log's order); a file that is one memory
        is read from git.
        """
        known = self._guard(lambda c: c.digests(self.key, blobs))
        out: dict[str, bytes | None] = known if isinstance(known, dict) else {}
        missing = blobs - out.keys()
        if missing:
            if self.scope.whole_file:
                self.fresh = _read_parts(self.repo, self.adapter, self.scope, missing)
            else:
                extract = shared_extract(self.adapter, self.scope)
                self.fresh = read_versions(self.repo, self.kept.guard, order, missing, extract)
            self._guard(lambda c: c.save_parts(self.key, self.fresh))
            out.update({b: digest(p) for b, p in self.fresh.items()})
        return out

    def parts(self, blobs: set[str], digests: dict[str, bytes | None]) -> dict[str, bytes | None]:
        """The memory's bytes in each of `blobs` (None: not there, or git lacks the blob)."""
        out = {b: self.fresh[b] for b in blobs if b in self.fresh}
        wanted = {b: d for b in blobs - out.keys() if (d := digests.get(b)) is not None}
        for b in blobs - out.keys() - wanted.keys():
            out[b] = None
        stored = self._guard(lambda c: c.part_data(wanted.values()))
        data: dict[bytes, bytes] = stored if isinstance(stored, dict) else {}
        for b, d in list(wanted.items()):
            if d in data:
                out[b] = data[d]
                del wanted[b]
        if wanted:
            out.update(_read_parts(self.repo, self.adapter, self.scope, wanted))
        return out


__all__ = ["Kept", "PartReader", "cached_log", "head_commit"]
