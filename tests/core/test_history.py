"""memlens history on a repository built in the test: exact commit lists, diffs, versions, restore.

The repository (tests/core/history_repo.py) has ten commits with fixed
authors and dates: renames (an archive move), section edits in a Dream
Cycle file, record appends and edits in JSON Lines, unrelated commits to
the same files, a file name that is not UTF-8, and the vaults in a
subfolder of the repository.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import history_repo as hr
import pytest
from click.testing import CliRunner

from memlens.core.errors import ConflictError, NotFoundError, RefusedError
from memlens.core.formats.history_parts import record_line, section_bytes
from memlens.core.history import (
    GitMissingError,
    NotInGitError,
    memory_history,
    version_at,
)
from memlens.core.history import git as git_mod
from memlens.core.history.diff import entry_diff, field_changes
from memlens.core.history.restore import restore_version
from memlens.core.model import Memory
from memlens.core.scan.vault import open_catalog
from memlens.core.write.undo import undo_last
from memlens.tui.cli.history import history as history_cmd

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


A_ID = "studio-lease-832e6e"
B_ID = "async-reviews-c05230"
C_ID = "morning-sketches-783665"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The repository, read-only for the tests that use it."""
    return hr.build_repo(tmp_path_factory.mktemp("hist") / "repo")


@pytest.fixture
def fresh(tmp_path: Path) -> Any:
    """A repository of its own, for the tests that write."""
    return hr.build_repo(tmp_path / "repo")


def _memory(top: Path, memory_id: str) -> Memory:
    return open_catalog(top / "memory").get(memory_id)


def _tree(top: Path) -> dict[str, bytes]:
    """Every file of the work tree (not .git, not .memlens), by path."""
    out: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(os.fsencode(top)):
        dirnames[:] = [d for d in dirnames if d not in (b".git", b".memlens")]
        for name in filenames:
            full = os.path.join(dirpath, name)
            with open(full, "rb") as f:
                out[os.fsdecode(os.path.relpath(full, os.fsencode(top)))] = f.read()
    return out


def _subjects(top: Path, memory_id: str) -> list[tuple[str | None, str]]:
    h = memory_history(_memory(top, memory_id))
    return [(e.commit.id if e.commit else None, e.change) for e in h.entries]


# -- commit lists --------------------------------------------------------------


def test_section_lists_only_the_commits_that_changed_it(built: Any) -> None:
    s = built.shas
    assert _subjects(built.top, A_ID) == [
        (s[8], "changed"),
        (s[1], "changed"),
        (s[0], "added"),
    ]
    assert _subjects(built.top, B_ID) == [(s[2], "changed"), (s[0], "added")]
    assert _subjects(built.top, C_ID) == [(s[5], "added")]


def test_record_lists_only_the_commits_that_changed_it(built: Any) -> None:
    s = built.shas
    assert _subjects(built.top, "exp_x") == [(s[6], "changed"), (s[0], "added")]
    assert _subjects(built.top, "exp_y") == [(s[3], "added")]


def test_file_memory_follows_the_archive_move(built: Any) -> None:
    h = memory_history(_memory(built.top, hr.NOTE_ID))
    s = built.shas
    got = [(e.commit.id if e.commit else None, e.change, e.path, e.old_path) for e in h.entries]
    assert got == [
        (s[7], "moved", hr.NOTE_ARCHIVED, hr.NOTE_REL),
        (s[4], "changed", hr.NOTE_REL, None),
        (s[0], "added", hr.NOTE_REL, None),
    ]
    assert (
        h.entries[0].before
        == h.entries[0].after
        == hr.note("Disk at 74%, growing 1.2%/day.", "0.9")
    )
    assert h.entries[2].after == hr.note("Disk at 71%.")


def test_file_name_that_is_not_utf8(built: Any) -> None:
    h = memory_history(_memory(built.top, "obs-201"))
    assert [(e.commit.id if e.commit else None, e.path) for e in h.entries] == [
        (built.shas[0], "observations/obs-\udcff.md")
    ]
    assert h.entries[0].after == hr.obs_v1("deliveries failed")


def test_commit_fields(built: Any) -> None:
    h = memory_history(_memory(built.top, "exp_x"))
    first = h.entries[-1].commit
    assert first is not None
    assert (first.author, first.email, first.date) == (
        "Ada Agent",
        "ada@example.invalid",
        "2026-10-01T10:00:00+00:00",
    )
    assert first.subject == "add vaults"
    assert first.message == "add vaults\n\nFirst import of the agents' memory."
    assert first.short == first.id[:10]
    assert not h.repo.shallow
    assert h.repo.top == built.top
    assert h.repo.prefix == b"memory/exp/"  # the vault is a subfolder of the repository


# -- diffs and fields ----------------------------------------------------------


def test_section_diff_is_the_sections_own(built: Any) -> None:
    m = _memory(built.top, A_ID)
    h = memory_history(m)
    assert entry_diff(h, h.entries[1]) == [
        "--- a/observations.md",
        "+++ b/observations.md",
        "@@ -1,4 +1,4 @@",
        " ## Studio lease",
        " <!-- dc:type=fact dc:importance=6.5 dc:ttl=180 dc:date=2026-10-14 -->",
        "-The lease renews in March.",
        "+The lease renews on 2027-03-01; notice by January.",
        " ",
    ]
    fields, body = field_changes(m, h.entries[1])
    assert (fields, body) == ([], True)
    fields, body = field_changes(m, h.entries[0])
    assert [(f.name, f.before, f.after) for f in fields] == [("dc:importance", "6.5", "7.0")]
    assert body is False


def test_record_diff_and_bytes(built: Any) -> None:
    h = memory_history(_memory(built.top, "exp_x"))
    changed = h.entries[0]
    assert changed.before == hr.record("exp_x", "Reviewer 2 flags seeds.").rstrip(b"\n")
    assert changed.after == hr.record("exp_x", "Reviewer 2 flags seeds.", 0.5).rstrip(b"\n")


# -- versions ----------------------------------------------------------------------


def test_version_at_any_commit(built: Any) -> None:
    s = built.shas
    a = memory_history(_memory(built.top, A_ID))
    assert version_at(a, s[0]).data == hr.SECTION_A1.encode()
    # Commit 3 changed B, not A: A is as commit 2 left it.
    v = version_at(a, s[2])
    assert (v.commit.id, v.entry.commit.id if v.entry.commit else None) == (s[2], s[1])
    assert v.data == hr.SECTION_A2.encode()
    assert version_at(a, "HEAD").data == hr.SECTION_A3.encode()
    c = memory_history(_memory(built.top, C_ID))
    with pytest.raises(NotFoundError, match="did not exist"):
        version_at(c, s[0])
    note = memory_history(_memory(built.top, hr.NOTE_ID))
    assert version_at(note, s[5][:12]).data == hr.note("Disk at 74%, growing 1.2%/day.", "0.9")
    with pytest.raises(NotFoundError):
        version_at(note, "no-such-branch")


# -- the working tree ----------------------------------------------------------------


def test_working_tree_change_is_the_newest_entry(fresh: Any) -> None:
    obs = fresh.top / "memory/dream/observations.md"
    new_a = hr.section("Studio lease", "7.0", "Renewal signed.")
    obs.write_bytes(hr.observations(new_a, hr.SECTION_B2, hr.SECTION_C))
    h = memory_history(_memory(fresh.top, A_ID))
    top = h.entries[0]
    assert (top.commit, top.change, top.before, top.after) == (
        None,
        "changed",
        hr.SECTION_A3.encode(),
        new_a.encode(),
    )
    assert [e.commit.id for e in h.commits if e.commit] == [
        fresh.shas[8],
        fresh.shas[1],
        fresh.shas[0],
    ]
    # B did not change in the working tree: no working-tree entry.
    assert memory_history(_memory(fresh.top, B_ID)).entries[0].commit is not None


def test_memory_never_committed(fresh: Any) -> None:
    obs = fresh.top / "memory/dream/observations.md"
    obs.write_bytes(obs.read_bytes() + hr.section("Brand new", "5.0", "Not committed.").encode())
    m = next(x for x in open_catalog(fresh.top / "memory").memories() if x.title == "Brand new")
    h = memory_history(m)
    assert [(e.commit, e.change) for e in h.entries] == [(None, "added")]
    assert h.commits == []


def test_shallow_clone(built: Any, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "2", f"file://{built.top}", str(clone)],
        check=True,
        capture_output=True,
        env={**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}},
    )
    h = memory_history(_memory(clone, A_ID))
    assert h.repo.shallow
    # Two commits deep: commit 9 (A's comment) is there, its earlier ones are not.
    assert [(e.commit.id if e.commit else None) for e in h.entries] == [built.shas[8]]


# -- restore ---------------------------------------------------------------------------


def test_restore_section_then_undo_restores_every_byte(fresh: Any) -> None:
    before = _tree(fresh.top)
    h = memory_history(_memory(fresh.top, A_ID))
    plan, _entry = restore_version(h, fresh.shas[0])
    assert plan.action == "restore_version"
    obs = "memory/dream/observations.md"
    after = _tree(fresh.top)
    assert after[obs] == hr.observations(hr.SECTION_A1, hr.SECTION_B2, hr.SECTION_C)
    assert {k for k in after if after[k] != before.get(k)} == {obs}
    undo_last(fresh.top / "memory/dream")
    assert _tree(fresh.top) == before


def test_restore_file_memory_then_undo(fresh: Any) -> None:
    before = _tree(fresh.top)
    h = memory_history(_memory(fresh.top, hr.NOTE_ID))
    restore_version(h, fresh.shas[0])
    archived = f"memory/ocean/{hr.NOTE_ARCHIVED}"
    # The content of commit 1, where the memory is now (archive/): not moved back.
    assert _tree(fresh.top)[archived] == hr.note("Disk at 71%.")
    undo_last(fresh.top / "memory/ocean")
    assert _tree(fresh.top) == before


def test_restore_is_conflict_checked(fresh: Any) -> None:
    h = memory_history(_memory(fresh.top, A_ID))
    obs = fresh.top / "memory/dream/observations.md"
    edited = hr.observations(hr.section("Studio lease", "7.0", "Edited meanwhile."), hr.SECTION_B2)
    obs.write_bytes(edited)
    with pytest.raises(ConflictError):
        restore_version(h, fresh.shas[0])
    assert obs.read_bytes() == edited
    assert not (fresh.top / "memory/dream/.memlens/journal.jsonl").exists()


def test_restore_refusals(fresh: Any) -> None:
    with pytest.raises(RefusedError, match="immutable"):
        restore_version(memory_history(_memory(fresh.top, "exp_x")), fresh.shas[0])
    with pytest.raises(RefusedError, match="as it is now"):
        restore_version(memory_history(_memory(fresh.top, A_ID)), "HEAD")
    assert _tree(fresh.top)["memory/exp/experiences.jsonl"].count(b"exp_x") == 1


# -- no repository, no git -----------------------------------------------------------------


def test_vault_outside_git(tmp_path: Path) -> None:
    vault = tmp_path / "plain"
    vault.mkdir()
    (vault / "observations.md").write_bytes(hr.observations(hr.SECTION_A1))
    m = open_catalog(vault).get(A_ID)
    with pytest.raises(NotInGitError, match="not inside a git repository"):
        memory_history(m)
    res = CliRunner().invoke(history_cmd, [str(vault), A_ID])
    assert res.exit_code == 1
    assert "not inside a git repository" in res.stderr
    assert "Traceback" not in res.output


def test_git_missing(built: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(git_mod.shutil, "which", lambda name: None)
    with pytest.raises(GitMissingError, match="not installed"):
        memory_history(_memory(built.top, A_ID))
    res = CliRunner().invoke(history_cmd, [str(built.top / "memory"), A_ID])
    assert res.exit_code == 1
    assert "git command is not installed" in res.stderr


def test_git_env_drops_callers_git_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_DIR", "/elsewhere")
    env = git_mod.git_env()
    assert "GIT_DIR" not in env
    assert env["GIT_CONFIG_NOSYSTEM"] == "1"
    assert env["GIT_NO_LAZY_FETCH"] == "1"
    assert env["GIT_LITERAL_PATHSPECS"] == "1"


# -- finding a memory inside a version ------------------------------------------------------


def test_section_bytes_repeated_headings_and_crlf() -> None:
    data = b"# x\r\n\r\n## Same\r\none\r\n\r\n## Same\r\ntwo\r\n## Other\r\nx\r\n"
    assert section_bytes(data, "Same", 1) == b"## Same\r\none\r\n\r\n"
    assert section_bytes(data, "Same", 2) == b"## Same\r\ntwo\r\n"
    assert section_bytes(data, "Same", 3) is None
    assert section_bytes(b"## Samey\n", "Same") is None
    assert section_bytes(b"text ## Same\n", "Same") is None
    assert section_bytes(b"\xef\xbb\xbf## Same\nend", "Same") == b"## Same\nend"


def test_record_line_by_top_level_id_only() -> None:
    data = (
        b'{"id": "b", "parents": ["a"]}\n'
        b'{"id": "c", "provenance": {"id": "a"}}\n'
        b'{"id": "a", "v": 1}\n'
    )
    assert record_line(data, "a") == b'{"id": "a", "v": 1}'
    assert record_line(data, "zz") is None
    assert record_line(b'{"id": "\\u00e9"}\n', "\u00e9") == b'{"id": "\\u00e9"}'


# -- the command line --------------------------------------------------------------------------


def test_cli_json(built: Any) -> None:
    res = CliRunner().invoke(history_cmd, [str(built.top / "memory"), "exp_x", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert (data["vault"], data["format"], data["id"]) == ("exp", "experience-records", "exp_x")
    assert [e["commit"] for e in data["entries"]] == [built.shas[6], built.shas[0]]
    assert data["entries"][0]["subject"] == "edit record X confidence"
    assert data["entries"][0]["fields"] == [
        {
            "field": "confidence",
            "before": {"p": 0.9, "method": "direct_capture"},
            "after": {"p": 0.5, "method": "direct_capture"},
        }
    ]
    assert data["entries"][0]["body_changed"] is False
    assert data["entries"][0]["diff"].splitlines()[3:] == [
        "-" + hr.record("exp_x", "Reviewer 2 flags seeds.").decode().rstrip("\n"),
        "+" + hr.record("exp_x", "Reviewer 2 flags seeds.", 0.5).decode().rstrip("\n"),
    ]
    assert data["entries"][1]["change"] == "added"


def test_cli_at_and_restore_dry_run(built: Any) -> None:
    root = str(built.top / "memory")
    res = CliRunner().invoke(history_cmd, [root, A_ID, "--at", built.shas[0], "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["text"] == hr.SECTION_A1
    before = _tree(built.top)
    res = CliRunner().invoke(history_cmd, [root, A_ID, "--restore", built.shas[0], "--dry-run"])
    assert res.exit_code == 0, res.output
    assert "  -The lease renews on 2027-03-01; notice by January." in res.stderr
    assert "  +The lease renews in March." in res.stderr
    assert "dry run: nothing written" in res.stderr
    assert _tree(built.top) == before
    res = CliRunner().invoke(history_cmd, [root, "exp_x", "--restore", built.shas[0]])
    assert res.exit_code == 1
    assert "immutable" in res.stderr


def test_cli_writes_the_store_while_git_works(
    fresh: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`memlens history` writes the stores in a thread while git works: the next read is warm."""
    monkeypatch.setenv("MEMLENS_CACHE_DIR", str(tmp_path / "cache"))
    root = fresh.top / "memory"
    res = CliRunner().invoke(history_cmd, [str(root), "exp_x", "--json"])
    assert res.exit_code == 0, res.output
    assert [e["commit"] for e in json.loads(res.stdout)["entries"]][-1] == fresh.shas[0]
    warm = open_catalog(root, cache=True)
    assert warm.vaults
    for v in warm.vaults:
        assert v.cache_stats is not None and v.cache_stats.status == "warm", v.root
        assert v.cache_stats.parsed == 0
    res = CliRunner().invoke(history_cmd, [str(root), "no-such-id", "--json"])
    assert res.exit_code == 1
    assert "no memory with id 'no-such-id'" in res.stderr


@pytest.mark.parametrize("memory_id", ["exp_x", A_ID])
def test_cli_reads_the_memory_from_the_kept_search_index(
    fresh: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, memory_id: str
) -> None:
    """After `memlens search`, `history` takes the memory from its index (no catalog opened)."""
    from memlens.core.scan import reading
    from memlens.tui.cli import history as history_mod
    from memlens.tui.cli.main import cli

    monkeypatch.setattr(reading, "RACY_WINDOW_NS", 0)  # the files are seconds old
    monkeypatch.setenv("MEMLENS_CACHE_DIR", str(tmp_path / "cache"))
    root = str(fresh.top / "memory")
    expected = CliRunner().invoke(cli, ["--no-cache", "history", root, memory_id, "--json"])
    assert expected.exit_code == 0, expected.output
    assert CliRunner().invoke(cli, ["search", root, "lease", "--json"]).exit_code == 0
    opened: list[object] = []
    real = history_mod.load_catalog_unsaved
    monkeypatch.setattr(
        history_mod, "load_catalog_unsaved", lambda *p: opened.append(p) or real(*p)
    )
    res = CliRunner().invoke(cli, ["history", root, memory_id, "--json"])
    assert res.exit_code == 0, res.output
    assert opened == []
    assert res.stdout == expected.stdout
    # A restore opens the catalog, as every action does.
    res = CliRunner().invoke(cli, ["history", root, memory_id, "--restore", fresh.shas[0]])
    assert len(opened) == 1
