"""Bulk writes as jobs: each memory's plan shown first, then applied vault by vault.

A job is planned at preview time and re-planned right before it is applied
(inside the run's transaction), so a file changed in between is refused
rather than overwritten.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memlens.core.errors import MemlensError, RefusedError
from memlens.core.formats import info_for
from memlens.core.formats.observation_v1.writer import plan_promote_many
from memlens.core.model import Memory
from memlens.core.write.actions import Action
from memlens.core.write.journal import Plan
from memlens.core.write.txn import apply_plan, apply_run

from .action_common import memory_label, plan_lines
from .screens.confirm import ChangeItem
from .screens.run_preview import RunStep

if TYPE_CHECKING:
    pass


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
    """Promote jobs: observation-v1 observations of one vault become one comprehension."""
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
