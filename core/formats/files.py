"""Listing a vault's files safely, and vault-relative paths.

Every adapter lists its files through these helpers, so that no format reads
outside its vault root, blocks on a pipe, or loses an odd entry silently.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from ..model import FileScan, Problem, Reason
from ..safe_io import kind_of
from .listed_folders import FolderStamp, note_folder, note_link, note_parent, recording


def rel_posix(root: Path, path: Path) -> str:
    """Vault-relative POSIX path (ValueError if `path` is not below `root`)."""
    # String slicing, not Path.relative_to: this runs for every file of every
    # stat walk, and pathlib's parsing cost dominated a 100k-file warm start.
    full, base = str(path), str(root)
    n = len(base)
    if len(full) > n + 1 and full.startswith(base) and full[n] == os.sep and base != os.sep:
        rel = full[n + 1 :]
        return rel if os.sep == "/" else rel.replace(os.sep, "/")
    return path.relative_to(root).as_posix()


def is_hidden_name(name: str) -> bool:
    """Names `iter_md` skips: hidden files and editor/memlens temp files."""
    return name.startswith(".")


# -- listing folders safely --------------------------------------------------
#
# A vault is a folder tree agents and people write into; it may hold a
# symbolic link to anywhere (another vault, /etc, a loop back to itself), a
# named pipe that blocks whoever opens it, or a folder called `x.md`.  The
# listing helpers below never raise for one bad entry and never list an entry
# that would make a scan read outside the vault root (by realpath) or block:
# such entries are left out of the names and returned as `SkippedEntry`s, so
# the scan can show each one as a Problem (`skipped_scan`) instead of losing
# it silently.  Regular files and folders cost no extra system call (the
# entry type comes with the directory listing); only links are resolved.

#: Details of skipped entries (the Problem's one-line detail).
OUTSIDE_VAULT = "symbolic link points outside the vault; not read"
FOLDER_OUTSIDE_VAULT = "folder leads outside the vault through a symbolic link; not read"
DANGLING_LINK = "symbolic link points to nothing (its target does not exist)"
IS_FOLDER = "is a folder, not a file"


@dataclass(frozen=True, slots=True)
class SkippedEntry:
    """An entry a listing left out because reading it is unsafe or impossible.

    `rel` is the vault-relative POSIX path of the entry (a folder's path when
    the whole folder was left out); `detail` says why, in one line.
    """

    rel: str
    detail: str
    reason: Reason = Reason.ENCODING


class Listing(NamedTuple):
    """Names a listing keeps (sorted) and the entries it left out."""

    names: list[str]
    skipped: list[SkippedEntry]
    #: The folders it looked at, stamped (`recorded_listing`); None: not
    #: recorded, or not to be trusted (`core.formats.listed_folders`).
    folders: dict[str, FolderStamp] | None = None


def recorded_listing(list_files_of: Callable[[Path], Listing], root: Path) -> Listing:
    """A vault's listing (`list_files_of`: its adapter's `file_listing`) with the
    folders it looked at, when they prove it (nothing skipped, no link met)."""
    with recording(root) as seen:
        listing = list_files_of(root)
    if seen.trusted and not listing.skipped:
        return listing._replace(folders=seen.folders)
    return listing


#: How the detail of an entry the OS refused to read starts.
CANNOT_READ = "cannot read: "


def cannot_read(exc: OSError) -> str:
    """`cannot read: <strerror>`, the detail of an entry the OS refused."""
    return f"{CANNOT_READ}{exc.strerror or exc}"


#: A link loop also fails with "cannot read", but it is the vault's own shape
#: (like a link out or a pipe), not the OS refusing a read.
_LINK_LOOP = f"{CANNOT_READ}{os.strerror(errno.ELOOP)}"


def skip_entry(rel: str, why: str) -> SkippedEntry:
    """The SkippedEntry for `why`: reason `unreadable` when the OS refused
    the read (no permission, an I/O error; see `cannot_read`), else
    `encoding` (a link out, a loop, a pipe...)."""
    refused = why.startswith(CANNOT_READ) and why != _LINK_LOOP
    return SkippedEntry(rel, why, Reason.UNREADABLE if refused else Reason.ENCODING)


def dir_state(path: str | Path) -> bool | None:
    """True if `path` is a folder, False if absent or no folder, None if the
    OS refused to say (a folder on the way cannot be read).

    `Path.is_dir` raises for the refusal on some Pythons and hides it on
    others; detection needs to tell "unreadable" from "absent".
    """
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:
        return None


def unlistable(root: str | Path, folder_rel: str) -> SkippedEntry | None:
    """Why vault folder `folder_rel` cannot be listed; None if it can or is absent.

    For a format that lists several fixed folders below one parent: one
    problem naming the parent beats one per child that could not be reached.
    """
    note_folder(folder_rel)
    try:
        with os.scandir(f"{root}/{folder_rel}"):
            return None
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        return skip_entry(folder_rel, cannot_read(exc))


def _inside(real_root: str, real: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def _not_regular(mode: int) -> str:
    """Why a file of this mode is not read (it is not a regular file)."""
    return IS_FOLDER if stat.S_ISDIR(mode) else kind_of(mode)


def _link_problem(path: str, real_root: str | None, want_dir: bool = False) -> str | None:
    """None if the link at `path` leads to a regular file (a folder if
    `want_dir`) inside the vault; else why it is skipped ("" to leave it
    out without a report: a link to a file when listing folders)."""
    if real_root is not None and not _inside(real_root, os.path.realpath(path)):
        # Among folders, a link out to a file is none of the listing's business.
        return "" if want_dir and not os.path.isdir(path) else OUTSIDE_VAULT
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return DANGLING_LINK
    except OSError as exc:  # ELOOP for a link loop, EACCES, ...
        return cannot_read(exc)
    if want_dir:
        return None if stat.S_ISDIR(st.st_mode) else ""
    return None if stat.S_ISREG(st.st_mode) else _not_regular(st.st_mode)


def _join(folder_rel: str, name: str) -> str:
    return f"{folder_rel}/{name}" if folder_rel else name


def _list(
    folder: str, folder_rel: str, real_root: str | None, suffix: str, want_dir: bool
) -> Listing:
    """Entries of `folder` named `*<suffix>` (not hidden): regular files (or
    folders, `want_dir`), sorted; the others of those names skipped, with why."""
    names: list[str] = []
    skipped: list[SkippedEntry] = []
    note_folder(folder_rel)  # before reading it: a change while we read shows next time
    if real_root is not None:
        real = os.path.realpath(folder)
        if real != (f"{real_root}/{folder_rel}" if folder_rel else real_root):
            note_link()  # a link on the way: its target may change elsewhere
        if not _inside(real_root, real):
            if os.path.isdir(folder):
                skipped.append(SkippedEntry(folder_rel, FOLDER_OUTSIDE_VAULT))
            return Listing(names, skipped)
    odd: list[os.DirEntry[str]] = []
    try:
        with os.scandir(folder) as entries:
            # The common case first and cheap: a plain file (folder) whose
            # type came with the listing.  Links and oddities are looked at
            # after the loop.
            for e in entries:
                name = e.name
                if name[0] == "." or not name.endswith(suffix):
                    continue
                try:
                    if (
                        e.is_dir(follow_symlinks=False)
                        if want_dir
                        else e.is_file(follow_symlinks=False)
                    ):
                        names.append(name)
                        continue
                except OSError:
                    pass
                odd.append(e)
    except (FileNotFoundError, NotADirectoryError):
        if real_root is not None and os.path.islink(folder):
            skipped.append(SkippedEntry(folder_rel, DANGLING_LINK))
        return Listing([], skipped)
    except OSError as exc:  # no permission, a link loop, an I/O error
        skipped.append(skip_entry(folder_rel, cannot_read(exc)))
        return Listing([], skipped)
    for e in odd:
        why: str | None
        try:
            if e.is_symlink():
                note_link()
                why = _link_problem(e.path, real_root, want_dir)
            elif want_dir:
                why = ""  # a file among folders: not ours to report
            else:
                why = _not_regular(e.stat(follow_symlinks=False).st_mode)
        except FileNotFoundError:
            continue  # removed while we looked: it is simply gone
        except OSError as exc:
            why = cannot_read(exc)
        if why is None:
            names.append(e.name)
        elif why and not (want_dir and why == DANGLING_LINK):
            # (A dangling link among folders may have been anything.)
            skipped.append(skip_entry(_join(folder_rel, e.name), why))
    names.sort()
    skipped.sort(key=lambda s: s.rel)
    return Listing(names, skipped)


def _folder_rel(root: str | Path, folder: str | Path) -> str:
    try:
        return rel_posix(Path(root), Path(folder))
    except ValueError:
        return str(folder)


def list_md(root: str | Path, folder_rel: str) -> Listing:
    """Markdown files directly in vault folder `folder_rel` (POSIX, "" = root).

    Names are sorted, hidden/temp files left out as `iter_md` does.  Skipped,
    each with why: links whose realpath leaves the vault, dangling links,
    link loops, pipes/sockets/devices, folders named `*.md`, entries the OS
    refuses; and the folder itself when it leads outside the vault or
    cannot be listed.  An absent folder lists nothing and skips nothing.
    """
    real_root = os.path.realpath(root)
    folder = f"{root}/{folder_rel}" if folder_rel else str(root)
    return _list(folder, folder_rel, real_root, ".md", want_dir=False)


def some_md(root: str | Path, folders: Iterable[str], limit: int) -> list[str]:
    """Up to `limit` Markdown files of these vault folders, found at once (not sorted).

    For a cold start's first rows, before the vault's full listing (~0.25 s
    at 100k files): plain files only, named as `list_md` keeps them, so every
    one is a file the full listing holds.  A folder reached through a link
    or that cannot be read is passed over (its files come with the listing).
    """
    if limit <= 0:
        return []
    real_root = os.path.realpath(root)
    out: list[str] = []
    for folder_rel in folders:
        folder = f"{root}/{folder_rel}"
        if os.path.realpath(folder) != f"{real_root}/{folder_rel}":
            continue
        try:
            with os.scandir(folder) as entries:
                for e in entries:
                    name = e.name
                    if name[0] == "." or not name.endswith(".md"):
                        continue
                    with contextlib.suppress(OSError):
                        if e.is_file(follow_symlinks=False):
                            out.append(f"{folder_rel}/{name}")
                            if len(out) >= limit:
                                return out
        except OSError:
            continue
    return out


def list_dirs(root: str | Path, folder_rel: str) -> Listing:
    """Sub-folders (not hidden) of vault folder `folder_rel`, like `list_md`.

    Links to folders outside the vault and unreadable entries are skipped
    with why; files (and dangling links, which may have been files) are
    not reported.
    """
    real_root = os.path.realpath(root)
    folder = f"{root}/{folder_rel}" if folder_rel else str(root)
    return _list(folder, folder_rel, real_root, "", want_dir=True)


def entry_skip(root: str | Path, rel: str) -> SkippedEntry | None:
    """Why the single vault file `rel` must not be read, or None (a regular
    file inside the vault, or absent: nothing to report).

    For files a format names itself (`observations.md`, `_state.json`) and
    for re-reading one changed path (live reload) without listing its folder.
    """
    return _file_state(os.path.realpath(root), f"{root}/{rel}", rel)[1]


def _file_state(real_root: str, path: str, rel: str) -> tuple[bool, SkippedEntry | None]:
    """(True if `path` is a regular file inside the vault, why it is skipped or None)."""
    note_parent(rel)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False, None
    except OSError as exc:
        return False, skip_entry(rel, cannot_read(exc))
    real = os.path.realpath(path)
    if real != f"{real_root}/{rel}":
        note_link()  # the file or a folder on its way is a link
    if not _inside(real_root, real):
        # The file itself or a folder on its way is a link out of the vault.
        return False, SkippedEntry(rel, OUTSIDE_VAULT)
    if stat.S_ISLNK(st.st_mode):
        why = _link_problem(path, real_root)
    elif stat.S_ISREG(st.st_mode):
        why = None
    else:
        why = _not_regular(st.st_mode)
    return why is None, skip_entry(rel, why) if why else None


def list_files(root: str | Path, rels: Iterable[str]) -> Listing:
    """The fixed files `rels` that exist as regular files inside the vault,
    in the given order, and the ones skipped (see `entry_skip`)."""
    real_root = os.path.realpath(root)
    names: list[str] = []
    skipped: list[SkippedEntry] = []
    for rel in rels:
        ok, skip = _file_state(real_root, f"{root}/{rel}", rel)
        if ok:
            names.append(rel)
        elif skip is not None:
            skipped.append(skip)
    return Listing(names, skipped)


def md_names(folder: str, root: str | Path | None = None) -> list[str]:
    """Names of the Markdown files directly in `folder`, sorted, as `iter_md` lists them.

    Never raises for an entry (or a folder) it cannot read.  With the vault
    `root`, entries that lead outside it are left out too; `list_md` also
    says what was left out.
    """
    if root is None:
        return _list(folder, folder, None, ".md", want_dir=False).names
    return _list(folder, _folder_rel(root, folder), os.path.realpath(root), ".md", False).names


def iter_md(folder: Path, root: Path | None = None) -> list[Path]:
    """Markdown files directly in `folder`, sorted, skipping hidden/temp files.

    Same rules as `md_names` (never raises; with `root`, nothing outside it).
    """
    # os.scandir: the file type comes with the directory entry, so a stat
    # walk over 100k files does not stat every file twice.
    return [folder / n for n in md_names(str(folder), root)]


def skipped_problem(format_id: str, root: Path, skip: SkippedEntry) -> Problem:
    """The Problem that shows a skipped entry (reason `encoding` by default)."""
    return Problem(
        format=format_id, vault_root=root, path=skip.rel, reason=skip.reason, detail=skip.detail
    )


def skipped_scan(format_id: str, root: Path, skip: SkippedEntry) -> FileScan:
    """A FileScan for a skipped entry: no memory, one Problem, the empty order.

    Put it in the scans `link` gets (keyed by `skip.rel`) so the entry shows
    up like any invalid file, in full scans, cached scans and rescans alike.
    """
    return FileScan(skip.rel, memories=[], problems=[skipped_problem(format_id, root, skip)])
