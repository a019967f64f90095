"""A yes/no modal listing what will change: nothing is written until it says yes.

Bulk actions list one entry per memory (its `Plan.describe()` lines, or why
it is refused); the body-overwrite after a conflict uses it as the explicit
second confirmation.  The modal only answers; the caller writes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from memlens.core.text.masking import scrub

from ..safe_text import safe


@dataclass(frozen=True, slots=True)
class ChangeItem:
    """One entry of a confirmation list (display text; made safe when drawn)."""

    #: What changes: a memory's title and id, or a vault and a run.
    label: str
    #: What will be written (`Plan.describe()` lines), or why it is refused.
    lines: list[str] = field(default_factory=list)
    #: True when this entry will not be changed (shown with its reason).
    refused: bool = False


def change_list(items: list[ChangeItem]) -> Content:
    """The entries as one block: changes first, refusals after, each with its lines."""
    parts: list[Content] = []
    for item in [i for i in items if not i.refused] + [i for i in items if i.refused]:
        mark = Content.styled(
            "✗ " if item.refused else "✓ ", "$error" if item.refused else "$success"
        )
        parts.append(mark + safe(item.label, "bold" if not item.refused else "$text-muted"))
        style = "$error" if item.refused else "$text-muted"
        parts.extend(Content("    ") + safe(line, style) for line in item.lines)
    if not parts:
        return Content.styled("nothing to change", "$text-muted italic")
    return Content("\n").join(parts)


def count_line(items: list[ChangeItem]) -> str:
    """`3 will change · 1 refused`."""
    ok = sum(1 for i in items if not i.refused)
    refused = len(items) - ok
    text = f"{ok} will change"
    if refused:
        text += f" · {refused} refused (left as they are)"
    return text


class ConfirmScreen(ModalScreen[bool]):
    """Lists the changes; dismisses True only on an explicit confirm (button or `y`)."""

    CSS_PATH = "confirm.tcss"

    BINDINGS = [
        Binding("escape,n", "cancel", "Cancel", id="confirm.cancel"),
        Binding("y", "confirm", "Confirm", id="confirm.confirm"),
    ]

    def __init__(
        self,
        title: str,
        items: list[ChangeItem],
        *,
        confirm_label: str = "Apply",
        note: str = "",
        danger: bool = False,
        mask: Iterable[str] = (),
    ) -> None:
        super().__init__()
        # Secrets the privacy scan found are shown masked here too (a title
        # taken from a body may hold one).
        hidden = [s for s in mask if s]
        if hidden:
            title = scrub(title, hidden)
            items = [
                replace(i, label=scrub(i.label, hidden), lines=[scrub(x, hidden) for x in i.lines])
                for i in items
            ]
        #: Heading (display text).
        self.heading = title
        #: What will change and what is refused.
        self.items = items
        self.confirm_label = confirm_label
        #: An extra line under the counts (e.g. how to undo).
        self.note = note
        #: Style the confirm button as destructive (overwrites).
        self.danger = danger

    @property
    def can_confirm(self) -> bool:
        return any(not i.refused for i in self.items)

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box"):
            yield Static(safe(self.heading, "bold"), id="confirm-title")
            counts = count_line(self.items)
            if self.note:
                counts += "\n" + self.note
            yield Static(Content(counts), id="confirm-counts")
            with VerticalScroll(id="confirm-list"):
                yield Static(change_list(self.items), id="confirm-items")
            with Horizontal(id="confirm-buttons"):
                yield Button(
                    f"{self.confirm_label} (y)",
                    variant="error" if self.danger else "primary",
                    id="confirm-yes",
                    disabled=not self.can_confirm,
                )
                yield Button("Cancel (esc)", id="confirm-no")

    def on_mount(self) -> None:
        # Focus Cancel when a wrong enter would overwrite someone's text.
        target = "#confirm-no" if self.danger or not self.can_confirm else "#confirm-yes"
        self.query_one(target, Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "confirm-yes":
            self.action_confirm()
        else:
            self.action_cancel()

    def action_confirm(self) -> None:
        if self.can_confirm:
            self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)
