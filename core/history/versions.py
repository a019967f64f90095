"""One memory's history: the commits that changed it, newest first, with its bytes before and after.

`memory_history` asks the memory's format where it lives (`history_scope`),
lists the commits that changed that file (renames followed for a memory that
is a whole file), reads every blob it needs through `git cat-file --batch`,
keeps only the memory's own bytes of each (`history_extract`) and lists the
commits where those differ.  When the working tree's memory differs from
HEAD's, a "working tree" entry comes first.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import NotFoundError
from ..formats import adapter_for
from ..formats.adapter import FormatAdapter, HistoryScope
from ..model import Memory
from ..safe_io import read_regular
from ..text.paths import safe_join
from .git import BlobReader, HistoryError, Repo, open_repo
from .indexed import Kept, PartReader, cached_log
from .log import Commit, FileChange, file_log, read_commit

#: Kinds of entry: how the memory changed in that commit.
ADDED, CHANGED, MOVED, REMOVED = "added", "changed", "moved", "removed"


@dataclass(frozen=True, slots=True)
class Entry:
    """One commit that changed the memory (commit None: the uncommitted working tree)."""

    commit: Commit | None
    change: str
    #: Vault-relative path of the memory's file after the change (before it, if removed).
    path: str
    #: Its path before the change, when the commit moved it.
    old_path: str | None
    #: The memory's own bytes before and after the change (None: absent).
    before: bytes | None
    after: bytes | None


@dataclass(slots=True)
class History:
    """Every version of one memory that git knows, newest first."""

    memory: Memory
    repo: Repo
    scope: HistoryScope
    entries: list[Entry] = field(default_factory=list)
    #: The memory's bytes in the working tree now (None: not readable there).
    current: bytes | None = None

    @property
    def commits(self) -> list[Entry]:
        """The committed entries (the working tree entry left out)."""
        return [e for e in self.entries if e.commit is not None]


def _change_kind(before: bytes | None, after: bytes | None, moved: bool) -> str:
    if before is None:
        return ADDED
    if after is None:
        return REMOVED
    return MOVED if moved and before == after else CHANGED


def _vault_rel(repo: Repo, path: bytes) -> str:
    """A repository path as the vault spells it (outside the vault: `../` + repo path)."""
    rel = repo.vault_rel(path)
    return rel if rel is not None else "../" + os.fsdecode(path)


#: The memory's bytes per (repository, scope, blob), kept across calls: a blob
#: never changes, so reopening a history (or re-reading it after a restore)
#: reads only blobs it has not seen.  Bounded: cleared when it grows past this.
_PARTS_LIMIT = 200_000
_PARTS: dict[tuple[Path, HistoryScope, str], bytes | None] = {}


def _extracted(
    repo: Repo, adapter: FormatAdapter, scope: HistoryScope, blobs: set[str]
) -> dict[str, bytes | None]:
    """`history_extract` of each blob, from the cache or one batched read of the rest."""
    known = {b: _PARTS[(repo.top, scope, b)] for b in blobs if (repo.top, scope, b) in _PARTS}
    missing = sorted(blobs - known.keys())
    fresh = BlobReader(repo).map(missing, lambda d: adapter.history_extract(scope, d))
    if len(_PARTS) + len(fresh) > _PARTS_LIMIT:
        _PARTS.clear()
    for blob, part in fresh.items():
        _PARTS[(repo.top, scope, blob)] = part
    return {**known, **fresh}


def _kept_changes(
    changes: list[FileChange], scope: HistoryScope, key: dict[str, bytes | None]
) -> list[FileChange]:
    """The changes where the memory's own bytes differ (or its whole file moved).

    `key` is, per blob, the memory's bytes or their digest: equal keys mean
    the memory did not change (a blob missing from `key`: not there).
    """
    out: list[FileChange] = []
    for c in changes:
        before = key.get(c.old_blob) if c.old_blob is not None else None
        after = key.get(c.new_blob) if c.new_blob is not None else None
        moved = c.old_path != c.new_path
        if before == after and not (moved and scope.whole_file and after is not None):
            continue
        out.append(c)
    return out


def _to_entries(
    repo: Repo, changes: list[FileChange], parts: dict[str, bytes | None]
) -> list[Entry]:
    """Entries of the kept changes, with the memory's bytes before and after each."""
    out: list[Entry] = []
    for c in changes:
        before = parts.get(c.old_blob) if c.old_blob is not None else None
        after = parts.get(c.new_blob) if c.new_blob is not None else None
        moved = c.old_path != c.new_path
        out.append(
            Entry(
                c.commit,
                _change_kind(before, after, moved),
                _vault_rel(repo, c.new_path if after is not None else c.old_path),
                _vault_rel(repo, c.old_path) if moved else None,
                before,
                after,
            )
        )
    return out


def _newest_first(changes: list[FileChange]) -> list[str]:
    """The file's versions in the log's order: each change's new blob, then its old one."""
    order = (b for c in changes for b in (c.new_blob, c.old_blob) if b is not None)
    return list(dict.fromkeys(order))


def _blobs(changes: list[FileChange]) -> set[str]:
    return {b for c in changes for b in (c.old_blob, c.new_blob) if b is not None}


def _entries(
    repo: Repo,
    adapter: FormatAdapter,
    scope: HistoryScope,
    changes: list[FileChange],
) -> list[Entry]:
    """The entries read without the kept cache: every blob's part, compared as bytes."""
    parts = _extracted(repo, adapter, scope, _blobs(changes))
    return _to_entries(repo, _kept_changes(changes, scope, parts), parts)


def _cached_entries(
    repo: Repo, kept: Kept, memory: Memory, adapter: FormatAdapter, scope: HistoryScope
) -> list[Entry]:
    """The entries through the kept cache: digests compared, bytes read only where they differ."""
    changes = cached_log(repo, kept, repo.repo_path(scope.path), scope.whole_file)
    reader = PartReader(repo, kept, adapter, memory.format, scope)
    digests = reader.digests(_blobs(changes), _newest_first(changes))
    chosen = _kept_changes(changes, scope, digests)
    return _to_entries(repo, chosen, reader.parts(_blobs(chosen), digests))


def read_current(memory: Memory, adapter: FormatAdapter, scope: HistoryScope) -> bytes | None:
    """The memory's bytes in the working tree (None if its file cannot be read)."""
    try:
        data = read_regular(safe_join(memory.vault_root, scope.path))
    except OSError:
        return None
    return adapter.history_extract(scope, data)


def _head_bytes(repo: Repo, adapter: FormatAdapter, scope: HistoryScope) -> bytes | None:
    if not repo.has_commits:
        return None
    name = "HEAD:" + os.fsdecode(repo.repo_path(scope.path))
    got = BlobReader(repo).map([name], lambda d: adapter.history_extract(scope, d))
    return got.get(name)


def memory_history(memory: Memory, repo: Repo | None = None, *, cache: bool = True) -> History:
    """Every commit that changed `memory`, newest first (HistoryError subclasses on failure).

    NotInGitError when its vault is not in a repository, GitMissingError
    without git; a memory never committed has no commit entries.  `cache`:
    through the kept cache in the user cache folder (`indexed`), which
    gives the same entries as reading git alone (False).
    """
    repo = repo if repo is not None else open_repo(memory.vault_root)
    adapter = adapter_for(memory.format)
    scope = adapter.history_scope(memory)
    if cache:
        kept = Kept.open()
        try:
            entries = _cached_entries(repo, kept, memory, adapter, scope)
        finally:
            kept.close()
    else:
        changes = file_log(repo, repo.repo_path(scope.path), follow=scope.whole_file)
        entries = _entries(repo, adapter, scope, changes)
    history = History(memory, repo, scope, entries)
    history.current = read_current(memory, adapter, scope)
    head = history.entries[0].after if history.entries else _head_bytes(repo, adapter, scope)
    if history.current != head and history.current is not None:
        change = ADDED if head is None else CHANGED
        history.entries.insert(0, Entry(None, change, scope.path, None, head, history.current))
    return history


def _resolve(repo: Repo, ref: str) -> str:
    """The full id of commit `ref` (a prefix, a branch, HEAD~2, ...)."""
    if ref.startswith("-") or not ref.strip():
        raise HistoryError(f"{ref!r} is not a commit")
    try:
        out = repo.run(["rev-parse", "--verify", "-q", f"{ref}^{{commit}}"])
    except HistoryError:
        raise NotFoundError(f"no commit {ref!r} in {repo.top}") from None
    return out.decode("ascii").strip()


@dataclass(frozen=True, slots=True)
class Version:
    """The memory as it was at one commit."""

    commit: Commit
    #: The entry that made it so (the newest change at or before the commit).
    entry: Entry
    data: bytes


def version_at(history: History, ref: str) -> Version:
    """The memory at commit `ref`: the newest of its changes the commit contains.

    NotFoundError when the memory did not exist there (or `ref` is no commit).
    """
    sha = _resolve(history.repo, ref)
    ancestors = set(history.repo.run(["rev-list", sha]).decode("ascii").split())
    for entry in history.commits:
        assert entry.commit is not None
        if entry.commit.id in ancestors:
            if entry.after is None:
                break
            commit = entry.commit if entry.commit.id == sha else read_commit(history.repo, sha)
            return Version(commit, entry, entry.after)
    raise NotFoundError(f"{history.memory.id} did not exist at commit {sha[:10]}")


__all__ = [
    "ADDED",
    "CHANGED",
    "MOVED",
    "REMOVED",
    "Entry",
    "History",
    "Version",
    "memory_history",
    "read_current",
    "version_at",
]
