"""Finding review candidates in one vault: near-duplicates and possible contradictions.

Candidates are looked for inside one vault only: merge and supersede are one
transaction in one vault, and two vaults' memories belong to two agents.
Archived and erased memories are left out (nothing to review there).

Pairs are blocked (never all pairs), then each pair is measured:

- TF-IDF cosine at least `PAIR_TFIDF` (a per-vault index, an exact sparse
  product in row blocks): lexical neighbours, measured as duplicates;
- stored vectors (`_embeddings.json` of cognitive-memory vaults), cosine at
  least `DUP_VECTOR`: meaning-based neighbours, when a vault ships them;
- the search index's meaning vectors (the `semantic` extra, `meaning`),
  cosine at least `DUP_MEANING`: paraphrases;
- equal clause signatures and setting keys (`conflicts`) that disagree:
  statements about one subject, however different the rest of the
  memories.  Clauses are sketched first (signature, values, polarity) and
  only those another memory shares, with other values or the other
  polarity, become claims; a signature in more than `MAX_GROUP` memories
  is boilerplate.

A pair with a conflict (`conflicts.compare`) is a **contradiction**; else it
is a **duplicate** when one similarity passes its threshold and the two do
not disagree on a value (two memories giving different numbers say
different things).  Each member set is reported once, as its strongest kind.

Confidence, 0-1, what a reviewer can read off it:

- duplicate: ``0.5 + 0.5 * max_k (s_k - t_k) / (1 - t_k)`` over the
  measures that pass their threshold t_k (TF-IDF cosine, content-word
  Jaccard, character 3-gram cosine, stored-vector and meaning cosines):
  0.5 just at a threshold, 1.0 identical text;
- contradiction: ``0.6 + 0.05 * (subject words - 2, at most 4) + 0.2 *
  content Jaccard`` for a clause conflict (the longer the shared subject and
  the more alike the memories, the surer), ``0.5 + 0.4 * Jaccard`` for a
  setting conflict (a key alone is weaker evidence); at most 0.99.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import lru_cache
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..model import Memory
from ..search.index import SearchIndex
from ..search.similar import load_stored_vectors
from .conflicts import (
    Claim,
    Conflict,
    as_written,
    best_conflict,
    body_settings,
    claim_of,
    compare,
    same_subject,
    sketch,
)
from .wording import (
    DiffOp,
    char_ngrams,
    content_stem,
    cosine,
    is_value,
    token_jaccard,
    word_diff,
    words,
)

KIND_DUPLICATE = "duplicate"
KIND_CONTRADICTION = "contradiction"
KINDS = (KIND_DUPLICATE, KIND_CONTRADICTION)

#: TF-IDF cosine from which a pair is measured as a possible duplicate.
PAIR_TFIDF = 0.5
#: Thresholds of a duplicate, per measure.
DUP_TFIDF = 0.8
DUP_JACCARD = 0.7
DUP_CHAR = 0.85
DUP_VECTOR = 0.92
#: Cosine of the search index's meaning vectors (WordLlama, the `semantic`
#: extra): paraphrases of one note reach 0.95; on 1,000 generated technical
#: notes of one style 3 pairs in ~500,000 reach 0.9 (99.9th percentile 0.81).
DUP_MEANING = 0.9
#: Content-word Jaccard below which character 3-grams are not measured.
CHAR_GATE = 0.4
#: Content-word Jaccard of two memories from which a clause conflict counts...
MIN_MEMORY_SIMILARITY = 0.25
#: ...or the share of the smaller memory's content words the clause holds.
MIN_CLAUSE_SHARE = 0.5
#: Signature groups larger than this are boilerplate, not a subject ("see the docs").
MAX_GROUP = 40
#: Differences listed per candidate.
MAX_DIFF_OPS = 40


@dataclass(frozen=True, slots=True)
class Candidate:
    """A pair or group of memories of one vault a person should look at."""

    id: str
    kind: str
    confidence: float
    reason: str
    members: tuple[Memory, ...]
    vault_root: Path
    #: Similarity measures of the (first) pair, by name.
    measures: dict[str, float] = field(default_factory=dict)

    @property
    def diff(self) -> tuple[DiffOp, ...]:
        """Word-level differences between the first two members' texts.

        Computed when asked (and kept per pair of texts): a diff of two long
        memories costs milliseconds, and most candidates are never shown.
        """
        return _diff_texts(text_of(self.members[0]), text_of(self.members[1]))


def text_of(m: Memory) -> str:
    """What is compared of a memory: its title and body."""
    return f"{m.title}\n{m.body}"


def _docs(memories: Sequence[Memory]) -> list[_Doc]:
    """The memories measured: words, stems, values, and the claims another memory shares."""
    sketched = [sketch(m.title, m.body) for m in memories]
    seen: Counter[tuple[str, ...]] = Counter()
    variants: dict[tuple[str, ...], set[tuple[tuple[str, ...], bool]]] = defaultdict(set)
    for sketches, _toks in sketched:
        seen.update({s[0] for s in sketches})
        for sig, _words, said, positive in sketches:
            variants[sig].add((tuple(said), positive))
    # Worth a claim: a clause another memory shares (not boilerplate) with
    # other values or the other polarity somewhere; every other clause agrees.
    open_sigs = {sig for sig, n in seen.items() if 1 < n <= MAX_GROUP and len(variants[sig]) > 1}
    docs: list[_Doc] = []
    for m, (sketches, toks) in zip(memories, sketched, strict=True):
        day = memory_day(m)
        shared = (claim_of(s, day) for s in sketches if s[0] in open_sigs)
        found = [c for c in shared if c is not None] + body_settings(m.body)
        stems = set(map(content_stem, toks))
        stems.discard("")
        values = frozenset(w for w in toks if is_value(w))
        docs.append(_Doc(m, text_of(m), stems, found, values))
    return docs


def memory_day(m: Memory) -> str | None:
    """The day a memory was written (the time of the observations it does not date)."""
    when = m.created
    if isinstance(when, datetime):
        return when.date().isoformat()
    return when.isoformat() if when is not None else None


def candidate_id(members: Sequence[Memory]) -> str:
    """A stable id: a hash of the members' (format, id) keys, in sorted order."""
    keys = sorted(f"{m.format}\0{m.id}" for m in members)
    return "rv-" + hashlib.sha256("\n".join(keys).encode("utf-8")).hexdigest()[:12]


@dataclass(slots=True)
class _Doc:
    memory: Memory
    text: str
    stems: set[str]
    claims: list[Claim]
    #: The value words (numbers, dates, ...) of the text.
    values: frozenset[str]
    _grams: Counter[str] | None = None

    @property
    def grams(self) -> Counter[str]:
        """Character 3-grams, computed once (a doc meets many others)."""
        if self._grams is None:
            self._grams = char_ngrams(self.text)
        return self._grams


@dataclass(slots=True)
class _Pair:
    tfidf: float = 0.0
    vector: float | None = None
    #: Two claims of one signature disagree (`_claim_pairs`): worth a conflict check.
    claim: bool = False
    #: Cosine of the search index's meaning vectors (the `semantic` extra).
    meaning: float | None = None


def _tfidf_pairs(docs: list[_Doc], as_of: date, pairs: dict[tuple[int, int], _Pair]) -> None:
    """Pairs with TF-IDF cosine >= PAIR_TFIDF, by a sparse product in row blocks.

    Why not `SearchIndex.near_duplicates`: its prefix filter pairs every two
    memories sharing a rare term, and notes written from templates share
    many (11 s for 2,000 generated notes at 0.5); the product costs the
    shared terms' postings and is exact (about 1 s for the same notes).
    """
    from ..search.duplicates import doc_matrix

    index = SearchIndex.build([d.memory for d in docs], as_of)
    mems = index.memories()  # a fresh build: row r is mems[r]
    x = doc_matrix(index.state.terms, list(range(len(mems))))
    xt = x.T.tocsr()
    at = {d.memory.key: i for i, d in enumerate(docs)}
    pos = [at[m.key] for m in mems]
    for start in range(0, x.shape[0], _BLOCK):
        block = (x[start : start + _BLOCK] @ xt).tocoo()
        rows, cols = block.row + start, block.col
        keep = (block.data >= PAIR_TFIDF - 1e-9) & (rows < cols)
        for r, c, sim in zip(rows[keep], cols[keep], block.data[keep], strict=True):
            i, j = sorted((pos[int(r)], pos[int(c)]))
            pairs.setdefault((i, j), _Pair()).tfidf = float(sim)


#: Rows multiplied at once (a block's result is at most this many x the vault).
_BLOCK = 500


#: Unit vectors (one row each) of the memories given, from the search index's
#: meaning model (`SearchIndex.meaning_vectors`); None: not available.
MeaningFn = Callable[[Sequence[Memory]], "npt.NDArray[np.float32] | None"]


def _cosine_pairs(
    rows: list[int], mat: npt.NDArray[Any], threshold: float
) -> list[tuple[int, int, float]]:
    """(i, j, cosine) of the rows (doc positions) whose unit vectors reach `threshold`."""
    out: list[tuple[int, int, float]] = []
    chunk = 1000
    for start in range(0, len(rows), chunk):
        sims = mat[start : start + chunk] @ mat.T
        for a, b in zip(*np.nonzero(sims >= threshold), strict=True):
            ra, rb = start + int(a), int(b)
            if ra < rb:
                out.append((rows[ra], rows[rb], float(sims[a, b])))
    return out


def _vector_pairs(root: Path, docs: list[_Doc], pairs: dict[tuple[int, int], _Pair]) -> bool:
    """Pairs by the vectors a vault ships (`_embeddings.json`); whether there were any."""
    stored = load_stored_vectors(root)
    if stored is None:
        return False
    _model, vecs = stored
    rows = [(i, vecs[d.memory.id]) for i, d in enumerate(docs) if d.memory.id in vecs]
    dims = {len(v) for _, v in rows}
    if len(rows) < 2 or len(dims) != 1:
        return False  # mixed dimensions: the vectors are not comparable
    mat = np.asarray([v for _, v in rows], dtype=np.float64)
    norms = np.linalg.norm(mat, axis=1)
    norms[norms == 0] = 1.0
    mat /= norms[:, None]
    for i, j, sim in _cosine_pairs([i for i, _ in rows], mat, DUP_VECTOR):
        pairs.setdefault((i, j), _Pair()).vector = sim
    return True


def _meaning_pairs(
    meaning: MeaningFn, docs: list[_Doc], pairs: dict[tuple[int, int], _Pair]
) -> bool:
    """Paraphrase pairs by the search index's meaning vectors; whether they were there."""
    mat = meaning([d.memory for d in docs])
    if mat is None or len(mat) != len(docs):
        return False
    mat = np.asarray(mat, dtype=np.float32)
    known = [i for i in range(len(docs)) if mat[i].any()]  # a zero row: not embedded
    for i, j, sim in _cosine_pairs(known, mat[known], DUP_MEANING):
        pairs.setdefault((i, j), _Pair()).meaning = sim
    return True


def _claim_pairs(docs: list[_Doc], pairs: dict[tuple[int, int], _Pair]) -> None:
    """Pairs of memories with two claims of one signature that disagree."""
    by_sig: dict[tuple[str, ...], list[tuple[int, Claim]]] = defaultdict(list)
    for i, d in enumerate(docs):
        for c in d.claims:
            by_sig[c.signature].append((i, c))
    for group in by_sig.values():
        if not 1 < len(group) <= MAX_GROUP:
            continue
        for (i, ci), (j, cj) in combinations(group, 2):
            if i != j and compare(ci, cj) is not None:
                pairs.setdefault((min(i, j), max(i, j)), _Pair()).claim = True


def _conflict(a: _Doc, b: _Doc) -> tuple[Conflict | None, float]:
    """The pair's strongest conflict (None if they agree) and their content Jaccard."""
    sim = token_jaccard(a.stems, b.stems)
    by_sig: dict[tuple[str, ...], list[Claim]] = defaultdict(list)
    for c in b.claims:
        by_sig[c.signature].append(c)
    found: list[Conflict] = []
    agreed: set[tuple[str, ...]] = set()
    smaller = max(1, min(len(a.stems), len(b.stems)))
    for ca in a.claims:
        for cb in by_sig.get(ca.signature, ()):
            conflict = compare(ca, cb)
            if conflict is None:
                # A statement both make with the same values settles nothing.
                agreed.add(ca.signature)
            elif conflict.how == "setting" or ca.contextual:
                # A key or "the fix" alone does not say whose: the memories must
                # be about one subject.
                if same_subject(a.memory.title, a.stems, b.memory.title, b.stems)[0]:
                    found.append(conflict)
            elif sim >= MIN_MEMORY_SIMILARITY or ca.subject_words / smaller >= MIN_CLAUSE_SHARE:
                # The memories are about one thing, or the clause is most of one of
                # them: one templated sentence inside two long, different memories
                # (a log line with another count) is not a contradiction to review.
                found.append(conflict)
    return best_conflict(c for c in found if c.a.signature not in agreed), sim


def _contradiction_confidence(conflict: Conflict, sim: float) -> float:
    if conflict.how == "setting":
        return min(0.99, 0.5 + 0.4 * sim)
    extra = min(4, max(0, conflict.a.subject_words - 2))
    return min(0.99, 0.6 + 0.05 * extra + 0.2 * sim)


def _duplicate(a: _Doc, b: _Doc, p: _Pair) -> tuple[float, dict[str, float]] | None:
    """(confidence, measures) if the pair is a near-duplicate, else None."""
    jaccard = token_jaccard(a.stems, b.stems)
    measures = {"tfidf": p.tfidf, "jaccard": jaccard, "char3": 0.0}
    if jaccard >= CHAR_GATE or p.tfidf >= DUP_TFIDF:
        # 3-grams cost a millisecond a pair; texts sharing under CHAR_GATE of
        # their content words do not share DUP_CHAR of their 3-grams.
        measures["char3"] = cosine(a.grams, b.grams)
    if p.vector is not None:
        measures["vector"] = p.vector
    if p.meaning is not None:
        measures["meaning"] = p.meaning
    limits = {
        "tfidf": DUP_TFIDF,
        "jaccard": DUP_JACCARD,
        "char3": DUP_CHAR,
        "vector": DUP_VECTOR,
        "meaning": DUP_MEANING,
    }
    over = [(s - limits[k]) / (1 - limits[k]) for k, s in measures.items() if s >= limits[k]]
    if not over:
        return None
    if a.values - b.values and b.values - a.values:
        return None  # they give different values: not the same statement twice
    return min(1.0, 0.5 + 0.5 * max(over)), {k: round(v, 4) for k, v in measures.items()}


def _measure(docs: list[_Doc], i: int, j: int, p: _Pair, root: Path) -> Candidate | None:
    a, b = docs[i], docs[j]
    members = (a.memory, b.memory)
    conflict, sim = _conflict(a, b) if p.claim else (None, 0.0)
    if conflict is not None:
        conflict = Conflict(
            conflict.how,
            as_written(conflict.a, a.memory.title, a.memory.body),
            as_written(conflict.b, b.memory.title, b.memory.body),
        )
        return Candidate(
            candidate_id(members),
            KIND_CONTRADICTION,
            round(_contradiction_confidence(conflict, sim), 4),
            conflict.reason,
            members,
            root,
            {"jaccard": round(sim, 4), "tfidf": round(p.tfidf, 4)},
        )
    dup = _duplicate(a, b, p)
    if dup is None:
        return None
    confidence, measures = dup
    shown = ", ".join(f"{k} {v:.2f}" for k, v in measures.items() if v)
    return Candidate(
        candidate_id(members),
        KIND_DUPLICATE,
        round(confidence, 4),
        f"near-duplicates ({shown})",
        members,
        root,
        measures,
    )


@lru_cache(maxsize=256)
def _diff_texts(a: str, b: str) -> tuple[DiffOp, ...]:
    return tuple(word_diff(words(a), words(b))[:MAX_DIFF_OPS])


def find_in_vault(
    root: Path,
    memories: Sequence[Memory],
    as_of: date,
    *,
    should_stop: Callable[[], bool] | None = None,
    copies: Callable[[Memory, Memory], bool] | None = None,
    meaning: MeaningFn | None = None,
    used: set[str] | None = None,
) -> list[Candidate]:
    """Every candidate among the live memories of the vault at `root`, best first.

    `copies` (the format's `deliberate_copies`) names pairs the format keeps
    on purpose; they are never candidates.  `meaning` gives the search
    index's meaning vectors when the semantic extra is on; `used` collects
    the names of the similarities measured ("tfidf", "jaccard", "char3",
    "vector", "meaning").
    """
    live = sorted((m for m in memories if not m.archived and not m.tombstoned), key=lambda m: m.id)
    docs = _docs(live)
    pairs: dict[tuple[int, int], _Pair] = {}
    found_by = {"tfidf", "jaccard", "char3"}
    if len(docs) >= 2:
        _tfidf_pairs(docs, as_of, pairs)
        if _vector_pairs(root, docs, pairs):
            found_by.add("vector")
        if meaning is not None and _meaning_pairs(meaning, docs, pairs):
            found_by.add("meaning")
        _claim_pairs(docs, pairs)
    if used is not None:
        used |= found_by
    out: list[Candidate] = []
    for (i, j), p in sorted(pairs.items()):
        if should_stop is not None and should_stop():
            break
        if copies is not None and copies(docs[i].memory, docs[j].memory):
            continue
        found = _measure(docs, i, j, p, root)
        if found is not None:
            out.append(found)
    return rank(out)


def rank(candidates: list[Candidate]) -> list[Candidate]:
    """Best first: confidence, then contradictions before duplicates, then id (stable)."""
    return sorted(candidates, key=lambda c: (-c.confidence, c.kind != KIND_CONTRADICTION, c.id))


def member_record(m: Memory, vault_rel: str, health: str) -> dict[str, Any]:
    """One member in `memlens review --json`."""
    return {
        "vault": vault_rel,
        "format": m.format,
        "id": m.id,
        "path": m.path,
        "title": m.title,
        "health": health,
    }
