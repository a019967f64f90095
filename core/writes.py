"""Safe file writes: atomic replace, conflict detection, no-clobber moves.

Every change memlens makes to a vault goes through this module:

- `snapshot()` records what was read (bytes hash, size, mtime, mode).
- `atomic_write()` refuses when the file's current bytes differ from the
  snapshot (hash, so same-size same-mtime rewrites are caught too), then writes
  a uniquely named temp file in the same directory, fsyncs it, keeps the mode,
  `os.replace`s it over the target and fsyncs the directory.  A failure at any
  point leaves the old bytes and removes the temp file.
- `move_no_clobber()` moves a file but never overwrites an existing one.

Nothing here deletes a memory: archive is a move, removal of a section is
paired by the caller with an append elsewhere, and undo restores bytes.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from .errors import ConflictError, MemlensError, UnsafePathError
from .paths import is_inside
from .selfwrites import note_write

#: Prefix of memlens's own temp files (the watcher ignores these).
TEMP_PREFIX = ".memlens-tmp-"


class WriteError(MemlensError):
    """A write failed (disk full, permissions, read-only file system, ...)."""


@dataclass(frozen=True, slots=True)
class FileSnapshot:
    """What a file held when it was read; None fields mean it did not exist."""

    path: Path
    sha256: str | None
    size: int | None
    mtime_ns: int | None
    mode: int | None

    @property
    def exists(self) -> bool:
        return self.sha256 is not None


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def snapshot(path: Path, data: bytes | None = None) -> FileSnapshot:
    """Snapshot `path` now (or with bytes the caller already read)."""
    try:
        st = os.stat(path)
        if data is None:
            data = Path(path).read_bytes()
    except FileNotFoundError:
        return FileSnapshot(Path(path), None, None, None, None)
    return FileSnapshot(Path(path), digest(data), st.st_size, st.st_mtime_ns, st.st_mode)


def check_unchanged(expected: FileSnapshot) -> bytes | None:
    """Current bytes if they still match `expected`; ConflictError otherwise."""
    try:
        current = expected.path.read_bytes()
    except FileNotFoundError:
        if expected.exists:
            raise ConflictError(
                f"{expected.path}: the file was deleted or moved since it was read"
            ) from None
        return None
    except OSError as exc:
        raise WriteError(f"{expected.path}: cannot read before writing: {exc.strerror}") from exc
    if not expected.exists:
        raise ConflictError(f"{expected.path}: a file appeared here since it was read")
    if digest(current) != expected.sha256:
        raise ConflictError(f"{expected.path}: the file changed on disk since it was read")
    return current


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # some file systems do not allow opening directories
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _describe(exc: OSError) -> str:
    names = {
        errno.ENOSPC: "no space left on the device",
        errno.EACCES: "permission denied",
        errno.EPERM: "operation not permitted",
        errno.EROFS: "read-only file system",
        errno.EDQUOT: "disk quota exceeded",
    }
    return names.get(exc.errno or 0, exc.strerror or str(exc))


def atomic_write(
    path: Path,
    data: bytes,
    expected: FileSnapshot | None,
    *,
    root: Path | None = None,
) -> FileSnapshot:
    """Replace `path` with `data` atomically; return the new snapshot.

    `expected` is the snapshot taken when the content was read (None to skip
    the check, only for files memlens itself owns, such as its journal).
    `root`, when given, must contain `path` (realpath containment).
    """
    path = Path(path)
    if root is not None and not is_inside(root, path):
        raise UnsafePathError(f"{path} is outside the vault {root}")
    if expected is not None:
        check_unchanged(expected)
    folder = path.parent
    mode: int | None = None
    with contextlib.suppress(FileNotFoundError):
        mode = stat.S_IMODE(os.stat(path).st_mode)
    tmp = folder / f"{TEMP_PREFIX}{secrets.token_hex(6)}-{path.name}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
            if mode is not None:
                os.fchmod(fd, mode)
            else:
                umask = os.umask(0)
                os.umask(umask)
                os.fchmod(fd, 0o666 & ~umask)
        finally:
            os.close(fd)
        if expected is not None:
            # Last check right before the replace narrows the race window.
            check_unchanged(expected)
        # Tell the watcher before the change lands, so it is never echoed.
        note_write(path, digest(data))
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise WriteError(f"{path}: could not write: {_describe(exc)}") from exc
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(folder)
    return snapshot(path, data)


def move_no_clobber(
    src: Path, dst: Path, expected: FileSnapshot | None, *, root: Path | None = None
) -> None:
    """Move `src` to `dst`, refusing if `dst` exists; both must stay in `root`.

    Uses a hard link then an unlink so the destination is never overwritten
    (os.rename would silently replace it).  Falls back to copy + link where
    hard links are not supported.
    """
    src, dst = Path(src), Path(dst)
    if root is not None:
        for p in (src, dst):
            if not is_inside(root, p) or (p.is_symlink() and not is_inside(root, p.resolve())):
                raise UnsafePathError(f"{p} is outside the vault {root}")
    if src.is_symlink():
        raise UnsafePathError(f"{src} is a symbolic link; memlens does not move links")
    if expected is not None:
        check_unchanged(expected)
    if dst.exists() or dst.is_symlink():
        raise ConflictError(f"{dst} already exists; memlens never overwrites on a move")
    try:
        dst.parent.mkdir(parents=True, exist_ok=True)
        # Tell the watcher before the move lands, so it is never echoed.
        note_write(dst, digest(src.read_bytes()), moved_from=src)
        try:
            os.link(src, dst)
        except OSError as exc:
            if exc.errno == errno.EEXIST:
                raise ConflictError(f"{dst} already exists") from None
            if exc.errno not in (errno.EXDEV, errno.EPERM, errno.ENOTSUP, errno.EMLINK):
                raise
            data = src.read_bytes()
            tmp = dst.parent / f"{TEMP_PREFIX}{secrets.token_hex(6)}-{dst.name}"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                os.write(fd, data)
                os.fsync(fd)  # durable before the source goes away
                os.fchmod(fd, stat.S_IMODE(src.stat().st_mode))
            finally:
                os.close(fd)
            try:
                os.link(tmp, dst)
            finally:
                os.unlink(tmp)
        os.unlink(src)
    except OSError as exc:
        raise WriteError(f"could not move {src} to {dst}: {_describe(exc)}") from exc
    _fsync_dir(dst.parent)
    _fsync_dir(src.parent)


def append_bytes(path: Path, data: bytes, expected: FileSnapshot | None) -> FileSnapshot:
    """Append to an append-only file (JSON Lines) via an atomic rewrite.

    Rewriting old + new keeps the operation atomic (no torn line on a crash)
    and lets the conflict check cover the whole file.
    """
    old = b"" if expected is None or not expected.exists else check_unchanged(expected) or b""
    if expected is None and path.exists():
        old = path.read_bytes()
    if old and not old.endswith(b"\n"):
        old += b"\r\n" if old.endswith(b"\r") or b"\r\n" in old else b"\n"
    return atomic_write(path, old + data, expected)
