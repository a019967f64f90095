"""`memlens secrets` and `memlens redact`: secrets and personal data in memories.

    memlens secrets PATH [--json] [--as-of D] [--kind K ...]
    memlens redact PATH [ID ...] [--kind K ...] [--all-of-kind K] [--erase] [--upward]
                   [--dry-run] [--yes] [--json]

Every secret is shown masked (`AKIA…(20)`: at most four leading characters
and never more than a quarter of it, and its length), in text, JSON and
messages alike.  `secrets` exits 1 when anything is found, so cron can
alert.  `redact` goes through the journaled actions of each format
(`memlens undo` reverts it) and says plainly when the vault's git history
still holds the values.
"""

from __future__ import annotations

import sys
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from memlens.core.errors import MemlensError, NotFoundError
from memlens.core.text.sanitize import one_line

from .common import (
    EXIT_PROBLEMS,
    as_of_option,
    echo,
    emit_json,
    is_terminal,
    json_option,
    load_catalog,
    resolve_as_of,
    use_cache,
)

if TYPE_CHECKING:
    from memlens.core.model import Memory
    from memlens.core.privacy import Finding
    from memlens.core.privacy.incremental import FindingsCache
    from memlens.core.scan.vault import Catalog

_KIND_HELP = (
    "Only this kind (repeatable): aws-key, github-token, slack-token, stripe-key, "
    "openai-key, anthropic-key, api-token, private-key, connection-string, jwt, "
    "generic-secret, password, card-number, iban, email, phone."
)


#: Said wherever findings in invalid items are listed or left alone.
_INVALID_NOTE = (
    "findings marked invalid are in files, sections or lines memlens could not read as"
    " memories (`memlens validate` says why); memlens never rewrites those: edit the"
    " file by hand to remove the secret"
)
_SIDE_NOTE = (
    "findings marked side_file are in files that hold no memory (episode logs, CORE.md,"
    " REFLECTION.md, experience views, stances and WAL); memlens redacts memories only:"
    " edit the file by hand, or let the agent that writes it regenerate it"
)


def _check_kinds(kinds: tuple[str, ...]) -> list[str] | None:
    from memlens.core.privacy import KINDS

    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise click.UsageError(f"unknown kind {unknown[0]!r} (kinds: {', '.join(KINDS)})")
    return list(kinds) or None


def _git_notes(roots: set[Path]) -> list[str]:
    from memlens.core.privacy import git_history_note, git_root

    repos = {r for r in (git_root(root) for root in roots) if r is not None}
    return [git_history_note(r) for r in sorted(repos)]


def _print_findings(findings: list[Finding]) -> None:
    headers = ["vault", "format", "id", "file", "field", "line", "kind", "secret", "health"]
    rows = [
        [
            f.vault,
            f.format,
            f.shown_id,
            f.shown_path,
            f.field,
            "" if f.line is None else str(f.line),
            f.kind,
            f.masked,
            f.health,
        ]
        for f in findings
    ]
    if is_terminal():
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text

        table = Table(show_lines=False, header_style="bold")
        for h in headers:
            table.add_column(h, overflow="fold")
        for row in rows:
            table.add_row(*(Text(one_line(cell)) for cell in row))
        Console().print(table)
        return
    echo("\t".join(headers))
    for row in rows:
        echo("\t".join(one_line(cell).replace("\t", " ") for cell in row))


@click.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@as_of_option
@json_option
@click.option("--kind", "kinds", multiple=True, metavar="K", help=_KIND_HELP)
def secrets(path: Path, as_of: date | None, as_json: bool, kinds: tuple[str, ...]) -> None:
    """Secrets and personal data in every memory below PATH, masked; exit 1 if any.

    Cloud keys and tokens (AWS, GitHub, Slack, Stripe, OpenAI, Anthropic, and
    other services' by their documented prefix: GitLab, Google, SendGrid,
    Twilio, npm, PyPI, Hugging Face, ...),
    private keys, connection strings with a password, JWTs, card numbers
    that pass Luhn, IBANs that pass mod-97, e-mail addresses and phone
    numbers of people, passwords written in prose, and random-looking values
    written after a credential name.  Every text field of every format is
    read: frontmatter values, JSON record fields, bodies, Dream Cycle
    headings, comments and bodies, and the raw lines of erased experience
    records (which stay in the file).  Invalid items (a file, section or
    line that is not a memory) are read too: their findings say invalid and
    are never redacted; edit such a file by hand.  So are the files that
    hold text but no memory (episode logs, CORE.md, REFLECTION.md, experience views,
    stances and WAL): their findings say side_file (health "no memory") and
    are never redacted either.  Placeholders, documentation domains
    and numbers, hashes, UUIDs, versions, dates and ISBNs are not findings.
    --as-of dates each memory's health column.

    Example: memlens secrets ~/agent-memory --json
    """
    wanted = _check_kinds(kinds)
    when = resolve_as_of(as_of)
    catalog = load_catalog(path)
    findings = _scanner().scan_catalog(catalog, when, wanted)
    if as_json:
        emit_json([f.to_dict() for f in findings])
    else:
        _print_findings(findings)
    from memlens.core.privacy.findings import places

    memories, invalid, side = places(findings)
    personal = sum(1 for f in findings if f.category == "personal")
    where = f"{memories} memor{'y' if memories == 1 else 'ies'}"
    if invalid:
        where += f" and {invalid} invalid item{'s' if invalid != 1 else ''}"
    if side:
        where += f" and {side} file{'s' if side != 1 else ''} holding no memory"
    echo(
        f"{len(findings)} finding{'s' if len(findings) != 1 else ''} in {where}"
        f" ({len(findings) - personal} credentials, {personal} personal data)",
        err=True,
    )
    if invalid:
        echo(f"note: {_INVALID_NOTE}", err=True)
    if side:
        echo(f"note: {_SIDE_NOTE}", err=True)
    if findings:
        for note in _git_notes({f.vault_root for f in findings}):
            echo(f"note: {note}", err=True)
        sys.exit(EXIT_PROBLEMS)


def _scanner() -> FindingsCache:
    """The scan, with the files earlier runs found clean unless the cache is off."""
    from memlens.core.privacy.clean_files import CleanFiles
    from memlens.core.privacy.incremental import FindingsCache

    return FindingsCache(CleanFiles.open() if use_cache() else None)


def _by_shown_id(catalog: Catalog, shown: str) -> list[Memory]:
    """The memories `memlens secrets` listed as `shown`: an id holding a secret is masked.

    A Dream Cycle heading `NAS password is tulip699x` has an id that holds the
    password, and `secrets` prints it masked (`nas-password-is-tuli…(9)-3f2a1c`):
    that printed id names the memory here, so it is never typed out in full.
    """
    keys = {f.memory_key for f in _scanner().scan_catalog(catalog) if f.shown_id == shown}
    return [m for m in catalog.memories() if m.key in keys]


def _names_invalid(catalog: Catalog, name: str) -> bool:
    """`name` is an invalid item's id or file, as `memlens secrets` lists it."""
    return any(name in (p.id, p.path) for p in catalog.problems())


def _targets(catalog: Catalog, ids: tuple[str, ...], all_of_kind: str | None) -> list[Memory]:
    """The memories named by ID (or by the masked id `secrets` printed), plus (--all-of-kind)
    every memory holding that kind."""
    out: dict[tuple[str, str], Memory] = {}
    for memory_id in ids:
        try:
            found = [catalog.get(memory_id)]
        except NotFoundError as exc:
            found = _by_shown_id(catalog, memory_id) if "…" in memory_id else []
            if len(found) != 1:
                why = f"{len(found)} memories are listed as {memory_id}" if found else exc
                if not found and _names_invalid(catalog, memory_id):
                    why = f"{memory_id} is invalid, not a memory: {_INVALID_NOTE}"
                echo(f"memlens: {why}", err=True)
                sys.exit(EXIT_PROBLEMS)
        for m in found:
            out.setdefault(m.key, m)
    if all_of_kind is not None:
        listed = _scanner().scan_catalog(catalog, kinds=[all_of_kind])
        left = sum(1 for f in listed if f.invalid)
        if left:
            echo(f"note: {left} {all_of_kind} finding(s) left alone: {_INVALID_NOTE}", err=True)
        aside = sum(1 for f in listed if f.side)
        if aside:
            echo(f"note: {aside} {all_of_kind} finding(s) left alone: {_SIDE_NOTE}", err=True)
        keys = {f.memory_key for f in listed if not f.memoryless}
        for m in catalog.memories():
            if m.key in keys:
                out.setdefault(m.key, m)
    return list(out.values())


def _plans(
    memories: list[Memory], name: str, params: dict[str, Any]
) -> tuple[list[tuple[Memory, str, list[Finding]]], list[tuple[Memory, str]]]:
    """What each memory's action would do (summary, findings) and why others are refused."""
    from memlens.core.actions import Action
    from memlens.core.privacy import memory_findings, scrub

    planned: list[tuple[Memory, str, list[Finding]]] = []
    refused: list[tuple[Memory, str]] = []
    kinds = params.get("kinds")
    for m in memories:
        found = [f for f in memory_findings(m) if not kinds or f.kind in kinds]
        try:
            plan = Action(name, m, dict(params)).plan()
        except (MemlensError, OSError) as exc:
            refused.append((m, scrub(str(exc), (f.secret for f in found))))
            continue
        planned.append((m, plan.summary, found))
    return planned, refused


def _record(m: Memory, summary: str, found: list[Finding]) -> dict[str, Any]:
    from memlens.core.privacy import hide_in_name

    secrets = [f.secret for f in found]
    return {
        "vault_root": str(m.vault_root),
        "format": m.format,
        "id": hide_in_name(m.id, secrets),
        "path": hide_in_name(m.path, secrets),
        "summary": summary,
        "findings": [f.to_dict() for f in found],
    }


@click.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.argument("ids", nargs=-1, metavar="[ID]...")
@click.option("--kind", "kinds", multiple=True, metavar="K", help=_KIND_HELP)
@click.option(
    "--all-of-kind", default=None, metavar="K", help="Every memory below PATH holding kind K."
)
@click.option("--erase", is_flag=True, help="Archive or tombstone the whole memory instead.")
@click.option(
    "--upward",
    is_flag=True,
    help="Experience records: also derive an upward record holding the redacted text.",
)
@click.option("--dry-run", is_flag=True, help="List what would change; write nothing.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask before changing several memories.")
@json_option
def redact(
    path: Path,
    ids: tuple[str, ...],
    kinds: tuple[str, ...],
    all_of_kind: str | None,
    erase: bool,
    upward: bool,
    dry_run: bool,
    yes: bool,
    as_json: bool,
) -> None:
    """Replace each secret in memory ID by [REDACTED:<kind>], or erase the memory.

    Only the secret's characters change, through each format's minimal
    edit; experience records stay immutable: a WAL tombstone (reason
    redaction) hides the record and --upward derives one holding the
    redacted text.  --erase archives or tombstones the whole memory, as the
    format's archive means it.  Several memories (or --all-of-kind) are
    listed first and need a yes (--yes when not at a terminal).  Each vault's
    change is one journal entry: `memlens undo VAULT` reverts it.  A file
    changed since it was read is refused.  Git history is never rewritten.

    Example: memlens redact ~/agent-memory --all-of-kind aws-key --dry-run
    """
    wanted = _check_kinds(kinds)
    if all_of_kind is not None:
        _check_kinds((all_of_kind,))
    if not ids and all_of_kind is None:
        raise click.UsageError("name at least one ID, or use --all-of-kind K")
    if erase and (wanted or upward):
        raise click.UsageError("--erase takes the whole memory: no --kind or --upward with it")
    catalog = load_catalog(path)
    memories = _targets(catalog, ids, all_of_kind)
    name = "erase" if erase else "redact"
    params: dict[str, Any] = {} if erase else {"upward": upward}
    if not erase and (wanted or all_of_kind):
        params["kinds"] = wanted or [all_of_kind]
    planned, refused = _plans(memories, name, params)
    _report_plans(planned, refused, as_json and dry_run)
    if dry_run or not planned:
        _finish(planned, refused, [], dry_run=dry_run, as_json=as_json)
        return
    if len(planned) > 1 and not yes:
        if not sys.stdin.isatty():
            echo("memlens: several memories would change; add --yes to go ahead", err=True)
            sys.exit(EXIT_PROBLEMS)
        if not click.confirm(f"{name} {len(planned)} memories?", err=True):
            sys.exit(EXIT_PROBLEMS)
    _apply(planned, refused, name, params, as_json)


def _report_plans(
    planned: list[tuple[Memory, str, list[Finding]]],
    refused: list[tuple[Memory, str]],
    quiet: bool,
) -> None:
    if quiet:
        return
    for m, summary, found in planned:
        shown = found[0].shown_id if found else m.id
        echo(f"{one_line(shown)}: {one_line(summary)}", err=True)
        for f in found:
            where = f"{f.shown_path}:{f.line}" if f.line is not None else f.shown_path
            echo(f"  {f.kind} {f.masked} in {f.field} ({where})", err=True)
    for m, why in refused:
        echo(f"{one_line(m.id)}: refused: {one_line(why)}", err=True)


def _apply(
    planned: list[tuple[Memory, str, list[Finding]]],
    refused: list[tuple[Memory, str]],
    name: str,
    params: dict[str, Any],
    as_json: bool,
) -> None:
    from memlens.core.actions import apply_bulk
    from memlens.core.privacy import scrub

    secrets_seen = [f.secret for _m, _s, found in planned for f in found]
    try:
        result = apply_bulk(name, [m for m, _s, _f in planned], params)
    except (MemlensError, OSError) as exc:
        echo(f"memlens: {name} refused: {scrub(str(exc), secrets_seen)}", err=True)
        sys.exit(EXIT_PROBLEMS)
    done = {m.key for m, _entry in result.applied}
    refused = refused + [(m, scrub(why, secrets_seen)) for m, why in result.refused]
    applied = [p for p in planned if p[0].key in done]
    _finish(applied, refused, sorted({m.vault_root for m, _s, _f in applied}), False, as_json)


def _finish(
    applied: list[tuple[Memory, str, list[Finding]]],
    refused: list[tuple[Memory, str]],
    written: list[Path],
    dry_run: bool,
    as_json: bool,
) -> None:
    notes = _git_notes({m.vault_root for m, _s, _f in applied})
    if any(s.startswith("erase: archive") for _m, s, _f in applied):
        notes.insert(
            0,
            "an archived memory keeps its text in the archive; to remove the text itself,"
            " redact the memory before (or instead of) erasing it",
        )
    if as_json:
        emit_json(
            {
                "dry_run": dry_run,
                "changed" if not dry_run else "would_change": [_record(*p) for p in applied],
                "refused": [{"id": m.id, "path": m.path, "reason": why} for m, why in refused],
                "git": notes,
            }
        )
    if dry_run:
        echo("dry run: nothing written", err=True)
    elif written:
        echo(
            f"done: {len(applied)} memor{'y' if len(applied) == 1 else 'ies'} in "
            f"{len(written)} vault{'s' if len(written) != 1 else ''}; `memlens undo VAULT`"
            " reverts it (the vault's .memlens/blobs keeps the old bytes for that undo,"
            " ignored by git; remove .memlens/ once undo is no longer needed)",
            err=True,
        )
    for note in notes:
        echo(f"note: {note}", err=True)
    if refused or not applied:
        sys.exit(EXIT_PROBLEMS)
