"""How the app's memory list behaves at 100k memories: moving, filtering, sorting.

    python -m bench.app_bench [--size 100000] [--no-baseline] [--load N]

Measures, on `--size` synthetic rows (real `Memory` and `DecayInfo` objects):

* core/listing.py alone: building the list, each keystroke of a filter typed
  one character at a time (incremental narrowing), deleting it again
  (a full refilter), sorting by every column, reading a 40-row window;
* the app, headless at 120x40 (Textual's Pilot): each key press moving the
  cursor (j, pagedown, G, g) and each keystroke typed into the filter, timed
  from the key press to the redrawn list (the visible lines rendered);
* the baseline the issue measured, in the same run: a Textual `DataTable`
  filled with the same rows (`--no-baseline` skips it), reported as a ratio;
* with `--load N`: the real loader on N generated memories on disk
  (bench/generate.py): time to the first rows on screen and to fully loaded,
  with an empty scan cache and then again with the caches that start wrote.

Times are wall-clock medians and 95th percentiles in ms; the machine is
shared, so CPU time per keystroke is printed too.  No asserts: it reports.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path

from memlens.core.listing import SORT_KEYS, MemoryList, MemoryRow, memory_row
from memlens.core.model import DecayInfo, Health, Memory, ScanResult
from memlens.core.scan.vault import Vault

AS_OF = date(2026, 11, 22)
SIZE = (120, 40)
WORDS = [
    "billing",
    "dispute",
    "invoice",
    "deploy",
    "staging",
    "backup",
    "restic",
    "proxmox",
    "caddy",
    "postgres",
    "vacuum",
    "redis",
    "timeout",
    "retry",
    "pager",
    "alert",
    "latency",
    "budget",
    "client",
    "contract",
    "renewal",
    "kitchen",
    "garden",
    "running",
    "marathon",
    "school",
    "dentist",
    "flight",
    "hotel",
    "visa",
    "grafana",
    "kubernetes",
    "docker",
    "image",
    "layer",
    "cache",
    "schema",
    "migration",
    "index",
    "replica",
    "shard",
]
HEALTHS = (Health.STABLE, Health.ACTIVE, Health.FADING, Health.EXPIRED, Health.ARCHIVED)


def synthetic_rows(n: int, seed: int = 0) -> tuple[Vault, list[MemoryRow]]:
    """`n` rows of one fake vault, with decay numbers drawn at random (deterministic)."""
    rng = random.Random(seed)
    root = Path("/bench/vault")
    vault = Vault(root=root, format="bench", rel="bench", result=ScanResult())
    infos: dict[str, DecayInfo] = {}
    for i in range(n):
        title = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 8))).capitalize()
        tags = tuple(sorted({rng.choice(WORDS) for _ in range(rng.randint(0, 4))}))
        created = AS_OF - timedelta(days=rng.randint(0, 400))
        memory = Memory(
            format="bench",
            vault_root=root,
            id=f"mem-{i:06d}",
            kind=rng.choice(("fact", "decision", "event", "observation")),
            title=title,
            body=f"# {title}\n\n" + " ".join(rng.choice(WORDS) for _ in range(60)),
            path=f"notes/mem-{i:06d}.md",
            tags=tags,
            importance=round(rng.random(), 2),
            confidence=round(rng.random(), 2),
            created=created,
            fields={"title": title, "tags": list(tags), "created": created.isoformat()},
        )
        strength = rng.random()
        expires = created + timedelta(days=rng.randint(30, 500)) if rng.random() < 0.6 else None
        info = DecayInfo(
            status="active",
            health=rng.choice(HEALTHS),
            strength=strength,
            weight=strength,
            age_days=(AS_OF - created).days,
            expires_on=expires,
        )
        vault.result.memories.append(memory)
        infos[memory.id] = info
    # memory_row() calls the format's decay; the bench format has none, so it
    # is given the drawn DecayInfo instead (the row is built exactly as in the app).
    import memlens.core.listing.rows as listing

    original = listing.decay_of
    listing.decay_of = lambda m, as_of: infos[m.id]  # type: ignore[assignment]
    try:
        rows = [memory_row("bench", m, AS_OF, i) for i, m in enumerate(vault.result.memories)]
    finally:
        listing.decay_of = original
    return vault, rows


def ms(seconds: float) -> float:
    return seconds * 1000.0


def summary(label: str, samples: list[float], cpu: list[float] | None = None) -> None:
    if not samples:
        return
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    line = (
        f"  {label:<44} median {statistics.median(samples):8.2f} ms   "
        f"p95 {p95:8.2f} ms   max {ordered[-1]:8.2f} ms   (n={len(samples)})"
    )
    if cpu:
        line += f"   cpu median {statistics.median(cpu):.2f} ms"
    print(line)


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return ms(time.perf_counter() - start)


# --------------------------------------------------------------------------- core


def bench_model(rows: list[MemoryRow], query: str) -> None:
    print(f"core/listing.py on {len(rows):,} rows")
    start = time.perf_counter()
    model = MemoryList(list(rows))
    print(f"  {'build MemoryList':<44} {ms(time.perf_counter() - start):8.2f} ms")
    typing = [timed(lambda q=query[:n]: model.set_query(q)) for n in range(1, len(query) + 1)]
    summary(f"type {query!r}, per keystroke", typing)
    print(f"  {'':<44} → {len(model):,} matches")
    deleting = [
        timed(lambda q=query[:n]: model.set_query(q)) for n in range(len(query) - 1, -1, -1)
    ]
    summary("delete it again, per keystroke (refilter)", deleting)
    sorts = []
    for column in SORT_KEYS:
        sorts.append(timed(lambda c=column: model.sort_by(c)))
    summary("sort by each column", sorts)
    windows = [timed(lambda s=s: model[s : s + 40]) for s in range(0, len(model), len(model) // 50)]
    summary("read a 40-row window", windows)


# --------------------------------------------------------------------------- app


async def bench_app(vault: Vault, rows: list[MemoryRow], query: str) -> float:
    from memlens.tui.app import MemlensApp
    from memlens.tui.messages import LoadFinished, VaultLoaded, VaultsDiscovered
    from memlens.tui.widgets.memory_table import MemoryTable

    print(f"the app, headless at {SIZE[0]}x{SIZE[1]}, {len(rows):,} rows")
    with tempfile.TemporaryDirectory() as empty:
        # (The synthetic vault is not on disk: nothing to watch.)
        app = MemlensApp([Path(empty)], as_of=AS_OF, live_reload=False)
        async with app.run_test(size=SIZE) as pilot:
            await app.workers.wait_for_complete()
            await pilot.pause()
            start = time.perf_counter()
            app.post_message(VaultsDiscovered([vault]))
            app.post_message(VaultLoaded(vault, rows))
            app.post_message(LoadFinished())
            await pilot.pause()
            table = app.screen.query_one(MemoryTable)

            def redraw() -> None:
                for y in range(table.size.height):
                    table.render_line(y)

            def cold_redraw() -> None:
                table._line_cache.clear()
                redraw()

            redraw()
            loaded = ms(time.perf_counter() - start)
            print(f"  {'rows in, list drawn':<44} {loaded:8.2f} ms")

            async def keys(label: str, presses: list[str]) -> None:
                wall: list[float] = []
                cpu: list[float] = []
                for key in presses:
                    w0, c0 = time.perf_counter(), time.process_time()
                    await pilot.press(key)
                    redraw()
                    wall.append(ms(time.perf_counter() - w0))
                    cpu.append(ms(time.process_time() - c0))
                summary(label, wall, cpu)

            summary(
                "draw every visible list line, no cache", [timed(cold_redraw) for _ in range(50)]
            )
            await keys("j (cursor down), per key", ["j"] * 200)
            await keys("k (cursor up), per key", ["k"] * 100)
            await keys("pagedown, per key", ["pagedown"] * 100)
            await keys("G / g (last / first)", ["G", "g"] * 10)
            await pilot.press("slash")
            await keys(f"type {query!r} in the filter, per keystroke", list(query))
            print(f"  {'':<44} → {len(table.model):,} matches, cursor row drawn")
            await keys("backspace in the filter, per keystroke", ["backspace"] * len(query))
            await pilot.press("enter")
            await keys("s (next sort column), per key", ["s"] * len(SORT_KEYS))
    return loaded


async def bench_pilot_overhead() -> None:
    """What one Pilot key press costs in an app that does nothing (frame waits etc.)."""
    from textual.app import App, ComposeResult
    from textual.binding import Binding
    from textual.widgets import Footer, Static

    class Idle(App[None]):
        BINDINGS = [Binding("j", "nothing", "nothing")]

        def compose(self) -> ComposeResult:
            yield Static("idle")
            yield Footer()

        def action_nothing(self) -> None:
            pass

    app = Idle()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        wall: list[float] = []
        cpu: list[float] = []
        for _ in range(100):
            w0, c0 = time.perf_counter(), time.process_time()
            await pilot.press("j")
            wall.append(ms(time.perf_counter() - w0))
            cpu.append(ms(time.process_time() - c0))
    print("Pilot's own cost per key press (an app that does nothing), same run")
    summary("j in an idle app", wall, cpu)


async def bench_datatable(rows: list[MemoryRow]) -> float:
    """The baseline: a DataTable holding every row (what the issue measured at ~9 s)."""
    from textual.app import App, ComposeResult
    from textual.widgets import DataTable

    class Baseline(App[None]):
        def compose(self) -> ComposeResult:
            yield DataTable()

    app = Baseline()
    async with app.run_test(size=SIZE) as pilot:
        data = app.query_one(DataTable)
        data.add_columns("title", "kind", "health", "strength", "when", "tags")
        start = time.perf_counter()
        data.add_rows(
            (r.title, r.kind, r.health, f"{r.strength or 0:.2f}", r.when, ", ".join(r.tags))
            for r in rows
        )
        await pilot.pause()
        return ms(time.perf_counter() - start)


async def bench_load(total: int) -> None:
    """Real files: time to the first rows on screen and to fully loaded, cold then warm.

    The cold start has an empty scan cache of its own; the warm start runs
    the app again on the unchanged vaults with the caches the first wrote.
    Imports are done before either is timed.
    """
    import os

    from bench.generate import ensure_vaults
    from memlens.tui.app import MemlensApp
    from memlens.tui.widgets.memory_table import MemoryTable

    root = Path(tempfile.gettempdir()) / f"memlens-bench-{total}"
    print(f"real loading of {total:,} generated memories ({root})")
    start = time.perf_counter()
    ensure_vaults(root, total)
    print(f"  {'generate (or reuse) the vaults':<44} {ms(time.perf_counter() - start):8.0f} ms")
    cache = tempfile.mkdtemp(prefix="memlens-bench-app-cache-")
    os.environ["MEMLENS_CACHE_DIR"] = cache
    for label in ("cold", "warm"):
        app = MemlensApp([root], as_of=AS_OF, live_reload=False)
        start = time.perf_counter()
        async with app.run_test(size=SIZE) as pilot:
            first = None
            while app.loading:
                await pilot.pause(0.02)
                if first is None and len(app.screen.query_one(MemoryTable).model):
                    first = time.perf_counter() - start
            done = time.perf_counter() - start
            shown = app.screen.query_one(MemoryTable).model.total
            await app.workers.wait_for_complete()  # the scan caches are written
        if first is not None:
            print(f"  {label + ': first rows on screen':<44} {ms(first):8.0f} ms")
        print(f"  {label + ': every vault loaded':<44} {ms(done):8.0f} ms  ({shown:,} rows)")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.app_bench", description=__doc__)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--query", default="billing dis")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--load", type=int, default=0, help="also time real loading of N memories")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    vault, rows = synthetic_rows(args.size)
    print(f"{args.size:,} synthetic rows in {time.perf_counter() - start:.1f} s\n")
    bench_model(rows, args.query)
    print()
    asyncio.run(bench_pilot_overhead())
    print()
    loaded = asyncio.run(bench_app(vault, rows, args.query))
    if not args.no_baseline:
        print()
        fill = asyncio.run(bench_datatable(rows))
        print(f"baseline: DataTable with {len(rows):,} rows (same run)")
        print(f"  {'add_rows + first paint':<44} {fill:8.0f} ms")
        print(
            f"  ratio DataTable fill / memlens rows-in-and-drawn: {fill / max(loaded, 0.01):.0f}x"
        )
    if args.load:
        print()
        asyncio.run(bench_load(args.load))
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
