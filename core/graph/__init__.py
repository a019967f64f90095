"""The relation graph of every vault: links both ways, neighbourhoods, health, drawings.

Map of the package:

- `model`: nodes, links (`GraphEdge` with one `Declaration` per end that
  wrote it), `Neighbourhood`, `GraphHealth` and the per-format rules
  (two-way formats, acyclic fields).
- `relations`: `MemoryGraph` and `build_graph` (building from scanned
  vaults, lookups, neighbourhoods); its docstring holds the decisions.
- `health`: orphans, one-way relations, forbidden cycles.
- `json_records`: the `graph --json` and `graph --health --json` records.
- `segments`: styled text runs, rows and cell widths; `layout`: a
  neighbourhood drawn as a tree of rows.

The names front ends use are re-exported here.
"""

from .health import graph_health
from .json_records import edge_record, health_records, neighbourhood_json, node_record
from .layout import layout_neighbourhood
from .model import (
    ACYCLIC_FIELDS,
    MAX_DEPTH,
    MIN_DEPTH,
    TWO_WAY_FORMATS,
    Cycle,
    Declaration,
    GraphEdge,
    GraphHealth,
    GraphNode,
    Neighbour,
    Neighbourhood,
    NodeKey,
    OneWayRelation,
)
from .relations import MemoryGraph, build_graph
from .segments import LayoutRow, Segment, cell_width, truncate_cells

__all__ = [
    "ACYCLIC_FIELDS",
    "MAX_DEPTH",
    "MIN_DEPTH",
    "TWO_WAY_FORMATS",
    "Cycle",
    "Declaration",
    "GraphEdge",
    "GraphHealth",
    "GraphNode",
    "LayoutRow",
    "MemoryGraph",
    "Neighbour",
    "Neighbourhood",
    "NodeKey",
    "OneWayRelation",
    "Segment",
    "build_graph",
    "cell_width",
    "edge_record",
    "graph_health",
    "health_records",
    "layout_neighbourhood",
    "neighbourhood_json",
    "node_record",
    "truncate_cells",
]
