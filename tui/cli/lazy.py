"""A click group that imports a command's module only when that command is used.

Importing every command module up front means importing the whole engine
(numpy, scipy, networkx, every format) before `memlens --version` can answer.
Here a command is a name, a "module:attribute" address and its one-line help:
the root `--help` and the completion of the first word read the table, and a
module is imported only when its command runs, completes or shows its help.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Any

import click
from click.shell_completion import CompletionItem


@dataclass(frozen=True)
class LazyCommand:
    """Where a command lives and what the root help says about it."""

    address: str
    """`"package.module:attribute"`, the attribute being the click command."""
    summary: str
    """The command's short help, exactly as click derives it from the docstring
    (tests/tui/test_cli_lazy.py checks it against the real command)."""
    hidden: bool = False
    """Left out of the help and of completion, like a hidden click command."""


class LazyGroup(click.Group):
    """A group whose subcommands load on demand from a table of `LazyCommand`s."""

    def __init__(self, *args: Any, lazy: dict[str, LazyCommand] | None = None, **attrs: Any):
        super().__init__(*args, **attrs)
        self.lazy: dict[str, LazyCommand] = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def has_command(self, name: str) -> bool:
        """Whether `name` is a subcommand, without importing anything."""
        return name in self.commands or name in self.lazy

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = self.commands.get(cmd_name)
        if command is not None or cmd_name not in self.lazy:
            return command
        module_name, _, attr = self.lazy[cmd_name].address.partition(":")
        loaded = getattr(import_module(module_name), attr)
        if not isinstance(loaded, click.Command):  # pragma: no cover - a wrong table entry
            raise TypeError(f"{self.lazy[cmd_name].address} is not a click command")
        self.commands[cmd_name] = loaded
        return loaded

    def _summaries(self, ctx: click.Context, prefix: str = "") -> list[tuple[str, click.Command]]:
        """The visible commands starting with `prefix`, as stand-ins carrying the summaries.

        A loaded command speaks for itself; a lazy one is a bare command with
        its summary as help, so click shortens it exactly as it would the real one.
        """
        rows: list[tuple[str, click.Command]] = []
        for name in self.list_commands(ctx):
            if not name.startswith(prefix):
                continue
            command = self.commands.get(name)
            if command is None:
                entry = self.lazy[name]
                command = click.Command(name, help=entry.summary, hidden=entry.hidden)
            if not command.hidden:
                rows.append((name, command))
        return rows

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = self._summaries(ctx)
        if not rows:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in rows)
        with formatter.section("Commands"):
            formatter.write_dl([(name, cmd.get_short_help_str(limit)) for name, cmd in rows])

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        items = [
            CompletionItem(name, help=cmd.get_short_help_str())
            for name, cmd in self._summaries(ctx, incomplete)
        ]
        # The group's own options (--config, --help, ...), as click.Group would add.
        items.extend(click.Command.shell_complete(self, ctx, incomplete))
        return items
