"""The promote form: the options each format's promote takes, for the chosen memories.

What promote means differs per format (DESIGN.md action table); the options
are the ones each writer documents in `core/formats/<format>/writer.py`,
declared in the format's `FormatInfo` (`promote_note`, `promote_options`):

- cognitive-memory: `type` (only `insight`) and/or a higher `importance`;
- dream-cycle: a longer-lived `type` and/or a higher `importance`;
- observation-v1: `topic`, `domain`, `statement` of the new comprehension
  (several observations of one vault make one comprehension);
- experience-records: the derived record's `text` and `type`;
- project-ocean: none (a copy to shared/observations/).

Blank inputs are left out, so the writer's defaults apply.  With one memory
the form plans the promote before closing, so a refusal is shown here; with
several, the confirmation list shows each refusal.
"""

from __future__ import annotations

from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from memlens.core.errors import ConflictError, MemlensError
from memlens.core.formats import info_for
from memlens.core.formats.adapter import PromoteOption
from memlens.core.model import Memory
from memlens.core.write.actions import Action

from ..safe_text import safe


def parse_options(
    fields: tuple[PromoteOption, ...], texts: dict[str, str]
) -> tuple[dict[str, Any], dict[str, str]]:
    """(options, {option: error}) from the typed texts; blanks are left out."""
    options: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for f in fields:
        text = texts.get(f.key, "").strip()
        if not text:
            continue
        if f.number:
            try:
                options[f.key] = float(text)
            except ValueError:
                errors[f.key] = f"{f.key}: {text!r} is not a number"
        else:
            options[f.key] = text
    return options, errors


class PromoteScreen(ModalScreen[dict[str, dict[str, Any]] | None]):
    """Options per format of the chosen memories; dismisses {format: options} or None."""

    CSS_PATH = "promote.tcss"

    BINDINGS = [
        Binding("ctrl+s", "promote", "Promote", id="promote.confirm"),
        Binding("escape", "cancel", "Cancel", id="promote.cancel"),
    ]

    def __init__(self, memories: list[Memory], extra: dict[str, Any] | None = None) -> None:
        super().__init__()
        #: The memories to promote (one, or the marked set).
        self.memories = memories
        #: Options every format gets (`as_of`).
        self.extra = dict(extra or {})
        #: Formats present, in the order of their first memory.
        self.formats: list[str] = list(dict.fromkeys(m.format for m in memories))

    def compose(self) -> ComposeResult:
        count = len(self.memories)
        with Vertical(id="promote-box"):
            heading = (
                safe(self.memories[0].title, "bold")
                if count == 1
                else Content.styled(f"{count} memories", "bold")
            )
            yield Static(Content.assemble(("Promote  ", "bold $accent"), heading))
            with VerticalScroll(id="promote-fields"):
                for fi, fmt in enumerate(self.formats):
                    n = sum(1 for m in self.memories if m.format == fmt)
                    yield Static(
                        Content.assemble(
                            (fmt, "bold"),
                            (f"  ({n})  " if count > 1 else "  ", "$text-muted"),
                            (info_for(fmt).promote_note, "$text-muted"),
                        ),
                        classes="promote-format",
                    )
                    for f in info_for(fmt).promote_options:
                        with Horizontal(classes="promote-row"):
                            yield Label(f.key, classes="promote-key")
                            yield Input(
                                f.default,
                                placeholder=f.placeholder,
                                id=f"opt-{fi}-{f.key}",
                                classes="promote-input",
                                compact=True,
                            )
            yield Static("", id="promote-status")
            with Horizontal(id="promote-buttons"):
                yield Button("Promote (ctrl+s)", variant="primary", id="promote-yes")
                yield Button("Cancel (esc)", id="promote-no")

    def on_mount(self) -> None:
        inputs = self.query(Input)
        if inputs:
            inputs.first().focus()
        else:
            self.query_one("#promote-yes", Button).focus()

    def options(self) -> tuple[dict[str, dict[str, Any]], list[str]]:
        """({format: options with `extra`}, errors) from the form."""
        out: dict[str, dict[str, Any]] = {}
        errors: list[str] = []
        for fi, fmt in enumerate(self.formats):
            fields = info_for(fmt).promote_options
            texts = {f.key: self.query_one(f"#opt-{fi}-{f.key}", Input).value for f in fields}
            options, bad = parse_options(fields, texts)
            errors += [f"{fmt}: {e}" for e in bad.values()]
            out[fmt] = {**self.extra, **options}
        return out, errors

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "promote-yes":
            self.action_promote()
        else:
            self.action_cancel()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_promote()

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_promote(self) -> None:
        options, errors = self.options()
        if errors:
            self._status("; ".join(errors))
            return
        if len(self.memories) == 1:
            self._status("Checking…", error=False)
            self._check(options)
        else:
            self.dismiss(options)

    @work(thread=True, exclusive=True, group="promote-check", exit_on_error=False, name="check")
    def _check(self, options: dict[str, dict[str, Any]]) -> None:
        memory = self.memories[0]
        try:
            Action("promote", memory, options[memory.format]).plan()
        except ConflictError:
            # Applying raises it again, and the conflict modal takes over.
            self.app.call_from_thread(self.dismiss, options)
            return
        except (MemlensError, OSError) as exc:
            self.app.call_from_thread(self._status, f"Refused: {exc}")
            return
        self.app.call_from_thread(self.dismiss, options)

    def _status(self, text: str, *, error: bool = True) -> None:
        self.query_one("#promote-status", Static).update(
            safe(text, "$error" if error else "$text-muted")
        )
