"""Maintenance runs from the palette: preview what they change, then apply with progress.

A run (reindex, CORE.md, a decay run, Project Ocean's promote, ...) is
planned in a thread first; the modal lists what it will write, and nothing
is written until Apply.  Applying runs its steps one by one in a thread
worker: each step is one journaled, undoable write (a plan or an action), a
refused step is listed and the rest go on, and a progress bar counts them.
Cancel while applying stops after the current step.

The modal knows nothing about formats: the caller passes a planner that
returns a `RunPreview` (see `memlens.tui.maintenance_runs`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, ProgressBar, Static
from textual.worker import Worker, get_current_worker

from memlens.core.errors import MemlensError

from ..safe_text import safe
from .confirm import ChangeItem, change_list, count_line


@dataclass(slots=True)
class RunStep:
    """One undoable write of a run."""

    #: What it is (display text), e.g. `archive hawk/obs-... (expired)`.
    label: str
    #: The vault it writes in.
    root: Path
    #: Applies it and returns the journal entry (raises MemlensError if refused).
    apply: Callable[[], dict[str, Any]]


@dataclass(slots=True)
class RunPreview:
    """What a run will do: entries to show, and the steps that do it."""

    items: list[ChangeItem] = field(default_factory=list)
    steps: list[RunStep] = field(default_factory=list)
    #: One line above the list (e.g. `decay as of 2026-11-22`).
    summary: str = ""


@dataclass(slots=True)
class RunOutcome:
    """What applying a run did."""

    applied: list[tuple[RunStep, dict[str, Any]]] = field(default_factory=list)
    refused: list[tuple[RunStep, str]] = field(default_factory=list)
    #: Stopped by the user before every step ran.
    cancelled: bool = False


class RunPreviewScreen(ModalScreen[RunOutcome | None]):
    """Plan in a thread, list the changes, apply on request with a progress bar."""

    CSS_PATH = "run_preview.tcss"

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="run.cancel"),
        Binding("y", "apply", "Apply", id="run.apply"),
    ]

    def __init__(
        self,
        title: str,
        planner: Callable[[], RunPreview],
        *,
        on_applied: Callable[[RunOutcome], None] | None = None,
    ) -> None:
        super().__init__()
        #: The run's name (display text).
        self.heading = title
        self.planner = planner
        #: Called on the app thread once applying ends (reload what changed).
        self.on_applied = on_applied
        #: The plan, once made.
        self.preview: RunPreview | None = None
        #: The result, once applied.
        self.outcome: RunOutcome | None = None
        self._applying: Worker[None] | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="run-box"):
            yield Static(safe(self.heading, "bold $accent"), id="run-title")
            yield Static(Content.styled("Planning…", "$text-muted italic"), id="run-status")
            with VerticalScroll(id="run-list"):
                yield Static(id="run-items")
            yield ProgressBar(id="run-progress", show_eta=False)
            with Horizontal(id="run-buttons"):
                yield Button("Apply (y)", variant="primary", id="run-apply", disabled=True)
                yield Button("Cancel (esc)", id="run-cancel")

    def on_mount(self) -> None:
        self.query_one(ProgressBar).display = False
        self.query_one("#run-cancel", Button).focus()
        self._plan()

    # ------------------------------------------------------------------ planning
    @work(thread=True, exclusive=True, group="run-plan", exit_on_error=False, name="plan run")
    def _plan(self) -> None:
        try:
            preview = self.planner()
        except (MemlensError, OSError) as exc:
            self.app.call_from_thread(self._status, f"Cannot plan this run: {exc}", "$error")
            return
        self.app.call_from_thread(self._planned, preview)

    def _planned(self, preview: RunPreview) -> None:
        self.preview = preview
        lines = [preview.summary] if preview.summary else []
        if preview.steps:
            lines.append(count_line(preview.items) + " · nothing is written until Apply")
        else:
            lines.append("Nothing to change.")
        self._status("\n".join(lines))
        self.query_one("#run-items", Static).update(change_list(preview.items))
        if preview.steps:
            apply = self.query_one("#run-apply", Button)
            apply.disabled = False
            apply.focus()

    def _status(self, text: str, style: str = "") -> None:
        self.query_one("#run-status", Static).update(safe_lines(text, style))

    # ------------------------------------------------------------------ applying
    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "run-apply":
            self.action_apply()
        else:
            self.action_cancel()

    def action_apply(self) -> None:
        preview = self.preview
        if preview is None or not preview.steps or self._applying is not None:
            return
        if self.outcome is not None:
            return
        self.query_one("#run-apply", Button).disabled = True
        bar = self.query_one(ProgressBar)
        bar.update(total=len(preview.steps), progress=0)
        bar.display = True
        self._status(f"Applying {len(preview.steps)} step(s)…")
        self._applying = self._apply(preview.steps)

    @work(thread=True, exclusive=True, group="run-apply", exit_on_error=False, name="apply run")
    def _apply(self, steps: list[RunStep]) -> None:
        worker = get_current_worker()
        outcome = RunOutcome()
        for step in steps:
            if worker.is_cancelled:
                outcome.cancelled = True
                break
            try:
                outcome.applied.append((step, step.apply()))
            except (MemlensError, OSError) as exc:
                outcome.refused.append((step, str(exc)))
            self.app.call_from_thread(self.query_one(ProgressBar).advance, 1)
        self.app.call_from_thread(self._finished, outcome)

    def _finished(self, outcome: RunOutcome) -> None:
        self.outcome = outcome
        self._applying = None
        done = f"{len(outcome.applied)} applied"
        if outcome.refused:
            done += f", {len(outcome.refused)} refused"
        if outcome.cancelled:
            done += ", stopped before the rest"
        if outcome.applied:
            done += " · u undoes the last one (memlens undo PATH too)"
        self._status(done, "$success" if not outcome.refused else "$warning")
        items = [ChangeItem(s.label, [why], refused=True) for s, why in outcome.refused]
        if items:
            self.query_one("#run-items", Static).update(change_list(items))
        close = self.query_one("#run-cancel", Button)
        close.label = "Close (esc)"
        close.focus()
        if self.on_applied is not None:
            self.on_applied(outcome)

    def action_cancel(self) -> None:
        if self._applying is not None:
            # Stops after the current step: each step is whole or not at all.
            self._applying.cancel()
            self._status("Stopping after the current step…", "$warning")
            return
        self.dismiss(self.outcome)


def safe_lines(text: str, style: str = "") -> Content:
    """Several lines of display text, each made safe."""
    return Content("\n").join(safe(line, style) for line in text.split("\n"))


class ThresholdScreen(ModalScreen[tuple[float, bool] | None]):
    """Project Ocean promote: the confidence threshold and `--require-verified`."""

    CSS_PATH = "run_preview.tcss"

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="threshold.cancel")]

    def __init__(self, threshold: float = 0.8) -> None:
        super().__init__()
        self.threshold = threshold

    def compose(self) -> ComposeResult:
        with Vertical(id="threshold-box"):
            yield Static(Content.styled("Project Ocean promote", "bold $accent"))
            yield Static(
                Content.styled(
                    "Copies each agent observation with confidence at or above the "
                    "threshold to shared/observations/ (a preview comes first).",
                    "$text-muted",
                )
            )
            with Horizontal(classes="threshold-row"):
                yield Label("threshold", classes="threshold-key")
                yield Input(str(self.threshold), id="threshold-value", compact=True)
            yield Checkbox("only verified observations", id="threshold-verified")
            yield Static("", id="threshold-status")
            with Horizontal(id="threshold-buttons"):
                yield Button("Preview", variant="primary", id="threshold-ok")
                yield Button("Cancel (esc)", id="threshold-cancel")

    def on_mount(self) -> None:
        self.query_one("#threshold-value", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "threshold-ok":
            self._submit()
        else:
            self.action_cancel()

    def _submit(self) -> None:
        text = self.query_one("#threshold-value", Input).value.strip()
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not 0.0 <= value <= 1.0:
            self.query_one("#threshold-status", Static).update(
                safe(f"threshold: {text!r} is not a number from 0 to 1", "$error")
            )
            return
        self.dismiss((value, self.query_one(Checkbox).value))

    def action_cancel(self) -> None:
        self.dismiss(None)
