"""`python -m bench relevance`: how well `memlens search` finds what a person looks for.

Runs every judged query of `bench/relevance_queries.json` through the installed
`memlens search ... --json` (a real process each, as a script or an agent
calls it) over the project's own test vaults, and prints per query kind
(lexical, paraphrase, typo, filtered) and overall:

- MRR: the mean of 1 / rank of the first relevant hit (0 when none is in the
  first `--depth` hits);
- nDCG@10: binary gains, ideal order = every relevant memory first;
- recall@5: the share of relevant memories among the first five hits.

`--rank NAME` passes `--rank NAME` to `memlens search` (when the command has
it), so both rankings can be compared in one run; `--json` prints the figures
and every query's ranks.  The judgements name memories as `vault/id`, with
`vault` and `id` as `memlens list --json` prints them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
QUERIES = HERE / "relevance_queries.json"
KINDS = ("lexical", "paraphrase", "typo", "filtered")


@dataclass
class Judged:
    """One query, what it should find and where memlens put those memories."""

    kind: str
    query: str
    relevant: list[str]
    hits: list[str] = field(default_factory=list)

    def ranks(self) -> list[int]:
        """1-based ranks of the relevant memories found among the hits."""
        wanted = set(self.relevant)
        return [i for i, key in enumerate(self.hits, 1) if key in wanted]

    def reciprocal_rank(self) -> float:
        ranks = self.ranks()
        return 1.0 / ranks[0] if ranks else 0.0

    def ndcg(self, k: int = 10) -> float:
        gain = sum(1.0 / math.log2(r + 1) for r in self.ranks() if r <= k)
        ideal = sum(1.0 / math.log2(r + 1) for r in range(1, min(k, len(self.relevant)) + 1))
        return gain / ideal if ideal else 0.0

    def recall(self, k: int = 5) -> float:
        return sum(1 for r in self.ranks() if r <= k) / len(self.relevant)


def _memlens() -> list[str]:
    exe = Path(sys.executable).with_name("memlens")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "memlens.tui.cli"]


def run_query(
    judged: Judged, vaults: Path, as_of: str, depth: int, rank: str | None, env: dict[str, str]
) -> None:
    """Fill `judged.hits` with the `vault/id` of the first `depth` hits."""
    args = [*_memlens(), "search", str(vaults), judged.query, "--json"]
    args += ["--limit", str(depth), "--as-of", as_of]
    if rank:
        args += ["--rank", rank]
    done = subprocess.run(args, capture_output=True, text=True, env=env, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"memlens search failed for {judged.query!r}: {done.stderr.strip()}")
    records: list[dict[str, Any]] = json.loads(done.stdout or "[]")
    judged.hits = [f"{r['vault']}/{r['id']}" for r in records]


def check_judgements(judged: list[Judged], vaults: Path, env: dict[str, str]) -> None:
    """Refuse judgements naming a memory the vaults do not hold (a stale id scores 0)."""
    args = [*_memlens(), "list", str(vaults), "--json"]
    done = subprocess.run(args, capture_output=True, text=True, env=env, check=False)
    held = {f"{r['vault']}/{r['id']}" for r in json.loads(done.stdout or "[]")}
    missing = sorted({key for j in judged for key in j.relevant} - held)
    if missing:
        raise SystemExit(f"judged memories not in {vaults}: {', '.join(missing)}")


def summarise(judged: list[Judged]) -> dict[str, dict[str, float]]:
    """MRR, nDCG@10 and recall@5 per kind and over all queries."""
    out: dict[str, dict[str, float]] = {}
    for kind in (*KINDS, "overall"):
        group = [j for j in judged if kind in (j.kind, "overall")]
        if not group:
            continue
        out[kind] = {
            "queries": len(group),
            "mrr": sum(j.reciprocal_rank() for j in group) / len(group),
            "ndcg@10": sum(j.ndcg() for j in group) / len(group),
            "recall@5": sum(j.recall() for j in group) / len(group),
        }
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench relevance", description=__doc__)
    ap.add_argument("--queries", type=Path, default=QUERIES)
    ap.add_argument("--rank", default=None, help="passed to memlens search --rank")
    ap.add_argument("--depth", type=int, default=10, help="hits read per query")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per query")
    args = ap.parse_args(argv)

    spec = json.loads(args.queries.read_text(encoding="utf-8"))
    vaults = (ROOT / spec["vaults"]).resolve()
    judged = [Judged(q["kind"], q["q"], list(q["relevant"])) for q in spec["queries"]]
    with tempfile.TemporaryDirectory(prefix="memlens-relevance-") as cache:
        # Its own cache folder and no user config file: the defaults a new user has.
        env = {**os.environ, "MEMLENS_CACHE_DIR": cache}
        env["MEMLENS_CONFIG"] = str(Path(cache) / "no-config.toml")
        check_judgements(judged, vaults, env)
        for j in judged:
            run_query(j, vaults, spec["as_of"], args.depth, args.rank, env)
    figures = summarise(judged)
    if args.json:
        detail = [{"kind": j.kind, "q": j.query, "ranks": j.ranks()} for j in judged]
        print(json.dumps({"rank": args.rank, "figures": figures, "queries": detail}, indent=2))
        return 0
    print(f"relevance: {len(judged)} judged queries over {spec['vaults']} as of {spec['as_of']}")
    print(f"ranking: {args.rank or 'the default of memlens search'}")
    if args.verbose:
        for j in judged:
            ranks = ",".join(map(str, j.ranks())) or "-"
            print(f"  {j.kind:<10} rr {j.reciprocal_rank():.2f}  ranks {ranks:<8} {j.query}")
    print(f"{'kind':<11}{'queries':>8}{'MRR':>8}{'nDCG@10':>9}{'recall@5':>10}")
    for kind, f in figures.items():
        print(
            f"{kind:<11}{int(f['queries']):>8}{f['mrr']:>8.3f}"
            f"{f['ndcg@10']:>9.3f}{f['recall@5']:>10.3f}"
        )
    return 0
