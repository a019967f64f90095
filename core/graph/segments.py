"""Text cells: runs of styled text, drawn rows, and fitting them to a terminal width.

Widths count terminal cells (wide East Asian characters take 2, combining
marks 0), so a row never overflows however the titles are written.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from ..text.sanitize import visible
from .model import GraphEdge, NodeKey


@dataclass(frozen=True, slots=True)
class Segment:
    """A run of text with a role the front end can style.

    Roles: `tree` (box characters), `arrow`, `type` (edge type), `title`,
    `strength`, `meta` (kind, counts, markers), `more`, `broken`, `centre`.
    """

    text: str
    role: str


@dataclass(frozen=True, slots=True)
class LayoutRow:
    """One drawn line of a neighbourhood."""

    segments: tuple[Segment, ...]
    #: The node this row shows (selectable), or None for headers and "… more" rows.
    key: NodeKey | None
    #: 0 the centre, 1 a group header or neighbour, 2+ further out.
    depth: int
    #: `centre`, `group`, `node`, `more`, `broken`.
    role: str
    #: The depth-1 group this row belongs to (pass it in `expanded` to show it whole).
    group: str | None = None
    #: The link that led to this node (for showing its context).
    edge: GraphEdge | None = None

    @property
    def text(self) -> str:
        return "".join(s.text for s in self.segments)


def cell_width(text: str) -> int:
    """Terminal cells `text` takes: wide East Asian characters 2, combining marks 0."""
    total = 0
    for ch in text:
        if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
            continue
        total += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return total


def line_text(text: str) -> str:
    """One line of user text, control and bidi characters made visible (ESC -> ␛)."""
    return visible(text, keep_newlines=False).replace("\t", " ")


def truncate_cells(text: str, width: int) -> str:
    """`text` cut to `width` cells, ending in `…` when cut."""
    if width <= 0:
        return ""
    if cell_width(text) <= width:
        return text
    out: list[str] = []
    used = 0
    for ch in text:
        w = cell_width(ch)
        if used + w > width - 1:
            break
        out.append(ch)
        used += w
    return "".join(out) + "…"


def fit_row(segments: list[Segment], width: int) -> tuple[Segment, ...]:
    """Shrink a row to `width` cells: the title gives way first, then everything from the end."""
    total = sum(cell_width(s.text) for s in segments)
    if total <= width:
        return tuple(segments)
    segs = list(segments)
    for role in ("title", "meta", "type"):
        for i, s in enumerate(segs):
            if total <= width:
                break
            if s.role != role:
                continue
            w = cell_width(s.text)
            keep = max(2, w - (total - width))
            new = truncate_cells(s.text, keep)
            total += cell_width(new) - w
            segs[i] = Segment(new, s.role)
    while total > width and segs:
        s = segs.pop()
        w = cell_width(s.text)
        total -= w
        if total < width:
            new = truncate_cells(s.text, width - total)
            if new:
                segs.append(Segment(new, s.role))
                total += cell_width(new)
    return tuple(segs)
