"""Synthetic vaults for benchmarks: real files in all five formats.

`generate(root, total)` writes ``total`` valid memories split evenly over one
vault of each format below ``root``, with text drawn from a made-up vocabulary
under a Zipf law (so TF-IDF postings look like real text: a few very common
words, a long tail of rare ones).  Deterministic for a given seed.  Benchmarks
reuse a folder when its ``.memlens-bench.json`` says it has the same size and
seed (`ensure_vaults`).

    python -m bench generate DIR --size 10000
"""

from __future__ import annotations

import json
import random
import shutil
import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

FORMATS = (
    "dream-cycle",
    "observation-v1",
    "experience-records",
    "project-ocean",
    "cognitive-memory",
)
AS_OF = date(2026, 11, 22)
MARKER = ".memlens-bench.json"

_CONSONANTS = "bcdfghjklmnprstvwz"
_VOWELS = "aeiou"
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


@dataclass
class TextSource:
    """Zipf-distributed pseudo-words, tags and sentences."""

    rng: random.Random
    words: list[str]
    cum: list[float]
    tags: list[str]

    @classmethod
    def make(cls, rng: random.Random, vocab: int = 20000, n_tags: int = 300) -> TextSource:
        seen: set[str] = set()
        words: list[str] = []
        while len(words) < vocab:
            w = "".join(
                rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(rng.randint(2, 4))
            )
            if w not in seen:
                seen.add(w)
                words.append(w)
        cum: list[float] = []
        total = 0.0
        for rank in range(1, vocab + 1):
            total += 1.0 / rank
            cum.append(total)
        return cls(rng, words, cum, rng.sample(words[200:2000], n_tags))

    def phrase(self, n: int) -> str:
        return " ".join(self.rng.choices(self.words, cum_weights=self.cum, k=n))

    def title(self) -> str:
        return self.phrase(self.rng.randint(4, 8)).capitalize()

    def body(self) -> str:
        sentences = [self.phrase(self.rng.randint(6, 14)).capitalize() + "." for _ in range(3)]
        return " ".join(sentences)

    def tag_list(self) -> list[str]:
        return self.rng.sample(self.tags, self.rng.randint(1, 4))


def _split(total: int) -> dict[str, int]:
    base, extra = divmod(total, len(FORMATS))
    return {f: base + (1 if i < extra else 0) for i, f in enumerate(FORMATS)}


def _day(rng: random.Random, span: int = 240) -> date:
    return AS_OF - timedelta(days=rng.randint(0, span))


def _unique_title(text: TextSource, used: set[str]) -> str:
    while True:
        t = text.title()
        if t.lower() not in used:
            used.add(t.lower())
            return t


def write_dream_cycle(root: Path, n: int, text: TextSource) -> None:
    rng = text.rng
    root.mkdir(parents=True, exist_ok=True)
    used: set[str] = set()
    parts = ["# Observations\n\nSynthetic observer log.\n"]
    for _ in range(n):
        kind = rng.choice(list(_DREAM_TYPES))
        ttl = _DREAM_TYPES[kind]
        meta = (
            f"dc:type={kind} dc:importance={rng.uniform(3, 10):.1f} "
            f"dc:ttl={'never' if ttl is None else ttl} dc:confidence={rng.uniform(0.5, 1):.2f} "
            f"dc:source=explicit dc:date={_day(rng).isoformat()}"
        )
        parts.append(f"\n## {_unique_title(text, used)}\n<!-- {meta} -->\n{text.body()}\n")
    (root / "observations.md").write_text("".join(parts), encoding="utf-8")
    (root / "archive.jsonl").write_text("", encoding="utf-8")


def write_observation_v1(root: Path, n: int, text: TextSource) -> None:
    rng = text.rng
    folder = root / "observations"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        when = datetime.combine(_day(rng), datetime.min.time(), UTC) + timedelta(
            seconds=rng.randint(0, 86399)
        )
        title = text.title()
        doc = (
            "---\nspec: observation/v1\n"
            f"id: obs-{i:06d}\n"
            f"timestamp: {when.strftime('%Y-%m-%dT%H:%M:%SZ')}\n"
            f"source: agent/{rng.choice(_AGENTS)}-bot\n"
            f'event: "{title}"\n'
            "context:\n  project: synthetic\n"
            f"---\n\n# Observation: {title}\n\n{text.body()}\n"
        )
        (folder / f"obs-{i:06d}.md").write_text(doc, encoding="utf-8")


def write_experience_records(root: Path, n: int, text: TextSource) -> None:
    rng = text.rng
    root.mkdir(parents=True, exist_ok=True)
    lines = []
    for i in range(n):
        when = datetime.combine(_day(rng), datetime.min.time(), UTC) + timedelta(
            seconds=rng.randint(0, 86399)
        )
        ts = when.strftime("%Y-%m-%dT%H:%M:%SZ")
        rec = {
            "id": f"exp_{ts}_{i:06x}",
            "type": rng.choice(_EXP_TYPES),
            "created_at": ts,
            "content": {"text": f"{text.title()}. {text.body()}"},
            "provenance": {"sources": [], "actor": "agent", "method": "capture"},
            "confidence": {"p": round(rng.uniform(0.3, 1.0), 2)},
            "parents": [],
            "tags": text.tag_list(),
        }
        lines.append(json.dumps(rec))
    (root / "experiences.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for name in ("views.jsonl", "stances.jsonl", "wal.jsonl"):
        (root / name).write_text("", encoding="utf-8")


def write_project_ocean(root: Path, n: int, text: TextSource) -> None:
    rng = text.rng
    seq: dict[tuple[str, str], int] = {}
    for i in range(n):
        agent = _AGENTS[i % len(_AGENTS)]
        area = "archive" if rng.random() < 0.1 else "vault"
        created = _day(rng, 200)
        stem_day = created.isoformat()
        k = seq[(agent, stem_day)] = seq.get((agent, stem_day), 0) + 1
        folder = root / "agents" / agent / "memory" / area
        folder.mkdir(parents=True, exist_ok=True)
        decay = rng.choice(
            ["linear-14d", "linear-30d", "linear-90d", "linear-180d", "exponential-30d", None]
        )
        tags = ", ".join(text.tag_list())
        doc = (
            f"---\ntags: [{tags}]\nconfidence: {rng.uniform(0.3, 1):.2f}\n"
            f"created: {created.isoformat()}\n"
            + (f"decay: {decay}\n" if decay else "")
            + f"source: {agent}\nbacklinks: []\n---\n{text.title()}\n\n{text.body()}\n"
        )
        (folder / f"obs-{stem_day}-{k:03d}.md").write_text(doc, encoding="utf-8")


def write_cognitive_memory(root: Path, n: int, text: TextSource) -> None:
    rng = text.rng
    for d in _COG_DIRS.values():
        (root / "graph" / d).mkdir(parents=True, exist_ok=True)
    (root / "vault").mkdir(parents=True, exist_ok=True)
    for _ in range(n):
        kind = rng.choice(list(_COG_DIRS))
        mid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        title = text.title()
        created = datetime.combine(_day(rng, 400), datetime.min.time(), UTC)
        doc = (
            f'---\nid: {mid}\ntype: {kind}\ntitle: "{title}"\n'
            f"tags: [{', '.join(text.tag_list())}]\n"
            f"importance: {rng.uniform(0.2, 1):.2f}\nconfidence: {rng.uniform(0.5, 1):.2f}\n"
            f"created: {created.isoformat()}\nupdated: {created.isoformat()}\n---\n{text.body()}\n"
        )
        slug = "-".join(title.lower().split()[:6])
        folder = root / ("vault" if rng.random() < 0.01 else f"graph/{_COG_DIRS[kind]}")
        (folder / f"{slug}-{mid[:6]}.md").write_text(doc, encoding="utf-8")


WRITERS = {
    "dream-cycle": write_dream_cycle,
    "observation-v1": write_observation_v1,
    "experience-records": write_experience_records,
    "project-ocean": write_project_ocean,
    "cognitive-memory": write_cognitive_memory,
}


def generate(root: Path, total: int, seed: int = 0) -> dict[str, int]:
    """Write `total` memories over the five formats below `root` (emptied first)."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    text = TextSource.make(random.Random(seed))
    counts = _split(total)
    for fmt, n in counts.items():
        WRITERS[fmt](root / fmt, n, text)
    (root / MARKER).write_text(json.dumps({"total": total, "seed": seed, "counts": counts}))
    return counts


def ensure_vaults(root: Path, total: int, seed: int = 0) -> Path:
    """`root`, generated unless it already holds this size and seed."""
    try:
        info = json.loads((root / MARKER).read_text())
        if info.get("total") == total and info.get("seed") == seed:
            return root
    except (OSError, ValueError):
        pass
    generate(root, total, seed)
    return root


def vocabulary(seed: int = 0) -> TextSource:
    """The same text source `generate` used, for picking realistic queries."""
    return TextSource.make(random.Random(seed))


def main(argv: list[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m bench generate")
    ap.add_argument("dir", type=Path)
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    counts = generate(args.dir, args.size, args.seed)
    print(json.dumps(counts))
    return 0
