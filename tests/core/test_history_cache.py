"""The kept history cache (core/history/cache.py, indexed.py): same entries as git alone, always.

Each test compares the cached reading with the uncached one
(`memory_history(..., cache=False)`, which reads git only) on the
repository of tests/core/history_repo.py, after the cache was made, reused,
damaged, or outrun by new commits (a line of commits, a merge, a rewritten
branch, a rename).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import history_repo as hr
import pytest

from memlens.core.history import git, indexed, memory_history
from memlens.core.history.cache import CACHE_SCHEMA, cache_path, decode_log
from memlens.core.history.versions import History
from memlens.core.scan.vault import open_catalog

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


#: One memory of each kind: sections (two in one file), records, a renamed
#: file, a file name that is not UTF-8.
IDS = ("studio-lease-832e6e", "async-reviews-c05230", "exp_x", "exp_y", hr.NOTE_ID, "obs-201")


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of this test's own."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("MEMLENS_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def repo(tmp_path: Path) -> Any:
    return hr.build_repo(tmp_path / "repo")


def _shape(h: History) -> list[tuple[Any, ...]]:
    """Everything an entry says: commit, change, paths, bytes before and after."""
    return [
        (
            e.commit.id if e.commit else None,
            e.commit.message if e.commit else None,
            e.change,
            e.path,
            e.old_path,
            e.before,
            e.after,
        )
        for e in h.entries
    ]


def _both(top: Path, memory_id: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    memory = open_catalog(top / "memory").get(memory_id)
    return _shape(memory_history(memory)), _shape(memory_history(memory, cache=False))


def _assert_same_everywhere(top: Path) -> None:
    for memory_id in IDS:
        cached, plain = _both(top, memory_id)
        assert plain, memory_id
        assert cached == plain, memory_id


def _log_rows() -> list[tuple[str, bytes]]:
    with sqlite3.connect(cache_path()) as conn:
        return [(str(h), bytes(d)) for h, d in conn.execute("SELECT head, data FROM logs")]


def test_made_then_reused_equals_git_alone(repo: Any) -> None:
    _assert_same_everywhere(repo.top)  # made
    assert len(_log_rows()) == 4  # note (--follow), odd file, sections' file, records' file
    _assert_same_everywhere(repo.top)  # reused
    with sqlite3.connect(cache_path()) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone() == (
            CACHE_SCHEMA,
        )
        assert conn.execute("SELECT count(*) FROM parts").fetchone()[0] > 0


def _spy_logs(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The keyword arguments of every `file_log` the cached reading makes."""
    calls: list[dict[str, Any]] = []
    real = indexed.file_log

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(indexed, "file_log", spy)
    return calls


def test_reused_cache_asks_git_for_no_log(repo: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _assert_same_everywhere(repo.top)
    calls = _spy_logs(monkeypatch)
    memory = open_catalog(repo.top / "memory").get("exp_x")
    assert _shape(memory_history(memory)) == _shape(memory_history(memory, cache=False))
    assert calls == []


def test_a_new_commit_extends_the_kept_log(repo: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _assert_same_everywhere(repo.top)
    old_head = repo.shas[-1]
    repo.write(
        "memory/dream/observations.md",
        hr.observations(hr.SECTION_A1, hr.SECTION_B2, hr.SECTION_C),
    )
    repo.append("memory/exp/experiences.jsonl", hr.record("exp_z", "A third record."))
    new_head = repo.commit("edit section A again, append record Z")
    calls = _spy_logs(monkeypatch)
    _assert_same_everywhere(repo.top)
    # Every cached log was extended from the kept head, never read whole.
    assert calls and all(k.get("since") == old_head for k in calls)
    cached, _ = _both(repo.top, "studio-lease-832e6e")
    assert cached[0][0] == new_head and cached[0][6] == hr.SECTION_A1.encode()
    assert {head for head, _ in _log_rows()} == {new_head}


def test_a_rewritten_branch_reads_the_whole_log(repo: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _assert_same_everywhere(repo.top)
    calls = _spy_logs(monkeypatch)
    repo.git("reset", "-q", "--hard", repo.shas[5])
    repo.write(
        "memory/exp/experiences.jsonl",
        hr.record("exp_x", "Rewritten.", 0.3) + hr.record("exp_y", "Re-ran the rows."),
    )
    repo.commit("rewrite record X")
    _assert_same_everywhere(repo.top)
    assert calls and all(k.get("since") is None for k in calls)


def test_a_merge_after_the_kept_head_reads_the_whole_log(
    repo: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _assert_same_everywhere(repo.top)
    calls = _spy_logs(monkeypatch)
    repo.git("checkout", "-q", "-b", "side", repo.shas[8])
    repo.append("memory/exp/experiences.jsonl", hr.record("exp_side", "From the side branch."))
    repo.commit("side: append a record")
    repo.git("checkout", "-q", "main")
    repo.write(
        "memory/dream/observations.md", hr.observations(hr.SECTION_A1, hr.SECTION_B1, hr.SECTION_C)
    )
    repo.commit("main: edit sections A and B")
    repo.git("merge", "-q", "--no-edit", "side")
    repo.n += 1
    _assert_same_everywhere(repo.top)
    assert calls and all(k.get("since") is None for k in calls)


def test_a_rename_after_the_kept_head_reads_the_whole_log(
    repo: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    note = open_catalog(repo.top / "memory").get(hr.NOTE_ID)
    memory_history(note)  # kept: the log of the archived path
    archived, live = f"memory/ocean/{hr.NOTE_ARCHIVED}", f"memory/ocean/{hr.NOTE_REL}"
    repo.move(archived, live)
    repo.commit("restore the note from the archive")
    repo.move(live, archived)
    repo.commit("archive it again")
    calls = _spy_logs(monkeypatch)
    again = open_catalog(repo.top / "memory").get(hr.NOTE_ID)
    plain = _shape(memory_history(again, cache=False))
    assert _shape(memory_history(again)) == plain
    assert [e[2] for e in plain[:2]] == ["moved", "moved"]
    # The kept path's log was outrun by renames: not extended, read whole.
    assert [k.get("since") for k in calls] == [repo.shas[-3], None]


def test_a_garbage_cache_file_is_rebuilt(repo: Any) -> None:
    _assert_same_everywhere(repo.top)
    path = cache_path()
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    path.write_bytes(b"this is not a database" * 100)
    _assert_same_everywhere(repo.top)
    assert len(_log_rows()) == 4  # made again, and in use


def test_a_damaged_row_is_read_again(repo: Any) -> None:
    _assert_same_everywhere(repo.top)
    with sqlite3.connect(cache_path()) as conn:
        conn.execute("UPDATE logs SET data = x'00010203'")
    _assert_same_everywhere(repo.top)
    for _, data in _log_rows():
        assert decode_log(data)  # each row replaced by a readable log


def test_a_cache_of_another_schema_is_emptied(repo: Any) -> None:
    _assert_same_everywhere(repo.top)
    with sqlite3.connect(cache_path()) as conn:
        conn.execute("UPDATE meta SET value = 'history-1' WHERE key = 'schema'")
        conn.execute("UPDATE parts SET digest = x'00'")  # would be wrong if trusted
        conn.execute("UPDATE versions SET base = NULL, data = x'00'")
    _assert_same_everywhere(repo.top)
    with sqlite3.connect(cache_path()) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone() == (
            CACHE_SCHEMA,
        )
        assert conn.execute("SELECT count(*) FROM versions WHERE data = x'00'").fetchone() == (0,)


def test_no_usable_cache_folder_still_reads_history(
    repo: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_bytes(b"")
    monkeypatch.setenv("MEMLENS_CACHE_DIR", str(blocker / "cache"))
    _assert_same_everywhere(repo.top)


def test_cache_file_is_private(repo: Any) -> None:
    _assert_same_everywhere(repo.top)
    path = cache_path()
    assert path.stat().st_mode & 0o077 == 0
    assert path.parent.stat().st_mode & 0o077 == 0


def test_cli_no_cache_reads_git_alone(repo: Any) -> None:
    from click.testing import CliRunner

    from memlens.tui.cli.main import cli

    def run(*flags: str) -> dict[str, Any]:
        args = [*flags, "history", str(repo.top / "memory"), "exp_x", "--json"]
        done = CliRunner().invoke(cli, args, catch_exceptions=False)
        assert done.exit_code == 0, done.output
        out: dict[str, Any] = json.loads(done.output)
        return out

    plain = run("--no-cache")
    assert not cache_path().exists()  # --no-cache: nothing written to the cache folder
    assert run() == plain
    assert cache_path().exists() and len(_log_rows()) == 1
    assert [e["commit"] for e in plain["entries"]] == [repo.shas[6], repo.shas[0]]


def _spy_blobs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every object name any `cat-file --batch` of the history code is asked for."""
    asked: list[str] = []
    real = git.BlobReader._stream

    def spy(self: git.BlobReader, wanted: list[str], visit: Any) -> None:
        asked.extend(wanted)
        real(self, wanted, visit)

    monkeypatch.setattr(git.BlobReader, "_stream", spy)
    return asked


@pytest.mark.parametrize("halves", [False, True])
@pytest.mark.parametrize(
    "first, second",
    [("studio-lease-832e6e", "async-reviews-c05230"), ("exp_x", "exp_y")],
)
def test_the_second_memory_of_a_file_asks_git_for_no_blob(
    repo: Any, monkeypatch: pytest.MonkeyPatch, first: str, second: str, halves: bool
) -> None:
    if halves:  # versions read by two cat-file processes (as from 64 versions on)
        monkeypatch.setattr(git, "PARALLEL_FROM", 2)
    catalog = open_catalog(repo.top / "memory")
    asked = _spy_blobs(monkeypatch)
    memory_history(catalog.get(first))
    assert asked  # the first read inflated the file's versions
    asked.clear()
    cached = _shape(memory_history(catalog.get(second)))
    assert asked == []  # rebuilt from the kept versions
    assert cached == _shape(memory_history(catalog.get(second), cache=False))


def test_after_a_new_commit_only_the_new_version_is_read(
    repo: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = open_catalog(repo.top / "memory")
    memory_history(catalog.get("studio-lease-832e6e"))
    repo.write(
        "memory/dream/observations.md", hr.observations(hr.SECTION_A1, hr.SECTION_B1, hr.SECTION_C)
    )
    repo.commit("revert section B")
    asked = _spy_blobs(monkeypatch)
    again = open_catalog(repo.top / "memory").get("async-reviews-c05230")
    cached = _shape(memory_history(again))
    new_blob = repo.git("rev-parse", "HEAD:memory/dream/observations.md").decode().strip()
    assert asked == [new_blob]
    assert cached == _shape(memory_history(again, cache=False))
    # The older versions still rebuild (the former newest now kept as edits of the new one).
    asked.clear()
    third = next(
        m for m in open_catalog(repo.top / "memory").memories() if m.title == "Morning sketches"
    )
    cached = _shape(memory_history(third))
    assert asked == []
    assert cached == _shape(memory_history(third, cache=False))


@pytest.mark.parametrize("damage", ["garbage", "swapped"])
def test_damaged_kept_versions_are_read_from_git_again(
    repo: Any, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    catalog = open_catalog(repo.top / "memory")
    memory_history(catalog.get("studio-lease-832e6e"))
    with sqlite3.connect(cache_path()) as conn:
        rows = conn.execute("SELECT blob, data FROM versions WHERE base IS NOT NULL").fetchall()
        assert len(rows) >= 2
        if damage == "garbage":
            conn.execute("UPDATE versions SET data = x'00010203' WHERE base IS NOT NULL")
        else:  # well-formed edits of another version: only the blob-id check can tell
            (b1, d1), (b2, d2) = rows[:2]
            conn.execute("UPDATE versions SET data = ? WHERE blob = ?", (d2, b1))
            conn.execute("UPDATE versions SET data = ? WHERE blob = ?", (d1, b2))
    asked = _spy_blobs(monkeypatch)
    second = catalog.get("async-reviews-c05230")
    assert _shape(memory_history(second)) == _shape(memory_history(second, cache=False))
    assert asked  # what could not be rebuilt was read from git
