"""`memlens locate ...`, `memlens completion ...` and the `--config` option."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from memlens.core import config as config_mod
from memlens.core.config import CONFIG_ENV
from memlens.core.demo import copy_demo
from memlens.core.write.journal import JOURNAL, STATE_DIR
from memlens.tui.cli import main as cli_mod
from memlens.tui.cli.common import config_option, current_config
from memlens.tui.cli.ecosystem import COMMANDS, COMPLETE_VAR


@pytest.fixture
def memlens() -> click.Group:
    """The real `memlens` group with the ecosystem commands, without touching the shared one."""
    group = copy.copy(cli_mod.cli)
    group.commands = {**cli_mod.cli.commands, **{c.name or "": c for c in COMMANDS}}
    return group


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    default = tmp_path / "user-config" / "memlens" / "config.toml"
    monkeypatch.setattr(config_mod, "default_config_path", lambda: default)
    monkeypatch.delenv(CONFIG_ENV, raising=False)
    return default


def run(
    group: click.Command, *args: str, env: dict[str, str] | None = None
) -> click.testing.Result:
    return CliRunner().invoke(group, list(args), env=env, prog_name="memlens")


def test_locate_config_prints_the_default_path_and_that_it_is_missing(
    memlens: click.Group, isolated: Path
) -> None:
    result = run(memlens, "locate", "config")
    assert result.exit_code == 0
    assert result.stdout == f"{isolated}\n"
    assert "does not exist (default place); using default settings" in result.stderr


def test_locate_config_follows_env_then_option(
    memlens: click.Group, tmp_path: Path, isolated: Path
) -> None:
    from_env = tmp_path / "env.toml"
    from_env.write_text('theme = "nord"\n')
    option = tmp_path / "option.toml"
    env = {CONFIG_ENV: str(from_env)}

    result = run(memlens, "locate", "config", env=env)
    assert result.stdout == f"{from_env}\n"
    assert "exists (from $MEMLENS_CONFIG)" in result.stderr

    result = run(memlens, "locate", "config", "--config", str(option), env=env)
    assert result.stdout == f"{option}\n"
    assert "does not exist (from --config)" in result.stderr

    result = run(memlens, "locate", "config", "--json", env=env)
    assert json.loads(result.stdout) == {
        "path": str(from_env),
        "exists": True,
        "origin": "env",
        "loaded": True,
    }


def test_locate_config_reports_problems_in_the_file(memlens: click.Group, isolated: Path) -> None:
    isolated.parent.mkdir(parents=True)
    isolated.write_text("theme = 3\n")
    result = run(memlens, "locate", "config")
    assert result.exit_code == 0
    assert f"memlens: warning: {isolated}: theme: expected a string, got 3" in result.stderr


def test_config_option_on_a_group_reaches_subcommands_and_warns_once(tmp_path: Path) -> None:
    """What the lead's `memlens --config PATH <command>` relies on."""
    cfg = tmp_path / "c.toml"
    cfg.write_text('theme = "nord"\ncache = "no"\n')

    @click.group()
    @config_option
    def group() -> None:
        current_config()  # e.g. the group callback applies settings

    @group.command()
    def show() -> None:
        click.echo(current_config().theme)

    result = CliRunner().invoke(group, ["--config", str(cfg), "show"])
    assert result.exit_code == 0, result.output
    assert result.stdout == "nord\n"
    assert result.stderr.count("cache: expected true or false") == 1


def test_locate_cache_follows_memlens_cache_dir(memlens: click.Group, tmp_path: Path) -> None:
    env = {"MEMLENS_CACHE_DIR": str(tmp_path / "cache")}
    result = run(memlens, "locate", "cache", "--json", env=env)
    assert json.loads(result.stdout) == {"path": str(tmp_path / "cache"), "exists": False}
    (tmp_path / "cache").mkdir()
    result = run(memlens, "locate", "cache", env=env)
    assert result.stdout == f"{tmp_path / 'cache'}\n"
    assert "exists" in result.stderr and "does not" not in result.stderr


def test_locate_journal_lists_each_vault(memlens: click.Group, tmp_path: Path) -> None:
    root = copy_demo(tmp_path)
    ocean = root / "project-ocean"
    (ocean / STATE_DIR).mkdir()
    (ocean / STATE_DIR / JOURNAL).write_text('{"action": "pin"}\n{"action": "unpin"}\n')

    result = run(memlens, "locate", "journal", str(root), "--json")
    assert result.exit_code == 0, result.output
    records = {r["format"]: r for r in json.loads(result.stdout)}
    assert set(records) == {
        "cognitive-memory",
        "dream-cycle",
        "experience-records",
        "observation-v1",
        "project-ocean",
    }
    assert records["project-ocean"]["exists"] is True
    assert records["project-ocean"]["entries"] == 2
    assert records["project-ocean"]["journal"] == str(ocean / STATE_DIR / JOURNAL)
    assert records["dream-cycle"]["exists"] is False
    assert not (root / "dream-cycle" / STATE_DIR).exists()  # locating creates nothing

    result = run(memlens, "locate", "journal", str(root))
    assert len(result.stdout.splitlines()) == 5
    assert "(2 actions)" in result.stderr


def test_locate_journal_without_vaults_is_a_usage_error(
    memlens: click.Group, tmp_path: Path
) -> None:
    result = run(memlens, "locate", "journal", str(tmp_path))
    assert result.exit_code == 2
    assert "no memory vault found" in result.stderr


@pytest.mark.parametrize(
    ("shell", "marker"),
    [
        ("bash", "complete -o nosort -F _memlens_completion memlens"),
        ("zsh", "#compdef memlens"),
        ("fish", "complete --no-files --command memlens"),
    ],
)
def test_completion_prints_the_shell_script(memlens: click.Group, shell: str, marker: str) -> None:
    result = run(memlens, "completion", shell)
    assert result.exit_code == 0
    assert marker in result.stdout
    assert f"{COMPLETE_VAR}={shell}_complete" in result.stdout


def test_completion_refuses_unknown_shells(memlens: click.Group) -> None:
    result = run(memlens, "completion", "powershell")
    assert result.exit_code == 2


def _complete(group: click.Group, words: str, cword: int) -> list[str]:
    env = {COMPLETE_VAR: "bash_complete", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
    result = run(group, env=env)
    return [line.split(",", 1)[1] for line in result.stdout.splitlines()]


def test_the_completion_protocol_completes_subcommands_and_options(memlens: click.Group) -> None:
    assert _complete(memlens, "memlens locate c", 2) == ["cache", "config"]
    assert "--public" in _complete(memlens, "memlens serve --pu", 2)
    assert _complete(memlens, "memlens completion f", 2) == ["fish"]


def test_the_completion_protocol_completes_top_level_commands(memlens: click.Group) -> None:
    assert _complete(memlens, "memlens loc", 1) == ["locate"]


def test_every_ecosystem_command_has_help_with_an_example() -> None:
    def walk(command: click.Command, args: list[str]) -> Iterator[list[str]]:
        yield args
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                yield from walk(sub, [*args, name])

    for command in COMMANDS:
        for args in walk(command, []):
            result = CliRunner().invoke(command, [*args, "--help"])
            assert result.exit_code == 0, (command.name, args, result.output)
            assert "Example" in result.output, (command.name, args)
