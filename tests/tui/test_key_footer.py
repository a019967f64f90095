"""The key footer: one recompose per burst of binding changes, showing the same keys."""

from __future__ import annotations

from textual.widgets._footer import FooterKey

from memlens.tui.widgets.key_footer import KeyFooter

from .conftest import SIZE, AppFactory, settle


def _keys(footer: KeyFooter) -> list[str]:
    return [key.key for key in footer.query(FooterKey)]


async def test_a_burst_of_binding_changes_recomposes_the_footer_once(
    make_app: AppFactory,
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        footer = app.screen.query_one(KeyFooter)
        before = _keys(footer)
        assert {"slash", "enter", "question_mark"} <= set(before)  # the list's own keys
        calls: list[int] = []
        recompose = footer.recompose

        async def counted() -> None:
            calls.append(1)
            await recompose()

        footer.recompose = counted  # type: ignore[method-assign]
        for _ in range(5):
            app.screen.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert calls == [1]
        assert _keys(footer) == before
        # A later change is not lost: it recomposes again.
        app.screen.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert calls == [1, 1]


async def test_every_pane_shows_its_keys_in_the_footer(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for mode in ("search", "graph", "triage", "problems"):
            await app.action_show(mode)
            await settle(pilot)
            footer = app.screen.query_one(KeyFooter)
            assert _keys(footer), mode
