"""Live-reload benchmark: external write to visible change, p50/p95.

    python -m bench reload                        # 10k and 100k memories
    python -m bench reload --sizes 10000 --writes 50

For each size it generates real vaults in all five formats (bench/generate.py,
kept under --dir between runs), scans them, starts a `VaultWatcher` with its
default settings and then, one at a time, writes a memory the way an agent
does: an atomic replace (temp file + rename) of one memory file for the
file-per-memory formats and of observations.md for dream-cycle, an in-place
append of one line to experiences.jsonl for experience-records.

Latency is measured from just before the write starts to the moment the
watcher's `on_changes` callback receives the change for that memory (the
catalog is already updated then; the app posts a message from that callback).
Baseline in the same run: the time of a full scan of the vault written to,
i.e. what reloading without incremental rescans would cost per change.
Target: p95 <= 200 ms.  ``--with-search`` also counts the search index
update the app does for each change (`core.changes.apply_to_search`).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memlens.core import Catalog, open_catalog
from memlens.core.scan.changes import Change, ChangeKind
from memlens.core.scan.vault import Vault, scan_vault
from memlens.core.scan.watch import VaultWatcher

from .generate import FORMATS, ensure_vaults

TARGET_P95_MS = 200.0


def pct(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by nearest rank."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


@dataclass
class SizeResult:
    size: int
    memories: int = 0
    scan_s: float = 0.0
    ready_s: float = 0.0
    latencies: dict[str, list[float]] = field(default_factory=dict)
    full_scan_s: dict[str, float] = field(default_factory=dict)
    missed: int = 0

    def all(self) -> list[float]:
        return [x for v in self.latencies.values() for x in v]


class Waiter:
    """The watcher callback: records when the awaited change arrives."""

    def __init__(self, before: Callable[[list[Change]], object] | None = None) -> None:
        #: Work the app would do before the change is visible (search index).
        self.before = before
        self.lock = threading.Lock()
        self.match: Callable[[Change], bool] | None = None
        self.hit = threading.Event()
        self.at = 0.0

    def expect(self, match: Callable[[Change], bool]) -> None:
        with self.lock:
            self.match = match
            self.hit.clear()

    def __call__(self, changes: list[Change]) -> None:
        if self.before is not None:
            self.before(changes)
        now = time.perf_counter()
        with self.lock:
            if self.match is not None and any(self.match(c) for c in changes):
                self.at = now
                self.match = None
                self.hit.set()


_SECTION_BODY = re.compile(r"(<!-- dc:[^\n]*-->\n)([^\n]*)")


class Writer:
    """External writes, one per call, each returning how to recognise its change."""

    def __init__(self, catalog: Catalog, rng: random.Random) -> None:
        self.rng = rng
        self.n = 0
        self.vaults: dict[str, Vault] = {v.format: v for v in catalog.vaults}
        self.files: dict[str, list[Path]] = {}
        for fmt in ("observation-v1", "project-ocean", "cognitive-memory"):
            v = self.vaults[fmt]
            self.files[fmt] = sorted({v.root / m.path for m in v.memories})

    def write(self, fmt: str) -> tuple[Callable[[], None], Callable[[Change], bool]]:
        self.n += 1
        stamp = f"bench edit {self.n} {time.time_ns()}"
        v = self.vaults[fmt]
        if fmt == "experience-records":
            path = v.root / "experiences.jsonl"
            mid = f"exp_2026-11-21T10:00:00Z_bench{self.n:06d}_{os.getpid()}"
            rec = {
                "id": mid,
                "type": "occurrence",
                "created_at": "2026-11-21T10:00:00Z",
                "content": {"text": stamp},
                "provenance": {"sources": [], "actor": "agent", "method": "capture"},
                "confidence": {"p": 0.9},
                "parents": [],
                "tags": ["bench"],
            }
            line = (json.dumps(rec) + "\n").encode()

            def append() -> None:
                with open(path, "ab") as fh:
                    fh.write(line)

            return append, lambda c: c.kind is ChangeKind.ADDED and c.id == mid

        if fmt == "dream-cycle":
            path = v.root / "observations.md"
            text = path.read_text(encoding="utf-8")
            spots = list(_SECTION_BODY.finditer(text))
            hit = spots[self.rng.randrange(len(spots))]
            new = text[: hit.start(2)] + stamp + text[hit.end(2) :]
            data = new.encode("utf-8")
        else:
            path = self.rng.choice(self.files[fmt])
            text = path.read_text(encoding="utf-8")
            head, sep, body = text.rpartition("\n---\n")
            data = (head + sep + stamp + "\n" + body).encode("utf-8")
        rel = path.relative_to(v.root).as_posix()

        def replace_file() -> None:
            tmp = path.with_name(f".{path.name}.bench-tmp")
            tmp.write_bytes(data)
            os.replace(tmp, path)

        def match(c: Change) -> bool:
            return (
                c.kind is ChangeKind.CHANGED
                and c.path == rel
                and c.memory is not None
                and stamp in c.memory.body
            )

        return replace_file, match


def measure_full_scans(catalog: Catalog) -> dict[str, float]:
    out: dict[str, float] = {}
    for v in catalog.vaults:
        copy = Vault(root=v.root, format=v.format, rel=v.rel)
        t = time.perf_counter()
        scan_vault(copy)
        out[v.format] = time.perf_counter() - t
    return out


def run_size(
    size: int,
    base: Path,
    writes: int,
    seed: int,
    pause: float,
    with_search: bool = False,
    formats: tuple[str, ...] = FORMATS,
) -> SizeResult:
    res = SizeResult(size)
    root = ensure_vaults(base / f"reload-{size}", size)
    t = time.perf_counter()
    catalog = open_catalog(root)
    res.scan_s = time.perf_counter() - t
    res.memories = sum(len(v.memories) for v in catalog.vaults)
    res.full_scan_s = measure_full_scans(catalog)

    before: Callable[[list[Change]], object] | None = None
    if with_search:
        from memlens.core.scan.changes import apply_to_search
        from memlens.core.search.index import SearchIndex

        from .generate import AS_OF

        index = SearchIndex.from_catalog(catalog, AS_OF)

        def before(changes: list[Change]) -> object:
            return apply_to_search(index, changes)

    waiter = Waiter(before)
    watcher = VaultWatcher(catalog, waiter, paths=[root])
    t = time.perf_counter()
    watcher.start()
    try:
        if not watcher.wait_ready(120):
            raise RuntimeError("watcher did not start")
        res.ready_s = time.perf_counter() - t
        writer = Writer(catalog, random.Random(seed))
        for i in range(writes):
            fmt = formats[i % len(formats)]
            do_write, match = writer.write(fmt)
            waiter.expect(match)
            t0 = time.perf_counter()
            do_write()
            if waiter.hit.wait(30):
                res.latencies.setdefault(fmt, []).append(waiter.at - t0)
            else:
                res.missed += 1
            time.sleep(pause)  # one write at a time: no batching between them
    finally:
        watcher.stop()
    return res


def report(results: list[SizeResult]) -> str:
    lines = [
        f"{'memories':>9} {'format':<19} {'n':>3} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} "
        f"{'full scan ms':>12} {'x faster':>8}"
    ]
    for r in results:
        rows: list[tuple[str, list[float], float | None]] = [
            (fmt, r.latencies.get(fmt, []), r.full_scan_s.get(fmt)) for fmt in FORMATS
        ]
        rows.append(("all", r.all(), sum(r.full_scan_s.values()) / max(1, len(r.full_scan_s))))
        for fmt, values, full in rows:
            p50 = pct(values, 0.5)
            ratio = "-" if full is None or not values else f"{full / p50:.0f}"
            full_ms = "-" if full is None else f"{full * 1e3:.0f}"
            lines.append(
                f"{r.memories:>9} {fmt:<19} {len(values):>3} {p50 * 1e3:>8.1f} "
                f"{pct(values, 0.95) * 1e3:>8.1f} {max(values, default=float('nan')) * 1e3:>8.1f} "
                f"{full_ms:>12} {ratio:>8}"
            )
        verdict = "OK" if pct(r.all(), 0.95) * 1e3 <= TARGET_P95_MS and not r.missed else "MISSED"
        lines.append(
            f"{r.memories:>9} scan {r.scan_s:.1f}s, watcher ready {r.ready_s:.2f}s, "
            f"missed {r.missed}; p95 target {TARGET_P95_MS:.0f} ms: {verdict}"
        )
    lines.append(
        "latency = just before the external write -> on_changes callback with that change; "
        "full scan = re-reading the whole vault written to (the non-incremental baseline, "
        "'all' row: mean over formats); x faster = full scan / p50"
    )
    return "\n".join(lines)


def as_dict(r: SizeResult) -> dict[str, Any]:
    return {
        "memories": r.memories,
        "scan_s": r.scan_s,
        "ready_s": r.ready_s,
        "missed": r.missed,
        "p50_ms": pct(r.all(), 0.5) * 1e3,
        "p95_ms": pct(r.all(), 0.95) * 1e3,
        "per_format": {
            fmt: {
                "n": len(v),
                "p50_ms": pct(v, 0.5) * 1e3,
                "p95_ms": pct(v, 0.95) * 1e3,
                "full_scan_ms": r.full_scan_s.get(fmt, float("nan")) * 1e3,
            }
            for fmt, v in r.latencies.items()
        },
    }


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench reload")
    ap.add_argument("--sizes", default="10000,100000", help="comma-separated memory counts")
    ap.add_argument("--writes", type=int, default=50, help="external writes per size")
    ap.add_argument("--pause", type=float, default=0.1, help="seconds between writes")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dir", type=Path, default=None, help="where vaults are generated (kept)")
    ap.add_argument(
        "--with-search",
        action="store_true",
        help="also update a search index (core.changes.apply_to_search) before a change counts",
    )
    ap.add_argument(
        "--formats", default=",".join(FORMATS), help="comma-separated formats to write to"
    )
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = ap.parse_args(argv)
    formats = tuple(f for f in args.formats.split(",") if f)
    unknown = set(formats) - set(FORMATS)
    if unknown:
        ap.error(f"unknown format(s): {', '.join(sorted(unknown))}")
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    base = args.dir or Path(tempfile.gettempdir()) / "memlens-bench"
    base.mkdir(parents=True, exist_ok=True)
    results = []
    for size in sizes:
        res = run_size(size, base, args.writes, args.seed, args.pause, args.with_search, formats)
        results.append(res)
        if not args.json:
            print(report([res]), flush=True)
    if args.json:
        print(json.dumps([as_dict(r) for r in results], indent=2))
    elif len(results) > 1:
        print(report(results))
    return 0 if all(pct(r.all(), 0.95) * 1e3 <= TARGET_P95_MS for r in results) else 1
