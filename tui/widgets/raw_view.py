"""Raw text of a vault file, line-drawn, with the faulty line marked.

Invalid files are shown as they are on disk: bytes that are not UTF-8 appear
as `\\xe9`-style escapes (never guessed), control characters as visible
stand-ins, and CRLF line ends are dropped as line ends.
"""

from __future__ import annotations

import os
from pathlib import Path

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.message import Message

from memlens.core.safe_io import open_regular

from ..safe_text import visible
from .line_list import LineList

#: Files larger than this are read only up to it (the viewer is for looking).
MAX_RAW_BYTES = 8 * 1024 * 1024


def read_raw_lines(path: Path) -> tuple[list[str], str | None]:
    """The file's lines as text, and an error message if it could not be read."""
    try:
        # Never wait on a FIFO put where the memory file was.
        with os.fdopen(open_regular(path), "rb") as fh:
            data = fh.read(MAX_RAW_BYTES + 1)
    except OSError as exc:
        return [], f"cannot read {path.name}: {exc.strerror or exc}"
    note = None
    if len(data) > MAX_RAW_BYTES:
        data = data[:MAX_RAW_BYTES]
        note = f"only the first {MAX_RAW_BYTES // (1024 * 1024)} MiB are shown"
    text = data.decode("utf-8", errors="backslashreplace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    # A CRLF line end is a line end, not content; a lone CR stays visible.
    return [line[:-1] if line.endswith("\r") else line for line in lines], note


def find_line(lines: list[str], needle: str) -> int | None:
    """1-based number of the first line containing `needle` (for jumping to a memory)."""
    if not needle:
        return None
    for number, line in enumerate(lines, start=1):
        if needle in line:
            return number
    return None


class RawTextView(LineList):
    """Numbered lines of one file; the cursor starts on `mark_line`."""

    DEFAULT_CSS = """
    RawTextView > .raw-text--gutter { color: $text-muted; }
    RawTextView > .raw-text--mark { background: $error 30%; }
    """

    COMPONENT_CLASSES = {"raw-text--gutter", "raw-text--mark"}

    BINDINGS = [Binding("enter", "select", "Open", show=False, id="raw.select")]

    empty_text = "(empty file)"

    class LineHighlighted(Message):
        def __init__(self, view: RawTextView, line: int) -> None:
            super().__init__()
            self.view = view
            #: 1-based line number under the cursor.
            self.line = line

    def __init__(
        self,
        lines: list[str],
        *,
        title: str = "",
        mark_line: int | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        #: The file's lines.
        self.lines = lines
        #: Shown in the header line (already a display string).
        self.title = title
        #: 1-based line to mark as the faulty one.
        self.mark_line = mark_line

    def on_mount(self) -> None:
        self.rows_changed()
        if self.mark_line is not None:
            self.call_after_refresh(self.center_on, self.mark_line - 1)

    def center_on(self, index: int) -> None:
        """Put line `index` (0-based) under the cursor, in the middle of the view."""
        self.move_to(index)
        top = max(0, index - max(1, self.size.height - 1) // 2)
        self.scroll_to(y=top, animate=False)

    def row_count(self) -> int:
        return len(self.lines)

    def render_header(self, width: int) -> Text:
        return Text(visible(self.title))

    def render_row(self, index: int, width: int) -> Text:
        gutter_width = len(str(len(self.lines)))
        text = Text(f"{index + 1:>{gutter_width}} ", style=self._gutter())
        text.append(visible(self.lines[index].expandtabs(4)))
        if self.mark_line is not None and index == self.mark_line - 1:
            text.stylize(self.get_component_rich_style("raw-text--mark", partial=True))
            text.append(" " * max(0, width - text.cell_len))
            text.stylize(self.get_component_rich_style("raw-text--mark", partial=True))
        return text

    def _gutter(self) -> Style:
        return self.get_component_rich_style("raw-text--gutter", partial=True)

    def on_highlight(self, index: int) -> None:
        self.post_message(self.LineHighlighted(self, index + 1))
