"""A keyboard/mouse list drawn line by line: the base of every big list in memlens.

Like toolong's log view, it is a `ScrollView` that renders only the lines on
screen (`render_line`), with a small cache of rendered strips, so it costs
the same with 40 rows or 100k.  Line 0 is a sticky column header; rows start
on line 1.  Subclasses say how many rows there are and how one row looks;
this class owns the cursor, scrolling, keys and clicks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, TypeVar

from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

T = TypeVar("T")


def column_header(columns: Sequence[tuple[str, int]], last: str) -> Text:
    """A header line: each label padded to its column width, then `last`."""
    text = Text()
    for label, width in columns:
        text.append(f"{label:<{width}} ")
    text.append(last)
    return text


class LineList(ScrollView, can_focus=True):
    """A cursor over `row_count()` rows, each drawn by `render_row`."""

    DEFAULT_CSS = """
    LineList {
        overflow-x: hidden;
        overflow-y: auto;
        background: $surface;
    }
    LineList > .line-list--header {
        text-style: bold;
        color: $text-muted;
        background: $panel;
    }
    LineList > .line-list--cursor {
        background: $block-cursor-blurred-background;
    }
    LineList:focus > .line-list--cursor {
        background: $block-cursor-background;
        color: $block-cursor-foreground;
        text-style: $block-cursor-text-style;
    }
    LineList > .line-list--empty {
        color: $text-muted;
        text-style: italic;
    }
    """

    COMPONENT_CLASSES = {
        "line-list--header",
        "line-list--cursor",
        "line-list--empty",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down,j", "cursor_down", "Down", show=False, id="list.down"),
        Binding("up,k", "cursor_up", "Up", show=False, id="list.up"),
        Binding("pagedown,ctrl+d", "page_down", "Page down", show=False, id="list.page_down"),
        Binding("pageup,ctrl+u", "page_up", "Page up", show=False, id="list.page_up"),
        Binding("home,g", "first", "First", show=False, id="list.first"),
        Binding("end,G", "last", "Last", show=False, id="list.last"),
        Binding("enter", "select", "Open", id="list.select"),
    ]

    #: Index of the highlighted row.
    cursor: reactive[int] = reactive(0, always_update=True, init=False)

    #: Text shown when there are no rows.
    empty_text: str = "nothing here"

    def __init__(
        self,
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        #: Rendered rows other than the cursor row, keyed by (row index, width).
        self._line_cache: LRUCache[tuple[int, int], Strip] = LRUCache(512)

    # ------------------------------------------------------------------ for subclasses
    def row_count(self) -> int:
        raise NotImplementedError

    def render_row(self, index: int, width: int) -> Text:
        """One row as literal Rich text (user text via `safe_text`)."""
        raise NotImplementedError

    def render_header(self, width: int) -> Text:
        return Text("")

    def _style(self, name: str) -> Style:
        """The Rich style of one of the subclass's component classes."""
        return self.get_component_rich_style(name, partial=True, default=Style())

    def at_cursor(self, items: Sequence[T]) -> T | None:
        """The item of `items` under the cursor (the last one if the cursor is past them)."""
        if not items:
            return None
        return items[min(self.cursor, len(items) - 1)]

    def on_highlight(self, index: int) -> None:
        """The cursor moved to `index` (post a message nested in the subclass)."""

    def on_select(self, index: int) -> None:
        """Enter or double click on `index`."""

    def on_header_click(self, x: int) -> None:
        """A click on the header at column `x`."""

    # ------------------------------------------------------------------ data changes
    def rows_changed(self, keep_cursor: int | None = None) -> None:
        """Call after the rows change: resize, clamp the cursor, redraw."""
        self._line_cache.clear()
        count = self.row_count()
        self.virtual_size = Size(self.size.width, count + 1)
        target = self.cursor if keep_cursor is None else keep_cursor
        clamped = max(0, min(target, count - 1)) if count else 0
        self.set_reactive(LineList.cursor, clamped)
        self._scroll_cursor_visible()
        self.refresh()
        if count:
            self.on_highlight(clamped)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._line_cache.clear()

    def on_resize(self, event: events.Resize) -> None:
        self._line_cache.clear()
        self.virtual_size = Size(event.size.width, self.row_count() + 1)
        self._scroll_cursor_visible()

    # ------------------------------------------------------------------ drawing
    @property
    def _console(self) -> Console:
        return self.app.console

    @property
    def line_width(self) -> int:
        """Cells available for a line (the vertical scrollbar excluded)."""
        return self.scrollable_content_region.width

    def render_line(self, y: int) -> Strip:
        width = self.line_width
        base = self.rich_style
        if y == 0:
            header = self.render_header(width)
            style = base + self.get_component_rich_style("line-list--header")
            return self._to_strip(header, width, style)
        index = int(self.scroll_offset.y) + y - 1
        count = self.row_count()
        if count == 0:
            if y == 1:
                empty = Text(self.empty_text)
                style = base + self.get_component_rich_style("line-list--empty")
                return self._to_strip(empty, width, style)
            return Strip.blank(width, base)
        if index >= count:
            return Strip.blank(width, base)
        is_cursor = index == self.cursor
        key = (index, width)
        cached = self._line_cache.get(key) if not is_cursor else None
        if cached is not None:
            return cached
        text = self.render_row(index, width)
        style = base
        if is_cursor:
            style = base + self.get_component_rich_style("line-list--cursor")
        strip = self._to_strip(text, width, style)
        if not is_cursor:
            self._line_cache[key] = strip
        return strip

    def _to_strip(self, text: Text, width: int, style: Style) -> Strip:
        text.no_wrap = True
        text.end = ""
        segments = [
            Segment(seg.text, style + seg.style if seg.style else style)
            for seg in text.render(self._console)
        ]
        return Strip(segments).crop_extend(0, width, style)

    # ------------------------------------------------------------------ cursor
    def watch_cursor(self, old: int, new: int) -> None:
        self._scroll_cursor_visible()
        self.refresh()
        if self.row_count():
            self.on_highlight(new)

    def move_to(self, index: int) -> None:
        count = self.row_count()
        if not count:
            return
        self.cursor = max(0, min(index, count - 1))

    def _page(self) -> int:
        return max(1, self.size.height - 2)

    def _scroll_cursor_visible(self) -> None:
        visible_rows = max(1, self.size.height - 1)
        top = int(self.scroll_offset.y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + visible_rows:
            self.scroll_to(y=self.cursor - visible_rows + 1, animate=False, immediate=True)

    def action_cursor_down(self) -> None:
        self.move_to(self.cursor + 1)

    def action_cursor_up(self) -> None:
        self.move_to(self.cursor - 1)

    def action_page_down(self) -> None:
        self.move_to(self.cursor + self._page())

    def action_page_up(self) -> None:
        self.move_to(self.cursor - self._page())

    def action_first(self) -> None:
        self.move_to(0)

    def action_last(self) -> None:
        self.move_to(self.row_count() - 1)

    def action_select(self) -> None:
        if self.row_count():
            self.on_select(self.cursor)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        if offset.y == 0:
            self.on_header_click(offset.x)
            return
        index = int(self.scroll_offset.y) + offset.y - 1
        if 0 <= index < self.row_count():
            if index == self.cursor or event.chain > 1:
                self.cursor = index
                self.on_select(index)
            else:
                self.cursor = index
