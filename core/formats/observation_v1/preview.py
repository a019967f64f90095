"""What an observation/v1 agent loads: its comprehension documents and what they incorporate.

Observations are episodic inputs; comprehension documents are "what we now
believe" (the semantic memory an agent works from), so the load is every
comprehension document outside the archive, by id.  Each entry shows its
posterior belief and confidence and the observations it incorporates (its
`observations` and `posterior.observations_used`, resolved; the ones that do
not resolve are listed as missing).  A second section lists the live
observations no comprehension incorporates yet: raw events the agent has no
belief about.  The format defines no recall step for a prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...model import Memory
from ..adapter import FormatAdapter
from ..preview_model import STAGE_CUT, STAGE_LOAD, PreviewEntry, PreviewRequest, PreviewSection
from .schema import KIND_COMPREHENSION, KIND_OBSERVATION


def _str_list(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _belief(m: Memory) -> tuple[str, str]:
    """(posterior statement, its confidence) of a comprehension document."""
    posterior = m.fields.get("posterior")
    if not isinstance(posterior, dict):
        return "", ""
    statement = posterior.get("statement")
    confidence = posterior.get("confidence")
    return (
        statement if isinstance(statement, str) else "",
        confidence if isinstance(confidence, str) else "",
    )


def _comprehension_entry(m: Memory) -> PreviewEntry:
    statement, confidence = _belief(m)
    cited = _str_list(m.native.get("observations")) + _str_list(m.native.get("observations_used"))
    incorporated = _str_list(m.native.get("cites"))
    missing = [ref for ref in dict.fromkeys(cited) if ref not in incorporated]
    text = f"# {m.title}\nBelief ({confidence}): {statement}\n{m.body}"
    return PreviewEntry(
        id=m.id,
        title=m.title,
        path=m.path,
        text=text,
        note=f"{confidence} confidence; incorporates {len(incorporated)} observations",
        details={
            "belief": statement,
            "confidence": confidence,
            "version": m.native.get("version"),
            "verified": m.native.get("verified"),
            "incorporates": incorporated,
            "missing": missing,
        },
        memory=m,
    )


def _observation_entry(m: Memory) -> PreviewEntry:
    event = m.fields.get("event")
    return PreviewEntry(
        id=m.id,
        title=m.title,
        path=m.path,
        text=f"{event}\n{m.body}" if isinstance(event, str) else m.body,
        note="no comprehension incorporates it",
        memory=m,
    )


def comprehension_preview(
    adapter: FormatAdapter, root: Path, memories: Sequence[Memory], request: PreviewRequest
) -> list[PreviewSection]:
    """Comprehension documents as loaded, and the observations none incorporates."""
    comps = sorted(
        (m for m in memories if m.kind == KIND_COMPREHENSION and not m.archived),
        key=lambda m: (m.id, m.path),
    )
    pending = sorted(
        (
            m
            for m in memories
            if m.kind == KIND_OBSERVATION
            and not m.archived
            and not _str_list(m.native.get("incorporated_by"))
        ),
        key=lambda m: (m.id, m.path),
    )
    return [
        PreviewSection(
            key="comprehension",
            title="Comprehension documents",
            stage=STAGE_LOAD,
            entries=tuple(_comprehension_entry(m) for m in comps),
            note=f"{len(comps)} documents: what the agent now believes",
        ),
        PreviewSection(
            key="not_incorporated",
            title="Observations not incorporated",
            stage=STAGE_CUT,
            entries=tuple(_observation_entry(m) for m in pending),
            note="raw events no comprehension document cites yet",
        ),
    ]


__all__ = ["comprehension_preview"]
