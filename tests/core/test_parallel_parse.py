"""The cold parse split over worker processes gives what one process gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from memlens.core import workers
from memlens.core.formats import adapter_for
from memlens.core.model import ScanResult
from memlens.core.scan import cache as scan_cache
from memlens.core.scan import parallel as scan_parallel
from memlens.core.scan.cache import scan_files
from memlens.core.scan.vault import discover

FORMATS = ("observation-v1", "project-ocean", "cognitive-memory")


def assert_same(got: ScanResult, want: ScanResult) -> None:
    assert [m.id for m in got.memories] == [m.id for m in want.memories]
    assert got.memories == want.memories
    assert got.problems == want.problems
    assert got.ref_problems == want.ref_problems
    assert got.records == want.records


OWN = Path(__file__).resolve().parents[1] / "fixtures"
DEMO = Path(__file__).resolve().parents[2] / "core" / "demo_vaults"


def root_of(fmt: str) -> Path:
    """The own test vault of `fmt` (the bundled demo vault while a format has none yet)."""
    base = OWN if (OWN / fmt).is_dir() else DEMO
    (vault,) = [v for v in discover(base / fmt) if v.format == fmt]
    return vault.root


@pytest.fixture
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers for a fixture-sized vault, in several pieces (none of its files parsed
    before the listing: at a fixture's size the cold peek would take them all)."""
    monkeypatch.setattr(scan_parallel, "PARALLEL_MIN_FILES", 2)
    monkeypatch.setattr(scan_parallel, "PARALLEL_CHUNK", 3)
    monkeypatch.setattr(scan_cache, "PEEK", 0)


@pytest.mark.parametrize("fmt", FORMATS)
def test_workers_give_the_serial_result(fmt: str, small_pieces: None) -> None:
    root = root_of(fmt)
    adapter = adapter_for(fmt)
    steps = list(scan_files(adapter, root, parallel=True, batch=2))
    last = steps[-1]
    assert last.result is not None and last.stats.parallel > 0
    assert_same(last.result, adapter.scan(root))
    assert all(m.vault_root is root for m in last.result.memories)
    serial = list(scan_files(adapter, root, parallel=False))[-1]
    assert last.stamps == serial.stamps or set(last.stamps) == set(serial.stamps)
    assert [s.files_done for s in steps] == sorted(s.files_done for s in steps)


@pytest.mark.parametrize("parallel", [True, False])
def test_the_first_step_comes_after_a_few_files_then_whole_batches(
    parallel: bool, small_pieces: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan_cache, "FIRST_STEP", 1)
    root = root_of("observation-v1")
    adapter = adapter_for("observation-v1")
    steps = list(scan_files(adapter, root, parallel=parallel, batch=3))
    *early, last = steps
    assert last.done and last.result is not None
    assert len(early[0].memories) == 1  # one file's memory: the first rows
    assert all(len(s.memories) >= 3 for s in early[1:])
    # The same memories in the same order as whole batches give; the
    # linked result the same.
    monkeypatch.setattr(scan_cache, "FIRST_STEP", 3)
    whole = list(scan_files(adapter, root, parallel=parallel, batch=3))
    assert len(whole[0].memories) >= 3
    assert [m.id for s in steps for m in s.memories] == [m.id for s in whole for m in s.memories]
    assert_same(last.result, adapter.scan(root))


def test_workers_are_reused_and_stopped(small_pieces: None) -> None:
    adapter = adapter_for("project-ocean")
    root = root_of("project-ocean")
    list(scan_files(adapter, root, parallel=True))
    idle = list(workers._pool.idle)
    assert idle and all(w.proc.poll() is None for w in idle)
    list(scan_files(adapter, root, parallel=True))
    assert {id(w) for w in workers._pool.idle} == {id(w) for w in idle}
    workers._pool.close()
    assert all(w.proc.poll() is not None for w in idle) and not workers._pool.idle


def test_no_worker_falls_back_to_one_process(
    small_pieces: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_worker(self: object) -> None:
        raise OSError("no interpreter")

    monkeypatch.setattr(workers._Worker, "__init__", no_worker)
    workers._pool.close()
    adapter = adapter_for("cognitive-memory")
    root = root_of("cognitive-memory")
    last = list(scan_files(adapter, root, parallel=True))[-1]
    assert last.result is not None and last.stats.parallel == 0
    assert_same(last.result, adapter.scan(root))


def test_a_worker_dying_midway_is_finished_here(
    small_pieces: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    workers._pool.close()
    real = workers._Worker.receive
    calls = {"n": 0}

    def flaky(self: workers._Worker) -> bytes:
        calls["n"] += 1
        if calls["n"] == 2:
            self.proc.kill()
            self.proc.wait()
        return real(self)

    monkeypatch.setattr(workers._Worker, "receive", flaky)
    adapter = adapter_for("observation-v1")
    root = root_of("observation-v1")
    last = list(scan_files(adapter, root, parallel=True))[-1]
    assert last.result is not None
    assert_same(last.result, adapter.scan(root))
    assert not workers._pool.busy  # the broken workers were let go


def test_default_uses_workers_only_for_large_parses(monkeypatch: pytest.MonkeyPatch) -> None:
    # `spare_cpu` and its readings live in `core.workers`; `_used_workers` in the cache.
    monkeypatch.setattr(workers, "_cpus", lambda: 2)
    monkeypatch.setattr(workers, "_load_average", lambda: 0.5)
    assert not scan_parallel.used_workers(scan_parallel.PARALLEL_MIN_FILES - 1, None)
    assert scan_parallel.used_workers(scan_parallel.PARALLEL_MIN_FILES, None)
    assert not scan_parallel.used_workers(10**6, False)
    monkeypatch.setattr(workers, "_load_average", lambda: 1.5)  # no CPU to spare
    monkeypatch.setattr(workers, "_running_now", lambda: 2)  # and another thread running
    assert not scan_parallel.used_workers(10**6, None)
    assert scan_parallel.used_workers(10**6, True)
    # A high average from work that has ended: only this thread runs now.
    monkeypatch.setattr(workers, "_running_now", lambda: 1)
    assert scan_parallel.used_workers(10**6, None)
    monkeypatch.setattr(workers, "_running_now", lambda: None)  # no /proc/loadavg
    assert not scan_parallel.used_workers(10**6, None)
    monkeypatch.setattr(workers, "_load_average", lambda: 0.5)
    monkeypatch.setenv(workers.PARALLEL_ENV, "0")
    assert not scan_parallel.used_workers(10**6, None)
    monkeypatch.setattr(workers, "_cpus", lambda: 1)
    assert not scan_parallel.used_workers(10**6, True)


@pytest.mark.parametrize("fmt", FORMATS)
def test_files_peeked_before_the_listing_then_workers_give_the_serial_result(
    fmt: str, small_pieces: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan_cache, "PEEK", 3)
    root = root_of(fmt)
    adapter = adapter_for(fmt)
    steps = list(scan_files(adapter, root, parallel=True, batch=2))
    last = steps[-1]
    assert steps[0].files_done == 3 and not steps[0].done
    assert last.result is not None and last.stats.parallel > 0
    assert_same(last.result, adapter.scan(root))
    shown = [id(m) for s in steps for m in s.memories]
    assert len(shown) == len(set(shown))
