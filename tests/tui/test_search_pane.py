"""The search pane (key 4): every key, on the fixtures at 2026-11-22, plus snapshots.

Expected hits come from the core index itself (`SearchIndex.run` with the
pane's page size), so these tests check the pane shows what core ranks, in
order, with the explanation of the highlighted hit; the ranking itself is
tested in tests/core.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Static

from memlens.core import open_catalog
from memlens.core.search.index import SearchIndex
from memlens.tui.app import MemlensApp
from memlens.tui.screens.graph import GraphScreen
from memlens.tui.screens.main import MainScreen
from memlens.tui.screens.search import PAGE, SearchScreen
from memlens.tui.widgets.memory_table import MemoryTable
from memlens.tui.widgets.search_results import SearchResults

from .conftest import AS_OF, SIZE, AppFactory, settle
from .test_injection import assert_inert


@pytest.fixture(scope="module")
def core_index(own_fixtures_dir: Path) -> SearchIndex:
    return SearchIndex.from_catalog(open_catalog(own_fixtures_dir), AS_OF)


def search(app: MemlensApp) -> SearchScreen:
    assert isinstance(app.screen, SearchScreen)
    return app.screen


def results(app: MemlensApp) -> SearchResults:
    return app.screen.query_one(SearchResults)


def text_of(app: MemlensApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def ids(hits: list[Any]) -> list[str]:
    return [h.memory.id for h in hits]


async def open_search(pilot: Pilot[None], query: str = "") -> SearchScreen:
    await settle(pilot)
    await pilot.press("4")
    await settle(pilot)
    if query:
        await pilot.press(*query)
        await settle(pilot)
    app = pilot.app
    assert isinstance(app, MemlensApp)
    return search(app)


async def test_opens_with_an_index_of_every_memory(
    make_app: AppFactory, core_index: SearchIndex
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_search(pilot)
        assert screen.index is not None
        assert len(screen.index) == len(core_index)
        assert f"{len(core_index)} memories indexed" in text_of(app, "#search-bar")
        assert app.focused is app.screen.query_one("#search-input", Input)
        assert not results(app).loading
        # The filter syntax hint line is shown.
        hint = text_of(app, "#search-hint")
        for token in ("tag:", "type:", "health:", "before:", "importance>0.5", "-not"):
            assert token in hint
        assert results(app).hits == []


async def test_results_update_as_you_type(make_app: AppFactory, core_index: SearchIndex) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_search(pilot, "sqlite")
        expected = core_index.run("sqlite", PAGE, as_you_type=True, rank="relevance")
        assert expected.hits
        assert ids(results(app).hits) == ids(expected.hits)
        assert f"{expected.total} matches" in text_of(app, "#search-bar")
        # One more word narrows or re-ranks: the list follows the input.
        await pilot.press(*" database")
        await settle(pilot)
        expected = core_index.run("sqlite database", PAGE, as_you_type=True, rank="relevance")
        assert ids(results(app).hits) == ids(expected.hits)
        assert screen.answered == "sqlite database"
        assert screen.query_seconds is not None


async def test_typing_before_the_index_exists_runs_once_it_does(
    make_app: AppFactory, core_index: SearchIndex
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("4")
        await pilot.press(*"refund")
        await settle(pilot)
        assert ids(results(app).hits) == ids(
            core_index.run("refund", PAGE, as_you_type=True, rank="relevance").hits
        )


async def test_filters_and_negation(make_app: AppFactory, core_index: SearchIndex) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_search(pilot, "format:dream-cycle")
        hits = results(app).hits
        assert hits and all(h.memory.format == "dream-cycle" for h in hits)
        field = app.screen.query_one("#search-input", Input)
        field.value = "refund -format:cognitive-memory"
        await settle(pilot)
        hits = results(app).hits
        assert hits and all(h.memory.format != "cognitive-memory" for h in hits)
        assert ids(hits) == ids(
            core_index.run(
                "refund -format:cognitive-memory", PAGE, as_you_type=True, rank="relevance"
            ).hits
        )


async def test_a_bad_query_shows_its_error_and_keeps_the_hits(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_search(pilot, "refund")
        before = ids(results(app).hits)
        assert before
        app.screen.query_one("#search-input", Input).value = "refund importance>"
        await settle(pilot)
        assert screen.error is not None and "importance>" in screen.error
        assert "bad query token" in text_of(app, "#search-bar")
        assert ids(results(app).hits) == before
        assert app.errors == [] and app.is_running
        field = app.screen.query_one("#search-input", Input)
        field.cursor_position = len(field.value)
        await pilot.press(*"0.5")
        await settle(pilot)
        assert field.value == "refund importance>0.5"
        assert screen.error is None


async def test_explanation_of_the_highlighted_hit(
    make_app: AppFactory, core_index: SearchIndex
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_search(pilot, "sqlite")
        expected = core_index.run("sqlite", PAGE, as_you_type=True, rank="relevance").hits
        first = text_of(app, "#search-explain")
        ex = expected[0].explain
        assert expected[0].memory.title in first
        # The pane ranks by relevance by default: BM25F parts, and the decay
        # columns shown beside it, not multiplied in.
        for label in (
            "score = relevance (BM25F)",
            "matched words",
            "confidence",
            "decay weight",
            "importance",
            "not multiplied in",
        ):
            assert label in first
        part = ex["terms"][0]
        assert part["term"] in first
        assert (
            f"{part['similarity']:.2f} × {part['idf']:.3f} × {part['saturation']:.3f}"
            f" = {part['contribution']:.3f}" in first
        )
        assert f"{ex['score']:.3f}" in first
        assert f"{ex['decay_weight']:.3f}" in first
        # The cursor keys of the list move the highlight and the explanation.
        await pilot.press("enter")  # from the input to the results
        assert app.focused is results(app)
        await pilot.press("j")
        await settle(pilot)
        assert results(app).cursor == 1
        assert expected[1].memory.title in text_of(app, "#search-explain")
        await pilot.press("k")
        await settle(pilot)
        assert results(app).cursor == 0
        await pilot.press("G")
        await settle(pilot)
        assert results(app).cursor == len(expected) - 1
        assert expected[-1].memory.title in text_of(app, "#search-explain")
        await pilot.press("g")
        await settle(pilot)
        assert results(app).cursor == 0


async def test_enter_opens_the_memory(make_app: AppFactory, core_index: SearchIndex) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_search(pilot, "litestream")
        await pilot.press("enter", "down")  # to the results, second hit
        await settle(pilot)
        hit = results(app).current()
        assert hit is not None and hit is results(app).hits[1]
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        row = app.screen.query_one(MemoryTable).current_row()
        assert row is not None and row.key == hit.memory.key


async def test_more_like_this_and_back(make_app: AppFactory, core_index: SearchIndex) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_search(pilot, "litestream")
        await pilot.press("enter", "down")
        hit = results(app).current()
        assert hit is not None
        await pilot.press("m")
        await settle(pilot)
        similar = core_index.similar(hit.memory, PAGE)
        assert similar
        assert ids(results(app).hits) == ids(similar)
        assert len(screen.stack) == 1
        assert "more like" in text_of(app, "#search-bar")
        explain = text_of(app, "#search-explain")
        assert "TF-IDF cosine" in explain and f"{similar[0].score:.3f}" in explain
        # Each similar hit shows a health in the list.
        assert all(h.explain["health"] for h in results(app).hits)
        # More like one of those, then back twice: the query's hits, cursor kept.
        await pilot.press("m")
        await settle(pilot)
        assert len(screen.stack) == 2
        await pilot.press("escape")
        await settle(pilot)
        assert len(screen.stack) == 1 and ids(results(app).hits) == ids(similar)
        await pilot.press("backspace")
        await settle(pilot)
        assert screen.stack == []
        assert results(app).current() is hit
        # Back once more from the results: to the query.
        await pilot.press("escape")
        assert app.focused is app.screen.query_one("#search-input", Input)


async def test_more_like_this_by_stored_vectors(
    make_app: AppFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "vectors-vault"
    make_cognitive_vault(root, 4)
    ids_ = [str(uuid.uuid5(uuid.NAMESPACE_URL, f"leaf-{i}")) for i in range(4)]
    vectors = {ids_[0]: [1.0, 0.0], ids_[1]: [0.9, 0.1], ids_[2]: [0.0, 1.0], ids_[3]: [0.5, 0.5]}
    (root / "_embeddings.json").write_text(json.dumps({"model": "m", "entries": vectors}))
    app = make_app([root])
    async with app.run_test(size=SIZE) as pilot:
        await open_search(pilot, "leaf")
        notes: list[str] = []
        monkeypatch.setattr(app, "notify", lambda message, **_kw: notes.append(message))
        await pilot.press("enter")
        first = results(app).current()
        assert first is not None
        index = search(app).index
        assert index is not None
        await pilot.press("M")
        await settle(pilot)
        assert index.has_vectors(first.memory)
        expected = index.similar(first.memory, PAGE, by="vectors")
        assert len(expected) == 3
        assert ids(results(app).hits) == ids(expected)
        assert "stored vectors" in text_of(app, "#search-explain")
        assert notes == []


async def test_more_like_this_without_vectors_says_so(
    make_app: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_search(pilot, "litestream")
        notes: list[str] = []
        monkeypatch.setattr(app, "notify", lambda message, **_kw: notes.append(message))
        await pilot.press("enter", "M")
        await settle(pilot)
        assert notes and "vector" in notes[0]
        assert screen.stack == []


async def test_slash_escape_and_down_move_between_input_and_results(
    make_app: AppFactory,
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_search(pilot, "refund")
        field = app.screen.query_one("#search-input", Input)
        await pilot.press("down")
        assert app.focused is results(app)
        await pilot.press("slash")
        assert app.focused is field
        # Escape leaves the input for the results; the query and its hits stay.
        await pilot.press("escape")
        await settle(pilot)
        assert app.focused is results(app)
        assert field.value == "refund"
        assert results(app).hits


async def test_escape_leaves_the_query_so_digits_switch_panes(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_search(pilot, "backup")
        field = app.screen.query_one("#search-input", Input)
        assert app.focused is field
        await pilot.press("2")  # in the box a digit is part of the query
        await settle(pilot)
        assert field.value == "backup2"
        assert isinstance(app.screen, SearchScreen)
        await pilot.press("backspace", "escape")
        await settle(pilot)
        assert field.value == "backup"
        await pilot.press("1")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        await pilot.press("4")  # back in the search pane: the query is kept
        await settle(pilot)
        assert isinstance(app.screen, SearchScreen)
        assert app.screen.query_one("#search-input", Input).value == "backup"
        await pilot.press("slash", "escape", "6")
        await settle(pilot)
        assert app.screen.__class__.__name__ == "EpisodesScreen"


async def test_l_centres_the_graph_on_the_hit(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_search(pilot, "replication")
        await pilot.press("enter")
        hit = results(app).current()
        assert hit is not None
        await pilot.press("l")
        await settle(pilot)
        assert isinstance(app.screen, GraphScreen)
        assert app.screen.centre == hit.memory.key
        # Showing the pane again does not snap back to the memories selection.
        await pilot.press("4")
        await settle(pilot)
        await pilot.press("5")
        await settle(pilot)
        assert isinstance(app.screen, GraphScreen)
        assert app.screen.centre == hit.memory.key


async def test_injection_hits_render_literally(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_search(pilot, "failed")
        hits = results(app).hits
        index = next(i for i, h in enumerate(hits) if "\x1b" in h.memory.title)
        results(app).move_to(index)
        await settle(pilot)
        text = assert_inert(app)
        assert "␛[31mFAILED" in text
        # A query that is itself markup is shown as typed.
        app.screen.query_one("#search-input", Input).value = "[bold]x[/] [link=http://e]y"
        await settle(pilot)
        text = assert_inert(app)
        assert "[bold]x[/] [link=http://e]y" in text


async def test_reload_rebuilds_the_index(make_app: AppFactory, core_index: SearchIndex) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_search(pilot, "refund")
        old = screen.index
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert screen.index is not None and screen.index is not old
        assert ids(results(app).hits) == ids(
            core_index.run("refund", PAGE, as_you_type=True, rank="relevance").hits
        )


# --------------------------------------------------------------------------- snapshots


def test_search_pane_snapshot(snap_compare, make_app: AppFactory) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot[None]) -> None:
        await open_search(pilot, "refund")
        await pilot.press("enter", "down")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_more_like_this_snapshot(snap_compare, make_app: AppFactory) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot[None]) -> None:
        await open_search(pilot, "replication")
        await pilot.press("enter", "m")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


# --------------------------------------------------------------------------- helpers


def make_cognitive_vault(root: Path, leaves: int, *, hub: bool = False) -> list[str]:
    """A cognitive-memory vault of `leaves` memories (and a hub relating to all of them).

    Returns the leaf ids.  Ids are uuid5 of fixed names, so the vault is the
    same on every run (snapshots).
    """
    folder = root / "graph" / "general"
    folder.mkdir(parents=True)
    hub_id = str(uuid.uuid5(uuid.NAMESPACE_URL, "hub"))
    leaf_ids = [str(uuid.uuid5(uuid.NAMESPACE_URL, f"leaf-{i}")) for i in range(leaves)]
    topics = ("backups", "networking", "certificates", "monitoring", "storage")

    def front(mid: str, title: str, relations: list[str]) -> str:
        lines = [
            "---",
            f"id: {mid}",
            "type: general",
            f'title: "{title}"',
            "tags: [synthetic]",
            "importance: 0.6",
            "confidence: 0.8",
            "created: 2026-11-01T10:00:00+00:00",
            "updated: 2026-11-01T10:00:00+00:00",
        ]
        if relations:
            lines.append("relations:")
            lines.extend(relations)
        lines.append("---")
        return "\n".join(lines) + "\n"

    def rel(target: str, kind: str, direction: str, strength: float) -> str:
        return (
            f"  - target: {target}\n    type: {kind}\n    direction: {direction}\n"
            f"    strength: {strength:.2f}"
        )

    hub_rels: list[str] = []
    for i, lid in enumerate(leaf_ids):
        kind = "SOLVES" if i % 5 == 0 else "RELATED_TO"
        strength = round(0.99 - i * 0.019, 2)
        title = f"Leaf {i:02d} about {topics[i % len(topics)]}"
        leaf_rels = [rel(hub_id, kind, "incoming", strength)] if hub else []
        if hub:
            hub_rels.append(rel(lid, kind, "outgoing", strength))
        body = f"Leaf memory {i} notes on {topics[i % len(topics)]} for the homelab.\n"
        (folder / f"leaf-{i:02d}-{lid[:6]}.md").write_text(front(lid, title, leaf_rels) + body)
    if hub:
        (folder / f"hub-{hub_id[:6]}.md").write_text(
            front(hub_id, "Hub memory linked to fifty others", hub_rels)
            + "The hub of the synthetic graph.\n"
        )
    return leaf_ids


async def test_an_index_that_fails_to_build_is_reported(
    make_app: AppFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def broken(*_args: object, **_kwargs: object) -> SearchIndex:
        raise RuntimeError("index exploded")

    # An empty cache folder: no index kept by an earlier test, so one is built.
    monkeypatch.setenv("MEMLENS_CACHE_DIR", str(tmp_path / "empty-cache"))
    monkeypatch.setattr("memlens.tui.screens.search.SearchIndex.build", broken)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        assert app.is_running
        assert any("index exploded" in message for _, message in app.errors)
        await pilot.press("escape")  # close the error dialog
        await settle(pilot)
        assert search(app).index is None
        assert not results(app).loading
        assert "could not be built" in results(app).empty_text


async def test_o_toggles_relevance_and_recall(
    make_app: AppFactory, core_index: SearchIndex
) -> None:
    """`o` in the results re-runs the query by the other ranking; bar, footer and explain follow."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_search(pilot, "refund approval")
        relevance = core_index.run("refund approval", PAGE, as_you_type=True, rank="relevance")
        recall = core_index.run("refund approval", PAGE, as_you_type=True, rank="recall")
        # The two rankings differ on this query (else the toggle would show nothing).
        assert [h.score for h in relevance.hits] != [h.score for h in recall.hits]
        assert screen.rank == "relevance"
        assert "ranked by relevance" in text_of(app, "#search-bar")
        await pilot.press("enter")  # to the results
        await pilot.press("o")
        await settle(pilot)
        assert screen.rank == "recall"
        assert ids(results(app).hits) == ids(recall.hits)
        assert [h.score for h in results(app).hits] == [h.score for h in recall.hits]
        assert "ranked by recall" in text_of(app, "#search-bar")
        explain = text_of(app, "#search-explain")
        assert "score = relevance × confidence × decay weight" in explain
        ex = recall.hits[0].explain
        assert (
            f"{ex['score']:.3f} = {ex['relevance']:.3f} × {ex['confidence']:.2f} × "
            f"{ex['decay_weight']:.3f}" in explain
        )
        footer_keys = {b.binding.key for b in app.screen.active_bindings.values() if b.binding.show}
        assert "o" in footer_keys
        await pilot.press("o")
        await settle(pilot)
        assert screen.rank == "relevance"
        assert ids(results(app).hits) == ids(relevance.hits)
        assert "score = relevance (BM25F)" in text_of(app, "#search-explain")


async def test_s_orders_the_shown_hits_by_a_column(
    make_app: AppFactory, core_index: SearchIndex
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_search(pilot, "refund")
        await pilot.press("enter", "s")  # to the results; by confidence
        await settle(pilot)
        assert screen.sort == "confidence"
        shown = [h.explain["confidence"] for h in results(app).hits]
        assert shown == sorted(shown, reverse=True)
        expected = core_index.run("refund", PAGE, as_you_type=True, rank="relevance").hits
        assert sorted(ids(results(app).hits)) == sorted(ids(expected))
        await pilot.press("s")
        await settle(pilot)
        assert screen.sort == "decay weight"
        weights = [h.explain["decay_weight"] for h in results(app).hits]
        assert weights == sorted(weights, reverse=True)
        assert "shown by decay weight" in text_of(app, "#search-bar")
