"""Secrets and personal data in memories: find them (masked) and plan their redaction.

`scan_catalog` runs the detectors (`detectors`) over every text field of
every memory, archived and live, as each format's adapter lists them
(`FormatAdapter.text_fields`, with file lines), and returns `Finding`s
(`findings`) whose secret is never printed, only masked.  `redactions_for`
turns a memory's findings into the `Redaction`s its format's writer
applies (`memlens.core.actions`, action `redact`).  `gitnote` says when a
vault sits in a git repository whose history still holds the values.

Modules: `detectors` (a pattern per kind, overlaps resolved), `checks`
(what a candidate must pass: not a placeholder, a valid shape), `findings`
(the finding and its mask), `incremental` (the app's scan, kept per file
between catalog changes), `gitnote` (git history warning).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import date
from pathlib import Path

from ..formats import adapter_for
from ..formats.privacy_model import Redaction, TextField
from ..model import Memory, Problem
from ..safe_io import read_regular
from ..scan.vault import Catalog, Vault
from .detectors import KINDS, PERSONAL_KINDS, Hit, detect
from .findings import Finding, hide_in_name, mask, scrub
from .gitnote import git_history_note, git_root


def _read_text(path: Path) -> str | None:
    try:
        return read_regular(path).decode("utf-8", "replace")
    except OSError:
        return None


def _hits(
    fields: Iterable[TextField], detector: Callable[[str, str], Sequence[Hit]]
) -> list[tuple[TextField, Hit]]:
    return [(tf, hit) for tf in fields for hit in detector(tf.text, tf.name)]


def _findings(
    hits: Sequence[tuple[TextField, Hit]],
    *,
    vault_root: Path,
    vault: str,
    format_id: str,
    ident: str,
    path: str,
    health: str,
    record_line: int | None = None,
    index: int | None = None,
    invalid: bool = False,
    side: bool = False,
) -> list[Finding]:
    """One finding per hit in one place; its id and path shown with the secrets masked."""
    secrets = [hit.secret for _tf, hit in hits]
    shown_id = hide_in_name(ident, secrets) if secrets else ident
    shown_path = hide_in_name(path, secrets) if secrets else path
    return [
        Finding(
            vault_root=vault_root,
            vault=vault,
            format=format_id,
            id=ident,
            path=path,
            field=tf.name,
            line=tf.line_of(hit.start),
            kind=hit.kind,
            secret=hit.secret,
            health=health,
            record_line=record_line,
            index=index,
            shown_id=shown_id,
            shown_path=shown_path,
            invalid=invalid,
            side=side,
        )
        for tf, hit in hits
    ]


def scan_memory(
    memory: Memory,
    vault: str = ".",
    raw: str | None = None,
    health: str = "",
    detector: Callable[[str, str], Sequence[Hit]] = detect,
) -> list[Finding]:
    """Every finding in `memory`'s text fields (`raw`: its file's text, for lines).

    `detector`: `detect`, or one that remembers its answers (`detect` is
    pure over the text and the field's name; the incremental scan reuses
    them for the unchanged sections and records of a changed shared file).
    """
    fields = adapter_for(memory.format).text_fields(memory, raw)
    return _findings(
        _hits(fields, detector),
        vault_root=memory.vault_root,
        vault=vault,
        format_id=memory.format,
        ident=memory.id,
        path=memory.path,
        health=health,
        record_line=memory.line,
        index=memory.index,
    )


def scan_problem(
    problem: Problem,
    vault: str = ".",
    raw: str | None = None,
    detector: Callable[[str, str], Sequence[Hit]] = detect,
) -> list[Finding]:
    """Every finding in the text of an invalid item (`raw`: its file's text; None: unreadable).

    Its id is the one the format could read, else its file; its health is
    `invalid`.  Such findings are listed, never redacted: memlens does not
    rewrite what it could not parse.
    """
    if raw is None:
        return []
    fields = adapter_for(problem.format).problem_texts(problem, raw)
    return _findings(
        _hits(fields, detector),
        vault_root=problem.vault_root,
        vault=vault,
        format_id=problem.format,
        ident=problem.id or problem.path,
        path=problem.path,
        health="invalid",
        record_line=problem.line,
        index=problem.index,
        invalid=True,
    )


#: The health shown for a finding in a file that holds no memory.
SIDE_HEALTH = "no memory"


def side_texts(rel: str, raw: str) -> list[TextField]:
    """A side file's text: each line of a JSON Lines file, else the whole file."""
    if rel.endswith(".jsonl"):
        return [
            TextField("line", line.removesuffix("\r"), number)
            for number, line in enumerate(raw.split("\n"), 1)
            if line.strip()
        ]
    return [TextField("file", raw, 1, multiline=True)]


def scan_side_file(
    vault: Vault,
    rel: str,
    raw: str,
    detector: Callable[[str, str], Sequence[Hit]] = detect,
) -> list[Finding]:
    """Every finding in one of the vault's side files (`FormatAdapter.side_files`).

    Its id and path are the file; listed, never redacted (memlens edits
    memories, not the logs and views around them).
    """
    return _findings(
        _hits(side_texts(rel, raw), detector),
        vault_root=vault.root,
        vault=vault.rel,
        format_id=vault.format,
        ident=rel,
        path=rel,
        health=SIDE_HEALTH,
        side=True,
    )


def side_findings(vault: Vault) -> list[Finding]:
    """`scan_side_file` of each side file of the vault (unreadable ones skipped)."""
    out: list[Finding] = []
    for rel in vault.adapter.side_files(vault.root):
        raw = _read_text(vault.root / rel)
        if raw is not None:
            out.extend(scan_side_file(vault, rel, raw))
    return out


def scanned_problems(vault: Vault) -> list[Problem]:
    """The vault's invalid items whose text no memory's scan covers, once each.

    A problem of a whole file is skipped when the file also holds memories
    (a Dream Cycle preamble's bad byte: its sections are scanned as memories);
    one of a line or a section when a memory sits there (a warning beside a
    loaded memory).
    """
    if not vault.problems:
        return []
    by_file: dict[str, set[tuple[int | None, int | None]]] = {}
    for m in vault.memories:
        by_file.setdefault(m.path, set()).add((m.line, m.index))
    out: dict[tuple[str, int | None, int | None], Problem] = {}
    for p in vault.problems:
        held = by_file.get(p.path)
        if held is not None and ((p.line is None and p.index is None) or (p.line, p.index) in held):
            continue
        out.setdefault((p.path, p.line, p.index), p)
    return list(out.values())


def problem_findings(vault: Vault) -> list[Finding]:
    """`scan_problem` of each of `scanned_problems(vault)` (each file read once)."""
    raws: dict[str, str | None] = {}
    out: list[Finding] = []
    for p in scanned_problems(vault):
        if p.path not in raws:
            raws[p.path] = _read_text(p.vault_root / p.path)
        out.extend(scan_problem(p, vault.rel, raws[p.path]))
    return out


def memory_findings(memory: Memory, vault: str = ".") -> list[Finding]:
    """`scan_memory` with the memory's file read for lines."""
    return scan_memory(memory, vault, _read_text(memory.abs_path))


def scan_vault(vault: Vault, as_of: date | None = None) -> list[Finding]:
    """Every finding in the vault's memories (each file read once, for lines)."""
    raws: dict[str, str | None] = {}
    adapter = vault.adapter
    out: list[Finding] = []
    for m in vault.memories:
        if m.path not in raws:
            raws[m.path] = _read_text(m.abs_path)
        health = adapter.decay(m, as_of, explain=False).health.value if as_of else ""
        out.extend(scan_memory(m, vault.rel, raws[m.path], health))
    out.extend(problem_findings(vault))
    out.extend(side_findings(vault))
    return out


def scan_catalog(
    catalog: Catalog, as_of: date | None = None, kinds: Iterable[str] | None = None
) -> list[Finding]:
    """Every finding below the catalog's paths, by vault, file, line, field and kind."""
    wanted = set(kinds) if kinds is not None else None
    found = [
        f
        for v in catalog.vaults
        for f in scan_vault(v, as_of)
        if wanted is None or f.kind in wanted
    ]
    return sort_findings(found)


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    """By vault, file, line, field and kind: the order every front shows."""
    order = {k: i for i, k in enumerate(KINDS)}
    return sorted(
        findings,
        key=lambda f: (f.vault, f.path, f.line or 0, f.record_line or 0, f.field, order[f.kind]),
    )


def redactions_for(
    memory: Memory, kinds: Iterable[str] | None = None, raw: str | None = None
) -> list[Redaction]:
    """The redactions of every finding in `memory` (of `kinds`, if given), one per secret."""
    wanted = set(kinds) if kinds is not None else None
    out: dict[tuple[str, str], Redaction] = {}
    found = scan_memory(memory, raw=raw) if raw is not None else memory_findings(memory)
    for f in found:
        if wanted is None or f.kind in wanted:
            out.setdefault((f.field, f.secret), f.redaction())
    return list(out.values())


__all__ = [
    "KINDS",
    "PERSONAL_KINDS",
    "SIDE_HEALTH",
    "Finding",
    "detect",
    "git_history_note",
    "git_root",
    "hide_in_name",
    "mask",
    "memory_findings",
    "problem_findings",
    "redactions_for",
    "scan_catalog",
    "scan_memory",
    "scan_problem",
    "scan_side_file",
    "scan_vault",
    "scanned_problems",
    "scrub",
    "side_findings",
    "side_texts",
    "sort_findings",
]
