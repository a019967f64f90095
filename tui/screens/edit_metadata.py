"""The metadata editor: one input per native field, each checked by the format's writer.

Every field is shown as the detail pane shows it (`field_text`: strings as
they are, other values as JSON).  When an input changes, the value is planned
as a `set` action of that one field (planning never writes); a refusal is
shown beside the field with the writer's own words.  Save plans every changed
field together and, when that plan is accepted, dismisses with the changes;
the caller applies them (conflicts and refusals then take the app's usual
path).  One extra row adds a field the memory does not have yet.

Value parsing: a field whose current value is a string takes the typed text
as it is (so `no`, `10:00` or `2026-01-01` stay strings); any other field
reads its text as one YAML value with the safe loader (`0.9`, `[a, b]`,
`true`, a date).  An empty input removes the field (the writer refuses that
for required fields).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Button, Input, Label, Static
from textual.worker import get_current_worker

from memlens.core.actions import Action
from memlens.core.errors import ConflictError, MemlensError, RefusedError
from memlens.core.model import Memory
from memlens.core.text.frontmatter import SafeYamlLoader

from ..safe_text import has_controls, safe, visible
from ..widgets.detail import field_text

#: Seconds an input must rest before its value is checked.
VALIDATE_DELAY = 0.2
#: Index of the "new field" row in `EditMetadataScreen.rows`.
NEW_FIELD = -1


def input_text(value: Any) -> str:
    """The text an input starts with for a field value."""
    return "" if value is None else field_text(value)


def parse_value(original: Any, text: str, *, known: bool = True) -> Any:
    """The value to `set` for `text` typed over `original` (see the module docstring)."""
    if not text.strip():
        return None
    if known and isinstance(original, str):
        return text
    try:
        return yaml.load(text, Loader=SafeYamlLoader)
    except yaml.YAMLError as exc:
        detail = str(exc).splitlines()[0] if str(exc) else "syntax error"
        raise RefusedError(f"not a valid value ({detail})") from None


def field_of_message(message: str, names: list[str]) -> str | None:
    """Which field a writer's refusal names (`importance: ...`), if any."""
    for name in sorted(names, key=len, reverse=True):
        bare = name.removeprefix("dc:")
        for candidate in (name, bare, f"dc:{bare}"):
            if message.startswith(candidate + ":") or message.startswith(candidate + " "):
                return name
    return None


@dataclass(slots=True)
class FieldRow:
    """One editable field: its name, the value read, the text it started with."""

    key: str
    original: Any
    initial: str
    #: False for a field the memory does not have (the "new field" row).
    known: bool = True
    #: Shown but not editable (holds control characters).
    locked: bool = False
    #: The last check's refusal, if any.
    error: str | None = None


class EditMetadataScreen(ModalScreen[dict[str, Any] | None]):
    """Edit a memory's native fields; dismisses with the changes to `set`, or None."""

    CSS_PATH = "edit_metadata.tcss"

    BINDINGS = [
        Binding("ctrl+s", "save", "Save", id="metadata.save"),
        Binding("escape", "cancel", "Cancel", id="metadata.cancel"),
    ]

    def __init__(self, memory: Memory) -> None:
        super().__init__()
        #: The memory as read; every check and the save are planned on it.
        self.memory = memory
        #: One row per native field, in file order.
        self.rows: list[FieldRow] = []
        for key, value in memory.fields.items():
            text = input_text(value)
            self.rows.append(FieldRow(str(key), value, text, locked=has_controls(text)))
        self._dirty: set[int] = set()
        self._timer: Timer | None = None

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        m = self.memory
        with Vertical(id="metadata-box"):
            yield Static(
                Content.assemble(("Edit metadata  ", "bold $accent"), safe(m.title, "bold")),
                id="metadata-title",
            )
            yield Static(
                Content.assemble(safe(f"{m.format} · {m.id} · {m.path}", "$text-muted")),
                id="metadata-where",
            )
            with VerticalScroll(id="metadata-fields"):
                for i, row in enumerate(self.rows):
                    with Horizontal(classes="metadata-row"):
                        yield Label(safe(row.key), classes="metadata-key")
                        yield Input(
                            visible(row.initial) if row.locked else row.initial,
                            id=f"field-{i}",
                            classes="metadata-input",
                            compact=True,
                            disabled=row.locked,
                        )
                        yield Static(
                            Content.styled("control characters: edit the file with e", "$warning")
                            if row.locked
                            else "",
                            id=f"msg-{i}",
                            classes="metadata-msg",
                        )
                with Horizontal(classes="metadata-row", id="metadata-new"):
                    yield Input(
                        placeholder="new field",
                        id="new-key",
                        classes="metadata-key",
                        compact=True,
                    )
                    yield Input(
                        placeholder="value", id="new-value", classes="metadata-input", compact=True
                    )
                    yield Static("", id="msg-new", classes="metadata-msg")
            yield Static(
                Content.styled(
                    "Each change is checked by the format's rules as you type; "
                    "an empty value removes a field.",
                    "$text-muted",
                ),
                id="metadata-status",
            )
            with Horizontal(id="metadata-buttons"):
                yield Button("Save (ctrl+s)", variant="primary", id="metadata-save")
                yield Button("Cancel (esc)", id="metadata-cancel")

    def on_mount(self) -> None:
        first = next((i for i, r in enumerate(self.rows) if not r.locked), None)
        if first is not None:
            self.query_one(f"#field-{first}", Input).focus()

    # ------------------------------------------------------------------ values
    def _text(self, index: int) -> str:
        if index == NEW_FIELD:
            return self.query_one("#new-value", Input).value
        return self.query_one(f"#field-{index}", Input).value

    def _new_key(self) -> str:
        return self.query_one("#new-key", Input).value.strip()

    def changed(self, index: int) -> bool:
        if index == NEW_FIELD:
            return bool(self._new_key())
        row = self.rows[index]
        return not row.locked and self._text(index) != row.initial

    def change_of(self, index: int) -> tuple[str, Any]:
        """(field, value) for one row; RefusedError if the text is no valid value."""
        if index == NEW_FIELD:
            key = self._new_key()
            existing = next((r for r in self.rows if r.key == key), None)
            if existing is not None:
                raise RefusedError(f"{key} is already a field: edit it above")
            return key, parse_value(None, self._text(NEW_FIELD), known=False)
        row = self.rows[index]
        return row.key, parse_value(row.original, self._text(index))

    def changes(self) -> dict[str, Any]:
        """Every changed field and its new value (RefusedError on a bad value)."""
        out: dict[str, Any] = {}
        for index in [*range(len(self.rows)), NEW_FIELD]:
            if self.changed(index):
                key, value = self.change_of(index)
                out[key] = value
        return out

    # ------------------------------------------------------------------ checks as you type
    @on(Input.Changed)
    def _input_changed(self, event: Input.Changed) -> None:
        widget_id = event.input.id or ""
        if widget_id in ("new-key", "new-value"):
            self._dirty.add(NEW_FIELD)
        elif widget_id.startswith("field-"):
            self._dirty.add(int(widget_id.removeprefix("field-")))
        if self._timer is None:
            self._timer = self.set_timer(VALIDATE_DELAY, self._validate_dirty)
        else:
            self._timer.reset()

    def _validate_dirty(self) -> None:
        self._timer = None
        dirty, self._dirty = self._dirty, set()
        checks: list[tuple[int, tuple[str, Any] | str | None]] = []
        for index in sorted(dirty):
            if not self.changed(index):
                checks.append((index, None))
                continue
            try:
                checks.append((index, self.change_of(index)))
            except RefusedError as exc:
                checks.append((index, str(exc)))
        self._check(checks)

    @work(thread=True, group="metadata-check", exit_on_error=False, name="check field")
    def _check(self, checks: list[tuple[int, tuple[str, Any] | str | None]]) -> None:
        worker = get_current_worker()
        results: list[tuple[int, str | None]] = []
        for index, check in checks:
            if worker.is_cancelled:
                return
            if check is None or isinstance(check, str):
                results.append((index, check))
                continue
            key, value = check
            try:
                Action("set", self.memory, {"changes": {key: value}}).plan()
            except ConflictError as exc:
                results.append((index, f"changed on disk: {exc}"))
            except (MemlensError, OSError) as exc:
                results.append((index, str(exc)))
            else:
                results.append((index, None))
        self.app.call_from_thread(self._show_checks, results)

    def _show_checks(self, results: list[tuple[int, str | None]]) -> None:
        for index, error in results:
            if index != NEW_FIELD:
                self.rows[index].error = error
            self._show_message(index, error)

    def _show_message(self, index: int, error: str | None) -> None:
        msg_id = "#msg-new" if index == NEW_FIELD else f"#msg-{index}"
        input_id = "#new-value" if index == NEW_FIELD else f"#field-{index}"
        self.query_one(msg_id, Static).update(safe(error, "$error") if error else Content(""))
        self.query_one(input_id, Input).set_class(error is not None, "-refused")

    def field_errors(self) -> dict[str, str]:
        """Field -> the last refusal shown beside it (for tests and the status line)."""
        return {r.key: r.error for r in self.rows if r.error is not None}

    # ------------------------------------------------------------------ save / cancel
    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "metadata-save":
            self.action_save()
        else:
            self.action_cancel()

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_save(self) -> None:
        try:
            changes = self.changes()
        except RefusedError as exc:
            self._status(str(exc))
            return
        if not changes:
            self._status("Nothing changed.", error=False)
            return
        self._status("Checking…", error=False)
        self._plan_save(changes)

    @work(thread=True, exclusive=True, group="metadata-save", exit_on_error=False, name="save")
    def _plan_save(self, changes: dict[str, Any]) -> None:
        try:
            Action("set", self.memory, {"changes": changes}).plan()
        except ConflictError:
            # The caller's apply raises it again and opens the conflict modal.
            self.app.call_from_thread(self.dismiss, changes)
            return
        except (MemlensError, OSError) as exc:
            self.app.call_from_thread(self._refused, str(exc), list(changes))
            return
        self.app.call_from_thread(self.dismiss, changes)

    def _refused(self, message: str, names: list[str]) -> None:
        name = field_of_message(message, names)
        if name is not None:
            index = next((i for i, r in enumerate(self.rows) if r.key == name), NEW_FIELD)
            if index != NEW_FIELD:
                self.rows[index].error = message
            self._show_message(index, message)
        self._status(f"Not saved: {message}")

    def _status(self, text: str, *, error: bool = True) -> None:
        self.query_one("#metadata-status", Static).update(
            safe(text, "$error" if error else "$text-muted")
        )
