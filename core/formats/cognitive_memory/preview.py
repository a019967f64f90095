"""What a cognitive-memory agent loads: CORE.md as `client.py core` would write it now.

The spec loads CORE.md into the system prompt at session start, so the
preview regenerates it from the memories' scores at `as_of` (the same
`core_file.core_layout` the `core` run writes), diffs it against the file on
disk, and lists what qualified (score >= 0.2, a CORE.md type) but was cut: by
the ~12,000-character budget or by the 15-per-section cap.  The spec names
no recall step for a prompt, so there is none here.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path

from ...errors import MemlensError
from ...model import Memory
from ...safe_io import read_regular_text
from ..adapter import FormatAdapter
from ..preview_model import (
    STAGE_CUT,
    STAGE_LOAD,
    Budget,
    PreviewEntry,
    PreviewRequest,
    PreviewSection,
)
from .core_file import (
    CORE_BUDGET_CHARS,
    CUT_BUDGET,
    CUT_SECTION_CAP,
    CoreLayout,
    CoreLine,
    core_layout,
)
from .schema import CORE_FILE, GRAPH_DIR, VAULT_DIR

_CUT_NOTES = {
    CUT_BUDGET: "over the 12,000-character budget",
    CUT_SECTION_CAP: "past the 15 entries of its section",
}


def _on_disk(root: Path) -> str | None:
    """CORE.md as it is now; None when there is none (or it cannot be read as text)."""
    try:
        return read_regular_text(root / CORE_FILE)
    except (OSError, UnicodeDecodeError, MemlensError):
        return None


def _entry(line: CoreLine, note: str, cut: str | None = None) -> PreviewEntry:
    m = line.memory
    details: dict[str, str] = {"section": line.heading, "type": m.kind}
    if cut is not None:
        details["cut"] = cut
    return PreviewEntry(
        id=m.id,
        title=m.title,
        path=m.path,
        text=line.text,
        score=line.score,
        note=note,
        details=details,
        memory=m,
    )


def _diff(old: str | None, layout: CoreLayout) -> tuple[str, ...] | None:
    if old is None:
        return None
    return tuple(
        difflib.unified_diff(
            old.splitlines(),
            list(layout.lines),
            f"{CORE_FILE} (on disk)",
            f"{CORE_FILE} (regenerated)",
            lineterm="",
        )
    )


def core_preview(
    adapter: FormatAdapter, root: Path, memories: Sequence[Memory], request: PreviewRequest
) -> list[PreviewSection]:
    """CORE.md regenerated at `request.as_of`, its diff and budget, and what it cuts."""
    live = sorted(
        (m for m in memories if m.native.get("area") in (GRAPH_DIR, VAULT_DIR)),
        key=lambda m: m.path,
    )
    scored = []
    for m in live:
        score = adapter.decay(m, request.as_of, explain=False).score
        scored.append((m, score if score is not None else 0.0))
    layout = core_layout(scored, request.as_of)
    old = _on_disk(root)
    diff = _diff(old, layout)
    text = layout.text
    changed = old is not None and old != text
    state = "missing" if old is None else ("differs" if changed else "unchanged")
    loaded = PreviewSection(
        key="core",
        title=f"{CORE_FILE} as regenerated",
        stage=STAGE_LOAD,
        entries=tuple(_entry(line, line.heading) for line in layout.included),
        text=text,
        budget=Budget(CORE_BUDGET_CHARS, len(text)),
        diff=diff,
        note=(
            f"{len(layout.included)} memories; active {layout.active}/{layout.total}; "
            f"file on disk: {state}"
        ),
        details={"on_disk": state, "active": layout.active, "scored": layout.total},
    )
    cut = PreviewSection(
        key="core_cut",
        title=f"Left out of {CORE_FILE}",
        stage=STAGE_CUT,
        entries=tuple(_entry(line, _CUT_NOTES[why], why) for line, why in layout.cut),
        note="score >= 0.2 and a CORE.md type, but cut by the budget or a section's cap",
    )
    return [loaded, cut]


__all__ = ["core_preview"]
