"""Live reload under load: atomic saves by another process, 1,000 random operations.

The watcher must end with the catalog a full rescan would give, and must
never report a file that was replaced (temp + rename, delete + create) as
removed.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memlens.core.scan.changes import Change, ChangeKind, content_of, problem_key
from memlens.core.scan.vault import Catalog, open_catalog
from memlens.core.scan.watch import VaultWatcher

TIMEOUT = 30.0

OCEAN_DOC = (
    "---\ntags: [stress]\nconfidence: {conf}\ncreated: 2026-11-{day:02d}\ndecay: linear-30d\n"
    "source: courier\nbacklinks: []\n---\n{body}\n"
)
OBS_DOC = (
    "---\nspec: observation/v1\nid: {id}\ntimestamp: 2026-11-{day:02d}T10:00:00Z\n"
    'source: agent/stress\nevent: "{body}"\ncontext:\n  project: stress\n---\n\n'
    "# Observation: {body}\n\n{body}\n"
)
COG_DOC = (
    '---\nid: {id}\ntype: {kind}\ntitle: "{body}"\ntags: [stress]\nimportance: 0.5\n'
    "confidence: 0.8\ncreated: 2026-11-{day:02d}T10:00:00+00:00\n"
    "updated: 2026-11-{day:02d}T10:00:00+00:00\n---\n{body}\n"
)
COG_DIRS = {"solution": "solutions", "fix": "fixes", "decision": "decisions", "insight": "insights"}


class Recorder:
    def __init__(self) -> None:
        self.changes: list[Change] = []
        self.errors: list[BaseException] = []
        self.cond = threading.Condition()

    def __call__(self, changes: list[Change]) -> None:
        with self.cond:
            self.changes.extend(changes)
            self.cond.notify_all()

    def on_error(self, exc: BaseException) -> None:
        self.errors.append(exc)


@contextmanager
def watching(path: Path, **kw: Any) -> Iterator[tuple[Catalog, VaultWatcher, Recorder]]:
    catalog = open_catalog(path)
    rec = Recorder()
    kw.setdefault("rescan_interval", None)  # the events alone must suffice
    w = VaultWatcher(catalog, rec, paths=[path], on_error=rec.on_error, **kw)
    w.start()
    try:
        assert w.wait_ready(TIMEOUT)
        yield catalog, w, rec
    finally:
        w.stop()
    assert not rec.errors, rec.errors


def wait_until(pred: Callable[[], bool], timeout: float = TIMEOUT) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


def state_of(catalog: Catalog) -> tuple[set[tuple[Any, ...]], set[tuple[Any, ...]]]:
    mems = {
        (str(v.root), m.id, m.path, hash(repr(content_of(m))))
        for v in catalog.vaults
        for m in v.memories
    }
    probs = {
        (str(v.root), problem_key(p), getattr(p, "detail", None))
        for v in catalog.vaults
        for p in [*v.problems, *v.ref_problems]
    }
    return mems, probs


def body_of(catalog: Catalog, mid: str) -> str | None:
    hits = [m.body for v in catalog.vaults for m in v.memories if m.id == mid]
    return hits[0] if hits else None


WRITER = r"""
import os, random, sys, time
from pathlib import Path

target, mode, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
template = sys.argv[4]
rng = random.Random(7)
for i in range(count):
    data = template.replace("BODY", f"revision {i}").encode()
    if mode == "replace":
        # The temp names editors and tools use: none of them is a memory.
        tmp = target.with_name(
            [f".{target.name}.{i}.tmp", f"{target.name}.tmp", f"{target.name}.{os.getpid()}.part",
             f".{target.name}.swp"][i % 4]
        )
        tmp.write_bytes(data)
        os.replace(tmp, target)
    else:
        target.unlink()
        time.sleep(rng.uniform(0, 0.02))
        target.write_bytes(data)
    if rng.random() < 0.3:
        time.sleep(rng.uniform(0, 0.01))
print("done", flush=True)
"""


def run_writer(target: Path, mode: str, count: int) -> None:
    template = OCEAN_DOC.format(conf=0.7, day=20, body="BODY")
    proc = subprocess.run(
        [sys.executable, "-c", WRITER, str(target), mode, str(count), template],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "done"


def test_100_atomic_replaces_by_another_process(own_fixtures_copy: Path) -> None:
    target = own_fixtures_copy / "project-ocean/agents/courier/memory/vault/obs-2026-11-09-001.md"
    mid = "courier/obs-2026-11-09-001"
    with watching(own_fixtures_copy) as (catalog, _w, rec):
        run_writer(target, "replace", 100)
        assert wait_until(lambda: (body_of(catalog, mid) or "").strip() == "revision 99"), body_of(
            catalog, mid
        )
        assert wait_until(
            lambda: any(
                c.id == mid and "99" in (c.memory.body if c.memory else "") for c in rec.changes
            )
        )
        mine = [c for c in rec.changes if c.id == mid or c.path.endswith(target.name)]
        assert mine and all(c.kind is ChangeKind.CHANGED for c in mine), mine
        assert not [c for c in rec.changes if c.kind is ChangeKind.REMOVED]
        # Temp files never surfaced as memories or problems.
        assert all(c.path == mine[0].path for c in rec.changes), rec.changes


def test_100_deletes_and_recreates_by_another_process(own_fixtures_copy: Path) -> None:
    target = own_fixtures_copy / "project-ocean/agents/courier/memory/vault/obs-2026-11-09-001.md"
    mid = "courier/obs-2026-11-09-001"
    with watching(own_fixtures_copy, grace=2.0) as (catalog, _w, rec):
        run_writer(target, "recreate", 100)
        assert wait_until(lambda: (body_of(catalog, mid) or "").strip() == "revision 99"), body_of(
            catalog, mid
        )
        kinds = {c.kind for c in rec.changes if c.id == mid}
        assert kinds == {ChangeKind.CHANGED}, kinds


class RandomOps:
    """Random external creates, renames, deletes and edits over five vaults."""

    def __init__(self, root: Path, seed: int) -> None:
        self.root = root
        self.rng = random.Random(seed)
        self.n = 0
        self.folders = [
            root / "project-ocean/agents/courier/memory/vault",
            root / "project-ocean/agents/courier/memory/archive",
            root / "project-ocean/agents/scribe/memory/vault",
            root / "project-ocean/shared/observations",
            root / "observation-v1/observations",
            *(root / "cognitive-memory/graph" / d for d in COG_DIRS.values()),
            root / "cognitive-memory/vault",
        ]
        for f in self.folders:
            f.mkdir(parents=True, exist_ok=True)

    def files(self) -> list[Path]:
        return sorted(p for f in self.folders for p in f.glob("*.md"))

    def doc_for(self, folder: Path) -> str:
        self.n += 1
        body = f"stress {self.n} {self.rng.randrange(10**6)}"
        day = self.rng.randint(1, 21)
        if self.rng.random() < 0.08:
            return "---\nbroken: [\n---\n" + body  # invalid on purpose
        if "observation-v1" in folder.parts:
            return OBS_DOC.format(id=f"obs-stress-{self.n}", day=day, body=body)
        if "cognitive-memory" in folder.parts:
            kind = next((k for k, d in COG_DIRS.items() if d == folder.name), "insight")
            return COG_DOC.format(
                id=uuid.UUID(int=self.rng.getrandbits(128)), kind=kind, day=day, body=body
            )
        return OCEAN_DOC.format(conf=round(self.rng.uniform(0.3, 1), 2), day=day, body=body)

    def name_for(self, folder: Path) -> str:
        self.n += 1
        if "project-ocean" in folder.parts:
            return f"obs-2026-11-{self.rng.randint(1, 28):02d}-{self.n:03d}.md"
        return f"stress-{self.n}.md"

    def sibling_folder(self, path: Path) -> Path:
        same = [
            f
            for f in self.folders
            if f.parts[: len(self.root.parts) + 1] == path.parts[: len(self.root.parts) + 1]
        ]
        return self.rng.choice(same)

    def step(self) -> str:
        rng = self.rng
        files = self.files()
        op = rng.choices(
            ["create", "rename", "delete", "edit", "dream", "jsonl"],
            weights=[34, 22, 18, 20, 3, 3],
        )[0]
        if op in ("rename", "delete", "edit") and len(files) < 10:
            op = "create"
        if op == "create":
            folder = rng.choice(self.folders)
            (folder / self.name_for(folder)).write_text(self.doc_for(folder))
        elif op == "rename":
            src = rng.choice(files)
            folder = self.sibling_folder(src)
            name = (
                src.name if rng.random() < 0.5 and folder != src.parent else self.name_for(folder)
            )
            dst = folder / name
            if not dst.exists():
                os.rename(src, dst)
        elif op == "delete":
            rng.choice(files).unlink()
        elif op == "edit":
            f = rng.choice(files)
            data = self.doc_for(f.parent).encode()
            if rng.random() < 0.5:
                tmp = f.with_name(f".{f.name}.tmp")
                tmp.write_bytes(data)
                os.replace(tmp, f)
            else:
                f.write_bytes(data)
        elif op == "dream":
            obs = self.root / "dream-cycle/observations.md"
            self.n += 1
            section = (
                f"\n## Stress section {self.n}\n<!-- dc:type=fact dc:importance=5.0 dc:ttl=90 "
                f"dc:confidence=0.9 dc:source=explicit dc:date=2026-11-{rng.randint(1, 21):02d} -->"
                f"\nBody {self.n}.\n"
            )
            data = obs.read_bytes() + section.encode()
            tmp = obs.with_name(".observations.md.swp")
            tmp.write_bytes(data)
            os.replace(tmp, obs)
        else:
            self.n += 1
            rec = {
                "id": f"exp_2026-11-21T10:00:00Z_s{self.n}",
                "type": "occurrence",
                "created_at": "2026-11-21T10:00:00Z",
                "content": {"text": f"stress {self.n}"},
                "provenance": {"sources": [], "actor": "agent", "method": "capture"},
                "confidence": {"p": 0.9},
                "parents": [],
                "tags": ["stress"],
            }
            exp = self.root / "experience-records/experiences.jsonl"
            with exp.open("ab") as fh:
                fh.write(b"\n" + json.dumps(rec).encode() + b"\n")
        return op


def test_1000_random_external_operations_end_equal_to_a_full_rescan(
    own_fixtures_copy: Path,
) -> None:
    ops = RandomOps(own_fixtures_copy, seed=20261122)
    with watching(own_fixtures_copy) as (catalog, w, rec):
        done: dict[str, int] = {}
        for i in range(1000):
            op = ops.step()
            done[op] = done.get(op, 0) + 1
            if i % 97 == 0:
                time.sleep(0.03)  # let some batches close mid-run
        assert done["create"] > 200 and done["rename"] > 100 and done["delete"] > 100

        def settled() -> bool:
            fresh = state_of(open_catalog(own_fixtures_copy))
            with w.lock:
                return state_of(catalog) == fresh

        assert wait_until(settled), "the watched catalog never matched a full rescan"
        kinds = {c.kind for c in rec.changes}
        assert {ChangeKind.ADDED, ChangeKind.REMOVED, ChangeKind.CHANGED} <= kinds
