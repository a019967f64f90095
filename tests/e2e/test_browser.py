"""`memlens serve` in a real browser: headless Chromium loads the page, keys go in.

textual-serve draws the app with xterm.js onto a WebGL or canvas surface, so
the page holds no text to query.  A script that runs before the page's own
code catches the xterm.js `Terminal` when textual.js stores it (as
`this.terminal`), and the test reads the screen through xterm.js's public
buffer API.  Chromium is driven by Selenium with the Debian `chromium-driver`,
whose version always matches the browser; nothing is downloaded.

Set `MEMLENS_BROWSER_SCREENSHOT=path.png` to keep the memory-list picture
(`make screenshots` writes `screenshots/browser.png` this way).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memlens.core.demo import copy_demo

pytestmark = pytest.mark.e2e

#: The one skip reason, completed by what was missing.
SKIP = "browser test needs headless chromium, chromedriver and selenium"
#: Generous bounds for a loaded machine; the test never asserts on durations.
STARTUP_TIMEOUT = 30.0
SCREEN_TIMEOUT = 40.0
WINDOW = (1400, 900)
#: A memory of the demo's cognitive-memory vault, on the first screen.
DEMO_TITLE = "Hash the lockfile for the CI cache key"
#: Words of that memory's body: the detail pane renders it after its metadata.
DEMO_BODY = "warm builds take 2m10s"
#: The memory list's filter bar, shown only on the memories screen.
FILTER_PROMPT = "/ filter: words"

#: Runs before textual.js: an accessor on Object.prototype sees the first
#: assignment of a `terminal` property on any object, keeps the value as an
#: ordinary own property, and remembers it when it is an xterm.js Terminal.
CATCH_TERMINAL = """
Object.defineProperty(Object.prototype, "terminal", {
  configurable: true,
  set(value) {
    Object.defineProperty(this, "terminal", {
      value, writable: true, configurable: true, enumerable: true,
    });
    if (value && value.buffer && value.buffer.active) {
      window.__memlensTerminal = value;
    }
  },
});
"""
#: The visible rows of the terminal as text, or null before textual.js ran.
READ_SCREEN = """
const term = window.__memlensTerminal;
if (!term) { return null; }
const buffer = term.buffer.active;
const rows = [];
for (let y = 0; y < term.rows; y++) {
  const line = buffer.getLine(buffer.viewportY + y);
  rows.push(line ? line.translateToString(true) : "");
}
return rows.join("\\n");
"""


def _browser_binaries() -> tuple[str, str]:
    """Paths of Chromium and its driver, or a skip saying which is missing."""
    browser = next((p for n in ("chromium", "chromium-browser") if (p := shutil.which(n))), None)
    driver = shutil.which("chromedriver")
    if browser is None or driver is None:
        missing = "chromium" if browser is None else "chromedriver"
        pytest.skip(f"{SKIP}: {missing} is not installed")
    return browser, driver


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the server's process group (it and every tab's app), SIGKILL if it lingers."""
    for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue


def _wait_for_http(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while True:
        if proc.poll() is not None:
            out = log.read_text(encoding="utf-8", errors="replace")
            pytest.fail(f"memlens serve exited with {proc.returncode}:\n{out}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"memlens serve did not answer at {url} within {STARTUP_TIMEOUT}s")
        time.sleep(0.2)


@pytest.fixture
def served_demo(tmp_path: Path) -> Iterator[str]:
    """`memlens serve` on a copy of the demo vaults, on 127.0.0.1; yields its URL."""
    vaults = copy_demo(tmp_path / "demo")
    port = _free_port()
    log = tmp_path / "serve.log"
    exe = Path(sys.executable).with_name("memlens")
    command = (
        [str(exe)]
        if exe.exists()
        else [sys.executable, "-c", "from memlens.tui.cli.main import main; main()"]
    )
    argv = [*command, "serve", str(vaults), "--host", "127.0.0.1", "--port", str(port)]
    with log.open("wb") as out:  # a file, not a pipe: a chatty server never blocks on it
        proc = subprocess.Popen(
            [*argv, "--as-of", "2026-11-22"],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "TEXTUAL_ANIMATIONS": "none"},
            start_new_session=True,  # one group: the server and the app of every tab
        )
    try:
        url = f"http://127.0.0.1:{port}/"
        _wait_for_http(url, proc, log)
        yield url
    finally:
        _stop_group(proc)


@pytest.fixture
def chromium(tmp_path: Path) -> Iterator[Any]:
    """A headless Chromium under Selenium that catches the page's terminal; always quit."""
    browser, driver_path = _browser_binaries()
    webdriver = pytest.importorskip("selenium.webdriver", reason=f"{SKIP}: no selenium")
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for arg in (
        "--headless=new",
        "--no-sandbox",  # CI runs as root, where the sandbox cannot start
        "--disable-dev-shm-usage",
        f"--window-size={WINDOW[0]},{WINDOW[1]}",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
    ):
        options.add_argument(arg)
    try:
        driver = webdriver.Chrome(options=options, service=Service(driver_path))
    except WebDriverException as exc:
        pytest.skip(f"{SKIP}: chromium did not start ({exc.msg})")
    try:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": CATCH_TERMINAL})
        yield driver
    finally:
        driver.quit()


def wait_for_screen(driver: Any, *texts: str) -> str:
    """Poll the terminal's text until every one of `texts` shows, within a generous bound.

    The app's frames reach xterm.js in pieces, so one read can hold the list's
    first row before the filter bar above it: wait for all of them together.
    """
    deadline = time.monotonic() + SCREEN_TIMEOUT
    screen: str | None = None
    while time.monotonic() < deadline:
        screen = driver.execute_script(READ_SCREEN)
        if screen is not None and all(text in screen for text in texts):
            return screen
        time.sleep(0.25)
    if screen is None:
        raise AssertionError("the page's xterm.js terminal was never caught (see CATCH_TERMINAL)")
    missing = [text for text in texts if text not in screen]
    raise AssertionError(f"{missing!r} never appeared in the browser; screen was:\n{screen}")


def press(driver: Any, keys: str) -> None:
    """Type into xterm.js's hidden textarea, where the page listens for keys."""
    driver.find_element("css selector", ".xterm-helper-textarea").send_keys(keys)


def test_the_app_runs_in_a_real_browser(served_demo: str, chromium: Any, tmp_path: Path) -> None:
    driver = chromium
    driver.get(served_demo)

    screen = wait_for_screen(driver, DEMO_TITLE, FILTER_PROMPT)
    assert "as of 2026-11-22" in screen
    assert "cognitive-memory" in screen and "dream-cycle" in screen
    assert "Decay triage" not in screen
    # The detail pane shows the first row, its body last (markdown): a fuller picture.
    wait_for_screen(driver, "Metadata", DEMO_BODY)
    picture = Path(os.environ.get("MEMLENS_BROWSER_SCREENSHOT") or tmp_path / "browser.png")
    assert driver.save_screenshot(str(picture))
    assert picture.read_bytes().startswith(b"\x89PNG")

    press(driver, "2")  # the triage screen replaces the memory list
    triage = wait_for_screen(driver, "Decay triage")
    assert "Strength distribution" in triage
    assert FILTER_PROMPT not in triage  # the memory list's filter bar is gone
    assert driver.save_screenshot(str(tmp_path / "browser-triage.png"))

    press(driver, "1")  # and back
    wait_for_screen(driver, FILTER_PROMPT)
