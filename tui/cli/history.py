"""`memlens history PATH ID`: every commit that changed one memory, its diffs, versions, restore.

Reads git through memlens.core.history (read-only; git itself is never
changed).  `--restore COMMIT` writes the memory back as it was, as an
ordinary journaled action: `memlens undo PATH` reverts it.
"""

from __future__ import annotations

import sys
import threading
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import click

from memlens.core.errors import MemlensError, NotFoundError
from memlens.core.text.sanitize import one_line

from .common import (
    EXIT_PROBLEMS,
    as_of_option,
    echo,
    emit_json,
    error_line,
    json_option,
    load_catalog_unsaved,
    resolve_as_of,
    stored_memory,
    use_cache,
)

if TYPE_CHECKING:
    from memlens.core.history import History


def _fail(message: str) -> None:
    echo(f"memlens: {message}", err=True)
    sys.exit(EXIT_PROBLEMS)


def _history(path: Path, memory_id: str, *, writing: bool = False) -> History:
    """The memory's history; the vault's store is written meanwhile, while git works.

    To read, the memory comes from the index `memlens search` kept when no
    file changed (`stored_memory`: no catalog to open, seconds at 100k);
    `writing` (a restore) always opens the catalog, as every action does.
    """
    from memlens.core.history import HistoryError, memory_history

    stored = None if writing else stored_memory(path, memory_id)
    if stored is not None:
        try:
            return memory_history(stored, cache=use_cache())
        except HistoryError as exc:
            _fail(f"history of {memory_id}: {error_line(exc)}")
            raise  # pragma: no cover - _fail exits
    catalog, save = load_catalog_unsaved(path)
    saver = threading.Thread(target=save, name="memlens-store-save")
    saver.start()
    try:
        memory = catalog.get(memory_id)
        return memory_history(memory, cache=use_cache())
    except NotFoundError as exc:
        _fail(str(exc))
        raise  # pragma: no cover - _fail exits
    except HistoryError as exc:
        _fail(f"history of {memory_id}: {error_line(exc)}")
        raise  # pragma: no cover - _fail exits
    finally:
        saver.join()


def _print_history(history: History) -> None:
    from memlens.core.history.diff import entry_diff, field_changes

    m = history.memory
    committed = len(history.commits)
    where = f"{committed} commit{'s' if committed != 1 else ''} in {history.repo.top}"
    echo(f"{m.id} · {m.format} · {m.path} · {where}")
    if history.repo.shallow:
        echo("(a shallow clone: history stops at its boundary)")
    if not committed:
        echo("(never committed)")
    for entry in history.entries:
        c = entry.commit
        if c is None:
            echo(f"\nworking tree  (not committed)  {entry.change}")
        else:
            echo(f"\n{c.short}  {c.date}  {one_line(c.author, 40)}  {one_line(c.subject, 80)}")
        if entry.old_path is not None:
            echo(f"    moved {entry.old_path} -> {entry.path}")
        if entry.change in ("added", "removed"):
            echo(f"    {entry.change}")
            continue
        fields, body_changed = field_changes(m, entry)
        parts = [
            f"{one_line(f.name)} {one_line(str(f.before), 40)} -> {one_line(str(f.after), 40)}"
            for f in fields
        ]
        if body_changed:
            parts.append("body changed")
        if parts:
            echo("    " + " · ".join(parts))
        for line in entry_diff(history, entry):
            echo(f"    {line}")


def _print_version(history: History, ref: str, as_of: date, as_json: bool) -> None:
    from memlens.core.history import version_at
    from memlens.core.history.records import version_record

    try:
        version = version_at(history, ref)
    except MemlensError as exc:
        _fail(f"history --at {ref}: {error_line(exc)}")
        return
    rec = version_record(history, version, as_of)
    if as_json:
        emit_json(rec)
        return
    c = version.commit
    echo(f"{history.memory.id} at {c.short} ({c.date}, {one_line(c.subject, 80)})")
    if "health" in rec:
        echo(f"{rec['status']} ({rec['health']}) as of {as_of.isoformat()} · {rec['path']}")
    echo("")
    echo(rec["text"])


def _restore(history: History, ref: str, dry_run: bool) -> None:
    from memlens.core.history import version_at
    from memlens.core.history.diff import unified_diff
    from memlens.core.history.restore import plan_restore, restore_version

    try:
        version = version_at(history, ref)
        plan = plan_restore(history, version)
    except MemlensError as exc:
        _fail(f"history --restore {ref} refused: {error_line(exc)}")
        return
    echo(f"{one_line(plan.summary)}", err=True)
    for line in unified_diff(history.current, version.data, "now", f"at {version.commit.short}"):
        echo(f"  {line}", err=True)
    if dry_run:
        echo("dry run: nothing written", err=True)
        return
    try:
        restore_version(history, ref)
    except MemlensError as exc:
        _fail(f"history --restore {ref} refused: {error_line(exc)}")
    echo("done (memlens undo PATH reverts it; git is not touched)", err=True)


@click.command(name="history")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.argument("memory_id", metavar="ID")
@json_option
@as_of_option
@click.option(
    "--at", "at", metavar="COMMIT", default=None, help="Show the memory as it was at COMMIT."
)
@click.option(
    "--restore",
    "restore",
    metavar="COMMIT",
    default=None,
    help="Write the memory back as it was at COMMIT (journaled; memlens undo reverts it).",
)
@click.option("--dry-run", is_flag=True, help="With --restore: show the change; write nothing.")
def history(
    path: Path,
    memory_id: str,
    as_json: bool,
    as_of: date | None,
    at: str | None,
    restore: str | None,
    dry_run: bool,
) -> None:
    """Every commit that changed memory ID, newest first, with its diff (needs git).

    For a memory that is a whole file, renames (archive moves) are followed;
    for a Dream Cycle section or a JSON Lines record, only the commits that
    changed that section or record are listed.  Uncommitted changes come
    first as "working tree".  --at shows a version (its decay judged
    --as-of); --restore writes one back as an undoable edit, never a git
    operation.  Exit 1 when the vault is not in a git repository.

    \b
    Examples:
      memlens history ./vaults atlas/obs-2026-11-01-001
      memlens history ./vaults studio-lease-832e6e --at HEAD~3
      memlens history ./vaults studio-lease-832e6e --restore 1a2b3c4d --dry-run
    """
    if at is not None and restore is not None:
        raise click.UsageError("--at and --restore: give one")
    if dry_run and restore is None:
        raise click.UsageError("--dry-run goes with --restore")
    h = _history(path, memory_id, writing=restore is not None and not dry_run)
    if restore is not None:
        _restore(h, restore, dry_run)
        return
    if at is not None:
        _print_version(h, at, resolve_as_of(as_of), as_json)
        return
    if as_json:
        from memlens.core.history.records import history_record

        emit_json(history_record(h, path))
        return
    _print_history(h)
