"""The search query language: words, "phrases", filters and negation.

A query is a string of whitespace-separated tokens:

- ``word`` — ranked by TF-IDF (any word may match: OR, ranked by cosine) and by
  fuzzy title/tag matching.  ``-word`` excludes memories containing the word.
- ``"exact phrase"`` — must appear in the title or body, case-insensitively,
  starting and ending at word boundaries (whitespace runs count as one
  space); an unclosed ``"queue dep`` (still being typed) matches any word
  that starts with its last word.  Its words also count for ranking.
  ``-"phrase"`` excludes.
- ``field:value`` filters; ``-field:value`` negates.  Values may be quoted
  (``source:"agent a"``); ``a,b`` means either; a trailing ``*`` is a prefix.

  =====================  ==================================================
  ``tag:x``              has the tag (case-insensitive, exact or ``x*``)
  ``type:x``/``kind:x``  the format's own type (``kind``)
  ``format:x``           format id contains x (``format:ocean``)
  ``vault:x``            vault name or path relative to the opened folder
  ``agent:x``            project-ocean agent (``shared`` for shared/), or
                         vault name
  ``health:x``           unified health (``stable``, ``active``, ``fading``,
                         ``expired``, ``archived``, ``tombstoned``, ``all``)
  ``status:x``           native status (``ttl_expired``, ``near_expiry``, ...)
                         or unified health
  ``source:x``           source contains x
  ``before:D``           created strictly before YYYY-MM-DD
  ``after:D``            created strictly after YYYY-MM-DD
  ``importance>0.5``     numeric compare: ``>``, ``>=``, ``<``, ``<=``, ``=``
  ``confidence>=0.8``    (``importance:>0.5`` works too)
  =====================  ==================================================

Different filters combine with AND (so do repeated ones: ``tag:a tag:b``).
An unknown ``key:`` or a bad value raises `QueryError` naming the token;
quote text that merely looks like a filter (``"todo: fix"``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

from ..decay import STATUS_HEALTH
from ..errors import MemlensError
from ..formats import FORMAT_IDS
from ..model import Health


class QueryError(MemlensError):
    """A query token could not be understood; `token` is the culprit."""

    def __init__(self, token: str, detail: str) -> None:
        self.token = token
        self.detail = detail
        super().__init__(f"bad query token {token!r}: {detail}")


#: Filter names as typed -> canonical field.
FIELD_ALIASES: dict[str, str] = {
    "tag": "tag",
    "tags": "tag",
    "type": "kind",
    "kind": "kind",
    "format": "format",
    "vault": "vault",
    "agent": "agent",
    "health": "health",
    "status": "status",
    "source": "source",
    "before": "before",
    "after": "after",
    "importance": "importance",
    "confidence": "confidence",
}

NUMERIC_FIELDS = frozenset({"importance", "confidence"})
DATE_FIELDS = frozenset({"before", "after"})
COMPARE_OPS = (">=", "<=", ">", "<", "=")

#: Health/status values meaning "no restriction; include expired/archived/tombstoned".
ANY_HEALTH = frozenset({"all", "any"})

#: Confidence words (observation/v1 comprehension) as numbers, for ranking and
#: for ``confidence`` comparisons (the brief's mapping).
CONFIDENCE_WORDS: dict[str, float] = {"high": 0.9, "medium": 0.6, "low": 0.3, "unknown": 0.5}

_HEALTH_VALUES = frozenset(h.value for h in Health)
_STATUS_VALUES = frozenset(STATUS_HEALTH) | _HEALTH_VALUES

_FILTER_RE = re.compile(
    r"^(?P<key>[A-Za-z_]+)(?P<op>:>=|:<=|:>|:<|:=|>=|<=|:|>|<|=)(?P<value>.*)$", re.S
)


@dataclass(frozen=True, slots=True)
class Filter:
    """One ``field:value`` (or ``field<op>number``) restriction."""

    field: str
    #: ``:`` for matching filters, else one of `COMPARE_OPS`.
    op: str
    #: Lower-cased alternatives (``tag:a,b`` -> ``("a", "b")``).
    values: tuple[str, ...] = ()
    number: float | None = None
    day: date | None = None
    negated: bool = False
    #: The token as typed (for messages and explain).
    token: str = ""


@dataclass(frozen=True, slots=True)
class Query:
    """A parsed query.  Build with `parse_query`."""

    text: str = ""
    #: Positive bare words, as typed (analysis into terms happens in the index).
    words: tuple[str, ...] = ()
    excluded_words: tuple[str, ...] = ()
    #: Lower-cased phrases.
    phrases: tuple[str, ...] = ()
    excluded_phrases: tuple[str, ...] = ()
    filters: tuple[Filter, ...] = field(default_factory=tuple)
    #: True when the text ends inside a bare word (search-as-you-type may
    #: treat that word as a prefix).
    trailing_word: bool = False
    #: True when the last phrase has no closing quote (its last word is a prefix).
    open_phrase: bool = False

    @property
    def has_text(self) -> bool:
        """True if anything ranks by text (words or phrases)."""
        return bool(self.words or self.phrases)

    @property
    def is_empty(self) -> bool:
        return not (
            self.words
            or self.excluded_words
            or self.phrases
            or self.excluded_phrases
            or self.filters
        )

    def with_filters(self, *extra: Filter) -> Query:
        """A copy with more filters (front ends add their own flags this way)."""
        return Query(
            text=self.text,
            words=self.words,
            excluded_words=self.excluded_words,
            phrases=self.phrases,
            excluded_phrases=self.excluded_phrases,
            filters=self.filters + tuple(extra),
            trailing_word=self.trailing_word,
            open_phrase=self.open_phrase,
        )


def _split_tokens(text: str) -> list[tuple[str, bool, bool]]:
    """Whitespace tokens, keeping quoted runs together.

    Returns (token, quoted_phrase, closed) triples; an unclosed quote runs to
    the end (while typing, ``"consent ru`` is already a phrase).
    """
    tokens: list[tuple[str, bool, bool]] = []
    i, n = 0, len(text)
    while i < n:
        if text[i].isspace():
            i += 1
            continue
        start = i
        neg = text[i] == "-"
        j = i + 1 if neg else i
        if j < n and text[j] == '"':
            end = text.find('"', j + 1)
            closed = end >= 0
            end = end if closed else n
            tokens.append(((("-" if neg else "") + text[j + 1 : end]), True, closed))
            i = end + 1
            continue
        # A bare token; a quote inside (``tag:"a b"``) runs to its closing quote.
        while i < n and not text[i].isspace():
            if text[i] == '"':
                end = text.find('"', i + 1)
                i = n if end < 0 else end + 1
            else:
                i += 1
        tokens.append((text[start:i], False, True))
    return tokens


def _unquote(value: str) -> str:
    value = value.strip()
    if value.startswith('"'):
        value = value[1:]
        if value.endswith('"'):
            value = value[:-1]
    return value


def _parse_filter(key: str, op: str, raw_value: str, negated: bool, token: str) -> Filter:
    name = FIELD_ALIASES.get(key.lower())
    if name is None:
        known = ", ".join(sorted({*FIELD_ALIASES}))
        raise QueryError(
            token,
            f"unknown filter {key + ':'!r} (known: {known}); "
            'quote text that only looks like a filter, e.g. "todo: fix"',
        )
    value = _unquote(raw_value)
    if op.startswith(":") and len(op) > 1:
        op = op[1:]  # importance:>0.5
    if not value:
        raise QueryError(token, f"filter {key + op!r} needs a value")
    if name in NUMERIC_FIELDS:
        if op == ":":
            op = "="
        low = value.lower()
        if name == "confidence" and low in CONFIDENCE_WORDS:
            return Filter(name, op, (low,), CONFIDENCE_WORDS[low], None, negated, token)
        try:
            number = float(value)
        except ValueError:
            raise QueryError(token, f"{key} needs a number, got {value!r}") from None
        return Filter(name, op, (value,), number, None, negated, token)
    if op != ":" and op != "=":
        raise QueryError(token, f"{key} takes {key}:value, not a comparison")
    if name in DATE_FIELDS:
        try:
            day = date.fromisoformat(value)
        except ValueError:
            raise QueryError(token, f"{key} needs a date YYYY-MM-DD, got {value!r}") from None
        return Filter(name, ":", (value,), None, day, negated, token)
    values = tuple(v.strip().lower() for v in value.split(",") if v.strip())
    if not values:
        raise QueryError(token, f"filter {key + ':'!r} needs a value")
    if name == "health":
        bad = [v for v in values if v not in _HEALTH_VALUES | ANY_HEALTH]
        if bad:
            allowed = ", ".join([*(h.value for h in Health), "all"])
            raise QueryError(token, f"unknown health {bad[0]!r} (one of {allowed})")
    elif name == "status":
        bad = [v for v in values if v not in _STATUS_VALUES | ANY_HEALTH]
        if bad:
            allowed = ", ".join(sorted(_STATUS_VALUES | {"all"}))
            raise QueryError(token, f"unknown status {bad[0]!r} (one of {allowed})")
    elif name == "format":
        bad = [v for v in values if not any(v.rstrip("*") in f for f in FORMAT_IDS)]
        if bad:
            raise QueryError(
                token, f"no format matches {bad[0]!r} (formats: {', '.join(FORMAT_IDS)})"
            )
    return Filter(name, ":", values, None, None, negated, token)


def parse_query(text: str) -> Query:
    """Parse a query string; `QueryError` names the first bad token."""
    words: list[str] = []
    excluded_words: list[str] = []
    phrases: list[str] = []
    excluded_phrases: list[str] = []
    filters: list[Filter] = []
    trailing_word = False
    open_phrase = False
    for token, quoted, closed in _split_tokens(text):
        negated = token.startswith("-")
        body = token[1:] if negated else token
        trailing_word = False
        if quoted:
            phrase = " ".join(body.lower().split())
            if phrase:
                (excluded_phrases if negated else phrases).append(phrase)
                open_phrase = not closed and not negated
            continue
        if not body:
            continue  # a lone "-" while typing
        m = _FILTER_RE.match(body)
        # "https://..." and "10:30" are words, not filters.
        if m and not (m.group("op") == ":" and m.group("value").startswith("//")):
            filters.append(
                _parse_filter(m.group("key"), m.group("op"), m.group("value"), negated, token)
            )
            continue
        if negated:
            excluded_words.append(body)
        else:
            words.append(body)
            trailing_word = True
    if text and text[-1].isspace():
        trailing_word = False
    return Query(
        text=text,
        words=tuple(words),
        excluded_words=tuple(excluded_words),
        phrases=tuple(phrases),
        excluded_phrases=tuple(excluded_phrases),
        filters=tuple(filters),
        trailing_word=trailing_word,
        open_phrase=open_phrase,
    )


def confidence_value(raw: object) -> tuple[float, str]:
    """Effective confidence for ranking and filters, and where it came from.

    Numbers are used as they are; the observation/v1 words map through
    `CONFIDENCE_WORDS`; a missing confidence counts as 1.0 as in the Project
    Ocean reference search (so unrated memories are not buried); anything
    else (an unknown word) counts as 0.5, like "unknown".
    """
    if raw is None:
        return 1.0, "missing"
    if isinstance(raw, bool):
        return 0.5, "unknown"
    if isinstance(raw, int | float):
        return float(raw), "number"
    if isinstance(raw, str):
        word = raw.strip().lower()
        if word in CONFIDENCE_WORDS:
            return CONFIDENCE_WORDS[word], "word"
        try:
            return float(word), "number"
        except ValueError:
            return 0.5, "unknown"
    return 0.5, "unknown"
