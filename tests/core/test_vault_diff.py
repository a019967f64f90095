"""`memory_diff.diff_results` (what a rescan changed, by id and object identity).

It skips the identical ends of the two memory lists before matching ids;
random rescans-like edits must give exactly what matching every id gives.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from memlens.core.model import Memory, ScanResult
from memlens.core.scan.memory_diff import MemoryChanges, diff_results


def mem(mid: str) -> Memory:
    return Memory(
        format="project-ocean",
        vault_root=Path("/v"),
        id=mid,
        kind="observation",
        title=f"title {mid}",
        body=f"body {mid}",
        path=f"{mid}.md",
    )


def naive(old: ScanResult, new: ScanResult, everything: bool) -> MemoryChanges:
    before = {m.id: m for m in old.memories}
    out = MemoryChanges()
    for m in new.memories:
        prev = before.pop(m.id, None)
        if prev is None:
            out.added.append(m)
        elif everything or prev is not m:
            out.changed.append(m)
    out.removed = list(before.values())
    return out


def ids(ch: MemoryChanges) -> tuple[list[str], list[str], list[str]]:
    return (
        sorted(m.id for m in ch.added),
        sorted(m.id for m in ch.changed),
        sorted(m.id for m in ch.removed),
    )


@pytest.mark.parametrize("seed", range(6))
def test_diff_equals_matching_every_id(seed: int) -> None:
    rng = random.Random(seed)
    fresh = 0
    memories = [mem(f"m{i}") for i in range(rng.randint(0, 40))]
    for _ in range(200):
        new = list(memories)
        for _ in range(rng.randint(0, 4)):
            op = rng.random()
            if op < 0.3 or not new:
                fresh += 1
                new.insert(rng.randint(0, len(new)), mem(f"n{fresh}"))
            elif op < 0.55:
                del new[rng.randrange(len(new))]
            elif op < 0.8:
                i = rng.randrange(len(new))
                new[i] = replace(new[i], body="edited")  # same id, new object
            else:  # a memory moves (an id changes place: a rename or re-sort)
                new.insert(rng.randint(0, len(new) - 1), new.pop(rng.randrange(len(new))))
        old_r, new_r = ScanResult(memories=memories), ScanResult(memories=new)
        for everything in (False, True):
            assert ids(diff_results(old_r, new_r, everything=everything)) == ids(
                naive(old_r, new_r, everything)
            )
        memories = new


def test_identical_results_change_nothing() -> None:
    ms = [mem(f"m{i}") for i in range(5)]
    assert not diff_results(ScanResult(memories=ms), ScanResult(memories=list(ms)))
    assert ids(diff_results(ScanResult(memories=ms), ScanResult(memories=ms), everything=True)) == (
        [],
        sorted(m.id for m in ms),
        [],
    )
