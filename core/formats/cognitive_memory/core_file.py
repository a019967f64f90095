"""CORE.md's layout: which memories make the file, which the budget cuts, in what order.

The rules (calibrated on the fixture vault, see `runs`): sections by type,
score >= 0.2 at `as_of` (vault/ = 999), highest first with ties by path, 15
per section, and lines added while the whole file stays within 12,000
characters.  When a line does not fit, the rest of its section is cut (the
system's generator stops the section there) and the next section is tried.
`runs.render_core` writes the text; the preview shows what was cut and why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from ...model import Memory
from .decay import FADING_THRESHOLD, status_for_score

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

#: Why a qualifying memory is not in CORE.md.
CUT_BUDGET = "over_budget"
CUT_SECTION_CAP = "section_cap"


@dataclass(frozen=True, slots=True)
class CoreLine:
    """One memory's line in CORE.md (or the line it would have had)."""

    memory: Memory
    score: float
    heading: str
    text: str


@dataclass(frozen=True, slots=True)
class CoreLayout:
    """CORE.md as generated: its lines, the memories in it and the ones cut."""

    lines: tuple[str, ...]
    included: tuple[CoreLine, ...]
    #: (line, CUT_BUDGET or CUT_SECTION_CAP), in section then score order.
    cut: tuple[tuple[CoreLine, str], ...]
    #: Memories scored (graph/ and vault/), and those scoring active (>= 0.5).
    total: int
    active: int

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def core_line(m: Memory) -> str:
    """`- [title](path) (tag1, tag2)`: the spec's line, with at most two tags."""
    tags = ", ".join(m.tags[:2])
    suffix = f" ({tags})" if tags else ""
    return f"- [{_one_line(m.title)}]({m.path}){suffix}"


def core_layout(
    scored: Sequence[tuple[Memory, float]], as_of: date, generated_on: date | None = None
) -> CoreLayout:
    """Lay out CORE.md for memories scored at `as_of`; the header shows `generated_on`."""
    active = sum(1 for _, s in scored if status_for_score(s) == "active")
    lines = [
        "# Memory Core (auto-generated)",
        f"> Last updated: {(generated_on or as_of).isoformat()} | "
        f"Active memories: {active}/{len(scored)} | Next refresh: daily (systemd timer)",
    ]
    size = sum(len(line) + 1 for line in lines)
    included: list[CoreLine] = []
    cut: list[tuple[CoreLine, str]] = []
    for heading, kinds in CORE_SECTIONS:
        ranked = sorted(
            ((m, s) for m, s in scored if m.kind in kinds and s >= CORE_MIN_SCORE),
            key=lambda ms: (-ms[1], ms[0].path),
        )
        candidates = [CoreLine(m, s, heading, core_line(m)) for m, s in ranked]
        section = ["", f"## {heading}"]
        section_size = sum(len(line) + 1 for line in section)
        body: list[CoreLine] = []
        for pos, line in enumerate(candidates[:CORE_PER_SECTION]):
            if size + section_size + len(line.text) + 1 > CORE_BUDGET_CHARS:
                cut.extend((c, CUT_BUDGET) for c in candidates[pos:CORE_PER_SECTION])
                break
            body.append(line)
            section_size += len(line.text) + 1
        cut.extend((c, CUT_SECTION_CAP) for c in candidates[CORE_PER_SECTION:])
        if body:
            lines.extend(section + [line.text for line in body])
            included.extend(body)
            size += section_size
    return CoreLayout(tuple(lines), tuple(included), tuple(cut), len(scored), active)


__all__ = [
    "CORE_BUDGET_CHARS",
    "CORE_MIN_SCORE",
    "CORE_PER_SECTION",
    "CORE_SECTIONS",
    "CUT_BUDGET",
    "CUT_SECTION_CAP",
    "CoreLayout",
    "CoreLine",
    "core_layout",
    "core_line",
]
