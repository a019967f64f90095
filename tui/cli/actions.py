"""CLI commands that change vaults: pin, unpin, archive, restore, promote, set, undo.

Every change goes through memlens.core.actions (validated, conflict-checked,
atomic, journaled), so each one can be undone with `memlens undo PATH`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from memlens.core.actions import Action, parse_assignment, undo
from memlens.core.errors import MemlensError, NotFoundError
from memlens.core.model import Memory
from memlens.core.text.sanitize import one_line
from memlens.core.write.txn import apply_run

from .common import (
    EXIT_PROBLEMS,
    as_of_option,
    echo,
    emit_json,
    load_catalog,
    progress,
    resolve_as_of,
)
from .recover import recover_roots

if TYPE_CHECKING:
    from memlens.core.formats.adapter import FieldWrite
    from memlens.core.scan.vault import Catalog


def _memory(catalog: Catalog, memory_id: str) -> Memory:
    try:
        return catalog.get(memory_id)
    except NotFoundError as exc:
        echo(f"memlens: {exc}", err=True)
        sys.exit(EXIT_PROBLEMS)


def run_action(
    catalog: Catalog, memory_id: str, name: str, params: dict[str, Any], dry_run: bool
) -> None:
    """Plan, show and (unless dry-run) apply one action; exit 1 if refused."""
    memory = _memory(catalog, memory_id)
    action = Action(name, memory, params)
    try:
        plan = action.plan()
        echo(f"{name} {one_line(memory.id)}: {one_line(plan.summary)}", err=True)
        for line in plan.describe():
            echo(f"  {one_line(line)}", err=True)
        if dry_run:
            echo("dry run: nothing written", err=True)
            return
        action.apply()
    except MemlensError as exc:
        echo(f"memlens: {name} refused: {exc}", err=True)
        sys.exit(EXIT_PROBLEMS)
    echo("done (memlens undo PATH reverts it)", err=True)


def _simple(name: str, doc: str) -> click.Command:
    @click.command(name=name, help=doc)
    @click.argument("path", type=click.Path(exists=True, path_type=Path))
    @click.argument("memory_id", metavar="ID")
    @click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
    def command(path: Path, memory_id: str, dry_run: bool) -> None:
        run_action(load_catalog(path), memory_id, name, {}, dry_run)

    return command


pin = _simple(
    "pin",
    "Pin a memory so it never fades (per format: dc:ttl=never, pinned: true, "
    "a pin view, or a move to vault/).\n\nExample: memlens pin ./vaults hawk/obs-2026-11-19-001",
)
unpin = _simple("unpin", "Undo a pin.\n\nExample: memlens unpin ./vaults hawk/obs-2026-11-19-001")
archive = _simple(
    "archive",
    "Archive a memory (a move, an archive entry or a WAL op; never a deletion).\n\n"
    "Example: memlens archive ./vaults hawk/obs-2026-11-19-001",
)
restore = _simple(
    "restore",
    "Bring an archived memory back.\n\nExample: memlens restore ./vaults hawk/obs-2026-10-02-001",
)


@click.command(name="set")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.argument("memory_id", metavar="ID")
@click.argument("assignments", nargs=-1, required=True, metavar="FIELD=VALUE...")
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
def set_fields(path: Path, memory_id: str, assignments: tuple[str, ...], dry_run: bool) -> None:
    """Validated metadata edit: only the changed fields' lines are rewritten.

    VALUE is read as one YAML value (importance=0.9, tags=[a, b], title=Hi).

    Example: memlens set ./vaults 6f170630-166f-40cc-ae24-c0cbf1b3afad importance=0.9
    """
    try:
        changes = dict(parse_assignment(a) for a in assignments)
    except MemlensError as exc:
        raise click.UsageError(str(exc)) from None
    run_action(load_catalog(path), memory_id, "set", {"changes": changes}, dry_run)


@click.command(name="undo")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
def undo_cmd(path: Path) -> None:
    """Undo the last action recorded in the vault's journal (.memlens/journal.jsonl).

    PATH is the vault root (or a folder holding exactly one vault).

    Example: memlens undo ./vaults/project-ocean
    """
    from memlens.core.scan.vault import discover  # every format: not for --help

    vaults = discover(path)
    if len(vaults) != 1:
        names = ", ".join(v.rel for v in vaults) or "none"
        raise click.UsageError(f"{path} holds {len(vaults)} vaults ({names}); name one")
    recover_roots([vaults[0].root])
    try:
        entry = undo(vaults[0].root)
    except MemlensError as exc:
        echo(f"memlens: undo refused: {exc}", err=True)
        sys.exit(EXIT_PROBLEMS)
    echo(f"undid: {one_line(str(entry.get('summary', entry.get('action'))))}", err=True)


def decay_apply(
    catalog: Catalog,
    candidates: list[tuple[Memory, list[str]]],
    as_of: date,
    writebacks: list[FieldWrite] | None = None,
) -> int:
    """Archive every decay candidate as of `as_of`, and write back what the formats'
    runs write (`FieldWrite`: Project Ocean's neglect penalty and max-age extensions);
    return how many were refused.

    Each vault's changes are one transaction: one journal entry, one
    `memlens undo` for the whole run, and nothing half-done after a crash.
    """
    plans = [(w.memory, Action("set", w.memory, {"changes": w.changes})) for w in writebacks or []]
    plans += [
        (m, Action("archive", m, {"reason": "; ".join(r), "as_of": as_of.isoformat()}))
        for m, r in candidates
    ]
    said = {m.key: f"archived {one_line(m.id)} ({'; '.join(r)})" for m, r in candidates}
    said.update({w.memory.key: f"wrote {one_line(w.memory.id)}: {w.why}" for w in writebacks or []})
    return _run_by_vault("decay", plans, lambda m: said[m.key])


def _run_by_vault(
    name: str, actions: list[tuple[Memory, Action]], done: Callable[[Memory], str] | None
) -> int:
    """Apply the actions as one transaction per vault; report each; return how many were refused.

    `done` words the line for an applied memory; None when the caller has
    already printed one per memory (promote prints its plan's line first).
    """
    by_vault: dict[Path, list[tuple[Memory, Action]]] = {}
    for memory, action in actions:
        by_vault.setdefault(memory.vault_root, []).append((memory, action))
    refused = 0
    with progress(len(by_vault), f"{name} run") as advance:
        for root, group in by_vault.items():
            steps = [(m.id, action.plan) for m, action in group]
            try:
                entry, why = apply_run(root, name, steps, lambda n: f"{name}: {n} memories")
            except MemlensError as exc:
                refused += len(group)
                echo(f"memlens: {name} in {root} rolled back, nothing changed: {exc}", err=True)
                advance()
                continue
            failed = dict(why)
            for memory, _action in group:
                if memory.id in failed:
                    echo(f"refused {one_line(memory.id)}: {failed[memory.id]}", err=True)
                elif done is not None:
                    echo(done(memory), err=True)
            refused += len(failed)
            if entry is not None:
                echo(f"{root}: one journal entry; memlens undo PATH reverts the run", err=True)
            advance()
    return refused


@click.command(name="promote")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.argument("memory_id", metavar="[ID]", required=False)
@click.option(
    "--threshold",
    type=float,
    default=None,
    help="Project Ocean: minimum confidence, or importance in the second generation (0.8).",
)
@click.option("--require-verified", is_flag=True, help="Project Ocean: only verified observations.")
@click.option(
    "--file", "file_name", default=None, help="Project Ocean: one file name (with --agent)."
)
@click.option("--agent", default=None, help="Project Ocean: the agent owning --file.")
@click.option("--importance", type=float, default=None, help="Cognitive memory: new importance.")
@click.option("--type", "new_type", default=None, help="Cognitive memory / Dream Cycle: retype.")
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
@as_of_option
def promote(
    path: Path,
    memory_id: str | None,
    threshold: float | None,
    require_verified: bool,
    file_name: str | None,
    agent: str | None,
    importance: float | None,
    new_type: str | None,
    dry_run: bool,
    as_of: date | None,
) -> None:
    """Promote a memory, or (no ID) run Project Ocean's promote over PATH.

    Project Ocean copies observations to shared/observations/ with
    promoted_from/promoted_at (as memory-promote.py); an existing copy is
    skipped with a message.  Second generation (importance, max_age): it
    qualifies at importance >= --threshold, or verified and >= 0.6; the copy
    is shared/observations/<agent>-<file>, the source gets promoted: true,
    and a file already marked promoted is skipped.  Naming an ID promotes
    that one memory whatever its score (the script's --force).

    Examples: memlens promote ./vaults --threshold 0.7 --dry-run;
    memlens promote ./vaults hawk/obs-2026-11-19-001
    """
    catalog = load_catalog(path)
    when = resolve_as_of(as_of)
    params: dict[str, Any] = {"as_of": when.isoformat()}
    if importance is not None:
        params["importance"] = importance
    if new_type is not None:
        params["type"] = new_type
    if memory_id is not None:
        run_action(catalog, memory_id, "promote", params, dry_run)
        return
    from memlens.core.formats.project_ocean.runs import promotion_candidates, split_name_clashes

    cands, skipped = promotion_candidates(
        catalog,
        threshold=0.8 if threshold is None else threshold,
        require_verified=require_verified,
        file_name=file_name,
        agent=agent,
    )
    for memory, why in skipped:
        echo(f"skip {one_line(memory.id)}: {why}", err=True)
    _kept, clashes = split_name_clashes(cands)
    actions, refused = _planned_promotions(cands, {m.key: why for m, why in clashes}, params)
    late = 0
    if not dry_run:
        late = _run_by_vault("promote", actions, None)
    promoted = len(actions) - late
    refused += late
    echo(
        f"{promoted} to promote{' (dry run)' if dry_run else ''}, "
        f"{len(skipped)} skipped, {refused} refused",
        err=True,
    )
    # A --file that names no readable memory is a failed request; one that is
    # skipped (already promoted, below threshold) is not.
    matched_nothing = (
        file_name is not None
        and not cands
        and all(m.kind in ("missing", "invalid") for m, _ in skipped)
    )
    if refused or matched_nothing:
        sys.exit(EXIT_PROBLEMS)


def _planned_promotions(
    cands: list[Memory], clash_of: dict[tuple[str, str], str], params: dict[str, Any]
) -> tuple[list[tuple[Memory, Action]], int]:
    """(actions, refused): each candidate's promotion planned, one line printed per memory.

    One line per memory, from its plan, so a dry run prints what the real run
    prints; a name clash or a plan that fails refuses that memory.
    """
    refused = 0
    actions: list[tuple[Memory, Action]] = []
    for memory in cands:
        action = Action("promote", memory, params)
        why = clash_of.get(memory.key)
        summary = ""
        if why is None:
            try:
                summary = action.plan().summary
            except MemlensError as exc:
                why = str(exc)
        if why is not None:
            refused += 1
            echo(f"refused {one_line(memory.id)}: {one_line(why)}", err=True)
            continue
        echo(f"promote {one_line(memory.id)}: {one_line(summary)}", err=True)
        actions.append((memory, action))
    return actions, refused


@click.command(name="ref")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="One JSON array of the updates.")
def ref_cmd(path: Path, dry_run: bool, as_json: bool) -> None:
    """Project Ocean (second generation): the references run, as memory-ref.py.

    Resolves every backlink in the agents' vault/ folders (a bare file name,
    in the first agent holding it, in the script's agent order), appends the
    citing agent/obs-... to the target's ref_by, sets refs, and raises its
    importance +0.1 per new citation from its own agent and +0.15 per new one
    from another agent, capped at 1.0.  A second run adds nothing.  One
    journaled transaction per vault: memlens undo PATH reverts it.

    Example: memlens ref ./ocean --dry-run
    """
    from memlens.core.formats.project_ocean.references import reference_run

    catalog = load_catalog(path)
    runs = reference_run(catalog)
    records: list[dict[str, Any]] = []
    actions: list[tuple[Memory, Action]] = []
    said: dict[tuple[str, str], str] = {}
    for _vault, updates, skipped in runs:
        for memory, why in skipped:
            echo(f"skip {one_line(memory.id)}: {why}", err=True)
        for u in updates:
            line = (
                f"{one_line(u.memory.id)}: refs={u.refs}, importance "
                f"{u.importance_before:.2f} → {u.importance:.2f} (Δ{u.delta:+.2f})"
            )
            said[u.memory.key] = f"updated {line}"
            if dry_run or as_json:
                echo(f"{'would update' if dry_run else 'update'} {line}", err=True)
            records.append(
                {
                    "vault": str(u.memory.vault_root),
                    "id": u.memory.id,
                    "path": u.memory.path,
                    "refs": u.refs,
                    "ref_by": u.ref_by,
                    "new_ref_by": u.new_sources,
                    "importance_before": u.importance_before,
                    "importance": u.importance,
                    "delta": u.delta,
                    "cross_agent_refs": u.cross_agent_refs,
                }
            )
            actions.append((u.memory, Action("set", u.memory, {"changes": u.changes})))
    refused = 0
    if not dry_run:
        refused = _run_by_vault("ref", actions, lambda m: said[m.key])
    if as_json:
        emit_json(records)
    echo(
        f"{len(actions) - refused} to update{' (dry run)' if dry_run else ''}, {refused} refused",
        err=True,
    )
    if refused:
        sys.exit(EXIT_PROBLEMS)


COMMANDS: tuple[click.Command, ...] = (
    pin,
    unpin,
    archive,
    restore,
    set_fields,
    undo_cmd,
    promote,
    ref_cmd,
)
