"""An unreadable folder or file is one reported problem; everything else still loads.

Issue 15: one agent folder without read permission made a whole Project Ocean
vault "no memory vault found".  Tests run as root here, where `chmod 000`
blocks nothing, so `denied` makes the OS calls memlens reads through raise
PermissionError for chosen paths, as they do for another user.  The real
`chmod` variant runs where it is effective (not as root).
"""

from __future__ import annotations

import builtins
import io
import json
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memlens.core.demo import copy_demo
from memlens.core.formats import adapter_for
from memlens.core.model import Problem, Reason
from memlens.core.scan.changes import Change, ChangeKind
from memlens.core.scan.vault import Catalog, open_catalog, rescan_paths, survey
from memlens.core.scan.walk_ahead import walk_vault
from memlens.core.scan.watch import VaultWatcher, vault_files
from memlens.tui.cli.main import cli


@contextmanager
def denied(monkeypatch: pytest.MonkeyPatch, *paths: Path) -> Iterator[None]:
    """Reading `paths` (folders: listing them or reaching inside) raises PermissionError.

    Like a folder without r/x permission for a non-root user: the folder
    itself can be stat'ed from its parent, but not listed or entered; a
    file can be stat'ed but not opened.
    """
    blocked = [os.path.abspath(p) for p in paths]

    def refused(path: Any, *, entering: bool) -> bool:
        if isinstance(path, int):
            return False
        full = os.path.abspath(os.fsdecode(path))
        return any(full.startswith(b + os.sep) or (not entering and full == b) for b in blocked)

    def guard(real: Callable[..., Any], entering: bool) -> Callable[..., Any]:
        def call(path: Any = ".", *args: Any, **kw: Any) -> Any:
            if refused(path, entering=entering):
                raise PermissionError(13, "Permission denied", os.fsdecode(path))
            return real(path, *args, **kw)

        return call

    def guard_open(real: Callable[..., Any]) -> Callable[..., Any]:
        def call(file: Any, *args: Any, **kw: Any) -> Any:
            if refused(file, entering=False):
                raise PermissionError(13, "Permission denied", os.fsdecode(file))
            return real(file, *args, **kw)

        return call

    with monkeypatch.context() as m:
        m.setattr(os, "scandir", guard(os.scandir, entering=False))
        m.setattr(os, "listdir", guard(os.listdir, entering=False))
        m.setattr(os, "stat", guard(os.stat, entering=True))
        m.setattr(os, "lstat", guard(os.lstat, entering=True))
        m.setattr(os, "open", guard_open(os.open))
        m.setattr(builtins, "open", guard_open(builtins.open))
        m.setattr(io, "open", guard_open(io.open))
        yield


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    return copy_demo(tmp_path)


def _counts(catalog: Catalog) -> dict[str, int]:
    return {v.rel: len(v.memories) for v in catalog.vaults}


def _unreadable(catalog: Catalog) -> list[Problem]:
    return [p for p in catalog.problems() if p.reason is Reason.UNREADABLE]


#: (path made unreadable, the vault it is in, the problem's vault-relative path)
CASES = [
    ("project-ocean/agents/atlas", "project-ocean", "agents/atlas"),
    ("project-ocean/agents/atlas/memory", "project-ocean", "agents/atlas/memory"),
    ("project-ocean/agents", "project-ocean", "agents"),
    ("project-ocean/shared/observations", "project-ocean", "shared/observations"),
    ("cognitive-memory/graph", "cognitive-memory", "graph"),
    ("cognitive-memory/episodes", "cognitive-memory", "episodes"),
    ("observation-v1/observations", "observation-v1", "observations"),
    ("dream-cycle/observations.md", "dream-cycle", "observations.md"),
    ("experience-records/experiences.jsonl", "experience-records", "experiences.jsonl"),
]


@pytest.mark.parametrize(("blocked", "vault", "rel"), CASES, ids=[c[0] for c in CASES])
def test_one_unreadable_path_is_one_problem_and_the_rest_loads(
    demo: Path, monkeypatch: pytest.MonkeyPatch, blocked: str, vault: str, rel: str
) -> None:
    before = _counts(open_catalog(demo, parallel=False))
    with denied(monkeypatch, demo / blocked):
        catalog = open_catalog(demo, parallel=False)
    after = _counts(catalog)
    assert sorted(after) == sorted(before), "every vault is still found"
    assert {k: n for k, n in after.items() if k != vault} == {
        k: n for k, n in before.items() if k != vault
    }
    # (Episodes are no memories: the count only drops where memories were.)
    assert after[vault] < before[vault] or rel == "episodes"
    [problem] = _unreadable(catalog)
    assert (problem.format, problem.path) == (vault, rel)
    assert problem.detail.endswith("Permission denied")
    assert catalog.vault_of(problem).rel == vault


def test_an_unreadable_vault_folder_is_reported_by_discovery(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with denied(monkeypatch, demo / "dream-cycle"):
        found = survey(demo)
        catalog = open_catalog(demo, parallel=False)
    assert "dream-cycle" not in {v.rel for v in found.vaults}
    assert len(found.vaults) == 4
    [problem] = found.unreadable
    assert (problem.format, problem.vault_root, problem.path) == ("", demo.resolve(), "dream-cycle")
    assert problem.reason is Reason.UNREADABLE
    assert _unreadable(catalog) == [problem]


def test_a_cached_scan_reports_the_folder_and_recovers_when_readable(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    full = _counts(open_catalog(demo, cache=True, parallel=False))
    with denied(monkeypatch, demo / "project-ocean/agents/atlas"):
        warm = open_catalog(demo, cache=True, parallel=False)
    assert [p.path for p in _unreadable(warm)] == ["agents/atlas"]
    assert warm.vaults[0].rel in full
    again = open_catalog(demo, cache=True, parallel=False)
    assert _counts(again) == full
    assert _unreadable(again) == []


def test_the_stat_walk_lists_the_folder_as_skipped(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = demo / "project-ocean"
    with denied(monkeypatch, root / "agents/atlas"):
        listing, keys = walk_vault(str(root), "project-ocean")
    assert [(s.rel, s.reason) for s in listing.skipped] == [("agents/atlas", Reason.UNREADABLE)]
    assert listing.names and not any(n.startswith("agents/atlas/") for n in listing.names)
    assert None not in keys


@pytest.mark.parametrize("fmt", ["project-ocean", "cognitive-memory"])
def test_detection_survives_an_unreadable_marker_folder(
    demo: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    inner = {"project-ocean": "agents", "cognitive-memory": "graph"}[fmt]
    with denied(monkeypatch, demo / fmt / inner):
        assert adapter_for(fmt).detect(demo / fmt)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every folder: chmod 000 blocks nothing")
def test_real_permissions_on_an_agent_folder(demo: Path) -> None:
    atlas = demo / "project-ocean/agents/atlas"
    atlas.chmod(0)
    try:
        catalog = open_catalog(demo, parallel=False)
    finally:
        atlas.chmod(0o755)
    assert "project-ocean" in _counts(catalog)
    assert [(p.format, p.path) for p in _unreadable(catalog)] == [("project-ocean", "agents/atlas")]


def test_the_watcher_file_list_leaves_only_that_folder_out(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = open_catalog(demo, parallel=False)
    [vault] = [v for v in catalog.vaults if v.format == "project-ocean"]
    every = vault_files(vault)
    with denied(monkeypatch, vault.root / "agents/atlas"):
        files = vault_files(vault)
    atlas = [f for f in every if "/agents/atlas/" in f.as_posix()]
    assert atlas and files == [f for f in every if f not in atlas]


def test_validate_json_names_the_folder_and_list_still_shows_the_vault(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = CliRunner()
    with denied(monkeypatch, demo / "project-ocean/agents/atlas", demo / "dream-cycle"):
        checked = runner.invoke(cli, ["validate", str(demo), "--json"])
        listed = runner.invoke(cli, ["list", str(demo), "--json"])
    assert checked.exit_code == 1
    refused = [p for p in json.loads(checked.stdout) if p["reason"] == "unreadable"]
    assert [(p["vault"], p["format"], p["path"]) for p in refused] == [
        ("project-ocean", "project-ocean", "agents/atlas"),
        (".", "", "dream-cycle"),
    ]
    assert listed.exit_code == 0
    assert "project-ocean" in {r["vault"] for r in json.loads(listed.stdout)}


def test_no_vault_found_says_which_folder_could_not_be_read(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with denied(monkeypatch, demo / "dream-cycle"):
        got = CliRunner().invoke(cli, ["list", str(demo / "dream-cycle")])
    assert got.exit_code == 2
    assert "no memory vault found" in got.output
    assert "cannot read: Permission denied" in got.output


# -- rescans and the watcher: a folder that becomes unreadable, then readable again --------


def _state(catalog: Catalog) -> tuple[set[tuple[str, str]], set[tuple[str, str, str]]]:
    mems = {(v.rel, m.id) for v in catalog.vaults for m in v.memories}
    probs = {(v.rel, p.path, p.reason.value) for v in catalog.vaults for p in v.problems}
    return mems, probs


def test_a_rescan_of_files_below_a_refused_folder_equals_a_full_scan(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = open_catalog(demo, parallel=False)
    [vault] = [v for v in catalog.vaults if v.format == "project-ocean"]
    atlas = [f for f in vault_files(vault) if "/agents/atlas/" in f.as_posix()]
    with denied(monkeypatch, vault.root / "agents/atlas"):
        rescan_paths(vault, atlas)
        assert _state(catalog) == _state(open_catalog(demo, parallel=False))
    assert ("project-ocean", "agents/atlas", "unreadable") in _state(catalog)[1]
    rescan_paths(vault, atlas)  # readable again: the watcher re-reads what reappeared
    assert _state(catalog) == _state(open_catalog(demo, parallel=False))
    assert not _unreadable(catalog)


def test_the_watcher_reports_the_folder_and_clears_it(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = open_catalog(demo, parallel=False)
    seen: list[Change] = []
    errors: list[BaseException] = []
    cond = threading.Condition()

    def record(changes: list[Change]) -> None:
        with cond:
            seen.extend(changes)
            cond.notify_all()

    def wait_for(kind: ChangeKind) -> None:
        with cond:
            assert cond.wait_for(
                lambda: any(c.kind is kind and c.path == "agents/atlas" for c in seen), 30
            ), seen

    w = VaultWatcher(
        catalog,
        record,
        paths=[demo],
        on_error=errors.append,
        rescan_interval=None,
        grace=0.1,
        unreadable_timeout=0.2,
    )
    w.start()
    try:
        assert w.wait_ready(30)
        with denied(monkeypatch, demo / "project-ocean/agents/atlas"):
            w.rescan()
            wait_for(ChangeKind.PROBLEM)
        w.rescan()
        wait_for(ChangeKind.PROBLEM_CLEARED)
    finally:
        w.stop()
    assert not errors, errors
    assert _state(catalog) == _state(open_catalog(demo, parallel=False))
