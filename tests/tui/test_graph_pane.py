"""The graph pane (key 5): every key on the fixtures at 2026-11-22, a 50-neighbour
memory in a generated vault, literal rendering of injected text, and snapshots.

Expected drawings come from `core.graph` itself (the layout is tested in
tests/core); these tests check the pane walks it: which node is the centre,
where the cursor may stop, what each key does.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Static

from memlens.core import Memory, open_catalog
from memlens.core.graph import MemoryGraph, NodeKey, build_graph, cell_width
from memlens.tui.app import MemlensApp
from memlens.tui.screens.graph import GraphScreen
from memlens.tui.screens.main import MainScreen
from memlens.tui.screens.search import SearchScreen
from memlens.tui.widgets.graph_view import GraphView, HealthList
from memlens.tui.widgets.memory_table import MemoryTable

from .conftest import SIZE, AppFactory, settle
from .test_injection import assert_inert
from .test_search_pane import make_cognitive_vault

#: A cognitive-memory configuration with strengths on its three links.
CADDY_ID = "9b4f17ec-2d60-4a8b-b3f5-e8c7a0d19624"
#: A Project Ocean observation whose title holds raw ESC colour codes, with a backlink.
ESC_ID = "ledger/obs-2026-11-15-003"
HUB_ID = str(uuid.uuid5(uuid.NAMESPACE_URL, "hub"))


@pytest.fixture(scope="module")
def graph(own_fixtures_dir: Path) -> MemoryGraph:
    return build_graph(open_catalog(own_fixtures_dir))


@pytest.fixture(scope="module")
def memories(own_fixtures_dir: Path) -> dict[str, Memory]:
    return {m.id: m for m in open_catalog(own_fixtures_dir).memories()}


def busiest(graph: MemoryGraph, memories: dict[str, Memory], besides: str = "") -> Memory:
    """The memory with the most links in the own vaults (ties: the smallest key)."""
    others = [m for m in memories.values() if m.id != besides]
    return min(others, key=lambda m: (-len(graph.neighbours(m.key)), m.key))


@pytest.fixture(scope="module")
def busy(graph: MemoryGraph, memories: dict[str, Memory]) -> Memory:
    return busiest(graph, memories)


@pytest.fixture
def hub_vault(tmp_path: Path) -> Path:
    """A cognitive-memory vault whose hub relates to 50 memories (40 RELATED_TO, 10 SOLVES)."""
    root = tmp_path / "hub-vault"
    make_cognitive_vault(root, 50, hub=True)
    return root


def gscreen(app: MemlensApp) -> GraphScreen:
    assert isinstance(app.screen, GraphScreen)
    return app.screen


def view(app: MemlensApp) -> GraphView:
    return app.screen.query_one(GraphView)


def text_of(app: MemlensApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def screen_lines(app: MemlensApp) -> list[str]:
    return ["".join(s.text for s in strip) for strip in app.screen._compositor.render_strips()]


async def open_graph(pilot: Pilot[None], memory: Memory | None = None) -> GraphScreen:
    """Select `memory` in the memories pane (if given), then press 5."""
    app = pilot.app
    assert isinstance(app, MemlensApp)
    await settle(pilot)
    if memory is not None:
        main = app.screen
        assert isinstance(main, MainScreen)
        assert main.select_memory(memory.vault_root, memory.id)
    await pilot.press("5")
    await settle(pilot)
    return gscreen(app)


async def test_centres_on_the_memories_selection(
    make_app: AppFactory, memories: dict[str, Memory], graph: MemoryGraph
) -> None:
    caddy = memories[CADDY_ID]
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_graph(pilot, caddy)
        assert screen.centre == caddy.key and screen.depth == 1
        assert screen.graph is not None and len(screen.graph) == len(graph)
        assert caddy.title in text_of(app, "#graph-bar")
        rows = view(app).rows
        assert rows[0].key == caddy.key and rows[0].role == "centre"
        text = "\n".join(r.text for r in rows)
        # Every link of the centre is drawn with its type, direction and strength.
        for n in graph.neighbours(caddy.key):
            arrow = "→" if n.outgoing else "←"
            assert f"{n.edge.type} {arrow}" in text
            assert f"{graph.node(n.other).title}  {n.edge.strength:.2f}" in text
        assert "├─" in text and "└─" in text
        assert caddy.title in text_of(app, "#graph-detail")
        assert app.focused is view(app)


async def test_up_and_down_stop_only_on_nodes(make_app: AppFactory, busy: Memory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_graph(pilot, busy)
        v = view(app)
        node_rows = [i for i, r in enumerate(v.rows) if r.key is not None]
        assert len(node_rows) < len(v.rows)  # group headers exist and are skipped
        visited = [v.cursor]
        for _ in range(len(node_rows) + 2):
            await pilot.press("down")
            visited.append(v.cursor)
        assert sorted(set(visited)) == node_rows
        assert v.cursor == node_rows[-1]
        await pilot.press("up")
        assert v.cursor == node_rows[-2]
        await pilot.press("k")
        assert v.cursor == node_rows[-3]
        await pilot.press("home")
        assert v.cursor == 0
        await pilot.press("end")
        assert v.cursor == node_rows[-1]
        await pilot.press("pageup")
        assert v.selectable(v.cursor)
        # The detail line follows the cursor, with the link that led there.
        await pilot.press("home", "down")
        await settle(pilot)
        row = v.current()
        assert row is not None and row.key is not None and row.edge is not None
        detail = text_of(app, "#graph-detail")
        assert row.edge.type in detail and row.key[1] in detail


async def test_enter_recentres_and_backspace_returns(
    make_app: AppFactory, memories: dict[str, Memory]
) -> None:
    caddy = memories[CADDY_ID]
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_graph(pilot, caddy)
        await pilot.press("down")
        target = view(app).current()
        assert target is not None and target.key is not None and target.key != caddy.key
        await pilot.press("enter")
        await settle(pilot)
        assert screen.centre == target.key
        assert screen.history == [caddy.key]
        assert view(app).rows[0].key == target.key
        await pilot.press("backspace")
        await settle(pilot)
        assert screen.centre == caddy.key and screen.history == []
        # The cursor is back on the node just left.
        current = view(app).current()
        assert current is not None and current.key == target.key
        # Nothing to go back to: the centre stays.
        await pilot.press("backspace")
        assert screen.centre == caddy.key
        # Enter on the centre itself does not move.
        await pilot.press("home", "enter")
        await settle(pilot)
        assert screen.centre == caddy.key and screen.history == []


async def test_plus_and_minus_change_the_depth(
    make_app: AppFactory, busy: Memory, graph: MemoryGraph
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_graph(pilot, busy)
        sizes = {}
        for key, depth in (("plus", 2), ("equals_sign", 3), ("plus", 3)):
            await pilot.press(key)
            await settle(pilot)
            assert screen.depth == depth
            nb = view(app).neighbourhood
            assert nb is not None and nb.depth == depth
            assert nb.nodes.keys() == graph.neighbourhood(busy.key, depth).nodes.keys()
            sizes[depth] = len(view(app).rows)
            assert f"depth {depth} of 3" in text_of(app, "#graph-bar")
        assert sizes[3] >= sizes[2]
        for depth in (2, 1, 1):
            await pilot.press("minus")
            await settle(pilot)
            assert screen.depth == depth
        assert max(r.depth for r in view(app).rows) <= 2  # group rows and their nodes only


async def test_without_a_selection_starts_at_the_first_linked_memory(
    make_app: AppFactory, graph: MemoryGraph
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        # A filter that matches nothing leaves the memories pane without a selection.
        await pilot.press("slash", *"zzqqxxnothing", "enter")
        await settle(pilot)
        assert app.screen.query_one(MemoryTable).current_row() is None
        screen = await open_graph(pilot)
        assert screen.centre is not None
        assert graph.neighbours(screen.centre)
        assert graph.node(screen.centre).memory is not None
        assert "no memory selected" in text_of(app, "#graph-bar")


async def test_follows_a_new_selection_in_the_memories_pane(
    make_app: AppFactory, memories: dict[str, Memory], graph: MemoryGraph
) -> None:
    caddy = memories[CADDY_ID]
    busy = busiest(graph, memories, besides=CADDY_ID)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_graph(pilot, caddy)
        await pilot.press("down", "enter")  # walk away from the selection
        await settle(pilot)
        walked = screen.centre
        await pilot.press("1")
        await settle(pilot)
        await pilot.press("5")  # selection unchanged: the walk is kept
        await settle(pilot)
        assert screen.centre == walked
        await pilot.press("1")
        await settle(pilot)
        await open_graph(pilot, busy)
        assert gscreen(app) is screen and screen.centre == busy.key
        assert screen.history[-1] == walked


async def test_o_opens_the_node_in_the_memories_pane(
    make_app: AppFactory, memories: dict[str, Memory]
) -> None:
    caddy = memories[CADDY_ID]
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_graph(pilot, caddy)
        await pilot.press("down")
        target = view(app).current()
        assert target is not None and target.key is not None
        await pilot.press("o")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        row = app.screen.query_one(MemoryTable).current_row()
        assert row is not None and row.key == target.key


async def test_health_view_lists_every_problem_and_jumps(
    make_app: AppFactory, graph: MemoryGraph, memories: dict[str, Memory]
) -> None:
    health = graph.health()
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_graph(pilot, memories[CADDY_ID])
        await pilot.press("h")
        await settle(pilot)
        assert screen.show_health
        table = app.screen.query_one(HealthList)
        assert app.focused is table
        assert len(table.entries) == health.count
        reasons = [e.reason for e in table.entries]
        for p in health.ref_problems:
            assert p.reason.value in reasons
        assert reasons.count("orphan") == len(health.orphans)
        assert reasons.count("one_way_relation") == len(health.one_way)
        assert reasons.count("cycle") == len(health.cycles)
        bar = text_of(app, "#graph-bar")
        assert "Link health" in bar and f"{len(health.orphans)} orphans" in bar
        dangling = sum(1 for p in health.ref_problems if p.reason.value == "dangling_reference")
        assert f"{dangling} dangling" in bar
        # Graph keys do nothing here.
        await pilot.press("plus", "backspace")
        assert screen.depth == 1 and screen.show_health
        # The detail line names the file.
        first = table.entries[0]
        assert first.path is not None and first.path in text_of(app, "#graph-detail")
        # enter: the memory that holds the first broken reference.
        assert graph.node(first.source).memory is not None
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        row = app.screen.query_one(MemoryTable).current_row()
        assert row is not None and row.key == first.source
        await pilot.press("5")
        await settle(pilot)
        assert gscreen(app).show_health


async def test_health_jump_to_a_record_that_is_not_a_memory(
    make_app: AppFactory, graph: MemoryGraph, memories: dict[str, Memory]
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_graph(pilot, memories[CADDY_ID])
        await pilot.press("h")
        await settle(pilot)
        table = app.screen.query_one(HealthList)
        index = next(
            i
            for i, e in enumerate(table.entries)
            if e.source in graph.nodes and graph.node(e.source).memory is None
        )
        source = table.entries[index].source
        table.move_to(index)
        await pilot.press("enter")
        await settle(pilot)
        # A view record cannot open in the memories pane: the graph centres on it.
        assert gscreen(app) is screen
        assert not screen.show_health and screen.centre == source
        # c in the health list centres the graph on any entry's source.
        await pilot.press("h")
        await settle(pilot)
        table.move_to(0)
        await pilot.press("c")
        await settle(pilot)
        assert not screen.show_health and screen.centre == table.entries[0].source
        # h toggles back and forth.
        await pilot.press("h", "h")
        assert not screen.show_health and app.focused is view(app)


async def test_reload_rebuilds_the_graph_and_keeps_the_centre(
    make_app: AppFactory, memories: dict[str, Memory]
) -> None:
    caddy = memories[CADDY_ID]
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_graph(pilot, caddy)
        old = screen.graph
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert screen.graph is not None and screen.graph is not old
        assert screen.centre == caddy.key
        assert view(app).graph is screen.graph


# --------------------------------------------------------------------------- 50 neighbours


async def hub_open(pilot: Pilot[None], root: Path) -> GraphScreen:
    app = pilot.app
    await settle(pilot)
    main = app.screen
    assert isinstance(main, MainScreen)
    assert main.select_memory(root, HUB_ID)
    await pilot.press("5")
    await settle(pilot)
    assert isinstance(app, MemlensApp)
    return gscreen(app)


async def test_fifty_neighbours_stay_readable(make_app: AppFactory, hub_vault: Path) -> None:
    app = make_app([hub_vault])
    async with app.run_test(size=SIZE) as pilot:
        screen = await hub_open(pilot, hub_vault)
        v = view(app)
        assert screen.centre == (str(hub_vault), HUB_ID)
        width = v.line_width
        lines = screen_lines(app)
        # The whole first screen: centre, both groups with their counts, the
        # strongest eight of each with strengths, and how many more there are.
        shown = "\n".join(lines)
        assert "● Hub memory linked to fifty others" in shown
        assert "RELATED_TO → (40)" in shown and "SOLVES → (10)" in shown
        assert "… 32 more" in shown and "… 2 more" in shown
        assert "Leaf 01 about networking  0.97" in shown
        assert "Leaf 00 about backups  0.99" in shown
        node_rows = [r for r in v.rows if r.role == "node"]
        assert len(node_rows) == 16
        assert len(v.rows) <= v.size.height - 1  # no scrolling needed to see it all
        for r in v.rows:
            assert cell_width(r.text) <= width
        # Strongest first within each group.
        for group in ("RELATED_TO →", "SOLVES →"):
            strengths = [r.edge.strength for r in node_rows if r.group == group and r.edge]
            assert strengths == sorted(strengths, reverse=True)

        # e on a node of the cut group shows it whole; the cursor stays put.
        await pilot.press("down")
        here = v.current()
        assert here is not None and here.group == "RELATED_TO →"
        await pilot.press("e")
        await settle(pilot)
        assert screen.expanded == {"RELATED_TO →"}
        assert sum(1 for r in v.rows if r.role == "node" and r.group == "RELATED_TO →") == 40
        current = v.current()
        assert current is not None and current.key == here.key
        await pilot.press("e")  # again: cut again
        await settle(pilot)
        assert screen.expanded == set()

        # E shows every group whole; walking down visits all 50 neighbours once.
        await pilot.press("E")
        await settle(pilot)
        keys = [r.key for r in v.rows if r.role == "node"]
        assert len(keys) == 50 and len(set(keys)) == 50
        await pilot.press("home")
        seen = set()
        for _ in range(55):
            await pilot.press("down")
            row = v.current()
            assert row is not None and row.key is not None
            seen.add(row.key)
        assert len(seen) == 50
        # The last one is on screen (the view scrolled to it).
        last = v.current()
        assert last is not None
        title = screen.graph.node(last.key).title if screen.graph else ""
        assert any(title in line for line in screen_lines(app))
        await pilot.press("E")
        await settle(pilot)
        assert screen.expanded == set()


async def test_click_on_more_expands_the_group(make_app: AppFactory, hub_vault: Path) -> None:
    app = make_app([hub_vault])
    async with app.run_test(size=SIZE) as pilot:
        screen = await hub_open(pilot, hub_vault)
        v = view(app)
        more = next(i for i, r in enumerate(v.rows) if r.role == "more")
        group = v.rows[more].group
        await pilot.click(GraphView, offset=(6, more + 1))
        await settle(pilot)
        assert group in screen.expanded


async def test_fifty_neighbours_at_depth_three(make_app: AppFactory, hub_vault: Path) -> None:
    app = make_app([hub_vault])
    async with app.run_test(size=SIZE) as pilot:
        screen = await hub_open(pilot, hub_vault)
        # Re-centre on a leaf: the hub is one link away, its 49 others two.
        await pilot.press("down", "enter")
        await settle(pilot)
        await pilot.press("plus", "plus")
        await settle(pilot)
        assert screen.depth == 3
        v = view(app)
        nb = v.neighbourhood
        assert nb is not None and len(nb.nodes) == 51
        # Each node lists a few further nodes, then how many more.
        assert any(r.role == "more" for r in v.rows)
        assert len(v.rows) < 20
        for r in v.rows:
            assert cell_width(r.text) <= v.line_width


# --------------------------------------------------------------------------- injection


async def test_injected_titles_render_literally(
    make_app: AppFactory, memories: dict[str, Memory]
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_graph(pilot, memories[ESC_ID])
        text = assert_inert(app)
        assert "␛[31mFAILED␛[0m" in text
        await pilot.press("down", "plus")
        await settle(pilot)
        assert_inert(app)
        await pilot.press("h")
        await settle(pilot)
        text = assert_inert(app)
        assert "../../../../etc/passwd" in text


async def test_graph_keys_do_not_leak_into_other_panes(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_graph(pilot)
        await pilot.press("4")
        await settle(pilot)
        # In the search input "h", "e" and "+" are text, not graph keys.
        await pilot.press(*"he+")
        assert app.screen.query_one("#search-input", Input).value == "he+"


# --------------------------------------------------------------------------- snapshots


def _key(memory: Memory) -> NodeKey:
    return memory.key


def test_graph_pane_snapshot(snap_compare, make_app: AppFactory, own_fixtures_dir: Path) -> None:  # type: ignore[no-untyped-def]
    catalog = open_catalog(own_fixtures_dir)
    busy = busiest(build_graph(catalog), {m.id: m for m in catalog.memories()})

    async def run_before(pilot: Pilot[None]) -> None:
        await open_graph(pilot, busy)
        await pilot.press("plus", "down", "down")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_graph_health_snapshot(snap_compare, make_app: AppFactory) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot[None]) -> None:
        await open_graph(pilot)
        await pilot.press("h")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_fifty_neighbours_snapshot(snap_compare, make_app: AppFactory, hub_vault: Path) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot[None]) -> None:
        await hub_open(pilot, hub_vault)
        await pilot.press("down", "down")
        await settle(pilot)

    assert snap_compare(make_app([hub_vault]), terminal_size=SIZE, run_before=run_before)


async def test_a_graph_that_fails_to_build_is_reported(
    make_app: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: object) -> MemoryGraph:
        raise RuntimeError("graph exploded")

    monkeypatch.setattr("memlens.tui.screens.graph.build_graph", broken)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("5")
        await settle(pilot)
        assert app.is_running
        assert any("graph exploded" in message for _, message in app.errors)
        await pilot.press("escape")  # close the error dialog
        await settle(pilot)
        screen = gscreen(app)
        assert screen.graph is None and not view(app).loading
        assert "could not be built" in view(app).empty_text


async def test_both_panes_on_a_folder_without_vaults(make_app: AppFactory, tmp_path: Path) -> None:
    app = make_app([tmp_path])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        await pilot.press(*"abc")
        await settle(pilot)
        await pilot.press("escape", "down", "m", "l", "M", "enter")
        await settle(pilot)
        assert isinstance(app.screen, SearchScreen)  # nothing to open or follow
        await pilot.press("5")
        await settle(pilot)
        assert isinstance(app.screen, GraphScreen)
        assert "no memories loaded" in view(app).empty_text
        keys = ("down", "enter", "plus", "e", "E", "o", "backspace", "h", "enter", "c", "h")
        await pilot.press(*keys)
        await settle(pilot)
        assert app.errors == [] and app.is_running
