"""The main screen's keys: one `Binding` per action, with its id (for keymaps) and tooltip.

Apart from `main.py` so that module holds the screen's behaviour; the help
screen and the footer are built from this table.
"""

from __future__ import annotations

from textual.binding import Binding, BindingType

MAIN_BINDINGS: list[BindingType] = [
    Binding("slash", "focus_filter", "Filter", tooltip="Filter as you type", id="main.filter"),
    Binding("s", "sort_next", "Sort", tooltip="Sort by the next column", id="main.sort"),
    Binding("S", "sort_reverse", "Reverse", tooltip="Reverse the sort order", id="main.reverse"),
    Binding(
        "i",
        "toggle_invalid",
        "Invalid",
        tooltip="Show or hide invalid items",
        id="main.invalid",
    ),
    Binding("v", "raw", "Raw text", tooltip="Raw text of the file, at its line", id="main.raw"),
    Binding(
        "z",
        "zoom",
        "Zoom",
        tooltip="Zoom the focused pane to the full screen (again: back)",
        id="main.zoom",
    ),
    Binding(
        "b",
        "jump_back",
        "Back",
        show=False,
        tooltip="Back after following a relation",
        id="main.jump_back",
    ),
    Binding(
        "escape",
        "escape",
        "Back",
        show=False,
        tooltip="Back to the list; in the list: clear the filter",
        id="main.escape",
    ),
    # Actions on the highlighted memory, or on the marked set when any is marked.
    Binding("p", "pin", "Pin", show=False, tooltip="Pin or unpin (marked: all)", id="main.pin"),
    Binding(
        "a",
        "archive",
        "Archive",
        show=False,
        tooltip="Archive (marked: all)",
        id="main.archive",
    ),
    Binding(
        "r",
        "restore",
        "Restore",
        show=False,
        tooltip="Restore (marked: all)",
        id="main.restore",
    ),
    Binding(
        "P",
        "promote",
        "Promote",
        show=False,
        tooltip="Promote, with the format's options (marked: all)",
        id="main.promote",
    ),
    Binding(
        "m",
        "edit_metadata",
        "Metadata",
        show=False,
        tooltip="Edit the metadata, each field checked as you type",
        id="main.metadata",
    ),
    Binding(
        "E",
        "edit_body",
        "Edit body",
        show=False,
        tooltip="Edit the body here (ctrl+s saves, esc cancels)",
        id="main.edit_body",
    ),
    Binding(
        "e",
        "open_editor",
        "Editor",
        show=False,
        tooltip="Open the file in $EDITOR, re-read it after",
        id="main.editor",
    ),
    Binding(
        "u",
        "undo",
        "Undo",
        show=False,
        tooltip="Undo the last action in the highlighted memory's vault",
        id="main.undo",
    ),
    Binding(
        "H",
        "history",
        "History",
        show=False,
        tooltip="The History tab: every commit that changed this memory (git)",
        id="main.history",
    ),
    Binding("space", "toggle_mark", "Mark", show=False, tooltip="Mark or unmark", id="main.mark"),
    Binding(
        "asterisk",
        "mark_all",
        "Mark all",
        show=False,
        tooltip="Mark every memory matching the filter",
        id="main.mark_all",
    ),
    Binding("x", "clear_marks", "Clear marks", show=False, tooltip="Clear marks", id="main.unmark"),
    Binding(
        "X",
        "redact",
        "Redact secrets",
        show=False,
        tooltip="Redact the secrets found in the memory (marked: all), after a confirmation",
        id="main.redact",
    ),
]
