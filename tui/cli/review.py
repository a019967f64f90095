"""`memlens review`: the curation queue of near-duplicates and possible contradictions.

    memlens review PATH [--json] [--as-of D] [--kind duplicate|contradiction] [--limit N]
    memlens review PATH --merge KEEP_ID OTHER_ID [--dry-run]
    memlens review PATH --supersede NEW_ID OLD_ID [--keep-old] [--dry-run]
    memlens review PATH --dismiss CANDIDATE_ID [--dry-run]

Listing writes nothing.  Each action is one journaled transaction in the
memories' vault (`memlens undo VAULT` reverts it whole); see
`memlens.core.curation` and each format's `curate.py` for what it writes.

Exit codes: 0 ok, 1 an action refused (or an id not found), 2 usage error.
"""

from __future__ import annotations

import sys
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import click

from memlens.core.errors import MemlensError, NotFoundError
from memlens.core.text.sanitize import one_line

from .common import (
    EXIT_PROBLEMS,
    as_of_option,
    echo,
    emit_json,
    json_option,
    load_catalog,
    resolve_as_of,
    use_cache,
)

if TYPE_CHECKING:
    from memlens.core.curation import ReviewItem
    from memlens.core.model import Memory
    from memlens.core.scan.vault import Catalog
    from memlens.core.search.meaning import MeaningVectors


def _print_items(items: list[ReviewItem]) -> None:
    if not items:
        echo("no review candidates", err=True)
        return
    for item in items:
        c = item.candidate
        echo(f"{c.id}  {c.kind}  {c.confidence:.2f}  {one_line(item.vault_rel, 30)}")
        echo(f"  {one_line(c.reason, 150)}")
        for m in c.members:
            echo(f"  - {one_line(m.id, 50)}  {one_line(m.title, 70)}")
        words = [f"{'/'.join(op.a) or '-'} -> {'/'.join(op.b) or '-'}" for op in c.diff[:8]]
        if words:
            echo(f"  differs: {one_line('; '.join(words), 150)}")


def _meaning(catalog: Catalog, when: date) -> MeaningVectors | None:
    """The search index's meaning vectors when the semantic extra is on (else None)."""
    from memlens.core.search.meaning import meaning_of

    return meaning_of(catalog, when, use_cache=use_cache())


def _memory(catalog: Catalog, memory_id: str) -> Memory:
    try:
        return catalog.get(memory_id)
    except NotFoundError as exc:
        echo(f"memlens: {exc}", err=True)
        sys.exit(EXIT_PROBLEMS)


def _act(
    catalog: Catalog, name: str, ids: tuple[str, str], when: date, keep_old: bool, dry_run: bool
) -> None:
    from memlens.core.curation import apply_curation, plan_steps
    from memlens.core.formats.curating import CurationOptions

    first, second = (_memory(catalog, i) for i in ids)
    try:
        steps = plan_steps(name, first, second, CurationOptions(when, keep_old=keep_old))
        echo(f"{name} {one_line(first.id)} / {one_line(second.id)}:", err=True)
        for label, _make in steps:
            echo(f"  {one_line(label)}", err=True)
        if dry_run:
            # Only the first step can be planned against the disk as it is: the
            # later ones read what the earlier ones write.
            for line in steps[0][1]().describe():
                echo(f"    {one_line(line)}", err=True)
            echo("dry run: nothing written", err=True)
            return
        apply_curation(name, first, second, when, keep_old=keep_old)
    except MemlensError as exc:
        echo(f"memlens: {name} refused: {exc}", err=True)
        sys.exit(EXIT_PROBLEMS)
    echo("done (memlens undo VAULT reverts it)", err=True)


def _dismiss(catalog: Catalog, candidate_id: str, when: date, dry_run: bool) -> None:
    from memlens.core.curation import dismiss, find_candidate, review

    try:
        meaning = _meaning(catalog, when)
        item = find_candidate(review(catalog.vaults, when, meaning=meaning), candidate_id)
        echo(
            f"dismiss {candidate_id}: keep both of "
            f"{', '.join(one_line(m.id) for m in item.candidate.members)}",
            err=True,
        )
        if dry_run:
            echo("dry run: nothing written", err=True)
            return
        dismiss(item.candidate, when)
    except MemlensError as exc:
        echo(f"memlens: dismiss refused: {exc}", err=True)
        sys.exit(EXIT_PROBLEMS)
    echo(
        "done: it stays hidden until either memory changes (memlens undo VAULT reverts it)",
        err=True,
    )


@click.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@json_option
@as_of_option
@click.option(
    "--kind",
    type=click.Choice(["duplicate", "contradiction"]),
    default=None,
    help="Only candidates of this kind.",
)
@click.option("--limit", type=click.IntRange(min=1), default=None, help="At most N candidates.")
@click.option(
    "--merge",
    nargs=2,
    metavar="KEEP_ID OTHER_ID",
    default=None,
    help="Keep KEEP_ID, fold in what OTHER_ID adds, archive OTHER_ID.",
)
@click.option(
    "--supersede",
    nargs=2,
    metavar="NEW_ID OLD_ID",
    default=None,
    help="Mark NEW_ID as what holds now over OLD_ID (archived unless --keep-old).",
)
@click.option("--keep-old", is_flag=True, help="With --supersede: keep the old memory live.")
@click.option(
    "--dismiss",
    "dismiss_id",
    metavar="CANDIDATE_ID",
    default=None,
    help="Keep both: hide the candidate until either memory changes.",
)
@click.option("--dry-run", is_flag=True, help="With an action: show what it would do.")
def review(
    path: Path,
    as_json: bool,
    as_of: date | None,
    kind: str | None,
    limit: int | None,
    merge: tuple[str, str] | None,
    supersede: tuple[str, str] | None,
    keep_old: bool,
    dismiss_id: str | None,
    dry_run: bool,
) -> None:
    """Near-duplicates and possible contradictions to review; merge, supersede, dismiss.

    Candidates below PATH come best first (by confidence).

    Duplicates: TF-IDF, content-word and character 3-gram similarity,
    stored vectors (_embeddings.json) where a vault ships them, and meaning
    (the search index's vectors) with the semantic extra; --json says which
    were used (similarities).
    Contradictions, found offline: a flipped negation (enabled / not enabled,
    always / never), a different number or date for the same quantity, a
    different value of the same named setting (timeout = 30s / 60s).
    Observations that vary over time (past events, readings such as disk
    usage or latency) conflict only when they are of the same time.  Each
    candidate has a stable id, a confidence (0-1) and the differing words.

    Actions (one journaled transaction each; memlens undo VAULT reverts it):
    --merge keeps one memory with what the other adds and its provenance
    (merged_from, a merge view, a dc: note) and archives the other;
    --supersede records which holds now in the format's own terms;
    --dismiss keeps both and hides the pair until either changes.

    Examples:

      memlens review ./vaults --json --as-of 2026-11-22

      memlens review ./vaults --merge hawk/obs-2026-11-19-001 hawk/obs-2026-11-20-002
    """
    from memlens.core.curation import review_json, review_run

    actions = sum(x is not None for x in (merge, supersede, dismiss_id))
    if actions > 1:
        raise click.UsageError("give one of --merge, --supersede, --dismiss")
    if keep_old and supersede is None:
        raise click.UsageError("--keep-old goes with --supersede")
    if dry_run and not actions:
        raise click.UsageError("--dry-run goes with --merge, --supersede or --dismiss")
    when = resolve_as_of(as_of)
    catalog = load_catalog(path)
    if merge is not None:
        _act(catalog, "merge", merge, when, False, dry_run)
        return
    if supersede is not None:
        _act(catalog, "supersede", supersede, when, keep_old, dry_run)
        return
    if dismiss_id is not None:
        _dismiss(catalog, dismiss_id, when, dry_run)
        return
    run = review_run(catalog.vaults, when, kind=kind, limit=limit, meaning=_meaning(catalog, when))
    if as_json:
        emit_json(review_json(run.items, when, run.similarities))
        return
    if "meaning" not in run.similarities:
        echo("lexical similarity only (meaning needs the semantic extra)", err=True)
    _print_items(run.items)
