"""A search that skips listing a vault whose folders all kept their stamps, and when it must not."""

from __future__ import annotations

import os
import sqlite3
import time
from datetime import date
from pathlib import Path

import pytest

from bench.generate import generate
from memlens.core import open_catalog
from memlens.core.formats import adapter_for, listed_folders
from memlens.core.formats.files import list_files, list_md
from memlens.core.scan.vault import survey_all
from memlens.core.search.fresh import open_fresh
from memlens.core.search.persisted import index_path, open_index

AS_OF = date(2026, 1, 15)
HOUR_AGO_NS = (time.time_ns() // 10**9 - 3600) * 10**9


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMLENS_CACHE_DIR", str(tmp_path / "user-cache"))
    from memlens.core.scan import reading

    # Files written by the test are seconds old: their stamps would all be racy.
    monkeypatch.setattr(reading, "RACY_WINDOW_NS", 0)


def _age_folders(root: Path) -> None:
    """Every folder last changed an hour ago (a fresh folder's stamp proves nothing)."""
    for folder, _dirs, _files in os.walk(root):
        os.utime(folder, ns=(HOUR_AGO_NS, HOUR_AGO_NS))


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vaults"
    generate(root, 300, seed=9, mix="cognitive-memory")
    open_index(open_catalog(root, cache=True), AS_OF)
    _age_folders(root)
    return root


def _memories(root: Path) -> Path:
    (found,) = survey_all(root).vaults
    return found.root


def _kept(root: Path) -> dict[int, int]:
    vaults = survey_all(root).vaults
    conn = sqlite3.connect(index_path(vaults))
    try:
        return dict(conn.execute("SELECT vault, length(folders) FROM listed_folders"))
    finally:
        conn.close()


def _listings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Count the vault listings made from now on."""
    adapter = type(adapter_for("cognitive-memory"))
    listed: list[str] = []
    real = adapter.file_listing

    def counted(self: object, root: Path) -> object:
        listed.append(str(root))
        return real(self, root)  # type: ignore[arg-type]

    monkeypatch.setattr(adapter, "file_listing", counted)
    return listed


def _search(root: Path) -> list[str]:
    index = open_fresh(survey_all(root).vaults, AS_OF)
    assert index is not None
    return [h.memory.id for h in index.search("latency timeout", limit=20)]


def test_an_unchanged_vault_is_listed_once_then_only_stat_ed(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed = _listings(monkeypatch)
    first = _search(vault)
    assert len(listed) == 1 and _kept(vault)  # the folders it looked at are kept
    assert _search(vault) == first and _search(vault) == first
    assert len(listed) == 1  # not listed again


def test_the_scan_that_builds_the_index_keeps_its_folders_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "vaults"
    generate(root, 200, seed=4, mix="cognitive-memory")
    _age_folders(root)
    catalog = open_catalog(root, cache=True)
    (v,) = catalog.vaults
    assert v.listing is not None and v.listing.folders  # the scan's own listing, stamped
    open_index(catalog, AS_OF)
    assert _kept(root)
    listed = _listings(monkeypatch)
    _search(root)
    assert listed == []  # the first search after the build lists nothing

    # A file the catalog re-read in place keeps the names: the folders still prove them.
    some = sorted((_memories(root) / "graph").rglob("*.md"))[2]
    with some.open("a", encoding="utf-8") as fh:
        fh.write("\nmore\n")
    assert open_fresh(survey_all(root).vaults, AS_OF) is None
    open_index(open_catalog(root, cache=True), AS_OF)  # (its scan lists the vault)
    listed.clear()
    _search(root)
    assert listed == []


@pytest.mark.parametrize(
    "change",
    ["new file", "new file in an empty folder", "file removed", "file renamed", "new folder"],
)
def test_any_change_to_the_folders_is_seen(
    vault: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    _search(vault)
    listed = _listings(monkeypatch)
    mem = _memories(vault)
    some = sorted((mem / "graph").rglob("*.md"))[3]
    text = some.read_text(encoding="utf-8").replace(some.stem[-6:], "9f9f9f", 1)
    if change == "new file":
        some.with_name("added-9f9f9f.md").write_text(text, encoding="utf-8")
    elif change == "new file in an empty folder":
        empty = mem / "graph" / "decisions"
        for old in empty.glob("*.md"):  # the generator may have written some: move them out
            old.rename(mem / "graph" / "general" / f"moved-{old.name}")
        _age_folders(vault)
        assert open_fresh(survey_all(vault).vaults, AS_OF) is None  # (moved: a change)
        open_index(open_catalog(vault, cache=True), AS_OF)
        _search(vault)
        (empty / "added-9f9f9f.md").write_text(text, encoding="utf-8")
    elif change == "file removed":
        some.rename(vault.parent / "outside.md")
    elif change == "file renamed":
        some.rename(some.with_name("renamed-" + some.name))
    else:
        # A folder the format does not read: `graph/` changed, so the vault is
        # listed again, and that listing gives the same files: still served.
        (mem / "graph" / "new-kind").mkdir()
        assert open_fresh(survey_all(vault).vaults, AS_OF) is not None
        assert len(listed) == 1
        return
    assert open_fresh(survey_all(vault).vaults, AS_OF) is None  # the catalog's way
    assert listed  # it listed to find out


def test_a_file_changed_in_place_is_seen_without_listing(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _search(vault)
    listed = _listings(monkeypatch)
    some = sorted((_memories(vault) / "graph").rglob("*.md"))[5]
    with some.open("a", encoding="utf-8") as fh:
        fh.write("\nappended by an agent\n")
    assert open_fresh(survey_all(vault).vaults, AS_OF) is None
    assert listed == []  # the folders held: the stat of the file told


def test_folders_changed_just_now_or_links_keep_nothing(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed = _listings(monkeypatch)
    mem = _memories(vault)
    os.utime(mem / "graph" / "general")  # modified now: within the racy window
    _search(vault)
    assert _kept(vault) == {}
    _search(vault)
    assert len(listed) == 2  # listed each time

    _age_folders(vault)
    target = sorted((mem / "graph").rglob("*.md"))[0]
    os.symlink(target, mem / "graph" / "general" / "linked-9f9f9f.md")
    _age_folders(vault)
    open_index(open_catalog(vault, cache=True), AS_OF)
    _search(vault)
    assert _kept(vault) == {}  # a link's target may change where no folder stamp shows it


def test_the_listing_helpers_stamp_each_folder_and_those_above_it(tmp_path: Path) -> None:
    root = tmp_path / "v"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "x.md").write_text("x", encoding="utf-8")
    (root / "state.json").write_text("{}", encoding="utf-8")
    _age_folders(root)
    with listed_folders.recording(root) as seen:
        assert list_md(root, "a/b").names == ["x.md"]
        assert list_md(root, "absent").names == []
        assert list_files(root, ["state.json", "c/missing.json"]).names == ["state.json"]
    assert set(seen.folders) == {"", "a", "a/b", "absent", "c"}
    assert seen.folders["absent"] is None and seen.folders["c"] is None
    assert seen.trusted
    assert listed_folders.unchanged_folders(str(root), seen.folders)
    (root / "c").mkdir()  # an absent folder appears: seen, and so is its parent
    assert not listed_folders.unchanged_folders(str(root), seen.folders)
    assert not listed_folders.unchanged_folders(str(root), {"c": None})
    # Outside a recording the helpers stamp nothing.
    assert list_md(root, "a/b").names == ["x.md"]
