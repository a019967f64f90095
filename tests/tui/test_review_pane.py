"""The review pane (key 9): ranked candidates, the pair side by side, and its actions."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
import review_vaults as rv
from textual.widgets import OptionList, Static

from memlens.core.curation import DECISIONS_REL
from memlens.core.scan.vault import open_catalog
from memlens.core.search import embeddings
from memlens.core.search import meaning as meanings
from memlens.core.search.embeddings import Embedder
from memlens.tui.app import MemlensApp
from memlens.tui.screens import search as search_screen
from memlens.tui.screens.review import ReviewScreen, highlighted

from .conftest import AS_OF, SIZE, settle
from .test_actions_ui import journal_actions, press, told


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).parts[0] != ".memlens"
    }


async def _open(pilot: object, app: MemlensApp) -> ReviewScreen:
    await settle(pilot)  # type: ignore[arg-type]
    await press(pilot, "9")  # type: ignore[arg-type]
    screen = app.screen
    assert isinstance(screen, ReviewScreen)
    return screen


async def _highlight(pilot: object, screen: ReviewScreen, members: frozenset[str]) -> None:
    index = next(
        n
        for n, i in enumerate(screen.items)
        if frozenset(m.id for m in i.candidate.members) == members
    )
    screen.query_one("#review-list", OptionList).highlighted = index
    await settle(pilot)  # type: ignore[arg-type]


def _text(screen: ReviewScreen, which: str) -> str:
    return str(screen.query_one(f"#review-{which}", Static).render())


async def test_the_pane_lists_candidates_and_shows_the_pair_side_by_side(tmp_path: Path) -> None:
    root = rv.build(tmp_path, "observation-v1")
    ids = rv.ids(open_catalog(root).memories())
    app = MemlensApp([root], as_of=AS_OF, live_reload=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, app)
        assert len(screen.items) == len(rv.PLANTED)
        confidences = [i.candidate.confidence for i in screen.items]
        assert confidences == sorted(confidences, reverse=True)
        await _highlight(pilot, screen, frozenset((ids["num_a"], ids["num_b"])))
        assert "contradiction" in _text(screen, "reason")
        left, right = _text(screen, "left"), _text(screen, "right")
        assert "is 20." in left and "is 50." in right
        assert "obs-009" in left and "obs-010" in right
        await press(pilot, "x")
        assert "is 50." in _text(screen, "left")


def test_differing_words_are_styled_and_markup_stays_text() -> None:
    shown = highlighted("pool [bold]size[/bold] is 20\x1b", "pool [bold]size[/bold] is 50")
    assert shown.plain == "pool [bold]size[/bold] is 20␛"
    styled = {shown.plain[s.start : s.end] for s in shown.spans}
    assert styled == {"20␛"}


async def test_m_merges_and_u_undoes_every_byte(tmp_path: Path) -> None:
    root = rv.build(tmp_path, "project-ocean")
    ids = rv.ids(open_catalog(root).memories())
    before = _tree(root)
    app = MemlensApp([root], as_of=AS_OF, live_reload=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, app)
        pair = frozenset((ids["dup1a"], ids["dup1b"]))
        await _highlight(pilot, screen, pair)
        keep = screen.pair()
        assert keep is not None
        await press(pilot, "m")
        await settle(pilot)
        assert journal_actions(root)[-1] == "merge"
        assert any("merge" in t and "u undoes it" in t for t in told(app))
        assert pair not in {frozenset(m.id for m in i.candidate.members) for i in screen.items}
        archived = root / "agents/alpha/memory/archive" / (keep[1].id.split("/")[1] + ".md")
        assert archived.is_file()
        await press(pilot, "u")
        await settle(pilot)
        assert _tree(root) == before
        assert pair in {frozenset(m.id for m in i.candidate.members) for i in screen.items}


async def test_s_supersedes_and_S_keeps_the_old_one(tmp_path: Path) -> None:
    root = rv.build(tmp_path, "cognitive-memory")
    ids = rv.ids(open_catalog(root).memories())
    app = MemlensApp([root], as_of=AS_OF, live_reload=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, app)
        await _highlight(pilot, screen, frozenset((ids["num_a"], ids["num_b"])))
        await press(pilot, "s")
        await settle(pilot)
        assert journal_actions(root)[-1] == "supersede"
        assert len(list(root.glob("archive/general/*.md"))) == 1
        await _highlight(pilot, screen, frozenset((ids["neg_a"], ids["neg_b"])))
        await press(pilot, "S")
        await settle(pilot)
        assert journal_actions(root)[-1] == "supersede"
        assert len(list(root.glob("archive/general/*.md"))) == 1, "the old one is kept"
        assert (root / DECISIONS_REL).is_file()
        assert len(screen.items) == len(rv.PLANTED) + 1 - 2


async def test_d_keeps_both_and_the_pair_leaves_the_queue(tmp_path: Path) -> None:
    root = rv.build(tmp_path, "dream-cycle")
    ids = rv.ids(open_catalog(root).memories())
    before = _tree(root)
    app = MemlensApp([root], as_of=AS_OF, live_reload=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, app)
        pair = frozenset((ids["set_a"], ids["set_b"]))
        await _highlight(pilot, screen, pair)
        await press(pilot, "d")
        await settle(pilot)
        assert journal_actions(root)[-1] == "dismiss"
        assert _tree(root) == before
        assert pair not in {frozenset(m.id for m in i.candidate.members) for i in screen.items}
        await press(pilot, "u")
        await settle(pilot)
        assert pair in {frozenset(m.id for m in i.candidate.members) for i in screen.items}


async def test_the_palette_offers_the_pane(tmp_path: Path) -> None:
    root = rv.build(tmp_path, "observation-v1")
    app = MemlensApp([root], as_of=AS_OF, live_reload=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        cmd = next(
            c for c in app.palette_commands() if c.name == "Review duplicates and contradictions"
        )
        assert cmd.help == "key 9"


# ------------------------------------------------------------------ meaning


def _with_meaning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: type[Embedder]) -> None:
    """As if the semantic extra were installed, with `model` as its embedder.

    A cache folder of the test's own: vectors are kept per text there.
    """
    monkeypatch.setenv("MEMLENS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(meanings, "semantic_available", lambda: True)
    monkeypatch.setattr(search_screen, "semantic_available", lambda: True)
    monkeypatch.setattr(embeddings, "Embedder", model)


def _vector_pair(tmp_path: Path) -> tuple[Path, frozenset[str]]:
    root = rv.build(tmp_path, "observation-v1")
    ids = rv.ids(open_catalog(root).memories())
    return root, frozenset(ids[k] for k in rv.VECTOR_PAIR)


def _pairs(screen: ReviewScreen) -> set[frozenset[str]]:
    return {frozenset(m.id for m in i.candidate.members) for i in screen.items}


async def test_meaning_vectors_add_the_paraphrase_pair(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, pair = _vector_pair(tmp_path)
    _with_meaning(tmp_path, monkeypatch, rv.StandInEmbedder)
    app = MemlensApp([root], as_of=AS_OF, live_reload=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, app)
        assert pair in _pairs(screen)
        assert len(screen.items) == len(rv.PLANTED) + 1
        assert "meaning used" in _text(screen, "bar")
        # The persisted search index kept the vectors: `memlens review` reads them back.
        catalog = open_catalog(root)
        again = meanings.meaning_of(catalog, AS_OF, embedder=FailingEmbedder())
        assert again is not None and again(list(catalog.memories())) is not None


class FailingEmbedder(rv.StandInEmbedder):
    """A model that cannot embed (a damaged install)."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:  # type: ignore[type-arg]
        raise OSError("model weights unreadable")


async def test_the_search_panes_vectors_are_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, pair = _vector_pair(tmp_path)
    _with_meaning(tmp_path, monkeypatch, rv.StandInEmbedder)

    def not_again(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the review pane embedded again")

    monkeypatch.setattr(meanings, "meaning_of", not_again)
    app = MemlensApp([root], as_of=AS_OF, live_reload=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "4")
        await settle(pilot)
        await app.action_show("review")  # "9" would be typed into the search box
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        assert pair in _pairs(screen)
        assert "meaning used" in _text(screen, "bar")


async def test_without_a_working_model_the_lexical_queue_stays_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, pair = _vector_pair(tmp_path)
    _with_meaning(tmp_path, monkeypatch, FailingEmbedder)
    app = MemlensApp([root], as_of=AS_OF, live_reload=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, app)
        assert len(screen.items) == len(rv.PLANTED) and pair not in _pairs(screen)
        assert "meaning failed: OSError: model weights unreadable" in _text(screen, "bar")
