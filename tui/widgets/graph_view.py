"""The relation graph drawn as text: a memory's neighbourhood, and the link health list.

`GraphView` draws the rows of `core.graph.layout_neighbourhood` (box
characters, edge types, strengths) line by line; only rows that show a node
take the cursor, so up/down walk from node to node.  `HealthList` lists
every broken reference, orphan, one-way relation and forbidden cycle of a
`MemoryGraph`.  Layout and text are decided in core; here they are only
coloured by their role, and every piece of user text stays literal.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message

from memlens.core.graph import (
    LayoutRow,
    MemoryGraph,
    Neighbourhood,
    NodeKey,
    layout_neighbourhood,
)

from ..safe_text import safe_rich
from .line_list import LineList, column_header

#: Rows a drawing may have: the view scrolls, so only absurd neighbourhoods are cut.
MAX_ROWS = 2000
#: Nodes shown per edge group before "… N more" (until the group is expanded).
PER_GROUP = 8
#: Further nodes listed under each node at depth 2-3.
PER_NODE = 4


class GraphView(LineList):
    """A neighbourhood as a tree of lines; enter re-centres on the node under the cursor."""

    DEFAULT_CSS = """
    GraphView > .graph-view--tree { color: $text-muted; }
    GraphView > .graph-view--arrow { color: $accent; }
    GraphView > .graph-view--type { color: $secondary; text-style: bold; }
    GraphView > .graph-view--title { }
    GraphView > .graph-view--strength { color: $success; }
    GraphView > .graph-view--meta { color: $text-muted; }
    GraphView > .graph-view--more { color: $text-muted; text-style: italic; }
    GraphView > .graph-view--broken { color: $error; }
    GraphView > .graph-view--centre { color: $accent; text-style: bold; }
    """

    COMPONENT_CLASSES = {
        "graph-view--tree",
        "graph-view--arrow",
        "graph-view--type",
        "graph-view--title",
        "graph-view--strength",
        "graph-view--meta",
        "graph-view--more",
        "graph-view--broken",
        "graph-view--centre",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select", "Centre", tooltip="Re-centre on this node", id="graph.centre"),
    ]

    empty_text = "no memory to show"

    class Highlighted(Message):
        """The cursor is on a node row."""

        def __init__(self, view: GraphView, row: LayoutRow) -> None:
            super().__init__()
            self.view = view
            #: The row under the cursor (`row.key` is its node).
            self.row = row

    class Recentre(Message):
        """Enter (or a double click) on a node: make it the centre."""

        def __init__(self, view: GraphView, key: NodeKey) -> None:
            super().__init__()
            self.view = view
            #: The node to centre on.
            self.key = key

    class ExpandGroup(Message):
        """A click on a "… N more" row: show that group whole."""

        def __init__(self, view: GraphView, group: str) -> None:
            super().__init__()
            self.view = view
            #: The group name (as in `LayoutRow.group`).
            self.group = group

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        #: The graph the neighbourhood was taken from.
        self.graph: MemoryGraph | None = None
        #: The neighbourhood drawn (None: nothing to show).
        self.neighbourhood: Neighbourhood | None = None
        #: Groups shown whole.
        self.expanded: frozenset[str] = frozenset()
        #: The drawn rows for the current width.
        self.rows: list[LayoutRow] = []
        self._laid_out_width = -1

    # ------------------------------------------------------------------ data
    def show(
        self,
        graph: MemoryGraph | None,
        neighbourhood: Neighbourhood | None,
        expanded: Collection[str] = (),
        *,
        cursor_on: NodeKey | None = None,
    ) -> None:
        """Draw a neighbourhood; the cursor goes to `cursor_on` if drawn, else the centre."""
        self.graph = graph
        self.neighbourhood = neighbourhood
        self.expanded = frozenset(expanded)
        self._relayout(cursor_on)

    def _relayout(self, cursor_on: NodeKey | None) -> None:
        width = max(20, self.line_width)
        if self.graph is None or self.neighbourhood is None:
            self.rows = []
        else:
            self.rows = layout_neighbourhood(
                self.graph,
                self.neighbourhood,
                width=width,
                per_group=PER_GROUP,
                per_node=PER_NODE,
                max_rows=MAX_ROWS,
                expanded=self.expanded,
            )
        self._laid_out_width = width
        position = 0
        if cursor_on is not None:
            position = next((i for i, r in enumerate(self.rows) if r.key == cursor_on), 0)
        self.rows_changed(keep_cursor=self._snap(position, 1))

    def current(self) -> LayoutRow | None:
        return self.at_cursor(self.rows)

    def selectable(self, index: int) -> bool:
        return 0 <= index < len(self.rows) and self.rows[index].key is not None

    def _snap(self, index: int, direction: int) -> int:
        """The nearest node row to `index`, looking in `direction` first."""
        if not self.rows:
            return 0
        index = max(0, min(index, len(self.rows) - 1))
        for step in (direction, -direction):
            i = index
            while 0 <= i < len(self.rows):
                if self.selectable(i):
                    return i
                i += step
        return index

    # ------------------------------------------------------------------ LineList
    def row_count(self) -> int:
        return len(self.rows)

    def _style(self, role: str) -> Style:
        return self.get_component_rich_style(f"graph-view--{role}", partial=True, default=Style())

    def render_header(self, width: int) -> Text:
        nb = self.neighbourhood
        if nb is None:
            return Text("")
        links = len(nb.edges)
        text = Text(
            f"depth {nb.depth} · {len(nb.nodes)} node{'s' if len(nb.nodes) != 1 else ''}"
            f" · {links} link{'s' if links != 1 else ''}"
        )
        if nb.truncated:
            text.append(" · cut", style=self._style("broken"))
        if nb.broken:
            text.append(f" · {len(nb.broken)} broken", style=self._style("broken"))
        return text

    def render_row(self, index: int, width: int) -> Text:
        text = Text()
        for seg in self.rows[index].segments:
            # Core already made user text visible; `safe_rich` makes sure again.
            piece = safe_rich(seg.text)
            piece.stylize(self._style(seg.role))
            text.append_text(piece)
        return text

    def on_highlight(self, index: int) -> None:
        if self.selectable(index):
            self.post_message(self.Highlighted(self, self.rows[index]))

    def on_select(self, index: int) -> None:
        row = self.rows[index] if 0 <= index < len(self.rows) else None
        if row is None:
            return
        if row.key is not None:
            self.post_message(self.Recentre(self, row.key))
        elif row.role == "more" and row.group is not None:
            self.post_message(self.ExpandGroup(self, row.group))

    # ------------------------------------------------------------------ node-to-node cursor
    def move_to(self, index: int) -> None:
        if not self.rows:
            return
        direction = 1 if index >= self.cursor else -1
        self.cursor = self._snap(index, direction)

    def action_cursor_down(self) -> None:
        i = self.cursor + 1
        while i < len(self.rows) and not self.selectable(i):
            i += 1
        if i < len(self.rows):
            self.cursor = i
        else:
            self._reveal_tail()

    def action_cursor_up(self) -> None:
        i = self.cursor - 1
        while i >= 0 and not self.selectable(i):
            i -= 1
        if i >= 0:
            self.cursor = i
        else:
            self.scroll_to(y=0, animate=False)

    def action_last(self) -> None:
        self.move_to(len(self.rows) - 1)
        self._reveal_tail()

    def _reveal_tail(self) -> None:
        # Rows after the last node ("… N more", broken references) must be
        # reachable by scrolling even though the cursor cannot stop on them.
        self.scroll_to(y=self.max_scroll_y, animate=False)

    def on_click(self, event: events.Click) -> None:
        # Replaces LineList's click: the cursor only lands on node rows, and a
        # click on "… N more" expands its group.
        event.prevent_default()
        offset = event.get_content_offset(self)
        if offset is None or offset.y == 0:
            return
        index = int(self.scroll_offset.y) + offset.y - 1
        if not 0 <= index < len(self.rows):
            return
        row = self.rows[index]
        if row.key is None:
            if row.role == "more" and row.group is not None:
                self.post_message(self.ExpandGroup(self, row.group))
            return
        if index == self.cursor or event.chain > 1:
            self.cursor = index
            self.on_select(index)
        else:
            self.cursor = index

    def on_resize(self, event: events.Resize) -> None:
        if self.neighbourhood is not None and max(20, self.line_width) != self._laid_out_width:
            current = self.current()
            self._relayout(current.key if current is not None else None)


# --------------------------------------------------------------------------- health


@dataclass(frozen=True, slots=True)
class HealthEntry:
    """One line of the health list: a broken link, orphan, one-way relation or cycle."""

    #: `reference`, `orphan`, `one_way` or `cycle`.
    kind: str
    #: The reason as the CLI names it (`dangling_reference`, `orphan`, ...).
    reason: str
    #: The node that holds the problem (enter jumps there).
    source: NodeKey
    #: What to say about it (user text: drawn literally).
    detail: str
    #: File of the source, relative to its vault, when known.
    path: str | None = None


def health_entries(graph: MemoryGraph) -> list[HealthEntry]:
    """Every problem of `graph.health()`, references first, each with its source node."""
    h = graph.health()

    def title(key: NodeKey) -> str:
        node = graph.nodes.get(key)
        return str(node.title or node.id) if node is not None else key[1]

    out: list[HealthEntry] = []
    for p in h.ref_problems:
        out.append(
            HealthEntry(
                "reference",
                p.reason.value,
                (str(p.vault_root), p.id),
                f"{p.field} → {p.ref}",
                p.path,
            )
        )
    for key in h.orphans:
        node = graph.nodes.get(key)
        out.append(
            HealthEntry("orphan", "orphan", key, "no link in or out", node.path if node else None)
        )
    for o in h.one_way:
        e = o.edge
        out.append(
            HealthEntry(
                "one_way",
                "one_way_relation",
                o.declared_on,
                f"{e.type} {title(e.source)} → {title(e.target)}; "
                f"no {o.expected_direction} declaration on {title(o.missing_on)}",
                graph.nodes[o.declared_on].path,
            )
        )
    for c in h.cycles:
        steps = " → ".join([title(c.example[0][0]), *(title(v) for _, v in c.example)])
        out.append(
            HealthEntry(
                "cycle",
                "cycle",
                c.nodes[0],
                f"{c.field}: {steps}",
                graph.nodes[c.nodes[0]].path,
            )
        )
    return out


_HEALTH_COLUMNS = (("problem", 22), ("vault", 16), ("source", 26))


class HealthList(LineList):
    """Every link problem; enter jumps to the memory that holds it."""

    DEFAULT_CSS = """
    HealthList > .health-list--reference { color: $error; }
    HealthList > .health-list--orphan { color: $warning; }
    HealthList > .health-list--one_way { color: $warning; }
    HealthList > .health-list--cycle { color: $error; }
    HealthList > .health-list--dim { color: $text-muted; }
    """

    COMPONENT_CLASSES = {
        "health-list--reference",
        "health-list--orphan",
        "health-list--one_way",
        "health-list--cycle",
        "health-list--dim",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "enter", "select", "Go to", tooltip="Go to the memory that holds it", id="health.go"
        ),
    ]

    empty_text = "no broken links, orphans, one-way relations or cycles"

    class Highlighted(Message):
        def __init__(self, table: HealthList, entry: HealthEntry) -> None:
            super().__init__()
            self.table = table
            self.entry = entry

    class Selected(Message):
        def __init__(self, table: HealthList, entry: HealthEntry) -> None:
            super().__init__()
            self.table = table
            self.entry = entry

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        #: The problems shown.
        self.entries: list[HealthEntry] = []
        #: Vault root -> display name.
        self.vault_names: dict[str, str] = {}
        #: Node key -> title, for the source column.
        self.titles: dict[NodeKey, str] = {}

    def set_entries(
        self,
        entries: list[HealthEntry],
        vault_names: dict[str, str],
        titles: dict[NodeKey, str],
    ) -> None:
        self.entries = entries
        self.vault_names = vault_names
        self.titles = titles
        self.rows_changed()

    def current(self) -> HealthEntry | None:
        return self.at_cursor(self.entries)

    def row_count(self) -> int:
        return len(self.entries)

    def render_header(self, width: int) -> Text:
        return column_header(_HEALTH_COLUMNS, "detail")

    def render_row(self, index: int, width: int) -> Text:
        e = self.entries[index]
        text = Text()
        values = (
            (e.reason, self._style(f"health-list--{e.kind}")),
            (self.vault_names.get(e.source[0], e.source[0]), self._style("health-list--dim")),
            (self.titles.get(e.source, e.source[1]), Style()),
        )
        for (value, style), (_, w) in zip(values, _HEALTH_COLUMNS, strict=True):
            cell = safe_rich(value)
            cell.stylize(style)
            cell.truncate(w, overflow="ellipsis", pad=True)
            text.append_text(cell)
            text.append(" ")
        text.append_text(safe_rich(e.detail))
        return text

    def on_highlight(self, index: int) -> None:
        self.post_message(self.Highlighted(self, self.entries[index]))

    def on_select(self, index: int) -> None:
        self.post_message(self.Selected(self, self.entries[index]))
