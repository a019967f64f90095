"""Realistic synthetic vaults for the benchmarks: real files in all five formats.

`generate(root, total, mix=...)` writes `total` valid memories below `root`.
Text comes from `bench.prose` (technical notes, bodies 0.3-3 KB, median
about 1 KB, with hosts, tickets, versions and commands), so file sizes and
the words a search index sees look like an agent's real vault.

Layout, per format:

- cognitive-memory, project-ocean, observation-v1: one file per memory, as
  those systems write them (type folders, agent folders, one observation
  each); cognitive memories carry relations to earlier ones, Project Ocean
  observations backlinks, observation/v1 a context mapping.
- dream-cycle: one ``observations.md`` holds every section of a workspace.
  A vault holds at most `DREAM_SECTIONS_MAX` (2,500) sections, about 3 MB:
  the observer appends a few sections a day and its decay archives what
  falls below importance 3, so a store of a year or two of heavy use is in
  the low thousands; a larger share becomes several workspaces
  (``dream-cycle/ws-01`` ...), as several agents would have.
- experience-records: one ``experiences.jsonl`` per store, at most
  `EXPERIENCE_LINES_MAX` (25,000) lines, about 35 MB: an append-only log of
  months of captures; more becomes several stores.

`--mix five` splits the memories evenly over the five formats (the store
formats split into vaults as above); `--mix cognitive-memory` (or any
other format id) puts every memory in that one format, like the testers'
100k cognitive-memory vault.  Deterministic for a given seed; a folder is
reused when its marker file says it holds the same size, mix, seed and
generator version (`ensure_vaults`).

    python -m bench generate DIR --size 10000 [--mix cognitive-memory] [--check]
"""

from __future__ import annotations

import json
import random
import shutil
import statistics
import uuid
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from .prose import RELATION_TYPES, Prose

FORMATS = (
    "dream-cycle",
    "observation-v1",
    "experience-records",
    "project-ocean",
    "cognitive-memory",
)
AS_OF = date(2026, 11, 22)
MARKER = ".memlens-bench.json"
#: Bumped when the generated text or layout changes: old folders are regenerated.
GENERATOR = 2
DREAM_SECTIONS_MAX = 2500
EXPERIENCE_LINES_MAX = 25000
MIXES = ("five", *FORMATS)

_DREAM_TYPES = {"fact": 90, "preference": 180, "goal": 365, "habit": 365, "event": 14, "rule": None}
_COG_DIRS = {
    "solution": "solutions",
    "fix": "fixes",
    "decision": "decisions",
    "configuration": "configurations",
    "problem": "problems",
    "workflow": "workflows",
    "code_pattern": "code-patterns",
    "error": "errors",
    "general": "general",
    "procedure": "procedures",
    "insight": "insights",
}
_AGENTS = ("hawk", "shield", "scout", "watchtower")
_EXP_TYPES = ("occurrence", "observation", "inference", "reconciliation")
#: No memory is updated after the benchmark's date.
_LAST = datetime.combine(AS_OF, datetime.min.time(), UTC)
_DECAYS = ("linear-14d", "linear-30d", "linear-90d", "linear-180d", "exponential-30d", None)


@dataclass
class Generated:
    """What was written: shown by the benchmarks beside their figures."""

    total: int
    seed: int
    mix: str
    counts: dict[str, int]
    vaults: int
    files: int
    content_bytes: int
    median_memory_bytes: int
    #: format -> one valid memory id (for `memlens show`).
    sample_ids: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        split = ", ".join(f"{fmt} {n:,}" for fmt, n in self.counts.items() if n)
        return (
            f"{self.total:,} memories ({split}) in {self.vaults} vaults: {self.files:,} files, "
            f"{self.content_bytes / 1e6:.1f} MB content, median memory "
            f"{self.median_memory_bytes:,} bytes (mix {self.mix}, seed {self.seed})"
        )


@dataclass
class _Writer:
    """Shared state of one generation: text source and per-memory sizes."""

    prose: Prose
    sizes: list[int] = field(default_factory=list)
    files: int = 0
    sample_ids: dict[str, str] = field(default_factory=dict)

    @property
    def rng(self) -> random.Random:
        return self.prose.rng

    def write(self, path: Path, text: str) -> int:
        data = text.encode("utf-8")
        path.write_bytes(data)
        self.files += 1
        return len(data)


def _day(rng: random.Random, span: int = 240) -> date:
    return AS_OF - timedelta(days=rng.randint(0, span))


def _stamp(rng: random.Random, span: int = 240) -> datetime:
    return datetime.combine(_day(rng, span), datetime.min.time(), UTC) + timedelta(
        seconds=rng.randint(0, 86399)
    )


def write_dream_cycle(root: Path, n: int, w: _Writer) -> None:
    rng = w.rng
    root.mkdir(parents=True, exist_ok=True)
    used: set[str] = set()
    parts = ["# Observations\n\nObserver log: what the agent noticed, newest last.\n"]
    for _ in range(n):
        topic = w.prose.topic()
        title = w.prose.title(topic)
        while title.lower() in used:  # section ids derive from the title
            title = f"{w.prose.title(topic)} ({rng.randint(2, 999)})"
        used.add(title.lower())
        kind = rng.choice(list(_DREAM_TYPES))
        ttl = _DREAM_TYPES[kind]
        meta = (
            f"dc:type={kind} dc:importance={rng.uniform(3, 10):.1f} "
            f"dc:ttl={'never' if ttl is None else ttl} dc:confidence={rng.uniform(0.5, 1):.2f} "
            f"dc:source={rng.choice(('explicit', 'inferred', 'observed'))} "
            f"dc:date={_day(rng).isoformat()}"
        )
        section = f"\n## {title}\n<!-- {meta} -->\n{w.prose.body(topic)}\n"
        w.sizes.append(len(section.encode("utf-8")))
        parts.append(section)
    w.write(root / "observations.md", "".join(parts))
    w.write(root / "archive.jsonl", "")


def write_observation_v1(root: Path, n: int, w: _Writer) -> None:
    rng = w.rng
    folder = root / "observations"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        when = _stamp(rng)
        topic = w.prose.topic()
        title = w.prose.title(topic).replace('"', "'")
        oid = f"obs-{when.strftime('%Y%m%d')}-{i:06d}"
        doc = (
            "---\nspec: observation/v1\n"
            f"id: {oid}\n"
            f"timestamp: {when.strftime('%Y-%m-%dT%H:%M:%SZ')}\n"
            f"source: agent/{rng.choice(_AGENTS)}-bot\n"
            f'event: "{title}"\n'
            f"context:\n  project: {w.prose.tags(topic)[-1]}\n"
            f"  task: {rng.choice(('triage', 'deploy', 'review', 'incident', 'cleanup'))}\n"
            f"---\n\n# Observation: {title}\n\n{w.prose.body(topic)}\n"
        )
        w.sizes.append(w.write(folder / f"{oid}.md", doc))
        w.sample_ids.setdefault("observation-v1", oid)


def _experience(w: _Writer, i: int, by_rank: list[list[str]]) -> dict[str, object]:
    """One record; an upper-lattice one may derive from earlier, lower records."""
    rng = w.rng
    ts = _stamp(rng).strftime("%Y-%m-%dT%H:%M:%SZ")
    rank = rng.choices(range(4), weights=(50, 30, 15, 5))[0]
    parents: list[str] = []
    if rank and rng.random() < 0.5:
        pool = [pid for r in range(rank) for pid in by_rank[r][-50:]]
        parents = rng.sample(pool, min(len(pool), rng.randint(1, 2)))
    topic = w.prose.topic()
    rid = f"exp_{ts}_{i:06x}"
    by_rank[rank].append(rid)
    return {
        "id": rid,
        "type": _EXP_TYPES[rank],
        "created_at": ts,
        "content": {"text": f"{w.prose.title(topic)}. {w.prose.body(topic)}"},
        "provenance": {"sources": [], "actor": "agent", "method": "capture"},
        "confidence": {"p": round(rng.uniform(0.3, 1.0), 2)},
        "parents": parents,
        "tags": w.prose.tags(topic),
    }


def write_experience_records(root: Path, n: int, w: _Writer) -> None:
    root.mkdir(parents=True, exist_ok=True)
    by_rank: list[list[str]] = [[] for _ in _EXP_TYPES]
    lines = []
    for i in range(n):
        line = json.dumps(_experience(w, i, by_rank), ensure_ascii=False)
        w.sizes.append(len(line.encode("utf-8")) + 1)
        lines.append(line)
    w.write(root / "experiences.jsonl", "\n".join(lines) + "\n")
    for name in ("views.jsonl", "stances.jsonl", "wal.jsonl"):
        w.write(root / name, "")
    if by_rank[0]:
        w.sample_ids.setdefault("experience-records", by_rank[0][0])


def write_project_ocean(root: Path, n: int, w: _Writer) -> None:
    rng = w.rng
    seq: dict[tuple[str, str], int] = {}
    stems: dict[str, list[str]] = {a: [] for a in _AGENTS}
    for i in range(n):
        agent = _AGENTS[i % len(_AGENTS)]
        area = "archive" if rng.random() < 0.1 else "vault"
        created = _day(rng, 200)
        k = seq[(agent, created.isoformat())] = seq.get((agent, created.isoformat()), 0) + 1
        stem = f"obs-{created.isoformat()}-{k:03d}"
        folder = root / "agents" / agent / "memory" / area
        folder.mkdir(parents=True, exist_ok=True)
        decay = rng.choice(_DECAYS)
        topic = w.prose.topic()
        earlier = stems[agent]
        links = (
            rng.sample(earlier[-200:], min(len(earlier), rng.randint(1, 3)))
            if (earlier and rng.random() < 0.25)
            else []
        )
        doc = (
            f"---\ntags: [{', '.join(w.prose.tags(topic))}]\n"
            f"confidence: {rng.uniform(0.3, 1):.2f}\ncreated: {created.isoformat()}\n"
            + (f"decay: {decay}\n" if decay else "")
            + f"source: {agent}\nbacklinks: [{', '.join(links)}]\n---\n"
            f"{w.prose.title(topic)}\n\n{w.prose.body(topic)}\n"
        )
        w.sizes.append(w.write(folder / f"{stem}.md", doc))
        if area == "vault":
            earlier.append(stem)
            w.sample_ids.setdefault("project-ocean", f"{agent}/{stem}")


def _relations(w: _Writer, earlier: list[str]) -> str:
    rng = w.rng
    if not earlier or rng.random() > 0.35:
        return ""
    lines = ["relations:"]
    for target in rng.sample(earlier[-500:], min(len(earlier), rng.randint(1, 3))):
        lines += [
            f"  - target: {target}",
            f"    type: {rng.choice(RELATION_TYPES)}",
            "    direction: outgoing",
            f"    strength: {rng.uniform(0.3, 1):.1f}",
            f'    context: "{w.prose.short(w.prose.topic())}"',
        ]
    return "\n".join(lines) + "\n"


def _procedure_lists(w: _Writer) -> str:
    rng = w.rng
    out = []
    for name in ("steps", "preconditions", "postconditions"):
        out.append(f"{name}:")
        out += [f'  - "{w.prose.short(w.prose.topic())}"' for _ in range(rng.randint(1, 4))]
    return "\n".join(out) + "\n"


def write_cognitive_memory(root: Path, n: int, w: _Writer) -> None:
    rng = w.rng
    for d in _COG_DIRS.values():
        (root / "graph" / d).mkdir(parents=True, exist_ok=True)
    (root / "vault").mkdir(parents=True, exist_ok=True)
    earlier: list[str] = []
    for _ in range(n):
        kind = rng.choice(list(_COG_DIRS))
        mid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        topic = w.prose.topic()
        title = w.prose.title(topic).replace('"', "'")
        created = _stamp(rng, 400).replace(microsecond=0)
        updated = created + timedelta(days=rng.choice((0, 0, 0, 1, 7, 30)))
        doc = (
            f'---\nid: {mid}\ntype: {kind}\ntitle: "{title}"\n'
            f"tags: [{', '.join(w.prose.tags(topic))}]\n"
            f"importance: {rng.uniform(0.2, 1):.2f}\nconfidence: {rng.uniform(0.5, 1):.2f}\n"
            + (_procedure_lists(w) if kind == "procedure" else "")
            + f"created: {created.isoformat()}\nupdated: {min(updated, _LAST).isoformat()}\n"
            + _relations(w, earlier)
            + f"---\n{w.prose.body(topic)}\n"
        )
        slug = "-".join("".join(c for c in word if c.isalnum()) for word in title.lower().split())
        folder = root / ("vault" if rng.random() < 0.01 else f"graph/{_COG_DIRS[kind]}")
        w.sizes.append(w.write(folder / f"{slug[:60].strip('-')}-{mid[:6]}.md", doc))
        earlier.append(mid)
        w.sample_ids.setdefault("cognitive-memory", mid)


WRITERS = {
    "dream-cycle": write_dream_cycle,
    "observation-v1": write_observation_v1,
    "experience-records": write_experience_records,
    "project-ocean": write_project_ocean,
    "cognitive-memory": write_cognitive_memory,
}
#: Formats whose whole vault is one store file: split into several vaults above this.
_STORE_MAX = {"dream-cycle": DREAM_SECTIONS_MAX, "experience-records": EXPERIENCE_LINES_MAX}


def split(total: int, mix: str) -> dict[str, int]:
    """Memories per format: even over the five, or all in one format."""
    if mix not in MIXES:
        raise ValueError(f"unknown mix {mix!r}: one of {', '.join(MIXES)}")
    formats = FORMATS if mix == "five" else (mix,)
    base, extra = divmod(total, len(formats))
    counts = {f: 0 for f in FORMATS}
    counts.update({f: base + (1 if i < extra else 0) for i, f in enumerate(formats)})
    return counts


def vault_plan(counts: dict[str, int]) -> list[tuple[str, str, int]]:
    """(format, folder below the root, memories) for every vault to write."""
    plan: list[tuple[str, str, int]] = []
    for fmt, n in counts.items():
        cap = _STORE_MAX.get(fmt)
        if n == 0:
            continue
        if cap is None or n <= cap:
            plan.append((fmt, fmt, n))
            continue
        chunks = -(-n // cap)
        base, extra = divmod(n, chunks)
        for i in range(chunks):
            plan.append((fmt, f"{fmt}/ws-{i + 1:02d}", base + (1 if i < extra else 0)))
    return plan


def generate(root: Path, total: int, seed: int = 0, mix: str = "five") -> Generated:
    """Write `total` memories below `root` (emptied first); returns what was written."""
    counts = split(total, mix)
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    w = _Writer(Prose.make(random.Random(seed)))
    plan = vault_plan(counts)
    for fmt, folder, n in plan:
        WRITERS[fmt](root / folder, n, w)
    info = Generated(
        total=total,
        seed=seed,
        mix=mix,
        counts=counts,
        vaults=len(plan),
        files=w.files,
        content_bytes=sum(p.stat().st_size for p in root.rglob("*") if p.is_file()),
        median_memory_bytes=int(statistics.median(w.sizes)) if w.sizes else 0,
        sample_ids=w.sample_ids,
    )
    (root / MARKER).write_text(json.dumps({"generator": GENERATOR, **asdict(info)}))
    return info


def ensure_vaults(root: Path, total: int, seed: int = 0, mix: str = "five") -> Path:
    """`root`, generated unless it already holds this size, mix and seed."""
    ensure_generated(root, total, seed, mix)
    return root


def ensure_generated(root: Path, total: int, seed: int = 0, mix: str = "five") -> Generated:
    """What `root` holds, generating it first unless its marker matches."""
    try:
        info = json.loads((root / MARKER).read_text())
        if info.pop("generator", None) == GENERATOR:
            found = Generated(**info)
            if (found.total, found.seed, found.mix) == (total, seed, mix):
                return found
    except (OSError, ValueError, TypeError):
        pass
    return generate(root, total, seed, mix)


def main(argv: list[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m bench generate")
    ap.add_argument("dir", type=Path)
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mix", choices=MIXES, default="five")
    ap.add_argument("--check", action="store_true", help="then read it back with memlens.core")
    args = ap.parse_args(argv)
    info = generate(args.dir, args.size, args.seed, args.mix)
    print(info.describe())
    return check(args.dir, info) if args.check else 0


def check(root: Path, info: Generated) -> int:
    """Read the vaults back: every memory valid, no reference problem, per-format counts."""
    from memlens.core import open_catalog

    catalog = open_catalog(root)
    found: dict[str, int] = {}
    for vault in catalog.vaults:
        found[vault.format] = found.get(vault.format, 0) + len(vault.memories)
    problems = len(list(catalog.problems())) + len(list(catalog.ref_problems()))
    expected = {fmt: n for fmt, n in info.counts.items() if n}
    ok = found == expected and problems == 0 and len(catalog.vaults) == info.vaults
    print(
        f"read back: {len(catalog.vaults)} vaults, {found}, {problems} problems: "
        f"{'ok' if ok else 'MISMATCH'}"
    )
    return 0 if ok else 1
