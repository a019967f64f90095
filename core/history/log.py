"""The commits that changed one file: `git log --raw -z` read into commits and blob ids.

One `git log` call lists, newest first, each commit that changed the file
(following renames when asked) with its author, dates, message and the
file's blob before and after.  Only the raw tree diff is asked for, never a patch: the memory's own
diff is made later from the bytes it had before and after.
"""

from __future__ import annotations

from dataclasses import dataclass

from .git import HistoryError, Repo

#: A blob id of all zeros: the file did not exist on that side of the change.
_NO_BLOB = "0" * 40
#: Field separator inside the commit header (a message cannot hold it usefully).
_SEP = "\x1f"
#: Author and commit fields, then the full message (last: it may hold anything).
_FORMAT = "\x01" + _SEP.join(("%H", "%P", "%an", "%ae", "%aI", "%cI", "%B"))


@dataclass(frozen=True, slots=True)
class Commit:
    """One commit, as the history shows it."""

    id: str
    parents: tuple[str, ...]
    author: str
    email: str
    #: Author date, ISO 8601 with its offset.
    date: str
    #: Commit date, ISO 8601 with its offset.
    committed: str
    message: str

    @property
    def short(self) -> str:
        return self.id[:10]

    @property
    def subject(self) -> str:
        """The message's first line."""
        return self.message.split("\n", 1)[0].strip()


@dataclass(frozen=True, slots=True)
class FileChange:
    """The file's change in one commit: blob ids (None: absent) and repository paths."""

    commit: Commit
    status: str
    old_blob: str | None
    new_blob: str | None
    old_path: bytes
    new_path: bytes


def _commit(header: bytes) -> Commit:
    text = header[1:].decode("utf-8", "replace")
    parts = text.split(_SEP, 6)
    if len(parts) != 7:
        raise HistoryError("git log printed a commit line memlens could not read")
    sha, parents, author, email, authored, committed, message = parts
    return Commit(
        sha,
        tuple(parents.split()),
        author,
        email,
        authored,
        committed,
        message.rstrip("\n"),
    )


def _blob(sha: bytes) -> str | None:
    text = sha.decode("ascii")
    return None if text == _NO_BLOB else text


def parse_log(out: bytes) -> list[FileChange]:
    """Read `git log -z --raw --no-abbrev --format=<_FORMAT>` output.

    Tokens are NUL-separated: a commit header (starting with \\x01), then for
    each changed file a raw line `:mode mode old new status` followed by one
    path (two for a rename or copy).  A commit with no raw line (a merge) is
    skipped: its changes are listed under the commits that made them.
    """
    tokens = out.split(b"\0")
    changes: list[FileChange] = []
    commit: Commit | None = None
    i = 0
    while i < len(tokens):
        tok = tokens[i].lstrip(b"\n")
        i += 1
        if tok.startswith(b"\x01"):
            commit = _commit(tok)
            continue
        if not tok.startswith(b":") or commit is None:
            continue
        fields = tok[1:].split(b" ")
        if len(fields) < 5:
            raise HistoryError("git log printed a raw line memlens could not read")
        status = fields[4].decode("ascii", "replace")
        old_path = tokens[i]
        i += 1
        new_path = old_path
        if status[:1] in ("R", "C"):
            new_path = tokens[i]
            i += 1
        changes.append(
            FileChange(commit, status[:1], _blob(fields[2]), _blob(fields[3]), old_path, new_path)
        )
    return changes


def file_log(
    repo: Repo, path: bytes, *, follow: bool, rev: str = "HEAD", since: str | None = None
) -> list[FileChange]:
    """Every change of `path` reachable from `rev` (HEAD), newest first.

    `follow`: across renames (one file is one memory).  `since`: only the
    commits `rev` holds and commit `since` does not (`since..rev`: what a
    kept log of `since` lacks).
    """
    if not repo.has_commits:
        return []
    args: list[str | bytes] = [
        "log",
        "-z",
        "--raw",
        "--no-abbrev",
        "--no-color",
        "--no-textconv",
        "--no-ext-diff",
        f"--format={_FORMAT}",
    ]
    if follow:
        args.append("--follow")
    args += [rev if since is None else f"{since}..{rev}", "--", path]
    out = repo.run(args)
    return [c for c in parse_log(out) if follow or c.new_path == path or c.old_path == path]


def read_commit(repo: Repo, sha: str) -> Commit:
    """One commit's header (for a version asked for at a commit that did not change it)."""
    out = repo.run(["log", "-1", "-z", f"--format={_FORMAT}", sha, "--"])
    return _commit(out.split(b"\0", 1)[0].lstrip(b"\n"))


__all__ = ["Commit", "FileChange", "file_log", "parse_log", "read_commit"]
