"""Cognitive-memory maintenance runs: reindex, CORE.md, REFLECTION.md, decay scores, access.

These replace the system's own `client.py reindex|core|reflection|decay` and
the access counting of `get`.  Each run returns a `Plan` (the exact bytes it
would write, with the snapshot they were computed from) so callers preview it
first and then apply it with `journal.apply_plan`: every run is journaled and
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
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from itertools import combinations
from pathlib import Path
from typing import Any

from ...errors import ParseError, RefusedError
from ...model import Memory
from ...safe_io import read_regular
from ...text.dates import parse_datetime
from ...text.frontmatter import load_frontmatter
from ...text.paths import is_inside
from ...text.textio import decode_bytes, read_text
from ...write.journal import ChangeKind, FileChange, Plan
from ...write.writes import digest, snapshot
from .adapter import (
    ARCHIVE_DIR,
    CORE_FILE,
    DEFAULT_CONFIDENCE,
    FADING_THRESHOLD,
    GRAPH_DIR,
    INDEX_FILE,
    REFLECTION_FILE,
    STATE_FILE,
    VAULT_DIR,
    CognitiveMemoryAdapter,
    _Invalid,
    _memory_files,
    _validate,
    status_for_score,
)

#: Projects the reflection's cross-project section knows (spec).
KNOWN_PROJECTS: tuple[str, ...] = (
    "major-domo",
    "paper-dynasty",
    "homelab",
    "vagabond-rpg",
    "foundryvtt",
    "strat-gameplay-webapp",
)
#: CORE.md sections: heading and the memory types it gathers.
CORE_SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Critical Solutions", ("solution",)),
    ("Active Decisions", ("decision",)),
    ("Key Fixes", ("fix",)),
    ("Configurations", ("configuration",)),
    ("Patterns & Workflows", ("procedure", "code_pattern", "workflow")),
)
CORE_MIN_SCORE = FADING_THRESHOLD
CORE_PER_SECTION = 15
CORE_BUDGET_CHARS = 12_000
THEMES_TOP = 8
THEME_EXAMPLES = 3
THEME_TITLE_CHARS = 40
MOST_ACCESSED_TOP = 10
INSIGHTS_TOP = 10
PREVIEW_CHARS = 80

_ADAPTER = CognitiveMemoryAdapter()


# --------------------------------------------------------------------------- shared


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


# --------------------------------------------------------------------------- _index.json


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


# --------------------------------------------------------------------------- CORE.md


def _scored(root: Path, as_of: date) -> list[tuple[Memory, float]]:
    result = _ADAPTER.scan(root)
    out: list[tuple[Memory, float]] = []
    for m in _live(result.memories):
        info = _ADAPTER.decay(m, as_of)
        out.append((m, info.score if info.score is not None else 0.0))
    return out


def _core_line(m: Memory) -> str:
    tags = ", ".join(m.tags[:2])
    suffix = f" ({tags})" if tags else ""
    return f"- [{_one_line(m.title)}]({m.path}){suffix}"


def render_core(root: Path, as_of: date, generated_on: date | None = None) -> str:
    """CORE.md for `as_of` (scores); the header date is `generated_on` (default `as_of`)."""
    scored = _scored(root, as_of)
    active = sum(1 for _, s in scored if status_for_score(s) == "active")
    lines = [
        "# Memory Core (auto-generated)",
        f"> Last updated: {(generated_on or as_of).isoformat()} | "
        f"Active memories: {active}/{len(scored)} | Next refresh: daily (systemd timer)",
    ]
    size = sum(len(line) + 1 for line in lines)
    for heading, kinds in CORE_SECTIONS:
        picked = sorted(
            ((m, s) for m, s in scored if m.kind in kinds and s >= CORE_MIN_SCORE),
            key=lambda ms: (-ms[1], ms[0].path),
        )[:CORE_PER_SECTION]
        section = ["", f"## {heading}"]
        section_size = sum(len(line) + 1 for line in section)
        body: list[str] = []
        for m, _ in picked:
            line = _core_line(m)
            if size + section_size + len(line) + 1 > CORE_BUDGET_CHARS:
                break
            body.append(line)
            section_size += len(line) + 1
        if body:
            lines.extend(section + body)
            size += section_size
    return "\n".join(lines) + "\n"


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


# --------------------------------------------------------------------------- REFLECTION.md


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _reflection_counts(root: Path) -> tuple[str, int]:
    """(last reflection, total reflections): memlens runs none, so they are carried over."""
    try:
        state = json.loads(read_text(root / STATE_FILE).text)
    except (OSError, ParseError, ValueError, RecursionError):
        state = None
    if isinstance(state, dict):
        last = state.get("last_reflection")
        total = state.get("reflection_count")
        if isinstance(total, int) and not isinstance(total, bool):
            last_text = str(last)[:10] if isinstance(last, str) and last else "never"
            return last_text, total
    try:
        old = read_text(root / REFLECTION_FILE).text
    except (OSError, ParseError):
        return "never", 0
    m = re.search(r"Last reflection:\s*([^|\n]+?)\s*\|\s*Total reflections:\s*(\d+)", old)
    if m is None:
        return "never", 0
    return m.group(1), int(m.group(2))


def _themes(memories: list[Memory]) -> list[str]:
    pairs: dict[tuple[str, str], list[Memory]] = defaultdict(list)
    for m in memories:
        for pair in combinations(sorted(set(m.tags)), 2):
            pairs[pair].append(m)
    top = sorted(
        ((p, ms) for p, ms in pairs.items() if len(ms) >= 2), key=lambda pm: (-len(pm[1]), pm[0])
    )[:THEMES_TOP]
    out: list[str] = []
    for (a, b), ms in top:
        examples = ", ".join(
            json.dumps(_cut(_one_line(m.title), THEME_TITLE_CHARS), ensure_ascii=False)
            for m in ms[:THEME_EXAMPLES]
        )
        out.append(f"- **{a} + {b}**: {len(ms)} memories ({examples})")
    return out


def _cross_project(memories: list[Memory]) -> list[str]:
    per_tag: dict[str, Counter[str]] = defaultdict(Counter)
    for m in memories:
        tags = set(m.tags)
        projects = [p for p in KNOWN_PROJECTS if p in tags]
        for tag in tags - set(KNOWN_PROJECTS):
            for p in projects:
                per_tag[tag][p] += 1
    out: list[str] = []
    for tag in sorted(per_tag):
        counts = per_tag[tag]
        if len(counts) < 2:
            continue
        spread = ", ".join(
            f"{p} ({n})" for p, n in sorted(counts.items(), key=lambda pn: (-pn[1], pn[0]))
        )
        out.append(f"- **{tag}**: appears in {spread}")
    return out


def _most_accessed(memories: list[Memory]) -> list[str]:
    counted = [(m, int(m.native.get("access_count") or 0)) for m in memories]
    top = sorted(((m, n) for m, n in counted if n > 0), key=lambda mn: (-mn[1], mn[0].path))[
        :MOST_ACCESSED_TOP
    ]
    return [
        f"{i}. [{_one_line(m.title)}]({m.path}) - {n} {'access' if n == 1 else 'accesses'}"
        for i, (m, n) in enumerate(top, start=1)
    ]


def _created_key(m: Memory) -> float:
    c = m.created
    if isinstance(c, datetime):
        return (c if c.tzinfo is not None else c.replace(tzinfo=UTC)).timestamp()
    if isinstance(c, date):
        return datetime(c.year, c.month, c.day, tzinfo=UTC).timestamp()
    return -math.inf


def _insights(memories: list[Memory]) -> list[str]:
    insights = sorted(
        (m for m in memories if m.kind == "insight"),
        key=lambda m: (-_created_key(m), m.path),
    )[:INSIGHTS_TOP]
    return [
        f"- [{_one_line(m.title)}]({m.path}) - {_cut(_one_line(m.body), PREVIEW_CHARS)}"
        for m in insights
    ]


def _merges(episodes: list[dict[str, Any]]) -> int:
    return sum(
        1
        for e in episodes
        if str(e.get("type") or "").strip().lower() == "merge"
        or str(e.get("title") or "").lower().startswith("merge")
    )


def render_reflection(root: Path, today: date) -> str:
    """REFLECTION.md as documented; `today` is the "Last updated" date."""
    result = _ADAPTER.scan(root)
    memories = _live(result.memories)
    last, total = _reflection_counts(root)

    def section(title: str, intro: str | None, items: list[str]) -> list[str]:
        out = ["", f"## {title}"]
        if intro is not None:
            out += [intro, ""]
        return out + (items or ["- (none)"])

    lines = [
        "# Reflection Summary (auto-generated)",
        f"> Last updated: {today.isoformat()} | Last reflection: {last} | "
        f"Total reflections: {total}",
    ]
    lines += section(
        "Themes", "Top tag co-occurrences revealing recurring themes:", _themes(memories)
    )
    lines += section(
        "Cross-Project Patterns", "Tags that span multiple projects:", _cross_project(memories)
    )
    lines += section(
        "Most Accessed",
        f"Top {MOST_ACCESSED_TOP} memories by access count:",
        _most_accessed(memories),
    )
    lines += section("Recent Insights", "Insight-type memories:", _insights(memories))
    episodes = result.records.get("episodes", [])
    lines += section(
        "Consolidation History", None, [f"- Total merges performed: {_merges(episodes)}"]
    )
    return "\n".join(lines) + "\n"


def plan_reflection(root: Path, today: date) -> Plan:
    """Regenerate REFLECTION.md (the system's `client.py reflection`)."""
    text = render_reflection(root, today)
    return _file_plan(
        root, REFLECTION_FILE, "reflection", text.encode("utf-8"), f"reflection: {REFLECTION_FILE}"
    )


# --------------------------------------------------------------------------- _state.json


class _RawNumber:
    """A JSON number kept as its text, so untouched values are written back unchanged."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _load_state_text(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text, parse_float=_RawNumber, parse_int=_RawNumber)
    except (ValueError, RecursionError) as exc:
        raise RefusedError(f"{STATE_FILE}: not valid JSON ({exc}); not touching it") from None
    if not isinstance(data, dict):
        raise RefusedError(f"{STATE_FILE}: top level is not an object; not touching it")
    return data


def _indent_of(text: str) -> str | None:
    """The indent unit of a pretty-printed JSON file; None for a one-line file."""
    for line in text.split("\n")[1:]:
        stripped = line.lstrip(" \t")
        if stripped:
            return line[: len(line) - len(stripped)] or None
    return None


def _dump(value: Any, indent: str | None, ascii_only: bool, level: int = 0) -> str:
    """json.dumps(indent=...) output, writing _RawNumber values as their original text."""
    if isinstance(value, _RawNumber):
        return value.text
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [
            f"{json.dumps(str(k), ensure_ascii=ascii_only)}: "
            f"{_dump(v, indent, ascii_only, level + 1)}"
            for k, v in value.items()
        ]
        return _join(items, "{", "}", indent, level)
    if isinstance(value, list):
        if not value:
            return "[]"
        items = [_dump(v, indent, ascii_only, level + 1) for v in value]
        return _join(items, "[", "]", indent, level)
    return json.dumps(value, ensure_ascii=ascii_only)


def _join(items: list[str], open_: str, close: str, indent: str | None, level: int) -> str:
    if indent is None:
        return open_ + ", ".join(items) + close
    inner = "\n" + indent * (level + 1)
    return open_ + inner + ("," + inner).join(items) + "\n" + indent * level + close


def _render_state(data: dict[str, Any], like: str) -> str:
    indent = _indent_of(like) if like else "  "
    out = _dump(data, indent, "\\u" in like)
    return out + ("\n" if not like or like.endswith("\n") else "")


def _read_state_file(root: Path) -> tuple[Path, bytes, str, dict[str, Any] | None]:
    """(path, bytes, text, parsed) of `_state.json`, read once; bytes b"" if it is missing."""
    path = _target(root, STATE_FILE)
    try:
        raw = read_regular(path)
    except FileNotFoundError:
        return path, b"", "", None
    except OSError as exc:
        raise RefusedError(f"{STATE_FILE}: unreadable ({exc}); not touching it") from None
    try:
        text = decode_bytes(raw, STATE_FILE).text
    except ParseError as exc:
        raise RefusedError(f"{STATE_FILE}: {exc}; not touching it") from None
    return path, raw, text, _load_state_text(text)


def _state_plan(
    root: Path,
    action: str,
    summary: str,
    memory_ids: list[str],
    edit: Callable[[dict[str, Any]], None],
) -> Plan:
    path, raw, text, data = _read_state_file(root)
    if data is None:
        data = {"version": 1, "updated": None, "entries": {}}
    edit(data)
    new = _render_state(data, text).encode("utf-8")
    if raw.startswith(b"\xef\xbb\xbf"):
        new = b"\xef\xbb\xbf" + new
    if b"\r\n" in raw:
        new = new.replace(b"\n", b"\r\n")
    plan = Plan(action=action, vault_root=root, memory_ids=memory_ids, summary=summary)
    if new != raw:
        kind: ChangeKind = "write" if raw else "create"
        plan.changes.append(FileChange(kind, path, snapshot(path, raw if raw else None), data=new))
    return plan


def _entries(data: dict[str, Any]) -> dict[str, Any]:
    entries = data.get("entries")
    if entries is None:
        entries = data["entries"] = {}
    if not isinstance(entries, dict):
        raise RefusedError(f"{STATE_FILE}: 'entries' is not an object; not touching it")
    return entries


def plan_decay_scores(root: Path, as_of: date, now: datetime | None = None) -> Plan:
    """Recompute the stored `decay_score` of every `_state.json` entry of a live memory.

    Only `decay_score` values change (rounded to 4 places, vault/ = 999.0);
    other keys, key order, number texts and orphan entries stay as they are.
    `updated` is set to `now` when given.
    """
    if not (root / STATE_FILE).exists():
        return Plan("decay_scores", root, [], f"decay: no {STATE_FILE}; nothing to recompute")
    result = _ADAPTER.scan(root)
    scores = {m.id: _ADAPTER.decay(m, as_of).score for m in _live(result.memories)}
    changed: list[str] = []

    def edit(data: dict[str, Any]) -> None:
        for mem_id, entry in _entries(data).items():
            score = scores.get(mem_id)
            if score is None or not isinstance(entry, dict):
                continue
            old = entry.get("decay_score")
            old_value = float(old.text) if isinstance(old, _RawNumber) else old
            if old_value != score or "decay_score" not in entry:
                entry["decay_score"] = score
                changed.append(mem_id)
        if now is not None and changed:
            data["updated"] = _stamp(now)

    plan = _state_plan(root, "decay_scores", "", [], edit)
    plan.memory_ids = changed
    plan.summary = (
        f"decay: {len(changed)} decay_score values in {STATE_FILE} recomputed "
        f"as of {as_of.isoformat()}"
    )
    return plan


def plan_record_access(memory: Memory, when: datetime) -> Plan:
    """Count one access of `memory` in `_state.json` (the system's `get`).

    access_count + 1, last_accessed = `when`, decay_score recomputed for that
    moment; the entry is created if missing, the file too.  The app calls this
    only when the user turned access tracking on (off by default, so browsing
    never changes what agents see).
    """
    root = memory.vault_root
    stamp = _stamp(when)

    def edit(data: dict[str, Any]) -> None:
        entries = _entries(data)
        entry = entries.get(memory.id)
        if not isinstance(entry, dict):
            entry = entries[memory.id] = {}
        count = entry.get("access_count")
        old = int(count.text) if isinstance(count, _RawNumber) and count.text.isdigit() else 0
        entry["access_count"] = old + 1
        entry["last_accessed"] = stamp
        native = dict(memory.native, access_count=old + 1, last_accessed=stamp)
        probe = Memory(
            format=memory.format,
            vault_root=root,
            id=memory.id,
            kind=memory.kind,
            title=memory.title,
            body="",
            path=memory.path,
            importance=memory.importance,
            created=memory.created,
            pinned=memory.pinned,
            archived=memory.archived,
            native=native,
        )
        day = (when if when.tzinfo is not None else when.replace(tzinfo=UTC)).astimezone(UTC)
        entry["decay_score"] = _ADAPTER.decay(probe, day.date()).score
        data["updated"] = stamp

    return _state_plan(
        root,
        "access",
        f"access: {memory.title!r} counted in {STATE_FILE}",
        [memory.id],
        edit,
    )


def record_access(memory: Memory, when: datetime) -> Plan:
    """Alias of plan_record_access (the name the app uses)."""
    return plan_record_access(memory, when)
