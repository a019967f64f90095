"""`memlens dream`: Dream Cycle's own runs (decay, and the dream-log type report).

    memlens dream decay PATH [--as-of D] [--dry-run] [--json]
    memlens dream report PATH [--as-of D] [--json]

PATH may be one Dream Cycle vault or a folder holding several (every Dream
Cycle vault below it is run).  The decay run is one journaled action per
vault, so `memlens undo VAULT` reverts it.
"""

from __future__ import annotations

import sys
from datetime import date
from pathlib import Path
from typing import Any

import click

from memlens.core import MemlensError
from memlens.core.formats import info_for
from memlens.core.formats.dream_cycle.runs import decay_run, type_distribution
from memlens.core.scan.vault import Vault, discover
from memlens.core.text.sanitize import one_line
from memlens.core.write.journal import apply_plan

from .common import (
    EXIT_PROBLEMS,
    as_of_option,
    echo,
    emit_json,
    json_option,
    resolve_as_of,
)
from .recover import recover_roots


def _vaults(path: Path) -> list[Vault]:
    try:
        found = [v for v in discover(path) if info_for(v.format).has_decay_run]
    except MemlensError as exc:
        raise click.UsageError(str(exc)) from None
    if not found:
        raise click.UsageError(f"no Dream Cycle vault found at or below {path}")
    recover_roots(v.root for v in found)
    return found


@click.group("dream")
def dream() -> None:
    """Dream Cycle runs: the decay run and the dream-log type distribution."""


@dream.command("decay")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@as_of_option
@click.option("--dry-run", is_flag=True, help="Show what the run would change; write nothing.")
@json_option
def decay_cmd(path: Path, as_of: date | None, dry_run: bool, as_json: bool) -> None:
    """Run Dream Cycle's decay: archive expired sections, write back decayed importance.

    Sections whose TTL expired or whose importance fell below 3.0 move to
    archive.jsonl (ttl=never ones are kept); the decayed importance of the
    others is written to dc:importance with dc:decayed=<as-of>, so later runs
    never compound.  One undoable action per vault.

    Example: memlens dream decay ./vaults/dream-cycle --as-of 2026-11-22 --dry-run
    """
    when = resolve_as_of(as_of)
    out: list[dict[str, Any]] = []
    failed = 0
    for v in _vaults(path):
        record: dict[str, Any] = {"vault": v.rel}
        try:
            plan, report = decay_run(v.root, when)
            record.update(report.to_dict(), vault=v.rel, summary=plan.summary)
            applied = False
            if plan.changes and not dry_run:
                apply_plan(plan)
                applied = True
            record["applied"] = applied
        except MemlensError as exc:
            failed += 1
            record["error"] = str(exc)
            echo(f"memlens: {v.rel}: decay refused: {one_line(str(exc))}", err=True)
            out.append(record)
            continue
        out.append(record)
        if not as_json:
            _print_decay(v.rel, str(v.root), plan.summary, report.to_dict(), dry_run, applied)
    if as_json:
        emit_json(out)
    if failed:
        sys.exit(EXIT_PROBLEMS)


def _print_decay(
    rel: str, root: str, summary: str, report: dict[str, Any], dry_run: bool, applied: bool
) -> None:
    echo(f"{rel}: {one_line(summary)}")
    for item in report["archived"]:
        echo(
            f"  archive {one_line(item['id'])} -> {item['archive_id']}"
            f"  ({one_line('; '.join(item['reasons']))})"
        )
    for item in report["decayed"]:
        echo(
            f"  decay   {one_line(item['id'])}"
            f"  importance {item['importance']} -> {item['current_importance']}"
        )
    for item in report["kept"]:
        echo(
            f"  keep    {one_line(item['id'])}"
            f"  (ttl=never; would be: {one_line('; '.join(item['reasons']))})"
        )
    if dry_run:
        echo("dry run: nothing written", err=True)
    elif applied:
        echo(f"done (memlens undo {root} reverts it)", err=True)


@dream.command("report")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@as_of_option
@json_option
def report_cmd(path: Path, as_of: date | None, as_json: bool) -> None:
    """Dream-log type distribution: observations per type (reads only).

    Tagged sections count under their effective type; untagged ones under the
    type the spec's classification rules suggest.

    Example: memlens dream report ./vaults/dream-cycle --as-of 2026-11-22
    """
    when = resolve_as_of(as_of)
    out: list[dict[str, Any]] = []
    for v in _vaults(path):
        dist = type_distribution(v.root, when)
        if as_json:
            out.append({**dist.to_dict(), "vault": v.rel})
            continue
        echo(f"# {v.rel}")
        echo(dist.to_markdown())
    if as_json:
        emit_json(out)


__all__ = ["dream"]
