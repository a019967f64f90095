"""The History tab of the detail pane: every commit that changed the memory, its diff, a version.

Shown in place of the detail (key `H` on the memories screen) when the
memory's vault is inside a git repository; a vault outside git has no
History tab (the key says why).  The history is read in a thread worker
(git can take a moment on a long history); nothing here writes: `R` posts
`RestoreRequested`, and the screen confirms and writes.

Every line of memory text is drawn as literal `Content` (`safe`/`safe_block`),
never parsed as markup.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from memlens.core.errors import MemlensError
from memlens.core.history import (
    Entry,
    GitMissingError,
    History,
    HistoryError,
    NotInGitError,
    memory_history,
)
from memlens.core.history.diff import entry_diff, field_changes, text_of
from memlens.core.model import Memory

from ..safe_text import safe, safe_block, visible


@dataclass(frozen=True, slots=True)
class EntryView:
    """One entry, with what the pane draws for it (computed in the worker)."""

    entry: Entry
    summary: str
    diff: list[str]


def entry_views(history: History) -> list[EntryView]:
    """Every entry's one-line summary of fields and body, and its diff."""
    out: list[EntryView] = []
    for e in history.entries:
        if e.change in ("added", "removed"):
            summary = e.change
        else:
            fields, body = field_changes(history.memory, e)
            parts = [f.name for f in fields] + (["body"] if body else [])
            if e.old_path is not None:
                parts.insert(0, f"moved from {e.old_path}")
            summary = ", ".join(parts) or "bytes only"
        out.append(EntryView(e, summary, entry_diff(history, e)))
    return out


def diff_content(lines: list[str]) -> Content:
    """A unified diff, each line literal, coloured by its first character."""
    if not lines:
        return Content.styled("no change to the text (a move)", "$text-muted italic")
    styled: list[Content] = []
    for line in lines:
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("@@"):
            style = "$accent"
        elif line.startswith("+"):
            style = "$success"
        elif line.startswith("-"):
            style = "$error"
        else:
            style = ""
        styled.append(safe(line, style))
    return Content("\n").join(styled)


class HistoryPane(Vertical, can_focus=False):
    """The commits that changed one memory; calls down: `load(memory)`."""

    DEFAULT_CSS = """
    HistoryPane { display: none; }
    HistoryPane.-shown { display: block; }
    HistoryPane #history-tabs { height: 1; }
    HistoryPane #history-status { height: auto; color: $text-muted; }
    HistoryPane #history-list { height: auto; max-height: 40%; border: none; }
    HistoryPane #history-scroll { height: 1fr; }
    """

    BINDINGS = [
        Binding("enter", "toggle_view", "Diff/version", id="history.toggle"),
        Binding("R", "restore_version", "Restore this version", id="history.restore"),
        Binding("escape", "close", "Back to detail", id="history.close"),
    ]

    class Closed(Message):
        """The user left the History tab."""

    class RestoreRequested(Message):
        """Restore this version: the screen confirms (showing the diff) and writes."""

        def __init__(self, pane: HistoryPane, history: History, entry: Entry) -> None:
            super().__init__()
            self.pane = pane
            #: The history the entry belongs to (its `current` is what the user saw).
            self.history = history
            #: The entry whose version (its bytes after the commit) is to come back.
            self.entry = entry

    def __init__(self, *, id: str | None = None, use_cache: bool = True) -> None:
        super().__init__(id=id)
        #: Read through the kept history cache in the user cache folder (config `cache`).
        self.use_cache = use_cache
        #: The memory whose history is shown or being read.
        self.memory: Memory | None = None
        #: The history shown, once read.
        self.history: History | None = None
        #: What each entry shows (same order as the list).
        self.views: list[EntryView] = []
        #: Show the version at the commit instead of its diff.
        self.show_version = False
        #: Why the history could not be read (not in git, git missing), if so.
        self.error: str | None = None
        self._focus_on_load = True

    def compose(self) -> ComposeResult:
        yield Static(id="history-tabs")
        yield Static(id="history-status")
        yield OptionList(id="history-list")
        with VerticalScroll(id="history-scroll"):
            yield Static(id="history-view")

    # ------------------------------------------------------------------ calls down
    def load(self, memory: Memory, *, focus: bool = True) -> None:
        """Read `memory`'s history in a worker; the pane fills in when it is done.

        `focus`: give the commit list the focus once read (not when the tab
        follows the list's cursor, which keeps the focus).
        """
        self._focus_on_load = focus
        self.memory = memory
        self.history = None
        self.views = []
        self.error = None
        self.show_version = False
        tabs = Content.assemble(
            ("Detail", "$text-muted"), "  ", ("History", "bold reverse"), "  · "
        ) + safe(memory.id, "$text-muted")
        self.query_one("#history-tabs", Static).update(tabs)
        self.query_one("#history-status", Static).update(Content("reading git history…"))
        self.query_one(OptionList).clear_options()
        self.query_one("#history-view", Static).update(Content(""))
        self._read(memory)

    @work(thread=True, exclusive=True, group="history", exit_on_error=False)
    def _read(self, memory: Memory) -> None:
        try:
            history = memory_history(memory, cache=self.use_cache)
            views = entry_views(history)
        except (NotInGitError, GitMissingError) as exc:
            self.app.call_from_thread(self._unavailable, str(exc))
            return
        except (HistoryError, MemlensError, OSError) as exc:
            self.app.call_from_thread(self._failed, memory, str(exc))
            return
        self.app.call_from_thread(self._loaded, history, views)

    def _unavailable(self, why: str) -> None:
        """No History tab for a vault outside git (or without git): say so and go back."""
        self.error = why
        self.notify(visible(f"No history: {why}"), severity="warning", markup=False)
        self.post_message(self.Closed())

    def _failed(self, memory: Memory, why: str) -> None:
        if memory is not self.memory:
            return  # an earlier read, overtaken by a newer one
        self.error = why
        self.query_one("#history-status", Static).update(safe(why, "$error"))

    def _loaded(self, history: History, views: list[EntryView]) -> None:
        if history.memory is not self.memory:
            return  # an earlier read, overtaken by a newer one
        self.history = history
        self.views = views
        n = len(history.commits)
        status = f"{n} commit{'s' if n != 1 else ''} changed it · {history.repo.top}"
        if history.repo.shallow:
            status += " · shallow clone: history stops at its boundary"
        if not history.entries:
            status += " · never committed"
        status += " · enter: diff/version · R: restore this version · esc: back"
        self.query_one("#history-status", Static).update(safe(status))
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options([Option(self._line(v), id=str(i)) for i, v in enumerate(views)])
        if views:
            options.highlighted = 0
        if self._focus_on_load:
            options.focus()
        self._show_selected()

    @staticmethod
    def _line(view: EntryView) -> Content:
        c = view.entry.commit
        if c is None:
            head = Content.styled("working tree", "bold $warning")
        else:
            head = Content.assemble(
                (c.short, "$accent"), f"  {c.date[:10]}  ", safe(c.author), "  ", safe(c.subject)
            )
        return head + Content("  ") + safe(f"[{view.summary}]", "$text-muted")

    # ------------------------------------------------------------------ selection
    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self._show_selected()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_toggle_view()

    @property
    def selected(self) -> EntryView | None:
        index = self.query_one(OptionList).highlighted
        if index is None or not 0 <= index < len(self.views):
            return None
        return self.views[index]

    def _show_selected(self) -> None:
        view = self.selected
        target = self.query_one("#history-view", Static)
        if view is None:
            target.update(Content(""))
            return
        if self.show_version:
            e = view.entry
            when = e.commit.short if e.commit is not None else "the working tree"
            if e.after is None:
                body = Content.styled("(the memory is not in this version)", "$text-muted italic")
            else:
                body = safe_block(text_of(e.after))
            head = Content.styled(f"the memory as of {when} · {e.path}", "bold")
            target.update(head + Content("\n\n") + body)
        else:
            target.update(diff_content(view.diff))

    # ------------------------------------------------------------------ actions
    def action_toggle_view(self) -> None:
        self.show_version = not self.show_version
        self._show_selected()

    def action_restore_version(self) -> None:
        view = self.selected
        if self.history is None or view is None:
            self.notify("Nothing to restore: no version chosen.", severity="warning")
            return
        self.post_message(self.RestoreRequested(self, self.history, view.entry))

    def action_close(self) -> None:
        self.post_message(self.Closed())
