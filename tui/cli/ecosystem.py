"""Commands that fit memlens into its surroundings: `locate`, `serve`, `completion`.

- `memlens locate config|cache|journal` prints where memlens keeps things
  (path on stdout, a note on stderr, so `$(memlens locate config)` works).
- `memlens serve PATH` runs the app in a browser tab through textual-serve,
  on this machine only unless `--public` says otherwise.
- `memlens completion bash|zsh|fish` prints click's completion script.

Exit codes: 0 ok, 1 refused (port busy, textual-serve missing), 2 usage error.
"""

from __future__ import annotations

import ipaddress
import os
import shlex
import socket
import subprocess
import sys
from datetime import date
from pathlib import Path

import click
from click.shell_completion import get_completion_class

from memlens.core.config import CONFIG_ENV, default_cache_dir, locate_config
from memlens.core.write.journal import JOURNAL, STATE_DIR, read_journal

from .common import (
    as_of_option,
    config_option,
    config_path_option,
    current_config,
    emit_json,
    json_option,
)

PROG_NAME = "memlens"
#: click's completion protocol: `_MEMLENS_COMPLETE=bash_source memlens`.
COMPLETE_VAR = "_MEMLENS_COMPLETE"
SHELLS = ("bash", "zsh", "fish")
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


# ------------------------------------------------------------------ locate


@click.group(
    "locate",
    epilog="Example: memlens locate config",
)
def locate() -> None:
    """Print where memlens keeps its settings, cache and journals."""


def _note(path: Path, exists: bool, extra: str = "") -> None:
    state = "exists" if exists else "does not exist"
    click.echo(f"{path}: {state}{extra}", err=True)


@locate.command(
    "config",
    epilog='Example: $EDITOR "$(memlens locate config)"',
)
@config_option
@json_option
def locate_config_command(as_json: bool) -> None:
    """Print the config file in use and whether it exists.

    Order: --config PATH, then $MEMLENS_CONFIG, then config.toml in the user
    config folder.  A missing file means every setting has its default.
    Problems in the file are printed as warnings (memlens still runs).
    """
    where = locate_config(config_path_option())
    exists = where.exists
    # Loading prints each problem to stderr once, like every other command.
    config = current_config() if exists else None
    if as_json:
        emit_json(
            {
                "path": str(where.path),
                "exists": exists,
                "origin": where.origin,
                "loaded": bool(config and config.loaded),
            }
        )
        return
    click.echo(str(where.path))
    how = {"option": "from --config", "env": f"from ${CONFIG_ENV}", "default": "default place"}
    extra = f" ({how[where.origin]})"
    if not exists:
        extra += "; using default settings"
    _note(where.path, exists, extra)


@locate.command("cache", epilog="Example: memlens locate cache")
@json_option
def locate_cache_command(as_json: bool) -> None:
    """Print the user cache folder memlens uses for derived data."""
    path = default_cache_dir()
    if as_json:
        emit_json({"path": str(path), "exists": path.is_dir()})
        return
    click.echo(str(path))
    _note(path, path.is_dir())


@locate.command("journal", epilog="Example: memlens locate journal ~/agent-memory")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@json_option
def locate_journal_command(path: Path, as_json: bool) -> None:
    """Print the undo journal of every vault below PATH, one per line.

    Each vault keeps `.memlens/journal.jsonl` (and the bytes it needs to undo)
    inside the vault; `memlens undo PATH` reads it.
    """
    from memlens.core.scan.vault import discover  # every format: not for --help

    vaults = discover(path)
    if not vaults:
        raise click.UsageError(f"no memory vault found at or below {path}")
    records = []
    for vault in vaults:
        journal = vault.root / STATE_DIR / JOURNAL
        records.append(
            {
                "vault": vault.rel,
                "format": vault.format,
                "journal": str(journal),
                "exists": journal.is_file(),
                "entries": len(read_journal(vault.root)) if journal.is_file() else 0,
            }
        )
    if as_json:
        emit_json(records)
        return
    for record in records:
        click.echo(str(record["journal"]))
        entries = record["entries"]
        extra = f" ({entries} action{'s' if entries != 1 else ''})" if record["exists"] else ""
        _note(Path(str(record["journal"])), bool(record["exists"]), extra)


# ------------------------------------------------------------------- serve


def is_loopback_host(host: str) -> bool:
    """True when `host` only accepts connections from this machine."""
    name = host.strip().strip("[]").lower().rstrip(".")
    if name in ("localhost", "ip6-localhost", "ip6-loopback"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        # A host name may resolve to any interface: treat it as public.
        return False


def app_command(paths: list[Path], as_of: date | None) -> str:
    """The shell command textual-serve runs for each browser tab.

    The interpreter running now, not a `memlens` found on PATH, so the tab
    gets this very installation; `-c` rather than `-m` because the CLI module
    has no `__main__` block.
    """
    argv = [sys.executable, "-c", "from memlens.tui.cli.main import main; main()"]
    argv += [str(p.resolve()) for p in paths]
    if as_of is not None:
        argv += ["--as-of", as_of.isoformat()]
    if os.name == "nt":  # pragma: no cover - textual-serve uses cmd.exe there
        return subprocess.list2cmdline(argv)
    return shlex.join(argv)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _port_is_free(host: str, port: int) -> str | None:
    """None if we can listen on host:port, else why not (checked before printing a banner)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        return f"unknown host {host!r} ({exc.strerror})"
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        if os.name != "nt":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            return exc.strerror or str(exc)
    return None


@click.command(
    "serve",
    epilog="""\b
Example:
  memlens serve ~/agent-memory --port 8000
  then open http://127.0.0.1:8000 in a browser""",
)
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("--host", default=DEFAULT_HOST, show_default=True, help="Interface to listen on.")
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    help="Port to listen on.",
)
@as_of_option
@click.option(
    "--public",
    is_flag=True,
    help="Allow a --host other than this machine. There is no login: "
    "anyone who can reach the port can read and edit your vaults.",
)
@click.option(
    "--public-url",
    metavar="URL",
    default=None,
    help="The address browsers use to reach the server (behind a proxy, or with --public).",
)
@config_option
def serve(
    paths: tuple[Path, ...],
    host: str,
    port: int,
    as_of: date | None,
    public: bool,
    public_url: str | None,
) -> None:
    """Open the app in a browser tab, served by textual-serve on this machine.

    Each tab runs its own memlens on PATH ... (default: the vaults in the
    config file, else the current directory).  Actions that open $EDITOR
    are not available in the browser.  Stop the server with Ctrl+C.
    """
    if not is_loopback_host(host) and not public:
        raise click.UsageError(
            f"--host {host} would let other machines open memlens, and there is no "
            "login: anyone who reaches the port can read and edit your vaults. "
            "Pass --public to do it anyway."
        )
    try:
        from textual_serve.server import Server
    except ImportError:
        raise click.ClickException(
            "browser mode needs textual-serve, the [serve] extra: "
            "pip install 'memlens[serve]' (or: pipx inject memlens textual-serve)"
        ) from None

    busy = _port_is_free(host, port)
    if busy is not None:
        raise click.ClickException(f"cannot listen on {host}:{port}: {busy}")
    if not is_loopback_host(host):
        click.echo(
            f"memlens: warning: serving on {host}:{port} without any login; "
            "anyone who can reach it can read and edit your vaults",
            err=True,
        )

    current_config()  # report config problems once, here, not in every tab
    explicit = config_path_option()
    if explicit is not None:
        # Each tab is a fresh process: hand it the same config file.
        os.environ[CONFIG_ENV] = str(explicit.resolve())

    url = public_url or f"http://{_url_host(host)}:{port}"
    server = Server(
        app_command(list(paths), as_of), host=host, port=port, title=PROG_NAME, public_url=url
    )
    click.echo(f"memlens: serving at {url} (Ctrl+C to stop)", err=True)
    try:
        server.serve()
    except OSError as exc:  # lost a race for the port since the check above
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc}") from None


# -------------------------------------------------------------- completion


def completion_script(root: click.Command, shell: str) -> str:
    """click's completion script for `root` in `shell` (bash, zsh or fish)."""
    cls = get_completion_class(shell)
    if cls is None:  # pragma: no cover - the Choice below only offers known shells
        raise click.UsageError(f"no completion for {shell!r}")
    return cls(root, {}, PROG_NAME, COMPLETE_VAR).source()


@click.command(
    "completion",
    epilog="""\b
Examples:
  bash: echo 'eval "$(memlens completion bash)"' >> ~/.bashrc
  zsh:  echo 'eval "$(memlens completion zsh)"' >> ~/.zshrc
  fish: memlens completion fish > ~/.config/fish/completions/memlens.fish""",
)
@click.argument("shell", type=click.Choice(SHELLS))
def completion(shell: str) -> None:
    """Print the shell completion script for SHELL (bash, zsh or fish).

    The script completes commands, options and paths; it calls memlens
    itself (with _MEMLENS_COMPLETE set) to find the candidates.
    """
    root = click.get_current_context().find_root().command
    click.echo(completion_script(root, shell), nl=False)


#: What the lead registers on the `memlens` group.
COMMANDS: tuple[click.Command, ...] = (locate, serve, completion)
