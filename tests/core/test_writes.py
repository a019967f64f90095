"""Safe writes: atomicity, conflicts, failures, containment."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlens.core.errors import ConflictError, UnsafePathError
from memlens.core.text import paths
from memlens.core.text.paths import has_path_syntax, is_inside, safe_join, safe_name
from memlens.core.write import writes
from memlens.core.write.writes import (
    TEMP_PREFIX,
    WriteError,
    atomic_write,
    move_no_clobber,
    snapshot,
)


def _temps(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.name.startswith(TEMP_PREFIX)]


def test_atomic_write_replaces_and_keeps_mode(tmp_path: Path) -> None:
    f = tmp_path / "m.md"
    f.write_bytes(b"old")
    f.chmod(0o640)
    snap = snapshot(f)
    new = atomic_write(f, b"new bytes", snap)
    assert f.read_bytes() == b"new bytes"
    assert (f.stat().st_mode & 0o777) == 0o640
    assert new.sha256 != snap.sha256
    assert _temps(tmp_path) == []


def test_lost_update_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "m.md"
    f.write_bytes(b"version 1")
    snap = snapshot(f)
    f.write_bytes(b"version 2 by an agent")
    with pytest.raises(ConflictError):
        atomic_write(f, b"my edit", snap)
    assert f.read_bytes() == b"version 2 by an agent"


def test_same_size_same_mtime_change_is_caught(tmp_path: Path) -> None:
    f = tmp_path / "m.md"
    f.write_bytes(b"aaaa")
    snap = snapshot(f)
    st = f.stat()
    f.write_bytes(b"bbbb")
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert f.stat().st_size == snap.size and f.stat().st_mtime_ns == snap.mtime_ns
    with pytest.raises(ConflictError):
        atomic_write(f, b"mine", snap)
    assert f.read_bytes() == b"bbbb"


def test_file_deleted_between_read_and_write(tmp_path: Path) -> None:
    f = tmp_path / "m.md"
    f.write_bytes(b"x")
    snap = snapshot(f)
    f.unlink()
    with pytest.raises(ConflictError):
        atomic_write(f, b"y", snap)
    assert not f.exists()


def test_crash_after_half_the_bytes_leaves_old_bytes_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = tmp_path / "m.md"
    f.write_bytes(b"original")
    snap = snapshot(f)
    real_write = os.write
    calls = {"n": 0}

    def half_then_die(fd: int, data: bytes | memoryview) -> int:
        calls["n"] += 1
        if calls["n"] == 1:
            return real_write(fd, bytes(data)[: len(data) // 2])
        raise KeyboardInterrupt  # the process is interrupted mid-write

    monkeypatch.setattr(os, "write", half_then_die)
    with pytest.raises(KeyboardInterrupt):
        atomic_write(f, b"0123456789" * 100, snap)
    monkeypatch.undo()
    assert f.read_bytes() == b"original"
    assert _temps(tmp_path) == []


@pytest.mark.parametrize("swap", ["exchange", "replace"])
def test_crash_between_write_and_replace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swap: str
) -> None:
    f = tmp_path / "m.md"
    f.write_bytes(b"original")
    snap = snapshot(f)

    def die(src: object, dst: object) -> bool:
        raise SystemExit("killed")

    if swap == "exchange":
        monkeypatch.setattr(writes, "exchange", die)
    else:
        monkeypatch.setattr(writes, "exchange", lambda a, b: False)
        monkeypatch.setattr(os, "replace", die)
    with pytest.raises(SystemExit):
        atomic_write(f, b"new", snap)
    monkeypatch.undo()
    assert f.read_bytes() == b"original"
    assert _temps(tmp_path) == []


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (errno.ENOSPC, "no space left"),
        (errno.EACCES, "permission denied"),
        (errno.EROFS, "read-only file system"),
    ],
)
def test_os_errors_are_clear_and_harmless(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, words: str
) -> None:
    f = tmp_path / "m.md"
    f.write_bytes(b"original")
    snap = snapshot(f)

    def fail(*args: object) -> int:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "write", fail)
    with pytest.raises(WriteError) as info:
        atomic_write(f, b"new", snap)
    monkeypatch.undo()
    assert words in str(info.value) and str(f) in str(info.value)
    assert f.read_bytes() == b"original"
    assert _temps(tmp_path) == []


def test_real_read_only_directory(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root ignores directory permissions")
    folder = tmp_path / "ro"
    folder.mkdir()
    f = folder / "m.md"
    f.write_bytes(b"original")
    snap = snapshot(f)
    folder.chmod(0o500)
    try:
        with pytest.raises(WriteError):
            atomic_write(f, b"new", snap)
    finally:
        folder.chmod(0o700)
    assert f.read_bytes() == b"original"


def test_move_never_overwrites(tmp_path: Path) -> None:
    a, b = tmp_path / "a.md", tmp_path / "sub" / "b.md"
    a.write_bytes(b"A")
    b.parent.mkdir()
    b.write_bytes(b"B")
    with pytest.raises(ConflictError):
        move_no_clobber(a, b, snapshot(a), root=tmp_path)
    assert a.read_bytes() == b"A" and b.read_bytes() == b"B"
    c = tmp_path / "archive" / "a.md"
    move_no_clobber(a, c, snapshot(a), root=tmp_path)
    assert not a.exists() and c.read_bytes() == b"A"


def test_move_out_of_the_vault_is_refused(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    a = vault / "a.md"
    a.write_bytes(b"A")
    for dst in (tmp_path / "escaped.md", vault / ".." / "escaped.md", tmp_path / "vault2" / "a.md"):
        with pytest.raises(UnsafePathError):
            move_no_clobber(a, dst, snapshot(a), root=vault)
    assert a.exists() and not (tmp_path / "escaped.md").exists()


def test_symlink_out_of_the_vault_is_not_followed(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (vault / "link").symlink_to(outside)
    with pytest.raises(UnsafePathError):
        atomic_write(vault / "link" / "x.md", b"data", None, root=vault)
    assert not (outside / "x.md").exists()
    with pytest.raises(UnsafePathError):
        safe_join(vault, "link", "x.md")


@pytest.mark.parametrize(
    "part", ["../x", "/etc/passwd", "..\\x", "a\x00b", "x/../../y", "", "C:\\x"]
)
def test_traversal_components_are_refused(tmp_path: Path, part: str) -> None:
    with pytest.raises(UnsafePathError):
        safe_join(tmp_path, part)
    with pytest.raises(UnsafePathError):
        safe_name(part)


def test_sibling_prefix_is_not_inside(tmp_path: Path) -> None:
    (tmp_path / "vault").mkdir()
    (tmp_path / "vault2").mkdir()
    assert not is_inside(tmp_path / "vault", tmp_path / "vault2" / "x")
    assert is_inside(tmp_path / "vault", tmp_path / "vault" / "x")


@pytest.mark.parametrize(
    ("ref", "unsafe"),
    [
        ("obs-2026-01-01-001", False),
        ("5b0e6c2a-8d41-4f7e-9a63-1c2d3e4f5a6b", False),
        ("../../etc/passwd", True),
        ("a/b", True),
        ("a\\b", True),
        ("..", True),
        ("~root", True),
        ("x\x00", True),
    ],
)
def test_path_syntax_detection(ref: str, unsafe: bool) -> None:
    assert has_path_syntax(ref) is unsafe


@given(st.text(alphabet=st.sampled_from("ab.%2eEfF5cC0/\\\x00~:Zz-_ \u212a\u0130"), max_size=12))
def test_the_quick_path_check_agrees_with_the_whole_pattern(ref: str) -> None:
    """`has_path_syntax` rules plain ids out by their characters first: same answers."""
    assert has_path_syntax(ref) is (paths._PATH_SYNTAX.search(ref) is not None)
