"""Writes that hold up against a writer at the same moment and respect the file system.

Another writer is simulated by a hook around the swap itself (the exchange
or the os.replace fallback), so each race is hit every run, never by luck.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import cast

import pytest

from memlens.core import safe_io
from memlens.core.config import load_config
from memlens.core.errors import ConflictError
from memlens.core.safe_io import (
    FS_APPEND_FL,
    FS_IMMUTABLE_FL,
    TEMP_PREFIX,
    NotRegularFileError,
    ProtectedFileError,
    WriteError,
)
from memlens.core.scan.cache import read_stamped
from memlens.core.text.textio import read_text
from memlens.core.write import writes
from memlens.core.write.journal import read_journal
from memlens.core.write.writes import append_bytes, atomic_write, move_no_clobber, snapshot

Swap = Callable[[Path, Path], bool]


def _temps(folder: Path) -> list[Path]:
    return [p for p in folder.rglob(f"{TEMP_PREFIX}*")]


def _file(tmp_path: Path, data: bytes = b"line 1\n") -> Path:
    f = tmp_path / "wal.jsonl"
    f.write_bytes(data)
    return f


@pytest.fixture(params=["exchange", "replace"])
def swap_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test once with the renameat2 exchange and once with the os.replace fallback."""
    if request.param == "replace":
        monkeypatch.setattr(writes, "exchange", lambda a, b: False)
    return str(request.param)


def _before_swap(monkeypatch: pytest.MonkeyPatch, mode: str, hook: Callable[[Path], None]) -> None:
    """Run `hook(target)` once, at the last moment before the swap lands."""
    done: list[bool] = []
    if mode == "exchange":
        real: Swap = writes.exchange

        def exchange(tmp: Path, path: Path) -> bool:
            if not done:
                done.append(True)
                hook(path)
            return real(tmp, path)

        monkeypatch.setattr(writes, "exchange", exchange)
    else:
        real_replace = os.replace

        def replace(src: os.PathLike[str] | str, dst: os.PathLike[str] | str) -> None:
            if not done:
                done.append(True)
                hook(Path(dst))
            real_replace(src, dst)

        monkeypatch.setattr(os, "replace", replace)


def _append(text: bytes) -> Callable[[Path], None]:
    def hook(path: Path) -> None:
        with open(path, "ab") as fh:
            fh.write(text)

    return hook


def test_exchange_is_used_where_the_system_has_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = _file(tmp_path)
    calls: list[tuple[Path, Path]] = []
    real: Swap = writes.exchange

    def spy(a: Path, b: Path) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(writes, "exchange", spy)
    new = atomic_write(f, b"new\n", snapshot(f))
    assert f.read_bytes() == b"new\n" and new.size == 4
    assert len(calls) == 1 and calls[0][1] == f and calls[0][0].name.startswith(TEMP_PREFIX)
    assert _temps(tmp_path) == []


def test_fallback_replace_writes_and_checks(tmp_path: Path, swap_mode: str) -> None:
    f = _file(tmp_path)
    f.chmod(0o640)
    new = atomic_write(f, b"rewritten\n", snapshot(f))
    assert f.read_bytes() == b"rewritten\n"
    assert new.sha256 == writes.digest(b"rewritten\n")
    assert stat.S_IMODE(f.stat().st_mode) == 0o640
    assert _temps(tmp_path) == []


def test_append_in_the_race_window_is_carried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swap_mode: str
) -> None:
    f = _file(tmp_path)
    snap = snapshot(f)
    _before_swap(monkeypatch, swap_mode, _append(b"agent line\n"))
    new = append_bytes(f, b"memlens line\n", snap)
    assert f.read_bytes() == b"line 1\nmemlens line\nagent line\n"
    assert new.size == len(f.read_bytes()) and new.sha256 == writes.digest(f.read_bytes())
    assert _temps(tmp_path) == []


def test_append_in_the_race_window_refuses_a_rewrite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swap_mode: str
) -> None:
    f = _file(tmp_path, b"## A\nbody\n")
    snap = snapshot(f)
    _before_swap(monkeypatch, swap_mode, _append(b"## B\nnew section\n"))
    with pytest.raises(ConflictError):
        atomic_write(f, b"## A\nedited\n", snap)
    assert f.read_bytes() == b"## A\nbody\n## B\nnew section\n"
    assert _temps(tmp_path) == []


def test_rewrite_in_the_race_window_is_swapped_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swap_mode: str
) -> None:
    f = _file(tmp_path)
    snap = snapshot(f)

    def rewrite_in_place(path: Path) -> None:
        with open(path, "r+b") as fh:
            fh.write(b"LINE 9")

    _before_swap(monkeypatch, swap_mode, rewrite_in_place)
    with pytest.raises(ConflictError):
        append_bytes(f, b"memlens line\n", snap)  # carrying, but not a pure append
    assert f.read_bytes() == b"LINE 9\n"
    assert _temps(tmp_path) == []


def _agent_replaces(path: Path) -> None:
    other = path.with_name("agent.tmp")
    other.write_bytes(b"the agent's own rewrite\n")
    os.rename(other, path)


def test_replace_by_another_writer_at_the_exchange_is_swapped_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = _file(tmp_path)
    snap = snapshot(f)
    _before_swap(monkeypatch, "exchange", _agent_replaces)
    with pytest.raises(ConflictError):
        atomic_write(f, b"mine\n", snap)
    assert f.read_bytes() == b"the agent's own rewrite\n"
    assert _temps(tmp_path) == []


def test_replace_by_another_writer_while_the_temp_is_written_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swap_mode: str
) -> None:
    """The fallback's last check (the inode at the path) before its os.replace."""
    f = _file(tmp_path)
    snap = snapshot(f)
    real = writes._write_temp

    def then_agent(path: Path, data: bytes, like: os.stat_result | None) -> tuple[Path, int]:
        out = real(path, data, like)
        _agent_replaces(path)
        return out

    monkeypatch.setattr(writes, "_write_temp", then_agent)
    with pytest.raises(ConflictError):
        atomic_write(f, b"mine\n", snap)
    assert f.read_bytes() == b"the agent's own rewrite\n"
    assert _temps(tmp_path) == []


def test_appender_holding_the_old_file_open_after_the_swap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An appender's fd on the old inode writes just after the exchange: carried, not lost."""
    f = _file(tmp_path)
    snap = snapshot(f)
    real: Swap = writes.exchange

    def exchange_then_late_append(tmp: Path, path: Path) -> bool:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)  # opened before the swap
        try:
            swapped = real(tmp, path)
            if tmp.exists() and fd >= 0:
                os.write(fd, b"late line\n")
        finally:
            os.close(fd)
        monkeypatch.setattr(writes, "exchange", real)
        return swapped

    monkeypatch.setattr(writes, "exchange", exchange_then_late_append)
    append_bytes(f, b"memlens line\n", snap)
    assert f.read_bytes() == b"line 1\nmemlens line\nlate line\n"
    assert _temps(tmp_path) == []


def test_swap_back_keeps_bytes_appended_to_the_new_file_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = _file(tmp_path, b"## A\nbody\n")
    snap = snapshot(f)
    real: Swap = writes.exchange

    def race(tmp: Path, path: Path) -> bool:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)  # an appender on the old file
        swapped = real(tmp, path)
        os.write(fd, b"## B\n")  # lands in the old file, now swapped out
        os.close(fd)
        _append(b"## C\n")(path)  # lands in memlens's file, at the path for a moment
        monkeypatch.setattr(writes, "exchange", real)
        return swapped

    monkeypatch.setattr(writes, "exchange", race)
    with pytest.raises(ConflictError):
        atomic_write(f, b"## A\nedited\n", snap)
    assert f.read_bytes() == b"## A\nbody\n## B\n## C\n"
    assert _temps(tmp_path) == []


def test_create_never_clobbers_a_file_that_appeared(tmp_path: Path) -> None:
    f = tmp_path / "new.md"
    snap = snapshot(f)
    f.write_bytes(b"an agent was first")
    with pytest.raises(ConflictError):
        atomic_write(f, b"mine", snap)
    assert f.read_bytes() == b"an agent was first"
    g = tmp_path / "other.md"
    atomic_write(g, b"created", snapshot(g))
    assert g.read_bytes() == b"created" and _temps(tmp_path) == []


# ------------------------------------------------------ the file system's answers


def test_read_only_file_is_refused(tmp_path: Path) -> None:
    f = _file(tmp_path)
    f.chmod(0o444)
    with pytest.raises(ProtectedFileError) as info:
        atomic_write(f, b"new", snapshot(f))
    assert str(f) in str(info.value) and "read-only" in str(info.value)
    with pytest.raises(ProtectedFileError):
        move_no_clobber(f, tmp_path / "archive" / f.name, snapshot(f), root=tmp_path)
    assert f.read_bytes() == b"line 1\n" and not (tmp_path / "archive" / f.name).exists()
    assert _temps(tmp_path) == []


@pytest.mark.parametrize(
    ("flag", "words"), [(FS_IMMUTABLE_FL, "immutable"), (FS_APPEND_FL, "append-only")]
)
def test_immutable_or_append_only_file_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: int, words: str
) -> None:
    f = _file(tmp_path)
    monkeypatch.setattr(safe_io, "file_flags", lambda fd: flag)
    with pytest.raises(ProtectedFileError) as info:
        append_bytes(f, b"x\n", snapshot(f))
    assert words in str(info.value) and str(f) in str(info.value)
    with pytest.raises(ProtectedFileError):
        move_no_clobber(f, tmp_path / "moved.jsonl", None)
    assert f.read_bytes() == b"line 1\n" and not (tmp_path / "moved.jsonl").exists()


def test_file_flags_ignores_file_systems_without_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = _file(tmp_path)

    def no_ioctl(*args: object) -> None:
        raise OSError(errno.ENOTTY, "Inappropriate ioctl for device")

    monkeypatch.setattr(safe_io.fcntl, "ioctl", no_ioctl)
    atomic_write(f, b"new\n", snapshot(f))
    assert f.read_bytes() == b"new\n"


def test_user_without_write_access_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = _file(tmp_path)
    monkeypatch.setattr(safe_io.os, "geteuid", lambda: 4321)
    monkeypatch.setattr(safe_io.os, "access", lambda path, mode: False)
    with pytest.raises(ProtectedFileError) as info:
        atomic_write(f, b"new", snapshot(f))
    assert "not writable by you" in str(info.value)
    assert f.read_bytes() == b"line 1\n"


def test_rewrite_and_move_keep_owner_group_and_mode(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root can hand a file to another owner")
    f = _file(tmp_path)
    os.chown(f, 1234, 2345)
    f.chmod(0o640)
    atomic_write(f, b"new\n", snapshot(f))
    st = f.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (1234, 2345, 0o640)
    dst = tmp_path / "archive" / f.name
    move_no_clobber(f, dst, snapshot(f), root=tmp_path)
    st = dst.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (1234, 2345, 0o640)


def test_keep_owner_hands_the_temp_to_the_old_owner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fchown call itself, spied on, so it is checked without root too."""
    f = _file(tmp_path)
    calls: list[tuple[int, int, int]] = []

    def spy(fd: int, uid: int, gid: int) -> None:
        calls.append((fd, uid, gid))

    monkeypatch.setattr(safe_io.os, "fchown", spy)
    fd = os.open(f, os.O_RDONLY)
    try:
        st = os.fstat(fd)
        safe_io.keep_owner(fd, f, st.st_uid, st.st_gid)
        assert calls == []  # same owner: nothing to do
        safe_io.keep_owner(fd, f, st.st_uid + 1, st.st_gid + 1)
        assert calls == [(fd, st.st_uid + 1, st.st_gid + 1)]

        def denied(fd: int, uid: int, gid: int) -> None:
            raise PermissionError(errno.EPERM, "Operation not permitted")

        monkeypatch.setattr(safe_io.os, "fchown", denied)
        with pytest.raises(WriteError) as info:
            safe_io.keep_owner(fd, f, st.st_uid + 1, st.st_gid)
        assert str(f) in str(info.value) and "owner" in str(info.value)
    finally:
        os.close(fd)


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (errno.EROFS, "read-only file system"),
        (errno.ENOSPC, "no space left"),
        (errno.EDQUOT, "quota"),
        (errno.EIO, "input/output error"),
    ],
)
def test_swap_failures_are_one_clear_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, words: str
) -> None:
    f = _file(tmp_path)

    def fail(a: Path, b: Path) -> bool:
        raise OSError(code, os.strerror(code), os.fspath(b))

    monkeypatch.setattr(writes, "exchange", fail)
    with pytest.raises(WriteError) as info:
        atomic_write(f, b"new", snapshot(f))
    message = str(info.value)
    assert words in message and str(f) in message and "\n" not in message
    assert f.read_bytes() == b"line 1\n" and _temps(tmp_path) == []


def test_move_whose_source_cannot_be_removed_is_not_in_two_places(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _file(tmp_path)
    dst = tmp_path / "archive" / src.name
    monkeypatch.setattr(writes, "rename_noreplace", lambda a, b: False)
    real_unlink = os.unlink

    def unlink(path: os.PathLike[str] | str, *args: object, **kwargs: object) -> None:
        if Path(path) == src:
            raise OSError(errno.EIO, "Input/output error", os.fspath(path))
        real_unlink(path)

    monkeypatch.setattr(os, "unlink", unlink)
    with pytest.raises(WriteError) as info:
        move_no_clobber(src, dst, snapshot(src), root=tmp_path)
    assert "nothing was moved" in str(info.value)
    assert src.read_bytes() == b"line 1\n" and not dst.exists()


def test_move_by_copy_keeps_mode_and_refuses_a_changed_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _file(tmp_path)
    src.chmod(0o604)
    dst = tmp_path / "archive" / src.name
    monkeypatch.setattr(writes, "rename_noreplace", lambda a, b: False)
    real_link = os.link

    def cross_device(a: os.PathLike[str] | str, b: os.PathLike[str] | str) -> None:
        if Path(a) == src:
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        real_link(a, b)

    monkeypatch.setattr(os, "link", cross_device)
    move_no_clobber(src, dst, snapshot(src), root=tmp_path)
    assert not src.exists() and dst.read_bytes() == b"line 1\n"
    assert stat.S_IMODE(dst.stat().st_mode) == 0o604
    assert _temps(tmp_path) == []


def test_move_refuses_when_the_source_was_replaced_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _file(tmp_path)
    dst = tmp_path / "archive" / src.name
    snap = snapshot(src)
    real = writes.rename_noreplace

    def agent_first(a: Path, b: Path) -> bool:
        monkeypatch.setattr(writes, "rename_noreplace", real)
        other = a.with_name("agent.tmp")
        other.write_bytes(b"rewritten by the agent\n")
        os.replace(other, a)
        return real(a, b)

    monkeypatch.setattr(writes, "rename_noreplace", agent_first)
    with pytest.raises(ConflictError):
        move_no_clobber(src, dst, snap, root=tmp_path)
    assert src.read_bytes() == b"rewritten by the agent\n" and not dst.exists()


# ------------------------------------------------------------ not a regular file


def test_never_replaces_a_fifo_or_a_link(tmp_path: Path) -> None:
    fifo = tmp_path / "observations.md"
    os.mkfifo(fifo)
    with pytest.raises(WriteError) as info:
        atomic_write(fifo, b"x", None)
    assert "named pipe" in str(info.value)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    target = _file(tmp_path)
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    with pytest.raises(WriteError):
        atomic_write(link, b"x", None)
    assert link.is_symlink() and target.read_bytes() == b"line 1\n"


def test_read_regular_refuses_a_fifo_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "_state.json"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFileError) as info:
        safe_io.read_regular(fifo)
    assert isinstance(info.value, OSError)
    assert str(info.value) == f"{fifo}: is a named pipe, not a regular file"
    with pytest.raises(NotRegularFileError):
        snapshot(fifo)
    with pytest.raises(NotRegularFileError):
        safe_io.read_regular(tmp_path)


# --------------------------------------------------------------- stray temps


def test_clean_stray_temps_removes_only_memlens_temps(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "graph" / "facts").mkdir(parents=True)
    (vault / ".memlens" / "blobs").mkdir(parents=True)
    memory = vault / "graph" / "facts" / "a.md"
    memory.write_bytes(b"memory")
    stray = [
        vault / f"{TEMP_PREFIX}0a1b2c-observations.md",
        vault / "graph" / "facts" / f"{TEMP_PREFIX}3d4e5f-a.md",
        vault / ".memlens" / f"{TEMP_PREFIX}777777-journal.jsonl",
    ]
    for p in stray:
        p.write_bytes(b"half written")
    (vault / f"{TEMP_PREFIX}dir").mkdir()  # not a file memlens writes
    outside = tmp_path / f"{TEMP_PREFIX}outside"
    outside.write_bytes(b"not in the vault")
    (vault / f"{TEMP_PREFIX}link").symlink_to(outside)
    assert safe_io.clean_stray_temps(vault) == sorted(stray)
    assert not any(p.exists() for p in stray)
    assert memory.read_bytes() == b"memory" and outside.exists()
    assert (vault / f"{TEMP_PREFIX}dir").is_dir() and (vault / f"{TEMP_PREFIX}link").is_symlink()
    assert safe_io.clean_stray_temps(vault) == []


def _bounded(fn: Callable[[], object]) -> object:
    """fn()'s result or exception, run in a thread so a regression cannot hang the suite."""
    out: list[object] = []

    def run() -> None:
        try:
            out.append(fn())
        except Exception as exc:  # the exception is the result under test
            out.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=60)  # a guard, not a measure
    assert not worker.is_alive(), "blocked on a FIFO"
    return out[0]


def test_state_readers_never_wait_on_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "thing"
    os.mkfifo(fifo)
    assert isinstance(_bounded(lambda: read_text(fifo)), NotRegularFileError)
    assert isinstance(_bounded(lambda: read_stamped(fifo)), NotRegularFileError)
    _config, warnings = cast(tuple[object, list[str]], _bounded(lambda: load_config(fifo)))
    assert len(warnings) == 1 and "named pipe" in warnings[0]
    vault = tmp_path / "vault"
    (vault / ".memlens").mkdir(parents=True)
    os.mkfifo(vault / ".memlens" / "journal.jsonl")
    assert isinstance(_bounded(lambda: read_journal(vault)), NotRegularFileError)


def test_append_while_the_temp_is_written_is_carried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swap_mode: str
) -> None:
    f = _file(tmp_path)
    snap = snapshot(f)
    real = writes._write_temp

    def then_agent(path: Path, data: bytes, like: os.stat_result | None) -> tuple[Path, int]:
        out = real(path, data, like)
        _append(b"agent line\n")(path)
        return out

    monkeypatch.setattr(writes, "_write_temp", then_agent)
    append_bytes(f, b"memlens line\n", snap)
    assert f.read_bytes() == b"line 1\nmemlens line\nagent line\n"
    assert _temps(tmp_path) == []


def test_an_appender_still_writing_to_the_old_file_is_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swap_mode: str
) -> None:
    """Each look at the swapped-out file finds one more late line; each is carried once."""
    f = _file(tmp_path)
    snap = snapshot(f)
    real = writes._settled
    late = [b"late 1\n", b"late 2\n"]

    def appender_at_work(folder: Path, out_fd: int, grace: float) -> bytes:
        if late:
            fd = os.open(f"/proc/self/fd/{out_fd}", os.O_WRONLY | os.O_APPEND)
            os.write(fd, late.pop(0))
            os.close(fd)
        return real(folder, out_fd, grace)

    monkeypatch.setattr(writes, "_settled", appender_at_work)
    new = append_bytes(f, b"memlens line\n", snap)
    assert f.read_bytes() == b"line 1\nmemlens line\nlate 1\nlate 2\n"
    assert new.sha256 == writes.digest(f.read_bytes())
    assert _temps(tmp_path) == []


def test_old_file_that_cannot_be_checked_after_the_swap_is_put_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swap_mode: str
) -> None:
    f = _file(tmp_path)

    def unreadable(folder: Path, out_fd: int, grace: float) -> bytes:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(writes, "_settled", unreadable)
    with pytest.raises(WriteError) as info:
        atomic_write(f, b"new\n", snapshot(f))
    assert "input/output error" in str(info.value)
    assert f.read_bytes() == b"line 1\n" and _temps(tmp_path) == []
