"""The app, started in a fresh process, reporting when each stage was reached.

    python -m bench.app_probe ROOT [--search]

Run by `bench.real` as a subprocess: every stamp is ``time.monotonic()``
(system-wide on Linux), so the parent subtracts the moment it spawned this
process and every figure includes the interpreter start and all imports, as
a user's start does.  The app runs headless (Textual's Pilot, 120x40) with
its default settings (scan cache on, live reload on) and the cache folder of
``$MEMLENS_CACHE_DIR``.  Stages:

- ``first_rows``: the memory list holds its first rows;
- ``all_shown``: the list holds as many rows as once everything is loaded
  (on a warm start, the rows the last run kept, while the vaults are read);
- ``listed``: every vault loaded (``app.loading`` false, every row in);
- ``load_finished`` / ``persisted`` / ``rows_kept``: when the load worker
  had every vault loaded (the creation time of its message, in the worker:
  exact); when it had finished writing the stores after that (the moment
  it turned to keeping the list rows, `save_rows`: every store write comes
  before); and when its last write (`save_rows`: the kept list rows, or
  their patch) returned.  Stamped in the worker thread.  Not the worker's
  SUCCESS event: Textual sets that state on the UI loop once it is free,
  ~1 s later at 100k while the rows go on screen; it is the fallback when
  the worker kept no rows (cache off);
- with ``--search``, the user opens search as soon as everything is listed:
  ``searchable`` when its index is built, then per-keystroke query times of
  that index (realistic queries typed a character at a time; each keystroke
  noted as the app's key handler notes it, so background work yields as it
  does to a user typing).

The last line on stdout is one JSON object; nothing else is printed there.
"""

from __future__ import annotations

import time

STARTED = time.monotonic()  # before any import below: they count

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

SIZE = (120, 40)
#: How often the probe looks at the app (the stamps are this precise).  It
#: sleeps between looks (`asyncio.sleep`), never `Pilot.pause`: a pause waits
#: for every widget of the screen to drain its messages (one callback
#: message per widget per pause), and at 100 looks a second that was ~34,000
#: messages and ~5 s of the UI thread's CPU during a 100k warm start, taken
#: from the load worker through the GIL (listed at 15-17 s with pauses, 8.2 s
#: without).  The app a user runs has no probe.
POLL_S = 0.01


async def probe(root: Path, search: bool) -> dict[str, Any]:
    import memlens.tui.app
    import memlens.tui.cli.root  # noqa: F401  (the entry point imports it first)

    from .generate import AS_OF

    out: dict[str, Any] = {"imported": time.monotonic()}  # the app's module imports
    with tempfile.TemporaryDirectory(prefix="memlens-bench-state-") as state:
        app = _probe_app()([root], as_of=AS_OF, state_folder=Path(state))
        await _drive(app, out, search)
    out["rss_mb"] = peak_rss_mb()
    return out


async def _drive(app: Any, out: dict[str, Any], search: bool) -> None:
    """Run the app headless, noting each stage in `out`."""
    from memlens.tui.widgets.memory_table import MemoryTable

    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(MemoryTable)
        seen: list[tuple[float, int]] = []  # (when, rows shown) at each change
        while app.loading:
            shown = len(table.model)
            if shown and (not seen or seen[-1][1] != shown):
                seen.append((time.monotonic(), shown))
            await asyncio.sleep(POLL_S)
        out["listed"] = time.monotonic()
        out["first_rows"] = seen[0][0] if seen else out["listed"]
        out["rows"] = table.model.total
        # Every row on screen (the rows kept from the last run, before the vault is read).
        out["all_shown"] = next((t for t, n in seen if n >= out["rows"]), out["listed"])
        while not {"persisted", "load_failed"} & app.stamps.keys():
            await asyncio.sleep(POLL_S)
        if "load_failed" in app.stamps:
            raise SystemExit("the load worker failed or was cancelled")
        out.update(app.stamps)
        if search:
            await _search(app, pilot, out)


def peak_rss_mb() -> float:
    """This process's peak RSS: VmHWM, which (unlike ru_maxrss) excludes the
    peak of the process that spawned it (Linux carries that across exec)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _probe_app() -> Any:
    """The app with two extra handlers that note when the load worker got where.

    Textual calls the handlers of every class in the MRO, so the app's own
    handlers still run after these.
    """
    from textual.worker import Worker, WorkerState

    import memlens.tui.app as app_module
    import memlens.tui.app_loading as loading
    from memlens.tui.app import MemlensApp
    from memlens.tui.messages import LoadFinished

    started: list[float] = []
    written: list[float] = []
    save_rows = loading.save_rows

    def stamped_save_rows(*args: Any, **kwargs: Any) -> bool:
        started.append(time.monotonic())
        try:
            return save_rows(*args, **kwargs)
        finally:
            written.append(time.monotonic())

    loading.save_rows = stamped_save_rows  # type: ignore[assignment]

    class ProbeApp(MemlensApp):
        # Textual reads a relative CSS_PATH beside the subclass's module.
        CSS_PATH = str(Path(app_module.__file__).with_name("app.tcss"))

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.stamps: dict[str, float] = {}

        def on_load_finished(self, message: LoadFinished) -> None:
            self.stamps["load_finished"] = message.time

        def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
            if event.worker.group != "load":
                return
            if event.state == WorkerState.SUCCESS:
                self.stamps["persisted"] = started[0] if started else event.time
                self.stamps["rows_kept"] = written[-1] if written else event.time
            elif event.state in (WorkerState.ERROR, WorkerState.CANCELLED):
                self.stamps["load_failed"] = event.time

    return ProbeApp


async def _search(app: Any, pilot: Any, out: dict[str, Any]) -> None:
    """Open search right after listing; time the index, then keystrokes on it."""
    from memlens.tui.screens.search import SearchScreen

    from .search_bench import make_queries, measure_keystrokes

    opened = time.monotonic()
    await app.action_show("search")
    screen = app.screen
    assert isinstance(screen, SearchScreen)
    while not screen.index_ready:
        await asyncio.sleep(POLL_S)
    out["searchable"] = time.monotonic()
    out["search_opened"] = opened
    memories = [m for vault, _rows in app.loaded for m in vault.memories]
    queries = make_queries(memories, random.Random(len(memories)))
    assert screen.index is not None
    locked = _Locked(screen.index, screen._index_lock)
    out["keystrokes_s"] = measure_keystrokes(locked, queries, key_pressed=lambda: _key_pressed(app))


class _Locked:
    """The index, each query run under the search screen's index lock, as the
    screen's query worker runs it: the index's own work after it is built
    (`prepare_order`) holds that lock, so a query waits for it, not races it."""

    def __init__(self, index: Any, lock: Any) -> None:
        self.index = index
        self.lock = lock

    def run(self, *args: Any, **kwargs: Any) -> Any:
        with self.lock:
            return self.index.run(*args, **kwargs)


def _key_pressed(app: Any) -> None:
    """What the app does on every key event before the query runs (`PrivacyApp.on_event`:
    its background secrets scan gives way while keys come).  The probe calls the
    index directly, without key events, so it says so itself."""
    app.last_key_at = time.monotonic()


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.app_probe")
    ap.add_argument("root", type=Path)
    ap.add_argument("--search", action="store_true")
    args = ap.parse_args(argv)
    out = asyncio.run(probe(args.root, args.search))
    out["started"] = STARTED
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
