"""`python -m bench privacy`: what one live-reload change costs the app's secrets scan.

Generates real vaults in all five formats (`bench.generate`, 10,000
memories, seed 1; `--dir` keeps and reuses them), opens the catalog, and
times, as the app's privacy worker runs them after a catalog change:

- the whole scan of every vault (`privacy.scan_vault`, as the app did after
  every change before the scan was incremental);
- the incremental scan (`privacy.incremental.FindingsCache`): its first run
  (every file), then after each of --changes external writes, one per
  format in turn (`bench.reload_bench.Writer`: a memory file replaced,
  observations.md rewritten, a line appended to experiences.jsonl), each
  rescanned into the catalog first (`rescan_paths`, not timed: the app's
  watcher does it for every feature) and the findings compared with a
  whole scan's.

Wall and CPU seconds of this process (the scan runs in a thread of the app,
so its CPU is what it takes from the interface).
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from memlens.core.privacy import Finding

T = TypeVar("T")
FORMATS = ("project-ocean", "dream-cycle", "experience-records", "cognitive-memory")
AS_OF = date(2026, 11, 27)


def _timed(fn: Callable[[], T]) -> tuple[T, float, float]:
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


def _newest(root: Path) -> Path:
    """The file written last below `root` (the one the writer just changed)."""
    return max((p for p in root.rglob("*") if p.is_file()), key=lambda p: p.stat().st_mtime_ns)


def _plant(root: Path, rng: random.Random) -> int:
    """A GitHub token in every 50th memory file (the generator writes none): findings to compare."""
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
    files = sorted(p for p in root.rglob("*.md") if p.name != "observations.md")
    marker = root / ".privacy-bench-planted"
    if marker.exists():  # a kept --dir: planted by an earlier run
        return len(files[::50])
    marker.write_text("tokens planted\n")
    planted = 0
    for path in files[::50]:
        token = "ghp_" + "".join(rng.choice(alphabet) for _ in range(36))
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"\nThe deploy token is {token}.\n")
        planted += 1
    return planted


def _shape(found: list[Finding]) -> list[tuple[object, ...]]:
    return [(f.vault, f.id, f.path, f.field, f.line, f.kind, f.secret, f.health) for f in found]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench privacy", description=__doc__)
    ap.add_argument("--size", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--changes", type=int, default=8)
    ap.add_argument("--dir", type=Path, default=None, help="Generate here and keep (reused).")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="memlens-bench-privacy-"))
    try:
        root = args.dir or tmp / "vaults"
        return _run(root, args)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _run(root: Path, args: argparse.Namespace) -> int:
    from bench.generate import ensure_vaults
    from bench.reload_bench import Writer
    from memlens.core.privacy import scan_vault
    from memlens.core.privacy.incremental import FindingsCache
    from memlens.core.scan.vault import open_catalog, rescan_paths

    ensure_vaults(root, args.size, seed=args.seed)
    planted = _plant(root, random.Random(args.seed))
    catalog = open_catalog(root, cache=False)
    total = sum(len(v.memories) for v in catalog.vaults)
    print(f"{total} memories in {len(catalog.vaults)} vaults ({root}), {planted} planted tokens")

    def whole() -> list[Finding]:
        return [f for v in catalog.vaults for f in scan_vault(v, AS_OF)]

    found, wall, cpu = _timed(whole)
    print(
        f"whole scan (every change, before): wall {wall:.2f} s, CPU {cpu:.2f} s,"
        f" {len(found)} findings"
    )
    cache = FindingsCache()

    def incremental() -> list[Finding]:
        out: list[Finding] = []
        for v in catalog.vaults:
            got = cache.scan_vault(v, AS_OF)
            assert got is not None
            out.extend(got)
        return out

    _, wall, cpu = _timed(incremental)
    print(
        f"incremental, first scan: wall {wall:.2f} s, CPU {cpu:.2f} s ({cache.files_scanned} files)"
    )
    writer = Writer(catalog, random.Random(args.seed))
    walls: list[float] = []
    cpus: list[float] = []
    for n in range(args.changes):
        fmt = FORMATS[n % len(FORMATS)]
        write, _match = writer.write(fmt)
        write()
        vault = next(v for v in catalog.vaults if v.format == fmt)
        rescan_paths(vault, [_newest(vault.root)])
        before = cache.files_scanned
        got, wall, cpu = _timed(incremental)
        walls.append(wall)
        cpus.append(cpu)
        same = _shape(got) == _shape(whole())
        print(
            f"  change {n + 1} ({fmt}): wall {wall * 1000:.0f} ms, CPU {cpu * 1000:.0f} ms,"
            f" {cache.files_scanned - before} file(s) scanned, same findings: {same}"
        )
    print(
        f"one change, incremental: wall median {statistics.median(walls) * 1000:.0f} ms,"
        f" CPU median {statistics.median(cpus) * 1000:.0f} ms (of {args.changes})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
