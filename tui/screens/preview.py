"""What the agent sees: per vault, what its agent loads at start and recalls for a prompt.

The sections come from `memlens.core.preview` (each format's own rules, as
of the app's date); this screen shows them with token estimates and a
budget bar for CORE.md, and recomputes them in a thread worker whenever the
catalog changes (an edit, a pin, a file changed on disk), at once when the
pane is showing, else when it is shown next.  The prompt box feeds the
recall steps (Project Ocean's HEARTBEAT search, experience records'
hybrid retrieval); the agent box limits the view to one agent.
"""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Input, Static
from textual.worker import get_current_worker

from memlens.core.formats.preview_model import Budget, PreviewSection
from memlens.core.preview import VaultPreview, preview_vaults
from memlens.core.scan.vault import Vault

from ..safe_text import safe
from ..widgets.key_footer import KeyFooter
from .base import MemlensScreen

#: Characters of the CORE.md budget bar.
BAR_WIDTH = 40
#: Entries shown per section (the CLI's --json has them all).
ENTRIES_SHOWN = 40

Part = Content | str | tuple[str, str]


def budget_bar(budget: Budget, width: int = BAR_WIDTH) -> Content:
    """A bar of the budget's use: green, amber from 90 %, red when over."""
    used, limit = budget.used_chars, budget.limit_chars
    share = used / limit if limit else 1.0
    filled = min(width, round(width * share))
    style = "$error" if share > 1 else ("$warning" if share >= 0.9 else "$success")
    return Content.assemble(
        ("█" * filled, style),
        ("░" * (width - filled), "$text-muted"),
        f" {used:,}/{limit:,} chars (~{-(-used // 4):,}/{-(-limit // 4):,} tokens)",
    )


def _section_lines(section: PreviewSection) -> list[Part]:
    who = (
        f"{section.agent}: "
        if section.agent and not section.title.startswith(section.agent)
        else ""
    )
    parts: list[Part] = [
        "\n  ",
        safe(who + section.title, "bold"),
        (f"  [{section.stage}]", "$text-muted"),
        (f"  ~{section.tokens:,} tokens", "$accent"),
    ]
    if section.note:
        parts += ["\n    ", safe(section.note, "$text-muted")]
    if section.budget is not None:
        parts += ["\n    ", budget_bar(section.budget)]
    for e in section.entries[:ENTRIES_SHOWN]:
        score = f"{e.score:.4g}" if e.score is not None else "-"
        parts += [
            "\n    ",
            (f"~{e.tokens:>4} tok ", "$text-muted"),
            (f"{score:>8}  ", "$accent"),
            safe(e.title, ""),
            "  ",
            safe(e.note, "$text-muted"),
        ]
    if len(section.entries) > ENTRIES_SHOWN:
        parts += ["\n    ", (f"… {len(section.entries) - ENTRIES_SHOWN} more", "$text-muted")]
    return parts


def render_previews(previews: list[VaultPreview]) -> Content:
    """Every vault's preview as one block of literal Content (memory text is data)."""
    parts: list[Part] = []
    for p in previews:
        if parts:
            parts.append("\n\n")
        parts += [
            safe(f"{p.label} · {p.rel}", "bold $accent"),
            (
                f"   load ~{p.tokens('load'):,} tokens · recall ~{p.tokens('recall'):,} tokens",
                "$text-muted",
            ),
        ]
        for section in p.sections:
            parts += _section_lines(section)
    if not parts:
        parts.append(("Nothing to preview: no vault with a load or recall step.", "$text-muted"))
    return Content.assemble(*parts)


class PreviewScreen(MemlensScreen):
    """What each loaded vault's agent loads and recalls, updated as the vaults change."""

    CSS_PATH = "preview.tcss"

    BINDINGS = [
        Binding(
            "slash",
            "focus_prompt",
            "Prompt",
            tooltip="Type a prompt for the recall steps",
            id="preview.prompt",
        ),
        Binding("escape", "leave_input", show=False, id="preview.leave"),
    ]

    class Computed(Message):
        """A worker finished the previews for request `seq`."""

        def __init__(self, seq: int, previews: list[VaultPreview]) -> None:
            super().__init__()
            self.seq = seq
            self.previews = previews

    def __init__(self) -> None:
        super().__init__()
        #: The newest previews shown (tests read them).
        self.previews: list[VaultPreview] = []
        #: Catalog changed while the pane was hidden: recompute when shown.
        self._stale = True
        self._seq = 0

    def compose(self) -> ComposeResult:
        yield Static(id="preview-bar")
        with Horizontal(id="preview-inputs"):
            yield Input(placeholder="prompt for the recall steps (enter)", id="preview-prompt")
            yield Input(placeholder="agent (all)", id="preview-agent")
        with VerticalScroll(id="preview-scroll"):
            yield Static(id="preview-body")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.watch(self.memlens, "catalog_version", self._catalog_changed, init=True)
        # The list keeps the focus, so the pane keys (1-8, q) work at once;
        # `/` goes to the prompt and escape comes back.
        self.query_one("#preview-scroll", VerticalScroll).focus()

    def action_focus_prompt(self) -> None:
        self.query_one("#preview-prompt", Input).focus()

    def action_leave_input(self) -> None:
        self.query_one("#preview-scroll", VerticalScroll).focus()

    def on_screen_resume(self) -> None:
        if self._stale:
            self.refresh_preview()

    def _catalog_changed(self, _version: int) -> None:
        self._stale = True
        if self.is_current and not self.memlens.loading:
            self.refresh_preview()
        else:
            self._update_bar()

    @on(Input.Submitted)
    def _submitted(self, _event: Input.Submitted) -> None:
        self.refresh_preview()
        self.action_leave_input()

    def refresh_preview(self) -> None:
        """Recompute every vault's preview in a worker (a newer request wins)."""
        self._stale = False
        self._seq += 1
        prompt = self.query_one("#preview-prompt", Input).value.strip() or None
        agent = self.query_one("#preview-agent", Input).value.strip() or None
        vaults = [v for v, _ in self.memlens.loaded]
        self._update_bar(computing=True)
        self.compute(self._seq, vaults, agent, prompt)

    @work(
        thread=True,
        exclusive=True,
        group="preview",
        exit_on_error=False,
        name="preview",
        description="what the agent sees",
    )
    def compute(self, seq: int, vaults: list[Vault], agent: str | None, prompt: str | None) -> None:
        previews = preview_vaults(vaults, self.memlens.as_of, agent=agent, prompt=prompt)
        if not get_current_worker().is_cancelled:
            self.post_message(self.Computed(seq, [p for p in previews if p.sections]))

    @on(Computed)
    def _computed(self, event: Computed) -> None:
        if event.seq != self._seq:
            return
        self.previews = event.previews
        self.query_one("#preview-body", Static).update(render_previews(self.previews))
        self._update_bar()

    def _update_bar(self, computing: bool = False) -> None:
        load = sum(p.tokens("load") for p in self.previews)
        recall = sum(p.tokens("recall") for p in self.previews)
        parts: list[Part] = [
            ("What the agent sees", "bold $accent"),
            f"  as of {self.memlens.as_of.isoformat()} · {len(self.previews)} vaults"
            f" · load ~{load:,} tokens · recall ~{recall:,} tokens",
        ]
        if computing or self.memlens.loading:
            parts.append((" · updating…", "$warning"))
        parts.append(("   tokens ≈ characters / 4 · /: prompt · enter: run it", "$text-muted"))
        self.query_one("#preview-bar", Static).update(Content.assemble(*parts), layout=False)
