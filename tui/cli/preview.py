"""`memlens preview`: what each agent loads at session start and would recall for a prompt.

    memlens preview PATH [--agent NAME] [--prompt TEXT] [--as-of D] [--json] [--diff]

Per vault, by the format's own rules (see `memlens.core.preview`): CORE.md as
it would be regenerated (cognitive-memory), observations.md and what decays
out within 7 and 30 days (Dream Cycle), the HEARTBEAT recall step and what
shared/ adds (Project Ocean), the hybrid retrieval (experience records), the
comprehension documents (observation/v1).  Token counts are estimates:
ceil(characters / 4).  Nothing is written.

Exit codes: 0 ok, 1 when --agent names no agent or vault below PATH, 2 usage.
"""

from __future__ import annotations

import sys
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import click

from memlens.core.text.sanitize import one_line

from .common import (
    EXIT_PROBLEMS,
    as_of_option,
    echo,
    emit_json,
    json_option,
    load_catalog,
    resolve_as_of,
)

if TYPE_CHECKING:
    from memlens.core.formats.preview_model import PreviewSection
    from memlens.core.preview import VaultPreview

BAR_WIDTH = 30


def budget_bar(used: int, limit: int, width: int = BAR_WIDTH) -> str:
    """`[#####.....] 11,999/12,000 chars (100%)`: a text bar of a budget's use."""
    filled = min(width, round(width * used / limit)) if limit else width
    pct = round(100 * used / limit) if limit else 0
    return f"[{'#' * filled}{'.' * (width - filled)}] {used:,}/{limit:,} chars ({pct}%)"


def _print_section(section: PreviewSection, show_diff: bool) -> None:
    who = (
        f"{section.agent}: "
        if section.agent and not section.title.startswith(section.agent)
        else ""
    )
    echo(f"  {who}{section.title} [{section.stage}] ~{section.tokens} tokens")
    if section.note:
        echo(f"    {one_line(section.note, 110)}")
    if section.budget is not None:
        echo(f"    budget {budget_bar(section.budget.used_chars, section.budget.limit_chars)}")
    for e in section.entries:
        score = f"{e.score:.4g}" if e.score is not None else "-"
        echo(
            f"    ~{e.tokens:>4} tok  {score:>8}  {one_line(e.id, 40)}  "
            f"{one_line(e.title, 50)}  ({one_line(e.note, 60)})"
        )
    if show_diff and section.diff:
        for line in section.diff:
            echo(f"    {one_line(line)}")


def _print_text(previews: list[VaultPreview], show_diff: bool) -> None:
    for p in previews:
        echo(f"{p.label} · {p.rel} · load ~{p.tokens('load')} tokens, recall ~{p.tokens('recall')}")
        for section in p.sections:
            _print_section(section, show_diff)
        echo()


@click.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--agent", default=None, help="Only this agent (Project Ocean), or a vault of this name."
)
@click.option(
    "--prompt", default=None, help="What recall steps search for (Ocean, experience records)."
)
@as_of_option
@json_option
@click.option("--diff", "show_diff", is_flag=True, help="Text output: print the CORE.md diff.")
def preview(
    path: Path,
    agent: str | None,
    prompt: str | None,
    as_of: date | None,
    as_json: bool,
    show_diff: bool,
) -> None:
    """What each agent below PATH loads at start and would recall for --prompt.

    Every format by its own rules as of --as-of: cognitive-memory's CORE.md
    as it would be regenerated now (diff against the file on disk, the
    12,000-character budget and what falls over it); Project Ocean's
    HEARTBEAT recall step (--limit 3) per agent and what shared/ adds; Dream
    Cycle's observations as loaded and what decays out within 7 and 30 days;
    experience records' hybrid retrieval for the prompt; observation/v1's
    comprehension documents and what they incorporate.  Token counts are
    estimates (characters / 4).  Writes nothing.
    """
    from memlens.core.preview import preview_vaults, previews_to_json

    when = resolve_as_of(as_of)
    catalog = load_catalog(path)
    previews = [
        p for p in preview_vaults(catalog.vaults, when, agent=agent, prompt=prompt) if p.sections
    ]
    if agent is not None and not previews:
        echo(f"{path}: no agent or vault named {agent!r} below it", err=True)
        sys.exit(EXIT_PROBLEMS)
    if as_json:
        emit_json(previews_to_json(previews, when, agent, prompt))
        return
    _print_text(previews, show_diff)
