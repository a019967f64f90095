"""Maintenance runs from the palette: each format's own batch jobs, previewed first.

Every run is planned in full (`RunPreview`), shown in a `RunPreviewScreen`,
and applied step by step only when confirmed; whatever it wrote is re-read.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from operator import attrgetter
from typing import TYPE_CHECKING

from memlens.core.decay import archive_candidates
from memlens.core.errors import MemlensError
from memlens.core.formats import FormatInfo, format_ids_where
from memlens.core.formats.cognitive_memory.runs import plan_core, plan_reindex
from memlens.core.formats.cognitive_memory.runs_reflection import plan_reflection
from memlens.core.formats.cognitive_memory.runs_state import plan_decay_scores
from memlens.core.formats.dream_cycle.runs import decay_run
from memlens.core.formats.project_ocean.references import reference_run
from memlens.core.formats.project_ocean.runs import (
    decay_candidates,
    promotion_candidates,
    split_name_clashes,
)
from memlens.core.model import Memory
from memlens.core.scan.vault import Catalog, Vault
from memlens.core.write.journal import Plan
from memlens.core.write.txn import apply_plan

from .action_common import (
    catalog_of,
    diff_stat,
    entry_paths,
    memory_label,
    refresh_after_write,
    tell,
    vaults_with,
    wall_clock,
)
from .action_jobs import plan_jobs, vault_steps
from .commands import PaletteCommand
from .screens.confirm import ChangeItem
from .screens.run_preview import RunOutcome, RunPreview, RunPreviewScreen, RunStep, ThresholdScreen

if TYPE_CHECKING:
    from .app import MemlensApp

#: Capabilities that pick the vaults of a maintenance run (see `FormatInfo`).
_has_decay_run: Callable[[FormatInfo], bool] = attrgetter("has_decay_run")
_tracks_access: Callable[[FormatInfo], bool] = attrgetter("tracks_access")


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


def _ocean_decay(app: MemlensApp) -> Callable[[], RunPreview]:
    """Project Ocean's decay run: what the formats write back (the second
    generation's neglect penalty and max-age extensions), then the archives,
    one transaction per vault."""
    catalog = catalog_of(app)
    as_of = app.as_of

    def planner() -> RunPreview:
        chosen = decay_candidates(catalog, as_of)
        writes = [w for v in catalog.vaults for w in v.adapter.decay_writebacks(v.memories, as_of)]
        preview = RunPreview(
            summary=f"Project Ocean decay as of {as_of.isoformat()}: {len(chosen)} to archive, "
            f"{len(writes)} to write back"
        )
        changes = {w.memory.key: w.changes for w in writes}
        jobs = plan_jobs("set", [w.memory for w in writes], lambda m: {"changes": changes[m.key]})
        reasons = {m.key: "; ".join(r) for m, r in chosen}
        jobs += plan_jobs(
            "archive",
            [m for m, _r in chosen],
            lambda m: {"reason": reasons[m.key], "as_of": as_of.isoformat()},
        )
        preview.items += [job.item for job in jobs]
        preview.steps += [step for step, _group in vault_steps("decay", jobs)]
        return preview

    return planner


def _ocean_references(app: MemlensApp) -> Callable[[], RunPreview]:
    """Project Ocean's references run (memory-ref.py), one transaction per vault."""
    catalog = catalog_of(app)

    def planner() -> RunPreview:
        runs = reference_run(catalog)
        updates = [u for _v, found, _s in runs for u in found]
        preview = RunPreview(summary=f"Project Ocean references: {len(updates)} to update")
        changes = {u.memory.key: u.changes for u in updates}
        jobs = plan_jobs("set", [u.memory for u in updates], lambda m: {"changes": changes[m.key]})
        preview.items += [job.item for job in jobs]
        preview.steps += [step for step, _group in vault_steps("ref", jobs)]
        preview.items += [
            ChangeItem(memory_label(m), [f"skipped: {why}"], refused=True)
            for _v, _u, skipped in runs
            for m, why in skipped
        ]
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
            summary=f"Project Ocean promote, confidence (importance) >= {threshold:g}"
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
            app, "Project Ocean: decay", _ocean_decay(app)
        ),
        "Run: Project Ocean references (refs, ref_by, importance)": lambda: start_run(
            app, "Project Ocean: references", _ocean_references(app)
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
