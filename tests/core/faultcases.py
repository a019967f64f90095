"""The operations the fault sweeps break: every action x every format, undo of each, the runs.

Each case copies one bundled demo vault (core/demo_vaults/, the project's own)
to a fresh folder and returns the operation as a closure; setting up (for
undo: applying the action first) happens unfaulted.  Loaded by file path
from the fault test modules.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from itertools import combinations
from pathlib import Path
from typing import Any

import memlens.core
from memlens.core.actions import Action
from memlens.core.curation import Candidate, apply_curation, dismiss, plan_steps
from memlens.core.curation.candidates import candidate_id
from memlens.core.decay import archive_candidates
from memlens.core.errors import MemlensError
from memlens.core.formats import adapter_for
from memlens.core.formats.cognitive_memory.runs import plan_core, plan_reindex
from memlens.core.formats.cognitive_memory.runs_reflection import plan_reflection
from memlens.core.formats.cognitive_memory.runs_state import plan_decay_scores, plan_record_access
from memlens.core.formats.curating import CurationOptions
from memlens.core.formats.dream_cycle.runs import decay_run
from memlens.core.formats.project_ocean.references import reference_run
from memlens.core.formats.project_ocean.runs import promotion_candidates
from memlens.core.formats.writers import writer_for
from memlens.core.history.versions import read_current
from memlens.core.scan.vault import open_catalog
from memlens.core.write.journal import read_journal
from memlens.core.write.txn import apply_plan, apply_run
from memlens.core.write.undo import undo_last

DEMO = Path(memlens.core.__file__).parent / "demo_vaults"
FORMATS = (
    "dream-cycle",
    "observation-v1",
    "experience-records",
    "project-ocean",
    "cognitive-memory",
    "project-ocean-gen2",
)
#: Cases that run on one of our test vaults instead of a demo vault, and the
#: format their memories have: Project Ocean's second generation.
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SOURCE = {"project-ocean-gen2": FIXTURES / ".second-generation" / "project-ocean-gen2"}
FORMAT_OF = {"project-ocean-gen2": "project-ocean"}
AS_OF = "2026-11-22"
NOW = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
#: A date late enough that every format's decay rules find candidates.
DECAY_AS_OF = date(2027, 6, 1)

#: Parameters tried in order until one plans a change.
PARAMS: dict[str, list[dict[str, Any]]] = {
    "pin": [{}],
    "unpin": [{}],
    "archive": [{"as_of": AS_OF}],
    "restore": [{}],
    "set": [
        {"changes": {"importance": 0.5}},
        {"changes": {"dc:importance": 5}},
        {"changes": {"confidence": 0.5}},
        {"changes": {"title": "Fault test"}},
        {"changes": {"tags": ["fault"]}},
    ],
    "edit_body": [{"body": "Fault test body.\n"}],
    "promote": [{"as_of": AS_OF}, {"as_of": AS_OF, "importance": 0.9, "type": "semantic"}],
}
#: What to apply first when no memory allows the action yet.
PREPARE = {"unpin": "pin", "restore": "archive", "redact": "edit_body"}
#: Parameters of that first action where they are not its own case's: the
#: demo vaults hold no secret, so redact first writes a (fake) one.
PREPARE_PARAMS: dict[str, list[dict[str, Any]]] = {
    "redact": [{"body": "Fault test: the deploy key is AKIAQ3EGRT7ZKXW4NB2L.\n"}]
}
PARAMS["redact"] = [{"upward": True}, {}]
PARAMS["erase"] = [{}]

ACTIONS = ("pin", "unpin", "set", "edit_body", "promote", "archive", "restore", "redact", "erase")
RUNS = {
    "dream-cycle": ("decay_apply", "dream_decay", "restore_version"),
    "observation-v1": ("decay_apply", "restore_version"),
    "experience-records": ("decay_apply",),  # restore_version refuses: raw is immutable
    "project-ocean": ("decay_apply", "ocean_promote", "restore_version"),
    "cognitive-memory": (
        "decay_apply",
        "access",
        "rescore",
        "core",
        "reindex",
        "reflection",
        "restore_version",
    ),
    "project-ocean-gen2": ("decay_apply", "ocean_promote", "ocean_ref"),
}


#: The review queue's actions (issue 21): one pair of live memories of one vault.
CURATION = ("merge", "supersede", "dismiss")


@dataclass(frozen=True, slots=True)
class Case:
    fmt: str
    name: str
    undo: bool = False

    @property
    def id(self) -> str:
        return f"{self.fmt}-{'undo-' if self.undo else ''}{self.name}"


def all_cases() -> list[Case]:
    out: list[Case] = []
    for fmt in FORMATS:
        for name in (*ACTIONS, *RUNS[fmt], *CURATION):
            out += [Case(fmt, name), Case(fmt, name, undo=True)]
    return out


def fresh(tmp: Path, fmt: str) -> Path:
    root = tmp / fmt
    shutil.copytree(SOURCE.get(fmt, DEMO / fmt), root)
    return root


def _find(
    root: Path, fmt: str, name: str, tried: list[dict[str, Any]] | None = None
) -> tuple[str, dict[str, Any]] | None:
    memories = sorted(
        (m for m in open_catalog(root).memories() if m.format == FORMAT_OF.get(fmt, fmt)),
        key=lambda m: m.id,
    )
    for m in memories:
        for params in tried or PARAMS[name]:
            try:
                plan = Action(name, m, dict(params)).plan()
            except (MemlensError, OSError):
                continue
            if plan.changes:
                return m.id, params
    return None


OpFor = Callable[[Path], Callable[[], object]]


def _action_op(root: Path, fmt: str, name: str) -> OpFor | None:
    found = _find(root, fmt, name)
    if found is None and name in PREPARE:
        first = _find(root, fmt, PREPARE[name], PREPARE_PARAMS.get(name))
        if first is not None:
            mem_id, params = first
            Action(PREPARE[name], open_catalog(root).get(mem_id), dict(params)).apply()
            found = _find(root, fmt, name)
    if found is None:
        return None
    mem_id, params = found

    def op_for(r: Path) -> Callable[[], object]:
        return lambda: Action(name, open_catalog(r).get(mem_id), dict(params)).apply()

    return op_for


def _decay_apply(r: Path) -> object:
    catalog = open_catalog(r)
    params = {"as_of": DECAY_AS_OF.isoformat()}
    steps = [
        (w.memory.id, Action("set", w.memory, {"changes": w.changes}).plan)
        for v in catalog.vaults
        for w in v.adapter.decay_writebacks(v.memories, DECAY_AS_OF)
    ]
    steps += [
        (m.id, Action("archive", m, dict(params, reason="; ".join(why))).plan)
        for m, why in archive_candidates(catalog, DECAY_AS_OF)
    ]
    return apply_run(r, "decay", steps)


def _ocean_promote(r: Path) -> object:
    cands, _skipped = promotion_candidates(open_catalog(r), threshold=0.5)
    steps = [(m.id, Action("promote", m, {"as_of": AS_OF}).plan) for m in cands]
    return apply_run(r, "promote", steps)


def _ocean_ref(r: Path) -> object:
    steps = [
        (u.memory.id, Action("set", u.memory, {"changes": u.changes}).plan)
        for _vault, updates, _skipped in reference_run(open_catalog(r))
        for u in updates
    ]
    return apply_run(r, "ref", steps)


def _first_live(r: Path) -> Any:
    live = [m for m in open_catalog(r).memories() if not m.archived and not m.pinned]
    return sorted(live, key=lambda m: m.id)[0]


RUN_OPS: dict[str, Callable[[Path], object]] = {
    "decay_apply": _decay_apply,
    "dream_decay": lambda r: apply_plan(decay_run(r, DECAY_AS_OF)[0]),
    "ocean_promote": _ocean_promote,
    "ocean_ref": _ocean_ref,
    "access": lambda r: apply_plan(plan_record_access(_first_live(r), NOW)),
    "rescore": lambda r: apply_plan(plan_decay_scores(r, DECAY_AS_OF, NOW)),
    "core": lambda r: apply_plan(plan_core(r, DECAY_AS_OF)),
    "reindex": lambda r: apply_plan(plan_reindex(r, NOW)),
    "reflection": lambda r: apply_plan(plan_reflection(r, DECAY_AS_OF)),
}


def _earlier(now: bytes) -> bytes:
    """An "earlier version" of a memory's bytes: its last line of text a little different."""
    text = now.rstrip(b"\r\n")
    return text + b" (an earlier wording)" + now[len(text) :]


def _restore_version(r: Path, fmt: str) -> object:
    """history's restore write path: an earlier version put back through the format's writer.

    No git here: the write path is the writer's plan applied in a
    transaction; the version's bytes are made up from the memory's own.
    """
    memories = sorted(
        (m for m in open_catalog(r).memories() if m.format == fmt and not m.archived),
        key=lambda m: m.id,
    )
    m = memories[0]
    adapter = adapter_for(fmt)
    now = read_current(m, adapter, adapter.history_scope(m))
    assert now is not None
    return apply_plan(writer_for(fmt).plan_restore_version(m, _earlier(now), now))


def _run_op(root: Path, fmt: str, name: str) -> OpFor | None:
    if name == "restore_version":
        return lambda r: lambda: _restore_version(r, fmt)
    if name == "rescore":
        RUN_OPS["access"](root)  # so that _state.json exists and has a score to change
    run = RUN_OPS[name]
    return lambda r: lambda: run(r)


def _pair(root: Path, fmt: str) -> tuple[str, str] | None:
    """The first two live memories (by id) that merge and supersede both accept."""
    live = sorted(
        (
            m
            for m in open_catalog(root).memories()
            if m.format == fmt and not m.archived and not m.tombstoned
        ),
        key=lambda m: m.id,
    )
    options = CurationOptions(date.fromisoformat(AS_OF), now=NOW)
    for a, b in combinations(live, 2):
        try:
            for name in ("merge", "supersede"):
                plan_steps(name, a, b, options)[0][1]()
        except (MemlensError, OSError):
            continue
        return a.id, b.id
    return None


def _curation_op(root: Path, fmt: str, name: str) -> OpFor | None:
    pair = _pair(root, fmt)
    if pair is None:
        return None
    when = date.fromisoformat(AS_OF)

    def op_for(r: Path) -> Callable[[], object]:
        catalog = open_catalog(r)
        a, b = (catalog.get(i) for i in pair)
        if name == "dismiss":
            cand = Candidate(candidate_id((a, b)), "duplicate", 1.0, "fault test", (a, b), r)
            return lambda: dismiss(cand, when)
        return lambda: apply_curation(name, a, b, when, now=NOW)

    return op_for


def prepare(case: Case, root: Path) -> OpFor | None:
    """Set up `case` on the vault at `root` (unfaulted); its operation for any copy of it.

    None when the demo vault offers nothing for the case (e.g. no decay
    candidates in a format without decay archiving).
    """
    make = (
        _action_op if case.name in ACTIONS else _curation_op if case.name in CURATION else _run_op
    )
    op_for = make(root, case.fmt, case.name)
    if op_for is None or not case.undo:
        return op_for
    journaled = len(read_journal(root))
    op_for(root)()
    if len(read_journal(root)) == journaled:
        return None  # the operation wrote nothing: nothing to undo
    return lambda r: lambda: undo_last(r)
