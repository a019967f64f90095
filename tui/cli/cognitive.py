"""Cognitive-memory maintenance commands: the system's own `client.py` runs, in memlens.

    memlens reindex PATH [--as-of D] [--dry-run]      rebuild _index.json
    memlens core PATH [--as-of D] [--dry-run]         regenerate CORE.md
    memlens reflection PATH [--as-of D] [--dry-run]   regenerate REFLECTION.md
    memlens rescore PATH [--as-of D] [--dry-run]      recompute _state.json decay_score values
    memlens access PATH ID [--dry-run]                count one access in _state.json

PATH may hold several vaults: every cognitive-memory vault below it is
processed.  --dry-run prints what would change (a diff) and writes nothing.
Every write is journaled: `memlens undo PATH` reverses it.

Exit codes: 0 ok, 1 refused (conflict, invalid input, write error), 2 usage.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Callable
from datetime import UTC, date, datetime
from functools import partial
from pathlib import Path

import click

from memlens.core import MemlensError, NotFoundError, discover
from memlens.core.formats import info_for
from memlens.core.formats.cognitive_memory.runs import plan_core, plan_reindex
from memlens.core.formats.cognitive_memory.runs_reflection import plan_reflection
from memlens.core.formats.cognitive_memory.runs_state import plan_decay_scores, plan_record_access
from memlens.core.safe_io import read_regular
from memlens.core.write.journal import Plan, apply_plan

from .common import EXIT_PROBLEMS, as_of_option, echo, load_catalog, resolve_as_of
from .recover import recover_roots

dry_run_option = click.option(
    "--dry-run", "dry_run", is_flag=True, help="Show what would change; write nothing."
)


def _now(as_of: date | None) -> datetime:
    """The time written into files: midnight UTC of --as-of, else the clock (read only here)."""
    if as_of is not None:
        return datetime(as_of.year, as_of.month, as_of.day, tzinfo=UTC)
    return datetime.now(UTC).replace(microsecond=0)


def cognitive_roots(path: Path) -> list[Path]:
    """Every cognitive-memory vault root at or below `path` (usage error if none)."""
    try:
        vaults = discover(path)
    except MemlensError as exc:
        raise click.UsageError(str(exc)) from None
    roots = [v.root for v in vaults if info_for(v.format).tracks_access]
    if not roots:
        raise click.UsageError(f"no cognitive-memory vault found at or below {path}")
    recover_roots(roots)
    return roots


def _diff(plan: Plan) -> list[str]:
    out: list[str] = []
    for c in plan.changes:
        if c.data is None:
            continue
        rel = c.path.relative_to(plan.vault_root).as_posix()
        try:
            old = read_regular(c.path).decode("utf-8") if c.kind == "write" else ""
            new = c.data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        out.extend(
            line.rstrip("\n")
            for line in difflib.unified_diff(
                old.splitlines(True), new.splitlines(True), f"a/{rel}", f"b/{rel}"
            )
        )
    return out


def run_plans(plans: list[tuple[Path, Callable[[], Plan]]], dry_run: bool) -> None:
    """Plan, then show (dry run) or apply, each vault's run; exit 1 if any was refused."""
    refused = 0
    for root, make in plans:
        try:
            plan = make()
        except (MemlensError, OSError) as exc:
            echo(f"memlens: {root}: refused: {exc}", err=True)
            refused += 1
            continue
        if not plan.changes:
            echo(f"{root}: {plan.summary} (nothing to write)")
            continue
        if dry_run:
            echo(f"{root}: would {plan.summary}")
            for line in plan.describe():
                echo(f"  {line}")
            for line in _diff(plan):
                echo(line)
            continue
        try:
            apply_plan(plan)
        except (MemlensError, OSError) as exc:
            echo(f"memlens: {root}: refused: {exc}", err=True)
            refused += 1
            continue
        echo(f"{root}: {plan.summary}")
        for line in plan.describe():
            echo(f"  {line}")
    if not dry_run and refused < len(plans):
        echo("undo with: memlens undo PATH", err=True)
    if refused:
        sys.exit(EXIT_PROBLEMS)


@click.command("reindex")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@as_of_option
@dry_run_option
def reindex(path: Path, as_of: date | None, dry_run: bool) -> None:
    """Rebuild _index.json from the memory files (the files are the source of truth).

    Its `updated` is the current time, or midnight UTC of --as-of.

    Example: memlens reindex ~/.claude/memory --dry-run
    """
    now = _now(as_of)
    run_plans(
        [(root, partial(plan_reindex, root, now)) for root in cognitive_roots(path)],
        dry_run,
    )


@click.command("core")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@as_of_option
@dry_run_option
def core(path: Path, as_of: date | None, dry_run: bool) -> None:
    """Regenerate CORE.md: the highest-scoring memories, grouped by type.

    Example: memlens core ~/.claude/memory --as-of 2026-11-22
    """
    when = resolve_as_of(as_of)
    run_plans(
        [(root, partial(plan_core, root, when)) for root in cognitive_roots(path)],
        dry_run,
    )


@click.command("reflection")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@as_of_option
@dry_run_option
def reflection(path: Path, as_of: date | None, dry_run: bool) -> None:
    """Regenerate REFLECTION.md: themes, cross-project tags, most accessed, insights.

    Example: memlens reflection ~/.claude/memory --dry-run
    """
    when = resolve_as_of(as_of)
    run_plans(
        [(root, partial(plan_reflection, root, when)) for root in cognitive_roots(path)],
        dry_run,
    )


@click.command("rescore")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@as_of_option
@dry_run_option
def rescore(path: Path, as_of: date | None, dry_run: bool) -> None:
    """Recompute the decay_score values stored in _state.json (the system's `decay`).

    Example: memlens rescore ~/.claude/memory --as-of 2026-11-22
    """
    when = resolve_as_of(as_of)
    now = _now(as_of)
    run_plans(
        [(root, partial(plan_decay_scores, root, when, now)) for root in cognitive_roots(path)],
        dry_run,
    )


@click.command("access")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.argument("memory_id", metavar="ID")
@dry_run_option
def access(path: Path, memory_id: str, dry_run: bool) -> None:
    """Count one access of a memory in _state.json (as the system's `get` does).

    Example: memlens access ~/.claude/memory 6f170630-166f-40cc-ae24-c0cbf1b3afad
    """
    catalog = load_catalog(path)
    try:
        memory = catalog.get(memory_id)
    except NotFoundError as exc:
        echo(f"memlens: {exc}", err=True)
        sys.exit(EXIT_PROBLEMS)
    if not info_for(memory.format).tracks_access:
        echo(f"memlens: {memory_id} is not a cognitive-memory memory", err=True)
        sys.exit(EXIT_PROBLEMS)
    now = _now(None)
    run_plans([(memory.vault_root, partial(plan_record_access, memory, now))], dry_run)


#: The commands this module adds to `memlens` (tui/cli.py registers them).
COMMANDS: tuple[click.Command, ...] = (reindex, core, reflection, rescore, access)
