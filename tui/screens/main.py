"""The main screen: vaults on the left, the memory list, the detail of the highlighted row.

Actions (pin, archive, restore, promote, edit, undo) apply to the marked
rows when any are marked, else to the highlighted row; the flow around each
write (confirmation, conflicts, reload) is in `memlens.tui.actions_ui`.
"""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.containers import Container, Vertical
from textual.content import Content
from textual.timer import Timer
from textual.widgets import Input, Static

from memlens.core.listing import COLUMNS, MemoryList, MemoryRow
from memlens.core.model import Memory

from ..action_common import tell
from ..actions_ui import ActionRunner
from ..history_ui import close_history, follow_history, request_restore, toggle_history
from ..messages import OpenRaw
from ..safe_text import safe
from ..widgets.detail import MemoryDetail, RelationList, RelationView
from ..widgets.history_pane import HistoryPane
from ..widgets.key_footer import KeyFooter
from ..widgets.memory_table import MemoryTable
from ..widgets.vault_sidebar import VaultSidebar
from .base import MemlensScreen
from .main_keys import MAIN_BINDINGS

#: Seconds the cursor must rest before the detail pane is redrawn.
DETAIL_DELAY = 0.1
#: Why a row without a memory cannot be acted on: its vault is still being
#: read (a row kept from the last run: `MemoryRow.pending`), or it is invalid.
STILL_LOADING = "Still reading this vault: the memory opens in a moment."
NOT_MARKABLE = "Invalid items cannot be marked: fix the file first (v)."
NOT_CHANGED = "Invalid items are not changed by memlens: e opens the file."
_LABELS = {c.key: c.label for c in COLUMNS}


class MainScreen(MemlensScreen):
    """Browse every memory of every vault."""

    CSS_PATH = "main.tcss"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (160, "-wide")]

    BINDINGS = MAIN_BINDINGS

    def __init__(self) -> None:
        super().__init__()
        #: Every row of every loaded vault, in the order and filter shown.
        self.model = MemoryList()
        #: How many of the app's loaded vault batches are in `model`.
        self._batches = 0
        #: Memories visited before following a relation (for `b`).
        self._history: list[tuple[str, str]] = []
        self._detail_timer: Timer | None = None
        #: Keys of marked rows: bulk actions apply to these.
        self.marks: set[tuple[str, str]] = set()
        #: Writes and their modals.
        self.actions = ActionRunner(self)
        #: A row to put the cursor back on once a reload brings it back.
        self._reselect: tuple[str, str] | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="topbar")
        with Container(id="main-body"):
            yield VaultSidebar(id="vaults")
            with Container(id="center"):
                with Vertical(id="list-pane"):
                    yield Input(
                        placeholder="/ filter: words, tag:x kind:x health:x vault:x",
                        id="filter",
                    )
                    yield MemoryTable(self.model, marks=self.marks, id="memories")
                yield MemoryDetail(id="detail")
                yield HistoryPane(id="history", use_cache=self.memlens.config.cache)
        yield KeyFooter()

    def on_mount(self) -> None:
        self.memlens.register_main_screen(self)
        self.watch(self.memlens, "catalog_version", self._catalog_changed, init=True)
        self.watch(self.memlens, "privacy_version", self._secrets_changed, init=True)
        self.set_focus(self.query_one(MemoryTable))

    # ------------------------------------------------------------------ data from the app
    def _catalog_changed(self, _version: int) -> None:
        app = self.memlens
        table = self.query_one(MemoryTable)
        current = table.current_row()
        if len(app.loaded) < self._batches:  # reloaded: start again
            self.model.replace([])
            self._batches = 0
        new_batches = app.loaded[self._batches :]
        self._batches = len(app.loaded)
        for _vault, rows in new_batches:
            self.model.extend(rows)
        self.query_one(VaultSidebar).set_summaries(app.summaries())
        key = current.key if current else None
        if self._reselect is not None:
            if self.model.position_of(self._reselect) is not None:
                key, self._reselect = self._reselect, None
            elif not app.loading:
                self._reselect = None
        self._rows_changed(key)

    def _secrets_changed(self, _version: int) -> None:
        secrets = self.memlens.secrets_by_memory
        self.query_one(MemoryTable).secrets_changed(secrets)
        detail = self.query_one(MemoryDetail)
        if detail.secrets != secrets:
            detail.secrets = secrets
            row = detail.row
            if row is not None and detail.editing is None:
                self.show_detail(row)

    def _rows_changed(self, key: tuple[str, str] | None) -> None:
        table = self.query_one(MemoryTable)
        position = self.model.position_of(key) if key is not None else None
        table.rows_changed(keep_cursor=position if position is not None else 0)
        if not len(self.model):
            self.show_detail(None)
        self._update_topbar()

    def _update_topbar(self) -> None:
        app = self.memlens
        model = self.model
        arrow = "▼" if model.reverse else "▲"
        parts: list[Content | str | tuple[str, str]] = [
            ("memlens", "bold $accent"),
            f"  {len(app.loaded)}/{len(app.discovered)} vaults",
            f" · {len(model)} of {model.total} rows",
            f" · as of {app.as_of.isoformat()}",
            f" · sort {_LABELS[model.sort_column]} {arrow}",
        ]
        if not model.show_invalid:
            parts.append(" · invalid hidden")
        if model.query:
            parts += [" · filter ", safe(model.query, "italic")]
        if self.marks:
            parts.append((f" · {len(self.marks)} marked", "bold $accent"))
        if self.actions.busy:
            parts.append((f" · {self.actions.busy}…", "$warning"))
        if app.loading:
            parts.append((" · loading…", "$warning"))
        # Fixed height: no relayout needed (a relayout costs tens of ms).
        self.query_one("#topbar", Static).update(Content.assemble(*parts), layout=False)

    # ------------------------------------------------------------------ list events
    @on(MemoryTable.Highlighted)
    def _highlighted(self, _event: MemoryTable.Highlighted) -> None:
        # Debounce: redraw the detail once the cursor rests for DETAIL_DELAY.
        # Why: a detail redraw relayouts the screen (tens of ms); doing it on
        # every repeated j would stall the list.  The row is read when the
        # timer fires, because queued highlight messages may be stale.
        if self._detail_timer is None:
            self._detail_timer = self.set_timer(DETAIL_DELAY, self._detail_tick)
        else:
            self._detail_timer.reset()

    def _detail_tick(self) -> None:
        self._detail_timer = None
        current = self.query_one(MemoryTable).current_row()
        if current is not self.query_one(MemoryDetail).row:
            self.show_detail(current)

    @on(MemoryTable.Selected)
    def _selected(self, event: MemoryTable.Selected) -> None:
        self.show_detail(event.row)
        self.set_focus(self.query_one(MemoryDetail))

    @on(MemoryTable.SortClicked)
    def _sort_clicked(self, event: MemoryTable.SortClicked) -> None:
        if event.column == self.model.sort_column:
            self._resort(reverse=not self.model.reverse)
        else:
            self._resort(column=event.column, reverse=False)

    def show_detail(self, row: MemoryRow | None) -> None:
        detail = self.query_one(MemoryDetail)
        self.actions.viewed(row)
        follow_history(self, row)
        if row is None or row.memory is None:
            detail.show(row)
            return
        views: list[RelationView] = []
        issues = self.memlens.ref_issues.get(row.key, {})
        for rel in row.memory.relations:
            target = self.model.find(row.vault_root, rel.resolved or rel.target)
            views.append(
                RelationView(
                    relation=rel,
                    target_title=target.title if target else None,
                    issue=issues.get(rel.target),
                )
            )
        detail.show(row, views)

    # ------------------------------------------------------------------ filter and scope
    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        current = self.query_one(MemoryTable).current_row()
        self.model.set_query(event.value)
        self._rows_changed(current.key if current else None)

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        self.set_focus(self.query_one(MemoryTable))

    @on(VaultSidebar.ScopeChanged)
    def _scope_changed(self, event: VaultSidebar.ScopeChanged) -> None:
        if event.root == self.model.scope:
            return
        current = self.query_one(MemoryTable).current_row()
        self.model.set_scope(event.root)
        self._rows_changed(current.key if current else None)

    # ------------------------------------------------------------------ relations
    @on(RelationList.Jump)
    def _jump(self, event: RelationList.Jump) -> None:
        row = self.query_one(MemoryDetail).row
        rel = event.view.relation
        if event.view.issue == "unsafe_reference":
            self.notify("Unsafe reference: not followed.", severity="warning")
            return
        if row is None:
            return
        if not self.select_memory(row.vault_root, rel.resolved or rel.target, remember=True):
            self.notify("No memory with that id in this vault.", severity="warning")

    def select_memory(self, vault_root: Path, memory_id: str, *, remember: bool = False) -> bool:
        """Put the cursor on a memory, widening the filter if it hides it."""
        target = self.model.find(vault_root, memory_id)
        if target is None:
            return False
        table = self.query_one(MemoryTable)
        current = table.current_row()
        if self.model.position_of(target.key) is None:
            self._clear_narrowing()
        position = self.model.position_of(target.key)
        if position is None:
            return False
        if remember and current is not None and current.key != target.key:
            self._history.append(current.key)
        table.move_to(position)
        self.show_detail(target)
        self.set_focus(table)
        return True

    def _clear_narrowing(self) -> None:
        filter_input = self.query_one("#filter", Input)
        with filter_input.prevent(Input.Changed):
            filter_input.value = ""
        self.model.set_query("")
        self.model.set_scope(None)
        self.model.set_show_invalid(True)
        sidebar = self.query_one(VaultSidebar)
        with sidebar.prevent(VaultSidebar.ScopeChanged):
            sidebar.highlighted = 0
        self._rows_changed(None)

    def action_jump_back(self) -> None:
        if not self._history:
            return
        root, memory_id = self._history.pop()
        self.select_memory(Path(root), memory_id)

    # ------------------------------------------------------------------ actions
    def action_focus_filter(self) -> None:
        # Focus now, not after a refresh: keys typed right after "/" go to the input.
        self.set_focus(self.query_one("#filter", Input))

    def action_zoom(self) -> None:
        if self.maximized is not None:
            self.minimize()
        elif self.focused is not None:
            self.maximize(self.focused)

    def action_escape(self) -> None:
        if self.maximized is not None:
            self.minimize()
            return
        focused = self.focused
        table = self.query_one(MemoryTable)
        if focused is table:
            if self.model.query:
                self.query_one("#filter", Input).value = ""
            elif self._history:
                self.action_jump_back()
            return
        self.set_focus(table)

    def _resort(self, column: str | None = None, reverse: bool | None = None) -> None:
        current = self.query_one(MemoryTable).current_row()
        self.model.sort_by(column or self.model.sort_column, reverse=reverse)
        self._rows_changed(current.key if current else None)

    def action_sort_next(self) -> None:
        current = self.query_one(MemoryTable).current_row()
        self.model.cycle_sort()
        self._rows_changed(current.key if current else None)

    def action_sort_reverse(self) -> None:
        self._resort(reverse=not self.model.reverse)

    def sort_by(self, column: str) -> None:
        """Sort by a column key (used by the command palette)."""
        self._resort(column=column)

    def show_vault(self, option: int) -> None:
        """Scope the list to the sidebar's option `option` (0: every vault)."""
        sidebar = self.query_one(VaultSidebar)
        if 0 <= option < sidebar.option_count:
            sidebar.highlighted = option

    def action_toggle_invalid(self) -> None:
        current = self.query_one(MemoryTable).current_row()
        self.model.set_show_invalid(not self.model.show_invalid)
        self._rows_changed(current.key if current else None)

    def action_raw(self) -> None:
        row = self.query_one(MemoryTable).current_row()
        if row is None:
            return
        if row.problem is not None:
            p = row.problem
            line = p.at_line if p.at_line is not None else p.line
            self.post_message(OpenRaw(p.vault_root / p.path, line, f"{row.vault}/{p.path}"))
            return
        memory = row.memory
        if memory is None:  # a row kept from the last run, its vault still being read
            tell(self.memlens, STILL_LOADING)
            return
        needle = None if memory.line is not None else memory.title[:60]
        self.post_message(
            OpenRaw(memory.abs_path, memory.line, f"{row.vault}/{memory.path}", needle)
        )

    # ------------------------------------------------------------------ marks
    def marks_changed(self) -> None:
        """Redraw the marks and the count (after `marks` changed)."""
        self.query_one(MemoryTable).marks_changed()
        self._update_topbar()

    def action_toggle_mark(self) -> None:
        table = self.query_one(MemoryTable)
        row = table.current_row()
        if row is None:
            return
        if row.memory is None:
            tell(self.memlens, STILL_LOADING if row.pending else NOT_MARKABLE)
            return
        if row.key in self.marks:
            self.marks.discard(row.key)
        else:
            self.marks.add(row.key)
        self.marks_changed()
        table.action_cursor_down()

    def action_mark_all(self) -> None:
        before = len(self.marks)
        self.marks.update(r.key for r in self.model if r.memory is not None)
        self.marks_changed()
        tell(self.memlens, f"{len(self.marks) - before} marked ({len(self.marks)} in all).")

    def action_clear_marks(self) -> None:
        self.marks.clear()
        self.marks_changed()

    def marked_memories(self) -> list[Memory]:
        """Marked memories in list order (marks hidden by the filter included)."""
        shown = [r for r in self.model if r.key in self.marks and r.memory is not None]
        keys = {r.key for r in shown}
        hidden = []
        for key in self.marks - keys:
            row = self.model.find(key[0], key[1])
            if row is not None and row.memory is not None:
                hidden.append(row)
        return [r.memory for r in [*shown, *hidden] if r.memory is not None]

    # ------------------------------------------------------------------ what actions apply to
    def targets(self) -> tuple[list[Memory], bool]:
        """(memories, bulk): the marked set if any, else the highlighted memory."""
        if self.marks:
            return self.marked_memories(), True
        row = self.query_one(MemoryTable).current_row()
        if row is None:
            return [], False
        if row.memory is None:
            tell(self.memlens, STILL_LOADING if row.pending else NOT_CHANGED)
            return [], False
        return [row.memory], False

    def _highlighted_memory(self) -> Memory | None:
        row = self.query_one(MemoryTable).current_row()
        if row is None:
            return None
        if row.memory is None:
            tell(self.memlens, STILL_LOADING if row.pending else NOT_CHANGED)
            return None
        return row.memory

    def shown_row(self) -> MemoryRow | None:
        """The row the detail pane shows."""
        return self.query_one(MemoryDetail).row

    def keep_selection(self, key: tuple[str, str]) -> None:
        """Put the cursor back on `key` when the coming reload brings it back."""
        self._reselect = key

    def refresh_status(self) -> None:
        self._update_topbar()

    # ------------------------------------------------------------------ action keys
    def action_pin(self) -> None:
        memories, bulk = self.targets()
        self.actions.pin_toggle(memories, bulk)

    def action_archive(self) -> None:
        memories, bulk = self.targets()
        self.actions.run("archive", memories, bulk)

    def action_restore(self) -> None:
        memories, bulk = self.targets()
        self.actions.run("restore", memories, bulk)

    def action_redact(self) -> None:
        # Always confirmed, one memory too: the list names each secret's kind and field.
        memories, _bulk = self.targets()
        self.actions.run("redact", memories, True)

    def action_promote(self) -> None:
        memories, bulk = self.targets()
        self.actions.promote(memories, bulk)

    def action_edit_metadata(self) -> None:
        memory = self._highlighted_memory()
        if memory is not None:
            self.actions.edit_metadata(memory)

    def action_edit_body(self) -> None:
        row = self.query_one(MemoryTable).current_row()
        detail = self.query_one(MemoryDetail)
        if row is not None and detail.row is not row and detail.editing is None:
            self.show_detail(row)
        detail.action_edit_body()

    def action_open_editor(self) -> None:
        row = self.query_one(MemoryTable).current_row()
        if row is not None:
            self.actions.open_in_editor(row)

    def action_undo(self) -> None:
        row = self.query_one(MemoryTable).current_row()
        if row is None:
            tell(self.memlens, "Nothing highlighted: undo works on the highlighted row's vault.")
            return
        self.actions.undo(row.vault_root)

    def action_history(self) -> None:
        toggle_history(self)

    @on(HistoryPane.Closed)
    def _history_closed(self, _event: HistoryPane.Closed) -> None:
        close_history(self)

    @on(HistoryPane.RestoreRequested)
    def _history_restore(self, event: HistoryPane.RestoreRequested) -> None:
        request_restore(self, event.history, event.entry)

    @on(MemoryDetail.EditingChanged)
    def _editing_changed(self, event: MemoryDetail.EditingChanged) -> None:
        # The app announces external changes to memories being edited.
        if event.editing:
            self.memlens.editing.add(event.key)
        else:
            self.memlens.editing.discard(event.key)

    @on(MemoryDetail.BodySubmitted)
    def _body_submitted(self, event: MemoryDetail.BodySubmitted) -> None:
        self.actions.save_body(event.memory, event.body)

    def stop_body_editing(self) -> None:
        self.query_one(MemoryDetail).stop_editing()
