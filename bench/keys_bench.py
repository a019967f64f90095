"""`python -m bench keys`: the relevance query per keystroke, in one process, no UI.

Why: the real-process benchmark times keystrokes in the app, where other
work (the first privacy scan, the list) shares the process; this times the
query alone on the index the app builds (`load_index`, then its relevance
index), typing each query one character at a time with ``as_you_type``.
Reuses a generated vault (`bench.generate`); no asserts, it reports.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from datetime import date
from pathlib import Path

from .generate import ensure_generated

QUERIES = (
    "redis connection timeouts after upgrade",
    "postgres disk usage high",
    "deploy window friday",
)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench keys", description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=100000, help="memories")
    ap.add_argument("--mix", default="cognitive-memory", help="formats of the memories")
    ap.add_argument("--dir", type=Path, default=None, help="where vaults are generated (kept)")
    ap.add_argument("--rank", default="relevance", choices=("relevance", "recall"))
    ap.add_argument(
        "--semantic",
        action="store_true",
        help="meaning vectors on (the `semantic` extra; the first run embeds every memory "
        "into the cache folder's vectors.sqlite: minutes at 100k)",
    )
    args = ap.parse_args(argv)
    if not args.semantic:
        os.environ.setdefault("MEMLENS_SEMANTIC", "0")
    base = args.dir or Path(tempfile.gettempdir()) / "memlens-bench"
    root = base / f"real-{args.mix}-{args.size}"
    ensure_generated(root, args.size, mix=args.mix)
    from memlens.core import open_catalog
    from memlens.core.search.index_cache import load_index

    t = time.perf_counter()
    catalog = open_catalog(root, cache=True)
    index, stats = load_index(catalog, date(2026, 11, 22), save=False)
    index.lexical()
    print(f"{args.size} memories: index {stats.status} in {time.perf_counter() - t:.1f} s")
    if args.semantic:
        t = time.perf_counter()
        embedded = index.enable_semantic()
        print(f"meaning vectors: {embedded} rows in {time.perf_counter() - t:.1f} s")
    for label in ("first pass", "second pass"):
        times: list[float] = []
        cpu: list[float] = []
        for text in QUERIES:
            for i in range(1, len(text) + 1):
                a, c = time.perf_counter(), time.process_time()
                index.run(text[:i], 50, as_you_type=True, rank=args.rank)
                times.append(time.perf_counter() - a)
                cpu.append(time.process_time() - c)
        print(
            f"{label}: {len(times)} keystrokes, {args.rank}: "
            f"p50 {_pct(times, 0.5) * 1000:.1f} ms, p95 {_pct(times, 0.95) * 1000:.1f} ms, "
            f"max {max(times) * 1000:.1f} ms (CPU p95 {_pct(cpu, 0.95) * 1000:.1f} ms)"
        )
    return 0
