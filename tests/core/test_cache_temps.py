"""Temps a killed writer left in the cache folder go at the next open; live ones stay."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from memlens.core.scan import cache
from memlens.core.scan.cache import load_entries, save_entries
from memlens.core.store import temps as cache_temps
from memlens.core.store.db import store_path
from memlens.core.store.temps import process_token, sweep_once, sweep_stale_temps, temp_path

LINUX_PROC = process_token(os.getpid()) is not None
needs_proc = pytest.mark.skipif(not LINUX_PROC, reason="needs /proc to tell processes apart")


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private cache folder no other test (or the sweep memo) has seen."""
    out = tmp_path / "cache"
    out.mkdir(mode=0o700)
    monkeypatch.setenv(cache.CACHE_DIR_ENV, str(out))
    return out


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    """A child that lives until its stdin is closed (no sleeping, no timing)."""
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    try:
        yield child
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()


def _end(child: subprocess.Popen[bytes]) -> None:
    assert child.stdin is not None
    child.stdin.close()
    assert child.wait() == 0


def _temp(folder: Path, pid: int, token: str | None, name: str = "scan-" + "a" * 32) -> Path:
    writer = f"{pid}-{token}" if token else str(pid)
    path = folder / f".{name}.pickle.{writer}.1700000000000000000.tmp"
    path.write_bytes(b"half a cache")
    return path


def test_a_dead_writers_temp_goes_at_the_next_open(
    folder: Path, sleeper: subprocess.Popen[bytes]
) -> None:
    token = process_token(sleeper.pid)
    dead = _temp(folder, sleeper.pid, token)
    older = _temp(folder, sleeper.pid, None, "index-" + "b" * 32)  # a name from before tokens
    _end(sleeper)  # reaped: the pid names no process now
    entries, reason = load_entries(folder / "vault", "project-ocean")
    assert (entries, reason) == ({}, None)
    assert not dead.exists()
    assert not older.exists()


def test_a_live_writers_temp_is_kept(folder: Path, sleeper: subprocess.Popen[bytes]) -> None:
    mine = temp_path(folder / f"scan-{'c' * 32}.pickle")
    mine.write_bytes(b"being written by this process")
    theirs = _temp(folder, sleeper.pid, process_token(sleeper.pid))
    assert sweep_stale_temps(folder) == []
    assert mine.exists() and theirs.exists()
    _end(sleeper)
    assert sweep_stale_temps(folder) == [theirs]
    assert mine.exists()


@needs_proc
def test_a_reused_pid_does_not_keep_a_temp(folder: Path) -> None:
    # This process's pid, but another process's token: the writer is gone.
    reused = _temp(folder, os.getpid(), "0" * 16)
    assert sweep_stale_temps(folder) == [reused]


@needs_proc
def test_a_killed_but_unreaped_writer_counts_as_gone(
    folder: Path, sleeper: subprocess.Popen[bytes]
) -> None:
    left = _temp(folder, sleeper.pid, process_token(sleeper.pid))
    sleeper.kill()
    # Wait for the exit without reaping: the child stays a zombie.
    os.waitid(os.P_PID, sleeper.pid, os.WEXITED | os.WNOWAIT)
    assert sweep_stale_temps(folder) == [left]


def test_only_temp_shaped_regular_files_are_touched(folder: Path) -> None:
    gone = 2**22 + 12345  # above the default pid_max: no process has it
    keep = [
        folder / "scan-x.pickle",
        folder / "notes.tmp",
        folder / f".memlens-tmp-abc-{gone}.md",
        folder / f".scan-x.pickle.{gone}.tmp",
    ]
    for path in keep:
        path.write_bytes(b"x")
    link = folder / f".scan-y.pickle.{gone}.1.tmp"
    link.symlink_to(folder / "scan-x.pickle")
    assert sweep_stale_temps(folder) == []
    assert all(path.exists() for path in keep) and link.is_symlink()


def test_the_folder_is_swept_once_per_process(folder: Path) -> None:
    gone = 2**22 + 12345
    first = _temp(folder, gone, None)
    assert sweep_once(folder) == [first]
    second = _temp(folder, gone, None, "index-" + "d" * 32)
    assert sweep_once(folder) == []
    assert second.exists()
    assert sweep_once(folder / "missing") == []


_KILLED_WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from memlens.core.search.index_file import write_checked

    def dump(out):
        for _ in range(64):
            out.write(bytes(1 << 20))
        print("written", flush=True)
        sys.stdin.read()  # block here, mid-write, until killed

    write_checked(Path(sys.argv[1]), b"MAGIC", 1, dump)
    """
)


def test_a_writer_killed_mid_write_leaves_a_temp_the_next_open_removes(folder: Path) -> None:
    target = folder / f"scan-{'e' * 32}.pickle"
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED_WRITER, str(target)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == b"written\n"
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait()
    left = [p for p in folder.iterdir() if p.name.endswith(".tmp")]
    assert len(left) == 1 and left[0].stat().st_size >= 64 << 20
    assert f".{child.pid}" in left[0].name
    save_entries(folder / "vault", "project-ocean", {})
    assert not left[0].exists()
    assert not target.exists()
    # Only the store is left (its -wal and -shm go when it is closed).
    assert sorted(p.name for p in folder.iterdir()) == [store_path(folder / "vault").name]


def test_uncertain_writers_count_as_alive() -> None:
    assert not cache_temps.writer_gone(os.getpid(), process_token(os.getpid()))
    assert not cache_temps.writer_gone(os.getpid(), None)
    assert not cache_temps.writer_gone(0, None)  # would signal the process group
    assert cache_temps.writer_gone(2**22 + 12345, None)
