"""Search benchmark: per-keystroke latency, build, incremental update, baselines.

    python -m bench search                      # 1k and 10k
    python -m bench search --sizes 1000,10000,100000

For each size it generates real vaults in all five formats (bench/generate.py,
reused between runs under --dir), scans them, and measures in one run:

- index build time (`SearchIndex.from_catalog`, scikit-learn import excluded);
- per-keystroke latency: realistic queries typed one character at a time,
  each prefix run as the app does (parse + filters + rank + first page of 20
  hits with their explanation); p50/p95 of each keystroke's best time over
  --repeat passes (this machine is shared, so single samples are noisy), and
  the p95 of the first pass as typed (cold caches included) in wall-clock
  and in CPU time;
- incremental update of one changed memory (`SearchIndex.update`), p50/p95;
- the re-read-and-refit baseline of the reference design: per query, re-read
  and parse every file, refit TF-IDF, score cosine x confidence x decay weight
  (measured at sizes <= --baseline-max, extrapolated linearly above, marked ~);
- ``rg -l -i`` over the folder, when ripgrep is installed (else skipped, noted).

Each measurement is one function so other benchmarks can reuse them.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Any

from memlens.core import Catalog, Memory, decay_of, open_catalog
from memlens.core.search.index import SearchIndex, index_text
from memlens.core.search.query import QueryError, confidence_value

from .generate import AS_OF, ensure_vaults

PAGE = 20


@dataclass
class SizeResult:
    size: int
    memories: int = 0
    scan_s: float = 0.0
    build_s: float = 0.0
    #: Per keystroke: the first pass as typed, and the best of --repeat passes.
    first_pass: list[float] = field(default_factory=list)
    first_pass_cpu: list[float] = field(default_factory=list)
    keystrokes: list[float] = field(default_factory=list)
    updates: list[float] = field(default_factory=list)
    baseline_s: float | None = None
    baseline_extrapolated: bool = False
    rg_s: float | None = None
    notes: list[str] = field(default_factory=list)


def pct(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by nearest rank."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def measure_scan(root: Path) -> tuple[Catalog, float]:
    t = time.perf_counter()
    catalog = open_catalog(root)
    return catalog, time.perf_counter() - t


def measure_build(catalog: Catalog, as_of: date) -> tuple[SearchIndex, float]:
    import sklearn.feature_extraction.text  # noqa: F401  (import cost is not build cost)

    t = time.perf_counter()
    index = SearchIndex.from_catalog(catalog, as_of)
    return index, time.perf_counter() - t


def make_queries(memories: list[Memory], rng: random.Random, n: int = 30) -> list[str]:
    """Queries a user would type: words from real titles, a typo, filters, a phrase."""
    titled = [m for m in memories if len(m.title.split()) >= 3]
    queries: list[str] = []
    for i in range(n):
        m = rng.choice(titled)
        words = [w.lower().strip(".,:;") for w in m.title.split()]
        pick = rng.sample(words, min(len(words), rng.randint(1, 3)))
        kind = i % 6
        if kind == 1 and len(pick[0]) > 4:  # a typo: swap two letters
            w = pick[0]
            j = rng.randrange(1, len(w) - 2)
            pick[0] = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
        if kind == 2 and m.tags:
            pick.append(f"tag:{m.tags[0].lower()}")
        if kind == 3:
            pick.append("-health:fading")
        if kind == 4 and len(words) >= 2:
            pick = [f'"{words[0]} {words[1]}"']
        if kind == 5:
            pick.append(f"format:{m.format}")
        queries.append(" ".join(pick))
    return queries


def measure_keystrokes(
    index: SearchIndex,
    queries: list[str],
    cpu: list[float] | None = None,
    key_pressed: Callable[[], None] | None = None,
) -> list[float]:
    """Wall seconds per keystroke: every prefix of every query, as typed.

    With `cpu`, the CPU seconds of each keystroke are appended to it too
    (unaffected by other processes sharing the machine).  `key_pressed` is
    called before each keystroke's query, untimed (the app probe: what the
    app's key handler does).
    """
    times: list[float] = []
    for q in queries:
        for i in range(1, len(q) + 1):
            if key_pressed is not None:
                key_pressed()
            c = time.process_time()
            t = time.perf_counter()
            # "tag:" before its value raises QueryError: the app shows the message
            with contextlib.suppress(QueryError):
                index.run(q[:i], PAGE, as_you_type=True)
            times.append(time.perf_counter() - t)
            if cpu is not None:
                cpu.append(time.process_time() - c)
    return times


def best_of(runs: list[list[float]]) -> list[float]:
    """Per keystroke, the fastest of several passes (filters out other processes' noise)."""
    return [min(ts) for ts in zip(*runs, strict=True)]


def measure_updates(
    index: SearchIndex, memories: list[Memory], rng: random.Random, n: int = 200
) -> list[float]:
    """Seconds to re-index one changed memory."""
    times: list[float] = []
    for m in rng.sample(memories, min(n, len(memories))):
        changed = replace(m, body=m.body + " edited zanzibar note")
        t = time.perf_counter()
        index.update(changed)
        times.append(time.perf_counter() - t)
    return times


def baseline_query(root: Path, query: str, as_of: date) -> list[tuple[float, str]]:
    """The reference design: re-read, re-parse, refit TF-IDF and rank, per query."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    catalog = open_catalog(root)
    memories = list(catalog.memories())
    vec = TfidfVectorizer(sublinear_tf=True)
    x = vec.fit_transform([index_text(m) for m in memories])
    q = vec.transform([query])
    cos = (x @ q.T).toarray().ravel()
    scored = []
    for m, c in zip(memories, cos, strict=True):
        if c <= 0:
            continue
        d = decay_of(m, as_of)
        if d.health.value in ("expired", "archived", "tombstoned"):
            continue
        scored.append((float(c) * confidence_value(m.confidence)[0] * d.weight, m.id))
    scored.sort(reverse=True)
    return scored[:PAGE]


def measure_baseline(root: Path, queries: list[str], as_of: date, runs: int = 2) -> float:
    """Median seconds per query of the baseline."""
    times = []
    for q in queries[:runs]:
        t = time.perf_counter()
        baseline_query(root, q, as_of)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def measure_rg(root: Path, queries: list[str], runs: int = 3) -> float | None:
    """Median seconds of ``rg -l -i WORD`` over the folder; None without ripgrep."""
    rg = shutil.which("rg")
    if rg is None:
        return None
    times = []
    for q in queries[:runs]:
        word = next((w for w in q.split() if ":" not in w and '"' not in w), q.split()[0])
        t = time.perf_counter()
        subprocess.run([rg, "-l", "-i", word, str(root)], capture_output=True, check=False)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def run_size(
    size: int,
    base: Path,
    baseline_max: int,
    last_baseline: tuple[int, float] | None,
    repeat: int = 3,
) -> SizeResult:
    res = SizeResult(size)
    root = ensure_vaults(base / f"vaults-{size}", size)
    rng = random.Random(size)
    catalog, res.scan_s = measure_scan(root)
    memories = list(catalog.memories())
    res.memories = len(memories)
    index, res.build_s = measure_build(catalog, AS_OF)
    queries = make_queries(memories, rng)
    index.run("warm up", PAGE)
    passes = [measure_keystrokes(index, queries, res.first_pass_cpu)]
    passes += [measure_keystrokes(index, queries) for _ in range(max(1, repeat) - 1)]
    res.first_pass = passes[0]
    res.keystrokes = best_of(passes)
    res.updates = measure_updates(index, memories, rng)
    if size <= baseline_max:
        res.baseline_s = measure_baseline(root, queries, AS_OF)
    elif last_baseline is not None:
        n0, t0 = last_baseline
        res.baseline_s = t0 * size / n0
        res.baseline_extrapolated = True
        res.notes.append(f"baseline at {size} extrapolated linearly from {n0}")
    res.rg_s = measure_rg(root, queries)
    if res.rg_s is None:
        res.notes.append("rg (ripgrep) not installed: rg comparison skipped")
    return res


def report(results: list[SizeResult]) -> str:
    head = (
        f"{'memories':>9} {'scan s':>7} {'build s':>8} {'key p50 ms':>10} {'key p95 ms':>10} "
        f"{'1st p95 ms':>10} {'cpu p95 ms':>10} {'upd p50 ms':>10} {'upd p95 ms':>10} "
        f"{'refit s/q':>10} "
        f"{'x refit':>8} {'rg s':>6} {'x rg':>6}"
    )
    lines = [head]
    for r in results:
        p50, p95 = pct(r.keystrokes, 0.5), pct(r.keystrokes, 0.95)
        base = (
            "-"
            if r.baseline_s is None
            else ("~" if r.baseline_extrapolated else "") + f"{r.baseline_s:.2f}"
        )
        ratio = "-" if r.baseline_s is None else f"{r.baseline_s / p95:.0f}"
        rg = "-" if r.rg_s is None else f"{r.rg_s:.3f}"
        rg_ratio = "-" if r.rg_s is None else f"{r.rg_s / p95:.0f}"
        lines.append(
            f"{r.memories:>9} {r.scan_s:>7.2f} {r.build_s:>8.2f} "
            f"{p50 * 1e3:>10.2f} {p95 * 1e3:>10.2f} "
            f"{pct(r.first_pass, 0.95) * 1e3:>10.2f} {pct(r.first_pass_cpu, 0.95) * 1e3:>10.2f} "
            f"{pct(r.updates, 0.5) * 1e3:>10.2f} "
            f"{pct(r.updates, 0.95) * 1e3:>10.2f} {base:>10} {ratio:>8} {rg:>6} {rg_ratio:>6}"
        )
    lines.append(
        f"keystrokes per size: {len(results[0].keystrokes) if results else 0}; key p50/p95 = "
        "per keystroke the best of the passes, 1st p95 = the first pass as typed, "
        "cpu p95 = its CPU time; "
        "x refit / x rg = baseline seconds per query / key p95"
    )
    for r in results:
        lines.extend(f"note: {n}" for n in r.notes)
    return "\n".join(lines)


def as_dict(r: SizeResult) -> dict[str, Any]:
    return {
        "memories": r.memories,
        "scan_s": r.scan_s,
        "build_s": r.build_s,
        "keystroke_p50_ms": pct(r.keystrokes, 0.5) * 1e3,
        "keystroke_p95_ms": pct(r.keystrokes, 0.95) * 1e3,
        "keystroke_first_pass_p95_ms": pct(r.first_pass, 0.95) * 1e3,
        "keystroke_first_pass_max_ms": max(r.first_pass) * 1e3,
        "keystroke_first_pass_cpu_p95_ms": pct(r.first_pass_cpu, 0.95) * 1e3,
        "update_p50_ms": pct(r.updates, 0.5) * 1e3,
        "update_p95_ms": pct(r.updates, 0.95) * 1e3,
        "baseline_s_per_query": r.baseline_s,
        "baseline_extrapolated": r.baseline_extrapolated,
        "rg_s": r.rg_s,
        "notes": r.notes,
    }


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench search")
    ap.add_argument("--sizes", default="1000,10000", help="comma-separated memory counts")
    ap.add_argument("--dir", type=Path, default=None, help="where vaults are generated (kept)")
    ap.add_argument(
        "--baseline-max", type=int, default=10000, help="largest size to run the refit baseline at"
    )
    ap.add_argument("--repeat", type=int, default=3, help="keystroke passes (best of)")
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    base = args.dir or Path(tempfile.gettempdir()) / "memlens-bench"
    base.mkdir(parents=True, exist_ok=True)
    results: list[SizeResult] = []
    last: tuple[int, float] | None = None
    for size in sizes:
        res = run_size(size, base, args.baseline_max, last, args.repeat)
        if res.baseline_s is not None and not res.baseline_extrapolated:
            last = (res.memories, res.baseline_s)
        results.append(res)
        if not args.json:
            print(report([res]).splitlines()[1], flush=True)
    if args.json:
        import json

        print(json.dumps([as_dict(r) for r in results], indent=2))
    else:
        print(report(results))
    return 0
