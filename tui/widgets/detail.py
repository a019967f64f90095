"""The detail pane: one memory's metadata, decay, relations and body, or one problem.

The body can be edited in place (`enter` on the pane, or `E` on the list): a
TextArea replaces the rendered body until ctrl+s posts `BodySubmitted` (the
screen writes it) or esc cancels.  The memory being edited is kept as it was
read, so a save is conflict-checked against what the user started from even
if a reload swaps the row meanwhile.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from markdown_it import MarkdownIt
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.await_complete import AwaitComplete
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Markdown, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from memlens.core.listing import INVALID, MemoryRow
from memlens.core.model import Memory, Relation
from memlens.core.records import jsonable
from memlens.core.text.masking import scrub

from ..safe_text import has_controls, safe, safe_markdown, visible, visible_block
from .raw_view import read_raw_lines

#: Bodies longer than this are cut for the markdown view (the raw view shows all).
MAX_BODY_CHARS = 20_000
#: Lines of raw text shown around the faulty line of an invalid file.
RAW_CONTEXT = 12


def literal_parser() -> MarkdownIt:
    """A CommonMark parser that never makes links, images or raw HTML.

    Why: a memory body is data.  `[text](url)`, `<https://...>` and HTML
    stay literal text, so nothing in a body is clickable or hidden.
    """
    md = MarkdownIt("commonmark", {"html": False, "linkify": False})
    md.enable(["table", "strikethrough"])
    md.disable(["link", "image", "autolink", "html_inline", "html_block", "reference"])
    return md


class SafeMarkdown(Markdown):
    """Markdown for memory bodies: literal parser, and link clicks do nothing."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes, parser_factory=literal_parser, open_links=False)

    def on_markdown_link_clicked(self, event: Markdown.LinkClicked) -> None:
        # No link can come from the literal parser; if one ever does, it is
        # swallowed here rather than opened or passed up.
        event.prevent_default()
        event.stop()


def field_text(value: Any) -> str:
    """A metadata value as one readable string (JSON for structures)."""
    value = jsonable(value)
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class RelationView:
    """A relation with what the screen knows about its target."""

    relation: Relation
    #: Title of the memory it points at, if that exists.
    target_title: str | None = None
    #: Reference problem reason (`dangling_reference`, ...), if flagged.
    issue: str | None = None


class RelationList(OptionList):
    """Relations of the shown memory; enter posts `Jump`."""

    class Jump(Message):
        def __init__(self, relations: RelationList, view: RelationView) -> None:
            super().__init__()
            self.relations = relations
            #: The relation to follow.
            self.view = view

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.views: list[RelationView] = []

    def set_views(self, views: list[RelationView]) -> None:
        self.views = views
        self.clear_options()
        self.add_options(Option(self._prompt(v)) for v in views)

    @staticmethod
    def _prompt(view: RelationView) -> Content:
        rel = view.relation
        parts: list[Content | str | tuple[str, str]] = [
            safe(rel.type, "bold"),
            " → ",
            safe(rel.target),
        ]
        if view.target_title:
            parts += ["  ", safe(view.target_title, "$text-muted")]
        if view.issue:
            parts += ["  ", (view.issue, "$error")]
        if rel.field and rel.field != "relations":
            parts += ["  ", (f"({visible(rel.field)})", "$text-muted")]
        return Content.assemble(*parts)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.post_message(self.Jump(self, self.views[event.option_index]))


class BodyEditor(TextArea):
    """The inline body editor: ctrl+s posts `Save`, esc posts `Cancel`."""

    BINDINGS = [
        Binding("ctrl+s", "save", "Save body", id="editor.save"),
        Binding("escape", "cancel", "Cancel edit", id="editor.cancel"),
    ]

    class Save(Message):
        """Save the edited text."""

    class Cancel(Message):
        """Drop the edit."""

    def action_save(self) -> None:
        self.post_message(self.Save())

    def action_cancel(self) -> None:
        self.post_message(self.Cancel())


class MemoryDetail(VerticalScroll, can_focus=True):
    """Everything about the highlighted row.  Calls down: `show(row, relations)`."""

    #: `z` zooms it (scroll containers are not maximizable by default).
    ALLOW_MAXIMIZE = True

    BINDINGS = [
        Binding("j", "scroll_down", "Scroll down", show=False, id="detail.down"),
        Binding("k", "scroll_up", "Scroll up", show=False, id="detail.up"),
        Binding("g", "scroll_home", "Top", show=False, id="detail.top"),
        Binding("G", "scroll_end", "Bottom", show=False, id="detail.bottom"),
        Binding(
            "enter",
            "edit_body",
            "Edit body",
            show=False,
            tooltip="Edit the body here (ctrl+s saves, esc cancels)",
            id="detail.edit_body",
        ),
    ]

    class BodySubmitted(Message):
        """The user saved an edited body (nothing is written yet: the screen writes it)."""

        def __init__(self, detail: MemoryDetail, memory: Memory, body: str) -> None:
            super().__init__()
            self.detail = detail
            #: The memory as it was when editing started.
            self.memory = memory
            #: The new body text.
            self.body = body

    class EditingChanged(Message):
        """Inline editing of a memory's body started (`memory` set) or ended (None)."""

        def __init__(self, detail: MemoryDetail, key: tuple[str, str], editing: bool) -> None:
            super().__init__()
            self.detail = detail
            #: The memory's key (`Memory.key`).
            self.key = key
            #: True when editing started, False when it ended.
            self.editing = editing

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        #: The row shown, if any.
        self.row: MemoryRow | None = None
        self._pending: AwaitComplete | None = None
        #: The memory whose body is being edited (as read when editing began).
        self.editing: Memory | None = None
        #: The latest `show` call made while editing, replayed when it ends.
        self._deferred: tuple[MemoryRow | None, list[RelationView] | None] | None = None
        #: Secrets the privacy scan found, per memory key: shown masked.
        self.secrets: Mapping[tuple[str, str], tuple[str, ...]] = {}

    def compose(self) -> ComposeResult:
        yield Static(id="detail-title")
        yield Static(id="detail-summary")
        yield Static(id="detail-problem")
        yield Static("Raw text", classes="detail-heading", id="detail-raw-heading")
        yield Static(id="detail-raw")
        yield Static("Body", classes="detail-heading", id="detail-body-heading")
        yield SafeMarkdown(id="detail-body")
        hint = Static(
            Content.styled("editing · ctrl+s saves · esc cancels", "$warning"),
            id="detail-editor-hint",
        )
        hint.display = False
        yield hint
        editor = BodyEditor(id="detail-editor", soft_wrap=True)
        editor.display = False
        yield editor
        yield Static("Relations", classes="detail-heading", id="detail-relations-heading")
        yield RelationList(id="detail-relations")
        yield Static("Metadata", classes="detail-heading", id="detail-meta-heading")
        yield Static(id="detail-meta")

    # ------------------------------------------------------------------ calls down
    def show(self, row: MemoryRow | None, relations: list[RelationView] | None = None) -> None:
        if self.editing is not None:
            # Why: a reload or a cursor move must not drop text being typed.
            self._deferred = (row, relations)
            return
        self.row = row
        self.scroll_home(animate=False)
        title = self.query_one("#detail-title", Static)
        summary = self.query_one("#detail-summary", Static)
        if row is None:
            title.update(Content("Nothing selected"))
            summary.update(Content(""))
            self._toggle(problem=False, meta=False, relations=False, body=False, raw=False)
            self._set_body("")
            return
        held = self.secrets.get(row.key, ()) if self.secrets else ()
        title.update(safe(scrub(row.title, held), "bold"))
        summary.update(self._summary(row))
        if row.health == INVALID:
            self._show_problem(row)
        elif row.pending:
            self._show_pending()
        else:
            self._show_memory(row, relations or [])

    # ------------------------------------------------------------------ inline body editing
    def start_editing(self) -> str | None:
        """Replace the body with an editor; returns why not, if it cannot."""
        if self.editing is not None:
            self.query_one(BodyEditor).focus()
            return None
        row = self.row
        if row is None or row.memory is None:
            return "Nothing to edit: choose a memory."
        memory = row.memory
        if memory.tombstoned:
            return "Tombstoned (erased) memories cannot be changed."
        if has_controls(memory.body):
            return "The body holds control characters: edit the file with e instead."
        self.editing = memory
        self.post_message(self.EditingChanged(self, memory.key, True))
        editor = self.query_one(BodyEditor)
        editor.load_text(memory.body)
        editor.move_cursor((0, 0))
        self._toggle(body=False)
        self.query_one("#detail-body-heading").display = True
        editor.display = True
        self.query_one("#detail-editor-hint").display = True
        editor.focus()
        return None

    def stop_editing(self) -> None:
        """Back to the rendered body (of the row shown meanwhile, if any)."""
        if self.editing is None:
            return
        self.post_message(self.EditingChanged(self, self.editing.key, False))
        self.editing = None
        self.query_one(BodyEditor).display = False
        self.query_one("#detail-editor-hint").display = False
        deferred, self._deferred = self._deferred, None
        if deferred is not None:
            self.show(*deferred)
        else:
            self.show(self.row, self._relation_views())
        self.focus()

    def _relation_views(self) -> list[RelationView]:
        return list(self.query_one(RelationList).views)

    @property
    def editor_text(self) -> str:
        return self.query_one(BodyEditor).text

    def action_edit_body(self) -> None:
        why = self.start_editing()
        if why is not None:
            self.notify(why, severity="warning", markup=False)

    def on_body_editor_save(self, event: BodyEditor.Save) -> None:
        event.stop()
        if self.editing is not None:
            self.post_message(self.BodySubmitted(self, self.editing, self.editor_text))

    def on_body_editor_cancel(self, event: BodyEditor.Cancel) -> None:
        event.stop()
        self.stop_editing()

    async def settled(self) -> None:
        """Wait until the body markdown is mounted (for tests and screenshots)."""
        if self._pending is not None:
            await self._pending

    # ------------------------------------------------------------------ internals
    def _toggle(self, **shown: bool) -> None:
        for name, on in shown.items():
            for widget in self.query(f"#detail-{name}, #detail-{name}-heading"):
                widget.display = on

    def _set_body(self, markdown: str) -> None:
        body = self.query_one(SafeMarkdown)
        self._pending = body.update(markdown)

    @staticmethod
    def _summary(row: MemoryRow) -> Content:
        where = row.problem.path if row.problem else (row.memory.path if row.memory else "")
        line = None
        if row.memory is not None:
            line = row.memory.line or row.memory.index
        if row.problem is not None:
            line = row.problem.line or row.problem.index
        sep = (
            "#" if (row.memory and row.memory.index) or (row.problem and row.problem.index) else ":"
        )
        loc = f"{where}{sep}{line}" if line else where
        parts: list[Content | str | tuple[str, str]] = [
            safe(row.kind, "$accent"),
            " · ",
            (row.health, "bold"),
        ]
        if row.status and row.status not in (row.health, row.kind):
            parts += [" (", safe(row.status), ")"]
        if row.when and row.health != INVALID:
            parts += [" · ", safe(row.when)]
        parts += [
            "\n",
            safe(row.vault, "$text-muted"),
            ("/", "$text-muted"),
            safe(loc, "$text-muted"),
        ]
        return Content.assemble(*parts)

    def _show_pending(self) -> None:
        """A row kept from the last run: its memory is shown once its vault is read."""
        note = Content.styled(
            "Reading this vault… the memory's body, metadata and relations show in a moment"
            " (this row is as the last run listed it).",
            "$text-muted italic",
        )
        self.query_one("#detail-problem", Static).update(note)
        self._toggle(problem=True, meta=False, relations=False, body=False, raw=False)
        self._set_body("")

    def _show_problem(self, row: MemoryRow) -> None:
        assert row.problem is not None
        p = row.problem
        problem = Content.assemble(
            ("✗ ", "$error bold"),
            (p.reason.value, "$error bold"),
            "\n",
            safe(p.detail),
        )
        self.query_one("#detail-problem", Static).update(problem)
        lines, note = read_raw_lines(p.vault_root / p.path)
        mark = p.at_line if p.at_line is not None else p.line
        self.query_one("#detail-raw", Static).update(raw_excerpt(lines, mark, note))
        meta = Table.grid(padding=(0, 2))
        meta.add_column(style="bold", no_wrap=True)
        meta.add_column()
        for key, value in (
            ("format", p.format),
            ("path", p.path),
            ("line", p.line),
            ("section", p.index),
            ("at line", p.at_line),
            ("id", p.id),
        ):
            if value is not None:
                meta.add_row(Text(key), Text(visible(str(value))))
        self.query_one("#detail-meta", Static).update(meta)
        self._toggle(problem=True, meta=True, relations=False, body=False, raw=True)
        self._set_body("")

    def _show_memory(self, row: MemoryRow, relations: list[RelationView]) -> None:
        memory = row.memory
        assert memory is not None
        # Secrets the privacy scan found are masked here as everywhere (the raw
        # view, `v`, and the body editor show the file as it is).
        held = self.secrets.get(row.key, ()) if self.secrets else ()
        self.query_one("#detail-meta", Static).update(self._meta_table(row, held))
        self.query_one(RelationList).set_views(relations)
        body = scrub(memory.body, held)
        if len(body) > MAX_BODY_CHARS:
            cut = len(body) - MAX_BODY_CHARS
            body = (
                body[:MAX_BODY_CHARS] + f"\n\n*… {cut} more characters: press v for the raw text*"
            )
        self._toggle(
            problem=row.decay_error is not None,
            meta=True,
            relations=bool(relations),
            body=True,
            raw=False,
        )
        if row.decay_error is not None:
            self.query_one("#detail-problem", Static).update(
                Content.assemble(("decay failed: ", "$error bold"), safe(row.decay_error))
            )
        self._set_body(safe_markdown(body) if body.strip() else "*(empty body)*")

    @staticmethod
    def _meta_table(row: MemoryRow, held: tuple[str, ...] = ()) -> Table:
        memory = row.memory
        assert memory is not None
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", no_wrap=True, max_width=24)
        table.add_column()
        extra = set(memory.extra)
        for key, value in memory.fields.items():
            label = Text(visible(str(key)))
            if key in extra:
                label.append(" *", style="italic")
            table.add_row(label, Text(visible_block(scrub(field_text(value), held))))
        info = row.full_info()
        if info is not None:
            table.add_row(Text("─ decay", style="dim"), Text(""))
            decay: list[tuple[str, Any]] = [
                ("status", info.status),
                ("health", info.health.value),
                ("strength", f"{info.strength:.3f}"),
                ("score", info.score),
                ("current importance", info.current_importance),
                ("importance band", info.importance_band),
                ("linear weight", info.linear_weight),
                ("days elapsed", info.days_elapsed),
                ("age (days)", info.age_days),
                ("expires on", info.expires_on),
                ("ttl (days)", info.ttl_days),
                ("lifespan (days)", info.lifespan_days),
                ("why", info.why or None),
                ("would archive", ", ".join(info.archive_reasons) or None),
            ]
            for key, value in decay:
                if value is not None:
                    table.add_row(Text(key), Text(visible(field_text(value))))
        table.add_row(Text("─ where", style="dim"), Text(""))
        table.add_row(Text("id"), Text(visible(memory.id)))
        table.add_row(Text("format"), Text(memory.format))
        table.add_row(Text("vault"), Text(visible(row.vault)))
        table.add_row(Text("path"), Text(visible(memory.path)))
        if extra:
            table.add_row(
                Text(""), Text("* not defined by the format (kept as is)", style="italic")
            )
        return table


def raw_excerpt(lines: list[str], mark: int | None, note: str | None = None) -> Content:
    """Numbered lines around `mark` (1-based), the marked line highlighted."""
    if not lines:
        return Content.styled(note or "(empty file)", "$text-muted italic")
    center = (mark or 1) - 1
    start = max(0, center - RAW_CONTEXT)
    stop = min(len(lines), start + 2 * RAW_CONTEXT + 1)
    width = len(str(stop))
    parts: list[Content] = []
    for i in range(start, stop):
        number = Content.styled(f"{i + 1:>{width}} ", "$text-muted")
        text = safe(lines[i].expandtabs(4))
        if mark is not None and i == center:
            text = text.stylize("on $error 30%")
            number = Content.styled(f"{i + 1:>{width}}▶", "$error bold")
        parts.append(number + text)
    if note:
        parts.append(Content.styled(note, "$text-muted italic"))
    return Content("\n").join(parts)
