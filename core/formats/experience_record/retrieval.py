"""The spec's hybrid retrieval, offline: α·semantic + β·recency + γ·causal + δ·keyword.

The experience-record spec ranks candidates by a weighted combination of a
semantic KNN, recency, a causal walk (two hops) and keyword BM25, over the
union of the causal walk and the BM25 hits.  memlens runs no embedding model
and the format's vectors are not part of a vault, so each part is computed
from the records themselves, and every choice the spec leaves open is fixed
here:

- semantic: TF-IDF cosine of the prompt and the record's text and tags
  (sublinear tf, smooth idf): the lexical stand-in for the embedding KNN;
- keyword: BM25 (k1 1.2, b 0.75) of the same text, divided by the best
  BM25 of the pool so it lies in [0, 1];
- recency: 0.5 ** (age in days / 30), age from `created_at` to `as_of`;
- causal: records within two hops of a lexical hit along `parents` and
  `evidence_ptrs` (either direction): 1.0 at one hop, 0.5 at two;
- weights α 0.4, β 0.1, γ 0.2, δ 0.3 (the spec names none).

Only live records count: not tombstoned, not archived, and not created after
`as_of`.  The spec's uncertainty re-rank needs candidate answers from a
model, so it is not applied.  Ties go to the newer record, then the id.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from ...model import Memory

WEIGHTS = {"semantic": 0.4, "recency": 0.1, "causal": 0.2, "keyword": 0.3}
RECENCY_HALF_LIFE_DAYS = 30.0
BM25_K1 = 1.2
BM25_B = 0.75
CAUSAL_HOPS = 2

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
#: Words too common to tell records apart (a short English list).
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "has",
        "have",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "were",
        "will",
        "with",
    ]
)


def words(text: str) -> list[str]:
    """Lower-cased words of `text`, stop words left out."""
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


@dataclass(frozen=True, slots=True)
class Retrieved:
    """One record's hybrid score and its four parts."""

    memory: Memory
    score: float
    parts: dict[str, float]


def _day(value: date | datetime | None) -> date | None:
    return value.date() if isinstance(value, datetime) else value


def _doc(m: Memory) -> list[str]:
    return words(" ".join([m.body, *m.tags]))


def _semantic(docs: list[list[str]], query: list[str]) -> list[float]:
    n = len(docs)
    df = Counter(t for d in docs for t in set(d))

    def vec(terms: list[str]) -> dict[str, float]:
        tf = Counter(terms)
        v = {t: (1 + math.log(c)) * (math.log((1 + n) / (1 + df[t])) + 1) for t, c in tf.items()}
        norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
        return {t: x / norm for t, x in v.items()}

    q = vec(query)
    out = []
    for d in docs:
        dv = vec(d)
        out.append(sum(w * dv.get(t, 0.0) for t, w in q.items()))
    return out


def _bm25(docs: list[list[str]], query: list[str]) -> list[float]:
    n = len(docs)
    avg = sum(len(d) for d in docs) / n if n else 0.0
    df = Counter(t for d in docs for t in set(d))
    raw = []
    for d in docs:
        tf = Counter(d)
        s = 0.0
        for t in set(query):
            if tf[t]:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                norm = BM25_K1 * (1 - BM25_B + BM25_B * len(d) / (avg or 1.0))
                s += idf * tf[t] * (BM25_K1 + 1) / (tf[t] + norm)
        raw.append(s)
    best = max(raw, default=0.0)
    return [s / best if best > 0 else 0.0 for s in raw]


def _neighbours(pool: Sequence[Memory]) -> dict[str, set[str]]:
    """Lineage links between live records, both directions."""
    ids = {m.id for m in pool}
    links: dict[str, set[str]] = {m.id: set() for m in pool}
    for m in pool:
        for rel in m.relations:
            if rel.target in ids and rel.target != m.id:
                links[m.id].add(rel.target)
                links[rel.target].add(m.id)
    return links


def _causal(pool: Sequence[Memory], seeds: set[str]) -> dict[str, float]:
    """1.0 one hop from a lexical hit, 0.5 two hops (the walk's reach)."""
    links = _neighbours(pool)
    out: dict[str, float] = {}
    for seed in seeds:
        frontier, seen = {seed}, {seed}
        for hop in range(1, CAUSAL_HOPS + 1):
            frontier = {n for f in frontier for n in links[f]} - seen
            seen |= frontier
            for n in frontier:
                out[n] = max(out.get(n, 0.0), 1.0 / hop)
    return out


def live_pool(memories: Sequence[Memory], as_of: date) -> list[Memory]:
    """Records the agent can recall at `as_of`: live and already created."""
    out = []
    for m in memories:
        created = _day(m.created)
        if m.tombstoned or m.archived or (created is not None and created > as_of):
            continue
        out.append(m)
    return out


def hybrid_retrieve(
    memories: Sequence[Memory], prompt: str, as_of: date, k: int
) -> list[Retrieved]:
    """The best `k` live records for `prompt` at `as_of`, best first (module docstring)."""
    pool = live_pool(memories, as_of)
    query = words(prompt)
    if not pool or not query:
        return []
    docs = [_doc(m) for m in pool]
    semantic = _semantic(docs, query)
    keyword = _bm25(docs, query)
    seeds = {m.id for m, s, b in zip(pool, semantic, keyword, strict=True) if s > 0 or b > 0}
    causal = _causal(pool, seeds)
    scored: list[Retrieved] = []
    for m, sem, kw in zip(pool, semantic, keyword, strict=True):
        cz = causal.get(m.id, 0.0)
        if m.id not in seeds and cz == 0.0:
            continue  # outside the candidate pool (neither a hit nor on the walk)
        created = _day(m.created)
        age = max(0, (as_of - created).days) if created is not None else None
        rec = 0.5 ** (age / RECENCY_HALF_LIFE_DAYS) if age is not None else 0.0
        parts = {"semantic": sem, "recency": rec, "causal": cz, "keyword": kw}
        score = sum(WEIGHTS[name] * value for name, value in parts.items())
        scored.append(Retrieved(m, score, {n: round(v, 6) for n, v in parts.items()}))
    scored.sort(key=lambda r: (-r.score, -(_ordinal(r.memory)), r.memory.id))
    return scored[:k]


def _ordinal(m: Memory) -> int:
    created = _day(m.created)
    return created.toordinal() if created is not None else 0


__all__ = ["WEIGHTS", "Retrieved", "hybrid_retrieve", "live_pool", "words"]
