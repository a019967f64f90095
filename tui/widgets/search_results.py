"""Search hits, one drawn line each, and the "why it ranked" text of one hit.

The hits come from `memlens.core.search.index` (`SearchIndex.run` or `similar`);
this module only draws them.  Every piece of vault text (titles, ids, matched
words) goes through `safe_text`, so markup and escapes show literally.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.content import Content
from textual.message import Message

from memlens.core.formats import format_infos
from memlens.core.search.index import Hit

from ..safe_text import safe, safe_rich
from .explain_relevance import relevance_lines
from .line_list import LineList

#: Short format names for the narrow format column (the explanation shows the full id).
FORMAT_SHORT: dict[str, str] = {i.id: i.short_label or i.id for i in format_infos()}

#: (key, label, width) of the columns after the title, dropped from the end when narrow.
_COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("format", "format", 9),
    ("kind", "kind", 11),
    ("health", "health", 10),
)
_SCORE_WIDTH = 6
_TITLE_MIN = 16


def _layout(width: int) -> tuple[int, list[tuple[str, str, int]]]:
    """The title width and the fixed columns that fit in `width` cells."""
    cols = list(_COLUMNS)
    while cols and width - _SCORE_WIDTH - 1 - sum(w + 1 for _, _, w in cols) < _TITLE_MIN:
        cols.pop(0)
    title = max(4, width - _SCORE_WIDTH - 1 - sum(w + 1 for _, _, w in cols))
    return title, cols


def score_text(score: float) -> str:
    """A score in a fixed 6-cell column."""
    return f"{score:6.3f}" if score < 100 else f"{score:6.0f}"


class SearchResults(LineList):
    """Ranked hits (score, title, format, kind, health); posts `Highlighted` and `Selected`."""

    DEFAULT_CSS = """
    SearchResults > .search-results--dim { color: $text-muted; }
    SearchResults > .search-results--score { color: $accent; }
    SearchResults > .search-results--stable { color: $success; }
    SearchResults > .search-results--active { color: $primary; }
    SearchResults > .search-results--fading { color: $warning; }
    SearchResults > .search-results--expired { color: $error; }
    SearchResults > .search-results--archived { color: $text-muted; }
    SearchResults > .search-results--tombstoned { color: $text-disabled; }
    """

    COMPONENT_CLASSES = {
        "search-results--dim",
        "search-results--score",
        "search-results--stable",
        "search-results--active",
        "search-results--fading",
        "search-results--expired",
        "search-results--archived",
        "search-results--tombstoned",
    }

    empty_text = "type to search"

    class Highlighted(Message):
        """The cursor is on a hit."""

        def __init__(self, results: SearchResults, hit: Hit) -> None:
            super().__init__()
            self.results = results
            #: The highlighted hit.
            self.hit = hit

    class Selected(Message):
        """Enter or double click on a hit."""

        def __init__(self, results: SearchResults, hit: Hit) -> None:
            super().__init__()
            self.results = results
            #: The chosen hit.
            self.hit = hit

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        #: The hits shown, best first.
        self.hits: list[Hit] = []

    def set_hits(self, hits: list[Hit], empty_text: str, cursor: int = 0) -> None:
        """Show these hits (cursor on `cursor`); `empty_text` when there are none."""
        self.hits = hits
        self.empty_text = empty_text
        self.rows_changed(keep_cursor=cursor)

    def current(self) -> Hit | None:
        return self.at_cursor(self.hits)

    # ------------------------------------------------------------------ LineList
    def row_count(self) -> int:
        return len(self.hits)

    def render_header(self, width: int) -> Text:
        title_width, cols = _layout(width)
        text = Text(f"{'score':>{_SCORE_WIDTH}} ")
        text.append(f"{'title':<{title_width}}")
        for _, label, w in cols:
            text.append(f" {label:<{w}}")
        return text

    def render_row(self, index: int, width: int) -> Text:
        hit = self.hits[index]
        m = hit.memory
        title_width, cols = _layout(width)
        health = str(hit.explain.get("health", ""))
        text = Text(score_text(hit.score), style=self._style("search-results--score"))
        text.append(" ")
        title = safe_rich(m.title or m.id)
        title.truncate(title_width, overflow="ellipsis", pad=True)
        text.append_text(title)
        for key, _, w in cols:
            if key == "format":
                cell = safe_rich(FORMAT_SHORT.get(m.format, m.format), "")
                cell.stylize(self._style("search-results--dim"))
            elif key == "kind":
                cell = safe_rich(m.kind)
            else:
                cell = safe_rich(health)
                cell.stylize(self._style(f"search-results--{health}"))
            cell.truncate(w, overflow="ellipsis", pad=True)
            text.append(" ")
            text.append_text(cell)
        return text

    def on_highlight(self, index: int) -> None:
        self.post_message(self.Highlighted(self, self.hits[index]))

    def on_select(self, index: int) -> None:
        self.post_message(self.Selected(self, self.hits[index]))


# --------------------------------------------------------------------------- explain


def _num(value: Any, digits: int = 3) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return f"{value:.{digits}f}"


def explain_content(hit: Hit, vault: str, *, label: str = "") -> Content:
    """Why a hit ranked where it did, every part of the score, as literal text.

    Query hits show ``score = relevance × confidence × decay weight`` with
    each factor, the matched terms and their weights, and the fuzzy title/tag
    matches; "more like this" hits show the cosine and the shared terms.
    """
    m = hit.memory
    ex = hit.explain
    lines: list[Content] = []
    if label:
        lines.append(Content.styled(label, "$text-muted"))
    lines.append(safe(m.title or m.id, "bold"))
    lines.append(
        Content.assemble(
            safe(vault, "$text-muted"),
            (" · ", "$text-muted"),
            safe(m.format, "$text-muted"),
            (" · ", "$text-muted"),
            safe(m.kind, "$text-muted"),
        )
    )
    lines.append(Content.assemble(("id ", "$text-muted"), safe(m.id, "$text-muted")))
    lines.append(Content(""))
    method = ex.get("method")
    if method is not None:
        lines.extend(_similar_lines(hit, str(method)))
    elif ex.get("rank") == "relevance":
        lines.extend(relevance_lines(ex))
    else:
        lines.extend(_query_lines(ex))
    return Content("\n").join(lines)


def _heading(text: str) -> Content:
    return Content.styled(text, "bold $accent")


def _query_lines(ex: dict[str, Any]) -> list[Content]:
    score = ex.get("score", 0.0)
    relevance = ex.get("relevance", 0.0)
    conf = ex.get("confidence", 1.0)
    weight = ex.get("decay_weight", 1.0)
    lines = [
        _heading("score = relevance × confidence × decay weight"),
        Content.assemble(
            "  ",
            (_num(score), "bold"),
            f" = {_num(relevance)} × {_num(conf, 2)} × {_num(weight)}",
        ),
    ]
    if ex.get("filter_only"):
        lines.append(Content.styled("  no words: relevance 1 (filters only)", "$text-muted"))
    else:
        fw = ex.get("fuzzy_weight", 0.0)
        lines.append(_heading("relevance = cosine + fuzzy weight × fuzzy / 100"))
        lines.append(
            Content(
                f"  {_num(relevance)} = {_num(ex.get('cosine', 0.0))}"
                f" + {_num(fw, 2)} × {_num(ex.get('fuzzy', 0.0), 1)} / 100"
            )
        )
    lines.append(Content(""))
    lines.extend(_term_lines(ex))
    lines.append(Content(""))
    lines.extend(_weight_lines(ex, score, conf, weight))
    return lines


def _term_lines(ex: dict[str, Any]) -> list[Content]:
    """The matched terms and their contributions, then the fuzzy title/tag matches."""
    lines: list[Content] = []
    terms: list[dict[str, Any]] = list(ex.get("terms", []))
    lines.append(_heading(f"matched terms ({len(terms)})  query × doc = contribution"))
    if not terms:
        lines.append(Content.styled("  none", "$text-muted"))
    for t in terms[:12]:
        term = safe(str(t.get("term", ""))).truncate(16, ellipsis=True)
        lines.append(
            Content.assemble(
                "  ",
                term.pad_right(max(0, 16 - term.cell_length)),
                f" {_num(t.get('query_weight'))} × {_num(t.get('doc_weight'))}"
                f" = {_num(t.get('contribution'))}",
            )
        )
    if len(terms) > 12:
        lines.append(Content.styled(f"  … {len(terms) - 12} more", "$text-muted"))
    lines.append(Content.assemble(("  cosine ", "$text-muted"), _num(ex.get("cosine", 0.0))))
    matches: list[dict[str, Any]] = list(ex.get("fuzzy_matches", []))
    lines.append(_heading(f"fuzzy title/tag matches  score {_num(ex.get('fuzzy', 0.0), 1)}"))
    if not matches:
        lines.append(Content.styled("  none", "$text-muted"))
    for fm in matches:
        lines.append(
            Content.assemble(
                "  ",
                safe(str(fm.get("word", ""))),
                " → ",
                safe(str(fm.get("matched", ""))),
                f"  {_num(fm.get('score'), 0)}",
            )
        )
    return lines


def _weight_lines(ex: dict[str, Any], score: float, conf: float, weight: float) -> list[Content]:
    """Confidence, decay weight, the final score, and the phrases and filters applied."""
    lines: list[Content] = []
    lines.append(
        Content.assemble(
            ("confidence ", "bold"),
            _num(conf, 2),
            (f"  (from {ex.get('confidence_from', '?')})", "$text-muted"),
        )
    )
    lines.append(
        Content.assemble(
            ("decay weight ", "bold"),
            _num(weight),
            ("  status ", "$text-muted"),
            safe(str(ex.get("status", "")), "$text-muted"),
            (" · health ", "$text-muted"),
            safe(str(ex.get("health", "")), "$text-muted"),
        )
    )
    decay_score = ex.get("decay_score")
    if decay_score is not None:
        lines.append(Content.styled(f"  decay score {_num(decay_score)}", "$text-muted"))
    lines.append(Content.assemble(("final score ", "bold"), (_num(score), "bold $accent")))
    phrases = [str(p) for p in ex.get("phrases", [])]
    if phrases:
        lines.append(
            Content.assemble(
                ("phrases ", "$text-muted"), safe(" · ".join(f'"{p}"' for p in phrases))
            )
        )
    filters = [str(f) for f in ex.get("filters", [])]
    if filters:
        lines.append(Content.assemble(("filters ", "$text-muted"), safe(" ".join(filters))))
    return lines


def _similar_lines(hit: Hit, method: str) -> list[Content]:
    ex = hit.explain
    if method in ("vectors", "semantic"):
        lines = [
            _heading(f"more like this: {'stored vectors' if method == 'vectors' else 'meaning'}"),
            Content.assemble("  cosine ", (_num(ex.get("cosine", 0.0)), "bold")),
            Content.assemble(("  model ", "$text-muted"), safe(str(ex.get("model", "")))),
        ]
        return lines
    terms: list[dict[str, Any]] = list(ex.get("terms", []))
    lines = [
        _heading("more like this: TF-IDF cosine"),
        Content.assemble("  cosine ", (_num(ex.get("cosine", 0.0)), "bold")),
        _heading(f"shared terms (top {len(terms)})  contribution"),
    ]
    if not terms:
        lines.append(Content.styled("  none", "$text-muted"))
    for t in terms:
        term = safe(str(t.get("term", ""))).truncate(16, ellipsis=True)
        lines.append(
            Content.assemble(
                "  ",
                term.pad_right(max(0, 16 - term.cell_length)),
                f" {_num(t.get('contribution'))}",
            )
        )
    return lines
