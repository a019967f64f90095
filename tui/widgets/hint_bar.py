"""The first-run hint line (see `tui.hints`): click it to dismiss."""

from __future__ import annotations

from textual import events
from textual.content import Content
from textual.widgets import Static


class HintBar(Static):
    """One line of key hints above the main screen; a click (or `?`) dismisses it."""

    DEFAULT_CSS = """
    HintBar {
        height: 1;
        padding: 0 1;
        background: $primary 30%;
        color: $text;
    }
    """

    def __init__(self, text: str, *, id: str | None = None) -> None:
        super().__init__(
            Content.assemble(("Tip: ", "bold"), text, ("   (click to dismiss)", "$text-muted")),
            id=id,
        )

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.remove()
