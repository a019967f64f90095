"""The graph as JSON records: `graph --json` and `graph --health --json`.

The CLI contract (DESIGN.md) fixes these fields: add freely, never rename.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from ..decay import decay_of
from ..records import _rel_vault, ref_problem_record
from .model import GraphEdge, GraphNode, Neighbourhood, NodeKey
from .relations import MemoryGraph


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
