"""`memlens watch PATH`: print each change to the vaults below PATH as a line.

Runs `memlens.core.scan.watch.VaultWatcher` until interrupted (Ctrl-C or SIGTERM
exit 0).  Plain lines are for people; ``--json`` prints one JSON object per
line and flushes each, for scripts and tests:
``{change: added|changed|moved|removed|problem|unknown, vault, format, id,
path}`` plus ``old_path`` for moved, ``reason``/``detail``/``cleared`` for
problems and ``title``/``status``/``health`` (at ``--as-of``) for memories.
A line on stderr says when watching has started.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
import time
from datetime import date
from pathlib import Path
from types import FrameType
from typing import Any

import click

from memlens.core.decay import decay_of
from memlens.core.errors import MemlensError
from memlens.core.scan.changes import Change, ChangeKind, change_record, vault_label
from memlens.core.text.sanitize import json_text, one_line, visible

from .common import as_of_option, echo, json_option, resolve_as_of
from .recover import recover_roots


def _record(change: Change, base: Path, as_of: date) -> dict[str, Any]:
    rec: dict[str, Any] = change_record(change, base)
    m = change.memory
    if m is not None and change.is_memory:
        d = decay_of(m, as_of)
        rec["title"] = m.title
        rec["status"] = d.status
        rec["health"] = d.health.value
    return rec


def _line(change: Change, base: Path, as_of: date) -> str:
    kind = change.kind
    where = vault_label(change.vault_root, base)
    path = one_line(change.path)
    if change.old_path is not None:
        path = f"{one_line(change.old_path)} -> {path}"
    if kind in (ChangeKind.PROBLEM, ChangeKind.PROBLEM_CLEARED):
        at = change.line or change.index
        spot = f"{path}:{at}" if at is not None else path
        text = f"{kind.value:<15} {change.format} {where} {spot} {change.reason}"
        if kind is ChangeKind.PROBLEM and change.detail:
            text += f": {one_line(change.detail, 120)}"
        return text
    text = f"{kind.value:<15} {change.format} {where} {one_line(change.id or '', 60)} {path}"
    m = change.memory
    if m is not None and kind is not ChangeKind.REMOVED:
        d = decay_of(m, as_of)
        text += f"  [{d.status}/{d.health.value}] {one_line(m.title, 60)}"
    if change.own:
        text += "  (memlens)"
    return text


@click.command("watch")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@as_of_option
@json_option
@click.option(
    "--rescan-interval",
    type=click.FloatRange(min=0),
    default=30.0,
    show_default=True,
    help="Seconds between stat walks that catch changes the watcher missed (0: never).",
)
def watch(path: Path, as_of: date | None, as_json: bool, rescan_interval: float) -> None:
    """Print one line per change to the vaults below PATH until interrupted.

    Reports memories added, changed, moved and removed, and problems that
    appear or clear, including vaults that appear below PATH later.  Editor
    swap files and atomic saves are not reported as removals.

    Example: memlens watch ./vaults --json
    """
    # The engine loads once watching starts, not for --help or completion.
    from memlens.core.scan.vault import open_catalog
    from memlens.core.scan.watch import VaultWatcher

    when = resolve_as_of(as_of)
    since = time.time()
    try:
        catalog = open_catalog(path)
    except MemlensError as exc:
        raise click.UsageError(str(exc)) from None
    if recover_roots(v.root for v in catalog.vaults):
        catalog = open_catalog(path)

    done = threading.Event()
    out_lock = threading.Lock()

    def on_changes(changes: list[Change]) -> None:
        try:
            with out_lock:
                for c in changes:
                    if as_json:
                        text = json_text(
                            json.dumps(_record(c, path, when), ensure_ascii=False, default=str)
                        )
                    else:
                        text = visible(_line(c, path, when), keep_newlines=False)
                    sys.stdout.write(text + "\n")
                sys.stdout.flush()
        except (BrokenPipeError, ValueError):
            # The reader went away (or stdout closed): stop quietly.
            done.set()

    def on_error(exc: BaseException) -> None:
        echo(f"memlens watch: {type(exc).__name__}: {exc}", err=True)

    def on_term(signum: int, frame: FrameType | None) -> None:
        done.set()

    previous = signal.signal(signal.SIGTERM, on_term)
    watcher = VaultWatcher(
        catalog,
        on_changes,
        paths=[path],
        rescan_interval=rescan_interval or None,
        since=since,
        on_error=on_error,
    )
    watcher.start()
    try:
        watcher.wait_ready()
        total = sum(len(v.memories) for v in catalog.vaults)
        if catalog.vaults:
            echo(
                f"watching {len(catalog.vaults)} vault(s), {total} memories below {path}"
                " (Ctrl-C to stop)",
                err=True,
            )
        else:
            echo(f"no vault below {path} yet; watching for new ones (Ctrl-C to stop)", err=True)
        while not done.wait(0.5):
            if not watcher.running:
                break
    except KeyboardInterrupt:
        pass
    finally:
        watcher.stop()
        signal.signal(signal.SIGTERM, previous)
