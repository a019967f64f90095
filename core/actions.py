"""User actions on memories: pin, unpin, edit, promote, archive, restore.

Each action is an object with `plan` (what will change, for preview and
confirmation), `apply` (do it, journaled) and `undo`.  What an action means
for a format (DESIGN.md "What each action means per format") is decided by
that format's writer in `core/formats/`; this module only dispatches, so the
app, the CLI and scripts share one path to the disk.  It sits above both the
formats (whose writers it calls) and `core/write/` (the transactions it runs
them in), which is why it is not in `write/`: the writers build on `write/`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from .errors import RefusedError
from .model import Memory
from .text.frontmatter import SafeYamlLoader
from .write.journal import Plan
from .write.txn import apply_run, transaction
from .write.undo import undo_last

if TYPE_CHECKING:
    from .formats.curating import CurationOptions, Step
    from .formats.privacy_model import Redaction

ACTION_NAMES: tuple[str, ...] = (
    "pin",
    "unpin",
    "set",
    "edit_body",
    "promote",
    "archive",
    "restore",
    "redact",
    "erase",
)


@dataclass(slots=True)
class Action:
    """One action on one memory: plan it, apply it, undo it."""

    name: str
    memory: Memory
    params: dict[str, Any] = field(default_factory=dict)
    entry: dict[str, Any] | None = None

    def plan(self) -> Plan:
        if self.memory.tombstoned:
            raise RefusedError("tombstoned (erased) memories cannot be changed")
        # Deferred on purpose: the writers pull in every format package, and the
        # CLI's action commands import this module for their `--help` too.
        from .formats.writers import writer_for

        w = writer_for(self.memory.format)
        m = self.memory
        if self.name == "pin":
            if m.pinned:
                raise RefusedError("already pinned")
            return w.plan_pin(m)
        if self.name == "unpin":
            if not m.pinned:
                raise RefusedError("not pinned")
            return w.plan_unpin(m)
        if self.name == "set":
            changes = dict(self.params.get("changes", {}))
            if not changes:
                raise RefusedError("no field to set")
            return w.plan_set(m, changes)
        if self.name == "edit_body":
            return w.plan_edit_body(m, str(self.params["body"]))
        if self.name == "promote":
            return w.plan_promote(m, dict(self.params))
        if self.name == "archive":
            if m.archived:
                raise RefusedError("already archived")
            reason = self.params.get("reason")
            return w.plan_archive(
                m, str(reason) if reason is not None else None, as_of=_as_of(self.params)
            )
        if self.name == "restore":
            if not m.archived:
                raise RefusedError("not archived")
            return w.plan_restore(m)
        if self.name == "redact":
            return w.plan_redact(
                m, _redactions(m, self.params), upward=bool(self.params.get("upward"))
            )
        if self.name == "erase":
            return w.plan_erase(m)
        raise RefusedError(f"unknown action {self.name!r}")

    def apply(self) -> dict[str, Any]:
        """Plan under the vault lock, apply (conflicts refuse it), remember the journal entry.

        Planning inside the transaction means another memlens process cannot
        change the files between the plan and its writes.
        """
        self.plan()  # a refusal leaves the vault untouched (no .memlens/ either)
        with transaction(self.memory.vault_root, self.name) as tx:
            plan = self.plan()
            tx.apply(plan)
            entry = tx.commit(plan.summary, always=True)
        assert entry is not None
        self.entry = entry
        return entry

    def undo(self) -> dict[str, Any]:
        """Undo this action (it must be the vault's latest not-undone one)."""
        if self.entry is None:
            raise RefusedError("this action was not applied")
        return undo(self.memory.vault_root)


def _redactions(memory: Memory, params: dict[str, Any]) -> list[Redaction]:
    """The redactions a `redact` asks for: given ones, else every finding (of `kinds`).

    Findings are computed from the memory as the caller read it; the writer
    re-reads the file and refuses (conflict) if it is not that memory any more.
    """
    # Deferred: the formats and the detectors load only when redacting (`--help` stays light).
    from .formats.privacy_model import Redaction
    from .privacy import redactions_for

    given = params.get("redactions")
    if given:
        return [r for r in given if isinstance(r, Redaction)]

    kinds = params.get("kinds")
    found = redactions_for(memory, kinds=list(kinds) if kinds else None)
    if not found:
        what = f" of kind {', '.join(kinds)}" if kinds else ""
        raise RefusedError(f"no secret{what} found in {memory.id}")
    return found


def _as_of(params: dict[str, Any]) -> date | None:
    """The decay date a run passes in params (a date or ISO text), if any."""
    value = params.get("as_of")
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value)
        except ValueError:
            raise RefusedError(f"as_of: {value!r} is not a date (YYYY-MM-DD)") from None
    return None


def undo(vault_root: Path) -> dict[str, Any]:
    """Undo the vault's most recent action; returns its journal entry."""
    return undo_last(vault_root)


@dataclass(slots=True)
class BulkResult:
    """Outcome of one action over several memories."""

    applied: list[tuple[Memory, dict[str, Any]]] = field(default_factory=list)
    refused: list[tuple[Memory, str]] = field(default_factory=list)


def plan_bulk(
    name: str, memories: Iterable[Memory], params: dict[str, Any] | None = None
) -> tuple[list[Plan], list[tuple[Memory, str]]]:
    """Plans for every memory that allows the action, and why the others do not."""
    plans: list[Plan] = []
    refused: list[tuple[Memory, str]] = []
    for m in memories:
        try:
            plans.append(Action(name, m, dict(params or {})).plan())
        except (RefusedError, OSError) as exc:
            refused.append((m, str(exc)))
    return plans, refused


def apply_bulk(
    name: str, memories: Iterable[Memory], params: dict[str, Any] | None = None
) -> BulkResult:
    """Apply one action to each memory: one transaction (one undo) per vault.

    Memories are re-planned one by one right before applying, on top of the
    previous one's result, because an earlier step may have changed a shared
    file (dream-cycle sections share observations.md).  A memory refused
    before anything is written is reported and skipped; an I/O error rolls
    back the vault's whole run and is raised.
    """
    result = BulkResult()
    by_vault: dict[Path, list[Memory]] = {}
    for m in memories:
        by_vault.setdefault(m.vault_root, []).append(m)
    for root, group in by_vault.items():
        steps = [
            (str(i), partial(_plan_of, Action(name, m, dict(params or {}))))
            for i, m in enumerate(group)
        ]
        entry, refused = apply_run(root, name, steps, partial(_run_summary, name))
        why = {int(label): reason for label, reason in refused}
        for i, m in enumerate(group):
            if i in why:
                result.refused.append((m, why[i]))
            elif entry is not None:
                result.applied.append((m, entry))
    return result


def _plan_of(action: Action) -> Plan:
    return action.plan()


def _run_summary(name: str, count: int) -> str:
    return f"{name} {count} memor{'y' if count == 1 else 'ies'}"


#: The review queue's actions on two memories (see `curation_steps`).
CURATION_ACTIONS: tuple[str, ...] = ("merge", "supersede")


def curation_steps(
    name: str, first: Memory, second: Memory, options: CurationOptions
) -> list[Step]:
    """The steps of a merge (keep `first`, fold in `second`) or supersede (`first` holds now).

    Both memories must be live and of one vault: the steps run in one
    transaction of that vault.  What the steps write is the format's writer's
    business (`plan_merge` / `plan_supersede`).
    """
    from .formats.writers import writer_for  # deferred: see Action.plan

    if name not in CURATION_ACTIONS:
        raise RefusedError(f"unknown action {name!r}")
    if first.key == second.key:
        raise RefusedError(f"{name}: {first.id} is the same memory twice")
    if first.vault_root != second.vault_root or first.format != second.format:
        raise RefusedError(
            f"{name}: {first.id} and {second.id} are in different vaults; "
            "only memories of one vault can be merged or superseded"
        )
    for m in (first, second):
        if m.tombstoned:
            raise RefusedError(f"{name}: {m.id} is erased (tombstoned)")
        if m.archived:
            raise RefusedError(f"{name}: {m.id} is archived; restore it first")
    w = writer_for(first.format)
    if name == "merge":
        return w.plan_merge(first, second, options)
    return w.plan_supersede(first, second, options)


def apply_steps(
    root: Path, name: str, steps: Sequence[tuple[str, Callable[[], Plan]]], summary: str
) -> dict[str, Any]:
    """Plan and apply each step in turn, all in one transaction (one journal entry, one undo).

    Unlike `apply_run`, a refused step refuses the whole action: a merge half
    done (folded but not archived) is not a merge.
    """
    if not steps:
        raise RefusedError(f"{name}: nothing to change")
    with transaction(root, name) as tx:
        for _label, make in steps:
            tx.apply(make())
        entry = tx.commit(summary, always=True)
    assert entry is not None
    return entry


def parse_assignment(text: str) -> tuple[str, Any]:
    """`FIELD=VALUE` from the command line; VALUE is read as one YAML value.

    `importance=0.9` gives a float, `tags=[a, b]` a list, `title=Hello` a
    string.  Only the safe loader is used.
    """
    name, sep, raw = text.partition("=")
    name = name.strip()
    if not sep or not name:
        raise RefusedError(f"expected FIELD=VALUE, got {text!r}")
    try:
        value = yaml.load(raw, Loader=SafeYamlLoader) if raw.strip() else ""
    except yaml.YAMLError as exc:
        raise RefusedError(f"{name}: value {raw!r} is not valid YAML ({exc})") from None
    return name, value
