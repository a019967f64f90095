"""REFLECTION.md regenerated: themes, cross-project tags, most accessed, recent insights
and merges (see the runs module's docstring for the choices the spec leaves open).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from datetime import UTC, date, datetime
from itertools import combinations
from pathlib import Path
from typing import Any

from ...errors import ParseError
from ...model import Memory
from ...text.textio import read_text
from ...write.journal import Plan
from .runs import _ADAPTER, _file_plan, _live, _one_line
from .schema import REFLECTION_FILE, STATE_FILE

#: Projects the reflection's cross-project section knows (spec).
KNOWN_PROJECTS: tuple[str, ...] = (
    "major-domo",
    "paper-dynasty",
    "homelab",
    "vagabond-rpg",
    "foundryvtt",
    "strat-gameplay-webapp",
)

THEMES_TOP = 8
THEME_EXAMPLES = 3
THEME_TITLE_CHARS = 40
MOST_ACCESSED_TOP = 10
INSIGHTS_TOP = 10
PREVIEW_CHARS = 80


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
