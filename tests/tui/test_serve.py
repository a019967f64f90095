"""`memlens serve`: the app in a browser tab through textual-serve, on localhost.

The real server runs as a subprocess on a free port; the test fetches the page
and then opens the page's websocket, which starts one memlens app under
Textual's web driver, and reads the first screen it draws.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from memlens.core.demo import copy_demo
from memlens.tui.cli.ecosystem import app_command, is_loopback_host, serve

pytest.importorskip("textual_serve", reason="textual-serve is not installed")

#: `memlens ...` through the real CLI group.  Registering the ecosystem
#: commands here is a no-op once tui/cli.py does it itself.
CLI = (
    "import sys\n"
    "from memlens.tui.cli.main import cli\n"
    "from memlens.tui.cli.ecosystem import COMMANDS\n"
    "for c in COMMANDS:\n"
    "    cli.commands.setdefault(c.name or '', c)\n"
    "cli(prog_name='memlens')\n"
)
STARTUP_TIMEOUT = 20.0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM (the server shuts down gracefully), SIGKILL to its group if it hangs."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`memlens serve <demo copy> --port N` running; yields its base URL."""
    vaults = copy_demo(tmp_path / "demo")
    port = _free_port()
    config = tmp_path / "config.toml"
    config.write_text("", encoding="utf-8")  # isolate from the user's own settings
    env = {**os.environ, "MEMLENS_CONFIG": str(config)}
    argv = [sys.executable, "-c", CLI, "serve", str(vaults), "--port", str(port)]
    argv += ["--as-of", "2026-11-22"]
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,  # its own process group, so a hang can be cleaned up
    )
    try:
        yield f"http://127.0.0.1:{port}", proc
    finally:
        _stop(proc)


def _fetch_when_ready(url: str, proc: subprocess.Popen[bytes]) -> tuple[int, str]:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while True:
        if proc.poll() is not None:
            out = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
            pytest.fail(f"memlens serve exited with {proc.returncode}:\n{out}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return response.status, response.read().decode("utf-8")
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            if time.monotonic() > deadline:
                pytest.fail(f"memlens serve did not answer at {url} within {STARTUP_TIMEOUT}s")
            time.sleep(0.2)


def test_serve_answers_with_the_app_page(served: tuple[str, subprocess.Popen[bytes]]) -> None:
    url, proc = served
    status, html = _fetch_when_ready(url + "/", proc)
    assert status == 200
    assert "textual.js" in html  # textual-serve's terminal front end
    assert "memlens" in html  # the page title is the app's name
    port = url.rsplit(":", 1)[1]
    assert f"ws://127.0.0.1:{port}/ws" in html

    # A second server on the same port is refused with a clear message.
    result = subprocess.run(
        [sys.executable, "-c", CLI, "serve", "--port", port],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr


@pytest.mark.slow
def test_a_browser_tab_runs_the_app(served: tuple[str, subprocess.Popen[bytes]]) -> None:
    """Opening the websocket starts memlens under the web driver and it draws its screen."""
    aiohttp = pytest.importorskip("aiohttp")
    url, proc = served
    _fetch_when_ready(url + "/", proc)

    async def first_screen() -> str:
        data = b""
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(f"{url}/ws?width=120&height=30") as ws,
        ):
            deadline = time.monotonic() + STARTUP_TIMEOUT
            while time.monotonic() < deadline:
                try:
                    msg = await ws.receive(timeout=1)
                except TimeoutError:
                    continue
                if msg.type == aiohttp.WSMsgType.BINARY:
                    data += msg.data
                    text = re.sub(r"\x1b\[[0-9;?$]*[a-zA-Z]", "", data.decode("utf-8", "replace"))
                    if "memlens" in text and "vaults" in text:
                        return text
                elif msg.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
                    break
        return data.decode("utf-8", "replace")

    screen = asyncio.run(first_screen())
    assert "memlens" in screen and "vaults" in screen, screen[-2000:]
    assert "cognitive-memory" in screen  # the demo's vaults were opened


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "example.org"])
def test_non_loopback_hosts_need_public(host: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(serve, [str(tmp_path), "--host", host])
    assert result.exit_code == 2
    assert "--public" in result.output


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("10.0.0.1", False),
        ("my-laptop", False),
    ],
)
def test_is_loopback_host(host: str, loopback: bool) -> None:
    assert is_loopback_host(host) is loopback


def test_app_command_runs_this_interpreter_on_absolute_paths(tmp_path: Path) -> None:
    from datetime import date

    command = app_command([tmp_path / "a b"], date(2026, 11, 22))
    assert command.startswith(sys.executable)
    assert "from memlens.tui.cli.main import main; main()" in command
    assert f"'{tmp_path / 'a b'}'" in command  # quoted for the shell
    assert command.endswith("--as-of 2026-11-22")
