"""Project Ocean's own recall ranking: memory-search.py, the generation the vault is written in.

`memlens search --rank recall` (and `--format ocean`) ranks a Project Ocean
vault with this, so the hits, their order, scores and JSON are the script's
(the default `relevance` ranking is memlens's own index, the same for every
format).  A vault without a second-generation file is ranked as the first
generation's script (projectoceanx-lab/Ocean11 at 4989190) would rank it;
a vault with one, as the second generation's (main).  What both do:

- the pool: each agent's `vault/` (the script's six agents in its order, then
  any other agent folder by name: memlens reads every agent), plus
  `shared/observations/` unless `no_shared`; `agent` narrows it to one agent
  (+ shared); archives never; file names sorted.  Files leave the pool before
  the idf is computed (so they change every other score, as in the script):
  first generation, a decayed file (`script_rules.gen1_decayed`) or one under
  `min_confidence`; second generation, importance < 0.1 or under
  `min_importance`;
- every value (tags, confidence, importance, decay, created, source, body) is
  the one the script's own header reading gives (`script_view`), not YAML's;
- tokens: lowercase `[a-z0-9]+`, the script's stopwords removed, one-letter
  tokens dropped; a document is its tags joined by spaces (the second
  generation: that string twice with nothing between, so "a b" gives
  "a ba b", whose middle token merges two tags), a space, then the body;
- tf = count / tokens, idf = ln((n + 1) / (df + 1)) + 1, a query term
  unknown to the pool weighs idf 1; cosine of the two sparse vectors;
- score = cosine × confidence × decay weight (first generation) or cosine ×
  importance × freshness (second); a hit needs a score above 0.001; `tags`
  keeps a hit whose tags hold one of them, compared as written;
- order: the score rounded to 4 places (what the script sorts and prints),
  ties in load order.

memlens's own choices: invalid files are not in the pool (the script reads
them, or stops); a BOM file's frontmatter is read (`script_view`).  In a
vault of both generations (the second generation's script), a
first-generation file counts for the idf as that script reads it, but its
score is its own generation's (cosine × confidence × decay weight, no hit
once expired): memlens reads each file by its generation.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...model import Memory
from ..recall_model import RecallHit, RecallRequest
from .decay import observation_decay
from .decay2 import RECALL_SKIP_BELOW
from .linking import SCRIPT_AGENTS, script_agent_order
from .script_rules import (
    gen1_confidence,
    gen1_decayed,
    gen1_record,
    gen1_weight,
    gen2_freshness,
    gen2_importance,
    gen2_record,
    tag_set,
    tag_text,
)
from .script_view import ScriptFile, read_script_file

#: The first generation's script reads these agents, in this order (main: forge, not signal).
GEN1_SCRIPT_AGENTS: tuple[str, ...] = ("captain", "scout", "shield", "hawk", "signal", "watchtower")

STOPWORDS = frozenset(
    {
        "the",
        "a",
        "an",
        "is",
        "was",
        "are",
        "were",
        "be",
        "been",
        "being",
        "have",
        "has",
        "had",
        "do",
        "does",
        "did",
        "will",
        "would",
        "could",
        "should",
        "may",
        "might",
        "shall",
        "can",
        "to",
        "of",
        "in",
        "for",
        "on",
        "with",
        "at",
        "by",
        "from",
        "as",
        "into",
        "through",
        "during",
        "before",
        "after",
        "above",
        "below",
        "between",
        "and",
        "but",
        "or",
        "not",
        "no",
        "nor",
        "so",
        "yet",
        "both",
        "either",
        "neither",
        "each",
        "every",
        "all",
        "any",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "than",
        "too",
        "very",
        "just",
        "also",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "i",
        "we",
        "you",
        "he",
        "she",
        "they",
        "me",
        "him",
        "her",
        "us",
        "them",
        "my",
        "your",
        "his",
        "our",
        "their",
    }
)
_TOKEN = re.compile(r"[a-z0-9]+")
#: The script keeps a hit only above this score.
MIN_SCORE = 0.001


def tokenize(text: str) -> list[str]:
    """memory-search.py's tokens: lowercase alphanumerics, no stopwords, no single letters."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS and len(t) > 1]


@dataclass(frozen=True, slots=True)
class _Entry:
    """One file of the pool: the memory, the script's reading of it, and its weight."""

    memory: Memory
    view: ScriptFile
    #: Confidence (first generation) or importance (second), as the script reads it.
    weight: float


def script_generation(memories: Sequence[Memory]) -> int:
    """Which script ranks the vault: 2 when any file is second-generation, else 1."""
    return 2 if any(m.native.get("generation") == 2 for m in memories) else 1


def _load_order(memories: Sequence[Memory], req: RecallRequest, generation: int) -> list[Memory]:
    """The files the script globs, in its order (agents, then shared/), before its filters."""
    agents = sorted({str(m.native.get("agent")) for m in memories if not m.native.get("shared")})
    known = GEN1_SCRIPT_AGENTS if generation == 1 else SCRIPT_AGENTS
    rank = {a: i for i, a in enumerate(script_agent_order(agents, known))}
    chosen: list[tuple[tuple[int, int, str], Memory]] = []
    for m in memories:
        if m.archived or m.tombstoned:
            continue
        shared = bool(m.native.get("shared"))
        if shared and req.no_shared:
            continue
        if not shared and req.agent is not None and m.native.get("agent") != req.agent:
            continue
        where = (1, 0) if shared else (0, rank[str(m.native.get("agent"))])
        chosen.append(((*where, m.path.rsplit("/", 1)[-1]), m))
    chosen.sort(key=lambda pair: pair[0])
    return [m for _, m in chosen]


def _pool(memories: Sequence[Memory], req: RecallRequest, generation: int) -> list[_Entry]:
    """The script's pool: its files read its way, less those it drops before the idf."""
    out: list[_Entry] = []
    for m in _load_order(memories, req, generation):
        view = read_script_file(m, generation)
        if generation == 1:
            weight = gen1_confidence(view.fields)
            if weight < req.min_confidence or gen1_decayed(view.fields, req.as_of):
                continue
        else:
            weight = gen2_importance(view.fields, m)
            if weight < req.min_importance or weight < RECALL_SKIP_BELOW:
                continue
        out.append(_Entry(m, view, weight))
    return out


def _document(entry: _Entry, generation: int) -> list[str]:
    tags = tag_text(entry.view.fields.get("tags", []))
    return tokenize((tags if generation == 1 else tags * 2) + " " + entry.view.body)


def _vectors(docs: list[list[str]]) -> tuple[list[dict[str, float]], dict[str, float]]:
    df: Counter[str] = Counter()
    for tokens in docs:
        df.update(set(tokens))
    n = len(docs)
    idf = {t: math.log((n + 1) / (c + 1)) + 1 for t, c in df.items()}
    vecs = []
    for tokens in docs:
        total = len(tokens) or 1
        vecs.append({t: (c / total) * idf[t] for t, c in Counter(tokens).items()})
    return vecs, idf


def _cosine(a: dict[str, float], b: dict[str, float]) -> float:
    # Terms of only one vector add 0.0 to the script's sum over both: left out.
    dot = sum(v * b.get(t, 0.0) for t, v in a.items())
    mag_a = math.sqrt(sum(v**2 for v in a.values())) or 1.0
    mag_b = math.sqrt(sum(v**2 for v in b.values())) or 1.0
    return dot / (mag_a * mag_b)


def _factor(entry: _Entry, generation: int, req: RecallRequest) -> tuple[float, str] | None:
    """(the second factor of the score, its label); None: not a hit."""
    m, fields = entry.memory, entry.view.fields
    if generation == 1:
        return gen1_weight(fields, req.as_of), "confidence × decay weight"
    if m.native.get("generation") == 2:
        return gen2_freshness(fields, entry.weight, req.as_of), "importance × freshness"
    info = observation_decay(m, req.as_of, explain=False)  # first generation, mixed vault
    if info.status == "expired":
        return None
    return info.weight, "confidence × decay weight (first generation)"


def _weight(entry: _Entry, generation: int) -> float:
    """The score's first factor: the first generation's confidence in a mixed vault."""
    m = entry.memory
    if generation == 2 and m.native.get("generation") != 2:
        return float(m.confidence) if isinstance(m.confidence, int | float) else 1.0
    return entry.weight


def _record(entry: _Entry, generation: int, score: float) -> dict[str, Any]:
    m, view = entry.memory, entry.view
    if generation == 1:
        return gen1_record(m, view.fields, view.body, score, entry.weight)
    return gen2_record(m, view.fields, view.body, score, entry.weight)


def recall(memories: Sequence[Memory], req: RecallRequest) -> list[RecallHit]:
    """Every hit of `req.query`, best first, with the parts of its score and the script's record."""
    q_tokens = tokenize(req.query)
    if not q_tokens:
        return []
    generation = script_generation(memories)
    pool = _pool(memories, req, generation)
    if not pool:
        return []
    vecs, idf = _vectors([_document(e, generation) for e in pool])
    total = len(q_tokens)
    q_vec = {t: (c / total) * idf.get(t, 1.0) for t, c in Counter(q_tokens).items()}
    wanted = set(req.tags)
    hits: list[tuple[float, int, _Entry, dict[str, object]]] = []
    for i, entry in enumerate(pool):
        if wanted and not wanted.intersection(tag_set(entry.view.fields.get("tags", []))):
            continue
        factor = _factor(entry, generation, req)
        if factor is None:
            continue
        fresh, label = factor
        weight = _weight(entry, generation)
        sim = _cosine(q_vec, vecs[i])
        score = sim * weight * fresh
        if score > MIN_SCORE:
            explain: dict[str, object] = {
                "formula": f"score = cosine × {label} (memory-search.py, generation {generation})",
                "cosine": sim,
                "weight": weight,
                "freshness": fresh,
                "score": score,
            }
            hits.append((round(score, 4), i, entry, explain))
    hits.sort(key=lambda h: (-h[0], h[1]))
    return [
        RecallHit(e.memory, score, dict(explain), _record(e, generation, score))
        for score, _i, e, explain in hits
    ]


__all__ = ["GEN1_SCRIPT_AGENTS", "MIN_SCORE", "recall", "script_generation", "tokenize"]
