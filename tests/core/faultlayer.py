"""An in-process fault layer over the os calls memlens uses to change files.

`FaultLayer(root, mode, at)` replaces the mutating functions of the `os`
module (and `os.open` with write flags) by wrappers that number each call
made on a path below `root`, or on a file descriptor opened below it, from
the thread that installed the layer.  Modes:

- "count":   only count (a first pass enumerates an operation's fault points);
- "eio" / "enospc": raise OSError(EIO / ENOSPC) at call `at`, once;
- "kill":    raise `SimulatedKill` (a BaseException) at call `at` and at every
  later mutating call, so no cleanup code can touch the disk, as after a
  real SIGKILL;
- "sigkill": `os.kill(os.getpid(), SIGKILL)` at call `at` (subprocess tests).

Loaded by file path (tests use `--import-mode=importlib`), also from the
subprocess `python -c` of the SIGKILL sweep.
"""

from __future__ import annotations

import errno
import os
import signal
import threading
from pathlib import Path
from typing import Any

from memlens.core import safe_io

#: Functions that change the disk, by name in `os`.
MUTATING = (
    "write",
    "fsync",
    "replace",
    "rename",
    "link",
    "unlink",
    "remove",
    "mkdir",
    "rmdir",
    "fchmod",
    "fchown",
    "chmod",
    "ftruncate",
    "truncate",
    "symlink",
    "utime",
)
#: Of those, the ones that take a file descriptor first.
FD_CALLS = frozenset({"write", "fsync", "fchmod", "fchown", "ftruncate"})
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


class SimulatedKill(BaseException):
    """The process "died" here: nothing after this may touch the disk."""


class FaultLayer:
    """Counts, and at one point breaks, the mutating os calls below one folder."""

    def __init__(self, root: Path, mode: str = "count", at: int = -1) -> None:
        self.root = os.path.realpath(root)
        self.mode = mode
        self.at = at
        #: Mutating calls seen so far (the fault points).
        self.count = 0
        #: Faults raised (0 or 1, more in kill mode after the first).
        self.injected = 0
        self.killed = False
        self.names: list[str] = []
        self._fds: set[int] = set()
        self._saved: dict[str, Any] = {}
        self._thread = threading.get_ident()

    # ------------------------------------------------------------------ install
    def install(self) -> FaultLayer:
        self._saved["open"] = os.open
        self._saved["close"] = os.close
        os.open = self._open  # type: ignore[assignment]
        os.close = self._close  # type: ignore[assignment]
        for name in MUTATING:
            real = getattr(os, name)
            self._saved[name] = real
            setattr(os, name, self._wrap(name, real))
        # renameat2 (exchange, no-replace rename) is called through ctypes,
        # not `os`: without this a "killed" process could still rename.
        real2 = safe_io._rename2
        self._rename2 = real2

        def rename2(a: Path, b: Path, flags: int) -> bool:
            if self._ours(a) or self._ours(b):
                self._point("renameat2")
            return bool(real2(a, b, flags))

        safe_io._rename2 = rename2
        return self

    def uninstall(self) -> None:
        for name, real in self._saved.items():
            setattr(os, name, real)
        self._saved.clear()
        safe_io._rename2 = self._rename2

    def __enter__(self) -> FaultLayer:
        return self.install()

    def __exit__(self, *exc: object) -> None:
        self.uninstall()

    # ------------------------------------------------------------------ wrappers
    def _ours(self, target: Any) -> bool:
        if threading.get_ident() != self._thread:
            return False
        if isinstance(target, int):
            return target in self._fds
        try:
            path = os.fspath(target)
        except TypeError:
            return False
        if isinstance(path, bytes):
            path = path.decode(errors="replace")
        folder = os.path.realpath(os.path.dirname(os.path.abspath(path)))
        return folder == self.root or folder.startswith(self.root + os.sep)

    def _point(self, name: str) -> None:
        """One fault point: count it, and fail here if told to."""
        if self.killed:
            self.injected += 1
            raise SimulatedKill(name)
        k = self.count
        self.count += 1
        self.names.append(name)
        if k != self.at:
            return
        self.injected += 1
        if self.mode == "eio":
            raise OSError(errno.EIO, f"injected I/O error in os.{name}")
        if self.mode == "enospc":
            raise OSError(errno.ENOSPC, f"injected: no space left (os.{name})")
        if self.mode == "kill":
            self.killed = True
            raise SimulatedKill(name)
        if self.mode == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)

    def _open(self, path: Any, flags: int, mode: int = 0o777, *, dir_fd: Any = None) -> int:
        real = self._saved["open"]
        ours = self._ours(path)
        if ours and flags & WRITE_FLAGS:
            self._point("open")
        fd: int = real(path, flags, mode, dir_fd=dir_fd)
        if ours:
            self._fds.add(fd)
        return fd

    def _close(self, fd: int) -> None:
        self._fds.discard(fd)
        self._saved["close"](fd)

    def _wrap(self, name: str, real: Any) -> Any:
        def wrapper(*args: Any, **kw: Any) -> Any:
            target = args[0] if args else None
            if self._ours(target) or (
                name in ("replace", "rename", "link", "symlink")
                and len(args) > 1
                and self._ours(args[1])
            ):
                self._point(name)
            return real(*args, **kw)

        return wrapper


def tree(root: Path) -> dict[str, bytes]:
    """{vault-relative path: bytes} of every file outside `.memlens/`, and of `.memlens/review/`.

    The review queue's decisions (`.memlens/review/decisions.json`) are the
    user's data like the vault's files: a dismiss must be all or nothing too.
    """
    out: dict[str, bytes] = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        ours = rel.parts[0] == ".memlens" and rel.parts[1:2] != ("review",)
        if ours or p.is_symlink() or not p.is_file():
            continue
        out[rel.as_posix()] = p.read_bytes()
    return out


def temp_files(root: Path) -> list[str]:
    """memlens temp files left anywhere below `root` (`.memlens/` included)."""
    return sorted(
        p.relative_to(root).as_posix() for p in root.rglob(".memlens-tmp-*") if p.is_file()
    )
