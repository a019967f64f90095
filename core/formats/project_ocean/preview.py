"""What a Project Ocean agent recalls: its HEARTBEAT step, and what shared/ adds to it.

Each agent's HEARTBEAT.md runs ``memory-search.py "<query>" --agent NAME
--limit 3`` before it responds: a search of that agent's `vault/` plus
`shared/observations/` (archives never; expired files skipped), ranked by
cosine × confidence × decay weight.  The preview runs that step for the
prompt, for one agent (`--agent`) or every agent with memories, and runs it
again without shared/ (the script's `--no-shared`) to show what shared/
adds: the shared hits in the top 3 and the agent's own memories they push
out.  Agents load nothing else at session start, so without a prompt there
is nothing to recall.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ...model import Memory
from ..adapter import FormatAdapter
from ..preview_model import STAGE_RECALL, PreviewEntry, PreviewRequest, PreviewSection

#: HEARTBEAT.md's recall step asks for three results.
HEARTBEAT_LIMIT = 3


def _recall(
    request: PreviewRequest, pool: Sequence[Memory], prompt: str
) -> list[tuple[Memory, float]]:
    """The one call of Project Ocean's search ranking (switch it here when it changes).

    Today it is `core.preview`'s ranker over the search index built from
    `pool` alone, so idf comes from the documents the script would load.
    """
    if request.recall is None:
        return []
    return request.recall(pool, prompt, HEARTBEAT_LIMIT)


def _agents(memories: Sequence[Memory], wanted: str | None) -> list[str]:
    names = sorted(
        {
            a
            for m in memories
            if not m.native.get("shared") and isinstance(a := m.native.get("agent"), str)
        }
    )
    if wanted is None:
        return names
    return [n for n in names if n.lower() == wanted.lower()]


def _entry(m: Memory, score: float, note: str) -> PreviewEntry:
    return PreviewEntry(
        id=m.id,
        title=m.title,
        path=m.path,
        text=m.body,
        score=score,
        note=note,
        details={
            "area": "shared" if m.native.get("shared") else "agent",
            "confidence": m.confidence,
            "created": m.created.isoformat() if m.created is not None else None,
        },
        memory=m,
    )


def _agent_sections(
    request: PreviewRequest, memories: Sequence[Memory], agent: str, prompt: str
) -> list[PreviewSection]:
    own = [
        m
        for m in memories
        if not m.archived and not m.native.get("shared") and m.native.get("agent") == agent
    ]
    shared = [m for m in memories if not m.archived and m.native.get("shared")]
    hits = _recall(request, own + shared, prompt)
    alone = _recall(request, own, prompt)
    added = [(m, s) for m, s in hits if m.native.get("shared")]
    kept = {m.key for m, _ in hits}
    displaced = [m.id for m, _ in alone if m.key not in kept]
    recall = PreviewSection(
        key="recall",
        title=f"{agent}: recall step (--limit {HEARTBEAT_LIMIT})",
        stage=STAGE_RECALL,
        agent=agent,
        entries=tuple(
            _entry(m, s, "shared/" if m.native.get("shared") else "own vault") for m, s in hits
        ),
        note=f"{len(own)} own and {len(shared)} shared observations searched",
        details={"searched": {"agent": len(own), "shared": len(shared)}},
    )
    adds = PreviewSection(
        key="shared_adds",
        title=f"{agent}: what shared/ adds",
        stage=STAGE_RECALL,
        agent=agent,
        entries=tuple(_entry(m, s, "from shared/") for m, s in added),
        note=(
            f"pushes out {', '.join(displaced)}"
            if displaced
            else "pushes out none of the agent's own results"
        ),
        details={"displaced": displaced, "without_shared": [m.id for m, _ in alone]},
    )
    return [recall, adds]


def recall_preview(
    adapter: FormatAdapter, root: Path, memories: Sequence[Memory], request: PreviewRequest
) -> list[PreviewSection]:
    """The HEARTBEAT recall step per agent for the prompt, and what shared/ adds."""
    agents = _agents(memories, request.agent)
    if not request.has_prompt:
        return [
            PreviewSection(
                key="recall",
                title=f"{agent}: recall step (--limit {HEARTBEAT_LIMIT})",
                stage=STAGE_RECALL,
                agent=agent,
                note="no prompt: the recall step searches for one (--prompt)",
            )
            for agent in agents
        ]
    prompt = request.prompt or ""
    out: list[PreviewSection] = []
    for agent in agents:
        out.extend(_agent_sections(request, memories, agent, prompt))
    return out


__all__ = ["HEARTBEAT_LIMIT", "recall_preview"]
