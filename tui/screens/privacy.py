"""Privacy: every secret and piece of personal data in the loaded memories, masked.

The findings come from the app's privacy scan (`app_privacy`), refreshed
after every change.  Secrets are only ever shown masked (`AKIA…(20)`).
enter opens the memory in the memories pane; `r` redacts the finding under
the cursor, `R` every finding of its kind in every vault, `E` erases the
memory (its format's archive or tombstone).  Every write is listed first in
the confirm screen and goes through the journaled actions (`memlens undo`,
or `u` in the memories pane, reverts it); a vault in a git repository gets
the plain warning that its history still holds the values.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from typing import Any

from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from memlens.core.errors import ConflictError, MemlensError, NotFoundError
from memlens.core.model import Memory
from memlens.core.privacy import Finding, git_history_note, git_root, scrub
from memlens.core.privacy.findings import places

from ..action_common import catalog_of, entry_paths, refresh_after_write, tell
from ..action_jobs import Job, plan_jobs, vault_steps
from ..messages import OpenMemory, OpenRaw
from ..safe_text import safe, safe_rich
from ..widgets.key_footer import KeyFooter
from ..widgets.line_list import LineList, column_header
from .base import MemlensScreen
from .confirm import ConfirmScreen

_COLUMNS = (("kind", 18), ("secret", 12), ("vault", 14), ("where", 30), ("field", 16))


class FindingTable(LineList):
    """One line per finding; enter opens the memory."""

    DEFAULT_CSS = """
    FindingTable > .findings--credential { color: $error; }
    FindingTable > .findings--personal { color: $warning; }
    FindingTable > .findings--dim { color: $text-muted; }
    """

    COMPONENT_CLASSES = {"findings--credential", "findings--personal", "findings--dim"}

    empty_text = "no secrets or personal data found"

    class Highlighted(Message):
        def __init__(self, table: FindingTable, finding: Finding) -> None:
            super().__init__()
            self.table = table
            self.finding = finding

    class Selected(Message):
        def __init__(self, table: FindingTable, finding: Finding) -> None:
            super().__init__()
            self.table = table
            self.finding = finding

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        #: The findings shown, by vault, file and line.
        self.findings: list[Finding] = []

    def set_findings(self, findings: list[Finding]) -> None:
        self.findings = findings
        self.rows_changed()

    def current(self) -> Finding | None:
        return self.at_cursor(self.findings)

    def row_count(self) -> int:
        return len(self.findings)

    def render_header(self, width: int) -> Text:
        return column_header(_COLUMNS, "memory")

    def render_row(self, index: int, width: int) -> Text:
        f = self.findings[index]
        where = f"{f.shown_path}:{f.line}" if f.line is not None else f.shown_path
        text = Text()
        for value, (_, w), style in (
            (f.kind, _COLUMNS[0], self._style(f"findings--{f.category}")),
            (f.masked, _COLUMNS[1], Style()),
            (f.vault, _COLUMNS[2], self._style("findings--dim")),
            (where, _COLUMNS[3], Style()),
            (f.field, _COLUMNS[4], self._style("findings--dim")),
        ):
            cell = safe_rich(value)
            cell.stylize(style)
            cell.truncate(w, overflow="ellipsis", pad=True)
            text.append_text(cell)
            text.append(" ")
        text.append_text(safe_rich(f.shown_id))
        if f.invalid:
            text.append(" (invalid)", self._style("findings--dim"))
        elif f.side:
            text.append(" (no memory)", self._style("findings--dim"))
        return text

    def on_highlight(self, index: int) -> None:
        self.post_message(self.Highlighted(self, self.findings[index]))

    def on_select(self, index: int) -> None:
        self.post_message(self.Selected(self, self.findings[index]))


class PrivacyScreen(MemlensScreen):
    """Findings of every loaded vault; redact or erase from here, after a confirmation."""

    DEFAULT_CSS = """
    PrivacyScreen #privacy-bar { height: 1; background: $panel; padding: 0 1; }
    PrivacyScreen #privacy-kinds { height: auto; max-height: 3; padding: 0 1; color: $text-muted; }
    PrivacyScreen FindingTable { height: 1fr; }
    PrivacyScreen #privacy-detail {
        height: auto;
        max-height: 8;
        border-top: tall $panel;
        padding: 0 1;
    }
    """

    BINDINGS = [
        Binding("r", "redact_one", "Redact", id="privacy.redact"),
        Binding("R", "redact_kind", "Redact kind", id="privacy.redact_kind"),
        Binding("E", "erase", "Erase memory", id="privacy.erase"),
    ]

    def __init__(self) -> None:
        super().__init__()
        #: What is being written now, or None.
        self.busy: str | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="privacy-bar")
        yield Static(id="privacy-kinds")
        yield FindingTable(id="finding-list")
        yield Static(id="privacy-detail")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.watch(self.memlens, "privacy_version", self._findings_changed, init=True)
        self.query_one(FindingTable).focus()

    def _findings_changed(self, _version: int) -> None:
        app = self.memlens
        findings = list(app.findings)
        self.query_one(FindingTable).set_findings(findings)
        memories, invalid, side = places(findings)
        personal = sum(1 for f in findings if f.category == "personal")
        parts: list[Content | str | tuple[str, str]] = [
            ("Privacy", "bold $accent"),
            f"  {len(findings)} findings in {memories} memories"
            + (f" and {invalid} invalid items" if invalid else "")
            + (f" and {side} files holding no memory" if side else "")
            + f" · {len(findings) - personal} credentials · {personal} personal data",
        ]
        if app.loading or app.privacy_scanning:
            parts.append((" · scanning…", "$warning"))
        if self.busy:
            parts.append((f" · {self.busy}…", "$warning"))
        parts.append(("   enter: open · r: redact · R: redact kind · E: erase", "$text-muted"))
        self.query_one("#privacy-bar", Static).update(Content.assemble(*parts), layout=False)
        kinds = Counter(f.kind for f in findings)
        self.query_one("#privacy-kinds", Static).update(
            Content(" · ".join(f"{n} {k}" for k, n in sorted(kinds.items())))
        )
        if not findings:
            self.query_one("#privacy-detail", Static).update(Content(""))

    @on(FindingTable.Highlighted)
    def _highlighted(self, event: FindingTable.Highlighted) -> None:
        f = event.finding
        where = f"{f.shown_path}:{f.line}" if f.line is not None else f.shown_path
        parts: list[Content | str | tuple[str, str]] = [
            (f.kind, "bold $error" if f.category == "credential" else "bold $warning"),
            " ",
            safe(f.masked),
            " in ",
            safe(f.field),
            " of ",
            safe(f"{f.vault}/{where}"),
            f" ({f.format}, {f.health})\n",
            "id ",
            safe(f.shown_id),
        ]
        self.query_one("#privacy-detail", Static).update(Content.assemble(*parts))

    @on(FindingTable.Selected)
    def _selected(self, event: FindingTable.Selected) -> None:
        f = event.finding
        if f.memoryless:  # not a memory: its file, at the finding's line
            self.post_message(OpenRaw(f.vault_root / f.path, f.line, f"{f.vault}/{f.shown_path}"))
            return
        self.post_message(OpenMemory(f.vault_root, f.id))

    # ------------------------------------------------------------------ writes
    def _memory(self, finding: Finding) -> Memory | None:
        if finding.invalid:
            tell(
                self.memlens,
                f"{finding.shown_id} is invalid, not a memory: memlens never rewrites what it"
                " could not read; edit the file by hand (enter opens it).",
                "warning",
            )
            return None
        if finding.side:
            tell(
                self.memlens,
                f"{finding.shown_path} holds no memory (an episode log, CORE.md, REFLECTION.md,"
                " a view, stance or WAL store): memlens redacts memories only; edit the file"
                " by hand (enter opens it).",
                "warning",
            )
            return None
        try:
            return next(
                m
                for m in catalog_of(self.memlens).find(finding.id)
                if m.vault_root == finding.vault_root
            )
        except (StopIteration, NotFoundError):
            tell(
                self.memlens,
                f"{finding.shown_id} is no longer loaded; it may have changed.",
                "warning",
            )
            return None

    def action_redact_one(self) -> None:
        f = self.query_one(FindingTable).current()
        memory = self._memory(f) if f is not None else None
        if f is None or memory is None:
            return
        self._confirm_and_apply(
            f"redact one {f.kind} in {f.shown_id}",
            "redact",
            [memory],
            lambda _m: {"redactions": [f.redaction()]},
            [f],
        )

    def action_redact_kind(self) -> None:
        f = self.query_one(FindingTable).current()
        if f is None:
            return
        same = [x for x in self.memlens.findings if x.kind == f.kind and not x.memoryless]
        if not same:
            self._memory(f)  # says why: every one is in an invalid item or a side file
            return
        memories: dict[tuple[str, str], Memory] = {}
        for x in same:
            m = self._memory(x)
            if m is not None:
                memories.setdefault(m.key, m)
        self._confirm_and_apply(
            f"redact every {f.kind} ({len(same)} in {len(memories)} memories)",
            "redact",
            list(memories.values()),
            lambda _m: {"kinds": [f.kind]},
            same,
        )

    def action_erase(self) -> None:
        f = self.query_one(FindingTable).current()
        memory = self._memory(f) if f is not None else None
        if f is None or memory is None:
            return
        held = [x for x in self.memlens.findings if x.memory_key == f.memory_key]
        self._confirm_and_apply(f"erase {f.shown_id}", "erase", [memory], lambda _m: {}, held)

    def _confirm_and_apply(
        self,
        title: str,
        action: str,
        memories: list[Memory],
        params_of: Callable[[Memory], dict[str, Any]],
        findings: list[Finding],
    ) -> None:
        if self.busy is not None:
            tell(self.memlens, f"Still busy with {self.busy}; try again in a moment.", "warning")
            return
        secrets = [f.secret for f in findings]
        self.busy = "planning"

        async def plan_then_confirm() -> None:
            try:
                jobs = await asyncio.to_thread(plan_jobs, action, memories, params_of)
            finally:
                self.busy = None
            for job in jobs:  # refusals could quote file text: never show a secret
                job.item.lines[:] = [scrub(line, secrets) for line in job.item.lines]
            self._confirm(title, action, jobs, secrets)

        self.run_worker(plan_then_confirm(), group="privacy-write", exit_on_error=False)

    def _confirm(self, title: str, action: str, jobs: list[Job], secrets: list[str]) -> None:
        roots = {j.step.root for j in jobs if j.step is not None}
        notes = [git_history_note(r) for r in {git_root(root) for root in roots} if r is not None]
        note = "One step per vault: u in the memories pane (or memlens undo) reverts it."
        if action == "erase":
            note += " An archived memory keeps its text in the archive: redact it first."
        note = " ".join([note, *notes])

        def answered(yes: bool | None) -> None:
            if not yes:
                tell(self.memlens, "Cancelled: nothing written.")
                return
            self.busy = "writing"
            self.run_worker(
                self._apply(action, jobs, secrets), group="privacy-write", exit_on_error=False
            )

        hidden = [*secrets, *(f.secret for f in self.memlens.findings)]
        screen = ConfirmScreen(title, [j.item for j in jobs], note=note, danger=True, mask=hidden)
        self.app.push_screen(screen, answered)

    async def _apply(self, action: str, jobs: list[Job], secrets: list[str]) -> None:
        steps = vault_steps(action, jobs)

        def work() -> tuple[int, list[str], list[Any]]:
            applied, refused, paths = 0, [], []
            for step, group in steps:
                try:
                    entry = step.apply()
                except (ConflictError, MemlensError, OSError) as exc:
                    refused.append(f"{step.label}: {exc}")
                    continue
                applied += len(group) - len(entry.get("refused", []))
                paths += entry_paths(step.root, entry)
            return applied, refused, paths

        try:
            applied, refused, paths = await asyncio.to_thread(work)
        finally:
            self.busy = None
        text = f"{action}: {applied} applied"
        if refused:
            text += f", {len(refused)} refused: " + "; ".join(refused[:3])
        tell(self.memlens, scrub(text, secrets), "warning" if refused else "information")
        if paths:
            refresh_after_write(self.memlens, paths)
