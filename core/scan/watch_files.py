"""What the watcher looks at: which paths are noise, file stats, a vault's files, per-vault state.

Kept apart from the watcher's threads so the rules (noise names, what a
vault owns, when a file counts as unreadable) read on their own.
"""

from __future__ import annotations

import hashlib
import os
import stat
import struct
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..model import ScanResult
from ..safe_io import TEMP_PREFIX, read_regular
from .vault import Vault, rescan_paths, scan_vault

#: Folders whose contents never matter to a vault.
NOISE_DIRS = frozenset({".git", ".memlens", ".hg", ".svn", "__pycache__", "node_modules"})
#: File name endings of editor swap/backup files and generic temp files.
NOISE_SUFFIXES = (".swp", ".swx", ".swo", "~", ".tmp")
#: Exact file names that are never memories (vim's write test file, macOS).
NOISE_NAMES = frozenset({"4913", ".DS_Store"})

#: (mtime_ns, size, inode) of a file packed in 24 bytes, as the stat walk compares
#: them: a vault's 100k files are held between batches, and three ints in a
#: tuple are ~160 bytes a file where these are 57 (`stat_mtime_ns` reads one back).
Stat = bytes
_STAT = struct.Struct("=qqQ")

# watchfiles reports deletions as Change.deleted (an IntEnum).
DELETED = 3


def is_noise_name(name: str) -> bool:
    """A file name that is never part of a vault (swap, backup, temp files)."""
    return (
        name in NOISE_NAMES
        or name.startswith(TEMP_PREFIX)
        or name.endswith(NOISE_SUFFIXES)
        or name.startswith(".#")
        or (len(name) > 1 and name.startswith("#") and name.endswith("#"))
    )


def is_noise(path: Path | str) -> bool:
    """True for paths whose changes never affect a vault."""
    parts = Path(path).parts
    if not parts:
        return False
    return is_noise_name(parts[-1]) or any(p in NOISE_DIRS for p in parts[:-1])


def reload_vault(vault: Vault, changed: Collection[Path]) -> ScanResult:
    """The vault's scan after the files `changed` changed (absolute paths).

    The one place that chooses how: `rescan_paths` re-reads only those files
    and relinks; a vault that was never scanned file by file (no per-file
    scans to build on) is scanned whole.  `vault.result` is left as it was:
    the caller decides when the new result is shown.  `vault.linked` moves on
    with the per-file scans, so a batch held back and read again with the
    next one relinks from what was read, not from what is shown.
    """
    before = vault.result
    try:
        if not vault.scans:
            scan_vault(vault)
            return vault.result
        return rescan_paths(vault, changed)
    finally:
        vault.result = before


def stat_of(path: Path) -> Stat | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return _STAT.pack(st.st_mtime_ns, st.st_size, st.st_ino)


def stat_mtime_ns(stat: Stat) -> int:
    """The modification time a `stat_of` value holds."""
    mtime: int = _STAT.unpack(stat)[0]
    return mtime


def sha_of(path: Path) -> str | None:
    try:
        return hashlib.sha256(read_regular(path)).hexdigest()
    except FileNotFoundError:
        return None
    except OSError:
        return ""  # unreadable: matches nothing memlens wrote


def readability(path: Path) -> bool | None:
    """True if readable, False if it exists but cannot be read, None if absent."""
    try:
        # O_NONBLOCK: never wait on a FIFO put in a vault (it counts as unreadable).
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError:
        return False
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            return True
        if not stat.S_ISREG(mode):
            return False
        os.read(fd, 1)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def rel_path(root: Path, path: Path) -> str:
    return Path(os.path.relpath(path, root)).as_posix()


def walk_tree(folder: Path) -> Iterator[Path]:
    """Every non-noise file below `folder` (no symlinked folders, no hidden ones)."""
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if d not in NOISE_DIRS and not d.startswith(".")]
        for name in filenames:
            if not is_noise_name(name):
                yield Path(dirpath) / name


def vault_files(vault: Vault) -> list[Path]:
    """The files that make up a vault, as its adapter lists them."""
    try:
        return vault.adapter.files(vault.root)
    except OSError:
        return []


def owns_path(vault: Vault, rel: str) -> bool:
    try:
        return vault.adapter.owns(vault.root, rel)
    except Exception:  # an adapter bug must not stop the watcher
        return True


def _parents(rel: str) -> Iterator[str]:
    while "/" in rel:
        rel = rel.rsplit("/", 1)[0]
        yield rel


@dataclass(slots=True)
class VaultState:
    """What the watcher tracks for one vault between batches."""

    vault: Vault
    #: The user path the vault was found below (None: watched on its own).
    base: Path | None
    #: The scan the catalog shows (what changes are computed against).
    committed: ScanResult
    stats: dict[str, Stat] = field(default_factory=dict)
    #: Vault-relative folders holding known files (to expand folder deletes).
    dirs: set[str] = field(default_factory=set)
    #: Files to re-read.
    pending: set[str] = field(default_factory=set)
    #: Folders that appeared (walk them for files).
    walk_dirs: set[str] = field(default_factory=set)
    full_walk: bool = False
    #: rel -> monotonic time a removal at that path was first held back.
    suspect: dict[str, float] = field(default_factory=dict)
    #: When the current hold began (caps how long a vault is held).
    hold_since: float | None = None
    retry_at: float = 0.0
    #: Ids already reported `unknown` in the current hold.
    unknown_sent: set[str] = field(default_factory=set)
    root_missing_since: float | None = None

    def busy(self) -> bool:
        return bool(self.pending or self.walk_dirs or self.full_walk or self.root_missing_since)

    def set_stat(self, rel: str, st: Stat | None) -> None:
        if st is None:
            self.stats.pop(rel, None)
            return
        self.stats[rel] = st
        for d in _parents(rel):
            if d in self.dirs:
                break
            self.dirs.add(d)
