"""Backlinks (`[[name]]`) resolved the way the format's scripts resolve them: an agent's
own observations first, then shared ones.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ...identity import ByIdentity
from ...model import LinkState, Memory, ReferenceProblem, RefIssue, Relation
from ...refs import is_unsafe_reference
from .schema import FORMAT_ID, SHARED

#: A backlink must be a bare observation file name (the `.md` suffix is
#: tolerated); anything else could be a path and is never resolved.
BACKLINK_RE = re.compile(r"^(obs-\d{4}-\d{2}-\d{2}-\d{3})(?:\.md)?$")


@dataclass(slots=True)
class _OceanLinkState(LinkState):
    """What `link` leaves for `relink` (valid only for the newest result).

    `ids`: the kept memory ids; `agents`: kept memories per agent; `names`:
    who names each observation stem in a backlink.
    """

    ids: set[str]
    agents: Counter[str]
    names: dict[str, dict[int, Memory]]


def backlink_name(ref: str) -> str | None:
    """The observation stem a safe backlink names, or None if it is unsafe.

    Stricter than the shared rule (`core.refs`): the format names files
    `obs-YYYY-MM-DD-NNN`, so anything else may be a path and is unsafe.
    """
    m = BACKLINK_RE.match(ref)
    return m.group(1) if m and not is_unsafe_reference(ref) else None


#: memory-ref.py's agent list, in its order: a second-generation backlink
#: (a bare file name) resolves in the first of these agents holding it.
SCRIPT_AGENTS: tuple[str, ...] = ("captain", "scout", "shield", "hawk", "forge", "watchtower")


def script_agent_order(agents: list[str], known: Sequence[str] = SCRIPT_AGENTS) -> list[str]:
    """The agents in the script's order (`known`: memory-ref.py's by default), then others by name.

    The script reads only its six agents; memlens reads every agent folder,
    so the others come after them (a decision: the script is silent).  The
    first generation's scripts name `signal` where main names `forge`.
    """
    first = [a for a in known if a in agents]
    return first + sorted(a for a in agents if a not in known)


def backlink2_name(ref: str) -> str | None:
    """The file stem a second-generation backlink names (`.md` optional), or None if unsafe.

    memory-ref.py appends `.md` to any name; memlens accepts any name
    without path syntax (the first generation insists on obs-YYYY-MM-DD-NNN).
    """
    if is_unsafe_reference(ref) or not ref.strip() or ref != ref.strip():
        return None
    stem = ref[:-3] if ref.endswith(".md") else ref
    return stem or None


def ref_by_id(ref: str) -> str | None:
    """The id a `ref_by` entry (`agent/obs-...`) names, or None if it is unsafe.

    At most one `/`, between two safe names: `../x`, `a/b/c` and the like
    are path syntax and never looked up.  A bare name (no agent) names no
    id: it is looked up as written and found dangling.
    """
    agent, sep, name = ref.partition("/")
    if not sep:
        return None if is_unsafe_reference(ref) or not ref.strip() else ref
    if "/" in name or not agent or not name:
        return None
    if is_unsafe_reference(agent) or is_unsafe_reference(name):
        return None
    return ref


def _resolve_one(
    m: Memory, rel: Relation, ids: set[str], order: list[str], agents2: list[str]
) -> tuple[str | None, str | None]:
    """(stem named, resolved id) of one relation; stem None: unsafe."""
    if rel.type == "ref_by":
        target = ref_by_id(rel.target)
        if target is None:
            return None, None
        return target.rpartition("/")[2], target if target in ids else None
    if m.native.get("generation") == 2:
        stem = backlink2_name(rel.target)
        prefixes = agents2
    else:
        stem = backlink_name(rel.target)
        prefixes = order
    if stem is None:
        return None, None
    return stem, next((f"{p}/{stem}" for p in prefixes if f"{p}/{stem}" in ids), None)


def _resolution_order(memory: Memory, agents: list[str]) -> list[str]:
    """Id prefixes a bare backlink is looked up under, in order.

    An agent reads its own vault and shared/ (memory-search.py --agent), so
    its backlinks resolve there: its own vault/archive first, then shared/.
    A shared observation was promoted from some agent and is read by all, so
    its backlinks resolve in shared/ first, then the agent it was promoted
    from (`promoted_from`, else `source` when it names an agent), then any
    agent in name order.
    """
    agent = str(memory.native.get("agent"))
    if not memory.native.get("shared"):
        return [agent, SHARED]
    order = [SHARED]
    for hint in (memory.native.get("promoted_from"), memory.source):
        if isinstance(hint, str) and hint in agents and hint not in order:
            order.append(hint)
    order.extend(a for a in agents if a not in order)
    return order


def _resolve_backlinks(
    memories: list[Memory],
    root: Path,
    *,
    ids: set[str] | None = None,
    agents: list[str] | None = None,
    names: dict[str, dict[int, Memory]] | None = None,
) -> tuple[list[Memory], list[ReferenceProblem]]:
    """Fill each backlink's `resolved` (in place, recomputed every time) and flag broken ones.

    `ids` and `agents` default to those of `memories` (a full link); a
    relink passes the vault's.  `names`, when given, is filled with which
    memories name which observation stem (for the next relink).
    """
    if ids is None:
        ids = {m.id for m in memories}
    if agents is None:
        agents = sorted({str(m.native["agent"]) for m in memories if not m.native.get("shared")})
    problems: list[ReferenceProblem] = []
    agents2 = script_agent_order(agents)
    for m in memories:
        if not m.relations:
            continue
        order = _resolution_order(m, agents) if m.native.get("generation") != 2 else []
        changed = False
        resolved_all: list[str | None] = []
        for rel in m.relations:
            name, resolved = _resolve_one(m, rel, ids, order, agents2)
            issue: RefIssue | None = None
            if name is None:
                issue = RefIssue.UNSAFE
            else:
                if names is not None:
                    names.setdefault(name, ByIdentity())[id(m)] = m
                issue = None if resolved else RefIssue.DANGLING
            if issue is not None:
                problems.append(
                    ReferenceProblem(
                        format=FORMAT_ID,
                        vault_root=root,
                        path=m.path,
                        id=m.id,
                        field=rel.field,
                        ref=rel.target,
                        reason=issue,
                    )
                )
            resolved_all.append(resolved)
            changed = changed or rel.resolved != resolved
        if changed:
            # Only a changed resolution builds new objects: relinking a
            # 100k-memory vault after one edit stays cheap.
            m.relations = tuple(
                replace(rel, resolved=r) for rel, r in zip(m.relations, resolved_all, strict=True)
            )
    return memories, problems


def _twin(rel: str) -> str | None:
    """The other place a file with the same id could be (vault <-> archive)."""
    parts = rel.split("/")
    if len(parts) == 5 and parts[0] == "agents":
        other = "archive" if parts[3] == "vault" else "vault"
        return "/".join([*parts[:3], other, parts[4]])
    if parts[:2] == ["shared", "observations"]:
        if len(parts) == 3:
            return f"shared/observations/archive/{parts[2]}"
        if len(parts) == 4:
            return f"shared/observations/{parts[3]}"
    return None


def _stems(memory: Memory) -> set[str]:
    out: set[str] = set()
    gen2 = memory.native.get("generation") == 2
    for r in memory.relations:
        if r.type == "ref_by":
            target = ref_by_id(r.target)
            name = target.rpartition("/")[2] if target is not None else None
        else:
            name = backlink2_name(r.target) if gen2 else backlink_name(r.target)
        if name is not None:
            out.add(name)
    return out


def _agent_of(memory: Memory) -> str | None:
    return None if memory.native.get("shared") else str(memory.native["agent"])
