"""Speed benchmark: cold index, warm start, first rows, one-file update, search, RSS.

    python -m bench                              # 1k and 10k memories
    python -m bench --sizes 1000,10000,100000
    python -m bench speed --sizes 1000           # the same, by name

For each size it generates real vaults in all five formats (bench/generate.py,
N memories split evenly, reused between runs under --dir) and measures, in
one run:

- cold index: a fresh process with an empty cache: discover, parse every
  file, link, write the scan caches, build the search index and save it
  (imports included: this is what a first start costs);
- first rows: in that cold process, when the first batch of memories could
  be shown (progressive scan);
- warm start: a fresh process, unchanged vaults, caches present: a
  searchable list (catalog from the scan caches + index from its cache);
- one-file update, per format: change one file on disk, `rescan_paths`,
  diff, update the search index (median of 3);
- search p50/p95 per keystroke (bench.search_bench.measure_keystrokes,
  best of 2 passes) in the warm process;
- peak RSS of the cold and warm processes;

(memlens is byte-compiled first, as installing it does, so no phase pays
for compiling its source);

and, in the same run, the baselines each figure is compared with: reading
every byte of the vaults once (from the page cache), ``rg -l -i WORD`` when
ripgrep is installed, and the re-read-and-refit search of the reference
design (measured up to --baseline-max, extrapolated linearly above it).
Not part of the test suite: timings depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .generate import AS_OF, ensure_vaults
from .procs import compile_bytecode

REPO = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------- baselines


def read_every_byte(root: Path) -> tuple[float, int]:
    """Seconds to read every file below `root` once (second pass: page cache), and bytes."""
    best = float("inf")
    total = 0
    for _ in range(2):
        t = time.perf_counter()
        total = 0
        for folder, _dirs, files in os.walk(root):
            for name in files:
                with open(os.path.join(folder, name), "rb") as fh:
                    total += len(fh.read())
        best = min(best, time.perf_counter() - t)
    return best, total


# --------------------------------------------------------------------------- phases (fresh process)


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _open(root: Path, t0: float) -> tuple[Any, float | None, float, float]:
    """Progressive, cached open of every vault.

    Returns (catalog, first rows s, all listed s, cache save s): listed is
    when the last vault's linked result arrives; the scan caches are written
    after that (the app does it in a worker), so their time is apart.
    """
    from memlens.core.scan.vault import Catalog, discover, scan_progressive, start_walk_ahead

    first: float | None = None
    vaults = []
    steps = []
    found = discover(root)
    ahead = start_walk_ahead(found, cache=True)
    for vault in found:
        progress = scan_progressive(vault, batch=500, cache=True, ahead=ahead)
        for step in progress:
            if first is None and step.memories:
                first = time.perf_counter() - t0
            if step.done:
                break
        steps.append(progress)
        vaults.append(vault)
    listed = time.perf_counter() - t0
    if ahead is not None:
        ahead.close()
    t = time.perf_counter()
    for progress in steps:
        for _ in progress:  # finish each scan: writes its cache file
            pass
    return Catalog(vaults), first, listed, time.perf_counter() - t


def _touch(vault: Any, i: int) -> tuple[Path, bytes]:
    """Change one file of the vault as an agent would; returns (path, original bytes)."""
    fmt = vault.format
    if fmt == "experience-records":
        path = vault.root / "experiences.jsonl"
        original = path.read_bytes()
        line = {
            "id": f"exp_bench_{i}_{time.time_ns()}",
            "type": "observation",
            "created_at": "2026-11-22T10:00:00Z",
            "content": {"text": f"Bench appended experience {i}."},
        }
        path.write_bytes(original + (json.dumps(line) + "\n").encode())
        return path, original
    if fmt == "dream-cycle":
        path = vault.root / "observations.md"
        original = path.read_bytes()
        text = original.decode("utf-8")
        mid = text.find("\n## ", len(text) // 2)
        end = text.find("\n## ", mid + 1)
        cut = end if end != -1 else len(text)
        path.write_bytes((text[:cut] + f" Edited {i}." + text[cut:]).encode("utf-8"))
        return path, original
    rels = [r for r, fs in vault.scans.items() if fs.memories]
    path = vault.root / rels[len(rels) // 2]
    original = path.read_bytes()
    path.write_bytes(original + f"\nEdited by the benchmark ({i}).\n".encode())
    return path, original


def _one_file_updates(catalog: Any, index: Any) -> dict[str, float]:
    from memlens.core.scan.memory_diff import diff_results
    from memlens.core.scan.vault import rescan_paths

    out: dict[str, float] = {}
    for vault in catalog.vaults:
        times: list[float] = []
        original: bytes | None = None
        path: Path | None = None
        for i in range(3):
            path, before = _touch(vault, i)
            original = before if original is None else original
            t = time.perf_counter()
            old = vault.result
            new = rescan_paths(vault, [path])
            changes = diff_results(old, new, everything=vault.last_rescan_vault_wide)
            for m in changes.removed:
                index.remove(m.key)
            for m in changes.added + changes.changed:
                index.update(m)
            times.append(time.perf_counter() - t)
        if path is not None and original is not None:
            path.write_bytes(original)
            rescan_paths(vault, [path])
        out[vault.format] = statistics.median(times)
    return out


def phase(kind: str, root: Path) -> dict[str, Any]:
    """One cold or warm start, measured from before `import memlens.core`."""
    t0 = time.perf_counter()
    from memlens.core.search.index_cache import load_index, save_index

    imports = time.perf_counter() - t0
    catalog, first, listed, scan_save = _open(root, t0)
    t = time.perf_counter()
    index, stats = load_index(catalog, AS_OF, save=False)
    searchable = listed + time.perf_counter() - t
    t = time.perf_counter()
    if stats.stale:
        save_index(index, catalog)
    index_save = time.perf_counter() - t
    out: dict[str, Any] = {
        "phase": kind,
        "memories": sum(len(v.memories) for v in catalog.vaults),
        "imports_s": imports,
        "first_rows_s": first,
        "listed_s": listed,
        "searchable_s": searchable,
        "index_status": stats.status,
        "index_build_s": stats.build_s,
        "index_load_s": stats.load_s,
        "scan_parsed": sum(v.cache_stats.parsed for v in catalog.vaults if v.cache_stats),
        "scan_reused": sum(v.cache_stats.reused for v in catalog.vaults if v.cache_stats),
        "cache_save_s": scan_save,
        "index_save_s": index_save,
        "rss_mb": _rss_mb(),
    }
    if kind == "warm":
        from .search_bench import best_of, make_queries, measure_keystrokes, pct

        memories = list(catalog.memories())
        queries = make_queries(memories, random.Random(len(memories)))
        index.run("warm up", 20)
        keys = best_of([measure_keystrokes(index, queries) for _ in range(2)])
        out["search_p50_s"] = pct(keys, 0.5)
        out["search_p95_s"] = pct(keys, 0.95)
        out["keystrokes"] = len(keys)
        out["queries"] = queries
        out["updates_s"] = _one_file_updates(catalog, index)
        out["rss_mb"] = _rss_mb()
    return out


def _phase_env(cache: Path) -> dict[str, str]:
    """The environment of a phase process: its own cache dir, bytecode allowed.

    An installed memlens imports from compiled bytecode (pip compiles it;
    an editable install writes it on first use).  A shell that sets
    PYTHONDONTWRITEBYTECODE would make every phase compile memlens again
    (~0.15 s), which no user start pays.
    """
    env = dict(os.environ, MEMLENS_CACHE_DIR=str(cache))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _run_phase(kind: str, root: Path, cache: Path) -> dict[str, Any]:
    env = _phase_env(cache)
    proc = subprocess.run(
        [sys.executable, "-m", "bench.speed", "--phase", kind, "--root", str(root)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{kind} phase failed:\n{proc.stderr}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


# --------------------------------------------------------------------------- one size


def run_size(
    size: int, base: Path, baseline_max: int, last_refit: tuple[int, float] | None
) -> dict[str, Any]:
    from .search_bench import measure_baseline, measure_rg

    root = ensure_vaults(base / f"vaults-{size}", size)
    cache = Path(tempfile.mkdtemp(prefix=f"memlens-bench-cache-{size}-"))
    try:
        read_s, nbytes = read_every_byte(root)
        cold = _run_phase("cold", root, cache)
        warm = _run_phase("warm", root, cache)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    queries: list[str] = warm.pop("queries")
    notes: list[str] = []
    rg_s = measure_rg(root, queries)
    if rg_s is None:
        notes.append("rg (ripgrep) is not installed here: the rg baseline was skipped")
    refit_s: float | None = None
    refit_estimated = False
    if size <= baseline_max:
        refit_s = measure_baseline(root, queries, AS_OF, runs=2)
    elif last_refit is not None:
        n0, t0 = last_refit
        refit_s = t0 * size / n0
        refit_estimated = True
        notes.append(f"refit baseline at {size} estimated linearly from {n0} (not run)")
    return {
        "size": size,
        "memories": warm["memories"],
        "bytes": nbytes,
        "read_s": read_s,
        "rg_s": rg_s,
        "refit_s": refit_s,
        "refit_estimated": refit_estimated,
        "cold": cold,
        "warm": warm,
        "notes": notes,
    }


# --------------------------------------------------------------------------- report


def _ratio(value: float | None, base: float | None) -> str:
    if value is None or base is None or base <= 0:
        return "-"
    r = value / base
    return f"{r:.2f}x" if r < 10 else f"{r:.0f}x"


def _ms(s: float | None) -> str:
    if s is None:
        return "-"
    return f"{s * 1000:.1f} ms" if s < 1 else f"{s:.2f} s"


def report(r: dict[str, Any]) -> str:
    cold, warm = r["cold"], r["warm"]
    refit = r["refit_s"]
    refit_label = ("~" if r["refit_estimated"] else "") + _ms(refit)
    lines = [
        f"== {r['memories']} memories ({r['bytes'] / 1e6:.1f} MB in 5 vaults) ==",
        f"baselines: read every byte {_ms(r['read_s'])}, rg -l -i {_ms(r['rg_s'])}, "
        f"re-read-and-refit search {refit_label} per query",
        f"{'measure':<34} {'value':>10} {'x read':>8} {'x rg':>7} {'x refit':>8}",
    ]

    def row(name: str, value: float | None) -> None:
        lines.append(
            f"{name:<34} {_ms(value):>10} {_ratio(value, r['read_s']):>8} "
            f"{_ratio(value, r['rg_s']):>7} {_ratio(value, refit):>8}"
        )

    row("cold: first rows", cold["first_rows_s"])
    row("cold: all listed", cold["listed_s"])
    row("cold: full-text ready (index)", cold["searchable_s"])
    row("warm: first rows", warm["first_rows_s"])
    row("warm: searchable list", warm["searchable_s"])
    row("search p50 per keystroke", warm["search_p50_s"])
    row("search p95 per keystroke", warm["search_p95_s"])
    for fmt, s in sorted(warm["updates_s"].items()):
        row(f"one-file update: {fmt}", s)
    lines.append(
        f"{'peak RSS cold / warm':<34} {cold['rss_mb']:>7.0f} MB / {warm['rss_mb']:.0f} MB"
        f"  ({cold['rss_mb'] * 1e6 / max(1, r['bytes']):.1f}x / "
        f"{warm['rss_mb'] * 1e6 / max(1, r['bytes']):.1f}x the bytes on disk)"
    )
    lines.append(
        f"details: imports {_ms(cold['imports_s'])}; cold parsed {cold['scan_parsed']} files, "
        f"index built in {_ms(cold['index_build_s'])}; afterwards (in a worker, not counted "
        f"above) scan caches saved in {_ms(cold['cache_save_s'])}, index cache in "
        f"{_ms(cold['index_save_s'])}; warm reused {warm['scan_reused']} files, parsed "
        f"{warm['scan_parsed']}, index {warm['index_status']} in {_ms(warm['index_load_s'])}; "
        f"{warm['keystrokes']} keystrokes"
    )
    lines.extend(f"note: {n}" for n in r["notes"])
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench")
    ap.add_argument("--sizes", default="1000,10000", help="comma-separated memory counts")
    ap.add_argument("--dir", type=Path, default=None, help="where vaults are generated (kept)")
    ap.add_argument(
        "--baseline-max", type=int, default=10000, help="largest size to run the refit baseline at"
    )
    ap.add_argument("--json", action="store_true", help="print JSON instead of tables")
    ap.add_argument("--phase", choices=["cold", "warm"], help=argparse.SUPPRESS)
    ap.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.phase:
        print(json.dumps(phase(args.phase, args.root)))
        return 0
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    base = args.dir or Path(tempfile.gettempdir()) / "memlens-bench"
    base.mkdir(parents=True, exist_ok=True)
    print(
        f"memlens speed benchmark: python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f} at start",
        flush=True,
    )
    compile_bytecode()
    results = []
    last: tuple[int, float] | None = None
    for size in sizes:
        r = run_size(size, base, args.baseline_max, last)
        if r["refit_s"] is not None and not r["refit_estimated"]:
            last = (r["memories"], r["refit_s"])
        results.append(r)
        if not args.json:
            print(report(r), flush=True)
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
