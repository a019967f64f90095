"""Each memory's history from git: the commits that changed it, its versions, restore.

- `git`: the read-only `git` command runner (fixed environment, no shell,
  no network) and the batched blob reader.
- `log`: one `git log` of a file read into commits and blob ids.
- `versions`: the memory's entries, newest first, with its own bytes before
  and after each (through its format's `history_scope`/`history_extract`),
  and the memory as of any commit.
- `cache`, `indexed`: what a history cost, kept in the user cache folder
  (each file's log per HEAD, the memory's digest per blob) and the reading
  through it, which asks git only for new commits and unseen blobs.
- `bytediff`, `rebuild`: a shared file's versions kept as the bytes that
  differ from the next version, and rebuilt from them for the file's other
  memories (the second section of a file read asks git for no blob).
- `diff`: what changed in an entry: metadata fields and a unified diff.
- `restore`: an earlier version written back through the format's writer, as
  a journaled, undoable edit.
"""

from __future__ import annotations

from .git import GitMissingError, HistoryError, NotInGitError, Repo, open_repo
from .log import Commit
from .versions import Entry, History, Version, memory_history, version_at

__all__ = [
    "Commit",
    "Entry",
    "GitMissingError",
    "History",
    "HistoryError",
    "NotInGitError",
    "Repo",
    "Version",
    "memory_history",
    "open_repo",
    "version_at",
]
