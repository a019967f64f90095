"""Real processes for the benchmark: the installed CLI, the app probe, the cache folder.

Everything here is timed from outside, the way a user meets it: a fresh
process per call, wall-clock from just before it is spawned to its exit (or
to the stamp it reports), its own peak RSS from `os.wait4`.  Each call gets
its cache folder through ``$MEMLENS_CACHE_DIR``.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
#: The installed entry point (`make .venv/.installed`), next to this interpreter.
MEMLENS = Path(sys.executable).with_name("memlens")


@dataclass
class Runs:
    """Seconds (and peak RSS) of several runs of one measurement."""

    seconds: list[float] = field(default_factory=list)
    rss_mb: list[float] = field(default_factory=list)
    #: Bytes in the cache folder the runs used (warm: what a previous run left there).
    cache_bytes: int = 0

    @property
    def median(self) -> float | None:
        return statistics.median(self.seconds) if self.seconds else None

    def spread(self) -> str:
        if len(self.seconds) < 2:
            return ""
        return f"{min(self.seconds):.2f}-{max(self.seconds):.2f}"


def env_for(cache: Path) -> dict[str, str]:
    """A process environment with its own cache folder, bytecode allowed.

    An installed memlens imports from compiled bytecode; a shell that sets
    PYTHONDONTWRITEBYTECODE would make every start compile it again, which
    no user start pays.  No user config file is read (defaults apply).
    """
    env = dict(os.environ, MEMLENS_CACHE_DIR=str(cache))
    env["MEMLENS_CONFIG"] = str(cache / "no-config.toml")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def compile_bytecode() -> None:
    """Compile memlens and the benchmark once, as installing the package does."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "core", "tui", "bench"],
        cwd=REPO,
        env=env_for(Path(tempfile.gettempdir())),
        check=True,
    )


#: GNU time prints the child's peak RSS; without it os.wait4's figure is used.
GNU_TIME = "/usr/bin/time" if Path("/usr/bin/time").exists() else None


def run_once(cmd: list[str], cache: Path) -> tuple[float, float, bytes]:
    """(seconds, peak RSS MB, stdout) of one process; raises if it fails.

    Why GNU time for the RSS: Linux keeps a process's peak RSS across exec,
    and a child spawned from this (large) process starts with this process's
    RSS as its peak; spawned from the small `time` it does not.
    """
    measured = [GNU_TIME, "-f", "%M", *cmd] if GNU_TIME else cmd
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        proc = subprocess.Popen(measured, cwd=REPO, env=env_for(cache), stdout=out, stderr=err)
        _pid, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode not in (0, 1):  # 1: problems found, still an answer
        raise RuntimeError(f"{cmd[1:3]} exited {proc.returncode}: {stderr[-2000:]!r}")
    rss_mb = usage.ru_maxrss / 1024
    if GNU_TIME:
        rss_mb = int(stderr.decode(errors="replace").strip().splitlines()[-1]) / 1024
    return seconds, rss_mb, stdout


def fresh_cache() -> Path:
    return Path(tempfile.mkdtemp(prefix="memlens-bench-cache-"))


def time_cli(args: list[str], runs: int) -> tuple[Runs, Runs]:
    """(cold, warm) runs of ``memlens ARGS``.

    Cold: every run with a new, empty cache folder (the page cache is warm:
    the vault was just read).  Warm: one unmeasured run fills a cache
    folder, then `runs` runs use it.
    """
    cold, warm = Runs(), Runs()
    for _ in range(runs):
        cache = fresh_cache()
        try:
            s, rss, _out = run_once([str(MEMLENS), *args], cache)
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        cold.seconds.append(s)
        cold.rss_mb.append(rss)
    cache = fresh_cache()
    try:
        run_once([str(MEMLENS), *args], cache)
        warm.cache_bytes = rewritten({}, snapshot(cache))[2]
        for _ in range(runs):
            s, rss, _out = run_once([str(MEMLENS), *args], cache)
            warm.seconds.append(s)
            warm.rss_mb.append(rss)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return cold, warm


def run_app(root: Path, cache: Path, search: bool) -> dict[str, Any]:
    """One app start (bench.app_probe): seconds from spawn to each stage, RSS, keystrokes."""
    cmd = [sys.executable, "-m", "bench.app_probe", str(root)] + (["--search"] if search else [])
    spawned = time.monotonic()
    _s, rss, stdout = run_once(cmd, cache)
    stamps: dict[str, Any] = json.loads(stdout.decode().strip().splitlines()[-1])
    # The probe's own figure (VmHWM) is not inflated by this process's size.
    out: dict[str, Any] = {"rss_mb": stamps.get("rss_mb", rss), "rows": stamps["rows"]}
    for stage in ("imported", "first_rows", "all_shown", "listed", "persisted", "searchable"):
        if stage in stamps:
            out[stage] = stamps[stage] - spawned
    if "persisted" in stamps:
        out["persist_s"] = stamps["persisted"] - stamps["load_finished"]
    if "rows_kept" in stamps:
        out["rows_kept_s"] = stamps["rows_kept"] - stamps["load_finished"]
    if "searchable" in stamps:
        out["index_s"] = stamps["searchable"] - stamps["search_opened"]
        out["keystrokes_s"] = stamps["keystrokes_s"]
    return out


# --------------------------------------------------------------------------- the cache folder


Snapshot = dict[str, tuple[int, int]]


def snapshot(cache: Path) -> Snapshot:
    """relative path -> (size, mtime_ns) of every file in the cache folder."""
    out: Snapshot = {}
    for folder, _dirs, files in os.walk(cache):
        for name in files:
            path = Path(folder, name)
            st = path.stat()
            out[path.relative_to(cache).as_posix()] = (st.st_size, st.st_mtime_ns)
    return out


def rewritten(before: Snapshot, after: Snapshot) -> tuple[int, int, int]:
    """(files rewritten or added, their bytes, bytes of the whole folder after)."""
    changed = [p for p, stamp in after.items() if before.get(p) != stamp]
    return len(changed), sum(after[p][0] for p in changed), sum(s for s, _m in after.values())


#: The unit `changed_blocks` compares files in (SQLite's page size).
BLOCK = 4096

Blocks = dict[str, list[bytes]]


def block_digests(cache: Path) -> Blocks:
    """relative path -> a short digest of each BLOCK-byte block of every file in the folder."""
    import hashlib

    out: Blocks = {}
    for folder, _dirs, files in os.walk(cache):
        for name in files:
            path = Path(folder, name)
            digests: list[bytes] = []
            with path.open("rb") as fh:
                while block := fh.read(BLOCK):
                    digests.append(hashlib.blake2b(block, digest_size=8).digest())
            out[path.relative_to(cache).as_posix()] = digests
    return out


def changed_blocks(before: Blocks, after: Blocks) -> int:
    """Bytes of the blocks that differ or are new in `after` (a file updated in place,
    as SQLite does, counts only its changed pages; a file written anew counts whole)."""
    changed = 0
    for rel, blocks in after.items():
        old = before.get(rel, [])
        changed += BLOCK * sum(
            1 for i, digest in enumerate(blocks) if i >= len(old) or old[i] != digest
        )
    return changed


def touch_one(root: Path) -> tuple[Path, Callable[[], None]]:
    """Change one memory file below `root` as an agent would; returns it and the undo.

    A file-per-memory format is preferred (a body line added, atomic
    replace); otherwise a section of observations.md gets a sentence, or one
    line is appended to experiences.jsonl.
    """
    candidates = sorted(p for p in root.rglob("*.md") if p.name != "observations.md")
    if candidates:
        path = candidates[len(candidates) // 2]
        original = path.read_bytes()
        _replace(path, original + b"\nChecked again after the benchmark's edit.\n")
    else:
        stores = sorted(root.rglob("observations.md")) or sorted(root.rglob("experiences.jsonl"))
        path = stores[0]
        original = path.read_bytes()
        if path.name == "observations.md":
            cut = original.find(b"\n## ", len(original) // 2)
            _replace(path, original[:cut] + b" Checked again." + original[cut:])
        else:
            line = original.splitlines()[0].replace(b'"exp_', b'"exp_bench_', 1)
            _replace(path, original + line + b"\n")
    return path, lambda: _replace(path, original)


def _replace(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.bench-tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
