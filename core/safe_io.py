"""Low-level file access that respects what the file system says.

`core.writes` builds its atomic writes on these, and every reader of a
vault's or memlens's own state files uses `read_regular`:

- `read_regular` / `open_regular` never block on a FIFO, socket or device
  where a regular file is expected (O_NONBLOCK + an fstat check), so a
  `_state.json` that is a named pipe is one clear error, not a hang.
- `refuse_protected` refuses a file its owner marked read-only, one the user
  cannot write, or one with the immutable/append-only attribute.
- `exchange` swaps two names atomically (Linux `renameat2(RENAME_EXCHANGE)`),
  so the file that was at a path at the instant of a replace survives under
  the other name and can be checked; `None` where the kernel or file system
  cannot do it, and the caller falls back to `os.replace`.
- `clean_stray_temps` removes the temp files a crashed run left behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import stat
import struct
import sys
from collections.abc import Callable
from pathlib import Path

from .errors import MemlensError

#: Prefix of memlens's own temp files (scanners and the watcher ignore these).
TEMP_PREFIX = ".memlens-tmp-"

#: Folders `clean_stray_temps` never walks into.
_SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__"})

# linux/fs.h: FS_IOC_GETFLAGS is _IOR('f', 1, long); the flags themselves.
_IOC_READ = 2
_FS_IOC_GETFLAGS = (_IOC_READ << 30) | (ctypes.sizeof(ctypes.c_long) << 16) | (ord("f") << 8) | 1
FS_IMMUTABLE_FL = 0x00000010
FS_APPEND_FL = 0x00000020

_AT_FDCWD = -100
_RENAME_NOREPLACE = 1 << 0
_RENAME_EXCHANGE = 1 << 1


class WriteError(MemlensError):
    """A write failed (disk full, permissions, read-only file system, ...)."""


class ProtectedFileError(WriteError):
    """The file is marked read-only, immutable or append-only: memlens leaves it be."""


class NotRegularFileError(MemlensError, OSError):
    """A FIFO, socket, device or folder sits where a regular file is expected.

    Also an OSError, so every reader that already reports an unreadable file
    as a problem for that path reports this one the same way.
    """

    def __init__(self, path: Path | str, why: str) -> None:
        super().__init__(errno.EINVAL, why, os.fspath(path))
        self.path = Path(path)

    def __str__(self) -> str:
        return f"{self.path}: {self.strerror}"


def kind_of(mode: int) -> str:
    """What a non-regular file is, for messages."""
    if stat.S_ISDIR(mode):
        return "is a folder, not a regular file"
    if stat.S_ISFIFO(mode):
        return "is a named pipe, not a regular file"
    if stat.S_ISSOCK(mode):
        return "is a socket, not a regular file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device, not a regular file"
    if stat.S_ISLNK(mode):
        return "is a symbolic link, not a regular file"
    return "is not a regular file"


def open_regular(path: Path | str, *, follow: bool = True) -> int:
    """A read-only fd on the regular file at `path` (the caller closes it).

    O_NONBLOCK makes opening a FIFO return at once instead of waiting for a
    writer; the fstat then refuses anything that is not a regular file.
    `follow=False` also refuses a symbolic link at `path` itself.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
    if not follow:
        flags |= os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow:
            raise NotRegularFileError(path, kind_of(stat.S_IFLNK)) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(path, kind_of(mode))
        # Reads of a regular file never block; clear the flag anyway so the
        # fd behaves normally for whoever reads it.
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_fd(fd: int, start: int = 0) -> bytes:
    """Every byte of the open file from offset `start` to its end now."""
    parts: list[bytes] = []
    offset = start
    while chunk := os.pread(fd, 1 << 20, offset):
        parts.append(chunk)
        offset += len(chunk)
    return b"".join(parts)


def read_regular(path: Path | str, *, follow: bool = True) -> bytes:
    """The bytes of the regular file at `path`; NotRegularFileError for a FIFO & co."""
    fd = open_regular(path, follow=follow)
    try:
        return read_fd(fd)
    finally:
        os.close(fd)


def read_regular_text(path: Path | str, *, errors: str = "strict") -> str:
    """`read_regular`, decoded as UTF-8 (for JSON and TOML state files)."""
    return read_regular(path).decode("utf-8", errors=errors)


def file_flags(fd: int) -> int:
    """The inode flags (chattr) of an open file; 0 where the file system has none."""
    buf = bytearray(ctypes.sizeof(ctypes.c_long))
    try:
        fcntl.ioctl(fd, _FS_IOC_GETFLAGS, buf, True)
    except OSError as exc:
        if exc.errno in (errno.ENOTTY, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
            return 0
        raise
    # The kernel reads and writes an int here, whatever the ioctl's name says.
    return int(struct.unpack_from("=i", buf)[0])


def refuse_protected(path: Path, fd: int, verb: str = "rewrite") -> os.stat_result:
    """The fstat of `fd`, or ProtectedFileError if memlens must not `verb` the file.

    A file whose mode lacks owner write, one the user may not write, or one
    with the immutable or append-only attribute is its owner's answer: a
    replace through the writable folder would silently override it.
    """
    st = os.fstat(fd)
    if not st.st_mode & stat.S_IWUSR:
        why = "is read-only (its mode has no owner write permission)"
    elif os.geteuid() != 0 and not os.access(path, os.W_OK):
        why = "is not writable by you"
    else:
        flags = file_flags(fd)
        if flags & FS_IMMUTABLE_FL:
            why = "is immutable (chattr +i)"
        elif flags & FS_APPEND_FL:
            why = "is append-only (chattr +a)"
        else:
            return st
    raise ProtectedFileError(f"{path}: {why}; memlens will not {verb} it")


def keep_owner(fd: int, path: Path, uid: int, gid: int) -> None:
    """Give the new file at `fd` the owner and group the replaced file had.

    Without this a rewrite as root (cron, sudo) leaves a root-owned file the
    agent owning the vault can no longer write.  A user who cannot give the
    file its old owner is refused instead of silently taking it over.
    """
    st = os.fstat(fd)
    if (st.st_uid, st.st_gid) == (uid, gid):
        return
    try:
        os.fchown(fd, uid, gid)
    except OSError as exc:
        raise WriteError(
            f"{path}: could not keep its owner {uid}:{gid} ({exc.strerror or exc}); "
            "memlens will not change who owns a memory"
        ) from exc


_Renameat2 = Callable[[int, bytes, int, bytes, int], int]
_renameat2_fn: list[_Renameat2 | None] = []


def _renameat2() -> _Renameat2 | None:
    """libc's renameat2, looked up once; None off Linux or with an old libc."""
    if not _renameat2_fn:
        fn: _Renameat2 | None = None
        if sys.platform.startswith("linux"):
            with contextlib.suppress(OSError, AttributeError):
                # The running process's own symbols include libc's: no
                # find_library, which would start ldconfig or a compiler.
                libc = ctypes.CDLL(None, use_errno=True)
                raw = libc.renameat2
                at, name = ctypes.c_int, ctypes.c_char_p
                raw.argtypes = [at, name, at, name, ctypes.c_uint]
                raw.restype = ctypes.c_int
                fn = raw
        _renameat2_fn.append(fn)
    return _renameat2_fn[0]


def _rename2(a: Path, b: Path, flags: int) -> bool:
    """renameat2(a, b, flags); False where the kernel or file system cannot."""
    fn = _renameat2()
    if fn is None:
        return False
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), flags) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), os.fspath(b))


def exchange(a: Path, b: Path) -> bool:
    """Atomically swap the files at `a` and `b`; False if not supported here.

    Unsupported means no renameat2 (not Linux, old libc), ENOSYS (old kernel)
    or EINVAL (a file system without RENAME_EXCHANGE): the caller falls back
    to `os.replace`.  Any other failure is raised as the OSError it is.
    """
    return _rename2(a, b, _RENAME_EXCHANGE)


def rename_noreplace(src: Path, dst: Path) -> bool:
    """Atomically rename `src` to `dst` unless `dst` exists (FileExistsError then).

    False where unsupported (see `exchange`); the caller links and unlinks.
    """
    return _rename2(src, dst, _RENAME_NOREPLACE)


def is_temp_name(name: str) -> bool:
    return name.startswith(TEMP_PREFIX)


def clean_stray_temps(vault_root: Path) -> list[Path]:
    """Remove the `.memlens-tmp-*` files a crashed run left in the vault; return them.

    They are memlens's own half-finished copies, never memory content (the
    before- and after-bytes of every action live in `.memlens/blobs`).  Call
    it only while holding the vault lock (`<vault>/.memlens/lock`), so no
    live memlens process is still writing one of them.  Links are not
    followed and only regular files are removed.
    """
    removed: list[Path] = []
    for folder, dirs, files in os.walk(vault_root, followlinks=False):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS]
        for name in files:
            if not is_temp_name(name):
                continue
            p = Path(folder) / name
            try:
                if not stat.S_ISREG(os.lstat(p).st_mode):
                    continue
                os.unlink(p)
            except FileNotFoundError:
                continue
            removed.append(p)
    return sorted(removed)
