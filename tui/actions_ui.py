"""Glue between the app and core actions: keys and palette commands -> safe, undoable writes.

Every write goes through `memlens.core.write.actions` or `core.journal.apply_plan`
(validated, conflict-checked, atomic, journaled), in a thread, never on the
event loop.  This module decides the flow around it:

- one memory (the highlighted one): apply at once; a refusal is a
  notification naming the file and the reason;
- the marked set: plan every memory first, list the plans and refusals in a
  `ConfirmScreen`, write nothing unless confirmed, then apply memory by
  memory (each its own undoable step; each re-planned, because an earlier
  step may have changed a shared file);
- `ConflictError` (another program wrote the file): the `ConflictScreen`
  (diff, reload, overwrite);
- maintenance runs from the palette: a `RunPreviewScreen` that previews and
  then applies step by step with a progress bar;
- after any write, the app re-reads what changed (`refresh_after_write`).

Access tracking (cognitive memory `_state.json`) is off unless the user turns
it on (`track_access`), so browsing never changes what agents see.
"""

from __future__ import annotations

import asyncio
import difflib
import subprocess
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import SuspendNotSupported
from textual.notifications import SeverityLevel
from textual.timer import Timer

from memlens.core.config import Config
from memlens.core.decay import archive_candidates
from memlens.core.errors import ConflictError, MemlensError, NotFoundError, RefusedError
from memlens.core.formats import FormatInfo, format_ids_where, info_for
from memlens.core.formats.cognitive_memory.runs import plan_core, plan_reindex
from memlens.core.formats.cognitive_memory.runs_reflection import plan_reflection
from memlens.core.formats.cognitive_memory.runs_state import plan_decay_scores, plan_record_access
from memlens.core.formats.dream_cycle.runs import decay_run
from memlens.core.formats.observation_v1.writer import plan_promote_many
from memlens.core.formats.project_ocean.runs import (
    decay_candidates,
    promotion_candidates,
    split_name_clashes,
)
from memlens.core.listing import MemoryRow
from memlens.core.model import Memory
from memlens.core.safe_io import read_regular
from memlens.core.scan.vault import Catalog, Vault
from memlens.core.write.actions import Action, undo
from memlens.core.write.journal import Plan
from memlens.core.write.txn import apply_plan, apply_run

from .commands import PaletteCommand
from .safe_text import visible
from .screens.confirm import ChangeItem, ConfirmScreen
from .screens.conflict import ConflictScreen, reread_memory
from .screens.edit_metadata import EditMetadataScreen
from .screens.promote import PromoteScreen
from .screens.run_preview import (
    RunOutcome,
    RunPreview,
    RunPreviewScreen,
    RunStep,
    ThresholdScreen,
)

if TYPE_CHECKING:
    from .app import MemlensApp
    from .screens.main import MainScreen

#: Actions that can be re-planned against the file as it is now ("overwrite").
REPLANNABLE = frozenset({"pin", "unpin", "archive", "restore", "set"})
#: Seconds a memory's detail must stay shown before it counts as an access.
ACCESS_DELAY = 1.0
#: Editors that understand `+LINE` before the file name.
_PLUS_LINE_EDITORS = frozenset({"vi", "vim", "nvim", "nano", "emacs", "micro", "kak", "mg"})
#: Capabilities that pick the vaults of a maintenance run (see `FormatInfo`).
_has_decay_run: Callable[[FormatInfo], bool] = attrgetter("has_decay_run")
_tracks_access: Callable[[FormatInfo], bool] = attrgetter("tracks_access")


# --------------------------------------------------------------------------- small helpers


def wall_clock() -> datetime:
    """The time written into files (timestamps, access times): the one clock read here."""
    return datetime.now(UTC).replace(microsecond=0)


#: Characters of a title shown in lists and notifications.
LABEL_TITLE_CHARS = 48


def memory_label(memory: Memory) -> str:
    """`title  (id)` for lists and notifications, the title cut to one line."""
    title = " ".join(memory.title.split())
    if len(title) > LABEL_TITLE_CHARS:
        title = title[: LABEL_TITLE_CHARS - 1].rstrip() + "…"
    return f"{title}  ({memory.id})"


def plan_lines(plan: Plan) -> list[str]:
    """The plan's summary, then each file change the summary does not already name."""
    lines = [plan.summary]
    for line in plan.describe():
        paths = line.split(" ", 1)[-1].split(" -> ")
        if not all(p in plan.summary for p in paths):
            lines.append(line)
    return lines


def entry_paths(root: Path, entry: dict[str, Any]) -> list[Path]:
    """Files a journal entry (an applied plan, or an undone one) touched."""
    out: list[Path] = []
    for op in entry.get("ops", []):
        for key in ("path", "dst"):
            rel = op.get(key)
            if isinstance(rel, str) and rel:
                out.append(root / rel)
    return out


def editor_argv(config: Config, path: Path, line: int | None = None) -> list[str]:
    """The editor command for `path` (config, $VISUAL, $EDITOR, vi), at `line` if it can."""
    argv = list(config.editor_command())
    if line is not None and Path(argv[0]).name in _PLUS_LINE_EDITORS:
        argv.append(f"+{line}")
    return [*argv, str(path)]


def tracking_on(app: MemlensApp) -> bool:
    """Access tracking follows the config's `track_access` (default off)."""
    return bool(app.config.track_access)


def tell(app: MemlensApp, message: str, severity: SeverityLevel = "information") -> None:
    """A notification with user text shown literally."""
    log: list[tuple[str, str]] | None = getattr(app, "action_log", None)
    if log is None:
        log = []
        # Why an attribute set here: what the user was told can be read
        # (tests, debugging) without Textual's private list of toasts.
        app.action_log = log  # type: ignore[attr-defined]
    log.append((severity, message))
    app.notify(visible(message), severity=severity, markup=False, timeout=6)


def refresh_after_write(app: MemlensApp, paths: Iterable[Path]) -> None:
    """Re-read the files a write changed (rows, search index and graph follow).

    Why explicit: memlens's own writes are not echoed by the live-reload
    watcher (it is told about them first), so the app is asked directly.
    """
    app.refresh_paths(list(dict.fromkeys(paths)))


def catalog_of(app: MemlensApp) -> Catalog:
    return Catalog([v for v, _rows in app.loaded])


def vaults_with(app: MemlensApp, test: Callable[[FormatInfo], bool]) -> list[Vault]:
    """Loaded vaults of the formats whose facts pass `test` (a capability)."""
    return [v for v, _rows in app.loaded if test(info_for(v.format))]


def diff_stat(plan: Plan) -> list[str]:
    """`+12 -3 lines in CORE.md` per rewritten or created text file."""
    out: list[str] = []
    for c in plan.changes:
        if c.data is None:
            continue
        try:
            old = read_regular(c.path).decode("utf-8") if c.kind == "write" else ""
            new = c.data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        added = removed = 0
        for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm=""):
            if line.startswith("+") and not line.startswith("+++"):
                added += 1
            elif line.startswith("-") and not line.startswith("---"):
                removed += 1
        out.append(f"+{added} -{removed} lines in {c.path.name}")
    return out


# --------------------------------------------------------------------------- bulk jobs


@dataclass(slots=True)
class Job:
    """One planned write of a bulk action: shown first, applied if confirmed."""

    item: ChangeItem
    step: RunStep | None
    #: Marks to clear once applied.
    keys: tuple[tuple[str, str], ...] = ()
    #: Plans the write again right before it is applied (inside the run's transaction).
    plan: Callable[[], Plan] | None = None


def vault_steps(action: str, jobs: list[Job]) -> list[tuple[RunStep, list[Job]]]:
    """One step per vault: its jobs applied as one transaction (one journal entry, one undo).

    A step returns the run's entry; jobs refused inside the run (changed on
    disk since the preview) are listed under the entry's `refused` key.
    """
    groups: dict[Path, list[Job]] = {}
    for job in jobs:
        if job.step is not None and job.plan is not None:
            groups.setdefault(job.step.root, []).append(job)
    out: list[tuple[RunStep, list[Job]]] = []
    for root, group in groups.items():
        label = group[0].item.label if len(group) == 1 else f"{root.name}: {len(group)} memories"
        apply = partial(_apply_group, root, action, group)
        out.append((RunStep(label, root, apply), group))
    return out


def _apply_group(root: Path, action: str, jobs: list[Job]) -> dict[str, Any]:
    steps = [(job.item.label, job.plan) for job in jobs if job.plan is not None]
    entry, refused = apply_run(root, action, steps)
    if entry is None:
        raise RefusedError("; ".join(f"{label}: {why}" for label, why in refused) or "no change")
    return {**entry, "refused": refused} if refused else entry


def _same(plan: Plan) -> Plan:
    """A plan made at preview time (its snapshots refuse it if the files changed since)."""
    return plan


def plan_jobs(
    name: str, memories: list[Memory], params_of: Callable[[Memory], dict[str, Any]]
) -> list[Job]:
    """Plan `name` on every memory (blocking; planning never writes)."""
    jobs: list[Job] = []
    for m in memories:
        params = params_of(m)
        action = Action(name, m, params)
        try:
            plan = action.plan()
        except (MemlensError, OSError) as exc:
            jobs.append(Job(ChangeItem(memory_label(m), [str(exc)], refused=True), None))
            continue
        step = RunStep(memory_label(m), m.vault_root, Action(name, m, params).apply)
        item = ChangeItem(memory_label(m), plan_lines(plan))
        jobs.append(Job(item, step, (m.key,), Action(name, m, params).plan))
    return jobs


def plan_promote_jobs(memories: list[Memory], options: dict[str, dict[str, Any]]) -> list[Job]:
    """Promote jobs; memories of a kind that promotes together (observation-v1
    observations) become one new record per vault (one comprehension)."""
    jobs: list[Job] = []
    groups: dict[Path, list[Memory]] = {}
    rest: list[Memory] = []
    for m in memories:
        if m.kind in info_for(m.format).promotes_together:
            groups.setdefault(m.vault_root, []).append(m)
        else:
            rest.append(m)
    for root, group in groups.items():
        if len(group) == 1:
            rest.append(group[0])
            continue
        label = f"one comprehension citing {', '.join(m.id for m in group)}"
        try:
            plan = plan_promote_many(group, options.get(group[0].format, {}))
        except (MemlensError, OSError) as exc:
            jobs.append(Job(ChangeItem(label, [str(exc)], refused=True), None))
            continue
        step = RunStep(label, root, partial(apply_plan, plan))
        keys = tuple(m.key for m in group)
        jobs.append(Job(ChangeItem(label, plan_lines(plan)), step, keys, partial(_same, plan)))
    jobs += plan_jobs("promote", rest, lambda m: options.get(m.format, {}))
    return jobs


# --------------------------------------------------------------------------- the runner


class ActionRunner:
    """The memories screen's actions: one instance per `MainScreen`."""

    def __init__(self, screen: MainScreen) -> None:
        self.screen = screen
        #: What is being written now (shown in the top bar), or None.
        self.busy: str | None = None
        self._access_timer: Timer | None = None
        #: The memory whose viewing was last considered (one access per view).
        self._viewed: tuple[str, str] | None = None

    @property
    def app(self) -> MemlensApp:
        return self.screen.memlens

    # ------------------------------------------------------------------ entry points
    def pin_toggle(self, memories: list[Memory], bulk: bool) -> None:
        """Pin, or unpin when every target is pinned."""
        name = "unpin" if memories and all(m.pinned for m in memories) else "pin"
        self.run(name, memories, bulk)

    def run(self, name: str, memories: list[Memory], bulk: bool) -> None:
        """Apply `name` to one memory, or (bulk) confirm then apply to the marked set."""
        if not memories or not self._start(name):
            return
        if bulk:
            self._worker(self._bulk(name, memories, lambda _m: {}), name)
        else:
            self._worker(self._single(name, memories[0], {}), name)

    def promote(self, memories: list[Memory], bulk: bool) -> None:
        if not memories:
            return
        extra = {"as_of": self.app.as_of.isoformat()}

        def chosen(options: dict[str, dict[str, Any]] | None) -> None:
            if options is None or not self._start("promote"):
                return
            if bulk:
                self._worker(self._bulk_promote(memories, options), "promote")
            else:
                m = memories[0]
                self._worker(self._single("promote", m, options.get(m.format, {})), "promote")

        self.app.push_screen(PromoteScreen(memories, extra), chosen)

    def edit_metadata(self, memory: Memory) -> None:
        # The app announces an external change to it while the form is open.
        self.app.editing.add(memory.key)

        def chosen(changes: dict[str, Any] | None) -> None:
            self.app.editing.discard(memory.key)
            if changes and self._start("set"):
                self._worker(self._single("set", memory, {"changes": changes}), "set")

        self.app.push_screen(EditMetadataScreen(memory), chosen)

    def save_body(self, memory: Memory, body: str) -> None:
        if body == memory.body:
            tell(self.app, "Body unchanged: nothing written.")
            self.screen.stop_body_editing()
            return
        if self._start("edit_body"):
            self._worker(self._single("edit_body", memory, {"body": body}), "edit body")

    def undo(self, root: Path) -> None:
        if self._start("undo"):
            self._worker(self._undo(root), "undo")

    def open_in_editor(self, row: MemoryRow) -> None:
        """Suspend the app, run the editor on the row's file, re-read it after."""
        app = self.app
        if app.is_web:
            tell(app, "The external editor is not available in the browser.", "warning")
            return
        if row.problem is not None:
            path = row.problem.vault_root / row.problem.path
            line = row.problem.at_line or row.problem.line
        elif row.memory is not None:
            path, line = row.memory.abs_path, row.memory.line
        else:
            return
        argv = editor_argv(app.config, path, line)
        try:
            with app.suspend():
                # Why blocking here: the terminal belongs to the editor until it exits.
                code = subprocess.run(argv, check=False).returncode
        except SuspendNotSupported:
            tell(app, "This terminal cannot hand itself to an editor.", "warning")
            return
        except OSError as exc:
            tell(app, f"Could not start the editor {argv[0]!r}: {exc.strerror or exc}", "error")
            return
        # Why no `app.editing` entry: the app is suspended while the editor
        # runs, and the refresh below reads whatever the editor left.
        if code != 0:
            tell(app, f"The editor exited with status {code}.", "warning")
        self.screen.keep_selection(row.key)
        refresh_after_write(app, [path])

    # ------------------------------------------------------------------ access tracking
    def viewed(self, row: MemoryRow | None) -> None:
        """The detail now shows `row`: count an access after ACCESS_DELAY (if tracking).

        The same memory shown again (a refresh, a redraw) is the same view.
        """
        key = row.key if row is not None else None
        if key == self._viewed:
            return
        self._viewed = key
        if self._access_timer is not None:
            self._access_timer.stop()
            self._access_timer = None
        if row is None or row.memory is None or not tracking_on(self.app):
            return
        memory = row.memory
        tracked = info_for(memory.format).tracks_access
        if not tracked or memory.archived or memory.tombstoned:
            return
        self._access_timer = self.screen.set_timer(
            ACCESS_DELAY, partial(self._access_due, row.key, memory)
        )

    def _access_due(self, key: tuple[str, str], memory: Memory) -> None:
        self._access_timer = None
        shown = self.screen.shown_row()
        if shown is None or shown.key != key:
            return
        self.screen.run_worker(
            partial(self._record_access, memory),
            thread=True,
            group="access",
            exit_on_error=False,
            name="record access",
        )

    def _record_access(self, memory: Memory) -> None:
        try:
            apply_plan(plan_record_access(memory, wall_clock()))
        except (MemlensError, OSError) as exc:
            self.app.call_from_thread(
                tell, self.app, f"Access not recorded for {memory.id}: {exc}", "warning"
            )

    # ------------------------------------------------------------------ workers
    def _start(self, what: str) -> bool:
        if self.busy is not None:
            tell(self.app, f"Still busy with {self.busy}; try again in a moment.", "warning")
            return False
        self.busy = what
        self.screen.refresh_status()
        return True

    def _done(self) -> None:
        self.busy = None
        self.screen.refresh_status()

    def _worker(self, coro: Coroutine[Any, Any, None], name: str) -> None:
        async def guarded() -> None:
            try:
                await coro
            finally:
                self._done()

        self.screen.run_worker(guarded(), group="write", exit_on_error=False, name=name)

    async def _single(self, name: str, memory: Memory, params: dict[str, Any]) -> None:
        try:
            entry = await asyncio.to_thread(Action(name, memory, params).apply)
        except ConflictError as exc:
            self._conflict(name, memory, params, exc)
            return
        except (MemlensError, OSError) as exc:
            self._refused(name, memory, exc)
            return
        self._applied(name, memory, entry)

    def _applied(self, name: str, memory: Memory, entry: dict[str, Any]) -> None:
        if name == "edit_body":
            self.screen.stop_body_editing()
        tell(self.app, f"{entry.get('summary') or name} · u undoes it")
        self.screen.keep_selection(memory.key)
        refresh_after_write(self.app, entry_paths(memory.vault_root, entry))

    def _refused(self, name: str, memory: Memory, exc: BaseException) -> None:
        tell(self.app, f"{name} refused for {memory.path} ({memory.id}): {exc}", "error")

    async def _bulk(
        self, name: str, memories: list[Memory], params_of: Callable[[Memory], dict[str, Any]]
    ) -> None:
        jobs = await asyncio.to_thread(plan_jobs, name, memories, params_of)
        self._confirm(f"{name} {len(memories)} marked memories", jobs, name)

    async def _bulk_promote(
        self, memories: list[Memory], options: dict[str, dict[str, Any]]
    ) -> None:
        jobs = await asyncio.to_thread(plan_promote_jobs, memories, options)
        self._confirm(f"promote {len(memories)} marked memories", jobs, "promote")

    def _confirm(self, title: str, jobs: list[Job], action: str) -> None:
        def answered(yes: bool | None) -> None:
            if yes and self._start(title):
                self._worker(self._apply_jobs(jobs, action), title)
            elif not yes:
                tell(self.app, "Cancelled: nothing written.")

        screen = ConfirmScreen(
            title,
            [j.item for j in jobs],
            note="One step per vault: u undoes the whole of it at once.",
        )
        self.app.push_screen(screen, answered)

    async def _apply_jobs(self, jobs: list[Job], action: str) -> None:
        steps = vault_steps(action, jobs)

        def work() -> tuple[list[tuple[Job, dict[str, Any]]], list[tuple[Job, str]]]:
            applied: list[tuple[Job, dict[str, Any]]] = []
            refused: list[tuple[Job, str]] = []
            for i, (step, group) in enumerate(steps):
                self.app.call_from_thread(self._progress, i, len(steps))
                try:
                    entry = step.apply()
                except ConflictError as exc:
                    refused += [(job, f"changed on disk, reload first: {exc}") for job in group]
                    continue
                except (MemlensError, OSError) as exc:
                    refused += [(job, str(exc)) for job in group]
                    continue
                why = dict(entry.get("refused", []))
                for job in group:
                    if job.item.label in why:
                        refused.append((job, why[job.item.label]))
                    else:
                        applied.append((job, entry))
            return applied, refused

        applied, refused = await asyncio.to_thread(work)
        for job, _entry in applied:
            self.screen.marks.difference_update(job.keys)
        self.screen.marks_changed()
        text = f"{len(applied)} applied"
        if refused:
            text += f", {len(refused)} refused: " + "; ".join(
                f"{j.item.label}: {why}" for j, why in refused[:3]
            )
        tell(self.app, text, "warning" if refused else "information")
        paths = [p for job, entry in applied if job.step for p in entry_paths(job.step.root, entry)]
        if applied:
            refresh_after_write(self.app, paths)

    def _progress(self, done: int, total: int) -> None:
        self.busy = f"writing {done + 1}/{total}"
        self.screen.refresh_status()

    async def _undo(self, root: Path) -> None:
        try:
            entry = await asyncio.to_thread(undo, root)
        except NotFoundError:
            tell(self.app, f"Nothing to undo in {root.name}.", "warning")
            return
        except (MemlensError, OSError) as exc:
            tell(self.app, f"Undo refused in {root.name}: {exc}", "error")
            return
        tell(self.app, f"Undid: {entry.get('summary') or entry.get('action')}")
        refresh_after_write(self.app, entry_paths(root, entry))

    # ------------------------------------------------------------------ conflicts
    def _conflict(
        self, name: str, memory: Memory, params: dict[str, Any], exc: ConflictError
    ) -> None:
        body_edit = name == "edit_body"

        def answered(choice: str | None) -> None:
            if choice == "reload":
                if body_edit:
                    self.screen.stop_body_editing()
                self.screen.keep_selection(memory.key)
                refresh_after_write(self.app, [memory.abs_path])
            elif choice == "overwrite" and body_edit:
                self._confirm_body_overwrite(memory, params)
            elif choice == "overwrite" and self._start(f"{name} again"):
                self._worker(self._overwrite(name, memory, params), name)

        screen = ConflictScreen(
            memory,
            str(exc),
            action=name,
            can_overwrite=name in REPLANNABLE or body_edit,
            body_edit=body_edit,
        )
        self.app.push_screen(screen, answered)

    def _confirm_body_overwrite(self, memory: Memory, params: dict[str, Any]) -> None:
        def answered(yes: bool | None) -> None:
            if yes and self._start("overwrite body"):
                self._worker(self._overwrite("edit_body", memory, params), "overwrite body")

        item = ChangeItem(
            memory_label(memory),
            [
                f"replace the body in {memory.path} with your text",
                "the other program's change to the body is lost (undo brings it back)",
            ],
        )
        self.app.push_screen(
            ConfirmScreen(
                "Overwrite the new content with your text?",
                [item],
                confirm_label="Overwrite",
                danger=True,
            ),
            answered,
        )

    async def _overwrite(self, name: str, memory: Memory, params: dict[str, Any]) -> None:
        fresh = await asyncio.to_thread(reread_memory, memory)
        if fresh is None:
            tell(self.app, f"{memory.id} is no longer in {memory.path}: reloaded.", "warning")
            refresh_after_write(self.app, [memory.abs_path])
            return
        try:
            entry = await asyncio.to_thread(Action(name, fresh, params).apply)
        except (MemlensError, OSError) as exc:
            self._refused(name, fresh, exc)
            return
        self._applied(name, fresh, entry)


# --------------------------------------------------------------------------- maintenance runs


def _plan_item(vault: Vault, plan: Plan) -> ChangeItem:
    return ChangeItem(f"{vault.name}: {plan.summary}", [*plan.describe(), *diff_stat(plan)])


def _plan_runs(
    app: MemlensApp, test: Callable[[FormatInfo], bool], make: Callable[[Vault], Plan], what: str
) -> Callable[[], RunPreview]:
    """A planner running `make` on every loaded vault whose format passes `test`
    (one step per vault)."""
    vaults = vaults_with(app, test)
    fmt = " or ".join(sorted(format_ids_where(test)))

    def planner() -> RunPreview:
        preview = RunPreview()
        notes: list[str] = []
        if not vaults:
            notes.append(f"No {fmt} vault is loaded.")
        for v in vaults:
            try:
                plan = make(v)
            except (MemlensError, OSError) as exc:
                preview.items.append(ChangeItem(f"{v.name}: {what}", [str(exc)], refused=True))
                continue
            if not plan.changes:
                notes.append(f"{v.name}: {plan.summary} (nothing to write)")
                continue
            preview.items.append(_plan_item(v, plan))
            preview.steps.append(RunStep(f"{v.name}: {what}", v.root, partial(apply_plan, plan)))
        preview.summary = "\n".join(notes)
        return preview

    return planner


def _dream_decay(app: MemlensApp) -> Callable[[], RunPreview]:
    vaults = vaults_with(app, _has_decay_run)
    as_of = app.as_of

    def planner() -> RunPreview:
        preview = RunPreview(summary=f"Dream Cycle decay as of {as_of.isoformat()}")
        if not vaults:
            names = " or ".join(sorted(format_ids_where(_has_decay_run)))
            preview.summary += f"\nNo {names} vault is loaded."
        for v in vaults:
            try:
                plan, report = decay_run(v.root, as_of)
            except (MemlensError, OSError) as exc:
                preview.items.append(ChangeItem(f"{v.name}: decay", [str(exc)], refused=True))
                continue
            if not plan.changes:
                preview.summary += f"\n{v.name}: nothing to do"
                continue
            lines = [f"archive {i.id}: {'; '.join(i.reasons)}" for i in report.archived]
            lines += [
                f"write back {i.id}: importance {i.importance} -> {i.current_importance}"
                for i in report.decayed
            ]
            lines += [f"keep {i.id} (ttl=never): {'; '.join(i.reasons)}" for i in report.kept]
            lines += plan.describe()
            preview.items.append(ChangeItem(f"{v.name}: {report.summary()}", lines))
            preview.steps.append(RunStep(f"{v.name}: decay", v.root, partial(apply_plan, plan)))
        return preview

    return planner


def _archive_run(
    app: MemlensApp, select: Callable[[Catalog], list[tuple[Memory, list[str]]]], what: str
) -> Callable[[], RunPreview]:
    """Archive each selected memory as its own action, with the selection's reasons."""
    catalog = catalog_of(app)
    as_of = app.as_of

    def planner() -> RunPreview:
        chosen = select(catalog)
        preview = RunPreview(summary=f"{what} as of {as_of.isoformat()}: {len(chosen)} found")
        reasons = {m.key: "; ".join(r) for m, r in chosen}
        jobs = plan_jobs(
            "archive",
            [m for m, _r in chosen],
            lambda m: {"reason": reasons[m.key], "as_of": as_of.isoformat()},
        )
        preview.items += [job.item for job in jobs]
        preview.steps += [step for step, _group in vault_steps("decay", jobs)]
        return preview

    return planner


def _ocean_promote(
    app: MemlensApp, threshold: float, require_verified: bool
) -> Callable[[], RunPreview]:
    catalog = catalog_of(app)
    params = {"as_of": app.as_of.isoformat()}

    def planner() -> RunPreview:
        chosen, skipped = promotion_candidates(
            catalog, threshold=threshold, require_verified=require_verified
        )
        preview = RunPreview(
            summary=f"Project Ocean promote, confidence >= {threshold:g}"
            + (", verified only" if require_verified else "")
        )
        kept, clashes = split_name_clashes(chosen)
        jobs = plan_jobs("promote", kept, lambda _m: params)
        preview.items += [job.item for job in jobs]
        preview.steps += [step for step, _group in vault_steps("promote", jobs)]
        preview.items += [
            ChangeItem(memory_label(m), [f"refused: {why}"], refused=True) for m, why in clashes
        ]
        preview.items += [
            ChangeItem(memory_label(m), [f"skipped: {why}"], refused=True) for m, why in skipped
        ]
        return preview

    return planner


def start_run(app: MemlensApp, title: str, planner: Callable[[], RunPreview]) -> None:
    """Open the preview of a run; whatever it applies is re-read when it ends."""

    def applied(outcome: RunOutcome) -> None:
        paths = [p for step, entry in outcome.applied for p in entry_paths(step.root, entry)]
        if outcome.applied:
            refresh_after_write(app, paths)
        text = f"{title}: {len(outcome.applied)} applied"
        if outcome.refused:
            text += f", {len(outcome.refused)} refused"
        tell(app, text, "warning" if outcome.refused else "information")

    app.push_screen(RunPreviewScreen(title, planner, on_applied=applied))


def run_commands(app: MemlensApp) -> dict[str, Callable[[], None]]:
    """Maintenance runs by palette name."""
    as_of = app.as_of

    def cognitive(what: str, make: Callable[[Vault], Plan]) -> Callable[[], None]:
        return lambda: start_run(
            app, f"Cognitive memory: {what}", _plan_runs(app, _tracks_access, make, what)
        )

    def ocean_promote() -> None:
        def chosen(answer: tuple[float, bool] | None) -> None:
            if answer is not None:
                start_run(app, "Project Ocean: promote", _ocean_promote(app, *answer))

        app.push_screen(ThresholdScreen(), chosen)

    return {
        "Run: cognitive reindex (_index.json)": cognitive(
            "reindex", lambda v: plan_reindex(v.root, wall_clock())
        ),
        "Run: cognitive CORE.md": cognitive("CORE.md", lambda v: plan_core(v.root, as_of)),
        "Run: cognitive REFLECTION.md": cognitive(
            "REFLECTION.md", lambda v: plan_reflection(v.root, as_of)
        ),
        "Run: cognitive rescore (decay_score in _state.json)": cognitive(
            "rescore", lambda v: plan_decay_scores(v.root, as_of, wall_clock())
        ),
        "Run: Dream Cycle decay": lambda: start_run(app, "Dream Cycle: decay", _dream_decay(app)),
        "Run: Project Ocean decay (archive expired)": lambda: start_run(
            app,
            "Project Ocean: decay",
            _archive_run(app, lambda c: decay_candidates(c, as_of), "Project Ocean decay"),
        ),
        "Run: Project Ocean promote (threshold)": ocean_promote,
        "Run: archive everything the formats say is expired": lambda: start_run(
            app,
            "Archive everything expired",
            _archive_run(
                app, lambda c: archive_candidates(c, as_of), "expired by the formats' rules"
            ),
        ),
    }


def palette_commands(app: MemlensApp) -> list[PaletteCommand]:
    """Palette entries for the maintenance runs (the action keys are offered by the app
    from the memories screen's bindings)."""
    return [PaletteCommand(name, run, "preview first") for name, run in run_commands(app).items()]
