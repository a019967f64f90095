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

import unicodedata
from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, cast

import networkx as nx

from ..formats import FORMAT_INFOS, format_ids_where
from ..model import Memory, ReferenceProblem, RefIssue, Relation
from ..records import _rel_vault, ref_problem_record
from ..scan.vault import Catalog, Vault
from ..text.sanitize import visible

#: Node identity across vaults: (vault root as text, id).
NodeKey = tuple[str, str]

#: Formats whose links must be written on both ends (see module docstring).
TWO_WAY_FORMATS: frozenset[str] = format_ids_where(lambda i: i.two_way_relations)

#: Fields whose links must not form a cycle, per format.
ACYCLIC_FIELDS: Mapping[str, frozenset[str]] = {
    i.id: i.acyclic_fields for i in FORMAT_INFOS if i.acyclic_fields
}

#: Depth limits of `neighbourhood` (the app shows 1-3).
MIN_DEPTH = 1
MAX_DEPTH = 3


# --------------------------------------------------------------------------- model


@dataclass(slots=True, eq=False)
class GraphNode:
    """One node: a memory, or a non-memory record (view, stance, ...)."""

    key: NodeKey
    #: `memory`, or the record kind (`view`, `stance`, `record`).
    kind: str
    format: str
    vault_root: Path
    title: str
    memory: Memory | None = None
    #: The raw record for non-memory nodes (as the adapter stored it).
    record: Mapping[str, Any] | None = None

    @property
    def id(self) -> str:
        return self.key[1]

    @property
    def is_memory(self) -> bool:
        return self.memory is not None

    @property
    def type_label(self) -> str:
        """The format's type for memories (solution, occurrence, ...), else the record kind."""
        return self.memory.kind if self.memory is not None else self.kind

    @property
    def path(self) -> str | None:
        return self.memory.path if self.memory is not None else None


@dataclass(frozen=True, slots=True)
class Declaration:
    """Where and how one end of a link was written."""

    #: The node whose file/record holds this declaration.
    holder: NodeKey
    #: The target exactly as written there.
    ref: str
    #: The declared form (`outgoing`/`incoming` in cognitive-memory), or None.
    direction: str | None
    strength: float | None = None
    context: str | None = None


@dataclass(frozen=True, slots=True)
class GraphEdge:
    """One link, in its true direction (source -> target)."""

    source: NodeKey
    target: NodeKey
    type: str
    field: str
    format: str
    declarations: tuple[Declaration, ...]

    def _preferred(self) -> Declaration:
        # The source's own declaration speaks for the link when both ends wrote it.
        for d in self.declarations:
            if d.holder == self.source:
                return d
        return self.declarations[0]

    @property
    def strength(self) -> float | None:
        pref = self._preferred()
        if pref.strength is not None:
            return pref.strength
        return next((d.strength for d in self.declarations if d.strength is not None), None)

    @property
    def context(self) -> str | None:
        pref = self._preferred()
        if pref.context is not None:
            return pref.context
        return next((d.context for d in self.declarations if d.context is not None), None)

    @property
    def declared_by(self) -> tuple[NodeKey, ...]:
        return tuple(d.holder for d in self.declarations)

    @property
    def direction(self) -> str | None:
        """The declared form: the single form written, `both` if written on both ends."""
        forms = {d.direction for d in self.declarations if d.direction is not None}
        if not forms:
            return None
        if len(forms) > 1:
            return "both"
        return next(iter(forms))

    @property
    def declared_at_source(self) -> bool:
        return any(d.holder == self.source and _is_outgoing(d) for d in self.declarations)

    @property
    def declared_at_target(self) -> bool:
        return any(d.holder == self.target and not _is_outgoing(d) for d in self.declarations)


def _is_outgoing(d: Declaration) -> bool:
    return d.direction != "incoming"


@dataclass(frozen=True, slots=True)
class Neighbour:
    """One link seen from one of its ends."""

    edge: GraphEdge
    #: The node at the other end.
    other: NodeKey
    #: True if the link points away from the node asked about.
    outgoing: bool


@dataclass(frozen=True, slots=True)
class OneWayRelation:
    """A link a two-way format wrote on one end only."""

    edge: GraphEdge
    #: The end that wrote it.
    declared_on: NodeKey
    #: The end that should also write it.
    missing_on: NodeKey
    #: The form expected on `missing_on` (`incoming` or `outgoing`).
    expected_direction: str


@dataclass(frozen=True, slots=True)
class Cycle:
    """Nodes linked in a cycle through a field that must be acyclic."""

    format: str
    field: str
    #: Every node of the strongly connected component, sorted.
    nodes: tuple[NodeKey, ...]
    #: One concrete cycle through them, as (source, target) steps.
    example: tuple[tuple[NodeKey, NodeKey], ...]


@dataclass(slots=True)
class GraphHealth:
    """Everything wrong with the links of a catalog."""

    ref_problems: list[ReferenceProblem] = field(default_factory=list)
    orphans: list[NodeKey] = field(default_factory=list)
    one_way: list[OneWayRelation] = field(default_factory=list)
    cycles: list[Cycle] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.ref_problems or self.orphans or self.one_way or self.cycles)

    @property
    def count(self) -> int:
        return len(self.ref_problems) + len(self.orphans) + len(self.one_way) + len(self.cycles)


@dataclass(slots=True)
class Neighbourhood:
    """The nodes within `depth` links of `centre` (either direction) and the links among them."""

    centre: NodeKey
    depth: int
    nodes: dict[NodeKey, GraphNode]
    #: Links between the centre and each node (0 for the centre).
    distance: dict[NodeKey, int]
    #: Every edge whose two ends are both in `nodes`.
    edges: list[GraphEdge]
    #: Flagged references held by nodes in the neighbourhood.
    broken: list[ReferenceProblem]
    #: True if `max_nodes` cut the walk short.
    truncated: bool = False
    #: One-way relations among `edges` (for marking them in a drawing).
    one_way: frozenset[GraphEdge] = frozenset()


# --------------------------------------------------------------------------- graph


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
        self._linked_vaults: set[str] = set()
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
            self._linked_vaults.add(root)

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
                for v in _sorted_keys(_adjacent(self.g, u)):
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
        one_way = frozenset(e for e in edges if self._one_way(e) is not None)
        return Neighbourhood(key, depth, nodes, distance, edges, broken, truncated, one_way)

    # -- health

    def health(self) -> GraphHealth:
        """Broken references, orphans, one-way relations and forbidden cycles."""
        if self._health is None:
            self._health = GraphHealth(
                ref_problems=list(self.ref_problems),
                orphans=self.orphans(),
                one_way=self.one_way_relations(),
                cycles=self.cycles(),
            )
        return self._health

    def orphans(self) -> list[NodeKey]:
        """Memories with no resolved link in or out (rules in the module docstring)."""
        found: list[NodeKey] = []
        for key, node in self.nodes.items():
            if node.memory is None or node.memory.tombstoned:
                continue
            if key[0] not in self._linked_vaults:
                continue
            if any(v != key for v in _adjacent(self.g, key)):
                continue
            found.append(key)
        return sorted(found)

    def one_way_relations(self) -> list[OneWayRelation]:
        """Links a two-way format wrote on one end only."""
        found = [o for o in map(self._one_way, self.edges()) if o is not None]
        found.sort(key=lambda o: (o.declared_on, o.edge.type, o.missing_on))
        return found

    def _one_way(self, e: GraphEdge) -> OneWayRelation | None:
        if e.format not in TWO_WAY_FORMATS:
            return None
        if not (self.nodes[e.source].is_memory and self.nodes[e.target].is_memory):
            return None
        at_src, at_dst = e.declared_at_source, e.declared_at_target
        if at_src and not at_dst:
            return OneWayRelation(e, e.source, e.target, "incoming")
        if at_dst and not at_src:
            return OneWayRelation(e, e.target, e.source, "outgoing")
        return None

    def cycles(self) -> list[Cycle]:
        """Cycles through fields that must be acyclic (experience-records `parents`)."""
        found: list[Cycle] = []
        groups: dict[tuple[str, str], list[GraphEdge]] = defaultdict(list)
        for e in self.edges():
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


def _adjacent(g: Any, key: NodeKey) -> set[NodeKey]:
    return set(cast(Iterable[NodeKey], g.successors(key))) | set(
        cast(Iterable[NodeKey], g.predecessors(key))
    )


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


# --------------------------------------------------------------------------- JSON records


def node_record(
    graph: MemoryGraph,
    key: NodeKey,
    base: Path,
    as_of: date | None = None,
    distance: int | None = None,
) -> dict[str, Any]:
    """One node of `graph --json`: id, title, format, vault, kind, health, ..."""
    node = graph.node(key)
    rec: dict[str, Any] = {
        "id": node.id,
        "title": node.title,
        "format": node.format,
        "vault": _rel_vault(node.vault_root, base),
        "kind": node.type_label,
        "node": node.kind,
        "path": node.path,
        "health": _health_of(node, as_of),
    }
    m = node.memory
    if m is not None and m.line is not None:
        rec["line"] = m.line
    if m is not None and m.index is not None:
        rec["index"] = m.index
    if distance is not None:
        rec["distance"] = distance
    rec["ref_problems"] = len(graph.ref_problems_of(key))
    return rec


def _health_of(node: GraphNode, as_of: date | None) -> str | None:
    if node.memory is None or as_of is None:
        return None
    from ..decay import decay_of

    try:
        return decay_of(node.memory, as_of, explain=False).health.value
    except Exception:  # a decay bug must not hide the graph; the memory shows without health
        return None


def edge_record(edge: GraphEdge, base: Path, one_way: bool = False) -> dict[str, Any]:
    """One edge of `graph --json`."""
    return {
        "source": edge.source[1],
        "target": edge.target[1],
        "type": edge.type,
        "field": edge.field,
        "format": edge.format,
        "source_vault": _rel_vault(Path(edge.source[0]), base),
        "target_vault": _rel_vault(Path(edge.target[0]), base),
        "strength": edge.strength,
        "context": edge.context,
        "direction": edge.direction,
        "declared_by": [k[1] for k in edge.declared_by],
        "one_way": one_way,
    }


def neighbourhood_json(
    graph: MemoryGraph, nb: Neighbourhood, base: Path, as_of: date | None = None
) -> dict[str, Any]:
    """`graph PATH ID --json`: `{centre, depth, nodes, edges, broken, truncated}`."""
    order = sorted(nb.nodes, key=lambda k: (nb.distance[k], k))
    return {
        "centre": nb.centre[1],
        "depth": nb.depth,
        "nodes": [node_record(graph, k, base, as_of, nb.distance[k]) for k in order],
        "edges": [
            edge_record(e, base, e in nb.one_way)
            for e in sorted(nb.edges, key=lambda e: (e.source, e.target, e.type, e.field))
        ],
        "broken": [ref_problem_record(p, base) for p in nb.broken],
        "truncated": nb.truncated,
    }


def _where(node: GraphNode, base: Path) -> dict[str, Any]:
    """Where a node is: vault, format, path and line/index, as the other records say it."""
    rec: dict[str, Any] = {
        "vault": _rel_vault(node.vault_root, base),
        "format": node.format,
        "path": node.path,
    }
    m = node.memory
    if m is not None and m.line is not None:
        rec["line"] = m.line
    if m is not None and m.index is not None:
        rec["index"] = m.index
    rec["id"] = node.id
    return rec


def health_records(graph: MemoryGraph, base: Path) -> list[dict[str, Any]]:
    """`graph PATH --health --json`: a record per reference problem, orphan, one-way link, cycle.

    Reference problems are `ref_problem_record`s (kind `reference`); the rest
    have kind and reason `orphan`, `one_way` / `one_way_relation` and `cycle`.
    """
    h = graph.health()
    out: list[dict[str, Any]] = [ref_problem_record(p, base) for p in h.ref_problems]
    for key in h.orphans:
        node = graph.node(key)
        out.append(
            {**_where(node, base), "title": node.title, "reason": "orphan", "kind": "orphan"}
        )
    for o in h.one_way:
        node = graph.node(o.declared_on)
        decl = next(d for d in o.edge.declarations if d.holder == o.declared_on)
        out.append(
            {
                **_where(node, base),
                "reason": "one_way_relation",
                "kind": "one_way",
                "field": o.edge.field,
                "type": o.edge.type,
                "ref": decl.ref,
                "direction": decl.direction,
                "source": o.edge.source[1],
                "target": o.edge.target[1],
                "missing_on": o.missing_on[1],
                "expected_direction": o.expected_direction,
            }
        )
    for c in h.cycles:
        out.append(
            {
                **_where(graph.node(c.nodes[0]), base),
                "format": c.format,
                "reason": "cycle",
                "kind": "cycle",
                "field": c.field,
                "ids": [k[1] for k in c.nodes],
                "cycle": [[u[1], v[1]] for u, v in c.example],
            }
        )
    return out


# --------------------------------------------------------------------------- text layout


@dataclass(frozen=True, slots=True)
class Segment:
    """A run of text with a role the front end can style.

    Roles: `tree` (box characters), `arrow`, `type` (edge type), `title`,
    `strength`, `meta` (kind, counts, markers), `more`, `broken`, `centre`.
    """

    text: str
    role: str


@dataclass(frozen=True, slots=True)
class LayoutRow:
    """One drawn line of a neighbourhood."""

    segments: tuple[Segment, ...]
    #: The node this row shows (selectable), or None for headers and "… more" rows.
    key: NodeKey | None
    #: 0 the centre, 1 a group header or neighbour, 2+ further out.
    depth: int
    #: `centre`, `group`, `node`, `more`, `broken`.
    role: str
    #: The depth-1 group this row belongs to (pass it in `expanded` to show it whole).
    group: str | None = None
    #: The link that led to this node (for showing its context).
    edge: GraphEdge | None = None

    @property
    def text(self) -> str:
        return "".join(s.text for s in self.segments)


def cell_width(text: str) -> int:
    """Terminal cells `text` takes: wide East Asian characters 2, combining marks 0."""
    total = 0
    for ch in text:
        if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
            continue
        total += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return total


def _line(text: str) -> str:
    """One line of user text, control and bidi characters made visible (ESC -> ␛)."""
    return visible(text, keep_newlines=False).replace("\t", " ")


def truncate_cells(text: str, width: int) -> str:
    """`text` cut to `width` cells, ending in `…` when cut."""
    if width <= 0:
        return ""
    if cell_width(text) <= width:
        return text
    out: list[str] = []
    used = 0
    for ch in text:
        w = cell_width(ch)
        if used + w > width - 1:
            break
        out.append(ch)
        used += w
    return "".join(out) + "…"


def _fit(segments: list[Segment], width: int) -> tuple[Segment, ...]:
    """Shrink a row to `width` cells: the title gives way first, then everything from the end."""
    total = sum(cell_width(s.text) for s in segments)
    if total <= width:
        return tuple(segments)
    segs = list(segments)
    for role in ("title", "meta", "type"):
        for i, s in enumerate(segs):
            if total <= width:
                break
            if s.role != role:
                continue
            w = cell_width(s.text)
            keep = max(2, w - (total - width))
            new = truncate_cells(s.text, keep)
            total += cell_width(new) - w
            segs[i] = Segment(new, s.role)
    while total > width and segs:
        s = segs.pop()
        w = cell_width(s.text)
        total -= w
        if total < width:
            new = truncate_cells(s.text, width - total)
            if new:
                segs.append(Segment(new, s.role))
                total += cell_width(new)
    return tuple(segs)


def _strength_text(edge: GraphEdge) -> str:
    return f"{edge.strength:.2f}" if edge.strength is not None else ""


def _node_segments(node: GraphNode, centre: bool = False) -> list[Segment]:
    segs = [Segment(_line(node.title) or node.id, "centre" if centre else "title")]
    if centre or not node.is_memory:
        segs.append(Segment(f"  [{node.type_label}]", "meta"))
    return segs


def layout_neighbourhood(
    graph: MemoryGraph,
    nb: Neighbourhood,
    *,
    width: int = 80,
    per_group: int = 8,
    per_node: int = 4,
    max_rows: int = 60,
    expanded: Collection[str] = (),
) -> list[LayoutRow]:
    """Draw a neighbourhood as a tree of text rows with box characters.

    The centre comes first; its links are grouped by edge type and direction
    (`SOLVES →` for links leaving it, `SOLVES ←` for links arriving; the
    field is added, `cites · observations →`, when one type comes from
    several fields), each
    group showing at most `per_group` nodes (strongest first) then `… N more`
    (groups named in `expanded` are shown whole).  At depth 2-3 each node
    lists at most `per_node` further nodes.  Flagged references of the centre
    follow as a `broken` group.  No row is wider than `width` cells and at
    most `max_rows` rows are returned: when the drawing is taller, groups
    and child lists shrink evenly first; only then is the tail cut, the last
    row saying how many rows were left out.
    """
    width = max(20, width)
    max_rows = max(3, max_rows)
    rows = _draw(graph, nb, width, max(1, per_group), max(1, per_node), expanded)
    pg, pn = max(1, per_group), max(1, per_node)
    while len(rows) > max_rows and (pg > 1 or pn > 1):
        pg, pn = max(1, pg - 1), max(1, pn - 1)
        rows = _draw(graph, nb, width, pg, pn, expanded)
    if len(rows) > max_rows:
        hidden = len(rows) - (max_rows - 1)
        rows = rows[: max_rows - 1]
        rows.append(
            LayoutRow(_fit([Segment(f"… {hidden} more rows", "more")], width), None, 1, "more")
        )
    return rows


def _draw(
    graph: MemoryGraph,
    nb: Neighbourhood,
    width: int,
    per_group: int,
    per_node: int,
    expanded: Collection[str],
) -> list[LayoutRow]:
    centre = nb.centre
    rows: list[LayoutRow] = [
        LayoutRow(
            _fit([Segment("● ", "tree"), *_node_segments(graph.node(centre), True)], width),
            centre,
            0,
            "centre",
        )
    ]
    placed: set[NodeKey] = {centre}

    groups: dict[tuple[str, str, bool], list[Neighbour]] = defaultdict(list)
    fields_of: dict[str, set[str]] = defaultdict(set)
    for n in _neighbours_in(nb, centre):
        groups[(n.edge.type, n.edge.field, n.outgoing)].append(n)
        fields_of[n.edge.type].add(n.edge.field)
    ordered = sorted(groups.items(), key=lambda kv: (kv[0][0], not kv[0][2], kv[0][1]))
    broken = [p for p in nb.broken if (str(p.vault_root), p.id) == centre]
    # The field joins the label only when one type comes from several fields
    # (observation-v1 `cites` from `observations` and `posterior.observations_used`).
    sections: list[tuple[str, list[Neighbour] | None]] = [
        (
            f"{t}{f' · {f}' if len(fields_of[t]) > 1 else ''} {'→' if out else '←'}",
            items,
        )
        for (t, f, out), items in ordered
    ]
    if broken:
        sections.append(("broken", None))

    # Place every depth-1 node before expanding any of them, so a node two
    # groups apart is shown at its own depth, not as someone's child.
    for _, items in sections:
        for n in items or []:
            placed.add(n.other)

    for si, (gname, items) in enumerate(sections):
        last_group = si == len(sections) - 1
        branch, stem = ("└─ ", "   ") if last_group else ("├─ ", "│  ")
        if items is None:
            rows.append(
                LayoutRow(
                    _fit(
                        [
                            Segment(branch, "tree"),
                            Segment("✗ broken references", "broken"),
                            Segment(f" ({len(broken)})", "meta"),
                        ],
                        width,
                    ),
                    None,
                    1,
                    "group",
                    "broken",
                )
            )
            shown_b = broken if "broken" in expanded else broken[:per_group]
            for bi, p in enumerate(shown_b):
                end = bi == len(shown_b) - 1 and len(shown_b) == len(broken)
                rows.append(
                    LayoutRow(
                        _fit(
                            [
                                Segment(stem + ("└─" if end else "├─"), "tree"),
                                Segment("✗ ", "broken"),
                                Segment(_line(p.ref), "title"),
                                Segment(f"  {p.reason.value} ({p.field})", "meta"),
                            ],
                            width,
                        ),
                        None,
                        2,
                        "broken",
                        "broken",
                    )
                )
            if len(shown_b) < len(broken):
                rows.append(_more_row(stem, len(broken) - len(shown_b), 2, "broken", width))
            continue
        type_name, arrow = gname.rsplit(" ", 1)
        rows.append(
            LayoutRow(
                _fit(
                    [
                        Segment(branch, "tree"),
                        Segment(_line(type_name), "type"),
                        Segment(f" {arrow}", "arrow"),
                        Segment(f" ({len(items)})", "meta"),
                    ],
                    width,
                ),
                None,
                1,
                "group",
                gname,
            )
        )
        items = sorted(items, key=lambda n: _rank(graph, n))
        shown = items if gname in expanded else items[:per_group]
        for ii, n in enumerate(shown):
            end = ii == len(shown) - 1 and len(shown) == len(items)
            rows.append(_node_row(graph, nb, n, stem, end, arrow, 1, gname, width, with_type=False))
            if nb.depth > 1:
                _children(
                    graph,
                    nb,
                    n.other,
                    stem + ("   " if end else "│  "),
                    2,
                    gname,
                    placed,
                    rows,
                    width,
                    per_node,
                )
        if len(shown) < len(items):
            rows.append(_more_row(stem, len(items) - len(shown), 2, gname, width))

    if len(sections) == 0:
        rows.append(LayoutRow((Segment("  (no links)", "meta"),), None, 1, "more"))
    if nb.truncated:
        rows.append(
            LayoutRow(
                _fit([Segment(f"  … neighbourhood cut at {len(nb.nodes)} nodes", "more")], width),
                None,
                1,
                "more",
            )
        )
    return rows


def _neighbours_in(nb: Neighbourhood, key: NodeKey) -> list[Neighbour]:
    out: list[Neighbour] = []
    for e in nb.edges:
        if e.source == key and e.target != key:
            out.append(Neighbour(e, e.target, True))
        elif e.target == key and e.source != key:
            out.append(Neighbour(e, e.source, False))
    return out


def _rank(graph: MemoryGraph, n: Neighbour) -> tuple[float, str, NodeKey]:
    s = n.edge.strength
    return (-(s if s is not None else -1.0), graph.node(n.other).title.casefold(), n.other)


def _node_row(
    graph: MemoryGraph,
    nb: Neighbourhood,
    n: Neighbour,
    stem: str,
    end: bool,
    arrow: str,
    depth: int,
    group: str,
    width: int,
    *,
    with_type: bool,
) -> LayoutRow:
    segs = [Segment(stem + ("└─" if end else "├─"), "tree")]
    if with_type:
        segs.append(Segment(" " + _line(n.edge.type), "type"))
        segs.append(Segment(f" {arrow} ", "arrow"))
    else:
        segs.append(Segment(f"{arrow} ", "arrow"))
    segs.extend(_node_segments(graph.node(n.other)))
    st = _strength_text(n.edge)
    if st:
        segs.append(Segment(f"  {st}", "strength"))
    marks: list[str] = []
    if n.edge in nb.one_way:
        marks.append("one-way")
    nbroken = len(graph.ref_problems_of(n.other))
    if nbroken:
        marks.append(f"✗{nbroken}")
    if marks:
        segs.append(Segment("  " + " ".join(marks), "meta"))
    return LayoutRow(_fit(segs, width), n.other, depth, "node", group, n.edge)


def _more_row(stem: str, hidden: int, depth: int, group: str | None, width: int) -> LayoutRow:
    return LayoutRow(
        _fit([Segment(stem + "└─", "tree"), Segment(f" … {hidden} more", "more")], width),
        None,
        depth,
        "more",
        group,
    )


def _children(
    graph: MemoryGraph,
    nb: Neighbourhood,
    key: NodeKey,
    stem: str,
    depth: int,
    group: str,
    placed: set[NodeKey],
    rows: list[LayoutRow],
    width: int,
    per_node: int,
) -> None:
    """Rows for the nodes one link further out from `key` that are not drawn yet."""
    if depth > nb.depth:
        return
    want = nb.distance[key] + 1
    kids = [
        n
        for n in _neighbours_in(nb, key)
        if nb.distance.get(n.other) == want and n.other not in placed
    ]
    # A node reachable through two parents is drawn under the first only.
    seen: set[NodeKey] = set()
    unique: list[Neighbour] = []
    for n in sorted(kids, key=lambda n: (n.edge.type, not n.outgoing, _rank(graph, n))):
        if n.other in seen:
            continue
        seen.add(n.other)
        unique.append(n)
    placed.update(seen)
    shown = unique[:per_node]
    for i, n in enumerate(shown):
        end = i == len(shown) - 1 and len(shown) == len(unique)
        rows.append(
            _node_row(
                graph,
                nb,
                n,
                stem,
                end,
                "→" if n.outgoing else "←",
                depth,
                group,
                width,
                with_type=True,
            )
        )
        _children(
            graph,
            nb,
            n.other,
            stem + ("   " if end else "│  "),
            depth + 1,
            group,
            placed,
            rows,
            width,
            per_node,
        )
    if len(shown) < len(unique):
        rows.append(_more_row(stem, len(unique) - len(shown), depth, group, width))
