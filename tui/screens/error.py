"""The one error dialog: every failed worker and unreadable path ends here."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from ..safe_text import safe, safe_block


class ErrorModal(ModalScreen[None]):
    """Shows what failed; the app keeps running underneath."""

    DEFAULT_CSS = """
    ErrorModal { align: center middle; }
    ErrorModal > Vertical {
        width: 70%;
        max-width: 100;
        height: auto;
        max-height: 80%;
        border: thick $error;
        background: $surface;
        padding: 1 2;
    }
    ErrorModal #error-title { text-style: bold; color: $error; margin-bottom: 1; }
    ErrorModal Button { margin-top: 1; }
    """

    BINDINGS = [Binding("escape,enter", "dismiss", "Close", id="error.close")]

    def __init__(self, title: str, message: str) -> None:
        super().__init__()
        #: What failed (display text).
        self.error_title = title
        #: The error message (shown literally).
        self.message = message

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(safe(self.error_title), id="error-title")
            yield Static(safe_block(self.message), id="error-message")
            yield Button("Close", variant="error", id="error-close")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(None)
