"""The search pane with meaning vectors that are not kept yet: words first, meaning after.

A first start at 100k memories embeds every memory (a minute or more); the
pane offers its index as soon as the words are indexed and fuses meaning in
when the vectors are made.  A stand-in model that waits for the test to let
it go shows both halves.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from memlens.core.search import embeddings
from memlens.core.search.embeddings import DIM, Embedder
from memlens.tui.app import MemlensApp
from memlens.tui.screens import search as search_screen
from memlens.tui.screens.search import SearchScreen

from .conftest import AS_OF, SIZE, settle


class GatedEmbedder(Embedder):
    """One axis per word it knows; memories (batches) wait until `gate` is set."""

    gate = threading.Event()
    batches = 0

    def __init__(self) -> None:  # no model
        pass

    def embed(self, texts: Sequence[str]) -> np.ndarray:  # type: ignore[type-arg]
        if len(texts) > 1:  # the memories, not a query
            type(self).batches += 1
            assert type(self).gate.wait(30), "the test never let the model go"
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i, len(text) % (DIM - 1)] = 1.0
            out[i, DIM - 1] = 1.0 if "disk" in text.lower() else 0.0
            out[i] /= np.linalg.norm(out[i])
        return out


async def _until(pilot: Pilot[None], done: Callable[[], bool], seconds: float = 20) -> None:
    end = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < end, "timed out"
        await pilot.pause(0.05)


@pytest.fixture
def gated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> type[GatedEmbedder]:
    """The semantic extra as if installed, its model gated; every memory embedded later."""
    monkeypatch.setenv("MEMLENS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(search_screen, "semantic_available", lambda: True)
    monkeypatch.setattr(search_screen, "EMBED_AT_ONCE", 0)
    monkeypatch.setattr(embeddings, "Embedder", GatedEmbedder)
    monkeypatch.setattr(embeddings, "QueryEmbedder", GatedEmbedder)
    monkeypatch.setattr(GatedEmbedder, "gate", threading.Event())
    monkeypatch.setattr(GatedEmbedder, "batches", 0)
    return GatedEmbedder


async def test_words_first_then_meaning_once_the_memories_are_embedded(
    own_fixtures_dir: Path, gated: type[GatedEmbedder]
) -> None:
    app = MemlensApp([own_fixtures_dir], as_of=AS_OF, live_reload=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)  # loaded; the search pane is not open yet
        await pilot.press("4")
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        await _until(pilot, lambda: screen.index is not None and gated.batches > 0)
        index = screen.index
        assert index is not None and index.semantic is None and not screen.has_meaning
        assert screen.meaning_pending == len(index)
        bar = str(screen.query_one("#search-bar", Static).render())
        assert f"by words until {len(index)} are embedded" in bar

        await pilot.press(*"disk")
        await _until(pilot, lambda: screen.answered == "disk")
        assert screen.results is not None and screen.results.hits
        assert all("semantic" not in h.explain for h in screen.results.hits)

        gated.gate.set()
        await _until(pilot, lambda: screen.meaning_pending == 0)
        await _until(pilot, lambda: any("semantic" in h.explain for h in screen.results.hits))
        assert screen.index is index and index.semantic is not None and screen.has_meaning
        bar = str(screen.query_one("#search-bar", Static).render())
        assert "by words until" not in bar
        await settle(pilot)
    assert gated.batches >= 1


async def test_few_memories_without_kept_vectors_are_embedded_before_the_index_is_offered(
    own_fixtures_dir: Path, gated: type[GatedEmbedder], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_screen, "EMBED_AT_ONCE", 10_000)
    gated.gate.set()
    app = MemlensApp([own_fixtures_dir], as_of=AS_OF, live_reload=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        assert screen.index is not None and screen.index.semantic is not None
        assert screen.meaning_pending == 0


async def test_the_review_pane_waits_for_the_search_panes_vectors(
    own_fixtures_dir: Path, gated: type[GatedEmbedder], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not embedded twice: the review queue takes the search pane's vectors once made."""
    from memlens.core.search import meaning as meanings
    from memlens.tui.screens.review import ReviewScreen

    own_runs: list[object] = []

    def not_twice(*args: object, **_kwargs: object) -> None:
        own_runs.append(args)  # the review pane would embed every memory itself

    monkeypatch.setattr(meanings, "semantic_available", lambda: True)
    monkeypatch.setattr(meanings, "meaning_of", not_twice)
    app = MemlensApp([own_fixtures_dir], as_of=AS_OF, live_reload=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("4")
        search = app.screen
        assert isinstance(search, SearchScreen)
        await _until(pilot, lambda: search.meaning_pending > 0 and gated.batches > 0)
        await pilot.press("escape", "9")
        review = app.screen
        assert isinstance(review, ReviewScreen)
        bar = review.query_one("#review-bar", Static)
        await _until(pilot, lambda: "meaning: computing" in str(bar.render()))

        gated.gate.set()
        await _until(pilot, lambda: "meaning used" in str(bar.render()))
        assert search.has_meaning
        await settle(pilot)
    assert own_runs == []
