"""`memlens graph`: a memory's neighbourhood, or the health of every link.

    memlens graph PATH ID [--depth N] [--json]
    memlens graph PATH --health [--json]

Exit codes: 0 ok, 1 health problems found (or the ID is unknown), 2 usage error.
"""

from __future__ import annotations

import shutil
import sys
from datetime import date
from pathlib import Path
from typing import Any

import click

from memlens.core.graph import (
    MAX_DEPTH,
    MIN_DEPTH,
    MemoryGraph,
    NodeKey,
    build_graph,
    health_records,
    layout_neighbourhood,
    neighbourhood_json,
)
from memlens.core.text.sanitize import one_line

from .common import (
    EXIT_PROBLEMS,
    as_of_option,
    echo,
    emit_json,
    json_option,
    load_catalog,
    resolve_as_of,
)


@click.command("graph")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.argument("memory_id", metavar="[ID]", required=False)
@click.option(
    "--depth",
    type=click.IntRange(MIN_DEPTH, MAX_DEPTH),
    default=1,
    show_default=True,
    help="Links to follow from ID, in either direction.",
)
@click.option("--health", "health", is_flag=True, help="List every broken link and orphan.")
@click.option(
    "--width",
    type=click.IntRange(20, 1000),
    default=None,
    help="Line width of the drawing (default: the terminal's).",
)
@as_of_option
@json_option
def graph(
    path: Path,
    memory_id: str | None,
    depth: int,
    health: bool,
    width: int | None,
    as_of: date | None,
    as_json: bool,
) -> None:
    """The links around memory ID, or (--health) every broken link below PATH.

    ID may also be a view or stance id (experience-records).  --health lists
    dangling, unsafe and tombstoned references, orphans (memories with no
    link in or out), one-way relations and forbidden cycles, and exits 1 if
    there are any.

    Examples: memlens graph ./vaults 0539aa56-... --depth 2;
    memlens graph ./vaults --health --json
    """
    if health and memory_id is not None:
        raise click.UsageError("give either ID or --health, not both")
    if not health and memory_id is None:
        raise click.UsageError("give a memory ID, or --health")
    catalog = load_catalog(path)
    g = build_graph(catalog)
    if health:
        _health(g, path, as_json)
        return
    key = _find(g, memory_id or "")
    nb = g.neighbourhood(key, depth)
    if as_json:
        emit_json(neighbourhood_json(g, nb, path, resolve_as_of(as_of)))
        return
    cols = width or shutil.get_terminal_size((100, 24)).columns
    for row in layout_neighbourhood(g, nb, width=cols, max_rows=200):
        echo(row.text)


def _find(g: MemoryGraph, memory_id: str) -> NodeKey:
    keys = g.find(memory_id)
    if len(keys) == 1:
        return keys[0]
    if not keys:
        echo(f"memlens: no memory with id {one_line(memory_id)!r}", err=True)
    else:
        where = ", ".join(k[0] for k in keys)
        echo(
            f"memlens: id {one_line(memory_id)!r} is in several vaults ({where}); "
            "give one of them as PATH",
            err=True,
        )
    sys.exit(EXIT_PROBLEMS)


def _health(g: MemoryGraph, base: Path, as_json: bool) -> None:
    records = health_records(g, base)
    if as_json:
        emit_json(records)
    else:
        _print_health(records)
    if records:
        sys.exit(EXIT_PROBLEMS)


_SECTIONS = (
    ("reference", "Broken references"),
    ("one_way", "One-way relations"),
    ("cycle", "Cycles"),
    ("orphan", "Orphans"),
)


def _where(r: dict[str, Any]) -> str:
    vault = str(r.get("vault") or ".")
    path = r.get("path")
    at = f"{vault}/{path}" if path and vault != "." else str(path or vault)
    if r.get("line"):
        at += f":{r['line']}"
    shown: str = one_line(at)
    return shown


def _print_health(records: list[dict[str, Any]]) -> None:
    for kind, heading in _SECTIONS:
        items = [r for r in records if r.get("kind") == kind]
        if not items:
            continue
        echo(f"{heading} ({len(items)})")
        for r in items:
            echo("  " + _health_line(kind, r))
        echo("")
    counts = {k: sum(1 for r in records if r.get("kind") == k) for k, _ in _SECTIONS}
    echo(
        f"{counts['reference']} broken reference(s), {counts['one_way']} one-way relation(s), "
        f"{counts['cycle']} cycle(s), {counts['orphan']} orphan(s)",
        err=True,
    )


def _health_line(kind: str, r: dict[str, Any]) -> str:
    rid = one_line(str(r.get("id")))
    if kind == "reference":
        return (
            f"{r['reason']:<22} {rid}  {one_line(str(r['field']))} -> "
            f"{one_line(str(r['ref']))}  ({_where(r)})"
        )
    if kind == "one_way":
        return (
            f"{r['type']} {one_line(str(r['source']))} -> {one_line(str(r['target']))}: "
            f"written as {r['direction'] or 'outgoing'} on {rid}, "
            f"no {r['expected_direction']} twin on {one_line(str(r['missing_on']))}  "
            f"({_where(r)})"
        )
    if kind == "cycle":
        steps = " -> ".join(one_line(str(u)) for u, _ in r["cycle"])
        return f"{r['field']} cycle in {r['format']}: {steps} -> {one_line(str(r['cycle'][0][0]))}"
    title = one_line(str(r.get("title") or ""), 60)
    return f"{rid}  {title}  ({_where(r)})"
