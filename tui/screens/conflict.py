"""Another writer changed a memory's file: show the diff, reload, or overwrite.

A write is refused with `ConflictError` when the file on disk is no longer
what memlens read (core checks fields, body and the file's hash).  This modal
offers the three ways on:

- show the diff between the memory as it was read and as it is on disk now
  (both drawn as `key: value` lines and the body, so every format diffs the
  same way, JSON Lines records and dream-cycle sections included);
- reload: rescan and drop the edit;
- overwrite: re-plan the same action against what is on disk now (offered
  only where that is meaningful: pin, unpin, archive, restore, set, and an
  edited body, which the caller confirms a second time).

The modal only answers (`"reload"`, `"overwrite"` or None); the caller writes.
"""

from __future__ import annotations

import difflib

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from memlens.core.formats import adapter_for
from memlens.core.model import Memory

from ..safe_text import safe, safe_block
from ..widgets.detail import field_text

#: Diff lines shown at most (the raw view shows whole files).
MAX_DIFF_LINES = 400


def memory_lines(memory: Memory) -> list[str]:
    """A memory as comparable text: where it is, each native field, then the body."""
    flags = [
        name
        for name, on in (
            ("pinned", memory.pinned),
            ("archived", memory.archived),
            ("tombstoned", memory.tombstoned),
        )
        if on
    ]
    lines = [f"file: {memory.path}", f"state: {', '.join(flags) or 'live'}"]
    lines += [f"{key}: {field_text(value)}" for key, value in memory.fields.items()]
    lines.append("")
    lines += memory.body.splitlines()
    return lines


def reread_memory(memory: Memory) -> Memory | None:
    """The memory with the same id as its format reads it from disk now (None: gone).

    The whole vault is scanned with the format's adapter, because for some
    formats a memory is more than its own file (views, WAL entries, state).
    Blocking: call it from a thread.
    """
    result = adapter_for(memory.format).scan(memory.vault_root)
    same_id = [m for m in result.memories if m.id == memory.id]
    for m in same_id:
        if m.path == memory.path:
            return m
    return same_id[0] if same_id else None


def conflict_diff(read: Memory, now: Memory | None) -> list[str]:
    """Unified diff from the memory as read to the memory on disk now."""
    if now is None:
        return [f"--- as read: {read.path}", "+++ on disk now: (no memory with this id any more)"]
    diff = list(
        difflib.unified_diff(
            memory_lines(read),
            memory_lines(now),
            "as read",
            "on disk now",
            lineterm="",
        )
    )
    if not diff:
        return ["(no difference in fields or body: the file changed in bytes only)"]
    if len(diff) > MAX_DIFF_LINES:
        cut = len(diff) - MAX_DIFF_LINES
        diff = [*diff[:MAX_DIFF_LINES], f"… {cut} more lines"]
    return diff


def diff_content(lines: list[str]) -> Content:
    """Diff lines, additions and removals coloured; the text itself literal."""
    parts: list[Content] = []
    for line in lines:
        style = ""
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("@@"):
            style = "$accent"
        elif line.startswith("+"):
            style = "$success"
        elif line.startswith("-"):
            style = "$error"
        parts.append(safe(line, style))
    return Content("\n").join(parts)


class ConflictScreen(ModalScreen[str | None]):
    """Explains the conflict; answers "reload", "overwrite", or None (cancel)."""

    CSS_PATH = "conflict.tcss"

    BINDINGS = [
        Binding("d", "diff", "Show diff", id="conflict.diff"),
        Binding("r", "reload", "Reload", id="conflict.reload"),
        Binding("o", "overwrite", "Overwrite", id="conflict.overwrite"),
        Binding("escape", "cancel", "Cancel", id="conflict.cancel"),
    ]

    def __init__(
        self,
        memory: Memory,
        message: str,
        *,
        action: str,
        can_overwrite: bool,
        body_edit: bool = False,
    ) -> None:
        super().__init__()
        #: The memory as it was read (what the refused action was planned on).
        self.memory = memory
        #: Core's conflict message (display text).
        self.message = message
        #: The refused action's name (`pin`, `set`, `edit_body`, ...).
        self.action_name = action
        #: Whether re-planning against the disk is offered.
        self.can_overwrite = can_overwrite
        #: The refused write was the user's edited body.
        self.body_edit = body_edit
        #: The diff, once shown (for tests and a second `d`).
        self.diff_lines: list[str] | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="conflict-box"):
            yield Static(Content.styled("Changed on disk", "bold $warning"), id="conflict-title")
            yield Static(
                safe(self.memory.title, "bold")
                + Content("  ")
                + safe(self.memory.id, "$text-muted")
            )
            yield Static(safe_block(self.message), id="conflict-message")
            yield Static(self._choices(), id="conflict-choices")
            with VerticalScroll(id="conflict-diff"):
                yield Static(id="conflict-diff-text")
            with Horizontal(id="conflict-buttons"):
                yield Button("Show diff (d)", id="conflict-show-diff")
                yield Button("Reload (r)", variant="primary", id="conflict-reload")
                if self.can_overwrite:
                    yield Button("Overwrite (o)", variant="error", id="conflict-overwrite")
                yield Button("Cancel (esc)", id="conflict-cancel")

    def _choices(self) -> Content:
        lines = [
            "Another program wrote this memory after memlens read it; nothing was written.",
            "Reload: read it again from disk and drop this change.",
        ]
        if self.can_overwrite and self.body_edit:
            lines.append("Overwrite: write your text over the new content (asks again).")
        elif self.can_overwrite:
            lines.append(f"Overwrite: {self.action_name} what is on disk now instead.")
        else:
            lines.append(f"{self.action_name} cannot be re-applied blindly: reload, then retry.")
        return Content("\n".join(lines))

    def on_mount(self) -> None:
        self.query_one("#conflict-diff").display = False
        self.query_one("#conflict-reload", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        button = event.button.id
        if button == "conflict-show-diff":
            self.action_diff()
        elif button == "conflict-reload":
            self.action_reload()
        elif button == "conflict-overwrite":
            self.action_overwrite()
        else:
            self.action_cancel()

    def action_diff(self) -> None:
        self.query_one("#conflict-diff-text", Static).update(
            Content.styled("reading the file…", "$text-muted italic")
        )
        self.query_one("#conflict-diff").display = True
        self._load_diff()

    @work(thread=True, exclusive=True, group="conflict-diff", exit_on_error=False, name="diff")
    def _load_diff(self) -> None:
        lines = conflict_diff(self.memory, reread_memory(self.memory))
        self.app.call_from_thread(self._show_diff, lines)

    def _show_diff(self, lines: list[str]) -> None:
        self.diff_lines = lines
        self.query_one("#conflict-diff-text", Static).update(diff_content(lines))

    def action_reload(self) -> None:
        self.dismiss("reload")

    def action_overwrite(self) -> None:
        if self.can_overwrite:
            self.dismiss("overwrite")

    def action_cancel(self) -> None:
        self.dismiss(None)
