"""Cognitive-memory maintenance runs: reindex, CORE.md, REFLECTION.md, decay scores, access.

These replace the system's own `client.py reindex|core|reflection|decay` and
the access counting of `get`.  Each run returns a `Plan` (the exact bytes it
would write, with the snapshot they were computed from) so callers preview it
first and then apply it with `write.txn.apply_plan`: every run is journaled and
undoable like a user action, and refused if the target changed meanwhile.

Time is always a parameter: `now` for timestamps written into files, `as_of`
for decay scores.  Nothing here reads the clock.

Decisions the spec leaves open (calibrated on the fixture vault's files):

- Memories in memlens's `archive/` are outside the system's view (that is why
  archive lives outside graph/): they are not indexed, not in CORE.md or
  REFLECTION.md, and their `_state.json` entries are left as they are.
- `_index.json`: one entry per id for every memory file that is valid by
  the adapter's rules, including one copy of a duplicated id: the first file
  in path order (files are visited sorted by vault-relative path, and so are
  the entries).  Timestamps are the text written in the file.  `steps`,
  `preconditions` and `postconditions` follow `relations` when the file has them.
- CORE.md: sections Critical Solutions (solution), Active Decisions
  (decision), Key Fixes (fix), Configurations (configuration), Patterns &
  Workflows (procedure, code_pattern, workflow); other types are not in
  CORE.md.  Score >= 0.2 at `as_of` (vault/ = 999), highest first (ties by
  path), 15 per section, lines added while the file stays within 12,000
  characters; a section with no line is left out.  "Active memories" counts
  scores >= 0.5 out of every memory in graph/ and vault/.
- REFLECTION.md: themes are tag pairs shared by at least two memories, most
  shared first (ties alphabetical), examples are the first three titles in
  path order cut to 40 characters + "...".  Cross-project patterns: every
  non-project tag found with 2+ known project tags, tags alphabetical,
  projects by count then name.  Most accessed: access_count > 0, ties by
  path.  Recent insights: newest `created` first, at most 10, body preview of
  80 characters (whitespace collapsed) + "...".  memlens runs no reflection
  cycles, so "Last reflection" and "Total reflections" are carried over from
  the existing REFLECTION.md (or `_state.json` keys `last_reflection` /
  `reflection_count` when present); a vault with neither says "never" and 0.
  Merges are episode entries whose type is `merge` or whose title starts
  with "Merge".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from ...errors import ParseError, RefusedError
from ...model import Memory
from ...text.dates import parse_datetime
from ...text.frontmatter import load_frontmatter
from ...text.paths import is_inside
from ...text.textio import read_text
from ...write.journal import FileChange, Plan
from ...write.writes import digest, snapshot
from .adapter import CognitiveMemoryAdapter

# The CORE.md constants moved to core_file; re-exported for existing callers.
from .core_file import CORE_BUDGET_CHARS as CORE_BUDGET_CHARS
from .core_file import CORE_PER_SECTION as CORE_PER_SECTION
from .core_file import core_layout
from .memories import _Invalid, _memory_files, _validate
from .schema import ARCHIVE_DIR, CORE_FILE, DEFAULT_CONFIDENCE, GRAPH_DIR, INDEX_FILE, VAULT_DIR

_ADAPTER = CognitiveMemoryAdapter()


def _stamp(now: datetime) -> str:
    """`2026-11-21T23:10:00+00:00`: the timestamp style of the system's JSON files."""
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    return now.astimezone(UTC).isoformat(timespec="seconds")


def _target(root: Path, name: str) -> Path:
    path = root / name
    if not is_inside(root, path) or path.is_symlink():
        raise RefusedError(f"{name} is a symbolic link; memlens does not write through links")
    return path


def _file_plan(root: Path, name: str, action: str, data: bytes, summary: str) -> Plan:
    """A plan that writes (or creates) one file of the vault root; empty if unchanged."""
    path = _target(root, name)
    before = snapshot(path)
    plan = Plan(action=action, vault_root=root, memory_ids=[], summary=summary)
    if before.exists:
        if before.sha256 == digest(data):
            plan.summary = f"{name} is up to date"
            return plan
        plan.changes.append(FileChange("write", path, before, data=data))
    else:
        plan.changes.append(FileChange("create", path, before, data=data))
    return plan


def _live(memories: Iterable[Memory]) -> list[Memory]:
    """Memories the system itself sees: graph/ and vault/, not memlens's archive/."""
    return sorted(
        (m for m in memories if m.native.get("area") in (GRAPH_DIR, VAULT_DIR)),
        key=lambda m: m.path,
    )


def _one_line(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True, slots=True)
class _IndexedFile:
    memory: Memory
    header: str


def _valid_files(root: Path) -> list[_IndexedFile]:
    """Every valid memory file in graph/ and vault/, duplicates included, by path."""
    out: list[_IndexedFile] = []
    for path, area, type_dir in _memory_files(root):
        if area == ARCHIVE_DIR:
            continue
        rel = path.relative_to(root).as_posix()
        try:
            data, doc = load_frontmatter(read_text(path).text, rel)
            parsed = _validate(data, doc.header, root, rel, area, type_dir)
        except (ParseError, _Invalid, OSError):
            continue
        out.append(_IndexedFile(parsed.memory, doc.header))
    out.sort(key=lambda f: f.memory.path)
    return out


def _scalar_text(header: str, key: str) -> str | None:
    m = re.search(rf"^{re.escape(key)}:[ \t]*(.*?)[ \t]*$", header, re.MULTILINE)
    if m is None:
        return None
    text = re.sub(r"\s+#.*$", "", m.group(1))
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    return text or None


def _timestamp_text(value: Any, header: str, key: str) -> str:
    """The timestamp as written in the file (the markdown is the source of truth)."""
    if isinstance(value, str):
        return value
    raw = _scalar_text(header, key)
    if raw is not None and isinstance(value, date) and parse_datetime(raw) == value:
        return raw
    return value.isoformat() if isinstance(value, date) else str(value)


def _index_entry(f: _IndexedFile) -> dict[str, Any]:
    m = f.memory
    fields = m.fields
    relations: list[dict[str, Any]] = []
    raw_relations = fields.get("relations")
    for item in raw_relations if isinstance(raw_relations, list) else []:
        rel = {k: item[k] for k in ("target", "type", "direction") if k in item}
        for k in ("strength", "context"):
            if item.get(k) is not None:
                rel[k] = item[k]
        relations.append(rel)
    confidence = fields.get("confidence")
    entry: dict[str, Any] = {
        "title": m.title,
        "type": m.kind,
        "tags": list(m.tags),
        "importance": fields["importance"],
        "confidence": confidence if confidence is not None else DEFAULT_CONFIDENCE,
        "created": _timestamp_text(fields["created"], f.header, "created"),
        "updated": _timestamp_text(fields["updated"], f.header, "updated"),
        "path": m.path,
        "relations": relations,
    }
    for key in ("steps", "preconditions", "postconditions"):
        if fields.get(key) is not None:
            entry[key] = list(fields[key])
    return entry


def build_index(root: Path, now: datetime) -> dict[str, Any]:
    """`_index.json` content in the documented shape, from the markdown files."""
    entries: dict[str, Any] = {}
    for f in _valid_files(root):
        # A duplicated id: the first file in path order keeps the entry.
        entries.setdefault(f.memory.id, _index_entry(f))
    return {"version": 1, "updated": _stamp(now), "count": len(entries), "entries": entries}


def render_index(index: dict[str, Any]) -> str:
    return json.dumps(index, indent=2, ensure_ascii=False) + "\n"


def plan_reindex(root: Path, now: datetime) -> Plan:
    """Rebuild `_index.json` (the system's `client.py reindex`)."""
    index = build_index(root, now)
    return _file_plan(
        root,
        INDEX_FILE,
        "reindex",
        render_index(index).encode("utf-8"),
        f"reindex: {index['count']} entries in {INDEX_FILE}",
    )


def _scored(root: Path, as_of: date) -> list[tuple[Memory, float]]:
    result = _ADAPTER.scan(root)
    out: list[tuple[Memory, float]] = []
    for m in _live(result.memories):
        info = _ADAPTER.decay(m, as_of)
        out.append((m, info.score if info.score is not None else 0.0))
    return out


def render_core(root: Path, as_of: date, generated_on: date | None = None) -> str:
    """CORE.md for `as_of` (scores); the header date is `generated_on` (default `as_of`)."""
    return core_layout(_scored(root, as_of), as_of, generated_on).text


def plan_core(root: Path, as_of: date, generated_on: date | None = None) -> Plan:
    """Regenerate CORE.md (the system's `client.py core`)."""
    text = render_core(root, as_of, generated_on)
    count = sum(1 for line in text.split("\n") if line.startswith("- ["))
    return _file_plan(
        root,
        CORE_FILE,
        "core",
        text.encode("utf-8"),
        f"core: {count} memories in {CORE_FILE} (scores as of {as_of.isoformat()})",
    )
