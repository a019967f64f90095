"""The memory list: every memory of every vault, one drawn line each.

The rows live in a core `MemoryList` (sorted and filtered there); this widget
only draws the visible window and reports what the user does.  Marked rows
(the set bulk actions apply to, owned by the screen) get a `●` before the
title; with nothing marked every line looks as it always did.  Memories the
privacy scan found a secret or personal data in get a `⚠` there.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual.message import Message

from memlens.core.listing import INVALID, MemoryList, MemoryRow
from memlens.core.text.masking import scrub

from ..safe_text import safe_rich
from .line_list import LineList

#: Eighth blocks for the strength bar, emptiest first.
_EIGHTHS = " ▏▎▍▌▋▊▉█"
BAR_WIDTH = 5


def strength_bar(strength: float | None, width: int = BAR_WIDTH) -> tuple[str, str]:
    """The filled and empty parts of a bar for a 0..1 strength."""
    if strength is None:
        return "", " " * width
    eighths = round(max(0.0, min(1.0, strength)) * width * 8)
    full, part = divmod(eighths, 8)
    filled = "█" * full + (_EIGHTHS[part] if part and full < width else "")
    return filled, "·" * (width - len(filled))


def number(value: float | str | None) -> str:
    """A compact number for the importance/confidence columns."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return str(value).lower()
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return text or "0"


@dataclass(frozen=True, slots=True)
class Col:
    key: str
    label: str
    width: int
    right: bool = False


#: Fixed-width columns after the title, in display order, and the order to
#: drop them in when the terminal is narrow (first dropped first).
_FIXED = (
    Col("kind", "kind", 11),
    Col("health", "health", 14),
    Col("importance", "imp", 4, right=True),
    Col("confidence", "conf", 4, right=True),
    Col("when", "age/expiry", 11),
    Col("tags", "tags", 14),
    Col("vault", "vault", 16),
)
_DROP_ORDER = ("vault", "tags", "confidence", "importance", "when", "kind")
TITLE_MIN = 22


def layout(width: int) -> list[Col]:
    """Columns that fit in `width` cells: the title takes what is left."""
    fixed = list(_FIXED)
    for key in _DROP_ORDER:
        used = sum(c.width + 1 for c in fixed)
        if width - used >= TITLE_MIN:
            break
        fixed = [c for c in fixed if c.key != key]
    used = sum(c.width + 1 for c in fixed)
    return [Col("title", "title", max(8, width - used)), *fixed]


class MemoryTable(LineList):
    """Draws `model[start:stop]`; posts `Highlighted`, `Selected`, `SortClicked`."""

    DEFAULT_CSS = """
    MemoryTable > .memory-table--invalid { color: $error; }
    MemoryTable > .memory-table--stable { color: $success; }
    MemoryTable > .memory-table--active { color: $primary; }
    MemoryTable > .memory-table--fading { color: $warning; }
    MemoryTable > .memory-table--expired { color: $error; }
    MemoryTable > .memory-table--archived { color: $text-muted; }
    MemoryTable > .memory-table--tombstoned { color: $text-disabled; }
    MemoryTable > .memory-table--dim { color: $text-muted; }
    MemoryTable > .memory-table--marked { color: $accent; text-style: bold; }
    MemoryTable > .memory-table--secret { color: $error; text-style: bold; }
    """

    COMPONENT_CLASSES = {
        "memory-table--invalid",
        "memory-table--stable",
        "memory-table--active",
        "memory-table--fading",
        "memory-table--expired",
        "memory-table--archived",
        "memory-table--tombstoned",
        "memory-table--dim",
        "memory-table--marked",
        "memory-table--secret",
    }

    empty_text = "no memories match"

    class Highlighted(Message):
        """The cursor is on a row."""

        def __init__(self, table: MemoryTable, row: MemoryRow) -> None:
            super().__init__()
            self.table = table
            #: The highlighted row.
            self.row = row

    class Selected(Message):
        """Enter or double click on a row."""

        def __init__(self, table: MemoryTable, row: MemoryRow) -> None:
            super().__init__()
            self.table = table
            #: The chosen row.
            self.row = row

    class SortClicked(Message):
        """A click on a column header."""

        def __init__(self, table: MemoryTable, column: str) -> None:
            super().__init__()
            self.table = table
            #: Key of the clicked column (a `core.listing.SORT_KEYS` value).
            self.column = column

    def __init__(
        self,
        model: MemoryList,
        *,
        marks: Set[tuple[str, str]] = frozenset(),
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        #: The rows, their order and the filter (owned by the screen).
        self.model = model
        #: Keys (`MemoryRow.key`) of marked rows (owned by the screen).
        self.marks = marks
        #: Memories holding a secret or personal data (the app's privacy scan) and
        #: the secrets each holds: their rows get `⚠` and a masked title.
        self.secrets: Mapping[tuple[str, str], tuple[str, ...]] = {}

    def secrets_changed(self, secrets: Mapping[tuple[str, str], tuple[str, ...]]) -> None:
        """Show the privacy marker on these rows (redrawn only when they changed)."""
        if secrets != self.secrets:
            self.secrets = secrets
            self._line_cache.clear()
            self.refresh()

    def marks_changed(self) -> None:
        """Redraw after the screen changed `marks` (cached lines hold the old marks)."""
        self._line_cache.clear()
        self.refresh()

    # ------------------------------------------------------------------ LineList
    def row_count(self) -> int:
        return len(self.model)

    def current_row(self) -> MemoryRow | None:
        if not len(self.model):
            return None
        return self.model[min(self.cursor, len(self.model) - 1)]

    def _health_style(self, health: str) -> Style:
        return self.get_component_rich_style(
            f"memory-table--{health}", partial=True, default=Style()
        )

    def render_header(self, width: int) -> Text:
        text = Text()
        arrow = " ▼" if self.model.reverse else " ▲"
        for i, col in enumerate(layout(width)):
            label = col.label + (arrow if col.key == self.model.sort_column else "")
            cell = Text(label)
            cell.truncate(col.width, pad=True)
            if i:
                text.append(" ")
            text.append_text(cell)
        return text

    def render_row(self, index: int, width: int) -> Text:
        row = self.model[index]
        dim = self.get_component_rich_style("memory-table--dim", partial=True)
        health_style = self._health_style(row.health)
        text = Text()
        for i, col in enumerate(layout(width)):
            if i:
                text.append(" ")
            text.append_text(self._cell(row, col, health_style, dim))
        return text

    def _cell(self, row: MemoryRow, col: Col, health_style: Style, dim: Style) -> Text:
        w = col.width
        cell: Text
        if col.key == "title":
            title = row.title
            held = self.secrets.get(row.key) if self.secrets else None
            if held:
                title = scrub(title, held)
            cell = safe_rich(("✗ " if row.health == INVALID else "") + title)
            if row.health == INVALID:
                cell.stylize(health_style)
            if held:
                warn = self.get_component_rich_style("memory-table--secret", partial=True)
                cell = Text("⚠ ", style=warn, no_wrap=True, end="") + cell
            if self.marks and row.key in self.marks:
                marked = self.get_component_rich_style("memory-table--marked", partial=True)
                cell = Text("● ", style=marked, no_wrap=True, end="") + cell
                cell.stylize(marked)
        elif col.key == "kind":
            cell = safe_rich(row.kind)
        elif col.key == "health":
            cell = Text()
            cell.append(row.health[:8].ljust(9), health_style)
            if row.health != INVALID:
                filled, empty = strength_bar(row.strength)
                cell.append(filled, health_style)
                cell.append(empty, dim)
        elif col.key == "importance":
            cell = safe_rich(number(row.importance))
        elif col.key == "confidence":
            cell = safe_rich(number(row.confidence))
        elif col.key == "when":
            cell = safe_rich(row.when)
            if row.health == INVALID:
                cell.stylize(dim)
        elif col.key == "tags":
            cell = safe_rich(", ".join(row.tags))
            cell.stylize(dim)
        elif col.key == "vault":
            cell = safe_rich(row.vault)
            cell.stylize(dim)
        else:
            cell = Text("")
        if col.right:
            cell.truncate(w, overflow="ellipsis")
            cell.pad_left(w - cell.cell_len)
        else:
            cell.truncate(w, overflow="ellipsis", pad=True)
        return cell

    def on_highlight(self, index: int) -> None:
        self.post_message(self.Highlighted(self, self.model[index]))

    def on_select(self, index: int) -> None:
        self.post_message(self.Selected(self, self.model[index]))

    def on_header_click(self, x: int) -> None:
        pos = 0
        for col in layout(self.line_width):
            if pos <= x < pos + col.width + 1:
                self.post_message(self.SortClicked(self, col.key))
                return
            pos += col.width + 1
