"""Graph health: orphans, one-way relations of two-way formats, forbidden cycles.

The rules (what counts as an orphan, which formats are two-way, which
fields must be acyclic) are in `relations`'s docstring; broken references
are the adapters' own `ref_problems`, collected as the graph is built.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any, cast

import networkx as nx

from .model import (
    ACYCLIC_FIELDS,
    TWO_WAY_FORMATS,
    Cycle,
    GraphEdge,
    GraphHealth,
    NodeKey,
    OneWayRelation,
    adjacent,
)

if TYPE_CHECKING:
    from .relations import MemoryGraph


def graph_health(graph: MemoryGraph) -> GraphHealth:
    """Broken references, orphans, one-way relations and forbidden cycles."""
    return GraphHealth(
        ref_problems=list(graph.ref_problems),
        orphans=orphans(graph),
        one_way=one_way_relations(graph),
        cycles=cycles(graph),
    )


def orphans(graph: MemoryGraph) -> list[NodeKey]:
    """Memories with no resolved link in or out (rules in `relations`'s docstring)."""
    found: list[NodeKey] = []
    for key, node in graph.nodes.items():
        if node.memory is None or node.memory.tombstoned:
            continue
        if key[0] not in graph.linked_vaults:
            continue
        if any(v != key for v in adjacent(graph.g, key)):
            continue
        found.append(key)
    return sorted(found)


def one_way_relations(graph: MemoryGraph) -> list[OneWayRelation]:
    """Links a two-way format wrote on one end only."""
    found = [o for e in graph.edges() if (o := one_way_of(graph, e)) is not None]
    found.sort(key=lambda o: (o.declared_on, o.edge.type, o.missing_on))
    return found


def one_way_of(graph: MemoryGraph, e: GraphEdge) -> OneWayRelation | None:
    """The edge as a one-way relation, if a two-way format wrote it on one end only."""
    if e.format not in TWO_WAY_FORMATS:
        return None
    if not (graph.nodes[e.source].is_memory and graph.nodes[e.target].is_memory):
        return None
    at_src, at_dst = e.declared_at_source, e.declared_at_target
    if at_src and not at_dst:
        return OneWayRelation(e, e.source, e.target, "incoming")
    if at_dst and not at_src:
        return OneWayRelation(e, e.target, e.source, "outgoing")
    return None


def cycles(graph: MemoryGraph) -> list[Cycle]:
    """Cycles through fields that must be acyclic (experience-records `parents`)."""
    found: list[Cycle] = []
    groups: dict[tuple[str, str], list[GraphEdge]] = defaultdict(list)
    for e in graph.edges():
        if e.field in ACYCLIC_FIELDS.get(e.format, frozenset()):
            groups[(e.format, e.field)].append(e)
    for (fmt, fld), edges in sorted(groups.items()):
        sub: Any = nx.DiGraph()
        sub.add_edges_from((e.source, e.target) for e in edges)
        for comp in nx.strongly_connected_components(sub):
            members = cast(set[NodeKey], comp)
            if len(members) == 1:
                (only,) = members
                if not sub.has_edge(only, only):
                    continue
            part = sub.subgraph(members)
            example = cast(
                list[tuple[NodeKey, NodeKey]],
                [(u, v) for u, v in nx.find_cycle(part, source=min(members))],
            )
            found.append(Cycle(fmt, fld, tuple(sorted(members)), tuple(example)))
    found.sort(key=lambda c: c.nodes)
    return found
