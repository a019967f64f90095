"""The folders a format's listing looked at, stamped as it looked: proof the listing is unchanged.

Why: a warm `memlens search` at 100k memories listed every folder of the
vault again (0.27 s of scandir) only to learn that the same files are there.
A folder's entries cannot change without its mtime changing (creating,
removing or renaming an entry updates it), so when every folder a listing
looked at, and each folder above them, still has the stamp it had when that
listing was taken, the listing would give the same names: a search can then
stat the files it already knows (`core.store.statwalk`) and skip the listing.

The stamps are taken by the listing helpers of `core.formats.files` when
`recording()` is on, each folder once and *before* it is read, so a change
made while the listing runs shows as another stamp next time.  A recording
is not trusted (`Recording.trusted` False) when anything could change the
listing without a folder's mtime changing:

- a symbolic link met on the way (its target may change elsewhere);
- a folder modified within `RACY_NS` of its stamp (a change in the same
  clock tick would keep the same mtime; 2 s covers coarse file systems);
- a folder that could not be stat'ed for another reason than being absent.

An absent folder is stamped as absent: its parent, stamped too, changes
when it appears.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field

#: A folder modified this close to its stamp (ns) does not prove anything.
RACY_NS = 2_000_000_000

#: (st_dev, st_ino, st_mtime_ns, st_ctime_ns) of a folder; None: absent.
FolderStamp = tuple[int, int, int, int] | None


@dataclass(slots=True)
class Recording:
    """What one listing looked at: vault-relative folder -> stamp ("" is the root)."""

    root: str
    folders: dict[str, FolderStamp] = field(default_factory=dict)
    trusted: bool = True


_CURRENT: ContextVar[Recording | None] = ContextVar("listed_folders", default=None)


@contextlib.contextmanager
def recording(root: str | os.PathLike[str]) -> Iterator[Recording]:
    """Record the folders the listings made inside this block look at (one vault root)."""
    rec = Recording(os.fspath(root))
    token = _CURRENT.set(rec)
    try:
        yield rec
    finally:
        _CURRENT.reset(token)


def stamp_of(path: str) -> tuple[FolderStamp, bool]:
    """(The folder's stamp, whether it may be trusted) as of now."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None, True
    except OSError:
        return None, False
    if time.time_ns() - st.st_mtime_ns < RACY_NS:
        return None, False
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns), True


def note_folder(folder_rel: str) -> None:
    """Stamp vault folder `folder_rel` and each folder above it, when a recording is on."""
    rec = _CURRENT.get()
    if rec is None:
        return
    rel = folder_rel.strip("/")
    while True:
        if rel not in rec.folders:
            stamp, ok = stamp_of(f"{rec.root}/{rel}" if rel else rec.root)
            rec.folders[rel] = stamp
            rec.trusted = rec.trusted and ok
        if not rel:
            return
        rel = rel.rpartition("/")[0]


def note_parent(rel: str) -> None:
    """Stamp the folder holding vault file `rel` (and the folders above it)."""
    note_folder(rel.rpartition("/")[0])


def note_link() -> None:
    """The listing met a symbolic link: its recording proves nothing."""
    rec = _CURRENT.get()
    if rec is not None:
        rec.trusted = False


def unchanged_folders(root: str, folders: dict[str, FolderStamp]) -> bool:
    """Every folder still has its recorded stamp (so a listing would give the same names)."""
    for rel, was in folders.items():
        now, ok = stamp_of(f"{root}/{rel}" if rel else root)
        if not ok or now != was:
            return False
    return True


__all__ = [
    "RACY_NS",
    "FolderStamp",
    "Recording",
    "note_folder",
    "note_link",
    "note_parent",
    "recording",
    "stamp_of",
    "unchanged_folders",
]
