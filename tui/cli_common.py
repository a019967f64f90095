"""What every CLI command shares: options, catalog loading, output, exit codes."""

from __future__ import annotations

import json
import sys
from datetime import date
from pathlib import Path
from typing import Any

import click
from memlens.core import Catalog, MemlensError, open_catalog

EXIT_OK = 0
EXIT_PROBLEMS = 1  # problems found / operation refused
EXIT_USAGE = 2


def _as_of_callback(ctx: click.Context, param: click.Parameter, value: str | None) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date (YYYY-MM-DD)") from None


as_of_option = click.option(
    "--as-of",
    "as_of",
    metavar="YYYY-MM-DD",
    default=None,
    callback=_as_of_callback,
    help="Judge decay as of this date (YYYY-MM-DD). Default: today.",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON to stdout.")


def resolve_as_of(as_of: date | None) -> date:
    """The explicit date, or today: the only place the CLI reads the clock."""
    return as_of if as_of is not None else date.today()


def load_catalog(*paths: str | Path) -> Catalog:
    """Open every vault below the paths, or exit 2 with a clear message."""
    try:
        catalog = open_catalog(*paths)
    except MemlensError as exc:
        raise click.UsageError(str(exc)) from None
    if not catalog.vaults:
        where = ", ".join(str(p) for p in paths)
        raise click.UsageError(f"no memory vault found at or below {where}")
    return catalog


def emit_json(data: Any) -> None:
    """JSON to stdout, UTF-8, stable key order."""
    json.dump(data, sys.stdout, ensure_ascii=False, indent=2, default=str)
    sys.stdout.write("\n")


def is_terminal() -> bool:
    return sys.stdout.isatty()
