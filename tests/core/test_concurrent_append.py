"""An agent appends to its memory while memlens acts on the same vault: no byte lost.

A writer process appends Dream Cycle sections to `observations.md` and JSON
lines to `experiences.jsonl` and `wal.jsonl` at random moments, a fixed
number of times, while memlens applies 200 actions (pin, unpin, archive,
restore) through the public Action API.  Afterwards every appended chunk is
in its file exactly once, every action either succeeded or was refused with
ConflictError, and every memory of the vault is still there exactly once.
Nothing here measures time; the writer's sleeps only spread its appends.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from memlens.core import open_catalog
from memlens.core.actions import Action
from memlens.core.demo import copy_demo
from memlens.core.errors import ConflictError
from memlens.core.model import Memory
from memlens.core.safe_io import TEMP_PREFIX, clean_stray_temps

APPENDS = 120
ACTIONS = 200

#: The writer: appends chunk n to one of the three files, with one write each.
WRITER = r"""
import json, random, sys, time
obs, exp, wal = sys.argv[1:4]
count, seed = int(sys.argv[4]), int(sys.argv[5])
rng = random.Random(seed)
for n in range(count):
    target = rng.choice([obs, exp, wal])
    if target == obs:
        chunk = (f"\n## Writer note {n}\n<!-- dc:type=fact dc:importance=5 dc:ttl=30 "
                 f"dc:date=2026-11-01 -->\nappended by the agent, note {n}\n")
    elif target == exp:
        chunk = json.dumps({"id": f"exp_writer_{n}", "type": "occurrence",
            "created_at": "2026-11-20T10:00:00Z", "content": {"text": f"agent line {n}"},
            "provenance": {"sources": [], "actor": "agent", "method": "capture"},
            "parents": []}) + "\n"
    else:
        chunk = json.dumps({"wal_id": f"wal_writer_{n}", "ops": [{"ts": "2026-11-20T10:00:00Z",
            "op": "append", "target": "exp", "id": f"exp_writer_{n}"}]}) + "\n"
    with open(target, "ab") as fh:
        fh.write(chunk.encode())
    time.sleep(rng.uniform(0, 0.03))
"""


def _expected_chunks(n: int) -> dict[str, list[bytes]]:
    """What the writer appended, per file, each as it must appear (once) afterwards."""
    rng = random.Random(n)
    out: dict[str, list[bytes]] = {"obs": [], "exp": [], "wal": []}
    for i in range(APPENDS):
        target = rng.choice(["obs", "exp", "wal"])
        rng.uniform(0, 0.03)
        if target == "obs":
            # Without the leading blank line: a restored section may sit before it.
            out[target].append(f"## Writer note {i}\n".encode())
            out[target].append(f"appended by the agent, note {i}\n".encode())
        else:
            key = "exp_writer" if target == "exp" else "wal_writer"
            out[target].append(f'"{key}_{i}"'.encode())
    return out


def _next_action(memory: Memory, rng: random.Random) -> str:
    if memory.archived:
        return "restore"
    if memory.pinned:
        return rng.choice(["unpin", "archive"])
    return rng.choice(["pin", "archive"])


def _key(memory: Memory) -> str:
    """Stable across archive and restore: a restored Dream Cycle entry gets a title id."""
    return f"dc:{memory.title}" if memory.format == "dream-cycle" else memory.id


def _by_key(vaults: list[Path]) -> dict[str, Memory]:
    catalog = open_catalog(*vaults)
    return {_key(m): m for m in catalog.memories() if not m.tombstoned}


def test_appends_survive_200_actions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Durability is not what is tested here, and on a busy shared disk each
    # fsync can take long enough to stretch the run far past its purpose.
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    demo = copy_demo(tmp_path)
    dream, records = demo / "dream-cycle", demo / "experience-records"
    obs, exp, wal = dream / "observations.md", records / "experiences.jsonl", records / "wal.jsonl"
    originals = _by_key([dream, records])
    seed = 20261125
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(obs), str(exp), str(wal), str(APPENDS), str(seed)]
    )
    rng = random.Random(7)
    outcomes: Counter[str] = Counter()
    try:
        for _ in range(ACTIONS):
            current = _by_key([dream, records])
            memory = current[rng.choice(sorted(originals))]
            name = _next_action(memory, rng)
            try:
                Action(name, memory, {}).apply()
                outcomes["done"] += 1
            except ConflictError:
                outcomes["conflict"] += 1
    finally:
        writer.wait(timeout=120)  # a guard against a hang, not a measure
    assert writer.returncode == 0
    print(f"actions: {dict(outcomes)}")
    assert outcomes["done"] + outcomes["conflict"] == ACTIONS and outcomes["done"] > 0

    files = {"obs": obs.read_bytes(), "exp": exp.read_bytes(), "wal": wal.read_bytes()}
    for key, chunks in _expected_chunks(seed).items():
        for chunk in chunks:
            assert files[key].count(chunk) == 1, (key, chunk, outcomes)
    after = _by_key([dream, records])
    # Every memory that was there is there once (active or archived), and nothing doubled.
    assert set(originals) <= set(after)
    ids = [_key(m) for m in open_catalog(dream, records).memories()]
    assert [i for i, n in Counter(ids).items() if n > 1] == []


def test_stray_temps_are_invisible_to_scans_and_cleaned(tmp_path: Path) -> None:
    """A crash's `.memlens-tmp-*` copies never show up as memories, and cleaning removes them."""
    demo = copy_demo(tmp_path)
    before = sorted((m.format, m.id, m.path) for m in open_catalog(demo).memories())
    stray: list[Path] = []
    for memory_file in sorted(p for p in demo.rglob("*") if p.suffix in (".md", ".jsonl")):
        temp = memory_file.with_name(f"{TEMP_PREFIX}0123ab-{memory_file.name}")
        temp.write_bytes(memory_file.read_bytes())
        stray.append(temp)
    catalog = open_catalog(demo)
    assert sorted((m.format, m.id, m.path) for m in catalog.memories()) == before
    assert not any(TEMP_PREFIX in str(p.path) for p in catalog.problems())
    assert clean_stray_temps(demo) == sorted(stray)
