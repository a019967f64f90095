"""What every action flow shares: the wall clock, labels and plan
lines, telling the user, and re-reading what a write changed.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.notifications import SeverityLevel

from memlens.core.formats import FormatInfo, info_for
from memlens.core.model import Memory
from memlens.core.safe_io import read_regular
from memlens.core.scan.vault import Catalog, Vault
from memlens.core.write.journal import Plan

from .safe_text import visible

if TYPE_CHECKING:
    from .app import MemlensApp


#: Characters of a title shown in lists and notifications.
LABEL_TITLE_CHARS = 48


def wall_clock() -> datetime:
    """The time written into files (timestamps, access times): the one clock read here."""
    return datetime.now(UTC).replace(microsecond=0)


def memory_label(memory: Memory) -> str:
    """`title  (id)` for lists and notifications, the title cut to one line."""
    title = " ".join(memory.title.split())
    if len(title) > LABEL_TITLE_CHARS:
        title = title[: LABEL_TITLE_CHARS - 1].rstrip() + "…"
    return f"{title}  ({memory.id})"


def plan_lines(plan: Plan) -> list[str]:
    """The plan's summary, then each file change the summary does not already name."""
    lines = [plan.summary]
    for line in plan.describe():
        paths = line.split(" ", 1)[-1].split(" -> ")
        if not all(p in plan.summary for p in paths):
            lines.append(line)
    return lines


def entry_paths(root: Path, entry: dict[str, Any]) -> list[Path]:
    """Files a journal entry (an applied plan, or an undone one) touched."""
    out: list[Path] = []
    for op in entry.get("ops", []):
        for key in ("path", "dst"):
            rel = op.get(key)
            if isinstance(rel, str) and rel:
                out.append(root / rel)
    return out


def diff_stat(plan: Plan) -> list[str]:
    """`+12 -3 lines in CORE.md` per rewritten or created text file."""
    out: list[str] = []
    for c in plan.changes:
        if c.data is None:
            continue
        try:
            old = read_regular(c.path).decode("utf-8") if c.kind == "write" else ""
            new = c.data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        added = removed = 0
        for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm=""):
            if line.startswith("+") and not line.startswith("+++"):
                added += 1
            elif line.startswith("-") and not line.startswith("---"):
                removed += 1
        out.append(f"+{added} -{removed} lines in {c.path.name}")
    return out


def tell(app: MemlensApp, message: str, severity: SeverityLevel = "information") -> None:
    """A notification with user text shown literally."""
    log: list[tuple[str, str]] | None = getattr(app, "action_log", None)
    if log is None:
        log = []
        # Why an attribute set here: what the user was told can be read
        # (tests, debugging) without Textual's private list of toasts.
        app.action_log = log  # type: ignore[attr-defined]
    log.append((severity, message))
    app.notify(visible(message), severity=severity, markup=False, timeout=6)


def refresh_after_write(app: MemlensApp, paths: Iterable[Path]) -> None:
    """Re-read the files a write changed (rows, search index and graph follow).

    Why explicit: memlens's own writes are not echoed by the live-reload
    watcher (it is told about them first), so the app is asked directly.
    """
    app.refresh_paths(list(dict.fromkeys(paths)))


def catalog_of(app: MemlensApp) -> Catalog:
    return Catalog([v for v, _rows in app.loaded])


def vaults_with(app: MemlensApp, test: Callable[[FormatInfo], bool]) -> list[Vault]:
    """Loaded vaults of the formats whose facts pass `test` (a capability)."""
    return [v for v, _rows in app.loaded if test(info_for(v.format))]
