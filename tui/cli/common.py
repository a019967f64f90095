"""What every CLI command shares: options, catalog loading, output, exit codes."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from memlens.core.config import CONFIG_ENV, Config, load_config
from memlens.core.errors import MemlensError
from memlens.core.text.sanitize import json_text, one_line, visible

from .jsonout import iter_indented

if TYPE_CHECKING:
    from memlens.core import Catalog
    from memlens.core.model import Memory
    from memlens.core.scan.vault import Vault

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
    """Open every vault below the paths, or exit 2 with a clear message.

    Unchanged files come from each vault's store in the user cache folder
    (`memlens.core.store`) unless `--no-cache` was given: a stat walk, then
    only new or changed files are read, and their rows saved.
    """
    # The engine loads here, not on import: `--help` and `--version` skip it.
    from memlens.core import open_catalog

    return _checked(paths, lambda: (open_catalog(*paths, cache=use_cache()), _nothing))[0]


def load_catalog_unsaved(*paths: str | Path) -> tuple[Catalog, Callable[[], None]]:
    """`load_catalog`, but the stores are written by the call returned (`open_catalog_unsaved`).

    For a command that next waits on another process: run the call in a
    thread meanwhile, and join it before exiting.
    """
    from memlens.core.scan.deferred import open_catalog_unsaved

    return _checked(paths, lambda: open_catalog_unsaved(*paths, cache=use_cache()))


def vaults_as_stored(*paths: str | Path) -> list[Vault] | None:
    """The vaults below the paths, unscanned, for a command served from the cache alone.

    None (open the catalog instead) with `--no-cache`, when a folder could
    not be read (the catalog reports it), or when an interrupted action was
    just rolled back (files changed), as `load_catalog` does.
    """
    if not use_cache():
        return None
    from memlens.core.scan.vault import survey_all

    from .recover import recover_roots

    found = survey_all(*paths)
    if found.unreadable or recover_roots(v.root for v in found.vaults):
        return None
    vaults: list[Vault] = found.vaults
    return vaults


def stored_memory(path: Path, memory_id: str) -> Memory | None:
    """The memory from the search index `memlens search` kept, when no file changed.

    Why: opening the catalog decodes every memory (seconds at 100k); the
    index holds each memory as linked, so a stat walk and one row answer.
    None: no such index, a file changed, or the id is not exactly one
    memory's; the catalog then answers (and explains a missing id).
    """
    vaults = vaults_as_stored(path)
    if vaults is None:
        return None
    from memlens.core.search.fresh_check import fresh_memory

    return fresh_memory(vaults, memory_id)


def _nothing() -> None:
    return None


def _checked(
    paths: tuple[str | Path, ...], opener: Callable[[], tuple[Catalog, Callable[[], None]]]
) -> tuple[Catalog, Callable[[], None]]:
    """`opener`'s catalog, checked for vaults, and opened again after a crash recovery."""
    try:
        catalog, save = opener()
    except MemlensError as exc:
        raise click.UsageError(str(exc)) from None
    if not catalog.vaults:
        where = ", ".join(str(p) for p in paths)
        refused = "".join(f"; {one_line(p.path)}: {one_line(p.detail)}" for p in catalog.unreadable)
        raise click.UsageError(f"no memory vault found at or below {where}{refused}")
    from .recover import recover_roots  # recovery needs echo from here

    if recover_roots(v.root for v in catalog.vaults):
        # An interrupted action was rolled back: read the vaults as they are now
        # (the first read's rows are written first, as `open_catalog` does).
        save()
        try:
            catalog, save = opener()
        except MemlensError as exc:
            raise click.UsageError(str(exc)) from None
    return catalog, save


def error_line(exc: BaseException) -> str:
    """One line for an error: an OSError names its path and says what the system said."""
    if isinstance(exc, OSError) and not isinstance(exc, MemlensError):
        where = f"{exc.filename}: " if exc.filename else ""
        text = f"{where}{exc.strerror or exc}"
    else:
        text = str(exc)
    line: str = one_line(text)
    return line


def emit_json(data: Any) -> None:
    """JSON to stdout, UTF-8, stable key order, no raw control or bidi characters."""
    write = sys.stdout.write
    for piece in iter_indented(data):  # the same text as dumps_indented, one record at a time
        write(json_text(piece))
    write("\n")


def echo(message: object = "", *, err: bool = False, nl: bool = True) -> None:
    """click.echo with every control and bidi character made visible.

    Text the CLI prints may carry vault content (titles, ids, file names,
    error messages naming files), so nothing reaches the terminal raw.
    """
    click.echo(visible(str(message)), err=err, nl=nl)


def is_terminal() -> bool:
    return sys.stdout.isatty()


# ------------------------------------------------------------------ cache

#: Where `--no-cache` leaves its value (shared by every context of one invocation).
NO_CACHE_META = "memlens.no_cache"


def _no_cache_callback(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta[NO_CACHE_META] = True


no_cache_option = click.option(
    "--no-cache",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_no_cache_callback,
    help="Read every file and leave the per-vault store in the user cache folder alone.",
)


def use_cache(ctx: click.Context | None = None) -> bool:
    """False when `--no-cache` was given anywhere on this command line."""
    ctx = ctx or click.get_current_context(silent=True)
    return not (ctx is not None and ctx.meta.get(NO_CACHE_META))


# ------------------------------------------------------------------ config

#: Where `--config` leaves its value: `ctx.meta` is shared by every context of
#: one invocation, so the option works on the group and on any subcommand.
CONFIG_PATH_META = "memlens.config_path"
_CONFIG_META = "memlens.config"


def _config_callback(ctx: click.Context, param: click.Parameter, value: Path | None) -> None:
    if value is not None:
        ctx.meta[CONFIG_PATH_META] = value
        ctx.meta.pop(_CONFIG_META, None)  # a later --config wins over a loaded one


config_option = click.option(
    "--config",
    "config_path",
    metavar="PATH",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    expose_value=False,
    is_eager=True,
    callback=_config_callback,
    help=f"Read settings from this TOML file (default: ${CONFIG_ENV}, "
    "then the file `memlens locate config` prints).",
)


def config_path_option(ctx: click.Context | None = None) -> Path | None:
    """The `--config` value given anywhere on this command line, if any."""
    ctx = ctx or click.get_current_context(silent=True)
    if ctx is None:
        return None
    value = ctx.meta.get(CONFIG_PATH_META)
    return value if isinstance(value, Path) else None


def current_config(ctx: click.Context | None = None) -> Config:
    """The settings for this invocation, read once; each warning goes to stderr once."""
    ctx = ctx or click.get_current_context(silent=True)
    if ctx is not None:
        cached = ctx.meta.get(_CONFIG_META)
        if isinstance(cached, Config):
            return cached
    config, warnings = load_config(config_path_option(ctx))
    for warning in warnings:
        echo(f"memlens: warning: {warning}", err=True)
    if ctx is not None:
        ctx.meta[_CONFIG_META] = config
    return config


@contextmanager
def progress(total: int, label: str) -> Iterator[Callable[[], None]]:
    """A rich progress bar on stderr for long work; silent when stderr is not a terminal.

    Yields a function to call once per finished item.
    """
    if total < 2 or not sys.stderr.isatty():
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task(label, total=total)
        yield lambda: bar.advance(task)
