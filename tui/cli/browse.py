"""Browsing commands: `list`, `show`, `validate` and `decay` over a catalog.

Tables go to a terminal through rich, tab-separated lines go to a pipe, and
`--json` prints the records of DESIGN.md's CLI contract.
"""

from __future__ import annotations

import sys
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from memlens.core.decay import archive_candidates, decay_of
from memlens.core.errors import NotFoundError
from memlens.core.model import Memory
from memlens.core.records import jsonable, memory_record, problem_record, ref_problem_record
from memlens.core.text.sanitize import one_line, visible

from .common import (
    EXIT_PROBLEMS,
    as_of_option,
    echo,
    emit_json,
    is_terminal,
    json_option,
    load_catalog,
    resolve_as_of,
    stored_memory,
)

if TYPE_CHECKING:
    from memlens.core.scan.vault import Catalog

# -------------------------------------------------------------------- list


def _emit_table(headers: list[str], rows: list[list[str]], title: str | None = None) -> None:
    """A rich table on a terminal; tab-separated plain lines when piped."""
    if is_terminal():
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text

        table = Table(title=title, show_lines=False, header_style="bold")
        for h in headers:
            table.add_column(h, overflow="fold")
        for row in rows:
            table.add_row(*(Text(one_line(cell)) for cell in row))
        Console().print(table)
        return
    echo("\t".join(headers))
    for row in rows:
        echo("\t".join(cell.replace("\t", " ") for cell in row))


def _fmt_num(value: float | str | None, digits: int = 2) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _decay_cell(m: Memory, as_of: date) -> str:
    d = decay_of(m, as_of)
    if d.expires_on is not None:
        return f"until {d.expires_on.isoformat()}"
    if d.age_days is not None:
        return f"{d.age_days}d old"
    if d.days_elapsed is not None:
        return f"{d.days_elapsed}d"
    return ""


@click.command("list")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@as_of_option
@json_option
@click.option("--all", "show_all", is_flag=True, help="Include invalid items too.")
def list_cmd(path: Path, as_of: date | None, as_json: bool, show_all: bool) -> None:
    """Every memory below PATH, with its native status and unified health.

    Archived and tombstoned memories are included.

    Example: memlens list ./vaults --as-of 2026-11-22 --json
    """
    when = resolve_as_of(as_of)
    catalog = load_catalog(path)
    if as_json:
        out: list[dict[str, Any]] = [memory_record(m, when, path) for m in catalog.memories()]
        if show_all:
            for p in catalog.problems():
                rec = problem_record(p, path)
                rec["health"] = "invalid"
                out.append(rec)
        emit_json(out)
        return
    rows = []
    for m in catalog.memories():
        d = decay_of(m, when)
        rows.append(
            [
                m.format,
                one_line(m.id, 40),
                one_line(m.title, 60),
                m.kind,
                d.status,
                d.health.value,
                _fmt_num(m.importance),
                _fmt_num(m.confidence),
                _decay_cell(m, when),
            ]
        )
    if show_all:
        for p in catalog.problems():
            rows.append(
                [
                    p.format,
                    one_line(p.id or "", 40),
                    one_line(p.title or p.path, 60),
                    "",
                    "",
                    "invalid",
                    "",
                    "",
                    p.reason.value,
                ]
            )
    headers = ["format", "id", "title", "kind", "status", "health", "imp", "conf", "decay"]
    _emit_table(headers, rows, title=f"memories as of {when.isoformat()}")


# ---------------------------------------------------------------- validate


@click.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@json_option
def validate(path: Path, as_json: bool) -> None:
    """Every invalid file, section or line, and every flagged reference.

    Exits 1 when anything is found.

    Example: memlens validate ./vaults --json
    """
    catalog = load_catalog(path)
    invalid = [problem_record(p, path) for p in catalog.problems()]
    refs = [ref_problem_record(r, path) for r in catalog.ref_problems()]
    if as_json:
        emit_json(invalid + refs)
    else:
        rows = [
            [
                r["format"],
                one_line(r["path"]),
                str(r.get("line") or r.get("index") or ""),
                r["reason"],
                one_line(r["detail"], 100),
            ]
            for r in invalid
        ]
        rows += [
            [
                r["format"],
                one_line(r["path"]),
                str(r.get("line") or ""),
                r["reason"],
                one_line(f"{r['field']} -> {r['ref']}", 100),
            ]
            for r in refs
        ]
        if rows:
            _emit_table(["format", "path", "at", "reason", "detail"], rows, title="problems")
        total = sum(len(v.memories) for v in catalog.vaults)
        echo(
            f"{len(catalog.vaults)} vault(s), {total} valid memories, "
            f"{len(invalid)} invalid, {len(refs)} flagged reference(s)",
            err=True,
        )
    if invalid or refs:
        sys.exit(EXIT_PROBLEMS)


# -------------------------------------------------------------------- show


def _find(catalog: Catalog, memory_id: str) -> Memory:
    try:
        return catalog.get(memory_id)
    except NotFoundError as exc:
        echo(f"memlens: {exc}", err=True)
        sys.exit(EXIT_PROBLEMS)


@click.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.argument("memory_id", metavar="ID")
@as_of_option
@json_option
def show(path: Path, memory_id: str, as_of: date | None, as_json: bool) -> None:
    """One memory: metadata, decay and body.

    Example: memlens show ./vaults hawk/obs-2026-11-19-001
    """
    when = resolve_as_of(as_of)
    m = stored_memory(path, memory_id) or _find(load_catalog(path), memory_id)
    d = decay_of(m, when)
    rec = memory_record(m, when, path, d)
    rec["body"] = m.body
    rec["fields"] = jsonable(m.fields)
    rec["why"] = d.why
    if as_json:
        emit_json(rec)
        return
    echo(visible(m.title, keep_newlines=False))
    echo(f"{m.format} · {m.kind} · {d.status} ({d.health.value}) · {m.path}")
    if d.why:
        echo(visible(d.why))
    echo("")
    for key, value in rec["fields"].items():
        echo(f"  {one_line(str(key))}: {one_line(str(value), 200)}")
    if m.relations:
        echo("\nrelations:")
        for r in m.relations:
            state = "" if r.resolved else "  (unresolved)"
            echo(f"  {r.type} -> {one_line(r.target, 120)}{state}")
    echo("")
    echo(visible(m.body))


# ------------------------------------------------------------------- decay


@click.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@as_of_option
@json_option
@click.option("--apply", "apply_", is_flag=True, help="Archive the candidates (safe, undoable).")
def decay(path: Path, as_of: date | None, as_json: bool, apply_: bool) -> None:
    """Report what the formats' own decay rules would archive.

    Dream Cycle: TTL expired, and importance below 3.0 (both labelled);
    Project Ocean: age past the lifespan (first generation), or importance
    below 0.2, or past the effective max age with importance below 0.4
    (second generation); cognitive memory: score below 0.05.  Pinned
    memories are never candidates.  Project Ocean's second generation also
    writes back its neglect penalty (recorded in neglect_penalty, so it never
    compounds) and extends max_age ×1.5 past the max age at importance 0.7+;
    files at 0.4-0.7 past it are flagged for review (status review).  With
    --apply all of it is one journaled transaction per vault (memlens undo).

    Example: memlens decay ./vaults --as-of 2026-11-22
    """
    when = resolve_as_of(as_of)
    catalog = load_catalog(path)
    cands = archive_candidates(catalog, when)
    writes = [w for v in catalog.vaults for w in v.adapter.decay_writebacks(v.memories, when)]
    if apply_:
        from .actions import decay_apply

        refused = decay_apply(catalog, cands, when, writes)
        done = len(cands) + len(writes) - refused
        echo(
            f"{done} changed ({len(cands)} to archive, {len(writes)} to write back), "
            f"{refused} refused",
            err=True,
        )
        if refused:
            sys.exit(EXIT_PROBLEMS)
        return
    for w in writes:
        echo(f"would write {one_line(w.memory.id)}: {one_line(w.why)}", err=True)
    if as_json:
        emit_json(
            [{**memory_record(m, when, path), "archive_reasons": reasons} for m, reasons in cands]
        )
        return
    rows = [
        [m.format, one_line(m.id, 40), one_line(m.title, 60), "; ".join(reasons)]
        for m, reasons in cands
    ]
    _emit_table(["format", "id", "title", "why"], rows, title=f"archive candidates as of {when}")
    echo(f"{len(cands)} memories would be archived", err=True)
