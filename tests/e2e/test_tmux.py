"""The real `memlens` in a real terminal (tmux): keys in, captured screen out.

Starts `memlens tests/fixtures --as-of 2026-11-22` (the own test vaults) at 120x40 on a private tmux
server, drives it with keys and checks the captured pane, including the raw
escape sequences the app wrote (`capture-pane -e`): colours only, no ESC from
memory content, no OSC 8 hyperlink.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

WIDTH, HEIGHT = 120, 40
SGR = re.compile(r"\x1b\[[0-9;:]*m")


class Tmux:
    """One private tmux server with one session running a command."""

    def __init__(self, command: list[str], cwd: Path) -> None:
        self.socket = f"memlens-e2e-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.session = "memlens"
        env = {**os.environ, "TERM": "xterm-256color", "TEXTUAL_ANIMATIONS": "none"}
        env.pop("TMUX", None)
        self.env = env
        shell = " ".join(_quote(c) for c in command)
        self.run(
            "new-session",
            "-d",
            "-s",
            self.session,
            "-x",
            str(WIDTH),
            "-y",
            str(HEIGHT),
            shell,
            cwd=cwd,
        )
        self.run("set-option", "-t", self.session, "remain-on-exit", "on")

    def run(self, *args: str, cwd: Path | None = None) -> str:
        result = subprocess.run(
            ["tmux", "-L", self.socket, *args],
            capture_output=True,
            text=True,
            env=self.env,
            cwd=cwd,
            timeout=30,
            check=True,
        )
        return result.stdout

    def keys(self, *keys: str, literal: bool = False) -> None:
        self.run("send-keys", "-t", self.session, *(["-l"] if literal else []), *keys)

    def screen(self, escapes: bool = False) -> str:
        return self.run("capture-pane", "-p", *(["-e"] if escapes else []), "-t", self.session)

    def wait_for(self, text: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{text!r} never appeared; screen was:\n{screen}")

    def wait_until_loaded(self, timeout: float = 90.0) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if "rows" in screen and "loading" not in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"app never finished loading; screen was:\n{screen}")

    def alive(self) -> bool:
        dead = self.run("display-message", "-p", "-t", self.session, "#{pane_dead}").strip()
        return dead == "0"

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, check=False)


def _quote(arg: str) -> str:
    return "'" + arg.replace("'", "'\\''") + "'"


def _memlens_command() -> list[str]:
    exe = Path(sys.executable).with_name("memlens")
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-m", "memlens.tui.app"]


@pytest.fixture
def tmux_app(own_fixtures_dir: Path, tmp_path: Path) -> Iterator[Tmux]:
    tmux = Tmux([*_memlens_command(), str(own_fixtures_dir), "--as-of", "2026-11-22"], cwd=tmp_path)
    try:
        yield tmux
    finally:
        tmux.close()


def assert_only_colours(raw: str) -> None:
    """Every ESC in the captured pane starts a colour (SGR) sequence written by the app."""
    assert "\x1b]" not in raw  # no OSC 8 hyperlink or OSC 52 clipboard write
    assert "\x1b" not in SGR.sub("", raw)


def test_browse_the_fixtures_in_a_real_terminal(tmux_app: Tmux) -> None:
    tmux = tmux_app
    screen = tmux.wait_until_loaded()
    assert "as of 2026-11-22" in screen
    assert "All vaults" in screen
    assert_only_colours(tmux.screen(escapes=True))
    # Textual queries the terminal at start-up; keys sent during that are lost.
    time.sleep(1.5)

    # Filter to the dream-cycle injection memory and open its detail.
    tmux.keys("/")
    time.sleep(0.2)
    tmux.keys("backup script", literal=True)
    screen = tmux.wait_for("Backup script output")
    assert "1 of" in screen
    tmux.keys("Enter")
    time.sleep(0.3)
    tmux.keys("Enter")
    time.sleep(0.5)
    tmux.keys("z")  # zoom the detail pane; the body is at its top
    time.sleep(0.5)
    tmux.keys("g")
    injected = "[link=file:///etc/shadow]log[/link]"
    for _ in range(60):  # scroll down through the body until the injected line shows
        if injected in tmux.screen():
            break
        tmux.keys("j")
        time.sleep(0.15)
    screen = tmux.wait_for(injected)
    assert "␛[1;31m" in screen  # the raw ESC shows as a visible stand-in
    assert_only_colours(tmux.screen(escapes=True))

    # Back to the list, clear the filter; j/k move.
    tmux.keys("z")
    time.sleep(0.3)
    tmux.keys("Escape")
    time.sleep(0.3)
    tmux.keys("Escape")
    tmux.wait_until_loaded()
    tmux.keys("j", "j", "k")

    # Decay triage, one day later.
    tmux.keys("2")
    tmux.wait_for("Decay triage as of 2026-11-22")
    tmux.keys("]")
    screen = tmux.wait_for("2026-11-23")
    assert "+1 days" in screen and "Fades within" in screen
    assert_only_colours(tmux.screen(escapes=True))

    # Problems: open the first one's raw text.
    tmux.keys("3")
    screen = tmux.wait_for("invalid items")
    tmux.keys("Enter")
    screen = tmux.wait_for("raw text")
    assert_only_colours(tmux.screen(escapes=True))
    tmux.keys("Escape")
    tmux.wait_for("invalid items")

    # Help, then quit.
    tmux.keys("?")
    tmux.wait_for("memlens keys")
    tmux.keys("Escape")
    time.sleep(0.3)
    assert tmux.alive()
    tmux.keys("q")
    deadline = time.monotonic() + 10
    while tmux.alive() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not tmux.alive()
