"""Every invalid file/record and every flagged reference, openable at the faulty line."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from memlens.core.listing import ProblemEntry, problem_entries
from memlens.core.model import ReferenceProblem
from memlens.core.privacy import Finding

from ..messages import OpenMemory, OpenRaw
from ..safe_text import safe, safe_rich
from ..widgets.key_footer import KeyFooter
from ..widgets.line_list import LineList, column_header
from .base import MemlensScreen

_COLUMNS = (("reason", 22), ("vault", 18), ("where", 34))


def secret_entries(findings: Iterable[Finding]) -> list[ProblemEntry]:
    """One `secret:<kind>` problem per privacy finding, the secret masked in its detail."""
    return [
        ProblemEntry(
            vault=f.vault if f.vault != "." else f.vault_root.name,
            vault_root=f.vault_root,
            format=f.format,
            path=f.path,
            kind="secret",
            reason=f"secret:{f.kind}",
            detail=f"{f.masked} in {f.field}",
            id=f.id,
            line=f.record_line,
            index=f.index,
            at_line=f.line,
            source=None,
        )
        for f in findings
    ]


class ProblemTable(LineList):
    """One line per problem; enter opens the raw text at the faulty line."""

    DEFAULT_CSS = """
    ProblemTable > .problems--invalid { color: $error; }
    ProblemTable > .problems--reference { color: $warning; }
    ProblemTable > .problems--dim { color: $text-muted; }
    ProblemTable > .problems--secret { color: $error; }
    """

    COMPONENT_CLASSES = {
        "problems--invalid",
        "problems--reference",
        "problems--dim",
        "problems--secret",
    }

    empty_text = "no problems found"

    class Highlighted(Message):
        def __init__(self, table: ProblemTable, entry: ProblemEntry) -> None:
            super().__init__()
            self.table = table
            self.entry = entry

    class Selected(Message):
        def __init__(self, table: ProblemTable, entry: ProblemEntry) -> None:
            super().__init__()
            self.table = table
            self.entry = entry

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        #: The problems shown, in vault and file order.
        self.entries: list[ProblemEntry] = []

    def set_entries(self, entries: list[ProblemEntry]) -> None:
        self.entries = entries
        self.rows_changed()

    def current(self) -> ProblemEntry | None:
        return self.at_cursor(self.entries)

    def row_count(self) -> int:
        return len(self.entries)

    def render_header(self, width: int) -> Text:
        return column_header(_COLUMNS, "detail")

    def render_row(self, index: int, width: int) -> Text:
        e = self.entries[index]
        text = Text()
        colour = self._style(f"problems--{e.kind}")
        for value, (_, w), style in (
            (e.reason, _COLUMNS[0], colour),
            (e.vault, _COLUMNS[1], Style()),
            (e.where, _COLUMNS[2], self._style("problems--dim")),
        ):
            cell = safe_rich(value)
            cell.stylize(style)
            cell.truncate(w, overflow="ellipsis", pad=True)
            text.append_text(cell)
            text.append(" ")
        text.append_text(safe_rich(e.detail))
        return text

    def on_highlight(self, index: int) -> None:
        self.post_message(self.Highlighted(self, self.entries[index]))

    def on_select(self, index: int) -> None:
        self.post_message(self.Selected(self, self.entries[index]))


class ProblemsScreen(MemlensScreen):
    """Problems of every vault, with reasons; enter opens the raw text."""

    DEFAULT_CSS = """
    ProblemsScreen #problems-bar { height: 1; background: $panel; padding: 0 1; }
    ProblemsScreen #problems-reasons {
        height: auto;
        max-height: 4;
        padding: 0 1;
        color: $text-muted;
    }
    ProblemsScreen ProblemTable { height: 1fr; }
    ProblemsScreen #problem-detail {
        height: auto;
        max-height: 8;
        border-top: tall $panel;
        padding: 0 1;
    }
    """

    BINDINGS = [
        Binding("m", "open_memory", "Go to memory", id="problems.memory"),
    ]

    def compose(self) -> ComposeResult:
        yield Static(id="problems-bar")
        yield Static(id="problems-reasons")
        yield ProblemTable(id="problem-list")
        yield Static(id="problem-detail")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.watch(self.memlens, "catalog_version", self._catalog_changed, init=True)
        self.watch(self.memlens, "privacy_version", self._catalog_changed, init=False)
        self.query_one(ProblemTable).focus()

    def _catalog_changed(self, _version: int) -> None:
        app = self.memlens
        entries = problem_entries(v for v, _ in app.loaded) + secret_entries(app.findings)
        table = self.query_one(ProblemTable)
        table.set_entries(entries)
        invalid = sum(1 for e in entries if e.kind == "invalid")
        secrets = sum(1 for e in entries if e.kind == "secret")
        parts: list[Content | str | tuple[str, str]] = [
            ("Problems", "bold $accent"),
            f"  {invalid} invalid items · {len(entries) - invalid - secrets} flagged references",
        ]
        parts.append(f" · {len(app.loaded)} vaults")
        if app.loading:
            parts.append((" · loading…", "$warning"))
        parts.append(("   enter: raw text at the line · m: go to memory", "$text-muted"))
        self.query_one("#problems-bar", Static).update(Content.assemble(*parts), layout=False)
        reasons = Counter(e.reason for e in entries)
        self.query_one("#problems-reasons", Static).update(
            Content(" · ".join(f"{n} {r}" for r, n in sorted(reasons.items())))
        )
        if not entries:
            self.query_one("#problem-detail", Static).update(Content(""))

    @on(ProblemTable.Highlighted)
    def _highlighted(self, event: ProblemTable.Highlighted) -> None:
        e = event.entry
        parts: list[Content | str | tuple[str, str]] = [
            (e.reason, "bold $warning" if e.kind == "reference" else "bold $error"),
            " in ",
            safe(f"{e.vault}/{e.where}"),
            " (",
            e.format,
            ")\n",
        ]
        if e.id:
            parts += ["id ", safe(e.id), "\n"]
        parts.append(safe(e.detail))
        self.query_one("#problem-detail", Static).update(Content.assemble(*parts))

    @on(ProblemTable.Selected)
    def _selected(self, event: ProblemTable.Selected) -> None:
        e = event.entry
        needle = None
        if e.at_line is None and isinstance(e.source, ReferenceProblem):
            # Flagged references carry no line in markdown formats: find the
            # reference text itself in the file.
            needle = e.source.ref
        self.post_message(OpenRaw(e.vault_root / e.path, e.at_line, f"{e.vault}/{e.path}", needle))

    def action_open_memory(self) -> None:
        e = self.query_one(ProblemTable).current()
        if e is None:
            return
        if e.kind == "invalid" or not e.id:
            self.notify("Invalid items are not loaded as memories: enter shows the raw text.")
            return
        self.post_message(OpenMemory(e.vault_root, e.id))
