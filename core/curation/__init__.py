"""The review queue: near-duplicates and possible contradictions, and what to do about them.

Modules: `wording` (words, clauses, cheap similarity, word diffs),
`conflicts` (contradictions without a language model), `candidates`
(finding and ranking pairs in one vault), `decisions` (what "keep both"
remembers, in `.memlens/review/decisions.json`).  This module runs them
over a catalog's vaults, gives the `memlens review --json` document, and
applies the three actions, each one transaction (one journal entry, one
`memlens undo`) through `core.actions`:

- merge KEEP OTHER and supersede NEW OLD: the steps of the format's writer
  (`plan_merge` / `plan_supersede`); a supersede that keeps the old memory
  also records the decision, so the pair stays settled until one changes;
- dismiss CANDIDATE: records "keep both" with each member's content hash.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from ..actions import apply_steps, curation_steps
from ..decay import decay_of
from ..errors import NotFoundError, RefusedError
from ..formats import adapter_for
from ..formats.curating import CurationOptions, Step, refreshed
from ..model import Memory
from ..scan.vault import Vault
from ..search.embeddings import MODEL
from ..write.journal import Plan
from .candidates import (
    DUP_MEANING,
    KIND_CONTRADICTION,
    KIND_DUPLICATE,
    KINDS,
    Candidate,
    MeaningFn,
    find_in_vault,
    rank,
)
from .decisions import DECISIONS_REL, is_settled, load_decisions, plan_decision

__all__ = [
    "DECISIONS_REL",
    "KINDS",
    "KIND_CONTRADICTION",
    "KIND_DUPLICATE",
    "Candidate",
    "MeaningFn",
    "ReviewItem",
    "ReviewRun",
    "apply_curation",
    "candidate_json",
    "dismiss",
    "plan_steps",
    "review",
    "review_json",
    "review_run",
]


@dataclass(frozen=True, slots=True)
class ReviewItem:
    """A candidate with the vault it was found in (for the JSON's `vault` fields)."""

    candidate: Candidate
    vault_rel: str


@dataclass(frozen=True, slots=True)
class ReviewRun:
    """The candidates of a review, and the similarities that were measured to find them."""

    items: list[ReviewItem]
    #: Names of the similarities measured in at least one vault ("tfidf",
    #: "jaccard", "char3", "vector": a vault's own `_embeddings.json`,
    #: "meaning": the search index's meaning vectors).
    similarities: tuple[str, ...]


def review(
    vaults: Iterable[Vault],
    as_of: date,
    *,
    kind: str | None = None,
    limit: int | None = None,
    include_settled: bool = False,
    should_stop: Callable[[], bool] | None = None,
    meaning: MeaningFn | None = None,
) -> list[ReviewItem]:
    """Every open candidate of every vault, best first (`rank`), at most `limit`."""
    return review_run(
        vaults,
        as_of,
        kind=kind,
        limit=limit,
        include_settled=include_settled,
        should_stop=should_stop,
        meaning=meaning,
    ).items


def review_run(
    vaults: Iterable[Vault],
    as_of: date,
    *,
    kind: str | None = None,
    limit: int | None = None,
    include_settled: bool = False,
    should_stop: Callable[[], bool] | None = None,
    meaning: MeaningFn | None = None,
) -> ReviewRun:
    """Every open candidate of every vault, best first (`rank`), at most `limit`.

    Candidates a decision settled (dismissed, or superseded with the old
    kept) are left out while both members are unchanged, unless
    `include_settled`.  `meaning` (the search index's `meaning_vectors`,
    when the semantic extra is on) adds paraphrase duplicates.
    """
    items: list[ReviewItem] = []
    used: set[str] = set()
    for vault in vaults:
        decisions = load_decisions(vault.root)
        found = find_in_vault(
            vault.root,
            vault.memories,
            as_of,
            should_stop=should_stop,
            copies=vault.adapter.deliberate_copies,
            meaning=meaning,
            used=used,
        )
        for c in found:
            if kind is not None and c.kind != kind:
                continue
            if not include_settled and is_settled(c.id, c.members, decisions):
                continue
            items.append(ReviewItem(c, vault.rel))
    order = {id(c): n for n, c in enumerate(rank([i.candidate for i in items]))}
    items.sort(key=lambda i: (order[id(i.candidate)], i.vault_rel))
    kept = items[:limit] if limit is not None else items
    return ReviewRun(kept, tuple(sorted(used)))


def candidate_json(item: ReviewItem, as_of: date) -> dict[str, Any]:
    """One candidate in `memlens review --json`."""
    c = item.candidate
    a_only = [w for op in c.diff for w in op.a]
    b_only = [w for op in c.diff for w in op.b]
    return {
        "id": c.id,
        "kind": c.kind,
        "confidence": c.confidence,
        "reason": c.reason,
        "vault": item.vault_rel,
        "format": c.members[0].format,
        "members": [
            {
                "vault": item.vault_rel,
                "format": m.format,
                "id": m.id,
                "path": m.path,
                "title": m.title,
                "health": decay_of(m, as_of, explain=False).health.value,
            }
            for m in c.members
        ],
        "measures": c.measures,
        "differing_words": [a_only, b_only],
        "diff": [op.to_dict() for op in c.diff],
    }


def review_json(
    items: Iterable[ReviewItem], as_of: date, similarities: Iterable[str] | None = None
) -> dict[str, Any]:
    """The `memlens review --json` document.

    `similarities`: what `review_run` measured; the document says whether
    meaning-based duplicates were looked for (`similarities.meaning`).
    """
    cands = [candidate_json(i, as_of) for i in items]
    used = sorted(similarities) if similarities is not None else ["char3", "jaccard", "tfidf"]
    meaning = "meaning" in used
    return {
        "as_of": as_of.isoformat(),
        "confidence": (
            "duplicate: 0.5 at a similarity threshold, 1.0 identical; contradiction: "
            "0.6 + 0.05 per subject word beyond 2 (max 4) + 0.2 x content Jaccard, "
            "setting conflicts 0.5 + 0.4 x Jaccard"
        ),
        "similarities": {
            "used": used,
            "meaning": meaning,
            "note": (
                f"meaning: the search index's {MODEL} vectors, cosine >= {DUP_MEANING}"
                if meaning
                else "lexical only: meaning vectors need the semantic extra "
                "(pip install 'memlens[semantic]'; MEMLENS_SEMANTIC=0 turns it off)"
            ),
        },
        "count": len(cands),
        "candidates": cands,
    }


def _record_step(name: str, cid: str, first: Memory, second: Memory, on: date) -> Step:
    """A last step remembering the decision with both members as the earlier steps left them."""

    def plan() -> Plan:
        adapter = adapter_for(first.format)
        fresh = [refreshed(adapter, m, check=False) for m in (first, second)]
        return plan_decision(first.vault_root, cid, fresh, name, on)

    return (f"remember {cid}", plan)


def plan_steps(name: str, first: Memory, second: Memory, options: CurationOptions) -> list[Step]:
    """The steps of merge / supersede (with the decision recorded when both stay live)."""
    from .candidates import candidate_id

    steps = curation_steps(name, first, second, options)
    if name == "supersede" and options.keep_old:
        steps.append(
            _record_step(name, candidate_id((first, second)), first, second, options.as_of)
        )
    return steps


def apply_curation(
    name: str,
    first: Memory,
    second: Memory,
    as_of: date,
    *,
    keep_old: bool = False,
    now: datetime | None = None,
) -> dict[str, Any]:
    """Merge `second` into `first`, or mark `first` as superseding `second`; one transaction."""
    options = CurationOptions(as_of=as_of, keep_old=keep_old, now=now)
    steps = plan_steps(name, first, second, options)
    what = "merge" if name == "merge" else "supersede"
    extra = " (old kept)" if name == "supersede" and keep_old else ""
    summary = f"{what}: {first.id} <- {second.id}{extra}: " + "; ".join(s[0] for s in steps)
    return apply_steps(first.vault_root, name, steps, summary)


def find_candidate(items: Iterable[ReviewItem], candidate_id: str) -> ReviewItem:
    """The candidate with this id; NotFoundError naming it otherwise."""
    for item in items:
        if item.candidate.id == candidate_id:
            return item
    raise NotFoundError(f"no open review candidate {candidate_id!r}")


def dismiss(candidate: Candidate, as_of: date) -> dict[str, Any]:
    """Keep both: remember the candidate with its members' hashes (one transaction)."""
    root: Path = candidate.vault_root
    if not candidate.members:
        raise RefusedError(f"{candidate.id}: no members")
    steps: list[Step] = [
        (
            f"remember {candidate.id}",
            lambda: plan_decision(root, candidate.id, candidate.members, "dismiss", as_of),
        )
    ]
    return apply_steps(root, "dismiss", steps, f"dismiss: keep both of {candidate.id}")
