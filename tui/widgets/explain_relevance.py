"""The explain lines of a hit ranked by relevance (BM25F): each query word's part.

`search_results.explain_content` draws the common head (title, vault, id)
and hands a relevance hit's explanation here.  Every word, term and matched
word is vault or query text, so it goes through `safe`.
"""

from __future__ import annotations

from typing import Any

from textual.content import Content

from ..safe_text import safe


def _num(value: Any, digits: int = 3) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "-" if value is None else str(value)
    return f"{value:.{digits}f}"


def _heading(text: str) -> Content:
    return Content.styled(text, "bold $accent")


def relevance_lines(ex: dict[str, Any]) -> list[Content]:
    """score = relevance, each query word's part, then the columns shown beside it."""
    lines = [
        _heading("score = relevance (BM25F)"),
        Content.assemble("  ", (_num(ex.get("score", 0.0)), "bold")),
    ]
    if ex.get("filter_only"):
        lines.append(Content.styled("  no words: relevance 1 (filters only)", "$text-muted"))
    sem = ex.get("semantic")
    if isinstance(sem, dict):
        lines.append(_heading("fused: 1/(60 + lexical rank) + 1/(60 + meaning rank)"))
        lines.append(
            Content.styled(
                f"  lexical rank {sem.get('lexical_rank', '-')} (BM25F {_num(ex.get('bm25'))})"
                f" · meaning rank {sem.get('semantic_rank', '-')}"
                f" (cosine {_num(sem.get('cosine'))})",
                "$text-muted",
            )
        )
    lines += _matched_word_lines(ex)
    ignored = [str(w) for w in ex.get("ignored_words", [])]
    if ignored:
        lines.append(
            Content.assemble(("  ignored (stopwords) ", "$text-muted"), safe(" ".join(ignored)))
        )
    lines.append(
        Content.styled(
            f"  doc length {_num(ex.get('doc_length'), 1)}"
            f" · mean {_num(ex.get('avg_doc_length'), 1)}",
            "$text-muted",
        )
    )
    lines.append(Content(""))
    lines += _shown_beside_lines(ex)
    return lines


def _matched_word_lines(ex: dict[str, Any]) -> list[Content]:
    """Each matched query word's part of the relevance: sim × idf × sat, and where it matched."""
    lines: list[Content] = []
    terms: list[dict[str, Any]] = list(ex.get("terms", []))
    lines.append(_heading(f"matched words ({len(terms)})  sim × idf × sat = part"))
    if not terms and not ex.get("filter_only"):
        lines.append(Content.styled("  none", "$text-muted"))
    for t in terms[:12]:
        word = safe(str(t.get("word", ""))).truncate(14, ellipsis=True)
        via = str(t.get("via", ""))
        lines.append(
            Content.assemble(
                "  ",
                word.pad_right(max(0, 14 - word.cell_length)),
                f" {_num(t.get('similarity'), 2)} × {_num(t.get('idf'))} × "
                f"{_num(t.get('saturation'))} = ",
                (_num(t.get("contribution")), "bold"),
            )
        )
        fields = ", ".join(f"{k} {v}" for k, v in dict(t.get("fields", {})).items())
        lines.append(
            Content.assemble(
                ("    ", ""),
                (f"{via} → ", "$text-muted"),
                safe(str(t.get("matched", "")), "$text-muted"),
                (f" (term {t.get('term', '')!s}; tf~ {_num(t.get('tf'), 1)}", "$text-muted"),
                (f"; in {fields})" if fields else ")", "$text-muted"),
            )
        )
    return lines


def _shown_beside_lines(ex: dict[str, Any]) -> list[Content]:
    """What the list shows beside relevance (not multiplied in), then the phrases and filters."""
    lines: list[Content] = []
    lines.append(_heading("shown, not multiplied in (o: rank by recall)"))
    lines.append(
        Content.assemble(
            ("confidence ", "bold"),
            _num(ex.get("confidence"), 2),
            (f"  (from {ex.get('confidence_from', '?')})", "$text-muted"),
        )
    )
    lines.append(
        Content.assemble(
            ("decay weight ", "bold"),
            _num(ex.get("decay_weight")),
            ("  status ", "$text-muted"),
            safe(str(ex.get("status", "")), "$text-muted"),
            (" · health ", "$text-muted"),
            safe(str(ex.get("health", "")), "$text-muted"),
        )
    )
    if ex.get("decay_score") is not None:
        lines.append(Content.styled(f"  decay score {_num(ex['decay_score'])}", "$text-muted"))
    lines.append(Content.assemble(("importance ", "bold"), _num(ex.get("importance"))))
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
