"""What the CLI says when the file system refuses, or a state file is a FIFO.

Each case is one line naming the path, exit 1, no traceback.  The FIFO
cases run the real command in a subprocess with a generous timeout: the
timeout only keeps a regression from hanging the suite, it is not measured.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memlens.core import open_catalog
from memlens.core.demo import copy_demo
from memlens.core.write import writes
from memlens.core.write.journal import JOURNAL, STATE_DIR
from memlens.tui.cli.main import cli

#: Seconds before a command that hangs on a FIFO is killed (a guard, not a measure).
GUARD = 120


def _memlens(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from memlens.tui.cli.main import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=GUARD,
        env={**os.environ, "TERM": "unknown", "NO_COLOR": "1"},
    )


def _one_line_refusal(stderr: str, *words: str) -> None:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert "Traceback" not in stderr
    refusal = [line for line in lines if all(w in line for w in words)]
    assert refusal, stderr


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    return copy_demo(tmp_path)


def _first_id(vault: Path) -> str:
    """A memory that can be pinned."""
    return next(
        m.id for m in open_catalog(vault).memories() if not (m.pinned or m.archived or m.tombstoned)
    )


@pytest.mark.parametrize(
    ("code", "words"),
    [(errno.EROFS, "read-only file system"), (errno.ENOSPC, "no space left")],
)
def test_pin_on_a_failing_file_system_is_one_line(
    demo: Path, monkeypatch: pytest.MonkeyPatch, code: int, words: str
) -> None:
    vault = demo / "dream-cycle"
    before = (vault / "observations.md").read_bytes()

    def fail(a: Path, b: Path) -> bool:
        raise OSError(code, os.strerror(code), os.fspath(b))

    monkeypatch.setattr(writes, "exchange", fail)
    result = CliRunner().invoke(cli, ["pin", str(vault), _first_id(vault)])
    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)
    _one_line_refusal(result.output, words, "observations.md")
    assert (vault / "observations.md").read_bytes() == before


def test_a_raw_os_error_from_a_command_is_one_line(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = demo / "dream-cycle"
    state = vault / STATE_DIR

    def read_only(root: Path) -> Path:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fspath(state))

    monkeypatch.setattr("memlens.core.write.journal.state_dir", read_only)
    result = CliRunner().invoke(cli, ["pin", str(vault), _first_id(vault)])
    assert result.exit_code == 1
    assert isinstance(result.exception, SystemExit)
    _one_line_refusal(result.output, str(state), "Read-only file system")


@pytest.mark.parametrize(
    ("command", "fifo"),
    [
        ("rescore", "_state.json"),
        ("reindex", "_index.json"),
        ("reflection", "REFLECTION.md"),
    ],
)
def test_cognitive_runs_refuse_a_fifo_state_file(demo: Path, command: str, fifo: str) -> None:
    vault = demo / "cognitive-memory"
    os.mkfifo(vault / fifo)
    done = _memlens(command, str(vault), "--as-of", "2026-11-22")
    assert done.returncode == 1, done.stderr
    _one_line_refusal(done.stderr, fifo)


@pytest.mark.parametrize("command", ["pin", "undo"])
def test_a_fifo_journal_is_refused_not_waited_on(demo: Path, command: str) -> None:
    vault = demo / "project-ocean"
    (vault / STATE_DIR).mkdir()
    os.mkfifo(vault / STATE_DIR / JOURNAL)
    args = [command, str(vault)] + ([_first_id(vault)] if command == "pin" else [])
    done = _memlens(*args)
    assert done.returncode == 1, done.stderr
    _one_line_refusal(done.stderr, JOURNAL, "named pipe")
