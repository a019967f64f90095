"""`memlens watch PATH --json` in a real process: one JSON object per line, Ctrl-C exits 0."""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from memlens.core.scan.vault import discover

TIMEOUT = 20.0
DEMO = Path(__file__).resolve().parents[2] / "core" / "demo_vaults"
# The command is imported directly: this test does not depend on how the
# `memlens` group registers it.
RUN = "import sys; from memlens.tui.cli.watch import watch; watch(prog_name='memlens watch')"


def _pump(stream: IO[str], out: queue.Queue[str]) -> None:
    for line in stream:
        out.put(line)


class WatchProcess:
    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.stdout: queue.Queue[str] = queue.Queue()
        self.stderr: queue.Queue[str] = queue.Queue()
        for stream, q in ((proc.stdout, self.stdout), (proc.stderr, self.stderr)):
            assert stream is not None
            threading.Thread(target=_pump, args=(stream, q), daemon=True).start()

    def wait_stderr(self, text: str) -> str:
        end = time.monotonic() + TIMEOUT
        seen: list[str] = []
        while time.monotonic() < end:
            try:
                line = self.stderr.get(timeout=0.1)
            except queue.Empty:
                assert self.proc.poll() is None, f"exited early: {seen}"
                continue
            seen.append(line)
            if text in line:
                return line
        raise AssertionError(f"{text!r} not on stderr: {seen}")

    def next_record(self, **match: Any) -> dict[str, Any]:
        end = time.monotonic() + TIMEOUT
        seen = []
        while time.monotonic() < end:
            try:
                line = self.stdout.get(timeout=0.1)
            except queue.Empty:
                continue
            rec = json.loads(line)  # every line is one JSON object
            assert isinstance(rec, dict)
            seen.append(rec)
            if all(rec.get(k) == v for k, v in match.items()):
                return rec
        raise AssertionError(f"no record like {match}: {seen}")


@contextmanager
def memlens_watch(*args: str) -> Iterator[WatchProcess]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", RUN, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        yield WatchProcess(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)


def test_watch_json_lines_and_ctrl_c(own_fixtures_copy: Path) -> None:
    fixtures_copy = own_fixtures_copy
    f = fixtures_copy / "project-ocean/agents/courier/memory/vault/obs-2026-11-09-001.md"
    with memlens_watch(str(fixtures_copy), "--json", "--as-of", "2026-11-22") as w:
        w.wait_stderr(f"watching {len(discover(fixtures_copy))} vault(s)")

        text = f.read_text().replace("Hardcover returns", "Hardcover returns (edited)")
        tmp = f.with_name(".obs.tmp")
        tmp.write_text(text)
        os.replace(tmp, f)
        rec = w.next_record(change="changed")
        assert rec["vault"] == "project-ocean"
        assert rec["format"] == "project-ocean"
        assert rec["id"] == "courier/obs-2026-11-09-001"
        assert rec["path"] == "agents/courier/memory/vault/obs-2026-11-09-001.md"
        assert rec["health"] in {"active", "fading", "expired", "stable"}

        graph = fixtures_copy / "cognitive-memory/graph"
        # a valid memory (graph/solutions/ also holds an invalid duplicate)
        g = graph / "solutions" / "cut-cold-start-time-of-the-rules-engine-e21b6f.md"
        os.rename(g, graph / "fixes" / g.name)
        rec = w.next_record(change="moved")
        assert rec["old_path"] == f"graph/solutions/{g.name}"
        assert rec["path"] == f"graph/fixes/{g.name}"
        assert rec["vault"] == "cognitive-memory"

        shutil.copytree(DEMO / "observation-v1", fixtures_copy / "more" / "ov")
        rec = w.next_record(change="added", id="obs-101", vault="more/ov")
        assert rec["format"] == "observation-v1"

        (
            fixtures_copy / "project-ocean/agents/courier/memory/vault/obs-2026-11-18-001.md"
        ).write_text("")
        rec = w.next_record(change="problem", vault="project-ocean")
        assert rec["reason"] == "empty_file" and rec["cleared"] is False

        w.proc.send_signal(signal.SIGINT)
        assert w.proc.wait(TIMEOUT) == 0


def test_watch_plain_lines_and_sigterm(own_fixtures_copy: Path) -> None:
    f = own_fixtures_copy / "project-ocean/agents/courier/memory/vault/obs-2026-11-09-001.md"
    with memlens_watch(str(own_fixtures_copy / "project-ocean")) as w:
        w.wait_stderr("watching 1 vault(s)")
        f.unlink()
        end = time.monotonic() + TIMEOUT
        line = ""
        while time.monotonic() < end and "removed" not in line:
            try:
                line = w.stdout.get(timeout=0.1)
            except queue.Empty:
                continue
        assert line.startswith("removed"), line
        assert "courier/obs-2026-11-09-001" in line
        w.proc.send_signal(signal.SIGTERM)
        assert w.proc.wait(TIMEOUT) == 0
