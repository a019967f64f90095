"""The relation graph: every link of every format, walkable both ways, with its health.

One `networkx.MultiDiGraph` holds every valid memory of every vault as a node
keyed `(vault root, memory id)`, plus the view and stance records some
formats keep (experience-records) as non-memory nodes.  Edges come from each
memory's `Memory.relations` (as the adapters resolved them) and from
`ScanResult.records["edges"]`.  Incoming edges are not stored separately:
the graph is directed, so a memory's backlinks are its in-edges.

Decisions a reader would question:

* **True direction.**  A cognitive-memory relation with `direction: incoming`
  written on B with target A means A -> B.  The edge is stored A -> B, and the
  declaration keeps the form it was written in (`Declaration.direction`,
  `Declaration.holder`).
* **One edge per link.**  A link written on both ends (cognitive-memory
  writes the outgoing form on A and the incoming form on B) is one edge with
  two declarations, not two parallel edges.  Edges are merged on
  (source, target, type, field).
* **Two-way formats.**  In cognitive-memory every relation is expected to be
  written on both ends: an outgoing relation A -> B of type T on A needs an
  incoming relation of type T targeting A on B, and vice versa.  An edge that
  lacks either declaration is a one-way relation.  Project Ocean backlinks
  and every other format's links are one-sided by design.
* **Acyclic fields.**  experience-records `parents` form a lattice; any cycle
  among them (a strongly connected component, or a self-parent) is reported,
  with one concrete cycle found by `networkx.find_cycle`.
* **Orphans** are memories with no resolved link in or out, counting links
  to and from view/stance records (a memory a view reframes is connected).
  Links to itself and flagged (dangling/unsafe) references do not count.
  Tombstoned memories are never orphans (erased, nothing to repair), and
  orphans are only judged in vaults that declare at least one link: in a
  vault with no links at all (e.g. dream-cycle) every memory would be one,
  which says nothing.
* **Broken references** (dangling, unsafe, tombstoned) are the adapters'
  `ScanResult.ref_problems`; the graph never follows a reference itself, so
  a target with path syntax can never become a path.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, cast

import networkx as nx

from ..model import Memory, ReferenceProblem, RefIssue, Relation
from ..scan.vault import Catalog, Vault
from .health import cycles, graph_health, one_way_of, one_way_relations, orphans
from .model import (
    MAX_DEPTH,
    MIN_DEPTH,
    Cycle,
    Declaration,
    GraphEdge,
    GraphHealth,
    GraphNode,
    Neighbour,
    Neighbourhood,
    NodeKey,
    OneWayRelation,
    adjacent,
)


class MemoryGraph:
    """Every link of every vault, with backlinks, neighbourhoods and health."""

    def __init__(self) -> None:
        #: The networkx graph; each edge's data holds `edge` (a GraphEdge) and its type/field.
        self.g: Any = nx.MultiDiGraph()
        self.nodes: dict[NodeKey, GraphNode] = {}
        self.ref_problems: list[ReferenceProblem] = []
        #: Relations that resolved to nothing the graph holds and were not flagged
        #: (external pointers such as `uri:`/`https://` evidence).
        self.unresolved: list[tuple[NodeKey, Relation]] = []
        self._by_id: dict[str, list[NodeKey]] = defaultdict(list)
        self._ref_by_holder: dict[NodeKey, list[ReferenceProblem]] = defaultdict(list)
        #: Vault roots that declare at least one link (orphans are judged only there).
        self.linked_vaults: set[str] = set()
        self._health: GraphHealth | None = None

    # -- building

    def add_node(self, node: GraphNode) -> None:
        if node.key in self.nodes:
            return
        self.nodes[node.key] = node
        self._by_id[node.key[1]].append(node.key)
        self.g.add_node(node.key)

    def add_link(
        self,
        source: NodeKey,
        target: NodeKey,
        *,
        type: str,
        field: str,
        format: str,
        declaration: Declaration,
    ) -> GraphEdge:
        """Add one declaration of a link; merges with an existing edge of the same kind."""
        ek = (type, field)
        data = self.g.get_edge_data(source, target, key=ek)
        if data is not None:
            old = cast(GraphEdge, data["edge"])
            if declaration in old.declarations:
                return old
            edge = GraphEdge(source, target, type, field, format, (*old.declarations, declaration))
        else:
            edge = GraphEdge(source, target, type, field, format, (declaration,))
        self.g.add_edge(source, target, key=ek, edge=edge, type=type, field=field)
        self._health = None
        return edge

    def add_vault(self, vault: Vault) -> None:
        """Add every memory, record node and link of one scanned vault."""
        root = str(vault.root)
        result = vault.result
        memories = result.memories
        # What add_node does, in bulk: networkx's per-call overhead dominated
        # building a 100k-memory graph.
        fresh: list[NodeKey] = []
        nodes, by_id = self.nodes, self._by_id
        for m in memories:
            key = m.key
            if key in nodes:
                continue
            nodes[key] = GraphNode(
                key=key,
                kind="memory",
                format=m.format,
                vault_root=m.vault_root,
                title=m.title,
                memory=m,
            )
            by_id[key[1]].append(key)
            fresh.append(key)
        self.g.add_nodes_from(fresh)
        records_by_id = _record_index(result.records)
        edges = result.records.get("edges", [])
        if any(m.relations for m in memories) or edges:
            self.linked_vaults.add(root)

        for m in memories:
            for rel in m.relations:
                self._add_relation(m, rel)

        for e in edges:
            self._add_record_edge(vault, records_by_id, e)

        for p in result.ref_problems:
            self.ref_problems.append(p)
            self._ref_by_holder[(str(p.vault_root), p.id)].append(p)
        self._health = None

    def _add_relation(self, m: Memory, rel: Relation) -> None:
        root = str(m.vault_root)
        if rel.resolved is None or (root, rel.resolved) not in self.nodes:
            self.unresolved.append((m.key, rel))
            return
        other = (root, rel.resolved)
        decl = Declaration(m.key, rel.target, rel.direction, rel.strength, rel.context)
        # `incoming` means the link points at the memory that wrote it.
        if rel.direction == "incoming":
            source, target = other, m.key
        else:
            source, target = m.key, other
        self.add_link(
            source, target, type=rel.type, field=rel.field, format=m.format, declaration=decl
        )

    def _add_record_edge(
        self,
        vault: Vault,
        records_by_id: Mapping[str, tuple[str, Mapping[str, Any]]],
        e: Mapping[str, Any],
    ) -> None:
        root = str(vault.root)
        src_id = e.get("source")
        ref = e.get("target")
        if not isinstance(src_id, str) or not isinstance(ref, str):
            return
        resolved = e.get("resolved", ref)
        if e.get("issue") in (RefIssue.DANGLING.value, RefIssue.UNSAFE.value):
            # Flagged by the adapter: never looked up, let alone followed.
            resolved = None
        src = (root, src_id)
        if src not in self.nodes:
            self.add_node(_record_node(vault, src_id, records_by_id))
        holder_rel = Relation(target=ref, type=str(e.get("type", "")), field=str(e.get("field")))
        if not isinstance(resolved, str):
            self.unresolved.append((src, holder_rel))
            return
        dst = (root, resolved)
        if dst not in self.nodes:
            if resolved not in records_by_id:
                # Dangling or external: the adapter flags what must be flagged.
                self.unresolved.append((src, holder_rel))
                return
            self.add_node(_record_node(vault, resolved, records_by_id))
        strength = e.get("strength")
        context = e.get("context")
        decl = Declaration(
            src,
            ref,
            e.get("direction") if isinstance(e.get("direction"), str) else None,
            float(strength) if isinstance(strength, int | float) else None,
            context if isinstance(context, str) else None,
        )
        self.add_link(
            src,
            dst,
            type=str(e.get("type") or e.get("field") or "link"),
            field=str(e.get("field") or e.get("type") or "link"),
            format=vault.format,
            declaration=decl,
        )

    # -- lookups

    def node(self, key: NodeKey) -> GraphNode:
        return self.nodes[key]

    def __contains__(self, key: object) -> bool:
        return key in self.nodes

    def __len__(self) -> int:
        return len(self.nodes)

    def find(self, node_id: str, vault_root: Path | str | None = None) -> list[NodeKey]:
        """Keys of every node with this id (optionally only in one vault)."""
        keys = self._by_id.get(node_id, [])
        if vault_root is None:
            return list(keys)
        root = str(vault_root)
        return [k for k in keys if k[0] == root]

    def edges(self) -> Iterator[GraphEdge]:
        for _, _, data in self.g.edges(data=True):
            yield cast(GraphEdge, data["edge"])

    def out_edges(self, key: NodeKey) -> list[GraphEdge]:
        if key not in self.nodes:
            return []
        return [cast(GraphEdge, d["edge"]) for _, _, d in self.g.out_edges(key, data=True)]

    def in_edges(self, key: NodeKey) -> list[GraphEdge]:
        if key not in self.nodes:
            return []
        return [cast(GraphEdge, d["edge"]) for _, _, d in self.g.in_edges(key, data=True)]

    def backlinks(self, key: NodeKey) -> list[GraphEdge]:
        """Every link pointing at `key` (derived: no format has to write them)."""
        return self.in_edges(key)

    def neighbours(self, key: NodeKey) -> list[Neighbour]:
        """Every link of `key`, outgoing first, each with the node at its other end."""
        out = [Neighbour(e, e.target, True) for e in self.out_edges(key)]
        inc = [Neighbour(e, e.source, False) for e in self.in_edges(key)]
        return out + inc

    def ref_problems_of(self, key: NodeKey) -> list[ReferenceProblem]:
        """Flagged references written by `key`."""
        return list(self._ref_by_holder.get(key, []))

    # -- neighbourhood

    def neighbourhood(self, key: NodeKey, depth: int = 1, max_nodes: int = 300) -> Neighbourhood:
        """Nodes within `depth` (clamped to 1-3) links of `key`, both directions.

        Breadth-first, so nearer nodes always win when `max_nodes` cuts it.
        """
        if key not in self.nodes:
            raise KeyError(key)
        depth = max(MIN_DEPTH, min(MAX_DEPTH, depth))
        max_nodes = max(1, max_nodes)
        distance: dict[NodeKey, int] = {key: 0}
        frontier = [key]
        truncated = False
        for d in range(1, depth + 1):
            nxt: list[NodeKey] = []
            for u in frontier:
                for v in _sorted_keys(adjacent(self.g, u)):
                    if v in distance:
                        continue
                    if len(distance) >= max_nodes:
                        truncated = True
                        break
                    distance[v] = d
                    nxt.append(v)
                if truncated:
                    break
            frontier = nxt
            if truncated or not frontier:
                break
        nodes = {k: self.nodes[k] for k in distance}
        edges = [
            cast(GraphEdge, data["edge"])
            for u in distance
            for _, v, data in self.g.out_edges(u, data=True)
            if v in distance
        ]
        broken = [p for k in distance for p in self._ref_by_holder.get(k, [])]
        one_way = frozenset(e for e in edges if one_way_of(self, e) is not None)
        return Neighbourhood(key, depth, nodes, distance, edges, broken, truncated, one_way)

    # -- health (rules in the module docstring; the checks are in `health`)

    def health(self) -> GraphHealth:
        """Broken references, orphans, one-way relations and forbidden cycles."""
        if self._health is None:
            self._health = graph_health(self)
        return self._health

    def orphans(self) -> list[NodeKey]:
        """Memories with no resolved link in or out."""
        return orphans(self)

    def one_way_relations(self) -> list[OneWayRelation]:
        """Links a two-way format wrote on one end only."""
        return one_way_relations(self)

    def cycles(self) -> list[Cycle]:
        """Cycles through fields that must be acyclic (experience-records `parents`)."""
        return cycles(self)


def _sorted_keys(keys: Iterable[NodeKey]) -> list[NodeKey]:
    return sorted(keys)


def _record_index(
    records: Mapping[str, list[dict[str, Any]]],
) -> dict[str, tuple[str, Mapping[str, Any]]]:
    """id -> (record list name, record) for every non-edge record that has an id."""
    index: dict[str, tuple[str, Mapping[str, Any]]] = {}
    for name, recs in records.items():
        if name == "edges":
            continue
        for rec in recs:
            rid = rec.get("id") if isinstance(rec, Mapping) else None
            if isinstance(rid, str) and rid not in index:
                index[rid] = (name, rec)
    return index


def _record_node(
    vault: Vault, rid: str, records_by_id: Mapping[str, tuple[str, Mapping[str, Any]]]
) -> GraphNode:
    hit = records_by_id.get(rid)
    record: Mapping[str, Any] | None = None
    if hit is not None:
        name, record = hit
        kind = name[:-1] if name.endswith("s") else name
    else:
        # Not stored in any record list: name it by its id prefix (`view_...`).
        prefix = rid.split("_", 1)[0]
        kind = prefix if prefix.isalpha() and "_" in rid else "record"
    title = rid
    if record is not None:
        for k in ("title", "question", "lens", "claim", "name"):
            v = record.get(k)
            if isinstance(v, str) and v.strip():
                title = v.strip()
                break
    return GraphNode(
        key=(str(vault.root), rid),
        kind=kind,
        format=vault.format,
        vault_root=vault.root,
        title=title,
        record=record,
    )


def build_graph(source: Catalog | Iterable[Vault]) -> MemoryGraph:
    """The graph of every scanned vault in a catalog (or a list of vaults)."""
    vaults = source.vaults if isinstance(source, Catalog) else list(source)
    graph = MemoryGraph()
    # Nodes of every vault first, so relation order across vaults never matters.
    for v in vaults:
        graph.add_vault(v)
    return graph
