"""Commands that open the app: `memlens [PATH ...]` (the hidden `open`) and `demo`.

Textual and the engine load only here, once the app is really wanted.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from datetime import date
from pathlib import Path

import click

from memlens.core.config import load_config
from memlens.core.demo import copy_demo

from .common import as_of_option, config_path_option, current_config, echo, use_cache


@click.command("open", hidden=True)
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@as_of_option
def open_app(paths: tuple[Path, ...], as_of: date | None) -> None:
    """Open the app on PATH ... (default: the config's vaults, else the current directory)."""
    config = current_config()
    targets = list(paths) or list(config.vaults) or [Path.cwd()]
    missing = [p for p in targets if not p.exists()]
    if missing:
        raise click.UsageError(f"no such path: {missing[0]}")
    _run_app(targets, as_of)


def _run_app(paths: list[Path], as_of: date | None) -> None:
    from ..app import run_app  # Textual: only once the app is really opening

    config = current_config()
    # The app applies the rest of the settings (theme, keymap, cache, editor,
    # tracking) and repeats the file's warnings where the user can see them.
    _again, warnings = load_config(config_path_option())
    if not use_cache():
        config = dataclasses.replace(config, cache=False)
    run_app(paths, config.resolve_as_of(as_of, date.today()), config, warnings)


@click.command()
@as_of_option
@click.option("--keep", is_flag=True, help="Keep the temporary copy and print where it is.")
def demo(as_of: date | None, keep: bool) -> None:
    """Open the app on a fresh temporary copy of the bundled demo vaults.

    The bundle itself is never modified: edits land in the copy.

    Example: memlens demo
    """
    tmp = Path(tempfile.mkdtemp(prefix="memlens-demo-"))
    try:
        root = copy_demo(tmp)
        echo(f"demo vaults copied to {root}", err=True)
        _run_app([root], as_of)
    finally:
        if keep:
            echo(f"kept {tmp}", err=True)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
