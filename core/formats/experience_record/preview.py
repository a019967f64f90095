"""What an experience-record agent recalls for a prompt: the spec's retrieval pipeline.

Steps 2 and 4 of the spec's pipeline, as far as they run offline: hybrid
retrieval (`retrieval.hybrid_retrieve`, top RETRIEVE_K) and lens
application: each retrieved record with the views applied to it (their
lenses) and the stances that weigh it (as a candidate or in the decision's
support).  The format loads nothing at session start, so without a prompt
there is nothing to show.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...model import ScanResult
from ..adapter import FormatAdapter
from ..preview_model import STAGE_RECALL, PreviewEntry, PreviewRequest, PreviewSection
from .retrieval import WEIGHTS, Retrieved, hybrid_retrieve

#: How many records the preview retrieves (the spec's MVP "top-N"; its k is 64).
RETRIEVE_K = 5


def _views_of(views: Sequence[dict[str, Any]], exp_id: str) -> list[dict[str, Any]]:
    out = []
    for v in views:
        applied = v.get("applied_to")
        if isinstance(applied, list) and exp_id in applied:
            out.append({"id": v.get("id"), "lens": v.get("lens")})
    return out


def _stances_of(stances: Sequence[dict[str, Any]], exp_id: str) -> list[dict[str, Any]]:
    out = []
    for s in stances:
        candidates = s.get("candidates")
        named = isinstance(candidates, list) and any(
            isinstance(c, dict) and c.get("exp") == exp_id for c in candidates
        )
        decision = s.get("decision")
        support = decision.get("support") if isinstance(decision, dict) else None
        if named or (isinstance(support, list) and exp_id in support):
            claim = decision.get("claim") if isinstance(decision, dict) else None
            out.append({"id": s.get("id"), "question": s.get("question"), "decision": claim})
    return out


def _entry(r: Retrieved, records: dict[str, list[dict[str, Any]]]) -> PreviewEntry:
    m = r.memory
    views = _views_of(records.get("views", []), m.id)
    stances = _stances_of(records.get("stances", []), m.id)
    parts = ", ".join(f"{name} {value:.3f}" for name, value in r.parts.items())
    return PreviewEntry(
        id=m.id,
        title=m.title,
        path=m.path,
        text=m.body,
        score=r.score,
        note=f"{m.kind}; {parts}",
        details={"type": m.kind, "parts": r.parts, "views": views, "stances": stances},
        memory=m,
    )


def retrieval_preview(
    adapter: FormatAdapter, root: Path, result: ScanResult, request: PreviewRequest
) -> list[PreviewSection]:
    """The hybrid retrieval for the prompt, with the lenses and stances on each hit."""
    title = f"Hybrid retrieval (top {RETRIEVE_K})"
    weights = " + ".join(f"{w}·{name}" for name, w in WEIGHTS.items())
    if not request.has_prompt:
        return [
            PreviewSection(
                key="retrieval",
                title=title,
                stage=STAGE_RECALL,
                note="no prompt: retrieval runs for one (--prompt)",
            )
        ]
    hits = hybrid_retrieve(result.memories, request.prompt or "", request.as_of, RETRIEVE_K)
    return [
        PreviewSection(
            key="retrieval",
            title=title,
            stage=STAGE_RECALL,
            entries=tuple(_entry(r, result.records) for r in hits),
            note=f"score = {weights}",
            details={"weights": dict(WEIGHTS)},
        )
    ]


__all__ = ["RETRIEVE_K", "retrieval_preview"]
