"""The `memlens` console script: `memlens --version` answered before anything loads.

The command group (`root.cli`, with click and the config) costs ~0.1 s of
imports; a bare `--version` (what scripts and installers ask first) needs
none of it.  Everything else goes to the group, which loads each command's
module only when it runs (see lazy.py).  `cli` and `COMMANDS` are still
importable from here (tests, `python -m memlens.tui.cli.main`).
"""

from __future__ import annotations

import sys
from typing import Any


def version_line() -> str:
    """What `memlens --version` prints (the installed distribution's version)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("memlens")
    except PackageNotFoundError:  # pragma: no cover - running from a checkout
        found = "0+unknown"
    return f"memlens, version {found}"


def main() -> None:
    """Console-script entry point."""
    if sys.argv[1:] == ["--version"]:
        sys.stdout.write(version_line() + "\n")
        return
    from .root import cli

    cli(prog_name="memlens")


def __getattr__(name: str) -> Any:
    """`cli` and `COMMANDS`, loaded on first use (the group's imports are not free)."""
    if name in ("cli", "COMMANDS"):
        from . import root

        return getattr(root, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":  # python -m memlens.tui.cli.main (as the timings run it)
    main()
