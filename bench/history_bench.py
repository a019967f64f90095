"""`python -m bench history`: one memory's git history in a 10,000-commit repository.

Builds a repository with `git fast-import` in a temporary folder (a few
seconds): three vaults in a subfolder (`vaults/`), and COMMITS commits, each
one of

- an edit of one of 400 Project Ocean notes (50%),
- a Dream Cycle change (30%): a new section appended, or a section's body
  edited; past 150 sections the oldest is removed (as the decay run
  archives it), so observations.md stays near its working size (~50 KB),
- an experience record appended (10%; the file ends near 400 KB),
- an unrelated file outside the vaults (10%).

One memory of each kind is the target: the note (edited every ~300 commits,
archived by a rename near the end), the section (edited every ~200 commits)
and the record (edited a few times).  Then it times `memory_history` (the
core call the CLI and the app make: git log, blob reads, extraction) for
each, warm (best and median of --runs), and the whole `memlens history`
command once as a separate process (Python start and the catalog load
included).  The first read ever is also timed as a new process with an
empty cache folder (what a first `memlens history PATH ID --json` costs),
and then another memory of the same file in a new process (read from the
versions the first read kept, not from git).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memlens.core.model import Memory

NOTES = 400
MAX_SECTIONS = 150
TARGET_NOTE = "ocean/agents/atlas/memory/vault/obs-2026-01-01-007.md"
TARGET_NOTE_ARCHIVED = "ocean/agents/atlas/memory/archive/obs-2026-01-01-007.md"
TARGET_TITLE = "Target section"
TARGET_RECORD = "exp_target"
WORDS = [
    "disk",
    "cache",
    "sync",
    "review",
    "lease",
    "deploy",
    "rollback",
    "index",
    "latency",
    "budget",
    "queue",
    "retry",
    "schema",
    "migration",
    "token",
    "backup",
    "alert",
    "owner",
    "sprint",
    "design",
    "metric",
    "trace",
]


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def _note(rng: random.Random, k: int) -> str:
    return (
        f"---\ntags: [bench]\nconfidence: 0.{rng.randint(5, 9)}\ncreated: 2026-01-01\n"
        f"decay: linear-365d\nsource: atlas\n---\nRevision {k}. {_text(rng, 120)}\n"
    )


def _section(title: str, rng: random.Random) -> str:
    return (
        f"## {title}\n<!-- dc:type=fact dc:importance={rng.randint(4, 9)}.0 dc:ttl=180"
        f" dc:date=2026-01-01 -->\n{_text(rng, 40)}\n\n"
    )


def _record(rid: str, rng: random.Random, p: float = 0.9) -> str:
    obj = {
        "id": rid,
        "type": "occurrence",
        "created_at": "2026-01-01T09:00:00Z",
        "content": {"text": _text(rng, 25), "media": [], "structured": {}},
        "provenance": {"sources": [], "actor": "user", "method": "capture"},
        "evidence_ptrs": [],
        "confidence": {"p": p, "method": "direct_capture"},
        "parents": [],
    }
    return json.dumps(obj) + "\n"


class _Stream:
    """A git fast-import stream, one commit at a time."""

    def __init__(self, out: list[bytes]) -> None:
        self.out = out
        self.n = 0

    def commit(self, message: str, ops: list[tuple[str, str, str | None]]) -> None:
        self.n += 1
        when = 1_760_000_000 + self.n * 600
        msg = message.encode()
        head = (
            f"commit refs/heads/main\nauthor Bench <bench@example.invalid> {when} +0000\n"
            f"committer Bench <bench@example.invalid> {when} +0000\ndata {len(msg)}\n"
        ).encode()
        self.out.append(head + msg + b"\n")
        for kind, path, data in ops:
            if kind == "M":
                assert data is not None
                raw = data.encode()
                where = path[3:] if path.startswith("../") else f"vaults/{path}"
                self.out.append(f"M 100644 inline {where}\ndata {len(raw)}\n".encode())
                self.out.append(raw + b"\n")
            else:  # "R": data is the new path
                self.out.append(f'R "vaults/{path}" "vaults/{data}"\n'.encode())
        self.out.append(b"\n")


def _initial(rng: random.Random, s: _Stream, notes: dict[str, str]) -> tuple[list[str], str]:
    for i in range(NOTES):
        notes[f"ocean/agents/atlas/memory/vault/obs-2026-01-01-{i:03d}.md"] = _note(rng, 0)
    sections = [_section(f"Observation {i}", rng) for i in range(60)]
    sections.insert(30, _section(TARGET_TITLE, rng))
    records = "".join(_record(f"exp_{i}", rng) for i in range(50))
    records += _record(TARGET_RECORD, rng)
    ops: list[tuple[str, str, str | None]] = [("M", p, t) for p, t in notes.items()]
    ops += [
        ("M", "dream/observations.md", "# Observations\n\n" + "".join(sections)),
        ("M", "exp/experiences.jsonl", records),
    ]
    s.commit("import the vaults", ops)
    return sections, records


def build(top: Path, commits: int, seed: int) -> None:
    """The repository described in the module docstring, at `top`."""
    rng = random.Random(seed)
    chunks: list[bytes] = []
    s = _Stream(chunks)
    notes: dict[str, str] = {}
    sections, records = _initial(rng, s, notes)
    archived_note = False
    serial = 0
    while s.n < commits:
        k = s.n
        roll = rng.random()
        if k % 300 == 150 and not archived_note:
            notes[TARGET_NOTE] = _note(rng, k)
            s.commit(f"atlas: revise target note ({k})", [("M", TARGET_NOTE, notes[TARGET_NOTE])])
        elif k == commits - 500 and not archived_note:
            archived_note = True
            s.commit("decay: archive the target note", [("R", TARGET_NOTE, TARGET_NOTE_ARCHIVED)])
        elif k % 200 == 100:
            at = next(i for i, t in enumerate(sections) if t.startswith(f"## {TARGET_TITLE}\n"))
            sections[at] = _section(TARGET_TITLE, rng)
            s.commit("dream: edit the target section", [_obs(sections)])
        elif k % 2500 == 1200:
            records = records.replace(
                next(r for r in records.splitlines() if TARGET_RECORD in r) + "\n",
                _record(TARGET_RECORD, rng, round(rng.random(), 2)),
            )
            s.commit("exp: correct the target record", [("M", "exp/experiences.jsonl", records)])
        elif roll < 0.50:
            path = rng.choice(sorted(p for p in notes if p != TARGET_NOTE))
            notes[path] = _note(rng, k)
            s.commit(f"atlas: update {path.rsplit('/', 1)[1]}", [("M", path, notes[path])])
        elif roll < 0.80:
            serial += 1
            ops = _dream_change(rng, sections, serial)
            if len(sections) > MAX_SECTIONS:
                sections.pop(0 if not sections[0].startswith(f"## {TARGET_TITLE}") else 1)
                ops = [_obs(sections)]
            s.commit("dream: observe", ops)
        elif roll < 0.90:
            serial += 1
            records += _record(f"exp_n{serial}", rng)
            s.commit("exp: capture", [("M", "exp/experiences.jsonl", records)])
        else:
            s.commit("docs: unrelated", [("M", "../NOTES.md", _text(rng, 30) + "\n")])
    subprocess.run(["git", "init", "-q", "-b", "main", str(top)], check=True, env=_env())
    subprocess.run(
        ["git", "fast-import", "--quiet"],
        cwd=top,
        input=b"".join(chunks),
        check=True,
        env=_env(),
    )
    subprocess.run(["git", "checkout", "-q", "main"], cwd=top, check=True, env=_env())


def _obs(sections: list[str]) -> tuple[str, str, str | None]:
    return ("M", "dream/observations.md", "# Observations\n\n" + "".join(sections))


def _dream_change(
    rng: random.Random, sections: list[str], serial: int
) -> list[tuple[str, str, str | None]]:
    if rng.random() < 0.5:
        sections.append(_section(f"Observation n{serial}", rng))
    else:
        i = rng.randrange(len(sections))
        if not sections[i].startswith(f"## {TARGET_TITLE}\n"):
            title = sections[i].split("\n", 1)[0][3:]
            sections[i] = _section(title, rng)
    return [_obs(sections)]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    return env


def _cpu() -> float:
    """CPU seconds of this process and its finished children (git): load-independent."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _time(fn: Callable[[], object], runs: int, before: Callable[[], None]) -> list[float]:
    """[best wall, median wall, median CPU] of `runs` calls, `before` run before each."""
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(runs):
        before()
        c0, t0 = _cpu(), time.perf_counter()
        fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(_cpu() - c0)
    return [min(walls), statistics.median(walls), statistics.median(cpus)]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench history", description=__doc__)
    ap.add_argument("--commits", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seed", type=int, default=20)
    ap.add_argument(
        "--keep", type=Path, default=None, help="Build here and keep it (reused if there)."
    )
    args = ap.parse_args(argv)
    if shutil.which("git") is None:
        print("git is not installed", file=sys.stderr)
        return 1
    tmp = Path(tempfile.mkdtemp(prefix="memlens-bench-history-"))
    top = args.keep or tmp / "repo"
    try:
        t0 = time.perf_counter()
        if not (top / ".git").is_dir():
            build(top, args.commits, args.seed)
        built = time.perf_counter() - t0
        return _report(top, args, built)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _fresh_cache(root: Path) -> Callable[[], None]:
    """Point the history cache at a new empty folder below `root` (a first read ever)."""
    count = [0]

    def fresh() -> None:
        count[0] += 1
        os.environ["MEMLENS_CACHE_DIR"] = str(root / f"cold-{count[0]}")

    return fresh


def _kept_cache(folder: Path) -> Callable[[], None]:
    def kept() -> None:
        os.environ["MEMLENS_CACHE_DIR"] = str(folder)

    return kept


def _ms(values: list[float]) -> str:
    best, median, cpu = (f"{x * 1000:.0f}" for x in values)
    return f"wall best {best} ms, median {median} ms, CPU {cpu} ms"


def _cli(top: Path, memory_id: str, env: dict[str, str], *flags: str) -> float:
    """Wall seconds of one `memlens [flags] history --json` as a new process."""
    return _cli_cpu(top, memory_id, env, *flags)[0]


def _cli_cpu(top: Path, memory_id: str, env: dict[str, str], *flags: str) -> tuple[float, float]:
    """Wall and CPU seconds (memlens and its git children) of one `memlens history --json`."""
    memlens = Path(sys.executable).with_name("memlens")
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(
        [str(memlens), *flags, "history", str(top / "vaults"), memory_id, "--json"],
        check=True,
        capture_output=True,
        env=env,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - kids.ru_utime - kids.ru_stime
    return wall, cpu


def _cold_cli(
    top: Path, memory: Memory, sibling: Memory | None, caches: Path, runs: int
) -> list[str]:
    """The first read ever in a new process, and then another memory of the same file.

    Each run gets an empty cache folder: with nothing at all (the scan
    store is made too, as on a first `memlens` ever), and with the scan
    store made by a `memlens list` first (the history cache alone empty).
    Medians of `runs`.
    """
    cold: list[tuple[float, float]] = []
    scanned: list[tuple[float, float]] = []
    second: list[tuple[float, float]] = []
    memlens = Path(sys.executable).with_name("memlens")
    for n in range(runs):
        env = dict(os.environ, MEMLENS_CACHE_DIR=str(caches / f"cli-cold-{memory.path}-{n}"))
        cold.append(_cli_cpu(top, memory.id, env))
        env = dict(os.environ, MEMLENS_CACHE_DIR=str(caches / f"cli-scan-{memory.path}-{n}"))
        subprocess.run(
            [str(memlens), "list", str(top / "vaults")], check=True, capture_output=True, env=env
        )
        scanned.append(_cli_cpu(top, memory.id, env))
        if sibling is not None:
            second.append(_cli_cpu(top, sibling.id, env))

    def med(pairs: list[tuple[float, float]]) -> str:
        wall = statistics.median(p[0] for p in pairs) * 1000
        cpu = statistics.median(p[1] for p in pairs) * 1000
        return f"wall {wall:.0f} ms, CPU {cpu:.0f} ms"

    lines = [
        f"  first read ever, a new process, empty cache folder:        {med(cold)}",
        f"  first read, a new process, scan store kept, history empty: {med(scanned)}",
    ]
    if second:
        lines.append(f"  then another memory of the same file, a new process:       {med(second)}")
    return lines


def _new_commit(top: Path, n: int) -> None:
    """One more commit that changes the three targets (the benchmark's repository only)."""
    dream = top / "vaults/dream/observations.md"
    text = dream.read_text()
    at = text.index(f"## {TARGET_TITLE}\n")
    dream.write_text(
        text[:at] + f"## {TARGET_TITLE}\n<!-- extra {n} -->\n" + text[at:].split("\n", 1)[1]
    )
    exp = top / "vaults/exp/experiences.jsonl"
    lines = exp.read_text().splitlines(keepends=True)
    for i, line in enumerate(lines):
        obj = json.loads(line)
        if obj.get("id") == TARGET_RECORD:
            obj["confidence"]["p"] = round(0.5 + n / 100, 2)
            lines[i] = json.dumps(obj) + "\n"
    exp.write_text("".join(lines))
    note = top / "vaults" / TARGET_NOTE_ARCHIVED
    note.write_text(note.read_text() + f"Addendum {n}.\n")
    env = _env() | {"GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid"}
    env |= {"GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}
    subprocess.run(
        ["git", "commit", "-qam", f"bench: one more ({n})"], cwd=top, env=env, check=True
    )


def _report(top: Path, args: argparse.Namespace, built: float) -> int:
    from memlens.core.scan.vault import open_catalog

    count = (
        subprocess.run(
            ["git", "rev-list", "--count", "HEAD"], cwd=top, capture_output=True, env=_env()
        )
        .stdout.decode()
        .strip()
    )
    load = os.getloadavg()[0]
    print(f"repository: {count} commits, built in {built:.1f} s (git fast-import)")
    print(f"load average at the start: {load:.1f} on {os.cpu_count()} cores")
    catalog = open_catalog(top / "vaults")
    section = next(m for m in catalog.memories() if m.title == TARGET_TITLE)
    targets = {
        "project-ocean note (renames followed)": catalog.get("atlas/obs-2026-01-01-007"),
        "Dream Cycle section (every version read)": section,
        "experience record (every version read)": catalog.get(TARGET_RECORD),
    }
    caches = Path(tempfile.mkdtemp(prefix="memlens-bench-history-cache-"))
    saved = os.environ.get("MEMLENS_CACHE_DIR")
    try:
        for label, memory in targets.items():
            _one(label, memory, top, caches, args.runs)
            sibling = None
            if label != "project-ocean note (renames followed)":
                sibling = next(
                    m
                    for m in catalog.memories()
                    if m.path == memory.path and m.id != memory.id and m.format == memory.format
                )
            for line in _cold_cli(top, memory, sibling, caches, min(args.runs, 3)):
                print(line)
        if args.keep is None:
            _after_commits(targets, top, caches, args.runs)
    finally:
        if saved is None:
            os.environ.pop("MEMLENS_CACHE_DIR", None)
        else:
            os.environ["MEMLENS_CACHE_DIR"] = saved
        shutil.rmtree(caches, ignore_errors=True)
    return 0


def _one(label: str, memory: Memory, top: Path, caches: Path, runs: int) -> None:
    from memlens.core.history import memory_history, versions

    kept = caches / f"kept-{memory.id.replace('/', '_')}"
    h = memory_history(memory, cache=False)

    def plain() -> None:
        versions._PARTS.clear()
        memory_history(memory, cache=False)

    before = _time(plain, runs, lambda: None)
    cold = _time(lambda: memory_history(memory), runs, _fresh_cache(caches))
    _kept_cache(kept)()
    memory_history(memory)
    warm = _time(lambda: memory_history(memory), runs, _kept_cache(kept))
    env = dict(os.environ, MEMLENS_CACHE_DIR=str(kept))
    cli_plain = _cli(top, memory.id, env, "--no-cache")
    _cli(top, memory.id, env)  # the scan store and the history cache made
    cli_kept = _cli(top, memory.id, env)
    print(
        f"{label}: {len(h.commits)} commits of its own\n"
        f"  no cache (git alone, as before):        {_ms(before)}\n"
        f"  first read ever (empty cache folder):   {_ms(cold)}\n"
        f"  read again, any process (kept cache):   {_ms(warm)}\n"
        f"  memlens --no-cache history --json, a new process: {cli_plain * 1000:.0f} ms;"
        f" with the kept caches: {cli_kept * 1000:.0f} ms"
    )


def _after_commits(targets: dict[str, Memory], top: Path, caches: Path, runs: int) -> None:
    """First read after each of `runs` new commits: the kept log is extended, not re-read."""
    from memlens.core.history import memory_history

    walls: dict[str, list[float]] = {label: [] for label in targets}
    cpus: dict[str, list[float]] = {label: [] for label in targets}
    for n in range(runs):
        _new_commit(top, n)
        for label, memory in targets.items():
            _kept_cache(caches / f"kept-{memory.id.replace('/', '_')}")()
            c0, t0 = _cpu(), time.perf_counter()
            memory_history(memory)
            walls[label].append(time.perf_counter() - t0)
            cpus[label].append(_cpu() - c0)
    print(f"after a new commit (kept cache extended; median of {runs} commits):")
    for label in targets:
        print(
            f"  {label}: wall median {statistics.median(walls[label]) * 1000:.0f} ms,"
            f" CPU {statistics.median(cpus[label]) * 1000:.0f} ms"
        )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
