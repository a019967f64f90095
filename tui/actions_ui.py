"""Glue between the app and core actions: keys and palette commands -> safe, undoable writes.

Every write goes through `memlens.core.actions` or `core.write.txn.apply_plan`
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

The bulk jobs are in `action_jobs`, the maintenance runs in
`maintenance_runs`, what they share in `action_common`.
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Callable, Coroutine
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import SuspendNotSupported
from textual.timer import Timer

from memlens.core.actions import Action, undo
from memlens.core.config import Config
from memlens.core.errors import ConflictError, MemlensError, NotFoundError
from memlens.core.formats import info_for
from memlens.core.formats.cognitive_memory.runs_state import plan_record_access
from memlens.core.listing import MemoryRow
from memlens.core.model import Memory
from memlens.core.write.txn import apply_plan

from .action_common import (
    entry_paths,
    memory_label,
    refresh_after_write,
    tell,
    wall_clock,
)
from .action_jobs import Job, plan_jobs, plan_promote_jobs, vault_steps
from .screens.confirm import ChangeItem, ConfirmScreen
from .screens.conflict import ConflictScreen, reread_memory
from .screens.edit_metadata import EditMetadataScreen
from .screens.promote import PromoteScreen

if TYPE_CHECKING:
    from .app import MemlensApp
    from .screens.main import MainScreen


#: Actions that can be re-planned against the file as it is now ("overwrite").
REPLANNABLE = frozenset({"pin", "unpin", "archive", "restore", "set"})
#: Seconds a memory's detail must stay shown before it counts as an access.
ACCESS_DELAY = 1.0
#: Editors that understand `+LINE` before the file name.
_PLUS_LINE_EDITORS = frozenset({"vi", "vim", "nvim", "nano", "emacs", "micro", "kak", "mg"})


def editor_argv(config: Config, path: Path, line: int | None = None) -> list[str]:
    """The editor command for `path` (config, $VISUAL, $EDITOR, vi), at `line` if it can."""
    argv = list(config.editor_command())
    if line is not None and Path(argv[0]).name in _PLUS_LINE_EDITORS:
        argv.append(f"+{line}")
    return [*argv, str(path)]


def tracking_on(app: MemlensApp) -> bool:
    """Access tracking follows the config's `track_access` (default off)."""
    return bool(app.config.track_access)


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
            mask=[f.secret for f in self.app.findings],
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
