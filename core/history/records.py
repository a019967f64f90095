"""The JSON shapes of a memory's history (`memlens history --json`), shared by the fronts."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path
from typing import Any

from ..errors import MemlensError
from ..formats import adapter_for
from ..records import jsonable
from .diff import entry_diff, field_changes, parse_version, text_of
from .log import Commit
from .versions import Entry, History, Version


def _rel_vault(root: Path, base: Path) -> str:
    try:
        rel = os.path.relpath(root, base)
    except ValueError:  # pragma: no cover - another drive on Windows
        return str(root)
    return "." if rel == "." else Path(rel).as_posix()


def commit_record(commit: Commit | None) -> dict[str, Any]:
    """Who, when and why of a commit (all None for the working tree)."""
    if commit is None:
        return dict.fromkeys(
            ("commit", "short", "author", "email", "date", "committed", "subject", "message")
        )
    return {
        "commit": commit.id,
        "short": commit.short,
        "author": commit.author,
        "email": commit.email,
        "date": commit.date,
        "committed": commit.committed,
        "subject": commit.subject,
        "message": commit.message,
    }


def entry_record(history: History, entry: Entry) -> dict[str, Any]:
    """One entry: its commit, how the memory changed, its fields and its diff."""
    fields, body_changed = field_changes(history.memory, entry)
    diff = entry_diff(history, entry)
    return {
        **commit_record(entry.commit),
        "working_tree": entry.commit is None,
        "change": entry.change,
        "path": entry.path,
        "old_path": entry.old_path,
        "fields": [
            {"field": f.name, "before": jsonable(f.before), "after": jsonable(f.after)}
            for f in fields
        ],
        "body_changed": body_changed,
        "diff": "".join(f"{line}\n" for line in diff),
    }


def history_record(history: History, base: Path) -> dict[str, Any]:
    """`memlens history --json`: the memory and every entry, newest first."""
    m = history.memory
    return {
        "vault": _rel_vault(m.vault_root, base),
        "format": m.format,
        "id": m.id,
        "path": m.path,
        "repository": str(history.repo.top),
        "shallow": history.repo.shallow,
        "entries": [entry_record(history, e) for e in history.entries],
    }


def version_record(history: History, version: Version, as_of: date) -> dict[str, Any]:
    """`memlens history --at C --json`: the memory as it was, judged as of `as_of`."""
    m = history.memory
    entry = version.entry
    rec: dict[str, Any] = {
        "format": m.format,
        "id": m.id,
        **commit_record(version.commit),
        "changed_in": entry.commit.id if entry.commit is not None else None,
        "path": entry.path,
        "text": text_of(version.data),
        "as_of": as_of.isoformat(),
    }
    parsed = parse_version(m, entry.path, version.data)
    if parsed is not None:
        rec["title"] = parsed.title
        rec["fields"] = jsonable(parsed.fields)
        rec["body"] = parsed.body
        try:
            d = adapter_for(m.format).decay(parsed, as_of, explain=False)
        except (MemlensError, ValueError, KeyError, TypeError):
            d = None
        if d is not None:
            rec["status"] = d.status
            rec["health"] = d.health.value
    return rec


__all__ = ["commit_record", "entry_record", "history_record", "version_record"]
