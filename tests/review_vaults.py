"""Vaults with planted duplicates, contradictions and decoys, one per format, built in a test.

One set of statements (`ITEMS`) is written in each format's own layout, so
every format is checked against the same planted pairs:

- `PLANTED`: pairs the review queue must report, with their kind;
- `DECOYS`: pairs that share words but do not conflict and are not the same
  memory (agreement on a value, the same setting of two different
  subjects, a negation in an unrelated clause, a reading or an event on
  two days, templated notes counting different things, a question):
  never reported;
- the rest are unrelated fillers.

`build(tmp, fmt)` writes the vault and returns its root; `ids(root)` maps
each item key to the memory id memlens gives it.  Loaded by file path (see
`load_review_vaults`) from tests/core and tests/tui.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from memlens.core.model import Memory
from memlens.core.search.embeddings import DIM, Embedder

FORMATS = (
    "dream-cycle",
    "observation-v1",
    "experience-records",
    "project-ocean",
    "cognitive-memory",
)

#: key -> (title, body).  Titles are one line; bodies a sentence or two.
ITEMS: dict[str, tuple[str, str]] = {
    "dup1a": (
        "Staging deploys use the blue-green script",
        "Run deploy/bluegreen.sh from the release branch; it swaps the load balancer "
        "target after the health checks pass.",
    ),
    "dup1b": (
        "Staging deploys use the blue-green script",
        "Run deploy/bluegreen.sh from the release branch; it swaps the load balancer "
        "target once the health checks pass.",
    ),
    "dup2a": (
        "Invoices are exported to the accounting share",
        "The export job writes invoices as CSV to the accounting share every night.",
    ),
    "dup2b": (
        "Exported invoices go to the accounting share",
        "Every night the export job writes the invoices as CSV files to the accounting share.",
    ),
    "neg_a": (
        "Session Redis persistence",
        "AOF persistence is enabled on the session Redis.",
    ),
    "neg_b": (
        "Session Redis persistence checked",
        "AOF persistence is not enabled on the session Redis.",
    ),
    "freq_a": (
        "Migrations and deploys",
        "We always run database migrations before the deploy starts.",
    ),
    "freq_b": (
        "Deploy order",
        "We never run database migrations before the deploy starts.",
    ),
    "num_a": (
        "Orders database connection pool",
        "The connection pool size for the orders database is 20.",
    ),
    "num_b": (
        "Orders database pool tuning",
        "The connection pool size for the orders database is 50.",
    ),
    "set_a": (
        "Gateway HTTP client settings",
        "retry_limit = 3\ntimeout = 30s",
    ),
    "set_b": (
        "Gateway HTTP client settings",
        "retry_limit = 3\ntimeout = 60s",
    ),
    "agree_a": (
        "Reporting replica tuning",
        "The reporting replica pool size is 20. Vacuum runs nightly at 02:00.",
    ),
    "agree_b": (
        "Capacity review notes",
        "Checked the dashboards with Ana. The reporting replica pool size is 20. "
        "Disk usage sits at 61 percent.",
    ),
    "who_a": (
        "Payments API timeout",
        "The request timeout for the payments API is 30s.",
    ),
    "who_b": (
        "Search API timeout",
        "The request timeout for the search API is 60s.",
    ),
    "clause_a": (
        "Backup scope",
        "Nightly backups run on the ledger host, but we do not back up the scratch volume.",
    ),
    "clause_b": (
        "Ledger host backups",
        "Nightly backups run on the ledger host and are kept for two weeks.",
    ),
    "vec_a": (
        "Customer churn after price rises",
        "Churn spikes in the month after a price increase.",
    ),
    "vec_b": (
        "Subscribers leave when plans get dearer",
        "People cancel their plans more often once we charge more.",
    ),
    "fill1": (
        "Label printer needs a restart",
        "The warehouse label printer hangs after a paper jam; power cycle it.",
    ),
    "fill2": (
        "Design review cadence",
        "Design reviews happen asynchronously in the shared document.",
    ),
    # A reading that varies: the same disk on two days is two observations.
    "disk_a": ("Disk check on db-03", "Disk usage on db-03 is at 71%."),
    "disk_b": ("Disk check on db-03", "Disk usage on db-03 is at 80%."),
    # Past events with counts (a run's duration, a log line): two runs, two numbers.
    "evt_a": (
        "Nightly backup duration",
        "The nightly backup of the ledger took 40 minutes. Logs showed 12 timeouts "
        "from the payments gateway.",
    ),
    "evt_b": (
        "Ledger backup timing",
        "The nightly backup of the ledger took 95 minutes. Logs showed 30 timeouts "
        "from the payments gateway.",
    ),
    # One event, one date, two durations: the same fact at the same time.
    "snap_a": (
        "Backup incident 2026-11-14",
        "On 2026-11-14 the restore of the billing database took 40 minutes.",
    ),
    "snap_b": (
        "Restore timing for the billing database",
        "On 2026-11-14 the restore of the billing database took 95 minutes.",
    ),
    # A named setting written as prose.
    "mc_a": ("Orders primary connections", "max_connections is 100 on the orders primary."),
    "mc_b": ("Orders primary limits", "max_connections is 200 on the orders primary."),
    # A weekday for one named thing.
    "win_a": ("Deploy window", "The deploy window for the storefront is Tuesday."),
    "win_b": ("Release schedule", "The deploy window for the storefront is Thursday."),
    # Templated notes: the same sentence shape counting different things.
    "tpl_a": (
        "Search indexer tuning",
        "We raised worker_concurrency to 8 on the search indexer. After that the queue "
        "drains within 60 seconds.",
    ),
    "tpl_b": (
        "Thumbnail worker tuning",
        "We raised worker_concurrency to 4 on the thumbnail workers. After that the queue "
        "drains within 15 seconds.",
    ),
    # A paraphrase with other words for most of it.
    "para_a": (
        "API keys are rotated every quarter",
        "The platform team rotates the billing service API keys every quarter.",
    ),
    "para_b": (
        "Quarterly rotation of the API keys",
        "Every quarter the platform team rotates the API keys of the billing service.",
    ),
    # A question and a heading that asks are not claims.
    "ask_a": ("Pool size question", "Should the checkout pool size be 20?"),
    "ask_b": ("Checkout pool sizing", "The checkout pool size is 50 since the sale."),
}

PLANTED: dict[tuple[str, str], str] = {
    ("dup1a", "dup1b"): "duplicate",
    ("dup2a", "dup2b"): "duplicate",
    ("neg_a", "neg_b"): "contradiction",
    ("freq_a", "freq_b"): "contradiction",
    ("num_a", "num_b"): "contradiction",
    ("set_a", "set_b"): "contradiction",
    ("snap_a", "snap_b"): "contradiction",
    ("mc_a", "mc_b"): "contradiction",
    ("win_a", "win_b"): "contradiction",
    ("para_a", "para_b"): "duplicate",
}
DECOYS: tuple[tuple[str, str], ...] = (
    ("agree_a", "agree_b"),
    ("who_a", "who_b"),
    ("clause_a", "clause_b"),
    ("disk_a", "disk_b"),
    ("evt_a", "evt_b"),
    ("tpl_a", "tpl_b"),
    ("ask_a", "ask_b"),
)
#: Found only through vectors: cognitive-memory's `_embeddings.json`, or the
#: search index's meaning vectors (`StandInEmbedder` in the tests).
VECTOR_PAIR = ("vec_a", "vec_b")
AS_OF = "2026-11-22"


def _day(n: int) -> str:
    """The day item `n` (from 1) was written: 2026-11-n up to the 22nd, then October."""
    return f"2026-11-{n:02d}" if n <= 22 else f"2026-10-{n - 22:02d}"


def _keys() -> list[str]:
    return list(ITEMS)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def _ocean(root: Path) -> None:
    for n, key in enumerate(_keys(), start=1):
        title, body = ITEMS[key]
        # Pairs are consecutive items: each pair stays with one agent.
        agent = "alpha" if (n - 1) // 2 % 2 == 0 else "beta"
        _write(
            root / "agents" / agent / "memory" / "vault" / f"obs-{_day(n)}-001.md",
            f"---\ntags: [ops, {key.split('_')[0].rstrip('ab0123456789') or 'x'}]\n"
            f"confidence: 0.8\ncreated: {_day(n)}\ndecay: linear-90d\n"
            f"source: {agent}\nbacklinks: []\n---\n{title}\n\n{body}\n",
        )
    (root / "agents" / "alpha" / "memory" / "archive").mkdir(parents=True, exist_ok=True)
    (root / "agents" / "beta" / "memory" / "archive").mkdir(parents=True, exist_ok=True)


def _cognitive(root: Path) -> None:
    (root / "graph" / "general").mkdir(parents=True, exist_ok=True)
    vectors: dict[str, list[float]] = {}
    for n, key in enumerate(_keys(), start=1):
        title, body = ITEMS[key]
        uid = f"a{n:05x}00-0000-4000-8000-{n:012x}"
        slug = "-".join(title.lower().replace("/", " ").split())[:40]
        _write(
            root / "graph" / "general" / f"{slug}-{uid[:6]}.md",
            f'---\nid: {uid}\ntype: general\ntitle: "{title}"\ntags: [ops, {key}]\n'
            f"importance: 0.6\nconfidence: 0.8\ncreated: {_day(n)}T09:00:00+00:00\n"
            f"updated: {_day(n)}T09:00:00+00:00\n---\n{body}\n",
        )
        # One axis per memory; the vector pair shares one (cosine 0.995).
        vec = [0.0] * (len(ITEMS) + 1)
        vec[n] = 1.0
        if key == VECTOR_PAIR[1]:
            vec = [0.0] * (len(ITEMS) + 1)
            vec[_keys().index(VECTOR_PAIR[0]) + 1] = 1.0
            vec[0] = 0.1
        vectors[uid] = vec
    _write(
        root / "_embeddings.json",
        json.dumps({"model": "test-embed", "entries": vectors}, indent=1) + "\n",
    )


def _observation(root: Path) -> None:
    for n, key in enumerate(_keys(), start=1):
        title, body = ITEMS[key]
        _write(
            root / "observations" / f"obs-{n:03d}.md",
            f"---\nspec: observation/v1\nid: obs-{n:03d}\n"
            f"timestamp: {_day(n)}T09:00:00Z\nsource: agent/ops-bot\n"
            f'event: "{title}"\ncontext:\n  project: ops\n  item: {key}\n---\n\n'
            f"# {title}\n\n{body}\n",
        )


def _dream(root: Path) -> None:
    parts = ["# Observations\n\nObserver log for the ops assistant.\n"]
    for n, key in enumerate(_keys(), start=1):
        title, body = ITEMS[key]
        parts.append(
            f"\n## {title}\n<!-- dc:type=fact dc:importance=6.0 dc:ttl=180 "
            f"dc:date={_day(n)} -->\n{body}\n"
        )
    _write(root / "observations.md", "".join(parts))
    _write(root / "archive.jsonl", "")


def _experience(root: Path) -> None:
    lines = []
    for n, key in enumerate(_keys(), start=1):
        title, body = ITEMS[key]
        lines.append(
            json.dumps(
                {
                    "id": f"exp_{_day(n)}T09:00:00Z_{n:04x}",
                    "type": "observation",
                    "created_at": f"{_day(n)}T09:00:00Z",
                    "content": {"text": f"{title}. {body}", "media": [], "structured": {}},
                    "provenance": {"sources": [], "actor": "agent", "method": "capture"},
                    "evidence_ptrs": [],
                    "confidence": {"p": 0.8, "method": "self_report"},
                    "parents": [],
                    "tags": ["ops"],
                }
            )
        )
    _write(root / "experiences.jsonl", "\n".join(lines) + "\n")


BUILDERS = {
    "project-ocean": _ocean,
    "cognitive-memory": _cognitive,
    "observation-v1": _observation,
    "dream-cycle": _dream,
    "experience-records": _experience,
}


def build(tmp: Path, fmt: str) -> Path:
    """Write the review vault of `fmt` under `tmp/<fmt>` and return its root."""
    root = tmp / fmt
    root.mkdir(parents=True)
    BUILDERS[fmt](root)
    return root


def ids(memories: Iterable[Memory]) -> dict[str, str]:
    """Item key -> memory id, matched by each item's title (and body) in the memory text."""
    out: dict[str, str] = {}
    memories = list(memories)
    for key, (title, body) in ITEMS.items():
        for m in memories:
            text = f"{m.title}\n{m.body}"
            if body in text and title in text and m.id not in out.values():
                out[key] = m.id
                break
    return out


class StandInEmbedder(Embedder):
    """A stand-in model: an item's own direction, one shared by the paraphrase pair.

    Every planted item gets the axis of its key (`VECTOR_PAIR`'s second
    item the first one's), any other text a direction from its words.
    """

    def __init__(self) -> None:  # no model
        self.keys = list(ITEMS)

    def _axis(self, text: str) -> int | None:
        for n, (key, (_title, body)) in enumerate(ITEMS.items()):
            if body in text:
                return self.keys.index(VECTOR_PAIR[0]) if key == VECTOR_PAIR[1] else n
        return None

    def embed(self, texts: Sequence[str]) -> np.ndarray:  # type: ignore[type-arg]
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, t in enumerate(texts):
            axis = self._axis(t)
            if axis is not None:
                out[i, axis] = 1.0
                out[i, DIM - 1] = 0.05 * (i % 3)  # not bit-identical vectors
            else:
                out[i] = np.random.default_rng(len(t)).standard_normal(DIM)
            out[i] /= np.linalg.norm(out[i])
        return out
