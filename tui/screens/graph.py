"""The graph pane: the links around one memory, walkable, and the health of every link.

The graph (`core.graph.build_graph`) is built in a thread worker once the
vaults are loaded (seconds at 100k memories) and rebuilt after a reload.  The
centre follows the memory selected in the memories pane each time the pane is
shown (a memory picked elsewhere, e.g. `l` on a search hit, wins once); with
no selection it starts at the first memory that has links.  Enter re-centres,
backspace goes back, + / - change the depth (1-3), `e` shows a cut group
whole, `h` switches to the list of broken links, orphans, one-way relations
and cycles, where enter jumps to the memory that holds the problem.
"""

from __future__ import annotations

import time
from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.css.query import NoMatches
from textual.message import Message
from textual.widgets import ContentSwitcher, Static
from textual.worker import Worker, WorkerState, get_current_worker

from memlens.core.decay import decay_of
from memlens.core.graph import (
    MAX_DEPTH,
    MIN_DEPTH,
    GraphEdge,
    MemoryGraph,
    NodeKey,
    build_graph,
)
from memlens.core.model import Memory
from memlens.core.scan.vault import Vault

from ..messages import OpenMemory
from ..safe_text import safe
from ..widgets.graph_view import GraphView, HealthEntry, HealthList, health_entries
from ..widgets.key_footer import KeyFooter
from ..widgets.memory_table import MemoryTable
from .base import MemlensScreen

#: Actions that only make sense in one of the two views (hidden in the other).
_GRAPH_ONLY = frozenset({"depth", "back", "expand", "expand_all"})
_HEALTH_ONLY = frozenset({"centre_source"})


class GraphScreen(MemlensScreen):
    """A memory's neighbourhood drawn with box characters, or the link health list."""

    CSS_PATH = "graph.tcss"

    BINDINGS = [
        Binding(
            "plus,equals_sign",
            "depth(1)",
            "Depth",
            key_display="+/-",
            tooltip="Follow one more link (- one less)",
            id="graph.deeper",
        ),
        Binding(
            "minus",
            "depth(-1)",
            "Depth −",
            show=False,
            tooltip="Follow one link less",
            id="graph.shallower",
        ),
        Binding(
            "backspace", "back", "Back", tooltip="Back to the previous centre", id="graph.back"
        ),
        Binding(
            "e",
            "expand",
            "Expand",
            tooltip="Show the group under the cursor whole",
            id="graph.expand",
        ),
        Binding(
            "E",
            "expand_all",
            "Expand all",
            show=False,
            tooltip="Show every group whole (again: cut them)",
            id="graph.expand_all",
        ),
        Binding(
            "o",
            "open_memory",
            "In memories",
            tooltip="Show the memory in the memories pane",
            id="graph.open",
        ),
        Binding(
            "c",
            "centre_source",
            "Show in graph",
            tooltip="Health list: centre the graph on the problem's memory",
            id="graph.centre_source",
        ),
        Binding(
            "h",
            "toggle_health",
            "Health",
            tooltip="Broken links, orphans, one-way relations and cycles",
            id="graph.health",
        ),
    ]

    class Built(Message):
        """The worker finished building the graph for one set of loaded vaults."""

        def __init__(self, graph: MemoryGraph, signature: tuple[int, ...], seconds: float) -> None:
            super().__init__()
            self.graph = graph
            self.signature = signature
            self.seconds = seconds

    def __init__(self) -> None:
        super().__init__()
        #: The graph of every loaded vault (None until built).
        self.graph: MemoryGraph | None = None
        #: The node drawn in the middle.
        self.centre: NodeKey | None = None
        #: Links followed from the centre (1-3).
        self.depth: int = MIN_DEPTH
        #: Earlier centres, for backspace.
        self.history: list[NodeKey] = []
        #: Groups shown whole around the current centre.
        self.expanded: set[str] = set()
        #: True while the health list is shown instead of the drawing.
        self.show_health = False
        #: Why the centre is what it is, when the user did not choose it.
        self.note: str = ""
        #: Seconds the last build took.
        self.build_seconds: float | None = None
        self._signature: tuple[int, ...] | None = None
        self._building: tuple[int, ...] | None = None
        #: The memories-pane selection last followed (only a change is followed again).
        self._synced: NodeKey | None = None
        #: A centre asked for from elsewhere (`request_centre`), applied once built.
        self._pending: NodeKey | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="graph-bar")
        with ContentSwitcher(initial="graph-view", id="graph-switcher"):
            yield GraphView(id="graph-view")
            yield HealthList(id="graph-health")
        yield Static(id="graph-detail")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(GraphView).loading = True
        self.watch(self.memlens, "catalog_version", self._catalog_changed, init=True)
        self.query_one(GraphView).focus()

    def on_screen_resume(self) -> None:
        self._sync_centre()

    # ------------------------------------------------------------------ building
    def _catalog_changed(self, _version: int) -> None:
        app = self.memlens
        if app.loading:
            self._update_bar()
            return
        signature = tuple(id(v) for v, _ in app.loaded)
        if signature in (self._signature, self._building):
            return
        self._building = signature
        self.query_one(GraphView).loading = True
        self._update_bar()
        self.build([v for v, _ in app.loaded], signature)

    def rebuild(self) -> None:
        """Build the graph again from the loaded vaults (after live changes)."""
        self._signature = None
        self._catalog_changed(self.memlens.catalog_version)

    # description: not the repr of the arguments (every memory, bodies read from files).
    @work(
        thread=True,
        exclusive=True,
        group="graph-build",
        exit_on_error=False,
        name="graph",
        description="build the graph",
    )
    def build(self, vaults: list[Vault], signature: tuple[int, ...]) -> None:
        """Build the graph and its health (orphans, cycles) off the UI thread."""
        worker = get_current_worker()
        started = time.perf_counter()
        graph = build_graph(vaults)
        if worker.is_cancelled:
            return
        graph.health()
        if worker.is_cancelled:
            return
        self.post_message(self.Built(graph, signature, time.perf_counter() - started))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # The base class reports the error; here the pane stops waiting for it.
        if event.state == WorkerState.ERROR and event.worker.group == "graph-build":
            self._building = None
            view = self.query_one(GraphView)
            view.loading = False
            view.empty_text = "the graph could not be built (ctrl+r reloads)"
            view.rows_changed()
            self._update_bar()

    @on(Built)
    def _built(self, event: Built) -> None:
        if event.signature != self._building:
            return  # a build for vaults that have since been reloaded
        self._building = None
        self._signature = event.signature
        self.graph = event.graph
        self.build_seconds = event.seconds
        self.query_one(GraphView).loading = False
        if self.centre is not None and self.centre not in event.graph:
            self.centre = None
            self.history = []
        self.history = [k for k in self.history if k in event.graph]
        self._fill_health()
        # A rebuild (reload) keeps the centre; the memories selection is only
        # followed when the user comes back to this pane.
        self._sync_centre(redraw=True, follow=self.centre is None)

    def _vault_names(self) -> dict[str, str]:
        return {str(v.root): v.name for v, _ in self.memlens.loaded}

    def _fill_health(self) -> None:
        graph = self.graph
        if graph is None:
            return
        entries = health_entries(graph)
        titles = {
            e.source: (graph.nodes[e.source].title or e.source[1])
            for e in entries
            if e.source in graph.nodes
        }
        self.query_one(HealthList).set_entries(entries, self._vault_names(), titles)

    # ------------------------------------------------------------------ choosing the centre
    def request_centre(self, key: NodeKey) -> None:
        """Centre on `key` (now, or as soon as the graph is built)."""
        self._pending = key
        if self.show_health:
            self._set_health(False)
        self._sync_centre()

    def _main_selection(self) -> NodeKey | None:
        main = self.memlens.main_screen()
        if main is None:
            return None
        try:
            row = main.query_one(MemoryTable).current_row()
        except NoMatches:
            return None
        if row is None or row.memory is None:
            return None
        return row.key

    def _sync_centre(self, redraw: bool = False, follow: bool = True) -> None:
        graph = self.graph
        if graph is None:
            self._update_bar()
            return
        pending, self._pending = self._pending, None
        if pending is not None:
            # The memories-pane selection as it is now has been overridden:
            # only a later change of it is followed.
            self._synced = self._main_selection()
            if pending in graph:
                self._centre_on(pending)
                return
            self.notify("That memory is not in the graph.", severity="warning")
        selected = self._main_selection() if follow else None
        if selected is not None and selected != self._synced and selected in graph:
            self._synced = selected
            self._centre_on(selected)
            return
        if self.centre is None:
            first = self._first_linked(graph)
            if first is not None:
                note = "no memory selected: showing the first memory with links"
                self._centre_on(first, remember=False, note=note)
                return
            self._redraw()
            return
        if redraw:
            self._redraw(cursor_on=self._cursor_key())

    @staticmethod
    def _first_linked(graph: MemoryGraph) -> NodeKey | None:
        first_memory: NodeKey | None = None
        for key, node in graph.nodes.items():
            if node.memory is None:
                continue
            if first_memory is None:
                first_memory = key
            if graph.neighbours(key):
                return key
        return first_memory

    def _centre_on(self, key: NodeKey, *, remember: bool = True, note: str = "") -> None:
        if remember and self.centre is not None and self.centre != key:
            self.history.append(self.centre)
        self.note = note
        if key != self.centre:
            self.expanded = set()
        self.centre = key
        self._redraw()

    def _cursor_key(self) -> NodeKey | None:
        row = self.query_one(GraphView).current()
        return row.key if row is not None else None

    def _redraw(self, cursor_on: NodeKey | None = None) -> None:
        view = self.query_one(GraphView)
        graph = self.graph
        if graph is None or self.centre is None:
            view.show(graph, None)
            view.empty_text = "no memories loaded" if graph is not None else "building the graph…"
            self._update_bar()
            self._show_detail(None, None)
            return
        nb = graph.neighbourhood(self.centre, self.depth)
        view.show(graph, nb, self.expanded, cursor_on=cursor_on)
        self._update_bar()

    # ------------------------------------------------------------------ top bar and detail
    def _update_bar(self) -> None:
        app = self.memlens
        parts: list[Content | str | tuple[str, str]] = []
        if self.show_health:
            parts.append(("Link health", "bold $accent"))
            parts.extend(self._health_summary())
        else:
            parts.append(("Graph", "bold $accent"))
            graph = self.graph
            if graph is not None and self.centre is not None and self.centre in graph:
                node = graph.node(self.centre)
                parts += ["  ", safe(node.title or node.id, "bold").truncate(50, ellipsis=True)]
                parts.append(f" · depth {self.depth} of {MAX_DEPTH}")
                if self.history:
                    parts.append(f" · {len(self.history)} back")
            if self.note:
                parts.append((f" · {self.note}", "$warning"))
        if app.loading:
            parts.append((" · loading vaults…", "$warning"))
        elif self._building is not None:
            parts.append((" · building the graph…", "$warning"))
        self.query_one("#graph-bar", Static).update(Content.assemble(*parts))

    def _health_summary(self) -> list[Content | str | tuple[str, str]]:
        graph = self.graph
        if graph is None:
            return []
        h = graph.health()
        counts: dict[str, int] = {}
        for p in h.ref_problems:
            counts[p.reason.value] = counts.get(p.reason.value, 0) + 1
        labels = (
            ("dangling_reference", "dangling"),
            ("unsafe_reference", "unsafe"),
            ("references_tombstoned", "tombstoned"),
        )
        parts: list[Content | str | tuple[str, str]] = ["  "]
        items = [f"{counts.get(k, 0)} {label}" for k, label in labels]
        items += [
            f"{len(h.orphans)} orphans",
            f"{len(h.one_way)} one-way",
            f"{len(h.cycles)} cycles",
        ]
        parts.append(" · ".join(items))
        return parts

    @on(GraphView.Highlighted)
    def _node_highlighted(self, event: GraphView.Highlighted) -> None:
        if event.row.key is not None:
            self._show_detail(event.row.key, event.row.edge)

    def _show_detail(self, key: NodeKey | None, edge: GraphEdge | None) -> None:
        detail = self.query_one("#graph-detail", Static)
        graph = self.graph
        if graph is None or key is None or key not in graph:
            detail.update(Content(""))
            return
        node = graph.node(key)
        names = self._vault_names()
        head: list[Content | str | tuple[str, str]] = [
            safe(node.title or node.id, "bold").truncate(70, ellipsis=True),
            "  ",
            safe(node.type_label, "$text-muted"),
            (" · ", "$text-muted"),
            safe(node.format, "$text-muted"),
            (" · ", "$text-muted"),
            safe(names.get(key[0], Path(key[0]).name), "$text-muted"),
        ]
        health = self._health_of(node.memory)
        if health:
            head += [(" · ", "$text-muted"), (health, "$text-muted")]
        lines = [Content.assemble(*head), Content.assemble(("id ", "$text-muted"), safe(node.id))]
        if edge is not None:
            lines.append(self._edge_line(graph, edge))
            if edge.context:
                lines.append(
                    Content.assemble(("context ", "$text-muted"), safe(edge.context, "italic"))
                )
        broken = graph.ref_problems_of(key)
        if broken:
            shown = ", ".join(f"{p.field} → {p.ref} ({p.reason.value})" for p in broken[:3])
            more = f" … {len(broken) - 3} more" if len(broken) > 3 else ""
            lines.append(
                Content.assemble((f"✗ {len(broken)} broken: ", "$error"), safe(shown), more)
            )
        detail.update(Content("\n").join(lines))

    def _edge_line(self, graph: MemoryGraph, edge: GraphEdge) -> Content:
        src, dst = graph.node(edge.source), graph.node(edge.target)
        parts: list[Content | str | tuple[str, str]] = [
            ("link ", "$text-muted"),
            safe(src.title or src.id).truncate(30, ellipsis=True),
            " ",
            safe(edge.type, "bold $secondary"),
            " → ",
            safe(dst.title or dst.id).truncate(30, ellipsis=True),
            (" · field ", "$text-muted"),
            safe(edge.field),
        ]
        if edge.strength is not None:
            parts += [(" · strength ", "$text-muted"), (f"{edge.strength:.2f}", "$success")]
        if len(edge.declarations) > 1:
            parts.append((" · written on both ends", "$text-muted"))
        graph_nb = self.query_one(GraphView).neighbourhood
        if graph_nb is not None and edge in graph_nb.one_way:
            parts.append((" · one-way", "$warning"))
        return Content.assemble(*parts)

    def _health_of(self, memory: Memory | None) -> str:
        if memory is None:
            return ""
        try:
            return str(decay_of(memory, self.memlens.as_of, explain=False).health.value)
        except Exception:  # a decay bug must not hide the node; the health is left out
            return ""

    @on(HealthList.Highlighted)
    def _health_highlighted(self, event: HealthList.Highlighted) -> None:
        e = event.entry
        names = self._vault_names()
        where = names.get(e.source[0], Path(e.source[0]).name)
        if e.path:
            where = f"{where}/{e.path}"
        self.query_one("#graph-detail", Static).update(
            Content("\n").join(
                [
                    Content.assemble((e.reason, "bold $error"), " in ", safe(where)),
                    Content.assemble(("id ", "$text-muted"), safe(e.source[1])),
                    safe(e.detail),
                    Content.styled(
                        "enter: go to the memory · c: centre the graph on it", "$text-muted"
                    ),
                ]
            )
        )

    # ------------------------------------------------------------------ graph keys
    @on(GraphView.Recentre)
    def _recentre(self, event: GraphView.Recentre) -> None:
        if event.key == self.centre:
            self.notify("Already the centre: o opens it in the memories pane.")
            return
        self._centre_on(event.key)

    @on(GraphView.ExpandGroup)
    def _expand_group(self, event: GraphView.ExpandGroup) -> None:
        self.expanded.add(event.group)
        self._redraw(cursor_on=self._cursor_key())

    def action_depth(self, delta: int) -> None:
        depth = max(MIN_DEPTH, min(MAX_DEPTH, self.depth + delta))
        if depth == self.depth:
            self.app.bell()
            return
        self.depth = depth
        self._redraw(cursor_on=self._cursor_key())

    def action_back(self) -> None:
        if not self.history:
            self.app.bell()
            return
        left = self.centre
        self.centre = self.history.pop()
        self.expanded = set()
        self.note = ""
        self._redraw(cursor_on=left)

    def action_expand(self) -> None:
        row = self.query_one(GraphView).current()
        if row is None:
            return
        if row.group is None:
            self.action_expand_all()
            return
        self.expanded ^= {row.group}
        self._redraw(cursor_on=row.key)

    def action_expand_all(self) -> None:
        view = self.query_one(GraphView)
        groups = {r.group for r in view.rows if r.group is not None}
        cut = any(r.role == "more" and r.group is not None for r in view.rows)
        self.expanded = set(groups) if cut else set()
        self._redraw(cursor_on=self._cursor_key())

    # ------------------------------------------------------------------ health keys
    def action_toggle_health(self) -> None:
        self._set_health(not self.show_health)

    def _set_health(self, on_: bool) -> None:
        self.show_health = on_
        switcher = self.query_one(ContentSwitcher)
        switcher.current = "graph-health" if on_ else "graph-view"
        if on_:
            health = self.query_one(HealthList)
            health.focus()
            entry = health.current()
            if entry is not None:
                health.rows_changed()  # redraw and re-announce the highlighted entry
            else:
                self.query_one("#graph-detail", Static).update(Content(""))
        else:
            view = self.query_one(GraphView)
            view.focus()
            row = view.current()
            self._show_detail(row.key if row else None, row.edge if row else None)
        self._update_bar()
        self.refresh_bindings()

    @on(HealthList.Selected)
    def _health_selected(self, event: HealthList.Selected) -> None:
        self._open_node(event.entry.source, fallback_centre=True)

    def action_centre_source(self) -> None:
        entry: HealthEntry | None = self.query_one(HealthList).current()
        if entry is None:
            return
        self._show_in_graph(entry.source)

    def _show_in_graph(self, key: NodeKey) -> None:
        if self.graph is None or key not in self.graph:
            self.notify("That record is not in the graph.", severity="warning")
            return
        self._set_health(False)
        self._centre_on(key)

    # ------------------------------------------------------------------ opening
    def current_memory(self) -> Memory | None:
        """The memory of the node under the cursor, as the list has it (y / Y)."""
        layout_row = self.query_one(GraphView).current()
        main = self.memlens.main_screen()
        if layout_row is None or layout_row.key is None or main is None:
            return None
        row = main.model.find(*layout_row.key)
        return row.memory if row is not None else None

    def action_open_memory(self) -> None:
        if self.show_health:
            entry = self.query_one(HealthList).current()
            if entry is not None:
                self._open_node(entry.source)
            return
        key = self._cursor_key()
        if key is not None:
            self._open_node(key)

    def _open_node(self, key: NodeKey, *, fallback_centre: bool = False) -> None:
        graph = self.graph
        node = graph.nodes.get(key) if graph is not None else None
        if node is not None and node.memory is not None:
            self.post_message(OpenMemory(node.vault_root, node.id))
            return
        if fallback_centre and node is not None:
            # Views and stances are graph records, not memories: show them here.
            self.notify(f"{node.kind} records are not memories: shown in the graph.")
            self._show_in_graph(key)
            return
        self.notify("Not a memory: nothing to open.", severity="warning")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in _GRAPH_ONLY:
            return not self.show_health
        if action in _HEALTH_ONLY:
            return self.show_health
        return True
