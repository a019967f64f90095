"""The episode timeline: a day heading, then that day's entries, newest first."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from rich.style import Style
from rich.text import Text
from textual.message import Message

from memlens.core.episodes import DANGLING, LINKED, EpisodeEntry, by_day

from ..safe_text import safe_rich
from .line_list import LineList


@dataclass(frozen=True, slots=True)
class TimelineLine:
    """One line of the timeline: a day heading (entry None) or an entry."""

    day: str
    entry: EpisodeEntry | None = None
    #: For a heading: how many entries the day has.
    count: int = 0
    #: For a linked entry: the title of the memory it links to, if loaded.
    memory_title: str | None = None


def weekday(day: str) -> str:
    """ "Saturday" for "2026-11-21"; "" when the text is not a date."""
    try:
        return date.fromisoformat(day).strftime("%A")
    except ValueError:
        return ""


def timeline_lines(
    entries: list[EpisodeEntry], titles: dict[tuple[str, str], str] | None = None
) -> list[TimelineLine]:
    """Headings and entries in display order (entries already newest first)."""
    titles = titles or {}
    lines: list[TimelineLine] = []
    for day, group in by_day(entries):
        lines.append(TimelineLine(day, count=len(group)))
        for e in group:
            title = (
                titles.get((str(e.vault_root), e.memory_id)) if e.memory_id is not None else None
            )
            lines.append(TimelineLine(day, e, memory_title=title))
    return lines


def _styled(text: Text, style: Style) -> Text:
    text.stylize(style)
    return text


class EpisodeList(LineList):
    """The timeline; the cursor skips day headings.  Posts `Highlighted`, `Selected`."""

    DEFAULT_CSS = """
    EpisodeList > .episodes--day { color: $accent; text-style: bold; }
    EpisodeList > .episodes--dim { color: $text-muted; }
    EpisodeList > .episodes--link { color: $success; }
    EpisodeList > .episodes--broken { color: $error; }
    """

    COMPONENT_CLASSES = {"episodes--day", "episodes--dim", "episodes--link", "episodes--broken"}

    empty_text = "no episodes: cognitive-memory vaults keep them in episodes/YYYY-MM-DD.md"

    class Highlighted(Message):
        """The cursor is on an entry."""

        def __init__(self, timeline: EpisodeList, entry: EpisodeEntry) -> None:
            super().__init__()
            self.timeline = timeline
            self.entry = entry

    class Selected(Message):
        """Enter or double click on an entry."""

        def __init__(self, timeline: EpisodeList, entry: EpisodeEntry) -> None:
            super().__init__()
            self.timeline = timeline
            self.entry = entry

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        #: Every line shown.
        self.lines: list[TimelineLine] = []

    def set_lines(
        self, lines: list[TimelineLine], keep: tuple[str, str, int] | None = None
    ) -> None:
        """Show `lines`, the cursor on the entry with key `keep` if it is still there."""
        self.lines = lines
        target = 0
        if keep is not None:
            target = next(
                (i for i, ln in enumerate(lines) if ln.entry is not None and ln.entry.key == keep),
                self.cursor,
            )
        self.rows_changed(keep_cursor=self._entry_at(target, 1))

    def current(self) -> EpisodeEntry | None:
        if not self.lines:
            return None
        return self.lines[min(self.cursor, len(self.lines) - 1)].entry

    # ------------------------------------------------------------------ cursor over entries
    def _entry_at(self, index: int, step: int) -> int:
        """The nearest entry line from `index` going `step`, else the other way."""
        n = len(self.lines)
        if not n:
            return 0
        index = max(0, min(index, n - 1))
        for direction in (step, -step):
            i = index
            while 0 <= i < n:
                if self.lines[i].entry is not None:
                    return i
                i += direction
        return index

    def move_to(self, index: int) -> None:
        step = 1 if index >= self.cursor else -1
        super().move_to(self._entry_at(index, step))

    def action_first(self) -> None:
        self.move_to(0)
        self.scroll_to(y=0, animate=False)

    # ------------------------------------------------------------------ LineList
    def row_count(self) -> int:
        return len(self.lines)

    def render_header(self, width: int) -> Text:
        return Text("  time   title · type · tags → memory")

    def render_row(self, index: int, width: int) -> Text:
        line = self.lines[index]
        entry = line.entry
        if entry is None:
            text = Text("▌ ")
            text.append_text(safe_rich(line.day))
            day_name = weekday(line.day)
            if day_name:
                text.append(f" · {day_name}")
            text.append(f" · {line.count} {'entry' if line.count == 1 else 'entries'}")
            text.stylize(self._style("episodes--day"))
            return text
        dim = self._style("episodes--dim")
        text = Text("  ")
        text.append((entry.time or "--:--").ljust(6), dim)
        text.append(" ")
        text.append_text(safe_rich(entry.title))
        if entry.type:
            text.append(" · ", dim)
            text.append_text(_styled(safe_rich(entry.type), dim))
        if entry.tags:
            text.append(" · ", dim)
            text.append_text(_styled(safe_rich(", ".join(entry.tags)), dim))
        state = entry.link_state
        if state == LINKED:
            text.append("  → ", self._style("episodes--link"))
            text.append_text(_styled(safe_rich(line.memory_title or entry.memory_id or ""), dim))
        elif state == DANGLING:
            text.append("  ✗ link not found", self._style("episodes--broken"))
        return text

    def on_highlight(self, index: int) -> None:
        entry = self.lines[index].entry
        if entry is not None:
            self.post_message(self.Highlighted(self, entry))

    def on_select(self, index: int) -> None:
        entry = self.lines[index].entry
        if entry is not None:
            self.post_message(self.Selected(self, entry))
