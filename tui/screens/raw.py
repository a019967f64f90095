"""A vault file's raw text, opened at the faulty line (from problems or the detail pane)."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.widgets import Static

from ..safe_text import safe
from ..widgets.key_footer import KeyFooter
from ..widgets.raw_view import RawTextView, find_line, read_raw_lines
from .base import MemlensScreen


class RawScreen(MemlensScreen):
    """Numbered lines of one file; esc goes back."""

    DEFAULT_CSS = """
    RawScreen #raw-status { height: 1; background: $panel; padding: 0 1; }
    RawScreen RawTextView { height: 1fr; }
    """

    BINDINGS = [Binding("escape", "close", "Back", id="raw.close")]

    def __init__(
        self, path: Path, line: int | None = None, title: str = "", needle: str | None = None
    ) -> None:
        super().__init__()
        #: The file shown.
        self.path = path
        self.lines, self.note = read_raw_lines(path)
        if line is None and needle:
            line = find_line(self.lines, needle)
        #: 1-based line marked and scrolled to.
        self.line = line
        self.display_title = title or path.name

    def compose(self) -> ComposeResult:
        yield Static(self._status(), id="raw-status")
        yield RawTextView(self.lines, title=self.display_title, mark_line=self.line, id="raw")
        yield KeyFooter()

    def _status(self) -> Content:
        parts: list[Content | str | tuple[str, str]] = [("raw text", "bold $accent")]
        if self.line is not None:
            parts.append((f" · line {self.line}", "bold $error"))
        parts.append(f" of {len(self.lines)}")
        if self.note:
            parts.append((f" · {self.note}", "$warning"))
        parts += [" · ", safe(self.display_title)]
        return Content.assemble(*parts)

    def on_mount(self) -> None:
        self.query_one(RawTextView).focus()

    def action_close(self) -> None:
        self.dismiss(None)
