"""The persisted search index ranks exactly as a fresh build, before and after file changes."""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import uuid
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from bench.generate import generate
from memlens.core import open_catalog
from memlens.core.demo import copy_demo
from memlens.core.records import memory_record
from memlens.core.scan.vault import survey_all
from memlens.core.search.fresh import open_fresh
from memlens.core.search.index import SearchIndex
from memlens.core.search.persisted import PersistedStats, index_path, open_index

AS_OF = date(2026, 1, 15)

QUERIES = [
    "postgres",
    "connection pool timeouts",
    "consul tls certificate",
    '"connection pool"',
    "tag:consul",
    "deadlock -postgres",
    "postgrse deadlok",
    "health:all retry storm",
    "the",
    "zyzzyva",
    "type:solution nightly backup",
    "importance>0.5 cache layer",
]


def _page(
    index: SearchIndex, query: str, as_you_type: bool = False, rank: str = "recall"
) -> tuple[Any, ...]:
    got = index.run(query, 15, as_you_type=as_you_type, rank=rank)
    hits = [
        (h.memory.key, h.score, h.explain, memory_record(h.memory, AS_OF, Path("/")), h.memory.body)
        for h in got.hits
    ]
    return hits, got.total, got.total_exact


def _all_pages(index: SearchIndex) -> list[tuple[Any, ...]]:
    pages = [_page(index, q) for q in QUERIES]
    pages += [_page(index, q, as_you_type=True) for q in ("conn", "postgres dead", '"retry st')]
    # The relevance ranking (BM25F, the fronts' default) from its own persisted index.
    pages += [_page(index, q, rank="relevance") for q in QUERIES]
    pages += [
        _page(index, q, as_you_type=True, rank="relevance")
        for q in ("conn", "postgres dead", "quok")
    ]
    return pages


def _same_as_fresh(root: Path, as_of: date = AS_OF) -> PersistedStats:
    """Searches through the persisted index equal a fresh build's; how it was obtained."""
    fresh = SearchIndex.from_catalog(open_catalog(root, cache=False), as_of)
    expected = _all_pages(fresh)
    stored, stats = open_index(open_catalog(root, cache=True), as_of)
    assert not stats.reason or stats.status != "loaded"
    assert _all_pages(stored) == expected
    # Title words in a fresh build's first-seen order (fuzzy ties break by it).
    assert stored.state.words.by_len == fresh.state.words.by_len
    assert list(stored.state.tags) == list(fresh.state.tags)
    # Now nothing changed: served without the catalog, the same pages.
    served = open_fresh(survey_all(root).vaults, as_of)
    assert served is not None
    assert _all_pages(served) == expected
    return stats


def _assert_same_as_fresh(root: Path, as_of: date = AS_OF) -> str:
    return _same_as_fresh(root, as_of).status


@pytest.fixture(autouse=True)
def _no_racy_stamps(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files written by these tests are seconds old: without this their stamps are
    all racy, and a search opens the catalog to verify them (see `fresh_check.unchanged`)."""
    from memlens.core.scan import reading as cache

    monkeypatch.setattr(cache, "RACY_WINDOW_NS", 0)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("gen") / "vaults"
    generate(root, 2500, seed=3)
    return root


def _edit(rng: random.Random, files: list[Path]) -> None:
    path = rng.choice(files)
    words = rng.sample(["zyzzyva", "postgres", "deadlock", "retry", "quokka", "pool", "tls"], 3)
    with path.open("a", encoding="utf-8") as out:
        out.write("\n" + " ".join(words) + " " + str(rng.random()) + "\n")


def _add(rng: random.Random, files: list[Path]) -> None:
    src = rng.choice(files)
    text = src.read_text(encoding="utf-8")
    old_id = text.split("\nid: ", 1)[1].split("\n", 1)[0]
    new = text.replace(old_id, str(uuid.UUID(int=rng.getrandbits(128))), 1)
    new = new.replace('title: "', f'title: "Quokka {rng.randrange(1000)} ', 1)
    dest = src.with_name(f"added-{rng.randrange(10**9)}.md")
    dest.write_text(new, encoding="utf-8")
    files.append(dest)


def _remove(rng: random.Random, files: list[Path]) -> None:
    path = rng.choice(files)
    files.remove(path)
    path.unlink()


def test_cold_then_warm_equal_a_fresh_build(generated: Path) -> None:
    assert _assert_same_as_fresh(generated) == "built"
    assert _assert_same_as_fresh(generated) == "loaded"


def test_random_changes_update_the_file_and_stay_exact(generated: Path, tmp_path: Path) -> None:
    root = tmp_path / "vaults"
    shutil.copytree(generated, root)
    rng = random.Random(17)
    files = sorted((root / "cognitive-memory" / "graph").rglob("*.md"))
    assert _assert_same_as_fresh(root) == "built"
    for _round in range(6):
        for _ in range(rng.randrange(1, 6)):
            rng.choice([_edit, _edit, _add, _remove])(rng, files)
        before = index_path(open_catalog(root, cache=True).vaults).stat().st_ino
        stats = _same_as_fresh(root)
        assert stats.status == "loaded"
        assert stats.added + stats.removed > 0
        # Updated in place, not written anew.
        assert index_path(open_catalog(root, cache=True).vaults).stat().st_ino == before


def test_a_new_date_recomputes_decay_exactly(generated: Path, tmp_path: Path) -> None:
    root = tmp_path / "vaults"
    shutil.copytree(generated, root)
    _assert_same_as_fresh(root)
    assert _assert_same_as_fresh(root, date(2026, 9, 1)) == "loaded"
    assert _assert_same_as_fresh(root, date(2026, 9, 1)) == "loaded"


def test_fixtures_equal_a_fresh_build(own_fixtures_copy: Path) -> None:
    assert _assert_same_as_fresh(own_fixtures_copy) == "built"
    assert _assert_same_as_fresh(own_fixtures_copy) == "loaded"


def test_a_damaged_file_is_rebuilt(own_fixtures_copy: Path) -> None:
    _assert_same_as_fresh(own_fixtures_copy)
    path = index_path(open_catalog(own_fixtures_copy, cache=True).vaults)
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM meta WHERE key = 'norms'")
    assert _assert_same_as_fresh(own_fixtures_copy) == "rebuilt"
    for side in (path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        side.unlink(missing_ok=True)
    path.write_bytes(b"not a database at all" * 100)
    assert _assert_same_as_fresh(own_fixtures_copy) == "rebuilt"
    assert _assert_same_as_fresh(own_fixtures_copy) == "loaded"


def test_a_changed_file_is_not_served_without_the_catalog(generated: Path, tmp_path: Path) -> None:
    root = tmp_path / "vaults"
    shutil.copytree(generated, root)
    _assert_same_as_fresh(root)
    assert open_fresh(survey_all(root).vaults, AS_OF) is not None
    assert open_fresh(survey_all(root).vaults, date(2026, 2, 1)) is None  # another as_of
    files = sorted((root / "cognitive-memory" / "graph").rglob("*.md"))
    _edit(random.Random(1), files)
    assert open_fresh(survey_all(root).vaults, AS_OF) is None


def test_undecodable_file_names_are_indexed_and_served(tmp_path: Path) -> None:
    """A file name that is not UTF-8 is a key of the index's file table like any other."""
    root = copy_demo(tmp_path) / "observation-v1"
    obs = root / "observations"
    text = (obs / "obs-102.md").read_bytes().replace(b"id: obs-102", b"id: obs-odd")
    Path(os.fsdecode(os.fsencode(obs) + b"/obs-\xff.md")).write_bytes(text)
    assert _assert_same_as_fresh(root) == "built"
    assert _assert_same_as_fresh(root) == "loaded"
    served = open_fresh(survey_all(root).vaults, AS_OF)
    assert served is not None
    hits = served.run("health:all", 50).hits
    assert "observations/obs-\udcff.md" in {h.memory.path for h in hits}
    assert any(h.memory.body for h in hits if h.memory.id == "obs-odd")
