"""A neighbourhood drawn as a tree of text rows (the graph pane and `graph PATH ID`).

The centre first, then its links grouped by type and direction, each group
capped (strongest first, then `… N more`), nodes further out under the
depth-1 node that reached them first, and the centre's broken references.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass

from ..model import ReferenceProblem
from .model import GraphEdge, GraphNode, Neighbour, Neighbourhood, NodeKey
from .relations import MemoryGraph
from .segments import LayoutRow, Segment, fit_row, line_text


def _strength_text(edge: GraphEdge) -> str:
    return f"{edge.strength:.2f}" if edge.strength is not None else ""


def _node_segments(node: GraphNode, centre: bool = False) -> list[Segment]:
    segs = [Segment(line_text(node.title) or node.id, "centre" if centre else "title")]
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
            LayoutRow(fit_row([Segment(f"… {hidden} more rows", "more")], width), None, 1, "more")
        )
    return rows


Section = tuple[str, list[Neighbour] | None]


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
            fit_row([Segment("● ", "tree"), *_node_segments(graph.node(centre), True)], width),
            centre,
            0,
            "centre",
        )
    ]
    sections = _sections(nb)
    broken = [p for p in nb.broken if (str(p.vault_root), p.id) == centre]
    if broken:
        sections.append(("broken", None))
    # Place every depth-1 node before expanding any of them, so a node two
    # groups apart is shown at its own depth, not as someone's child.
    placed: set[NodeKey] = {centre}
    for _, items in sections:
        for n in items or []:
            placed.add(n.other)
    for si, (gname, items) in enumerate(sections):
        last_group = si == len(sections) - 1
        branch, stem = ("└─ ", "   ") if last_group else ("├─ ", "│  ")
        if items is None:
            shown = broken if "broken" in expanded else broken[:per_group]
            rows.extend(_broken_rows(broken, shown, branch, stem, width))
            continue
        header, arrow = _group_header(gname, items, branch, width)
        rows.append(header)
        items = sorted(items, key=lambda n: _rank(graph, n))
        shown_items = items if gname in expanded else items[:per_group]
        walk = _Walk(graph, nb, gname, placed, rows, width, per_node)
        for ii, n in enumerate(shown_items):
            end = ii == len(shown_items) - 1 and len(shown_items) == len(items)
            rows.append(_node_row(graph, nb, n, stem, end, arrow, 1, gname, width))
            if nb.depth > 1:
                walk.children(n.other, stem + ("   " if end else "│  "), 2)
        if len(shown_items) < len(items):
            rows.append(_more_row(stem, len(items) - len(shown_items), 2, gname, width))
    if len(sections) == 0:
        rows.append(LayoutRow((Segment("  (no links)", "meta"),), None, 1, "more"))
    if nb.truncated:
        cut = Segment(f"  … neighbourhood cut at {len(nb.nodes)} nodes", "more")
        rows.append(LayoutRow(fit_row([cut], width), None, 1, "more"))
    return rows


def _sections(nb: Neighbourhood) -> list[Section]:
    """The centre's links grouped by (type, field, direction), each group named."""
    groups: dict[tuple[str, str, bool], list[Neighbour]] = defaultdict(list)
    fields_of: dict[str, set[str]] = defaultdict(set)
    for n in _neighbours_in(nb, nb.centre):
        groups[(n.edge.type, n.edge.field, n.outgoing)].append(n)
        fields_of[n.edge.type].add(n.edge.field)
    ordered = sorted(groups.items(), key=lambda kv: (kv[0][0], not kv[0][2], kv[0][1]))
    # The field joins the label only when one type comes from several fields
    # (observation-v1 `cites` from `observations` and `posterior.observations_used`).
    return [
        (
            f"{t}{f' · {f}' if len(fields_of[t]) > 1 else ''} {'→' if out else '←'}",
            items,
        )
        for (t, f, out), items in ordered
    ]


def _group_header(
    gname: str, items: list[Neighbour], branch: str, width: int
) -> tuple[LayoutRow, str]:
    """A group's header row, and its arrow."""
    type_name, arrow = gname.rsplit(" ", 1)
    segs = [
        Segment(branch, "tree"),
        Segment(line_text(type_name), "type"),
        Segment(f" {arrow}", "arrow"),
        Segment(f" ({len(items)})", "meta"),
    ]
    return LayoutRow(fit_row(segs, width), None, 1, "group", gname), arrow


def _broken_rows(
    broken: list[ReferenceProblem],
    shown: list[ReferenceProblem],
    branch: str,
    stem: str,
    width: int,
) -> list[LayoutRow]:
    """The centre's flagged references: a header, the shown ones, then `… N more`."""
    header = [
        Segment(branch, "tree"),
        Segment("✗ broken references", "broken"),
        Segment(f" ({len(broken)})", "meta"),
    ]
    rows = [LayoutRow(fit_row(header, width), None, 1, "group", "broken")]
    for bi, p in enumerate(shown):
        end = bi == len(shown) - 1 and len(shown) == len(broken)
        segs = [
            Segment(stem + ("└─" if end else "├─"), "tree"),
            Segment("✗ ", "broken"),
            Segment(line_text(p.ref), "title"),
            Segment(f"  {p.reason.value} ({p.field})", "meta"),
        ]
        rows.append(LayoutRow(fit_row(segs, width), None, 2, "broken", "broken"))
    if len(shown) < len(broken):
        rows.append(_more_row(stem, len(broken) - len(shown), 2, "broken", width))
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
    with_type: bool = False,
) -> LayoutRow:
    segs = [Segment(stem + ("└─" if end else "├─"), "tree")]
    if with_type:
        segs.append(Segment(" " + line_text(n.edge.type), "type"))
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
    return LayoutRow(fit_row(segs, width), n.other, depth, "node", group, n.edge)


def _more_row(stem: str, hidden: int, depth: int, group: str | None, width: int) -> LayoutRow:
    return LayoutRow(
        fit_row([Segment(stem + "└─", "tree"), Segment(f" … {hidden} more", "more")], width),
        None,
        depth,
        "more",
        group,
    )


@dataclass(slots=True)
class _Walk:
    """Drawing the nodes further out under one depth-1 node (depth 2-3)."""

    graph: MemoryGraph
    nb: Neighbourhood
    #: The depth-1 group the rows belong to.
    group: str
    placed: set[NodeKey]
    rows: list[LayoutRow]
    width: int
    per_node: int

    def children(self, key: NodeKey, stem: str, depth: int) -> None:
        """Rows for the nodes one link further out from `key` that are not drawn yet."""
        nb, graph = self.nb, self.graph
        if depth > nb.depth:
            return
        want = nb.distance[key] + 1
        kids = [
            n
            for n in _neighbours_in(nb, key)
            if nb.distance.get(n.other) == want and n.other not in self.placed
        ]
        # A node reachable through two parents is drawn under the first only.
        seen: set[NodeKey] = set()
        unique: list[Neighbour] = []
        for n in sorted(kids, key=lambda n: (n.edge.type, not n.outgoing, _rank(graph, n))):
            if n.other in seen:
                continue
            seen.add(n.other)
            unique.append(n)
        self.placed.update(seen)
        shown = unique[: self.per_node]
        for i, n in enumerate(shown):
            end = i == len(shown) - 1 and len(shown) == len(unique)
            arrow = "→" if n.outgoing else "←"
            self.rows.append(
                _node_row(graph, nb, n, stem, end, arrow, depth, self.group, self.width, True)
            )
            self.children(n.other, stem + ("   " if end else "│  "), depth + 1)
        if len(shown) < len(unique):
            self.rows.append(
                _more_row(stem, len(unique) - len(shown), depth, self.group, self.width)
            )
