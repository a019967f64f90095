"""Recovery of interrupted actions, at every CLI open and as `memlens recover`.

An action killed half-way (a crash, a full disk) leaves an intent record in
`<vault>/.memlens/pending/`.  Every command that reads a vault first rolls
such an action back (core/recovery.py) and says so in one stderr line per
action; `memlens recover PATH` does the same explicitly and reports.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

import click

from memlens.core.errors import MemlensError
from memlens.core.write.recovery import RecoveryReport, needs_recovery, recover

from .common import EXIT_PROBLEMS, echo, emit_json, json_option


def recover_roots(roots: Iterable[Path]) -> list[RecoveryReport]:
    """Recover each vault that holds an intent record; one stderr line per finding."""
    reports: list[RecoveryReport] = []
    for root in roots:
        if not needs_recovery(root):
            continue
        try:
            report = recover(root)
        except (MemlensError, OSError) as exc:
            echo(f"memlens: {root}: could not recover an interrupted action: {exc}", err=True)
            continue
        for line in report.lines():
            echo(f"memlens: {line}", err=True)
        reports.append(report)
    return reports


@click.command(name="recover")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@json_option
def recover_cmd(path: Path, as_json: bool) -> None:
    """Roll back actions a crash interrupted, and report (exit 1 if one needs you).

    memlens records what an action will do before it writes, so an action cut
    short (killed, disk full) is rolled back to the state before it; files
    someone changed since are kept as they are and listed.  Every command
    that reads a vault does this on its own; this command reports it.

    Example: memlens recover ./vaults --json
    """
    from memlens.core.scan.vault import discover  # every format: not for --help

    try:
        vaults = discover(path)
    except MemlensError as exc:
        raise click.UsageError(str(exc)) from None
    reports: list[RecoveryReport] = []
    for v in vaults:
        try:
            reports.append(recover(v.root, sweep=True))
        except (MemlensError, OSError) as exc:
            report = RecoveryReport(v.root)
            report.conflicts.append(f"could not recover: {exc}")
            reports.append(report)
    if as_json:
        emit_json([r.to_dict() for r in reports])
    else:
        for r in reports:
            for line in r.lines():
                echo(f"memlens: {line}", err=True)
            if r.busy:
                echo(f"memlens: {r.root}: another memlens process is writing; try again", err=True)
        fixed = sum(len(r.rolled_back) + len(r.finished) for r in reports)
        echo(f"{len(reports)} vault(s) checked, {fixed} interrupted action(s) recovered", err=True)
    if any(r.needs_user or r.busy for r in reports):
        sys.exit(EXIT_PROBLEMS)
