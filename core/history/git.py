"""Reading a git repository with the `git` command: read-only, no shell, no network.

Why the command and not a library: `git log --follow` (rename following in
C, over a 10,000-commit history) and `cat-file --batch` (every version of a
file through one pipe) are what make one memory's history fast; dulwich has
no rename following and walks commits in Python, pygit2 would be a compiled
dependency for the same two calls; and the command is what the user's own
repository is written with, so it reads every repository they can.

Every call is an argument list (no shell), with a fixed environment: every
`GIT_*` variable of the caller is dropped (a stray `GIT_DIR` or
`GIT_INDEX_FILE` would point git elsewhere), system and global config are
ignored, lazy fetches of a partial clone, prompts and optional locks are off,
pathspecs are literal, and `-c` switches off what could run a program
(fsmonitor) or change the output (quoted paths, signatures).  Only read
commands are ever run: `rev-parse`, `log`, `cat-file`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TypeVar

from ..errors import MemlensError

T = TypeVar("T")

#: From this many blobs on, two `cat-file` processes share the reading.
PARALLEL_FROM = 64

#: The pipe size asked for `cat-file`'s output (Linux caps an unprivileged ask at 1 MB).
_PIPE_SIZE = 1 << 20

#: Seconds one git command may take before memlens gives up on it.
GIT_TIMEOUT = 120.0

#: `-c` settings on every call: plain paths, no program run by a config key,
#: no signature check, rename detection on (for --follow).
_CONFIG: tuple[str, ...] = (
    "core.quotepath=off",
    "core.fsmonitor=false",
    "log.showSignature=false",
    "diff.renames=true",
    "log.follow=false",
    "core.precomposeunicode=false",
)


class HistoryError(MemlensError):
    """A memory's history cannot be read (no git, not a repository, git failed)."""


class GitMissingError(HistoryError):
    """The `git` command is not installed."""


class NotInGitError(HistoryError):
    """The vault is not inside a git repository."""


def git_env() -> dict[str, str]:
    """The caller's environment without `GIT_*`, plus the fixed settings above."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        GIT_NO_LAZY_FETCH="1",
        GIT_LITERAL_PATHSPECS="1",
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_ADVICE="0",
        LC_ALL="C",
    )
    return env


def git_executable() -> str:
    """Where `git` is; GitMissingError naming what to install when it is absent."""
    found = shutil.which("git")
    if found is None:
        raise GitMissingError("the git command is not installed (history needs git on PATH)")
    return found


@dataclass(frozen=True, slots=True)
class Repo:
    """A work tree that holds a vault: where it is and what kind of clone it is."""

    #: The repository's top folder.
    top: Path
    #: The vault root relative to `top`, as git spells it (bytes, `/`-ended or empty).
    prefix: bytes
    #: History stops at a shallow clone's boundary.
    shallow: bool
    #: There is at least one commit (HEAD resolves).
    has_commits: bool
    git: str

    def run(self, args: Sequence[str | bytes], stdin: bytes | None = None) -> bytes:
        """Run one read-only git command in the repository; its stdout."""
        return run_git(self.git, self.top, args, stdin)

    def repo_path(self, rel: str) -> bytes:
        """A vault-relative POSIX path as a repository path (bytes: names need not be UTF-8)."""
        return self.prefix + os.fsencode(rel)

    def vault_rel(self, repo_path: bytes) -> str | None:
        """The vault-relative path of a repository path; None if it is outside the vault."""
        if not repo_path.startswith(self.prefix):
            return None
        return os.fsdecode(repo_path[len(self.prefix) :])


def run_git(git: str, cwd: Path, args: Sequence[str | bytes], stdin: bytes | None = None) -> bytes:
    """One git command with the fixed environment; HistoryError with git's message on failure."""
    argv: list[str | bytes] = [git, "--no-pager"]
    for setting in _CONFIG:
        argv += ["-c", setting]
    argv += list(args)
    try:
        done = subprocess.run(
            argv,
            cwd=cwd,
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            env=git_env(),
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except FileNotFoundError:
        raise GitMissingError("the git command is not installed") from None
    except subprocess.TimeoutExpired:
        raise HistoryError(f"git {_name(args)} took over {GIT_TIMEOUT:.0f} s; gave up") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = message[-1] if message else f"exit status {done.returncode}"
        raise HistoryError(f"git {_name(args)} failed: {detail}")
    return done.stdout


def _name(args: Sequence[str | bytes]) -> str:
    first = args[0] if args else ""
    return first if isinstance(first, str) else first.decode("ascii", "replace")


def open_repo(vault_root: Path) -> Repo:
    """The repository holding `vault_root`; NotInGitError if there is none."""
    git = git_executable()
    root = Path(vault_root)
    try:
        out = run_git(
            git,
            root,
            ["rev-parse", "--is-inside-work-tree", "--show-toplevel", "--is-shallow-repository"],
        )
    except GitMissingError:
        raise
    except HistoryError as exc:
        # git's own words only when they say something else (a repository
        # owned by another user, a broken .git): "not a git repository" is ours.
        why = "" if "not a git repository" in str(exc) else f" ({exc})"
        raise NotInGitError(f"{root}: not inside a git repository{why}") from None
    lines = out.split(b"\n")
    if len(lines) < 3 or lines[0] != b"true":
        raise NotInGitError(f"{root}: not inside a git work tree")
    top = Path(os.fsdecode(lines[1]))
    # --show-prefix prints the path with a trailing newline; a folder name can
    # hold any byte but NUL and newline, and git refuses names with a newline.
    prefix = run_git(git, root, ["rev-parse", "--show-prefix"]).rstrip(b"\n")
    try:
        run_git(git, root, ["rev-parse", "--verify", "-q", "HEAD^{commit}"])
        has_commits = True
    except HistoryError:
        has_commits = False
    return Repo(top, prefix, lines[2] == b"true", has_commits, git)


class BlobReader:
    """Many blobs through one `git cat-file --batch`: one process, not one per blob.

    Blobs are streamed: each is handed to `take` as it arrives and dropped,
    so reading every version of a large file never holds them all at once.
    """

    def __init__(self, repo: Repo) -> None:
        self._repo = repo

    def read(self, names: Iterable[str]) -> dict[str, bytes | None]:
        """Contents of each object name (a blob id, or `<commit>:<path>`); None if missing."""
        return self.map(names, lambda data: data)

    def map(self, names: Iterable[str], take: Callable[[bytes], T]) -> dict[str, T | None]:
        """`take(contents)` of each object name; None for a name that is not a blob.

        Many names are split between two `cat-file` processes run at once
        (in contiguous halves, so each keeps its delta-base cache warm):
        inflating every version of a large file is the cost of a section's
        history, and two cores halve it.
        """
        wanted = list(dict.fromkeys(names))
        for name in wanted:
            if "\n" in name:
                raise HistoryError(f"object name {name!r} holds a newline")
        if len(wanted) < PARALLEL_FROM:
            return self._map_one(wanted, take)
        half = len(wanted) // 2
        with ThreadPoolExecutor(max_workers=2) as pool:
            parts = list(
                pool.map(lambda chunk: self._map_one(chunk, take), (wanted[:half], wanted[half:]))
            )
        return {**parts[0], **parts[1]}

    def stream_split(
        self,
        names: list[str],
        make_visit: Callable[[bool], Callable[[str | None, bytes | None], None]],
    ) -> None:
        """Each of `names`, in order, handed to a visitor as it arrives (None: not a blob).

        Many names are read by two processes at once, on halves that share
        their middle name, so a visitor that relates each name to the next
        (a version to the one before it) misses no pair.  `make_visit(shared)`
        makes each half's visitor; `shared` is True for the second half,
        whose first name the first half saw last.  A visitor is called with
        (None, None) when its half ends.
        """
        wanted = list(dict.fromkeys(names))
        for name in wanted:
            if "\n" in name:
                raise HistoryError(f"object name {name!r} holds a newline")
        if len(wanted) < PARALLEL_FROM:
            self._stream_to_end(wanted, make_visit(False))
            return
        half = len(wanted) // 2
        chunks = ((wanted[: half + 1], make_visit(False)), (wanted[half:], make_visit(True)))
        with ThreadPoolExecutor(max_workers=2) as pool:
            for done in [pool.submit(self._stream_to_end, *chunk) for chunk in chunks]:
                done.result()

    def _stream_to_end(
        self, wanted: list[str], visit: Callable[[str | None, bytes | None], None]
    ) -> None:
        self._stream(wanted, visit)
        visit(None, None)

    def _map_one(self, wanted: list[str], take: Callable[[bytes], T]) -> dict[str, T | None]:
        result: dict[str, T | None] = {}

        def visit(name: str, data: bytes | None) -> None:
            result[name] = None if data is None else take(data)

        self._stream(wanted, visit)
        return result

    def _stream(self, wanted: list[str], visit: Callable[[str, bytes | None], None]) -> None:
        if not wanted:
            return
        argv: list[str | bytes] = [self._repo.git, "--no-pager"]
        for setting in _CONFIG:
            argv += ["-c", setting]
        argv += ["cat-file", "--batch"]
        proc = subprocess.Popen(
            argv,
            cwd=self._repo.top,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=git_env(),
            bufsize=1 << 20,
        )
        assert proc.stdin is not None and proc.stdout is not None
        _widen(proc.stdout)
        request = "".join(f"{n}\n" for n in wanted).encode()
        # Written from a thread: git answers while it reads, and a request
        # larger than the pipe's buffer would otherwise block both sides.
        feeder = threading.Thread(target=_feed, args=(proc.stdin, request), daemon=True)
        feeder.start()
        try:
            _read_batch(wanted, proc.stdout, visit)
        finally:
            feeder.join()
            proc.stdout.close()
            proc.wait()


def _widen(pipe: IO[bytes]) -> None:
    """A 1 MB pipe (Linux; the default is 64 KB) where it can be had.

    Why: every version of a shared file is tens of megabytes through the
    pipe; with the default size git and this process wake each other every
    64 KB.  Measured on 3,115 versions of a 53 KB file (165 MB): 0.71-0.84 s
    with the default, 0.57 s with 1 MB.
    """
    if sys.platform.startswith("linux"):
        import fcntl

        with contextlib.suppress(OSError):
            fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, _PIPE_SIZE)


def _feed(pipe: IO[bytes], data: bytes) -> None:
    try:
        pipe.write(data)
    except BrokenPipeError:  # pragma: no cover - git stopped early; the reader reports it
        pass
    finally:
        with contextlib.suppress(BrokenPipeError):
            pipe.close()


def _read_batch(
    wanted: list[str], out: IO[bytes], visit: Callable[[str, bytes | None], None]
) -> None:
    """Read `cat-file --batch` answers: `<oid> <type> <size>`, the bytes; or `<name> missing`."""
    for name in wanted:
        header = out.readline()
        if not header:
            raise HistoryError("git cat-file stopped before answering every request")
        parts = header.rstrip(b"\n").split(b" ")
        if len(parts) == 3 and parts[2].isdigit():
            size = int(parts[2])
            data = out.read(size)
            out.read(1)
            visit(name, data if parts[1] == b"blob" else None)
        else:
            visit(name, None)


__all__ = [
    "BlobReader",
    "GitMissingError",
    "HistoryError",
    "NotInGitError",
    "Repo",
    "git_env",
    "git_executable",
    "open_repo",
    "run_git",
]
