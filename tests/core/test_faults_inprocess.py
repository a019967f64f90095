"""Fault sweep: every action x every format, undo of each, and the runs, broken at every os call.

For each case a clean pass first counts the operation's fault points (the
mutating os calls below the vault, tests/core/faultlayer.py); then, for each
point k, on a fresh copy of the vault:

- "kill":    a simulated SIGKILL at k (every later mutating call fails too, so
  no cleanup runs), then recovery as a fresh open would run it;
- "oserror": an OSError at k (EIO at even k, ENOSPC at odd k: memlens handles
  both alike, by errno only in the message), then the same recovery.
  `MEMLENS_FAULTS_FULL=1` runs EIO and ENOSPC each at every point.

After each: the vault parses; it equals its before or its after state byte
for byte (files outside .memlens/); if the action completed, undo restores
every byte; an interrupted undo can be run again; no `.memlens-tmp-*` file
is left.  Runs with more than 60 fault points are sampled (every n-th point
plus the first and last 10); `MEMLENS_FAULTS_FULL=1` sweeps them all.

How to rerun: .venv/bin/python -m pytest tests/core/test_faults_inprocess.py -q -n 2
(counts per case: add `-s -p no:xdist`; totals: MEMLENS_FAULT_STATS=/tmp/f.jsonl).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import faultcases as fc
import faultlayer as fl
import pytest

from memlens.core.scan.vault import open_catalog
from memlens.core.write import writes
from memlens.core.write.journal import read_journal
from memlens.core.write.recovery import recover
from memlens.core.write.undo import undo_last

FULL = os.environ.get("MEMLENS_FAULTS_FULL") == "1"
MODES = ("eio", "enospc", "kill") if FULL else ("oserror", "kill")
CAP = 60


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, copy_function=shutil.copyfile)
    return dst


def _points(n: int) -> list[int]:
    if FULL or n <= CAP:
        return list(range(n))
    step = max(1, n // (CAP - 20))
    return sorted({*range(0, n, step), *range(10), *range(n - 10, n)})


def _fault(mode: str, k: int) -> str:
    if mode == "oserror":
        return "eio" if k % 2 == 0 else "enospc"
    return mode


@dataclass(frozen=True, slots=True)
class Expect:
    """What a fault run may end in."""

    before: dict[str, bytes]
    after: dict[str, bytes]
    #: Files the operation changes (set of relative paths).
    changed: frozenset[str]
    #: Whether two clean runs give the same bytes (experience records stamp
    #: new ids with the clock, so their after state is compared by files only).
    exact: bool
    journal: int


def _changed(a: dict[str, bytes], b: dict[str, bytes]) -> frozenset[str]:
    return frozenset(n for n in set(a) | set(b) if a.get(n) != b.get(n))


def _check_point(
    case: Any, template: Path, op_for: Any, want: Expect, mode: str, k: int, work: Path
) -> int:
    """Break the operation at point k on a fresh copy; assert the invariants; faults injected."""
    root = _copy(template, work / f"k{k}")
    layer = fl.FaultLayer(root, _fault(mode, k), k)
    with layer, contextlib.suppress(Exception, fl.SimulatedKill):
        op_for(root)()
    recover(root)  # what the next open of the vault does
    state = fl.tree(root)
    name = layer.names[k] if k < len(layer.names) else "?"
    where = f"{case.id} {mode} at point {k} (os.{name})"
    committed = len(read_journal(root)) > want.journal
    if not committed:
        assert state == want.before, (
            f"{where}: not committed, yet changed {sorted(_changed(state, want.before))}"
        )
    else:
        assert _changed(want.before, state) == want.changed, f"{where}: committed, wrong files"
        assert state == want.after or not want.exact, f"{where}: committed, wrong bytes"
        open_catalog(root)  # parses
    if committed and not case.undo:
        undo_last(root)
        assert fl.tree(root) == want.before, f"{where}: undo after a completed action lost bytes"
    elif not committed and case.undo:
        undo_last(root)  # an interrupted undo can simply be run again
        assert fl.tree(root) == want.after, f"{where}: the second undo did not finish"
    assert fl.temp_files(root) == [], where
    shutil.rmtree(root)
    return int(layer.injected)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", fc.all_cases(), ids=lambda c: c.id)
def test_fault_sweep(
    case: Any,
    mode: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    # Durability is not what this sweep measures (a simulated kill loses no
    # page cache): fsync stays a fault point but does not wait for the disk.
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    # Nor does it race agents: no need to watch an old copy for late appenders.
    monkeypatch.setattr(writes, "APPEND_GRACE_SECONDS", 0.0)
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        # Thousands of small copies: a memory file system keeps the sweep fast.
        work = Path(tempfile.mkdtemp(prefix="memlens-faults-", dir=shm))
        request.addfinalizer(lambda: shutil.rmtree(work, ignore_errors=True))
        tmp_path = work
    template = fc.fresh(tmp_path / "template", case.fmt)
    op_for = fc.prepare(case, template)
    if op_for is None:
        pytest.skip(f"the demo {case.fmt} vault offers nothing for {case.name}")
    before = fl.tree(template)
    open_catalog(template)
    clean = _copy(template, tmp_path / "clean")
    with fl.FaultLayer(clean) as layer:
        op_for(clean)()
    after = fl.tree(clean)
    open_catalog(clean)
    if after == before:
        pytest.skip(f"{case.id} changes nothing in the demo vault")
    again = _copy(template, tmp_path / "again")
    op_for(again)()
    # Some writes stamp the wall clock (experience-record ids, cognitive
    # `updated`): then a committed state is compared by files, not bytes.
    today = datetime.now(UTC).date().isoformat().encode()
    changed = _changed(before, after)
    stamped = any(after.get(n, b"").count(today) > before.get(n, b"").count(today) for n in changed)
    exact = not stamped and fl.tree(again) == after
    want = Expect(before, after, _changed(before, after), exact, len(read_journal(template)))
    points = _points(layer.count)
    injected = sum(_check_point(case, template, op_for, want, mode, k, tmp_path) for k in points)
    line = {
        "case": case.id,
        "mode": mode,
        "points": layer.count,
        "swept": len(points),
        "injected": injected,
        "survived": len(points),
        "bytes_lost": 0,
    }
    print(json.dumps(line))
    stats = os.environ.get("MEMLENS_FAULT_STATS")
    if stats:
        with open(stats, "a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")
    assert injected >= len(points)
