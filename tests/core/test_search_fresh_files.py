"""A search served without the catalog: the stat walk, the index's manifest, store references."""

from __future__ import annotations

import os
import sqlite3
from datetime import date
from pathlib import Path

import pytest

from bench.generate import generate
from memlens.core import open_catalog
from memlens.core.scan.vault import survey_all
from memlens.core.search import persisted_files
from memlens.core.search.fresh import open_fresh
from memlens.core.search.index import SearchIndex
from memlens.core.search.persisted import index_path, open_index
from memlens.core.search.stored_refs import StaleRow, parse_ref
from memlens.core.store import statwalk
from memlens.core.store.db import store_path

AS_OF = date(2026, 1, 15)


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMLENS_CACHE_DIR", str(tmp_path / "user-cache"))
    from memlens.core.scan import reading

    # Files written by the test are seconds old: their stamps would all be racy.
    monkeypatch.setattr(reading, "RACY_WINDOW_NS", 0)


@pytest.fixture
def vaults(tmp_path: Path) -> Path:
    root = tmp_path / "vaults"
    generate(root, 600, seed=5)
    return root


def _cognitive(root: Path) -> Path:
    (vault,) = [v.root for v in survey_all(root).vaults if v.format == "cognitive-memory"]
    return vault


def _stat_bytes(root: Path, rels: list[str]) -> bytes:
    from array import array

    out: array[int] = array("q")
    for rel in rels:
        st = os.stat(root / rel)
        out.extend((st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
    return out.tobytes()


def test_stat_stamps_equal_plain_stats_in_one_or_two_processes(
    vaults: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _cognitive(vaults)
    rels = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md"))
    expected = _stat_bytes(root, rels)
    assert statwalk.stat_stamps(str(root), rels) == expected
    # Forced through the forked child: the same bytes, in the same order.
    monkeypatch.setattr(statwalk, "PARALLEL_MIN", 2)
    monkeypatch.setattr(statwalk, "spare_cpu", lambda: True)
    # A thread another test left running would forbid the fork (as it should in use).
    monkeypatch.setattr(statwalk.threading, "active_count", lambda: 1)
    assert statwalk._may_fork(len(rels))
    assert statwalk.stat_stamps(str(root), rels) == expected
    # A file that is gone: no answer (the caller opens the catalog).
    assert statwalk.stat_stamps(str(root), [*rels, "graph/nothing-here.md"]) is None


def test_manifest_holds_the_indexed_files_packed(vaults: Path) -> None:
    catalog = open_catalog(vaults, cache=True)
    open_index(catalog, AS_OF)
    conn = sqlite3.connect(index_path(catalog.vaults))
    try:
        for number, v in enumerate(catalog.vaults):
            manifest = persisted_files.read(conn, number)
            assert manifest is not None
            assert manifest.names == list(v.stamps)
            assert manifest.sha_of() == {
                rel: bytes.fromhex(s.sha256)[: persisted_files.SHA_BYTES]
                for rel, s in v.stamps.items()
            }
            assert manifest.stamps == _stat_bytes(v.root, list(v.stamps))
            assert manifest.racy == 0
    finally:
        conn.close()


def test_a_touched_file_is_caught_and_its_new_stamp_saved(vaults: Path) -> None:
    """Same bytes, new mtime: not served from the index (stamps differ) until the
    catalog's way has saved the new stamp; then served again."""
    catalog = open_catalog(vaults, cache=True)
    open_index(catalog, AS_OF)
    assert open_fresh(survey_all(vaults).vaults, AS_OF) is not None
    path = next((_cognitive(vaults) / "graph").rglob("*.md"))
    st = path.stat()
    # An older mtime, not a newer one: a stamp newer than the save is racy and (rightly)
    # never served, which made this test depend on how fast the catalog ran.
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 5_000_000_000))
    assert open_fresh(survey_all(vaults).vaults, AS_OF) is None
    open_index(open_catalog(vaults, cache=True), AS_OF)
    assert open_fresh(survey_all(vaults).vaults, AS_OF) is not None


def _reference_slots(vaults: Path) -> list[int]:
    conn = sqlite3.connect(index_path(survey_all(vaults).vaults))
    try:
        rows = conn.execute("SELECT slot, blob FROM memories").fetchall()
    finally:
        conn.close()
    return [slot for slot, blob in rows if parse_ref(blob) is not None]


def _hits(index: SearchIndex) -> list[tuple[object, ...]]:
    from memlens.core.records import memory_record

    hits = index.run("health:all", 1000).hits
    return [(h.score, memory_record(h.memory, AS_OF, Path("/"))) for h in hits]


def test_one_memory_files_are_references_to_their_store_rows(vaults: Path) -> None:
    fresh_build = SearchIndex.from_catalog(open_catalog(vaults, cache=False), AS_OF)
    open_index(open_catalog(vaults, cache=True), AS_OF)
    refs = _reference_slots(vaults)
    # Every cognitive-memory, Project Ocean and observation/v1 memory (one per file).
    assert len(refs) >= 300
    served = open_fresh(survey_all(vaults).vaults, AS_OF)
    assert served is not None
    assert _hits(served) == _hits(fresh_build)


def _damage_one_store_row(vault: Path) -> None:
    """Rewrite one row of the vault's store as another process relinking could."""
    from memlens.core.store import codec

    conn = sqlite3.connect(store_path(vault), isolation_level=None)
    try:
        zdict = conn.execute("SELECT value FROM blobs WHERE name = 'zdict'").fetchone()[0]
        rows = conn.execute("SELECT id, rel, scan FROM files ORDER BY rel").fetchall()
        row_id, _rel, blob = next(r for r in rows if bytes(r[1]).startswith(b"graph/"))
        fs = codec.decode_scan(blob, vault, zdict)
        fs.memories[0].extra = {**fs.memories[0].extra, "relinked": True}
        new = codec.compress(codec.pickle_scan(fs, vault), zdict)
        conn.execute("UPDATE files SET scan = ? WHERE id = ?", (new, row_id))
    finally:
        conn.close()


def test_a_changed_store_row_falls_back_to_the_catalog_and_is_rechecked(vaults: Path) -> None:
    open_index(open_catalog(vaults, cache=True), AS_OF)
    before = len(_reference_slots(vaults))
    _damage_one_store_row(_cognitive(vaults))
    served = open_fresh(survey_all(vaults).vaults, AS_OF)
    assert served is not None  # files unchanged: served, until the row is read
    with pytest.raises(StaleRow):
        served.run("health:all", 1000)
    # The catalog's way (what a search falls back to) rechecks the references.
    index, _stats = open_index(open_catalog(vaults, cache=True), AS_OF, recheck=True)
    assert any(h.memory.extra.get("relinked") for h in index.run("health:all", 1000).hits)
    assert len(_reference_slots(vaults)) == before  # the memory refers to the new row
    again = open_fresh(survey_all(vaults).vaults, AS_OF)
    assert again is not None
    assert any(h.memory.extra.get("relinked") for h in again.run("health:all", 1000).hits)


def _force_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(statwalk, "PARALLEL_MIN", 2)
    monkeypatch.setattr(statwalk, "spare_cpu", lambda: True)
    monkeypatch.setattr(statwalk.threading, "active_count", lambda: 1)


@pytest.mark.parametrize("share", [0.0, 0.3, 0.65, 1.0])
def test_a_stat_job_gives_the_plain_stats_whatever_the_childs_share(
    vaults: Path, monkeypatch: pytest.MonkeyPatch, share: float
) -> None:
    root = _cognitive(vaults)
    rels = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md"))
    _force_fork(monkeypatch)
    job = statwalk.StatJob(str(root), rels, share)
    pid = job._pid
    assert pid  # a child stats its share meanwhile
    assert job.result() == _stat_bytes(root, rels)
    with pytest.raises(ChildProcessError):  # and it was reaped
        os.waitpid(pid, os.WNOHANG)


@pytest.mark.parametrize("gone_at", [0, -1])
def test_a_stat_job_missing_a_file_in_either_part_answers_none(
    vaults: Path, monkeypatch: pytest.MonkeyPatch, gone_at: int
) -> None:
    """The child's share (first files) or this process's (the rest) hits a gone file."""
    root = _cognitive(vaults)
    rels = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md"))
    rels.insert(len(rels) if gone_at < 0 else 0, "graph/nothing-here.md")
    _force_fork(monkeypatch)
    assert statwalk.StatJob(str(root), rels, 0.5).result() is None


def test_a_stat_job_let_go_leaves_no_child(vaults: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _cognitive(vaults)
    rels = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md"))
    _force_fork(monkeypatch)
    job = statwalk.StatJob(str(root), rels, 0.9)
    pid = job._pid
    assert pid
    job.close()  # its answer unread
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def test_a_file_changed_while_the_search_ran_is_not_served_from_the_index(
    vaults: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`memlens search` runs its query on the kept index while the stat walk goes on;
    a file that changes before the walk reaches it sends the search the catalog's way."""
    from click.testing import CliRunner

    from memlens.core.search import fresh
    from memlens.tui.cli.main import cli

    def search() -> list[str]:
        res = CliRunner().invoke(
            cli,
            ["search", str(vaults), "zebracorn", "--json", "--as-of", AS_OF.isoformat()],
            catch_exceptions=False,
        )
        assert res.exit_code == 0, res.output
        import json

        return [r["id"] for r in json.loads(res.output)]

    assert search() == []  # builds and keeps the index
    path = next((_cognitive(vaults) / "graph").rglob("*.md"))
    memory_id = next(m.id for m in open_catalog(vaults).memories() if m.path.endswith(path.name))
    served = fresh.serve

    def serve_then_edit(checked: object) -> object:
        index = served(checked)  # type: ignore[arg-type]
        assert index is not None  # the walk started on unchanged files
        text = path.read_text(encoding="utf-8")
        path.write_text(text.rstrip("\n") + " zebracorn\n", encoding="utf-8")
        st = path.stat()  # an older mtime: not racy, only different
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 5_000_000_000))
        return index

    monkeypatch.setattr(fresh, "serve", serve_then_edit)
    assert search() == [memory_id]
