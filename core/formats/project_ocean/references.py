"""The references run (`memlens ref`): memory-ref.py's backlink resolution and importance boosts.

What the script does, followed here (it chooses; the caller writes each
update as a `set`, all in one transaction):

- sources: every observation in an agent's `vault/` (archives and shared/
  are not read), in the script's load order (its agents first, in its order,
  then any other agent by name; file names sorted);
- a backlink names a file (`.md` optional): it resolves in the first agent,
  in that order, whose `vault/` holds the name; one that resolves nowhere
  is left alone (`memlens validate` flags it); one with path syntax is never
  looked up;
- each target gets every citing `agent/stem` in `ref_by` once; each new one
  adds +0.1 importance when the citing file is the target's agent's, +0.15
  when it is another agent's, capped at 1.0 and rounded to 2 places; `refs`
  becomes the number of `ref_by` entries;
- a target changes only if `refs` or the importance would.

Fixed here: the script rebuilds `ref_by` through a set, so its order changes
from run to run; memlens keeps the entries already written in their order
(duplicates dropped) and appends new ones in source order.  A first-generation
file has no importance: the script would write one into it (and memlens
would then read it as mixing the generations), so a first-generation target is
left unchanged and reported; its backlinks still count as citations.
A second run finds every citation already in `ref_by` and changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...model import Memory
from ..scanned import ScannedVault, ScannedVaults
from .linking import backlink2_name, script_agent_order
from .schema import FORMAT_ID

SAME_AGENT_BOOST = 0.1
CROSS_AGENT_BOOST = 0.15


@dataclass(frozen=True, slots=True)
class RefUpdate:
    """What the run writes into one cited observation."""

    memory: Memory
    refs: int
    ref_by: list[str]
    importance_before: float
    importance: float
    delta: float
    cross_agent_refs: int
    new_sources: list[str]

    @property
    def changes(self) -> dict[str, object]:
        return {"refs": self.refs, "ref_by": self.ref_by, "importance": self.importance}


def _sources(memories: Sequence[Memory]) -> list[Memory]:
    """Agents' vault observations in the script's load order."""
    own = [m for m in memories if m.native.get("area") == "vault" and not m.archived]
    agents = script_agent_order(sorted({str(m.native.get("agent")) for m in own}))
    rank = {a: i for i, a in enumerate(agents)}
    return sorted(own, key=lambda m: (rank[str(m.native.get("agent"))], m.path))


def _citations(sources: list[Memory]) -> dict[str, list[Memory]]:
    """Target id -> citing memories, in source order (resolved as the script does)."""
    by_id = {m.id: m for m in sources}
    agents = list(dict.fromkeys(str(m.native.get("agent")) for m in sources))
    cited: dict[str, list[Memory]] = {}
    for m in sources:
        for rel in m.relations:
            if rel.field != "backlinks":
                continue
            stem = backlink2_name(rel.target)
            if stem is None:
                continue
            target = next((f"{a}/{stem}" for a in agents if f"{a}/{stem}" in by_id), None)
            if target is not None:
                cited.setdefault(target, []).append(m)
    return cited


def reference_updates(
    memories: Sequence[Memory],
) -> tuple[list[RefUpdate], list[tuple[Memory, str]]]:
    """(updates to write, [(target, why it is left unchanged)]) for one vault."""
    sources = _sources(memories)
    by_id = {m.id: m for m in sources}
    updates: list[RefUpdate] = []
    skipped: list[tuple[Memory, str]] = []
    for target_id, citing in _citations(sources).items():
        target = by_id[target_id]
        if target.native.get("generation") != 2:
            skipped.append((target, "first-generation file (no importance to raise); unchanged"))
            continue
        ref_by = list(dict.fromkeys(str(r) for r in target.native.get("ref_by") or ()))
        before = float(target.importance if target.importance is not None else 0.5)
        agent = target.native.get("agent")
        delta = 0.0
        new_sources: list[str] = []
        for m in citing:
            if m.id in ref_by:
                continue
            ref_by.append(m.id)
            new_sources.append(m.id)
            delta += CROSS_AGENT_BOOST if m.native.get("agent") != agent else SAME_AGENT_BOOST
        refs = len(ref_by)
        if refs == target.native.get("refs") and delta <= 0:
            continue
        updates.append(
            RefUpdate(
                memory=target,
                refs=refs,
                ref_by=ref_by,
                importance_before=before,
                importance=round(min(before + delta, 1.0), 2),
                delta=round(delta, 2),
                cross_agent_refs=sum(1 for m in citing if m.native.get("agent") != agent),
                new_sources=new_sources,
            )
        )
    return updates, skipped


def reference_run(
    catalog: ScannedVaults,
) -> list[tuple[ScannedVault, list[RefUpdate], list[tuple[Memory, str]]]]:
    """`reference_updates` of every Project Ocean vault of the catalog."""
    return [(v, *reference_updates(v.memories)) for v in catalog.vaults if v.format == FORMAT_ID]


__all__ = ["RefUpdate", "reference_run", "reference_updates"]
