"""Linking: citations and prior beliefs resolved, `incorporated_by` counted, and
`relink` of a few changed documents.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass
from typing import Any

from ...identity import ByIdentity
from ...model import (
    FileScan,
    LinkState,
    Memory,
    ReferenceProblem,
    RefIssue,
    Relation,
    ScanResult,
)
from ...refs import PointerKind, reference_issue
from ..linking import Changes, one_memory_files, relinked
from .schema import FORMAT_ID, KIND_COMPREHENSION, KIND_OBSERVATION
from .validation import _str_items

#: `context.prior_belief` form: `<comp-id>/v<N>`.
_PRIOR_BELIEF = re.compile(r"^(?P<id>.+)/v(?P<version>\d+)$")


@dataclass(slots=True)
class _ObservationLinkState(LinkState):
    """What `link` leaves for `relink` (valid only for the newest result).

    `claims`: how many documents claim each id; `obs` / `comps`: the kept
    observations and comprehensions by id; `cited_by` / `believers`: who
    cites each observation / holds each comprehension as a prior belief.
    """

    claims: Counter[str]
    obs: dict[str, Memory]
    comps: dict[str, Memory]
    cited_by: dict[str, dict[int, Memory]]
    believers: dict[str, dict[int, Memory]]


def _link(memories: list[Memory]) -> list[ReferenceProblem]:
    """Resolve citations and prior beliefs; fill relations and incorporated_by."""
    observations = {m.id: m for m in memories if m.kind == KIND_OBSERVATION}
    comprehension = {m.id for m in memories if m.kind == KIND_COMPREHENSION}
    problems: list[ReferenceProblem] = []
    # Linking runs again after a file changes (live reload, cache): derived
    # values are recomputed from scratch, never accumulated.
    for obs in observations.values():
        if obs.native.get("incorporated_by"):
            obs.native["incorporated_by"] = []
    for memory in memories:
        problems.extend(_link_one(memory, observations, comprehension))
        if memory.kind == KIND_COMPREHENSION:
            for obs_id in memory.native["cites"]:
                incorporated = observations[obs_id].native["incorporated_by"]
                if memory.id not in incorporated:
                    incorporated.append(memory.id)
    return problems


def _belief(memory: Memory) -> tuple[str, str] | None:
    """(prior_belief as written, the comprehension id it names) of an observation."""
    context = memory.fields.get("context")
    belief = context.get("prior_belief") if isinstance(context, dict) else None
    if not isinstance(belief, str):
        return None
    # `<comp-id>/v<N>` is the format's own syntax, not a path: strip the
    # version, then the bare id must be free of path syntax.
    versioned = _PRIOR_BELIEF.match(belief)
    return belief, versioned.group("id") if versioned else belief


def _citations(memory: Memory) -> list[tuple[str, str]]:
    """(field name, ref) of every observation a comprehension cites, in order."""
    out: list[tuple[str, str]] = []
    for field in ("observations", "observations_used"):
        name = field if field == "observations" else f"posterior.{field}"
        out.extend((name, ref) for ref in _str_items(memory.native.get(field)))
    return out


def _link_one(
    memory: Memory, observations: Container[str], comprehension: Container[str]
) -> list[ReferenceProblem]:
    """Resolve one memory's references in place (and a comprehension's `cites`)."""
    problems: list[ReferenceProblem] = []

    def flag(field: str, ref: str, issue: RefIssue) -> None:
        problems.append(
            ReferenceProblem(
                format=FORMAT_ID,
                vault_root=memory.vault_root,
                path=memory.path,
                id=memory.id,
                field=field,
                ref=ref,
                reason=issue,
            )
        )

    relations: list[Relation] = []
    if memory.kind == KIND_COMPREHENSION:
        cites: list[str] = []
        for name, ref in _citations(memory):
            issue = reference_issue(ref, observations)
            resolved = ref if issue is None else None
            if issue is not None:
                flag(name, ref, issue)
            elif ref not in cites:
                cites.append(ref)
            relations.append(Relation(target=ref, type="cites", field=name, resolved=resolved))
        memory.native["cites"] = cites
    else:
        belief = _belief(memory)
        if belief is not None:
            written, target = belief
            field = "context.prior_belief"
            issue = reference_issue(target, comprehension)
            if issue is not None:
                flag(field, written, issue)
            found = target if issue is None else None
            relations.append(
                Relation(target=written, type="prior_belief", field=field, resolved=found)
            )
        trace = memory.native.get("trace_ref")
        if isinstance(trace, str):
            issue = reference_issue(trace, (), kind=PointerKind.EXTERNAL)
            if issue is not None:
                flag("trace_ref", trace, issue)
    if memory.relations != tuple(relations):
        memory.relations = tuple(relations)
    return problems


def _index_refs(
    memory: Memory,
    cited_by: dict[str, dict[int, Memory]],
    believers: dict[str, dict[int, Memory]],
    *,
    remove: bool = False,
) -> None:
    """Add (or remove) a memory in the reverse reference tables."""
    if memory.kind == KIND_COMPREHENSION:
        keys = [(cited_by, ref) for _name, ref in _citations(memory)]
    else:
        belief = _belief(memory)
        keys = [(believers, belief[1])] if belief is not None else []
    for table, key in keys:
        if remove:
            holders = table.get(key)
            if holders is not None:
                holders.pop(id(memory), None)
                if not holders:
                    del table[key]
        else:
            table.setdefault(key, ByIdentity())[id(memory)] = memory


def relink_documents(
    scans: Mapping[str, FileScan], previous: ScanResult, changes: Changes
) -> ScanResult | None:
    """`link` after a few documents changed, touching only what they affect.

    Handles documents holding one valid memory before and after whose
    ids no other document claims; anything else returns None (full
    link).  Citations and prior beliefs of other documents are
    re-resolved when they name an id that appeared or disappeared, and
    `incorporated_by` is recomputed for the observations whose citing
    comprehensions changed.
    """
    st = previous.link_state
    split = one_memory_files(changes)
    if split is None or not isinstance(st, _ObservationLinkState):
        return None
    claims, obs, comps = st.claims, st.obs, st.comps
    cited_by, believers = st.cited_by, st.believers
    gone, new = split
    delta = _claims_delta(gone, new, claims, obs, comps)
    if delta is None:
        return None

    # From here on the tables move to the new result.
    touched = {m.id for m in (*gone, *new)}
    was_obs = {i for i in touched if i in obs}
    was_comp = {i for i in touched if i in comps}
    for mem_id, d in delta.items():
        claims[mem_id] += d
        if claims[mem_id] <= 0:
            del claims[mem_id]
    recount: set[str] = set()  # observations whose incorporated_by may change
    for m in gone:
        (obs if m.kind == KIND_OBSERVATION else comps).pop(m.id, None)
        _index_refs(m, cited_by, believers, remove=True)
        if m.kind == KIND_COMPREHENSION:
            recount.update(m.native.get("cites", []))
    for m in new:
        (obs if m.kind == KIND_OBSERVATION else comps)[m.id] = m
        _index_refs(m, cited_by, believers)
    changed_obs = was_obs ^ {i for i in touched if i in obs}
    changed_comps = was_comp ^ {i for i in touched if i in comps}

    def order(x: Memory | ReferenceProblem) -> tuple[Any, ...]:
        return scans[x.path].order

    owners: dict[int, Memory] = {id(m): m for m in new}
    for mem_id in changed_obs:
        owners.update(cited_by.get(mem_id, {}))
    for mem_id in changed_comps:
        owners.update(believers.get(mem_id, {}))
    ref_problems: list[ReferenceProblem] = []
    for memory in sorted(owners.values(), key=order):
        ref_problems.extend(_link_one(memory, obs, comps))
        if memory.kind == KIND_COMPREHENSION:
            recount.update(memory.native["cites"])
    recount.update(m.id for m in new if m.kind == KIND_OBSERVATION)
    _recount_incorporated(recount, obs, cited_by, order)

    dropped = {id(m) for m in gone}
    owner_ids = {m.id for m in owners.values()} | {m.id for m in gone}
    return relinked(previous, dropped, new, owner_ids, ref_problems, order, st)


def _claims_delta(
    gone: list[Memory],
    new: list[Memory],
    claims: Counter[str],
    obs: dict[str, Memory],
    comps: dict[str, Memory],
) -> Counter[str] | None:
    """How many more documents claim each id after the change; None when a relink cannot hold."""
    delta: Counter[str] = Counter()
    for m in gone:
        delta[m.id] -= 1
    for m in new:
        delta[m.id] += 1
    for mem_id, d in delta.items():
        gone_n = sum(1 for m in gone if m.id == mem_id)
        if claims[mem_id] != gone_n or claims[mem_id] + d > 1:
            return None  # another document claims this id: duplicates may change
    for m in gone:
        if (obs if m.kind == KIND_OBSERVATION else comps).get(m.id) is not m:
            return None
    return delta


def _recount_incorporated(
    recount: set[str],
    obs: dict[str, Memory],
    cited_by: dict[str, dict[int, Memory]],
    order: Callable[[Memory], tuple[Any, ...]],
) -> None:
    """`incorporated_by` of the observations in `recount`, from the comprehensions citing them."""
    for obs_id in recount:
        target = obs.get(obs_id)
        if target is None:
            continue
        citing = sorted(cited_by.get(obs_id, {}).values(), key=order)
        incorporated = [c.id for c in citing if obs_id in c.native.get("cites", ())]
        if incorporated != target.native.get("incorporated_by"):
            target.native["incorporated_by"] = incorporated
