"""The sidebar: every discovered vault with its format, health counts and problems."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from memlens.core.listing import INVALID
from memlens.core.model import HEALTH_ORDER

from ..safe_text import safe

#: Theme variable that colours each health in counts.
HEALTH_COLOR: dict[str, str] = {
    "stable": "$success",
    "active": "$primary",
    "fading": "$warning",
    "expired": "$error",
    "archived": "$text-muted",
    "tombstoned": "$text-disabled",
    INVALID: "$error",
}


@dataclass(slots=True)
class VaultSummary:
    """What the sidebar shows for one vault."""

    root: Path
    name: str
    format: str
    #: False until the vault is scanned.
    loaded: bool = False
    memories: int = 0
    health: Counter[str] = field(default_factory=Counter)
    problems: int = 0
    ref_problems: int = 0
    #: Set when scanning the vault failed.
    error: str | None = None


def health_line(counts: Counter[str]) -> Content:
    parts: list[Content] = []
    for h in HEALTH_ORDER:
        n = counts.get(h.value, 0)
        if n:
            parts.append(Content.assemble((str(n), f"bold {HEALTH_COLOR[h.value]}"), f" {h.value}"))
    return Content(" · ").join(parts) if parts else Content("no memories")


class VaultSidebar(OptionList):
    """Option 0 is every vault; then one option per vault.  Posts `ScopeChanged`."""

    DEFAULT_CSS = """
    VaultSidebar {
        width: 30;
        height: 1fr;
        border: none;
        border-right: tall $panel;
        background: $surface;
    }
    VaultSidebar:focus {
        border: none;
        border-right: tall $primary;
    }
    """

    class ScopeChanged(Message):
        """The user picked a vault (or all of them)."""

        def __init__(self, sidebar: VaultSidebar, root: Path | None) -> None:
            super().__init__()
            self.sidebar = sidebar
            #: The vault root to show, or None for every vault.
            self.root = root

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        #: Summaries in discovery order.
        self.summaries: list[VaultSummary] = []

    def set_summaries(self, summaries: list[VaultSummary]) -> None:
        if summaries == self.summaries:
            # Nothing to redraw (live reload calls this on every change):
            # rebuilding the options would relayout the whole screen.
            return
        highlighted = self.highlighted
        self.summaries = list(summaries)
        self.clear_options()
        self.add_options(self._build_options())
        if highlighted is not None and highlighted < self.option_count:
            self.highlighted = highlighted
        elif self.option_count:
            self.highlighted = 0

    def _build_options(self) -> list[Option]:
        total = Counter[str]()
        memories = problems = 0
        for s in self.summaries:
            total.update(s.health)
            memories += s.memories
            problems += s.problems + s.ref_problems
        head = Content.assemble(
            ("All vaults", "bold"),
            f"  {len(self.summaries)} vaults\n",
            f"{memories} memories",
            (f" · {problems} problems", "$error") if problems else "",
            "\n",
            health_line(total),
        )
        options = [Option(head, id="all")]
        for i, s in enumerate(self.summaries):
            lines: list[Content | str | tuple[str, str]] = [safe(s.name, "bold"), "\n"]
            if s.name != s.format:
                lines += [(s.format, "$text-muted"), "\n"]
            if s.error is not None:
                lines.append(("scan failed: ", "$error"))
                lines.append(safe(s.error))
            elif not s.loaded:
                lines.append(("scanning…", "$text-muted italic"))
            else:
                lines.append(f"{s.memories} memories")
                bad = s.problems + s.ref_problems
                if bad:
                    lines.append((f" · {bad} problems", "$error"))
                lines.append("\n")
                lines.append(health_line(s.health))
            options.append(Option(Content.assemble(*lines), id=f"vault-{i}"))
        return options

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self.post_message(self.ScopeChanged(self, self.root_at(event.option_index)))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.post_message(self.ScopeChanged(self, self.root_at(event.option_index)))

    def root_at(self, index: int) -> Path | None:
        if index <= 0 or index > len(self.summaries):
            return None
        return self.summaries[index - 1].root
