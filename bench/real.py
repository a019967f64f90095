"""What users see on realistic vaults: the app and the CLI as real processes.

    python -m bench                                   # 1k and 10k, five formats
    python -m bench --sizes 100000 --mix cognitive-memory

For each size: generate (or reuse) realistic vaults (bench/generate.py),
measure the baselines, then time real processes (bench/procs.py):

- the app (bench/app_probe.py, headless, a fresh process per start, imports
  counted): cold (empty cache folder) and warm (the cache the previous start
  wrote): first rows, all rows listed, searchable (search opened as soon as
  everything is listed, its index built), per-keystroke query time on that
  index, peak RSS;
- the cache folder: its size after a cold start; then one memory file
  changed and the app started again: how long writing the cache took after
  the listing, and how much of the folder was rewritten;
- the installed CLI, ``.venv/bin/memlens``: ``--version``, ``search PATH
  QUERY --json``, ``list PATH --json``, ``show PATH ID --json``, cold (a new
  empty cache folder per run) and warm (a folder filled by a previous run);
  the vault was just read, so the page cache is warm in both.

Every time is the median of --runs runs, divided by the baselines measured in
the same run, and set against the targets of issue 17 (met / missed).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from . import procs
from .generate import AS_OF, MIXES, Generated, ensure_generated
from .procs import Runs
from .search_bench import measure_baseline, measure_rg, pct

#: What a user would type into `memlens search` (words the generator uses).
CLI_QUERIES = ("redis timeouts", "connection pool", "certificate expiry", "pgbouncer")


@dataclass
class Baselines:
    read_s: float = 0.0
    walk_s: float = 0.0
    rg_s: float | None = None
    refit_s: float | None = None
    refit_note: str = ""


@dataclass
class SizeRun:
    """Everything measured at one size."""

    info: Generated
    load: float
    base: Baselines = field(default_factory=Baselines)
    app_cold: list[dict[str, Any]] = field(default_factory=list)
    app_warm: list[dict[str, Any]] = field(default_factory=list)
    cache_bytes: int = 0
    changed: dict[str, Any] = field(default_factory=dict)
    cli: dict[str, tuple[Runs, Runs]] = field(default_factory=dict)


# --------------------------------------------------------------------------- baselines


def read_every_byte(root: Path) -> float:
    """Seconds to read every file once (second pass: from the page cache)."""
    best = float("inf")
    for _ in range(2):
        t = time.perf_counter()
        for folder, _dirs, files in os.walk(root):
            for name in files:
                with open(os.path.join(folder, name), "rb") as fh:
                    fh.read()
        best = min(best, time.perf_counter() - t)
    return best


def stat_walk(root: Path) -> float:
    """Seconds of a bare recursive `os.scandir` with a stat of every entry (best of 2)."""

    def walk(path: str) -> None:
        with os.scandir(path) as entries:
            for entry in entries:
                entry.stat(follow_symlinks=False)
                if entry.is_dir(follow_symlinks=False):
                    walk(entry.path)

    best = float("inf")
    for _ in range(2):
        t = time.perf_counter()
        walk(str(root))
        best = min(best, time.perf_counter() - t)
    return best


def measure_baselines(root: Path, size: int, refit_max: int) -> Baselines:
    b = Baselines(read_s=read_every_byte(root), walk_s=stat_walk(root))
    b.rg_s = measure_rg(root, list(CLI_QUERIES))
    if size <= refit_max:
        b.refit_s = measure_baseline(root, list(CLI_QUERIES), AS_OF, runs=2 if size <= 10000 else 1)
    else:
        b.refit_note = f"re-read-and-refit not run above --refit-max {refit_max}"
    return b


# --------------------------------------------------------------------------- the measurements


def measure_app(run: SizeRun, root: Path, runs: int) -> None:
    """Cold and warm app starts, the cache folder's size, one changed file."""
    caches = []
    try:
        for i in range(runs):
            cache = procs.fresh_cache()
            caches.append(cache)
            run.app_cold.append(procs.run_app(root, cache, search=True))
            if i == 0:
                run.cache_bytes = procs.rewritten({}, procs.snapshot(cache))[2]
        cache = caches[0]
        for _ in range(runs):
            run.app_warm.append(procs.run_app(root, cache, search=True))
        before = procs.snapshot(cache)
        before_blocks = procs.block_digests(cache)
        path, undo = procs.touch_one(root)
        try:
            start = procs.run_app(root, cache, search=False)
        finally:
            undo()
        files, changed_bytes, total = procs.rewritten(before, procs.snapshot(cache))
        blocks = procs.changed_blocks(before_blocks, procs.block_digests(cache))
        run.changed = {
            "persist_s": start["persist_s"],
            "rows_kept_s": start.get("rows_kept_s"),
            "listed_s": start["listed"],
            "path": path.relative_to(root).as_posix(),
            "files": files,
            "of_files": len(before),
            "bytes": changed_bytes,
            "block_bytes": blocks,
            "total": total,
        }
    finally:
        for cache in caches:
            shutil.rmtree(cache, ignore_errors=True)


def measure_cli(run: SizeRun, root: Path, runs: int) -> None:
    show_id = next(iter(run.info.sample_ids.values()), "")
    commands = {
        "memlens --version": ["--version"],
        "memlens search PATH QUERY --json": ["search", str(root), CLI_QUERIES[0], "--json"],
        "memlens list PATH --json": ["list", str(root), "--json"],
        "memlens show PATH ID --json": ["show", str(root), show_id, "--json"],
    }
    for label, args in commands.items():
        run.cli[label] = procs.time_cli(args, runs)


def run_size(
    size: int, mix: str, base: Path, runs: int, refit_max: int, log: TextIO = sys.stdout
) -> SizeRun:
    root = base / f"real-{mix}-{size}"
    t = time.perf_counter()
    info = ensure_generated(root, size, mix=mix)
    print(
        f"vaults: {info.describe()} ({time.perf_counter() - t:.0f} s to generate or reuse)",
        file=log,
        flush=True,
    )
    run = SizeRun(info, os.getloadavg()[0])
    run.base = measure_baselines(root, size, refit_max)
    measure_app(run, root, runs)
    measure_cli(run, root, runs)
    return run


# --------------------------------------------------------------------------- report


def _fmt(s: float | None) -> str:
    if s is None:
        return "-"
    return f"{s * 1000:.1f} ms" if s < 1 else f"{s:.2f} s"


def _ratio(value: float | None, base: float | None) -> str:
    if value is None or base is None or base <= 0:
        return "-"
    r = value / base
    return f"{r:.2f}x" if r < 10 else f"{r:.0f}x"


def _median(rows: list[dict[str, Any]], key: str) -> tuple[float | None, str]:
    values = [r[key] for r in rows if r.get(key) is not None]
    if not values:
        return None, ""
    spread = f"{min(values):.2f}-{max(values):.2f}" if len(values) > 1 else ""
    return statistics.median(values), spread


def _verdict(value: float | None, limit: float | None) -> str:
    if limit is None:
        return ""
    if value is None:
        return "not measured"
    return "met" if value <= limit else "MISSED"


#: "Without rewriting the store": at most this share of the cache folder's bytes rewritten.
REWRITE_SHARE_MAX = 0.05


def _rewrote_store(changed: dict[str, Any]) -> bool:
    """Whether one changed file made the app rewrite more than a sliver of its cache.

    Judged by the 4 KB blocks that changed (`procs.changed_blocks`): a SQLite
    store updated in place changes its file's mtime but only a few pages,
    which is not rewriting it; a file written anew changes every block.
    """
    written = changed.get("block_bytes", changed.get("bytes", 0)) if changed else 0
    return bool(changed) and written > REWRITE_SHARE_MAX * max(1, changed["total"])


def _search_target(size: int) -> tuple[float, str]:
    """The issue gives 0.15 s at 10k and 0.5 s at 100k; smaller sizes get the 10k one."""
    return (0.15, "<= 0.15 s (10k)") if size <= 10000 else (0.5, "<= 0.5 s (100k)")


def _table(run: SizeRun) -> list[str]:
    b = run.base
    lines = [
        f"{'measure':<40} {'median':>9} {'min-max s':>11} {'x read':>7} {'x walk':>7} "
        f"{'x rg':>6} {'x refit':>7}  {'target':<17} verdict"
    ]

    def row(name: str, value: float | None, spread: str, target: str, limit: float | None) -> None:
        lines.append(
            f"{name:<40} {_fmt(value):>9} {spread:>11} {_ratio(value, b.read_s):>7} "
            f"{_ratio(value, b.walk_s):>7} {_ratio(value, b.rg_s):>6} "
            f"{_ratio(value, b.refit_s):>7}  {target:<17} {_verdict(value, limit)}"
        )

    app = (
        ("app cold: imports done", run.app_cold, "imported", "", None),
        ("app cold: first rows", run.app_cold, "first_rows", "<= 1 s", 1.0),
        ("app cold: all rows listed", run.app_cold, "listed", "<= 10 s", 10.0),
        ("app cold: full text ready (searchable)", run.app_cold, "searchable", "<= 15 s", 15.0),
        ("app warm: first rows", run.app_warm, "first_rows", "", None),
        ("app warm: every row shown (kept rows)", run.app_warm, "all_shown", "", None),
        ("app warm: all rows listed", run.app_warm, "listed", "<= 1.5 s", 1.5),
        ("app warm: searchable", run.app_warm, "searchable", "<= 1.5 s", 1.5),
        ("app warm: index built after search opened", run.app_warm, "index_s", "", None),
    )
    for name, rows, key, target, limit in app:
        row(name, *_median(rows, key), target, limit)
    keys = [k for r in run.app_warm for k in r.get("keystrokes_s", [])]
    row("app search per keystroke p50", pct(keys, 0.5) if keys else None, "", "", None)
    row("app search per keystroke p95", pct(keys, 0.95) if keys else None, "", "<= 16 ms", 0.016)
    persist = run.changed.get("persist_s")
    row("one changed file: store written", persist, "", "<=50ms,no rewrite", 0.05)
    if _rewrote_store(run.changed) and lines[-1].endswith("met"):
        lines[-1] = lines[-1][: -len("met")] + "MISSED (store rewritten)"
    row("one changed file: kept rows patched", run.changed.get("rows_kept_s"), "", "", None)
    search_limit, search_target = _search_target(run.info.total)
    cli_targets = {
        "memlens --version": ("<= 0.15 s", 0.15),
        "memlens search PATH QUERY --json": (search_target, search_limit),
    }
    for label, (cold, warm) in run.cli.items():
        target, limit = cli_targets.get(label, ("", None))
        short = label.replace(" PATH", "").replace(" QUERY", " Q").replace(" ID", " ID")
        row(f"{short} (cold)", cold.median, cold.spread(), "", None)
        row(f"{short} (warm)", warm.median, warm.spread(), target, limit)
    return lines


def _store_lines(run: SizeRun) -> list[str]:
    content = run.info.content_bytes
    ratio = run.cache_bytes / max(1, content)
    c = run.changed
    rss = [r["rss_mb"] for r in run.app_cold + run.app_warm]
    cli_rss = [mb for cold, warm in run.cli.values() for mb in cold.rss_mb + warm.rss_mb]
    peak = max(rss + cli_rss, default=0.0)
    lines = [
        f"persisted store: cache folder after a cold start {run.cache_bytes / 1e6:.1f} MB = "
        f"{ratio:.2f}x the {content / 1e6:.1f} MB of content (target <= 0.5x): "
        f"{'met' if ratio <= 0.5 else 'MISSED'}",
    ]
    if c:
        lines.append(
            f"one changed file ({c['path']}), app started again: listed in "
            f"{_fmt(c['listed_s'])}, store written {_fmt(c['persist_s'])} and kept rows "
            f"patched {_fmt(c.get('rows_kept_s'))} after; "
            f"{c['files']} of {c['of_files']} cache files "
            f"rewritten or touched, {c['bytes'] / 1e6:.1f} of {c['total'] / 1e6:.1f} MB; "
            f"blocks changed {c.get('block_bytes', 0) / 1e6:.2f} MB "
            f"({c.get('block_bytes', 0) / max(1, c['total']):.1%}; target: at most "
            f"{REWRITE_SHARE_MAX:.0%} rewritten: "
            f"{'MISSED' if _rewrote_store(c) else 'met'})"
        )
    cli_cache = {label: warm.cache_bytes for label, (_cold, warm) in run.cli.items()}
    if cli_cache and not any(cli_cache.values()):
        lines.append(
            "CLI cache: no command wrote anything to its cache folder, so a warm CLI run "
            "differs from a cold one only by the OS caches"
        )
    elif cli_cache:
        lines.append(
            "CLI cache folder after one run: "
            + ", ".join(f"{k.split()[1]} {v / 1e6:.1f} MB" for k, v in cli_cache.items())
        )
    lines.append(
        f"peak RSS: app cold {max((r['rss_mb'] for r in run.app_cold), default=0):.0f} MB, "
        f"app warm {max((r['rss_mb'] for r in run.app_warm), default=0):.0f} MB, "
        f"CLI {max(cli_rss, default=0):.0f} MB (target <= 600 MB): "
        f"{'met' if peak <= 600 else 'MISSED'}"
    )
    return lines


def report(run: SizeRun) -> str:
    b = run.base
    words = "/".join(q.split()[0] for q in CLI_QUERIES[:3])
    rg = (
        f"rg -l -i WORD {_fmt(b.rg_s)} (median, WORD = {words})"
        if b.rg_s is not None
        else "rg skipped (not installed)"
    )
    refit = f"re-read-and-refit search {_fmt(b.refit_s)}/query" if b.refit_s else b.refit_note
    rows = {r["rows"] for r in run.app_cold + run.app_warm}
    lines = [
        f"== {run.info.total:,} memories, mix {run.info.mix} (load average {run.load:.1f}) ==",
        f"baselines (page cache warm): read every byte {_fmt(b.read_s)}, "
        f"stat walk {_fmt(b.walk_s)}, {rg}, {refit}",
        *_table(run),
        *_store_lines(run),
        f"rows listed by the app: {', '.join(str(n) for n in sorted(rows))}; "
        f"CLI search query {CLI_QUERIES[0]!r}; "
        "warm CLI = cache folder filled by a previous run of the same command",
    ]
    if rows != {run.info.total}:
        lines.append(f"WARNING: the generator wrote {run.info.total:,} memories; see rows listed")
    return "\n".join(lines)


def as_json(run: SizeRun) -> dict[str, Any]:
    return {
        "generated": run.info.__dict__,
        "load_average": run.load,
        "baselines": run.base.__dict__,
        "app_cold": run.app_cold,
        "app_warm": run.app_warm,
        "cache_bytes": run.cache_bytes,
        "one_changed_file": run.changed,
        "cli": {k: {"cold": c.__dict__, "warm": w.__dict__} for k, (c, w) in run.cli.items()},
    }


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,10000", help="comma-separated memory counts")
    ap.add_argument("--mix", choices=MIXES, default="five", help="formats of the memories")
    ap.add_argument("--runs", type=int, default=3, help="runs per measurement (median)")
    ap.add_argument("--dir", type=Path, default=None, help="where vaults are generated (kept)")
    ap.add_argument(
        "--refit-max", type=int, default=100000, help="largest size to run the refit baseline at"
    )
    ap.add_argument("--json", action="store_true", help="print JSON instead of tables")
    ap.add_argument(
        "--semantic",
        action="store_true",
        help="keep meaning-based search on when the extra is installed (every cold run then "
        "embeds every memory: minutes at 100k); off by default, lexical search is measured",
    )
    args = ap.parse_args(argv)
    if not args.semantic:
        os.environ["MEMLENS_SEMANTIC"] = "0"  # inherited by every measured process
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    base = args.dir or Path(tempfile.gettempdir()) / "memlens-bench"
    base.mkdir(parents=True, exist_ok=True)
    log = sys.stderr if args.json else sys.stdout  # with --json, stdout is only JSON
    print(
        f"memlens benchmark (real processes): python {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start; "
        f"meaning-based search {'on' if args.semantic else 'off (--semantic turns it on)'}; "
        "figures under load are not representative",
        file=log,
        flush=True,
    )
    procs.compile_bytecode()
    results = []
    for size in sizes:
        run = run_size(size, args.mix, base, max(1, args.runs), args.refit_max, log)
        results.append(as_json(run))
        if not args.json:
            print(report(run), flush=True)
    if args.json:
        print(json.dumps(results, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
