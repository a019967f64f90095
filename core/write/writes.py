"""Safe file writes: atomic replace, conflict detection, no-clobber moves.

Every change memlens makes to a vault goes through this module:

- `snapshot()` records what was read (bytes hash, size, mtime, mode).
- `atomic_write()` writes a uniquely named temp file beside the target,
  fsyncs it, gives it the old file's mode, owner and group, and swaps it in
  with `renameat2(RENAME_EXCHANGE)`, so the file that was at the path at the
  instant of the swap lands at the temp name and is checked: if it is not
  what the caller read (an agent appended or rewrote meanwhile) the swap is
  undone and the write refused, or, for append-only stores, the appended
  tail is carried over.  Where the exchange is unsupported, `os.replace`
  with an fd held on the old file gives the same check.  A failure at any
  point leaves the old bytes and removes the temp file.
- `move_no_clobber()` moves a file but never overwrites an existing one and
  never leaves a memory in two places.

Files their owner marked read-only, immutable or append-only are refused,
FIFOs and other non-regular files are never opened for reading or replaced.
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
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConflictError, UnsafePathError
from ..safe_io import (
    TEMP_PREFIX,
    NotRegularFileError,
    ProtectedFileError,
    WriteError,
    exchange,
    keep_owner,
    open_regular,
    read_fd,
    read_regular,
    refuse_protected,
    rename_noreplace,
)
from ..text.paths import is_inside
from .selfwrites import note_write

__all__ = [
    "TEMP_PREFIX",
    "FileSnapshot",
    "NotRegularFileError",
    "ProtectedFileError",
    "WriteError",
    "append_bytes",
    "atomic_write",
    "check_unchanged",
    "digest",
    "move_no_clobber",
    "snapshot",
]

#: Looks at a swapped-out file for bytes an appender still writes to it.
MAX_ROUNDS = 5


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
            data = read_regular(path)
    except FileNotFoundError:
        return FileSnapshot(Path(path), None, None, None, None)
    # The size of the bytes hashed, not the stat's: they may differ if the
    # file changed between the two, and a carried tail is cut at this size.
    return FileSnapshot(Path(path), digest(data), len(data), st.st_mtime_ns, st.st_mode)


def check_unchanged(expected: FileSnapshot) -> bytes | None:
    """Current bytes if they still match `expected`; ConflictError otherwise."""
    try:
        current = read_regular(expected.path)
    except FileNotFoundError:
        if expected.exists:
            raise ConflictError(
                f"{expected.path}: the file was deleted or moved since it was read"
            ) from None
        return None
    except NotRegularFileError:
        raise
    except OSError as exc:
        raise WriteError(f"{expected.path}: cannot read before writing: {_describe(exc)}") from exc
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
        errno.EIO: "input/output error",
    }
    return names.get(exc.errno or 0, exc.strerror or str(exc))


@dataclass(slots=True)
class _Base:
    """What should be at the path apart from bytes appended since (sha, size)."""

    sha256: str
    size: int

    def tail(self, buf: bytes, carry: bool) -> bytes | None:
        """The bytes appended after the base, b"" if none; None if rewritten."""
        if len(buf) == self.size and digest(buf) == self.sha256:
            return b""
        if carry and len(buf) > self.size and digest(buf[: self.size]) == self.sha256:
            return buf[self.size :]
        return None


def _temp_name(path: Path) -> Path:
    return path.parent / f"{TEMP_PREFIX}{secrets.token_hex(6)}-{path.name}"


def _write_temp(path: Path, data: bytes, like: os.stat_result | None) -> tuple[Path, int]:
    """A fsynced temp file beside `path` holding `data`, with `like`'s mode and owner.

    Returns the temp's name and an fd open on it (read-write), which the
    caller closes: after the swap it still reads what landed at the path.
    """
    tmp = _temp_name(path)
    fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        if like is not None:
            keep_owner(
                fd, path, like.st_uid, like.st_gid
            )  # before the mode: chown drops set-id bits
            os.fchmod(fd, stat.S_IMODE(like.st_mode))
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.fchmod(fd, 0o666 & ~umask)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp, fd


def _open_target(path: Path) -> int | None:
    """An fd on the regular file at `path`, None if absent; refuses links, FIFOs, ..."""
    try:
        return open_regular(path, follow=False)
    except FileNotFoundError:
        return None


def atomic_write(
    path: Path,
    data: bytes,
    expected: FileSnapshot | None,
    *,
    root: Path | None = None,
    carry_appended: bool = False,
) -> FileSnapshot:
    """Replace `path` with `data` atomically; return the snapshot of what was written.

    `expected` is the snapshot taken when the content was read (None to take
    the bytes at the path now as the base, only for files memlens itself
    owns, such as its journal).  `root`, when given, must contain `path`
    (realpath containment).  With `carry_appended`, bytes another writer
    appended after the base are kept after `data` (the returned size counts
    them) instead of refusing the write.
    """
    path = Path(path)
    if root is not None and not is_inside(root, path):
        raise UnsafePathError(f"{path} is outside the vault {root}")
    try:
        old_fd = _open_target(path)
    except NotRegularFileError as exc:
        raise WriteError(f"{exc}; memlens will not replace it") from None
    except OSError as exc:
        raise WriteError(f"{path}: cannot read before writing: {_describe(exc)}") from exc
    if old_fd is None:
        if expected is not None and expected.exists:
            raise ConflictError(f"{path}: the file was deleted or moved since it was read")
        return _create(path, data, no_clobber=expected is not None)
    try:
        if expected is not None and not expected.exists:
            raise ConflictError(f"{path}: a file appeared here since it was read")
        like = refuse_protected(path, old_fd)
        if expected is not None and expected.sha256 is not None and expected.size is not None:
            base = _Base(expected.sha256, expected.size)
        else:
            current = read_fd(old_fd)
            base = _Base(digest(current), len(current))
        try:
            return _swap_in(path, data, old_fd, like, base, carry_appended)
        except OSError as exc:
            raise WriteError(f"{path}: could not write: {_describe(exc)}") from exc
    finally:
        os.close(old_fd)


def _create(path: Path, data: bytes, *, no_clobber: bool) -> FileSnapshot:
    """Create `path`; with `no_clobber` a file that appeared meanwhile is a conflict."""
    tmp: Path | None = None
    try:
        tmp, fd = _write_temp(path, data, None)
        try:
            note_write(path, digest(data))
            if not no_clobber:
                os.replace(tmp, path)
                tmp = None
            elif not rename_noreplace(tmp, path):
                os.link(tmp, path)  # no-clobber on file systems without renameat2
            st = os.fstat(fd)
        finally:
            os.close(fd)
    except FileExistsError:
        raise ConflictError(f"{path}: a file appeared here since it was read") from None
    except OSError as exc:
        raise WriteError(f"{path}: could not write: {_describe(exc)}") from exc
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    _fsync_dir(path.parent)
    return FileSnapshot(path, digest(data), len(data), st.st_mtime_ns, st.st_mode)


def _swap_in(
    path: Path, data: bytes, cur_fd: int, like: os.stat_result, base: _Base, carry: bool
) -> FileSnapshot:
    """Swap `data` (+ a carried tail) in for the file at `path`, checked before and after.

    The bytes at the path must be `base` (+ an appended tail when carrying);
    a temp holding `data + tail` is swapped in; the file that came out must
    be what was checked.  If it was rewritten, or appended to without
    carrying, the swap is undone and ConflictError raised.  When carrying,
    bytes an appender with the old file open wrote after the swap are
    appended to the new file, so the appender loses nothing.
    """
    cur = read_fd(cur_fd)
    tail = base.tail(cur, carry)
    if tail is None:
        raise ConflictError(f"{path}: the file changed on disk since it was read")
    payload = data + tail
    tmp, new_fd = _write_temp(path, payload, like)
    held = [new_fd]  # fds opened here, closed on the way out
    try:
        out_fd, swapped = _swap(path, tmp, cur_fd, len(cur), digest(payload), carry)
        if out_fd != cur_fd:
            held.append(out_fd)
        seen = tail
        for _ in range(MAX_ROUNDS):
            try:
                grace = APPEND_GRACE_SECONDS if carry else 0.0
                later = base.tail(_settled(path.parent, out_fd, grace), carry)
            except OSError:
                # The old file cannot be checked: it must not stay at a temp
                # name (stray temps are cleaned), so put it back and fail.
                _swap_back(path, tmp, payload, new_fd, out_fd, swapped)
                raise
            if later == seen:
                break
            if later is None or not carry or not later.startswith(seen):
                # (After a forwarded tail this may repeat those bytes in the
                # restored file: a double race, and a repeat is not a loss.)
                _swap_back(path, tmp, payload, new_fd, out_fd, swapped)
                raise ConflictError(f"{path}: the file changed on disk while memlens wrote it")
            _append(path, later[len(seen) :])
            seen = later
        _drop(tmp, out_fd, swapped)
        written = read_fd(new_fd)
        st = os.fstat(new_fd)
        return FileSnapshot(path, digest(written), len(written), st.st_mtime_ns, st.st_mode)
    finally:
        for fd in held:
            with contextlib.suppress(OSError):
                os.close(fd)


def _append(path: Path, data: bytes) -> None:
    """Append `data` to the file at `path` in one write (bytes another writer put elsewhere)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _swap(
    path: Path, tmp: Path, cur_fd: int, size: int, sha: str, grown_ok: bool
) -> tuple[int, bool]:
    """Put `tmp` at `path`; return an fd on the file that was there, and whether exchanged.

    Refused first if another file took the path, or (unless `grown_ok`, when
    an appended tail is carried after the swap) if the file grew from `size`.
    """
    cur_st = os.fstat(cur_fd)
    try:
        at_path = os.lstat(path)
        if (at_path.st_ino, at_path.st_dev) != (cur_st.st_ino, cur_st.st_dev) or (
            cur_st.st_size != size and not grown_ok
        ):
            raise ConflictError(f"{path}: the file changed on disk since it was read")
        note_write(path, sha)  # before the change lands, so the watcher never echoes it
        if exchange(tmp, path):
            try:
                return open_regular(tmp, follow=False), True
            except OSError:
                exchange(tmp, path)  # not a file we can check: put it back
                raise
        # No exchange here: the fd held on the old file still reads what the
        # replace unlinks, so appends to it are seen.  What this fallback
        # cannot see is a whole new file put at the path between the inode
        # check above and the replace; the exchange has no such gap.
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            if os.lstat(tmp).st_ino != cur_st.st_ino:
                os.unlink(tmp)
        raise
    return cur_fd, False


#: How long an append-only file's swapped-out old copy is watched for an
#: appender that opened it just before the swap (`open(path, "a")` then a
#: write a moment later).  Only writes that carry appended bytes pay it.
APPEND_GRACE_SECONDS = 0.03


def _settled(folder: Path, out_fd: int, grace: float) -> bytes:
    """The bytes of the swapped-out file once writers holding it open are done.

    Fsyncing the folder first gives an appender with an fd on the old file a
    moment to finish, and for append-only files (`grace`) memlens waits a
    little longer, since agents append without any lock; a last fstat
    catches one still growing it.
    """
    _fsync_dir(folder)
    if grace > 0:
        time.sleep(grace)
    out = read_fd(out_fd)
    for _ in range(3):
        if os.fstat(out_fd).st_size == len(out):
            break
        out = read_fd(out_fd)
    return out


def _drop(tmp: Path, out_fd: int, swapped: bool) -> None:
    """Remove the swapped-out old file (at `tmp` after an exchange), if still that file."""
    if not swapped:
        return
    st = os.fstat(out_fd)
    with contextlib.suppress(FileNotFoundError):
        at = os.lstat(tmp)
        if (at.st_ino, at.st_dev) == (st.st_ino, st.st_dev):
            # No fsync for this: a crash before it lands leaves a stray temp,
            # which the next run's `clean_stray_temps` removes.  Nor does a
            # failure here fail the write, which is complete and durable: the
            # transaction sweeps its folders for such leftovers at its end.
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _swap_back(
    path: Path, tmp: Path, payload: bytes, new_fd: int, out_fd: int, swapped: bool
) -> None:
    """Undo a swap whose old file turned out changed: the vault as the other writer left it.

    Bytes appended to our file in the moment it was at the path are appended
    to the restored file too, so nothing anyone wrote is lost.
    """
    if swapped:
        exchange(tmp, path)
    else:
        old = read_fd(out_fd)
        back, back_fd = _write_temp(path, old, os.fstat(out_fd))
        os.close(back_fd)
        note_write(path, digest(old))
        os.replace(back, path)
    extra = read_fd(new_fd, len(payload))
    if extra:
        _append(path, extra)
    if swapped:
        with contextlib.suppress(FileNotFoundError):
            if os.lstat(tmp).st_ino == os.fstat(new_fd).st_ino:
                os.unlink(tmp)
    _fsync_dir(path.parent)


def move_no_clobber(
    src: Path, dst: Path, expected: FileSnapshot | None, *, root: Path | None = None
) -> None:
    """Move `src` to `dst`, refusing if `dst` exists; both must stay in `root`.

    An atomic no-replace rename where the system has one, else a hard link
    then an unlink of the source (os.rename would silently replace `dst`),
    else copy + link.  The moved file keeps its inode, owner and mode; a
    file its owner protected is refused; if the source cannot be removed
    the new name is removed again, so a memory is never in two places.
    """
    src, dst = Path(src), Path(dst)
    if root is not None:
        for p in (src, dst):
            if not is_inside(root, p) or (p.is_symlink() and not is_inside(root, p.resolve())):
                raise UnsafePathError(f"{p} is outside the vault {root}")
    if src.is_symlink():
        raise UnsafePathError(f"{src} is a symbolic link; memlens does not move links")
    if dst.exists() or dst.is_symlink():
        raise ConflictError(f"{dst} already exists; memlens never overwrites on a move")
    try:
        src_fd = open_regular(src, follow=False)
    except FileNotFoundError:
        raise ConflictError(f"{src}: the file was deleted or moved since it was read") from None
    except OSError as exc:
        raise WriteError(f"could not move {src}: {exc}") from exc
    try:
        st = refuse_protected(src, src_fd, "move")
        data = read_fd(src_fd)
        if expected is not None and (not expected.exists or digest(data) != expected.sha256):
            raise ConflictError(f"{src}: the file changed on disk since it was read")
        try:
            dst.parent.mkdir(parents=True, exist_ok=True)
            # Tell the watcher before the move lands, so it is never echoed.
            note_write(dst, digest(data), moved_from=src)
            _move_inode(src, dst, src_fd, st, data)
        except FileExistsError:
            raise ConflictError(f"{dst} already exists") from None
        except OSError as exc:
            raise WriteError(f"could not move {src} to {dst}: {_describe(exc)}") from exc
    finally:
        os.close(src_fd)
    _fsync_dir(dst.parent)
    _fsync_dir(src.parent)


def _same_inode(path: Path, st: os.stat_result) -> bool:
    try:
        at = os.lstat(path)
    except FileNotFoundError:
        return False
    return (at.st_ino, at.st_dev) == (st.st_ino, st.st_dev)


def _move_inode(src: Path, dst: Path, src_fd: int, st: os.stat_result, data: bytes) -> None:
    """Move the file checked as `st` from `src` to `dst`; ConflictError if another moved."""
    if rename_noreplace(src, dst):
        if not _same_inode(dst, st):
            # Someone replaced the source between the check and the rename:
            # put their file back where they left it and refuse.
            rename_noreplace(dst, src)
            raise ConflictError(f"{src}: the file changed on disk while memlens moved it")
        return
    try:
        os.link(src, dst)
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.ENOTSUP, errno.EMLINK):
            raise
        _copy_no_clobber(dst, data, st)
    # A copy misses what is appended to the source from now on; a link does not.
    if not _same_inode(src, st) or read_fd(src_fd) != data:
        _unlink_if(dst, os.lstat(dst))
        raise ConflictError(f"{src}: the file changed on disk while memlens moved it")
    try:
        os.unlink(src)
    except OSError as exc:
        # The new name must go again, or the memory would be in two places.
        _unlink_if(dst, os.lstat(dst))
        raise WriteError(
            f"could not move {src} to {dst}: the source cannot be removed "
            f"({_describe(exc)}); nothing was moved"
        ) from exc


def _copy_no_clobber(dst: Path, data: bytes, like: os.stat_result) -> None:
    """Where hard links are unsupported: a fsynced copy with the same owner and mode."""
    tmp, fd = _write_temp(dst, data, like)
    os.close(fd)
    try:
        os.link(tmp, dst)
    finally:
        os.unlink(tmp)


def _unlink_if(path: Path, st: os.stat_result) -> None:
    with contextlib.suppress(FileNotFoundError):
        if _same_inode(path, st):
            os.unlink(path)


def append_bytes(path: Path, data: bytes, expected: FileSnapshot | None) -> FileSnapshot:
    """Append to an append-only file (JSON Lines) via an atomic rewrite.

    Rewriting old + new keeps the operation atomic (no torn line on a crash)
    and lets the conflict check cover the whole file.  Lines another writer
    appends meanwhile are carried over, after ours, never lost.
    """
    if expected is None:
        expected = snapshot(path)
    old = (check_unchanged(expected) or b"") if expected.exists else b""
    if old and not old.endswith(b"\n"):
        old += b"\r\n" if old.endswith(b"\r") or b"\r\n" in old else b"\n"
    return atomic_write(path, old + data, expected, carry_appended=True)
