"""The `memlens` command group: the CLI contract of DESIGN.md over memlens.core.

`memlens [PATH ...]` opens the app; every other command is a subcommand.  JSON
goes to stdout, messages to stderr.  Exit codes: 0 ok, 1 problems found or
operation refused, 2 usage error.

This module is the root group, its global options and the table of commands.
Each command lives in the module of its group and is imported only when it is
used (see lazy.py), so `--version`, `--help` and completion stay light.
"""

from __future__ import annotations

from typing import Any

import click

from memlens.core.errors import MemlensError

from .common import EXIT_PROBLEMS, config_option, echo, error_line, no_cache_option
from .lazy import LazyCommand, LazyGroup

#: Every subcommand: where it lives and its one-line help for the root `--help`.
COMMANDS: dict[str, LazyCommand] = {
    name: LazyCommand(f"memlens.tui.cli.{address}", summary, hidden=name == "open")
    for name, address, summary in (
        ("open", "launch:open_app", "Open the app on PATH ..."),
        (
            "demo",
            "launch:demo",
            "Open the app on a fresh temporary copy of the bundled demo vaults.",
        ),
        (
            "list",
            "browse:list_cmd",
            "Every memory below PATH, with its native status and unified health.",
        ),
        ("show", "browse:show", "One memory: metadata, decay and body."),
        (
            "validate",
            "browse:validate",
            "Every invalid file, section or line, and every flagged reference.",
        ),
        ("decay", "browse:decay", "Report what the formats' own decay rules would archive."),
        ("search", "search:search", "Ranked search of every memory below PATH."),
        (
            "preview",
            "preview:preview",
            "What each agent below PATH loads at start and would recall for --prompt.",
        ),
        (
            "secrets",
            "privacy:secrets",
            "Secrets and personal data in every memory below PATH, masked; exit 1 if any.",
        ),
        (
            "redact",
            "privacy:redact",
            "Replace each secret in memory ID by [REDACTED:<kind>], or erase the memory.",
        ),
        (
            "review",
            "review:review",
            "Near-duplicates and possible contradictions to review; merge, supersede, dismiss.",
        ),
        (
            "graph",
            "graph:graph",
            "The links around memory ID, or (--health) every broken link below PATH.",
        ),
        (
            "history",
            "history:history",
            "Every commit that changed memory ID, newest first, with its diff (needs git).",
        ),
        (
            "watch",
            "watch:watch",
            "Print one line per change to the vaults below PATH until interrupted.",
        ),
        (
            "pin",
            "actions:pin",
            "Pin a memory so it never fades (per format: dc:ttl=never, pinned: true, "
            "a pin view, or a move to vault/).",
        ),
        ("unpin", "actions:unpin", "Undo a pin."),
        (
            "archive",
            "actions:archive",
            "Archive a memory (a move, an archive entry or a WAL op; never a deletion).",
        ),
        ("restore", "actions:restore", "Bring an archived memory back."),
        (
            "ref",
            "actions:ref_cmd",
            "Project Ocean (second generation): the references run, as memory-ref.py.",
        ),
        (
            "set",
            "actions:set_fields",
            "Validated metadata edit: only the changed fields' lines are rewritten.",
        ),
        (
            "undo",
            "actions:undo_cmd",
            "Undo the last action recorded in the vault's journal (.memlens/journal.jsonl).",
        ),
        (
            "promote",
            "actions:promote",
            "Promote a memory, or (no ID) run Project Ocean's promote over PATH.",
        ),
        (
            "recover",
            "recover:recover_cmd",
            "Roll back actions a crash interrupted, and report (exit 1 if one needs you).",
        ),
        (
            "dream",
            "dream:dream",
            "Dream Cycle runs: the decay run and the dream-log type distribution.",
        ),
        (
            "reindex",
            "cognitive:reindex",
            "Rebuild _index.json from the memory files (the files are the source of truth).",
        ),
        (
            "core",
            "cognitive:core",
            "Regenerate CORE.md: the highest-scoring memories, grouped by type.",
        ),
        (
            "reflection",
            "cognitive:reflection",
            "Regenerate REFLECTION.md: themes, cross-project tags, most accessed, insights.",
        ),
        (
            "rescore",
            "cognitive:rescore",
            "Recompute the decay_score values stored in _state.json (the system's `decay`).",
        ),
        (
            "access",
            "cognitive:access",
            "Count one access of a memory in _state.json (as the system's `get` does).",
        ),
        (
            "locate",
            "ecosystem:locate",
            "Print where memlens keeps its settings, cache and journals.",
        ),
        (
            "serve",
            "ecosystem:serve",
            "Open the app in a browser tab, served by textual-serve on this machine.",
        ),
        (
            "completion",
            "ecosystem:completion",
            "Print the shell completion script for SHELL (bash, zsh or fish).",
        ),
    )
}


#: Group options that take a value (needed to find the first real argument).
_GROUP_VALUE_OPTIONS: set[str] = {"--config"}
#: Group flags (no value), skipped the same way.
_GROUP_FLAGS: set[str] = {"--no-cache"}


class _AppByDefaultGroup(LazyGroup):
    """A group where `memlens PATH ...` (no subcommand) means `memlens open PATH ...`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        i = 0
        while i < len(args):
            tok = args[i]
            if tok in _GROUP_VALUE_OPTIONS:
                i += 2
                continue
            if tok in _GROUP_FLAGS:
                i += 1
                continue
            if tok in ("--help", "-h", "--version"):
                return super().parse_args(ctx, args)
            if tok.startswith("-") and tok.split("=", 1)[0] in _GROUP_VALUE_OPTIONS:
                i += 1
                continue
            break
        if i >= len(args) and ctx.resilient_parsing:
            # Shell completion of the first word: offer commands, not paths.
            return super().parse_args(ctx, args)
        if i >= len(args) or not self.has_command(args[i]):
            args = [*args[:i], "open", *args[i:]]
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; a failure core did not expect to be asked about is one line.

        Commands report refusals themselves; this catches what gets past
        them (a read-only file system, a full disk, a FIFO where a state file
        belongs): one line naming the path, exit 1, never a traceback.
        """
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise
        except (MemlensError, OSError) as exc:
            echo(f"memlens: {error_line(exc)}", err=True)
            ctx.exit(EXIT_PROBLEMS)


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """`--version` given with other options (alone, `main` answers it before click loads)."""
    if not value or ctx.resilient_parsing:
        return
    from .main import version_line

    echo(version_line())
    ctx.exit()


@click.group(
    cls=_AppByDefaultGroup,
    lazy=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="Example: memlens ~/agent-memory --as-of 2026-11-22",
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and exit.",
)
@config_option
@no_cache_option
def cli() -> None:
    """Browse, triage and fix AI-agent memory vaults.

    With no command, opens the app on PATH (default: the current directory).
    """
