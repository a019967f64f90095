"""`?`: every key of every screen, and the filter syntax."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

#: Filter syntax, shown under the keys.
FILTER_HELP = """\
Panes: tab / shift+tab move between vaults, filter, list and detail; enter opens, esc goes back.
Mouse: click a row, double click to open, click a header to sort, wheel to scroll.
Filter (/): every word must match the title, tags or id, case-insensitive.
  tag:x  kind:x  health:x  status:x  vault:x  format:x  id:x  narrow by one field.
  Typing more narrows the current result; esc clears the filter.
Sort: s cycles the column, S reverses; click a column header to sort by it.
Command palette: ctrl+p (every command, themes, sort columns, screens)."""


def _section(title: str, bindings: list[BindingType], key_display: dict[str, str]) -> Content:
    lines: list[Content] = [Content.styled(title, "bold $accent")]
    for b in bindings:
        if not isinstance(b, Binding) or not b.description:
            continue
        keys = ", ".join(key_display.get(k, k) for k in b.key.split(","))
        lines.append(Content.assemble((f"  {keys:<22}", "bold"), b.tooltip or b.description))
    return Content("\n").join(lines)


class HelpScreen(ModalScreen[None]):
    """Keys per screen, built from the bindings themselves so it never goes stale."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 80;
        max-width: 95%;
        height: 85%;
        border: thick $accent;
        background: $surface;
        padding: 0 1;
    }
    HelpScreen Static { margin-bottom: 1; }
    """

    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close", id="help.close")]

    def compose(self) -> ComposeResult:
        from ..app import MemlensApp
        from ..widgets.detail import MemoryDetail
        from ..widgets.line_list import LineList
        from .episodes import EpisodesScreen
        from .main import MainScreen
        from .problems import ProblemsScreen
        from .triage import TriageScreen

        keys = {
            "slash": "/",
            "question_mark": "?",
            "left_square_bracket": "[",
            "right_square_bracket": "]",
            "left_curly_bracket": "{",
            "right_curly_bracket": "}",
            "escape": "esc",
        }
        sections = [
            ("Everywhere", MemlensApp.BINDINGS),
            ("Lists", LineList.BINDINGS),
            ("Memories screen", MainScreen.BINDINGS),
            ("Detail pane", MemoryDetail.BINDINGS),
            ("Triage screen", TriageScreen.BINDINGS),
            ("Problems screen", ProblemsScreen.BINDINGS),
            ("Episodes screen", EpisodesScreen.BINDINGS),
        ]
        with VerticalScroll():
            yield Static(Content.styled("memlens keys", "bold"))
            for title, bindings in sections:
                yield Static(_section(title, list(bindings), keys))
            yield Static(Content(FILTER_HELP))
