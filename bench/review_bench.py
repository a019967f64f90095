"""`python -m bench review`: the review queue (`memlens review --json`) on generated vaults.

Issue 21's targets: at most 3 s at 1,000 memories and 20 s at 10,000, and a
queue a person can read.  The generated notes (`bench.generate`, all five
formats) are written from sentence templates with random numbers: many
share a sentence shape ("After that restores take N minutes", "We raised
X to N") but none states another's fact, so every candidate there is a
false one; the count is printed beside the time.

Each size runs the installed CLI as a subprocess, output to a file,
lexical only (``MEMLENS_SEMANTIC=0``) unless ``--semantic`` (then a cold
run with an empty cache folder, which embeds every memory, and a warm one
reading the persisted index's vectors back).  Elapsed and CPU (user +
system, of the child) are both printed: on a shared machine the elapsed
time mostly says how busy it is.

    python -m bench review [--sizes 1000,10000] [--seed 1] [--semantic] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .generate import AS_OF, ensure_vaults

MEMLENS = Path(sys.executable).with_name("memlens")
TARGETS = {1000: 3.0, 10000: 20.0}


def run_review(root: Path, env: dict[str, str], out: Path) -> tuple[float, float, int]:
    """(elapsed s, child CPU s, candidates) of one `memlens review --json` run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with out.open("wb") as fh:
        subprocess.run(
            [str(MEMLENS), "review", str(root), "--json", "--as-of", AS_OF.isoformat()],
            stdout=fh,
            stderr=subprocess.DEVNULL,
            env=env,
            check=True,
        )
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    count = int(json.loads(out.read_text(encoding="utf-8"))["count"])
    return elapsed, cpu, count


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench review")
    ap.add_argument("--sizes", default="1000,10000", help="comma-separated memory counts")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--semantic", action="store_true", help="meaning vectors on (cold, warm)")
    ap.add_argument("--dir", type=Path, default=None, help="where the vaults are kept")
    args = ap.parse_args(argv)
    base = args.dir or Path(tempfile.gettempdir()) / "memlens-bench-review"
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    print("size    mode             elapsed s   cpu s   candidates   target s")
    for size in (int(s) for s in args.sizes.split(",")):
        root = ensure_vaults(base / f"five-{size}-{args.seed}", size, args.seed)
        with tempfile.TemporaryDirectory(prefix="memlens-review-cache-") as cache:
            env = {**os.environ, "MEMLENS_CACHE_DIR": cache}
            modes = ["cold", "warm"] if args.semantic else ["lexical"]
            if not args.semantic:
                env["MEMLENS_SEMANTIC"] = "0"
            for mode in modes:
                out = Path(cache) / f"review-{size}-{mode}.json"
                elapsed, cpu, count = run_review(root, env, out)
                label = f"semantic {mode}" if args.semantic else mode
                target = TARGETS.get(size)
                print(
                    f"{size:<7} {label:<16} {elapsed:>9.2f} {cpu:>7.2f} {count:>12}"
                    f"   {target if target is not None else '-'}"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
