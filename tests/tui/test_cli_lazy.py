"""The lazy command table: light `--version`/`--help`, and summaries true to the commands."""

from __future__ import annotations

import copy
import importlib
import json
import os
import subprocess
import sys

import click
import pytest

from memlens.tui.cli.main import COMMANDS, cli

#: Runs `memlens ARGS...`, then prints the modules it imported as the last line.
WRAPPER = (
    "import json, sys\n"
    "from memlens.tui.cli.main import main\n"
    "sys.argv = ['memlens', *sys.argv[1:]]\n"
    "try:\n"
    "    main()\n"
    "except SystemExit:\n"
    "    pass\n"
    "print(json.dumps(sorted(sys.modules)))\n"
)

#: What `--version`, `--help` and completion must not load: the engine and the UI.
HEAVY = (
    "numpy",
    "scipy",
    "networkx",
    "textual",
    "rich",
    "yaml",
    "memlens.core.formats",
    "memlens.core.scan",
)


#: Every module a command lives in.
COMMAND_MODULES = {entry.address.partition(":")[0] for entry in COMMANDS.values()}


def imported_by(*args: str, env: dict[str, str] | None = None) -> tuple[str, set[str]]:
    """The output of `memlens ARGS...` and every module the process imported."""
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, *args],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    output, _, modules = done.stdout.rstrip("\n").rpartition("\n")
    return output, set(json.loads(modules))


#: What a command's `--help` must not load: a command module may use the light
#: parts of the scan package (change records, self-write marks), not the scanner.
HEAVY_FOR_A_COMMAND = (*(h for h in HEAVY if h != "memlens.core.scan"), "memlens.core.scan.vault")


def heavy_in(modules: set[str], heavy: tuple[str, ...] = HEAVY) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in heavy))


@pytest.mark.parametrize("args", [["--version"], ["--help"]])
def test_version_and_help_import_neither_the_engine_nor_the_ui(args: list[str]) -> None:
    output, modules = imported_by(*args)
    assert output.startswith("memlens, version " if args == ["--version"] else "Usage: memlens")
    assert heavy_in(modules) == []
    assert COMMAND_MODULES.isdisjoint(modules)


def test_a_bare_version_loads_neither_click_nor_the_config() -> None:
    output, modules = imported_by("--version")
    assert output.startswith("memlens, version ")
    assert heavy_in(modules, ("click", "memlens.core", "memlens.tui.cli.root")) == []


def test_version_after_other_options_goes_through_the_group() -> None:
    output, modules = imported_by("--no-cache", "--version")
    assert output == imported_by("--version")[0]
    assert "click" in modules and heavy_in(modules) == []


#: Modules that still import the engine at their top level (so their `--help` is slow).
ENGINE_AT_IMPORT = {"cognitive", "dream", "graph"}
#: What a module may load for its `--help` beyond the light core: the write
#: actions parse frontmatter with PyYAML.
ALSO_LOADS = {"actions": {"yaml"}}


def _module_of(name: str) -> str:
    return COMMANDS[name].address.partition(":")[0].rpartition(".")[2]


@pytest.mark.parametrize(
    "name", sorted(n for n in COMMANDS if _module_of(n) not in ENGINE_AT_IMPORT)
)
def test_a_commands_help_imports_neither_the_engine_nor_the_ui(name: str) -> None:
    output, modules = imported_by(name, "--help")
    assert f"Usage: memlens {name}" in output
    allowed = ALSO_LOADS.get(_module_of(name), set())
    assert heavy_in(modules, tuple(h for h in HEAVY_FOR_A_COMMAND if h not in allowed)) == []


def test_completing_the_first_word_imports_no_command_module() -> None:
    env = {"_MEMLENS_COMPLETE": "bash_complete", "COMP_WORDS": "memlens s", "COMP_CWORD": "1"}
    output, modules = imported_by(env={**os.environ, **env})
    assert [line.split(",", 1)[1] for line in output.splitlines()] == [
        "search",
        "secrets",
        "serve",
        "set",
        "show",
    ]
    assert heavy_in(modules) == []


def test_a_command_loads_only_its_own_module() -> None:
    output, modules = imported_by("show", "--help")
    assert "Usage: memlens show" in output
    assert "memlens.tui.cli.browse" in modules
    assert {"memlens.tui.cli.search", "memlens.tui.cli.watch", "textual"}.isdisjoint(modules)


def _real(name: str) -> click.Command:
    with click.Context(cli) as ctx:
        command = cli.get_command(ctx, name)
    assert command is not None, name
    return command


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_summary_is_the_real_commands_short_help(name: str) -> None:
    command, entry = _real(name), COMMANDS[name]
    assert command.name == name
    assert entry.summary == command.get_short_help_str(limit=10_000)
    assert entry.hidden == command.hidden


@pytest.mark.parametrize("module", ["actions", "cognitive", "ecosystem"])
def test_every_command_a_group_module_offers_is_in_the_table(module: str) -> None:
    offered = importlib.import_module(f"memlens.tui.cli.{module}").COMMANDS
    assert offered, module
    for command in offered:
        assert command.name is not None
        assert _real(command.name) is command


def _unloaded() -> click.Group:
    """The root group as a fresh process sees it: no command imported yet."""
    group = copy.copy(cli)
    group.commands = {}
    return group


def _eager() -> click.Group:
    """A plain click group holding every real command."""
    return click.Group("memlens", commands={name: _real(name) for name in COMMANDS})


@pytest.mark.parametrize("width", [40, 80, 120])
def test_the_root_help_lists_commands_as_the_real_commands_would(width: int) -> None:
    def commands_section(group: click.Group) -> str:
        formatter = click.HelpFormatter(width=width)
        with click.Context(group) as ctx:
            group.format_commands(ctx, formatter)
        return formatter.getvalue()

    lazy, eager = commands_section(_unloaded()), commands_section(_eager())
    assert "list" in lazy and "open" not in lazy.split()
    assert lazy == eager


@pytest.mark.parametrize("prefix", ["", "s", "re", "zz"])
def test_first_word_completion_matches_the_real_commands(prefix: str) -> None:
    def items(group: click.Group) -> list[tuple[str, str | None]]:
        with click.Context(group) as ctx:
            found = group.shell_complete(ctx, prefix)
        return [(item.value, item.help) for item in found if not item.value.startswith("-")]

    assert items(_unloaded()) == items(_eager())


def test_python_dash_m_runs_the_cli() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "memlens.tui.cli", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.startswith("memlens, version ")


def test_the_app_loads_its_other_panes_when_first_shown() -> None:
    """Importing the app leaves the graph, search and run screens (networkx, numpy) for later.

    They cost ~0.4 s before the first row could be drawn; `lazy_modes` imports each pane's
    module when it is first shown.  The secrets detectors (~90 ms of patterns) are
    imported by the privacy scan's thread.
    """
    code = "import json, sys\nimport memlens.tui.app\nprint(json.dumps(sorted(sys.modules)))\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    modules = set(json.loads(done.stdout))
    later = {
        "networkx",
        "numpy",
        "memlens.tui.screens.graph",
        "memlens.tui.screens.search",
        "memlens.tui.screens.triage",
        "memlens.tui.maintenance_runs",
        "memlens.core.privacy",
        "memlens.core.privacy.detectors",
    }
    assert not later & modules, sorted(later & modules)
    assert "memlens.tui.screens.main" in modules
