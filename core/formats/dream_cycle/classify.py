"""The seven observation types (TTL, decay rate) and the spec's content rules that
suggest a type for an untagged observation.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

#: The seven types: TTL in days (None = never) and daily importance decay.
TYPE_TTL: dict[str, int | None] = {
    "fact": 90,
    "preference": 180,
    "goal": 365,
    "habit": 365,
    "event": 14,
    "rule": None,
    "context": 30,
}
DECAY_RATE: dict[str, float] = {
    "event": 0.5,
    "fact": 0.1,
    "preference": 0.02,
    "context": 0.1,
    "rule": 0.0,
    "habit": 0.0,
    "goal": 0.0,
}
#: Unknown types fall back to the fact rate and TTL.
FALLBACK_TYPE = "fact"
#: Untagged (Phase 1) observations.
UNTAGGED_IMPORTANCE = 5.0

_ISO_DATE_IN_TEXT = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Classification:
    """What the spec's classification rules suggest for an observation's content."""

    type: str
    basis: str  # "keyword", "heuristic" or "default"
    signals: tuple[str, ...]


#: Spec order of the content rules (used to break ties after the TTL rule).
_CLASS_ORDER: tuple[str, ...] = ("rule", "goal", "habit", "event", "preference", "context")
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
#: (type, signal label, stem, pattern).  A label of None reports the matched
#: text; the stem is a lowercase substring every match contains (a cheap filter:
#: most sections hold few of the keywords).
#: Habit phrases come first so that, at the same position, "always uses" wins
#: over the rule keyword "always" (a longer phrase hides a shorter one).
_KEYWORDS: tuple[tuple[str, str | None, str, str], ...] = (
    ("habit", "every day", "every", r"\bevery ?day\b"),
    (
        "habit",
        None,
        "every ",
        rf"\bevery (?:morning|evening|night|week|weekday|weekend|month|{_WEEKDAYS})s?\b",
    ),
    ("habit", "always uses", "always use", r"\balways use[sd]?\b"),
    ("habit", "consistently", "consistently", r"\bconsistently\b"),
    ("rule", "rule", "rule", r"\brules?\b"),
    ("rule", "never", "never", r"\bnever\b"),
    ("rule", "always", "always", r"\balways\b"),
    ("rule", "must", "must", r"\bmust\b"),
    ("rule", "hard constraint", "constraint", r"\bhard[- ]constraints?\b"),
    ("rule", "policy", "polic", r"\bpolic(?:y|ies)\b"),
    ("goal", "goal", "goal", r"\bgoals?\b"),
    ("goal", "target", "target", r"\btargets?\b"),
    ("goal", "milestone", "milestone", r"\bmilestones?\b"),
    ("goal", "working toward", "working toward", r"\bworking towards?\b"),
    ("goal", "plan to", "plan", r"\bplan(?:s|ning)? to\b"),
    ("preference", "prefers", "prefer", r"\bprefer(?:s|red)?\b"),
    ("preference", "chosen", "cho", r"\bcho(?:sen|se)\b"),
    ("preference", "decided", "decided", r"\bdecided\b"),
    ("context", "currently", "currently", r"\bcurrently\b"),
    ("context", "in progress", "progress", r"\bin[- ]progress\b"),
    ("context", "temporary", "temporar", r"\btemporar(?:y|ily)\b"),
    ("context", "for now", "for now", r"\bfor now\b"),
    ("context", "at the moment", "at the moment", r"\bat the moment\b"),
    ("context", "right now", "right now", r"\bright now\b"),
    ("context", "for the time being", "for the time being", r"\bfor the time being\b"),
    ("context", "ongoing", "ongoing", r"\bongoing\b"),
)
_KEYWORD_RES: tuple[tuple[str, str | None, str, re.Pattern[str]], ...] = tuple(
    (t, label, stem, re.compile(p, re.IGNORECASE)) for t, label, stem, p in _KEYWORDS
)
#: Content rules that are judgements about the text rather than spec keywords.
_HEURISTIC_TYPES = frozenset({"event", "context"})
_SUMMARY_WORDS = re.compile(r"\b(?:daily|summary|recap|digest|log|journal)\b", re.IGNORECASE)


def _ttl_rank(t: str) -> float:
    ttl = TYPE_TTL[t]
    return math.inf if ttl is None else float(ttl)


def classify(title: str, body: str) -> Classification:
    """The spec's content rules for an untagged observation.

    Every type whose signals appear is a candidate; when several do, the
    ambiguity rule picks the longest TTL (ties in the spec's rule order).
    A longer phrase hides a shorter one inside it ("always uses" is a habit
    signal, not the rule keyword "always").  Quoted HTML comments are not
    content.
    """
    text = f"{title}\n{body}"
    if "<!--" in text:
        text = _HTML_COMMENT.sub(" ", text)
    lowered = text.lower()
    hits: list[tuple[int, int, int]] = []  # (start, -length, keyword number)
    for n, (_t, _label, stem, pat) in enumerate(_KEYWORD_RES):
        if stem in lowered:
            hits.extend((m.start(), m.start() - m.end(), n) for m in pat.finditer(text))
    hits.sort()
    signals: dict[str, list[str]] = {}
    reach = -1
    for start, neg_len, n in hits:
        if start < reach:
            continue  # inside a longer phrase already counted
        reach = start - neg_len
        t, label, _stem, _pat = _KEYWORD_RES[n]
        found = signals.setdefault(t, [])
        word = label or text[start:reach].lower()
        if word not in found:
            found.append(word)
    if _ISO_DATE_IN_TEXT.search(title):
        signals.setdefault("event", []).append(
            "dated daily summary" if _SUMMARY_WORDS.search(title) else "one-off dated entry"
        )
    if not signals:
        return Classification(FALLBACK_TYPE, "default", ())
    best = max(signals, key=lambda t: (_ttl_rank(t), -_CLASS_ORDER.index(t)))
    basis = "heuristic" if best in _HEURISTIC_TYPES else "keyword"
    return Classification(best, basis, tuple(signals[best]))


def effective_type(declared: str | None) -> str:
    """One of the seven types: the declared one (case-insensitive) or `fact`."""
    if declared is None:
        return FALLBACK_TYPE
    t = declared.strip().lower()
    return t if t in TYPE_TTL else FALLBACK_TYPE


def _explicit_basis(kind: str, content: Classification) -> str:
    if content.basis == "default" or content.type == kind:
        return "explicit tag"
    what = "keyword" if content.basis == "keyword" else "heuristic"
    return f"explicit tag wins (content would match a {content.type} {what})"
