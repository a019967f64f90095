"""Episode timelines: the daily session logs of cognitive-memory vaults, newest first.

The cognitive-memory adapter reads `episodes/YYYY-MM-DD.md` into
`ScanResult.records["episodes"]` (one dict per `## HH:MM - Title` entry, its
memory link already resolved against the vault's memories).  This module
turns those records into typed entries and orders them for a timeline; it
reads no files and knows no other format.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .formats import info_for
from .scan.vault import Vault

#: Link states of an entry: it names a memory that exists, one that does
#: not (a dangling or unsafe link), or no memory at all.
LINKED = "linked"
DANGLING = "dangling"
UNLINKED = "unlinked"


@dataclass(frozen=True, slots=True)
class EpisodeEntry:
    """One entry of one daily episode file."""

    vault_root: Path
    #: Display name of the vault.
    vault: str
    #: The day (the file name's YYYY-MM-DD).
    date: str
    #: "HH:MM" from the heading, if it has one.
    time: str | None
    title: str
    type: str | None
    tags: tuple[str, ...]
    summary: str | None
    #: The link text and target as written (`[text](target)`), if any.
    memory_text: str | None
    memory_link: str | None
    #: Vault-relative path the link points at, and the id of the memory there.
    memory_path: str | None
    memory_id: str | None
    #: Vault-relative episode file and the heading's line.
    file: str
    line: int

    @property
    def link_state(self) -> str:
        if self.memory_id is not None:
            return LINKED
        if self.memory_link is not None or self.memory_text is not None:
            return DANGLING
        return UNLINKED

    @property
    def key(self) -> tuple[str, str, int]:
        """Identity across rescans: vault, file, line."""
        return (str(self.vault_root), self.file, self.line)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value != "" else None


def _entry(vault: Vault, record: dict[str, Any]) -> EpisodeEntry | None:
    date = _text(record.get("date"))
    file = _text(record.get("file"))
    if date is None or file is None:
        return None
    tags = record.get("tags")
    line = record.get("line")
    return EpisodeEntry(
        vault_root=vault.root,
        vault=vault.name,
        date=date,
        time=_text(record.get("time")),
        title=_text(record.get("title")) or "(untitled)",
        type=_text(record.get("type")),
        tags=tuple(t for t in tags if isinstance(t, str)) if isinstance(tags, list) else (),
        summary=_text(record.get("summary")),
        memory_text=_text(record.get("memory_text")),
        memory_link=_text(record.get("memory_link")),
        memory_path=_text(record.get("memory_path")),
        memory_id=_text(record.get("memory_id")),
        file=file,
        line=line if isinstance(line, int) else 0,
    )


def episode_entries(vaults: Iterable[Vault]) -> list[EpisodeEntry]:
    """Every episode entry of every vault, newest first.

    Days newest first; within a day, entries with a time newest first, then
    those without one (later in the file first); across vaults on the same
    day and time, by vault name.
    """
    entries: list[EpisodeEntry] = []
    for v in vaults:
        if not info_for(v.format).has_episodes:
            continue
        for record in v.result.records.get("episodes", []):
            if isinstance(record, dict):
                e = _entry(v, record)
                if e is not None:
                    entries.append(e)
    entries.sort(key=lambda e: (e.vault, e.file, e.line))
    entries.sort(key=lambda e: (e.date, e.time is not None, e.time or "", e.line), reverse=True)
    return entries


def by_day(entries: Iterable[EpisodeEntry]) -> Iterator[tuple[str, list[EpisodeEntry]]]:
    """Consecutive entries grouped by day (feed it `episode_entries`)."""
    day: str | None = None
    group: list[EpisodeEntry] = []
    for e in entries:
        if e.date != day:
            if group:
                assert day is not None
                yield day, group
            day, group = e.date, []
        group.append(e)
    if group:
        assert day is not None
        yield day, group
