"""Decay triage: what is fading, across every vault, and what will fade soon.

The triage date starts at the app's `as_of` and moves a day or a week at a
time (time travel); every move recomputes decay in a thread worker.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date, timedelta

from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Sparkline, Static
from textual.worker import get_current_worker

from memlens.core.listing import (
    MemoryRow,
    forecast_rows,
    health_counts,
    rows_for_vault,
    strength_histogram,
    triage_groups,
)
from memlens.core.model import HEALTH_ORDER, Health
from memlens.core.scan.vault import Vault

from ..messages import OpenMemory
from ..safe_text import safe, safe_rich
from ..widgets.key_footer import KeyFooter
from ..widgets.line_list import LineList
from ..widgets.memory_table import number, strength_bar
from ..widgets.vault_sidebar import HEALTH_COLOR
from .base import MemlensScreen

HORIZONS = (7, 30, 90)
BAR_CELLS = 30


@dataclass(frozen=True, slots=True)
class TriageLine:
    """A group header (`row` None) or one memory of the group."""

    health: Health
    row: MemoryRow | None = None
    count: int = 0


class TriageTable(LineList):
    """Memories grouped by health, soonest expiry / lowest strength first."""

    DEFAULT_CSS = """
    TriageTable > .triage--group { text-style: bold; color: $accent; }
    TriageTable > .triage--dim { color: $text-muted; }
    TriageTable > .triage--stable { color: $success; }
    TriageTable > .triage--active { color: $primary; }
    TriageTable > .triage--fading { color: $warning; }
    TriageTable > .triage--expired { color: $error; }
    TriageTable > .triage--archived { color: $text-muted; }
    TriageTable > .triage--tombstoned { color: $text-disabled; }
    """

    COMPONENT_CLASSES = {
        "triage--group",
        "triage--dim",
        "triage--stable",
        "triage--active",
        "triage--fading",
        "triage--expired",
        "triage--archived",
        "triage--tombstoned",
    }

    empty_text = "computing…"

    class Selected(Message):
        def __init__(self, table: TriageTable, row: MemoryRow) -> None:
            super().__init__()
            self.table = table
            #: The chosen memory's row.
            self.row = row

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        #: Header and memory lines, in display order.
        self.lines: list[TriageLine] = []

    def set_lines(self, lines: list[TriageLine]) -> None:
        current = self.lines[self.cursor] if 0 <= self.cursor < len(self.lines) else None
        key = current.row.key if current is not None and current.row is not None else None
        self.lines = lines
        position = 1 if len(lines) > 1 else 0
        if key is not None:
            for i, line in enumerate(lines):
                if line.row is not None and line.row.key == key:
                    position = i
                    break
        self.rows_changed(keep_cursor=position)

    def row_count(self) -> int:
        return len(self.lines)

    def render_header(self, width: int) -> Text:
        return Text(
            f"  {'memory':<{max(10, width - 58) - 2}} {'vault':<16} {'kind':<10} "
            f"{'strength':<13} {'expires/age':<12}"
        )

    def render_row(self, index: int, width: int) -> Text:
        line = self.lines[index]
        colour = self._style(f"triage--{line.health.value}")
        if line.row is None:
            text = Text(f"▌ {line.health.value.upper()}", style=colour + Style(bold=True))
            text.append(f"  {line.count}", style=self._style("triage--dim"))
            return text
        row = line.row
        title_width = max(10, width - 58)
        text = Text("  ")
        title = safe_rich(row.title)
        title.truncate(title_width - 2, overflow="ellipsis", pad=True)
        text.append_text(title)
        for value, w in ((row.vault, 16), (row.kind, 10)):
            cell = safe_rich(value)
            cell.truncate(w, overflow="ellipsis", pad=True)
            text.append(" ")
            text.append_text(cell)
        filled, empty = strength_bar(row.strength)
        text.append(" ")
        text.append(filled, style=colour)
        text.append(empty, style=self._style("triage--dim"))
        text.append(f" {number(row.strength):<7}")
        when = safe_rich(row.when)
        when.truncate(12, overflow="ellipsis", pad=True)
        text.append(" ")
        text.append_text(when)
        return text

    def on_select(self, index: int) -> None:
        row = self.lines[index].row
        if row is not None:
            self.post_message(self.Selected(self, row))


class TriageScreen(MemlensScreen):
    """Memories across all vaults by urgency, the distribution and a forecast."""

    CSS_PATH = "triage.tcss"

    BINDINGS = [
        Binding(
            "left_square_bracket",
            "shift_days(-1)",
            "-1 day",
            tooltip="Triage date one day back",
            id="triage.day_back",
        ),
        Binding(
            "right_square_bracket",
            "shift_days(1)",
            "+1 day",
            tooltip="Triage date one day forward",
            id="triage.day_forward",
        ),
        Binding(
            "left_curly_bracket",
            "shift_days(-7)",
            "-1 week",
            tooltip="Triage date one week back",
            id="triage.week_back",
        ),
        Binding(
            "right_curly_bracket",
            "shift_days(7)",
            "+1 week",
            tooltip="Triage date one week forward",
            id="triage.week_forward",
        ),
        Binding(
            "0", "reset_date", "Reset date", tooltip="Back to the app's date", id="triage.reset"
        ),
        Binding(
            "o",
            "toggle_order",
            "Order",
            tooltip="Order each group by soonest expiry or by lowest strength",
            id="triage.order",
        ),
    ]

    class Computed(Message):
        """The worker finished one triage date."""

        def __init__(
            self,
            as_of: date,
            order: str,
            lines: list[TriageLine],
            histogram: list[int],
            counts: Counter[str],
            forecast: dict[int, list[MemoryRow]],
        ) -> None:
            super().__init__()
            self.as_of = as_of
            self.order = order
            self.lines = lines
            self.histogram = histogram
            self.counts = counts
            self.forecast = forecast

    def __init__(self) -> None:
        super().__init__()
        #: The date decay is judged at on this screen.
        self.triage_date: date = date.min
        #: The date last computed (None while computing).
        self.shown_date: date | None = None
        #: `expiry` (soonest first) or `strength` (weakest first), see core.listing.
        self.order = "expiry"

    def compose(self) -> ComposeResult:
        yield Static(id="triage-bar")
        with Horizontal(id="triage-charts"):
            yield Static(id="triage-health")
            with Vertical(id="triage-strength"):
                yield Static("Strength distribution", classes="chart-title")
                yield Sparkline([0], id="strength-spark")
                yield Static(id="strength-axis")
            yield Static(id="triage-forecast")
        yield TriageTable(id="triage-list")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.triage_date = self.memlens.as_of
        self.watch(self.memlens, "catalog_version", self._catalog_changed, init=True)
        self.query_one(TriageTable).focus()

    def _catalog_changed(self, _version: int) -> None:
        self._recompute()

    # ------------------------------------------------------------------ time travel
    def action_shift_days(self, days: int) -> None:
        self.triage_date += timedelta(days=days)
        self._recompute()

    def action_toggle_order(self) -> None:
        self.order = "strength" if self.order == "expiry" else "expiry"
        self._recompute()

    def action_reset_date(self) -> None:
        self.triage_date = self.memlens.as_of
        self._recompute()

    def _recompute(self) -> None:
        self.shown_date = None
        self._update_bar()
        app = self.memlens
        vaults = [v for v, _ in app.loaded]
        # At the app's own date the rows already exist; reuse them.
        rows = [r for _, rs in app.loaded for r in rs] if self.triage_date == app.as_of else None
        self.compute(self.triage_date, vaults, rows, self.order)

    # description: not the repr of the arguments (every memory, bodies read from files).
    @work(
        thread=True,
        exclusive=True,
        group="triage",
        exit_on_error=False,
        name="triage",
        description="triage",
    )
    def compute(
        self, as_of: date, vaults: list[Vault], rows: list[MemoryRow] | None, order: str
    ) -> None:
        """Decay at `as_of` for every memory, grouped, plus distribution and forecast."""
        worker = get_current_worker()
        if rows is None:
            rows = []
            for v in vaults:
                if worker.is_cancelled:
                    return
                rows.extend(rows_for_vault(v, as_of, len(rows)))
        lines: list[TriageLine] = []
        for health, members in triage_groups(rows, order):
            lines.append(TriageLine(health, None, len(members)))
            lines.extend(TriageLine(health, r) for r in members)
        forecast = forecast_rows(rows, as_of, HORIZONS, cancelled=lambda: worker.is_cancelled)
        if worker.is_cancelled:
            return
        self.post_message(
            self.Computed(
                as_of, order, lines, strength_histogram(rows), health_counts(rows), forecast
            )
        )

    @on(Computed)
    def _computed(self, event: Computed) -> None:
        if event.as_of != self.triage_date or event.order != self.order:
            return  # a stale result from before the last key press
        self.shown_date = event.as_of
        self.query_one(TriageTable).set_lines(event.lines)
        self.query_one("#strength-spark", Sparkline).data = event.histogram
        total = sum(event.histogram)
        self.query_one("#strength-axis", Static).update(
            Content.styled(f"strength 0 → 1 · {total} memories", "$text-muted")
        )
        self.query_one("#triage-health", Static).update(self._health_bars(event.counts))
        self.query_one("#triage-forecast", Static).update(self._forecast(event.forecast))
        self._update_bar()

    def _update_bar(self) -> None:
        app = self.memlens
        shift = (self.triage_date - app.as_of).days
        parts: list[Content | str | tuple[str, str]] = [
            ("Decay triage", "bold $accent"),
            " as of ",
            (self.triage_date.isoformat(), "bold"),
        ]
        if shift:
            parts.append((f" ({shift:+d} days)", "$warning"))
        parts.append(" · by soonest expiry" if self.order == "expiry" else " · by lowest strength")
        if self.shown_date is None or app.loading:
            parts.append((" · computing…", "$text-muted"))
        parts.append(("   [ ] day · { } week · 0 reset · o order", "$text-muted"))
        self.query_one("#triage-bar", Static).update(Content.assemble(*parts), layout=False)

    @staticmethod
    def _health_bars(counts: Counter[str]) -> Content:
        most = max([counts.get(h.value, 0) for h in HEALTH_ORDER] + [1])
        lines = [Content.styled("Health", "bold")]
        for h in HEALTH_ORDER:
            n = counts.get(h.value, 0)
            cells = round(n / most * 20) if n else 0
            lines.append(
                Content.assemble(
                    f"{h.value:<11}",
                    ("█" * cells, HEALTH_COLOR[h.value]),
                    f" {n}",
                )
            )
        return Content("\n").join(lines)

    @staticmethod
    def _forecast(forecast: dict[int, list[MemoryRow]]) -> Content:
        lines = [Content.styled("Fades within", "bold")]
        for h in HORIZONS:
            n = len(forecast.get(h, []))
            lines.append(Content.assemble(f"{h:>3} days  ", (str(n), "bold $warning"), " memories"))
        soon = forecast.get(HORIZONS[0], [])
        if soon:
            lines.append(Content.styled("next up:", "$text-muted"))
            for r in sorted(soon, key=lambda r: (r.expires_on or date.max, r.order))[:3]:
                title = safe(r.title).truncate(26, ellipsis=True)
                lines.append(Content.assemble(" · ", title))
        return Content("\n").join(lines)

    @on(TriageTable.Selected)
    def _open(self, event: TriageTable.Selected) -> None:
        self.post_message(OpenMemory(event.row.vault_root, event.row.id))
