"""Project Ocean's own recall ranking: memory-search.py's TF-IDF, importance and freshness.

`memlens search --rank recall` ranks a Project Ocean vault with this, so the
hits and their order are the script's (the default `relevance` ranking is
memlens's own index, the same for every format).  What the script does,
followed here:

- the pool: every agent's `vault/` (the script's six agents and, here, any
  other), plus `shared/observations/` unless `no_shared`; `agent` narrows it
  to one agent (+ shared); archives never.  Observations with importance
  < 0.1, or below `min_importance`, leave the pool before the idf is
  computed (they change every other score, as in the script);
- tokens: lowercase `[a-z0-9]+`, the script's stopwords removed, one-letter
  tokens dropped; a document is its tags joined by spaces, that string
  twice with nothing between (so "a b" gives "a ba b": the script's
  spelling, whose middle token merges two tags), a space, then the body;
- tf = count / tokens, idf = ln((n + 1) / (df + 1)) + 1, a query term
  unknown to the pool weighs idf 1; cosine of the two sparse vectors;
- score = cosine × importance × freshness (`decay2.freshness`); a hit needs
  a score above 0.001; `tags` keeps a hit with one of them;
- order: the score rounded to 4 places (what the script sorts), ties in the
  script's load order (agents in its order, file names sorted, then shared).

A first-generation file in the pool counts for the idf as the script reads
it; its score is its own generation's: cosine × confidence × decay weight,
and an expired one is no hit (memlens reads each file by its generation).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from datetime import date

from ...model import Memory
from ...text.dates import day_of
from ..recall_model import RecallHit, RecallRequest
from .decay import observation_decay
from .decay2 import RECALL_SKIP_BELOW, effective_days, freshness
from .linking import script_agent_order

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


def _importance(m: Memory) -> float:
    """The importance the script reads (0.5 when the file has none: a first-generation file)."""
    return float(m.importance) if m.importance is not None else 0.5


def _pool(memories: Sequence[Memory], req: RecallRequest) -> list[Memory]:
    """The files the script loads, in its load order."""
    agents = sorted({str(m.native.get("agent")) for m in memories if not m.native.get("shared")})
    rank = {a: i for i, a in enumerate(script_agent_order(agents))}
    chosen: list[tuple[tuple[int, int, str], Memory]] = []
    for m in memories:
        if m.archived or m.tombstoned:
            continue
        shared = bool(m.native.get("shared"))
        if shared and req.no_shared:
            continue
        if not shared and req.agent is not None and m.native.get("agent") != req.agent:
            continue
        imp = _importance(m)
        if imp < req.min_importance or imp < RECALL_SKIP_BELOW:
            continue
        where = (1, 0) if shared else (0, rank[str(m.native.get("agent"))])
        chosen.append(((*where, m.path.rsplit("/", 1)[-1]), m))
    chosen.sort(key=lambda pair: pair[0])
    return [m for _, m in chosen]


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
    dot = sum(v * b.get(t, 0.0) for t, v in a.items())
    mag_a = math.sqrt(sum(v * v for v in a.values())) or 1.0
    mag_b = math.sqrt(sum(v * v for v in b.values())) or 1.0
    return dot / (mag_a * mag_b)


def _factor(m: Memory, as_of: date) -> tuple[float, float, str] | None:
    """(importance or confidence, freshness or decay weight, label); None: not a hit."""
    if m.native.get("generation") == 2:
        imp = _importance(m)
        age = (as_of - day_of(m.created)).days if m.created is not None else None
        eff = effective_days(m.native.get("max_age_days"), imp)
        return imp, freshness(age, eff), "importance × freshness"
    info = observation_decay(m, as_of, explain=False)
    if info.status == "expired":
        return None
    conf = float(m.confidence) if isinstance(m.confidence, int | float) else 1.0
    return conf, info.weight, "confidence × decay weight (first generation)"


def recall(memories: Sequence[Memory], req: RecallRequest) -> list[RecallHit]:
    """Every hit of `req.query`, best first, with the parts of its score."""
    q_tokens = tokenize(req.query)
    pool = _pool(memories, req)
    if not q_tokens or not pool:
        return []
    docs = [tokenize(" ".join(m.tags) * 2 + " " + m.body.strip()) for m in pool]
    vecs, idf = _vectors(docs)
    total = len(q_tokens)
    q_vec = {t: (c / total) * idf.get(t, 1.0) for t, c in Counter(q_tokens).items()}
    wanted = set(req.tags)
    hits: list[tuple[float, int, Memory, dict[str, object]]] = []
    for i, m in enumerate(pool):
        if wanted and not wanted.intersection(m.tags):
            continue
        factor = _factor(m, req.as_of)
        if factor is None:
            continue
        weight, fresh, label = factor
        sim = _cosine(q_vec, vecs[i])
        score = sim * weight * fresh
        if score > MIN_SCORE:
            explain: dict[str, object] = {
                "formula": f"score = cosine × {label} (memory-search.py)",
                "cosine": sim,
                "weight": weight,
                "freshness": fresh,
                "score": score,
            }
            hits.append((round(score, 4), i, m, explain))
    hits.sort(key=lambda h: (-h[0], h[1]))
    return [RecallHit(m, score, dict(explain)) for score, _i, m, explain in hits]


__all__ = ["MIN_SCORE", "recall", "tokenize"]
