"""Dream Cycle (Total Recall) vaults: `observations.md` sections with dc comments.

Layout: `observations.md` is split on lines starting with `## `; each section
may carry one `<!-- dc:key=value ... -->` metadata comment as its first
non-blank line.  Archived observations live in `archive.jsonl` (one JSON
object per line) and, when Total Recall's own decay run archived them, in
`archived-observations.md`.

Decisions a reader would question (see DESIGN.md and expected.json `rules`):

* Ids derive from the heading text, never the position, so an unrelated edit
  does not renumber anything: `<slug>-<first 6 hex of sha1(title)>`, and a
  repeated title gets `-2`, `-3`, ... in file order.
* Decay is computed on the fly from `dc:date` and never compounds.  If a
  `dc:decayed=YYYY-MM-DD` field exists, `dc:importance` is the value as of that
  date and only the days since then are charged.
* Files are decoded line by line, strictly: a bad byte spoils only the section
  (or archive line) it sits in, and that item is reported, not guessed.
* `archive.jsonl` is append-only: restoring an entry never deletes its line.
  The restore appends a marker line `{"id": <entry id>, "restored": true, ...}`
  instead; a marker is not an entry, and it hides every earlier entry with
  that id (an entry appended after the marker is archived again).
* Rescans (live reload) keep the file's bytes and a table of its sections:
  only the sections a change touches are parsed again (`rescan_file`) and
  spliced into the previous result (`relink`); both equal a full scan.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import math
import operator
import os
import re
import sys
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any, ClassVar

from ...decay import STATUS_HEALTH, clamp01, importance_band
from ...model import (
    DecayInfo,
    FileScan,
    Health,
    LinkState,
    Memory,
    Problem,
    Reason,
    ScanResult,
)
from ...refs import PointerField
from ...safe_io import open_regular, read_regular
from ...text.dates import parse_date, parse_datetime
from ..adapter import FormatAdapter, FormatInfo, PromoteOption
from ..files import Listing, list_files
from ..linking import Changes, split_duplicates

OBSERVATIONS = "observations.md"
ARCHIVE_JSONL = "archive.jsonl"
ARCHIVED_MD = "archived-observations.md"
#: The files of a vault in scan order (ids are allocated in this order).
_FILE_ORDER: tuple[str, ...] = (OBSERVATIONS, ARCHIVED_MD, ARCHIVE_JSONL)

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
#: The reference decay run archives sections whose importance falls below this.
ARCHIVE_THRESHOLD = 3.0

#: dc keys the format (and memlens, for `decayed`) defines; others are extra.
KNOWN_KEYS: tuple[str, ...] = (
    "dc:type",
    "dc:importance",
    "dc:ttl",
    "dc:confidence",
    "dc:source",
    "dc:date",
    "dc:decayed",
)
REQUIRED_KEYS: tuple[str, ...] = ("dc:type", "dc:importance", "dc:date")

ARCHIVE_REQUIRED: tuple[str, ...] = ("id", "original_date", "archived_reason", "full_text")
ARCHIVE_KNOWN: tuple[str, ...] = (
    "id",
    "original_date",
    "impact",
    "type",
    "ttl_days",
    "importance",
    "archived_reason",
    "full_text",
)

_DC_TOKEN = re.compile(r"(?:^|(?<=\s))dc:([^\s=]+)=(\S*)")
_NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$")
_INTEGER = re.compile(r"^[+-]?\d+$")
_ISO_DATE_IN_TEXT = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
_AUTO_ARCHIVE_TITLE = re.compile(r"^auto-archived\b", re.IGNORECASE)
_WHOLE_LINE_DC_COMMENT = re.compile(r"^\s*<!--(.*?)-->\s*$")
_ASCII_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
#: A heading line's start is the byte after this (or the file's first byte).
_HEADING_BYTES = re.compile(rb"\n## ")
_BOM = b"\xef\xbb\xbf"
#: Bytes compared at a time when looking for what a rescan changed.
_CMP_CHUNK = 1 << 16

TITLE_MAX = 100
#: Longest TTL accepted (about 2,700 years); anything longer is surely a typo.
TTL_MAX = 1_000_000
SLUG_MAX = 48


# ---------------------------------------------------------------------------
# Sections
# ---------------------------------------------------------------------------


@dataclass(slots=True)
class Section:
    """One `## ` section of an observations file, located by 1-based lines.

    `start_line` is the heading line and `end_line` the last line before the
    next heading (or the end of the file).  `comment_line`..`comment_end_line`
    is the dc metadata comment when the section has one (usually one line, so
    a writer can rewrite just that line); `body_start_line` is the first line
    after the heading or comment.  `unclosed` marks a `<!-- dc:` comment that
    never closes before the section ends (malformed metadata).
    """

    index: int
    title: str
    start_line: int
    end_line: int
    comment_line: int | None = None
    comment_end_line: int | None = None
    #: The raw comment text, `<!--` to `-->` inclusive (None if untagged).
    comment: str | None = None
    #: dc keys as written (`dc:type`, ...) with string values, in order.
    fields: dict[str, str] = field(default_factory=dict)
    #: Keys that appeared more than once in the comment (first value kept).
    duplicate_keys: tuple[str, ...] = ()
    #: Section text after the heading/comment, leading and trailing blank
    #: lines dropped, otherwise exact.
    body: str = ""
    body_start_line: int = 0
    unclosed: bool = False
    #: True for the last section of the file (nothing follows it).
    last: bool = False

    @property
    def tagged(self) -> bool:
        return self.comment is not None and not self.unclosed


def split_lines(text: str) -> list[str]:
    """Lines of `text` as in the file: BOM dropped, `\\r\\n` accepted, 1:1 with file lines."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text:
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def parse_sections(text: str) -> list[Section]:
    """Every `## ` section of an observations file, in order (preamble excluded)."""
    return sections_from_lines(split_lines(text))


def is_heading(line: str) -> bool:
    """A section starts at a line beginning with `## ` (`###` does not split)."""
    return line.startswith("## ")


def sections_from_lines(lines: list[str]) -> list[Section]:
    """Sections from file lines (index i holds line i + 1)."""
    starts = [i for i, ln in enumerate(lines) if is_heading(ln)]
    sections: list[Section] = []
    for n, start in enumerate(starts):
        stop = starts[n + 1] if n + 1 < len(starts) else len(lines)  # exclusive
        sections.append(_parse_section(lines, n + 1, start, stop))
    if sections:
        sections[-1].last = True
    return sections


def _parse_section(lines: list[str], index: int, start: int, stop: int, base: int = 0) -> Section:
    """The section of `lines[start:stop]`; `base` is the file line index of `lines[0]`."""
    sec = Section(
        index=index,
        title=lines[start][3:].strip(),
        start_line=base + start + 1,
        end_line=base + stop,
        body_start_line=base + start + 2,
    )
    first = start + 1
    while first < stop and not lines[first].strip():
        first += 1
    if first >= stop or not lines[first].lstrip().startswith("<!--"):
        sec.body = _body(lines, start + 1, stop)
        return sec
    opening = lines[first].lstrip()
    close_line, close_col = _find_close(lines, first, stop, opening)
    if close_line is None:
        # Never closed: malformed only if it is a dc comment (`<!-- dc:...`);
        # any other unclosed HTML comment is just body text.
        if _DC_TOKEN.search(opening[4:]):
            sec.comment_line = base + first + 1
            sec.unclosed = True
            sec.fields, sec.duplicate_keys = _dc_fields(opening[4:])
        sec.body = _body(lines, start + 1, stop)
        return sec
    if close_line == first:
        raw = opening[: close_col + 3]
        inner = opening[4:close_col]
        after = opening[close_col + 3 :]
    else:
        parts = [opening, *lines[first + 1 : close_line], lines[close_line][: close_col + 3]]
        raw = "\n".join(parts)
        inner = raw[4:-3]
        after = lines[close_line][close_col + 3 :]
    fields, dups = _dc_fields(inner)
    if not fields:
        # An ordinary HTML comment, not dc metadata: the section is untagged.
        sec.body = _body(lines, start + 1, stop)
        return sec
    sec.comment = raw
    sec.comment_line = base + first + 1
    sec.comment_end_line = base + close_line + 1
    sec.fields = fields
    sec.duplicate_keys = dups
    sec.body_start_line = base + close_line + 2
    rest = _body(lines, close_line + 1, stop)
    after = after.strip()
    sec.body = f"{after}\n{rest}".strip("\n") if after else rest
    return sec


def _find_close(lines: list[str], first: int, stop: int, opening: str) -> tuple[int | None, int]:
    col = opening.find("-->", 4)
    if col >= 0:
        return first, col
    for i in range(first + 1, stop):
        col = lines[i].find("-->")
        if col >= 0:
            return i, col
    return None, -1


def _body(lines: list[str], begin: int, stop: int) -> str:
    return "\n".join(lines[begin:stop]).strip("\n")


def _dc_fields(inner: str) -> tuple[dict[str, str], tuple[str, ...]]:
    fields: dict[str, str] = {}
    dups: list[str] = []
    for m in _DC_TOKEN.finditer(inner):
        # Interned: thousands of sections repeat the same keys and short
        # values, and the scan cache then stores (and loads) each string once.
        key = sys.intern(f"dc:{m.group(1)}")
        if key in fields:
            if key not in dups:
                dups.append(key)
            continue
        value = m.group(2)
        fields[key] = sys.intern(value) if len(value) <= _INTERN_MAX else value
    return fields, tuple(dups)


#: Longest dc value interned (types, numbers, dates, short sources).
_INTERN_MAX = 40


# ---------------------------------------------------------------------------
# Ids, titles, classification
# ---------------------------------------------------------------------------


def slugify(title: str, max_len: int = SLUG_MAX) -> str:
    """Lowercase letters and digits (any script) joined by `-`; never path syntax."""
    if title.isascii():
        return _ASCII_NON_ALNUM.sub("-", title.lower()).strip("-")[:max_len].strip("-")
    out: list[str] = []
    dash = False
    for ch in unicodedata.normalize("NFC", title).lower():
        if unicodedata.category(ch)[0] in "LN":
            out.append(ch)
            dash = False
        elif out and not dash:
            out.append("-")
            dash = True
    return "".join(out)[:max_len].strip("-")


def section_base_id(title: str) -> str:
    """Stable id for a heading: `<slug>-<first 6 hex of sha1(title)>`."""
    digest = hashlib.sha1(title.encode("utf-8", "surrogatepass")).hexdigest()[:6]
    slug = slugify(title)
    return f"{slug}-{digest}" if slug else f"section-{digest}"


class IdAllocator:
    """Hands out `base`, `base-2`, `base-3`, ... in call order."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    @property
    def seen(self) -> dict[str, int]:
        """How often each base was taken so far (the allocator's own mapping)."""
        return self._seen

    def take(self, base: str) -> str:
        n = self._seen.get(base, 0) + 1
        self._seen[base] = n
        return base if n == 1 else f"{base}-{n}"


class _RecordingIds(IdAllocator):
    """An IdAllocator that remembers each (base, id given), for link()."""

    def __init__(self) -> None:
        super().__init__()
        self.taken: list[tuple[str, str]] = []

    def take(self, base: str) -> str:
        given = super().take(base)
        self.taken.append((base, given))
        return given


class _WindowIds(_RecordingIds):
    """Ids for sections read again mid-file, numbered as a full read numbers them.

    `before(base)` says how often a base was taken before the first section
    read (asked once per base, on its first take).
    """

    def __init__(self, before: Callable[[str], int]) -> None:
        super().__init__()
        self._before = before

    def take(self, base: str) -> str:
        if base not in self._seen:
            self._seen[base] = self._before(base)
        return super().take(base)


class _ReplayMismatch(Exception):
    """A section read again asked for other ids than it took before."""


class _Replay(_RecordingIds):
    """Gives a section read again (only moved) the ids it was given before."""

    def __init__(self, takes: tuple[tuple[str, str], ...]) -> None:
        super().__init__()
        self._plan = takes

    def take(self, base: str) -> str:
        n = len(self.taken)
        if n >= len(self._plan) or self._plan[n][0] != base:
            raise _ReplayMismatch(base)
        self.taken.append(self._plan[n])
        return self._plan[n][1]


def _id_number(base: str, given: str) -> int:
    """1 for `base`, n for `base-n`."""
    return 1 if given == base else int(given[len(base) + 1 :])


def _archive_title(full_text: str) -> str:
    """Title of an archive entry: the section heading when the entry keeps one.

    memlens archives a section whole (heading, comment, body) so restore can
    rebuild it byte for byte; its title is that heading without the `## `.
    """
    first = full_text.lstrip("\r\n").split("\n", 1)[0]
    if first.startswith("## "):
        return first[3:].strip()
    return short_title(full_text)


def short_title(text: str, limit: int = TITLE_MAX) -> str:
    """First line, then first sentence, of `text`, trimmed to `limit` characters."""
    first = next((ln.strip() for ln in text.split("\n") if ln.strip()), "")
    parts = _SENTENCE_END.split(first, maxsplit=1)
    first = parts[0] if parts else first
    if len(first) > limit:
        first = first[: limit - 1].rstrip() + "…"
    return first


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


# ---------------------------------------------------------------------------
# Validation of dc fields
# ---------------------------------------------------------------------------


class _Invalid(Exception):
    def __init__(self, reason: Reason, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def _clip(value: str, limit: int = 60) -> str:
    one = value.replace("\n", " ")
    return one if len(one) <= limit else one[: limit - 1] + "…"


def _number(key: str, value: str, low: float, high: float) -> float:
    if not _NUMBER.match(value):
        raise _Invalid(Reason.WRONG_TYPE, f"{key}={_clip(value)} is not a number")
    x = float(value)
    if not low <= x <= high:
        raise _Invalid(Reason.OUT_OF_RANGE, f"{key}={_clip(value)} is outside {low:g}-{high:g}")
    return x


def _date(key: str, value: str) -> date:
    d = parse_date(value)
    if d is None:
        raise _Invalid(Reason.WRONG_TYPE, f"{key}={_clip(value)} is not a YYYY-MM-DD date")
    return d


def _ttl(value: str) -> int | None:
    if value.strip().lower() == "never":
        return None
    if not _INTEGER.match(value):
        raise _Invalid(
            Reason.WRONG_TYPE, f"dc:ttl={_clip(value)} is not a whole number of days or 'never'"
        )
    digits = value.lstrip("+-").lstrip("0")
    if value.startswith("-") and digits:
        raise _Invalid(Reason.OUT_OF_RANGE, f"dc:ttl={_clip(value)} is negative")
    if len(digits) > len(str(TTL_MAX)) or int(value) > TTL_MAX:
        raise _Invalid(Reason.OUT_OF_RANGE, f"dc:ttl={_clip(value)} is more than {TTL_MAX} days")
    return int(value)


@dataclass(slots=True)
class _Meta:
    declared_type: str | None
    importance: float | None
    when: date | None
    ttl: int | None
    ttl_explicit: bool
    confidence: float | None
    decayed: date | None


def _check_fields(fields: dict[str, str], *, require: bool) -> _Meta:
    """Validate dc fields; raise _Invalid with the first fault found."""
    if require:
        missing = [k for k in REQUIRED_KEYS if not fields.get(k, "").strip()]
        if missing:
            raise _Invalid(
                Reason.MISSING_REQUIRED_FIELD, f"metadata comment lacks {', '.join(missing)}"
            )
    declared = fields.get("dc:type") or None
    imp = fields.get("dc:importance")
    importance = _number("dc:importance", imp, 0.0, 10.0) if imp is not None else None
    raw_date = fields.get("dc:date")
    when = _date("dc:date", raw_date) if raw_date is not None else None
    ttl_explicit = "dc:ttl" in fields
    ttl = _ttl(fields["dc:ttl"]) if ttl_explicit else TYPE_TTL[effective_type(declared)]
    conf = fields.get("dc:confidence")
    confidence = _number("dc:confidence", conf, 0.0, 1.0) if conf is not None else None
    dec = fields.get("dc:decayed")
    decayed = _date("dc:decayed", dec) if dec is not None else None
    return _Meta(declared, importance, when, ttl, ttl_explicit, confidence, decayed)


# ---------------------------------------------------------------------------
# Reading files
# ---------------------------------------------------------------------------


@dataclass(slots=True)
class _Lines:
    lines: list[str]
    #: 1-based numbers of lines that are not valid UTF-8, with a one-line detail.
    bad: dict[int, str]


def _decode_lines(data: bytes) -> _Lines:
    """Strict per-line UTF-8; undecodable lines are kept (replaced) and listed."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if not data:
        return _Lines([], {})
    raw = data.split(b"\n")
    if data.endswith(b"\n"):
        raw.pop()
    lines: list[str] = []
    bad: dict[int, str] = {}
    for n, chunk in enumerate(raw, 1):
        if chunk.endswith(b"\r"):
            chunk = chunk[:-1]
        try:
            lines.append(chunk.decode("utf-8"))
        except UnicodeDecodeError as exc:
            bad[n] = f"line {n} is not valid UTF-8 (byte 0x{chunk[exc.start]:02x})"
            lines.append(chunk.decode("utf-8", "replace"))
    return _Lines(lines, bad)


def _bad_detail(n: int, piece: bytes, at: int) -> str:
    return f"line {n} is not valid UTF-8 (byte 0x{piece[at]:02x})"


def _section_lines(chunk: bytes, base: int) -> tuple[list[str], tuple[int, str] | None]:
    """Lines of one section's bytes as `_decode_lines` reads them, and its first bad line.

    `base` is the file line index of the chunk's first line.  The chunk is
    decoded at once; only a chunk with a bad byte is decoded line by line.
    """
    try:
        text = chunk.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        lines = text.split("\n")
        if text.endswith("\n"):
            lines.pop()
        if "\r" in text:
            lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
        return lines, None
    raw = chunk.split(b"\n")
    if chunk.endswith(b"\n"):
        raw.pop()
    out: list[str] = []
    bad: tuple[int, str] | None = None
    for i, piece in enumerate(raw):
        if piece.endswith(b"\r"):
            piece = piece[:-1]
        try:
            out.append(piece.decode("utf-8"))
        except UnicodeDecodeError as exc:
            if bad is None:
                bad = (base + i + 1, _bad_detail(base + i + 1, piece, exc.start))
            out.append(piece.decode("utf-8", "replace"))
    return out, bad


def _bad_lines(chunk: bytes) -> list[tuple[int, str]]:
    """(1-based line, detail) of every undecodable line of a chunk starting the file."""
    try:
        chunk.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return []
    raw = chunk.split(b"\n")
    if chunk.endswith(b"\n"):
        raw.pop()
    out: list[tuple[int, str]] = []
    for n, piece in enumerate(raw, 1):
        if piece.endswith(b"\r"):
            piece = piece[:-1]
        try:
            piece.decode("utf-8")
        except UnicodeDecodeError as exc:
            out.append((n, _bad_detail(n, piece, exc.start)))
    return out


def _common_prefix(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix (compared in chunks, at C speed)."""
    n = min(len(a), len(b))
    i = 0
    while i < n:
        j = min(i + _CMP_CHUNK, n)
        if not a.startswith(b[i:j], i):
            lo, hi = i, j  # a[:lo] == b[:lo]; a[:hi] != b[:hi]
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if a.startswith(b[lo:mid], lo):
                    lo = mid
                else:
                    hi = mid
            return lo
        i = j
    return n


def _common_suffix(a: bytes, b: bytes, limit: int) -> int:
    """Length of the longest common suffix, at most `limit`."""
    la, lb = len(a), len(b)
    k = 0
    while k < limit:
        step = min(_CMP_CHUNK, limit - k)
        if not a.startswith(b[lb - k - step : lb - k], la - k - step):
            lo, hi = k, k + step  # the last lo bytes match, the last hi do not
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if a.startswith(b[lb - mid : lb - lo], la - mid):
                    lo = mid
                else:
                    hi = mid
            return lo
        k += step
    return limit


#: Native keys of a section memory that hold file lines (moved by a rescan).
_LINE_KEYS: tuple[str, ...] = (
    "start_line",
    "end_line",
    "comment_line",
    "comment_end_line",
    "body_start_line",
    "archive_heading_line",
)


#: Memory's fields in constructor order, read at once (`dataclasses.replace`
#: costs several times more, and a rescan may move thousands of memories).
_MEMORY_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Memory))
_MEMORY_VALUES = operator.attrgetter(*_MEMORY_FIELDS)
_INDEX_AT = _MEMORY_FIELDS.index("index")
_NATIVE_AT = _MEMORY_FIELDS.index("native")


def _shifted(m: Memory, lines: int, sections: int) -> Memory:
    """A copy of a section memory whose section moved by `lines` and `sections`."""
    values = list(_MEMORY_VALUES(m))
    if m.index is not None:
        values[_INDEX_AT] = m.index + sections
    if lines:
        native = dict(m.native)
        for key in _LINE_KEYS:
            value = native.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                native[key] = value + lines
        values[_NATIVE_AT] = native
    return Memory(*values)


@dataclass(slots=True)
class _Table:
    """What one read of a markdown file made of it, kept for the next read.

    Plain data (it is pickled with the FileScan).  Section `i` starts at
    byte `heads[i]` on 0-based line `lines[i]`, gave `nmem[i]` memories and
    `nprob[i]` problems (in the FileScan's lists, after `npre` preamble
    problems) and took the ids `takes[i]` ((base, id given) pairs).
    `counts` is how often each id base was taken in the file.  `token`
    names this read (a rescan's `_Delta` says which read it started from).
    """

    raw: bytes
    token: bytes = field(compare=False)
    heads: list[int] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    nmem: list[int] = field(default_factory=list)
    nprob: list[int] = field(default_factory=list)
    takes: list[tuple[tuple[str, str], ...]] = field(default_factory=list)
    npre: int = 0
    counts: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class _Window:
    """Sections read from part of a file (see `_parse_window`)."""

    heads: list[int] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    nmem: list[int] = field(default_factory=list)
    nprob: list[int] = field(default_factory=list)
    takes: list[tuple[tuple[str, str], ...]] = field(default_factory=list)
    memories: list[Memory] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    npre: int = 0


@dataclass(frozen=True, slots=True)
class _Delta:
    """What a rescan changed: all but the first `m_lo` and last `m_tail` memories
    (`p_lo`/`p_tail` problems) of the read named `base`.

    `bases`: the id bases of every section in the changed range; `changed`:
    those taken a different number of times than before.
    """

    base: bytes
    m_lo: int
    m_tail: int
    p_lo: int
    p_tail: int
    bases: frozenset[str]
    changed: frozenset[str]


@dataclass(slots=True)
class _Splice:
    """One changed file, for `relink`: what leaves and enters its stretch of the result."""

    m_lo: int
    m_old: int
    m_tail: int
    p_lo: int
    p_old: int
    p_tail: int
    gone: list[Memory]
    new: list[Memory]
    new_problems: list[Problem]
    bases: frozenset[str]
    changed: frozenset[str]


def _counts_of(fs: FileScan | None) -> dict[str, int]:
    tab = fs.data.get("table") if fs is not None else None
    return tab.counts if isinstance(tab, _Table) else {}


def _splice_plan(rel: str, before: FileScan | None, after: FileScan | None) -> _Splice:
    old_m = before.memories if before is not None else []
    old_p = before.problems if before is not None else []
    new_m = after.memories if after is not None else []
    new_p = after.problems if after is not None else []
    delta = after.data.get("delta") if after is not None else None
    tab = before.data.get("table") if before is not None else None
    if (
        isinstance(delta, _Delta)
        and isinstance(tab, _Table)
        and delta.base == tab.token
        and delta.m_lo + delta.m_tail <= min(len(old_m), len(new_m))
        and delta.p_lo + delta.p_tail <= min(len(old_p), len(new_p))
    ):
        m_lo, m_tail, p_lo, p_tail = delta.m_lo, delta.m_tail, delta.p_lo, delta.p_tail
        bases, changed = delta.bases, delta.changed
    else:
        m_lo = m_tail = p_lo = p_tail = 0
        was, now = _counts_of(before), _counts_of(after)
        bases = frozenset(was.keys() | now.keys())
        changed = frozenset(b for b in bases if was.get(b) != now.get(b))
    return _Splice(
        m_lo=m_lo,
        m_old=len(old_m),
        m_tail=m_tail,
        p_lo=p_lo,
        p_old=len(old_p),
        p_tail=p_tail,
        gone=old_m[m_lo : len(old_m) - m_tail],
        new=new_m[m_lo : len(new_m) - m_tail],
        new_problems=new_p[p_lo : len(new_p) - p_tail],
        bases=bases,
        changed=changed,
    )


def _read(path: Path) -> bytes | OSError | None:
    """File bytes; None if absent; the OSError if it exists but cannot be read."""
    try:
        if not path.is_file():
            return None
        return read_regular(path)
    except OSError as exc:
        return exc


# ---------------------------------------------------------------------------
# The adapter
# ---------------------------------------------------------------------------


@dataclass(slots=True)
class _DreamLinkState(LinkState):
    """What `link` leaves for `relink`: how many kept memories use each id.

    None when an id was used twice anywhere: such a vault always links in full.
    """

    ids: dict[str, int] | None


class DreamCycleAdapter(FormatAdapter):
    info: ClassVar[FormatInfo] = FormatInfo(
        id="dream-cycle",
        label="Dream Cycle",
        short_label="dream",
        promote_note="writes explicit dc: tags; a type only to one that lives longer",
        promote_options=(
            PromoteOption(
                "type", "", "a longer-lived type: fact preference goal habit event rule context"
            ),
            PromoteOption("importance", "", "0-10, only raises it", number=True),
        ),
        has_decay_run=True,
    )
    #: The spec defines no field that points at another observation.
    pointer_fields: ClassVar[tuple[PointerField, ...]] = ()
    #: The linked result (link_state included) pickles faithfully: the scan
    #: cache keeps it and an unchanged vault is not linked again.
    cache_linked: ClassVar[bool] = True

    def detect(self, root: Path) -> bool:
        obs = root / OBSERVATIONS
        try:
            if not obs.is_file():
                return False
            if (root / ARCHIVE_JSONL).is_file() or (root / ARCHIVED_MD).is_file():
                return True
            with os.fdopen(open_regular(obs), "rb") as fh:
                for raw in fh:
                    if raw.startswith(b"\xef\xbb\xbf"):
                        raw = raw[3:]
                    if raw.startswith(b"## "):
                        return True
        except OSError:
            return False
        return False

    # -- per-file scanning (see FormatAdapter) ------------------------------

    def files(self, root: Path) -> list[Path]:
        return [root / rel for rel in self.file_listing(root).names]

    def file_listing(self, root: Path) -> Listing:
        """The store files, leaving out (and reporting) links out of the vault."""
        return list_files(root, _FILE_ORDER)

    def owns(self, root: Path, rel: str) -> bool:
        return rel in _FILE_ORDER

    def scan_file(self, root: Path, path: Path, data: bytes | None = None) -> FileScan:
        rel = path.relative_to(root).as_posix()
        if rel not in _FILE_ORDER:
            return FileScan(rel)
        out = FileScan(rel, order=(_FILE_ORDER.index(rel),))
        if rel == ARCHIVE_JSONL:
            self._scan_archive(root, out.memories, out.problems, raw=data)
            return out
        raw = _read(root / rel) if data is None else data
        if raw is None:
            return out
        if isinstance(raw, OSError):
            out.problems.append(
                self._problem(
                    root, rel, Reason.UNREADABLE, f"cannot read the file: {raw.strerror or raw}"
                )
            )
            return out
        # Ids are allocated per file here; link() re-allocates across the
        # markdown files in order (a title repeated in both gets `-2`).
        ids = _RecordingIds()
        win = self._parse_window(root, rel, raw, 0, len(raw), 0, 0, ids, at_start=True, at_end=True)
        out.memories = win.memories
        out.problems = win.problems
        out.data["table"] = _Table(
            raw=raw,
            token=os.urandom(8),
            heads=win.heads,
            lines=win.lines,
            nmem=win.nmem,
            nprob=win.nprob,
            takes=win.takes,
            npre=win.npre,
            counts=dict(ids.seen),
        )
        return out

    def rescan_file(
        self, root: Path, path: Path, data: bytes, previous: FileScan
    ) -> FileScan | None:
        """`scan_file` again after a change, parsing only the sections it touched.

        The previous read keeps the file's bytes and a table of its sections
        (byte offset, line, what each became, the ids it took).  The changed
        byte span (common prefix and suffix of the old and new bytes) picks
        the sections to parse again; the others keep their objects, moved to
        their new lines and places when lines or sections were added or
        removed before them, renumbered when a repeated title changed count.
        The result equals `scan_file` of the new bytes.  None (read it whole)
        when the previous read has no table.
        """
        rel = path.relative_to(root).as_posix()
        tab = previous.data.get("table")
        if rel not in (OBSERVATIONS, ARCHIVED_MD) or previous.rel != rel:
            return None
        if not isinstance(tab, _Table):
            return None
        try:
            return self._rescan(root, rel, data, previous, tab)
        except _ReplayMismatch:
            return None

    def _rescan(
        self, root: Path, rel: str, data: bytes, previous: FileScan, tab: _Table
    ) -> FileScan | None:
        old = tab.raw
        n = len(tab.heads)
        mems, probs = previous.memories, previous.problems
        if len(mems) != sum(tab.nmem) or len(probs) != tab.npre + sum(tab.nprob):
            return None  # not the scan this table describes
        bom = 3 if old.startswith(_BOM) else 0
        if data.startswith(_BOM) != bool(bom):
            return None
        p = _common_prefix(old, data)
        s = _common_suffix(old, data, min(len(old), len(data)) - p)
        heads, lines = tab.heads, tab.lines
        # `a`..`z`: the old lines the change touches (z: the line holding
        # the first byte of the common suffix, conservatively).
        j = bisect.bisect_right(heads, p) - 1
        a = lines[j] + old.count(b"\n", heads[j], p) if j >= 0 else old.count(b"\n", 0, p)
        e_old, e_new = len(old) - s, len(data) - s
        old_nl = old.count(b"\n", p, e_old)
        dnl = data.count(b"\n", p, e_new) - old_nl
        z = a + old_nl
        # Sections lo..hi-1 are parsed again: a section depends on its lines
        # and on the next heading line; -1 stands for the preamble.
        lo = bisect.bisect_left(lines, a) - 1
        hi = bisect.bisect_right(lines, z)
        first = max(lo, 0)
        at_start = lo < 0
        dbytes = len(data) - len(old)

        old_count: dict[str, int] = {}
        first_number: dict[str, int] = {}
        for t in tab.takes[first:hi]:
            for b, given in t:
                old_count[b] = old_count.get(b, 0) + 1
                if b not in first_number:
                    first_number[b] = _id_number(b, given)
        counts = tab.counts
        prefix_takes = tab.takes[:first]

        def before(b: str) -> int:
            """How often `base` was taken before the window (as a full read counts)."""
            if b in first_number:
                return first_number[b] - 1
            if not counts.get(b):
                return 0
            return sum(1 for t in prefix_takes for bb, _g in t if bb == b)

        ids = _WindowIds(before)
        win = self._parse_window(
            root,
            rel,
            data,
            0 if at_start else heads[lo],
            heads[hi] + dbytes if hi < n else len(data),
            0 if at_start else lines[lo],
            first,
            ids,
            at_start=at_start,
            at_end=hi == n,
        )
        new_count: dict[str, int] = {}
        for t in win.takes:
            for b, _g in t:
                new_count[b] = new_count.get(b, 0) + 1
        changed = {
            b for b in old_count.keys() | new_count.keys() if old_count.get(b) != new_count.get(b)
        }
        # Repeated titles after the window count on from the window's takes.
        renumber: dict[str, int] = {}
        for b in changed:
            if counts.get(b, 0) - before(b) - old_count.get(b, 0) > 0:
                renumber[b] = before(b) + new_count.get(b, 0)
        dk = len(win.heads) - (hi - first)
        shift = dnl != 0 or dk != 0

        m_lo = sum(tab.nmem[:first])
        p_lo = 0 if at_start else tab.npre + sum(tab.nprob[:first])
        m_hi = m_lo + sum(tab.nmem[first:hi])
        p_hi = (tab.npre if at_start else p_lo) + sum(tab.nprob[first:hi])
        # Unchanged sections that an edit only re-read keep their objects.
        olds = {m.id: m for m in mems[m_lo:m_hi]}
        win_mems = [
            prev if (prev := olds.get(m.id)) is not None and prev == m else m for m in win.memories
        ]
        if not shift and not renumber:
            tail_mems, tail_probs = mems[m_hi:], probs[p_hi:]
            tail_takes, tail_nmem, tail_nprob = tab.takes[hi:], tab.nmem[hi:], tab.nprob[hi:]
            m_tail, p_tail = len(tail_mems), len(tail_probs)
        else:
            tail_mems, tail_probs = [], []
            tail_takes, tail_nmem, tail_nprob = [], [], []
            mp, pp = m_hi, p_hi
            for i in range(hi, n):
                sec_mems = mems[mp : mp + tab.nmem[i]]
                sec_probs = probs[pp : pp + tab.nprob[i]]
                mp += tab.nmem[i]
                pp += tab.nprob[i]
                t = tab.takes[i]
                rename: dict[str, str] = {}
                if renumber and any(b in renumber for b, _g in t):
                    fresh: list[tuple[str, str]] = []
                    for b, given in t:
                        if b in renumber:
                            renumber[b] += 1
                            now = b if renumber[b] == 1 else f"{b}-{renumber[b]}"
                            if now != given:
                                rename[given] = now
                            given = now
                        fresh.append((b, given))
                    t = tuple(fresh)
                if shift and sec_probs:
                    # Problems carry lines in their text: read the section again.
                    sub = self._parse_window(
                        root,
                        rel,
                        data,
                        heads[i] + dbytes,
                        heads[i + 1] + dbytes if i + 1 < n else len(data),
                        lines[i] + dnl,
                        i + dk,
                        _Replay(t),
                        at_start=False,
                        at_end=i + 1 == n,
                    )
                    if sub.takes != [t]:
                        return None
                    sec_mems, sec_probs = sub.memories, sub.problems
                else:
                    if rename:
                        sec_mems = [
                            replace(m, id=rename[m.id]) if m.id in rename else m for m in sec_mems
                        ]
                        sec_probs = [
                            replace(q, id=rename[q.id])
                            if q.id is not None and q.id in rename
                            else q
                            for q in sec_probs
                        ]
                    if shift:
                        sec_mems = [_shifted(m, dnl, dk) for m in sec_mems]
                tail_mems.extend(sec_mems)
                tail_probs.extend(sec_probs)
                tail_takes.append(t)
                tail_nmem.append(len(sec_mems))
                tail_nprob.append(len(sec_probs))
            m_tail = p_tail = 0
        new_counts = counts
        if changed:
            new_counts = dict(counts)
            for b in changed:
                left = counts.get(b, 0) - old_count.get(b, 0) + new_count.get(b, 0)
                if left:
                    new_counts[b] = left
                else:
                    new_counts.pop(b, None)
        out = FileScan(rel, order=previous.order)
        out.memories = mems[:m_lo] + win_mems + tail_mems
        out.problems = (probs[:p_lo] if not at_start else []) + win.problems + tail_probs
        out.data["table"] = _Table(
            raw=data,
            token=os.urandom(8),
            heads=heads[:first]
            + win.heads
            + ([h + dbytes for h in heads[hi:]] if dbytes else heads[hi:]),
            lines=lines[:first]
            + win.lines
            + ([x + dnl for x in lines[hi:]] if dnl else lines[hi:]),
            nmem=tab.nmem[:first] + win.nmem + tail_nmem,
            nprob=tab.nprob[:first] + win.nprob + tail_nprob,
            takes=prefix_takes + win.takes + tail_takes,
            npre=win.npre if at_start else tab.npre,
            counts=new_counts,
        )
        # Unchanged memories are the previous objects already (a hint for
        # the caller that matching them up again is not needed).
        out.kept_objects = True
        out.data["delta"] = _Delta(
            base=tab.token,
            m_lo=m_lo,
            m_tail=m_tail,
            p_lo=p_lo,
            p_tail=p_tail,
            bases=frozenset(
                old_count.keys()
                | new_count.keys()
                | ({b for t in tail_takes for b, _g in t} if m_tail == 0 else set())
            ),
            changed=frozenset(changed),
        )
        return out

    def _parse_window(
        self,
        root: Path,
        rel: str,
        data: bytes,
        start: int,
        end: int,
        line0: int,
        k0: int,
        ids: _RecordingIds,
        *,
        at_start: bool,
        at_end: bool,
    ) -> _Window:
        """Sections whose headings start in `data[start:end]` (whole lines).

        `start` is a heading line (file line index `line0`, section number
        `k0` counting from 0), or the start of the file (`at_start`: the
        preamble is read too).  `at_end`: the window runs to the end of the
        file.  Lines are decoded strictly, a section at a time (line by line
        only when a section holds a bad byte).
        """
        archived = rel == ARCHIVED_MD
        win = _Window()
        line = line0
        if at_start:
            pos = 3 if data.startswith(_BOM) else 0
            starts = [pos] if pos < end and data.startswith(b"## ", pos) else []
            starts.extend(m.start() + 1 for m in _HEADING_BYTES.finditer(data, pos, end))
            pre_end = starts[0] if starts else end
            if pre_end > pos:
                chunk = data[pos:pre_end]
                for n, detail in _bad_lines(chunk):
                    win.problems.append(
                        self._problem(root, rel, Reason.ENCODING, f"preamble {detail}", at_line=n)
                    )
                line = chunk.count(b"\n")
            win.npre = len(win.problems)
        else:
            starts = [start]
            starts.extend(m.start() + 1 for m in _HEADING_BYTES.finditer(data, start, end))
        out, problems = win.memories, win.problems
        count = len(starts)
        for idx, head in enumerate(starts):
            stop = starts[idx + 1] if idx + 1 < count else end
            sec_lines, bad = _section_lines(data[head:stop], line)
            taken, got, failed = len(ids.taken), len(out), len(problems)
            self._parse_one(
                root,
                rel,
                sec_lines,
                bad,
                k0 + idx,
                line,
                at_end and idx + 1 == count,
                archived,
                ids,
                out,
                problems,
            )
            win.heads.append(head)
            win.lines.append(line)
            win.nmem.append(len(out) - got)
            win.nprob.append(len(problems) - failed)
            win.takes.append(tuple(ids.taken[taken:]))
            line += len(sec_lines)
        return win

    def _parse_one(
        self,
        root: Path,
        rel: str,
        lines: list[str],
        bad: tuple[int, str] | None,
        k: int,
        base: int,
        last: bool,
        archived: bool,
        ids: IdAllocator,
        out: list[Memory],
        problems: list[Problem],
    ) -> None:
        """One section (`lines`, its heading first, at file line index `base`)."""
        title = lines[0][3:].strip()
        if archived and _AUTO_ARCHIVE_TITLE.match(title):
            sec = _parse_section(lines, k + 1, 0, len(lines), base)
            sec.last = last
            self._auto_archived(root, rel, sec, lines, ids, out, problems, base=base)
            return
        sid = ids.take(section_base_id(title))
        if bad is not None:
            problems.append(
                self._problem(
                    root,
                    rel,
                    Reason.ENCODING,
                    bad[1],
                    id=sid,
                    index=k + 1,
                    title=title,
                    at_line=bad[0],
                )
            )
            return
        sec = _parse_section(lines, k + 1, 0, len(lines), base)
        sec.last = last
        try:
            out.append(self._section_memory(root, rel, sec, sid, archived=archived))
        except _Invalid as inv:
            problems.append(
                self._problem(
                    root,
                    rel,
                    inv.reason,
                    inv.detail,
                    id=sid,
                    index=sec.index,
                    title=sec.title,
                    at_line=sec.comment_line or sec.start_line,
                )
            )

    def link(self, root: Path, scans: Mapping[str, FileScan]) -> ScanResult:
        result = ScanResult()
        ids = IdAllocator()
        found: list[Memory] = []
        for fs in scans.values():
            tab = fs.data.get("table")
            renamed: dict[str, str] = {}
            if isinstance(tab, _Table):
                if not ids.seen:
                    # Nothing taken before this file: its ids stand as read.
                    ids.seen.update(tab.counts)
                else:
                    for t in tab.takes:
                        for base, given in t:
                            final = ids.take(base)
                            if final != given:
                                renamed[given] = final
            if not renamed:
                found.extend(fs.memories)
                result.problems.extend(fs.problems)
                continue
            # Copies, not edits: the FileScan keeps its own per-file ids.
            found.extend(
                replace(m, id=renamed[m.id]) if m.id in renamed else m for m in fs.memories
            )
            result.problems.extend(
                replace(p, id=renamed[p.id]) if p.id is not None and p.id in renamed else p
                for p in fs.problems
            )
        keep, dups = split_duplicates(found, self.format_id, root, where=_where)
        result.memories = keep
        result.problems.extend(dups)
        # For relink: every id once (a duplicate anywhere means a full link).
        result.link_state = _DreamLinkState(
            None if dups else dict.fromkeys((m.id for m in keep), 1)
        )
        return result

    def relink(
        self,
        root: Path,
        scans: Mapping[str, FileScan],
        previous: ScanResult,
        changes: Changes,
    ) -> ScanResult | None:
        """`link` after `changes`, splicing only what changed into `previous`.

        Holds when no id is used twice before or after, at most one markdown
        file changed, and the titles it added or dropped are not in the
        other markdown file (whose ids would be renumbered).  None: link in
        full.  `previous` gives up its link state either way.
        """
        state = previous.link_state
        previous.link_state = None
        if not isinstance(state, _DreamLinkState) or state.ids is None:
            return None
        if sum(1 for rel in changes if rel != ARCHIVE_JSONL) > 1:
            return None
        plans: dict[str, _Splice] = {}
        for rel, (before, after) in changes.items():
            plan = _splice_plan(rel, before, after)
            if rel != ARCHIVE_JSONL:
                mine = _FILE_ORDER.index(rel)
                for other_rel, other in scans.items():
                    tab = other.data.get("table")
                    if other_rel == rel or not isinstance(tab, _Table):
                        continue
                    # An earlier file renames this window's ids if it shares a
                    # title; a later one is renamed if a title changed count.
                    names = plan.bases if _FILE_ORDER.index(other_rel) < mine else plan.changed
                    if any(b in tab.counts for b in names):
                        return None
            plans[rel] = plan
        seen = state.ids
        for plan in plans.values():
            for m in plan.gone:
                left = seen.get(m.id, 0) - 1
                if left > 0:
                    seen[m.id] = left
                else:
                    seen.pop(m.id, None)
        for plan in plans.values():
            for m in plan.new:
                seen[m.id] = seen.get(m.id, 0) + 1
        if any(seen[m.id] != 1 for plan in plans.values() for m in plan.new):
            return None
        memories: list[Memory] = []
        problems: list[Problem] = []
        m_at = p_at = 0
        old_memories, old_problems = previous.memories, previous.problems
        for rel in _FILE_ORDER:
            cut = plans.get(rel)
            if cut is None:
                fs = scans.get(rel)
                if fs is not None:
                    memories += old_memories[m_at : m_at + len(fs.memories)]
                    problems += old_problems[p_at : p_at + len(fs.problems)]
                    m_at += len(fs.memories)
                    p_at += len(fs.problems)
                continue
            memories += old_memories[m_at : m_at + cut.m_lo]
            memories += cut.new
            memories += old_memories[m_at + cut.m_old - cut.m_tail : m_at + cut.m_old]
            problems += old_problems[p_at : p_at + cut.p_lo]
            problems += cut.new_problems
            problems += old_problems[p_at + cut.p_old - cut.p_tail : p_at + cut.p_old]
            m_at += cut.m_old
            p_at += cut.p_old
        if m_at != len(old_memories) or p_at != len(old_problems):
            return None  # the previous result was not linked from these scans
        result = ScanResult(memories=memories, problems=problems)
        result.link_state = state
        return result

    def _problem(
        self,
        root: Path,
        rel: str,
        reason: Reason,
        detail: str,
        *,
        id: str | None = None,
        line: int | None = None,
        index: int | None = None,
        title: str | None = None,
        at_line: int | None = None,
    ) -> Problem:
        return Problem(
            format=self.format_id,
            vault_root=root,
            path=rel,
            reason=reason,
            detail=detail,
            id=id,
            line=line,
            index=index,
            title=title,
            at_line=at_line,
        )

    def _section_memory(
        self, root: Path, rel: str, sec: Section, sid: str, *, archived: bool
    ) -> Memory:
        if sec.unclosed:
            where = "the end of the file" if sec.last else "the next section"
            raise _Invalid(
                Reason.MALFORMED_METADATA,
                f"'<!--' metadata comment is never closed with '-->' before {where}",
            )
        native: dict[str, Any] = {
            "start_line": sec.start_line,
            "end_line": sec.end_line,
            "comment_line": sec.comment_line,
            "comment_end_line": sec.comment_end_line,
            "body_start_line": sec.body_start_line,
            "tagged": sec.tagged,
        }
        if sec.tagged:
            # Archived sections no longer decay, so the decay fields are not
            # required there (the reference archives on dc:importance alone).
            meta = _check_fields(sec.fields, require=not archived)
            kind = effective_type(meta.declared_type)
            content = classify(sec.title, sec.body)
            native.update(
                declared_type=meta.declared_type,
                base_importance=meta.importance,
                ttl=meta.ttl,
                ttl_explicit=meta.ttl_explicit,
                date=meta.when.isoformat() if meta.when else None,
                decayed=meta.decayed.isoformat() if meta.decayed else None,
                classified_type=None,
                classification_basis=_explicit_basis(kind, content),
                classification_signals=list(content.signals) if content.type != kind else [],
            )
            if sec.duplicate_keys:
                native["duplicate_keys"] = list(sec.duplicate_keys)
            fields: dict[str, Any] = dict(sec.fields)
            extra = {k: v for k, v in sec.fields.items() if k not in KNOWN_KEYS}
            importance = meta.importance
            confidence = meta.confidence
            created = meta.when
            source = sec.fields.get("dc:source")
            pinned = meta.ttl_explicit and meta.ttl is None
        else:
            content = classify(sec.title, sec.body)
            kind = FALLBACK_TYPE
            native.update(
                declared_type=None,
                base_importance=UNTAGGED_IMPORTANCE,
                ttl=TYPE_TTL[FALLBACK_TYPE],
                ttl_explicit=False,
                date=None,
                decayed=None,
                classified_type=content.type,
                classification_basis=content.basis,
                classification_signals=list(content.signals),
            )
            fields, extra = {}, {}
            importance, confidence, created, source = UNTAGGED_IMPORTANCE, None, None, None
            pinned = False
        native["type"] = kind
        return Memory(
            format=self.format_id,
            vault_root=root,
            id=sid,
            kind=kind,
            title=sec.title,
            body=sec.body,
            path=rel,
            importance=importance,
            confidence=confidence,
            created=created,
            source=source,
            index=sec.index,
            fields=fields,
            extra=extra,
            pinned=pinned,
            archived=archived,
            native=native,
        )

    def _auto_archived(
        self,
        root: Path,
        rel: str,
        sec: Section,
        lines: list[str],
        ids: IdAllocator,
        out: list[Memory],
        problems: list[Problem],
        *,
        base: int = 0,
    ) -> None:
        """A `## Auto-archived by decay (date)` block: one entry per comment line.

        The reference decay run appends only the metadata comment lines it
        archived under such a heading; each becomes one archived memory whose
        body is whatever plain lines follow it.
        """
        entries: list[tuple[int, str, list[str]]] = []
        for n in range(sec.start_line + 1, sec.end_line + 1):
            text = lines[n - 1 - base]
            m = _WHOLE_LINE_DC_COMMENT.match(text)
            if m and _DC_TOKEN.search(m.group(1)):
                entries.append((n, text.strip(), []))
            elif entries:
                entries[-1][2].append(text)
        when = _ISO_DATE_IN_TEXT.search(sec.title)
        for n, comment, body_lines in entries:
            fields, dups = _dc_fields(comment[4:-3])
            body = "\n".join(body_lines).strip("\n")
            typ = fields.get("dc:type") or "observation"
            title = short_title(body) or (
                f"{typ} observation of {fields.get('dc:date', 'unknown date')}"
            )
            digest = hashlib.sha1(comment.encode("utf-8", "surrogatepass")).hexdigest()[:6]
            sid = ids.take(f"{slugify(f'auto-archived-{typ}')}-{digest}")
            sub = Section(
                index=sec.index,
                title=title,
                start_line=n,
                end_line=n + len(body_lines),
                comment_line=n,
                comment_end_line=n,
                comment=comment,
                fields=fields,
                duplicate_keys=dups,
                body=body,
                body_start_line=n + 1,
            )
            try:
                memory = self._section_memory(root, rel, sub, sid, archived=True)
            except _Invalid as inv:
                problems.append(
                    self._problem(
                        root,
                        rel,
                        inv.reason,
                        inv.detail,
                        id=sid,
                        index=sec.index,
                        title=title,
                        at_line=n,
                    )
                )
                continue
            memory.native["auto_archived_on"] = when.group(0) if when else None
            memory.native["archive_heading_line"] = sec.start_line
            out.append(memory)

    def _scan_archive(
        self, root: Path, out: list[Memory], problems: list[Problem], raw: bytes | None = None
    ) -> None:
        rel = ARCHIVE_JSONL
        data = _read(root / rel) if raw is None else raw
        if data is None:
            return
        if isinstance(data, OSError):
            problems.append(
                self._problem(
                    root, rel, Reason.UNREADABLE, f"cannot read the file: {data.strerror or data}"
                )
            )
            return
        decoded = _decode_lines(data)
        restored = restore_markers(decoded.lines, decoded.bad)
        for n, text in enumerate(decoded.lines, 1):
            if n in decoded.bad:
                problems.append(
                    self._problem(root, rel, Reason.ENCODING, decoded.bad[n], line=n, at_line=n)
                )
                continue
            text = text.lstrip("\ufeff")
            if not text.strip():
                continue  # blank lines are ignored
            if restore_marker_id(text) is not None:
                continue  # a restore marker, not an entry
            eid = _peek_id(text) if restored else None
            if eid is not None and restored.get(eid, 0) > n:
                continue  # restored by a later marker: no longer archived
            try:
                out.append(self._archive_memory(root, rel, n, text))
            except _Invalid as inv:
                problems.append(
                    self._problem(
                        root,
                        rel,
                        inv.reason,
                        inv.detail,
                        id=_peek_id(text),
                        line=n,
                        at_line=n,
                    )
                )

    def _archive_memory(self, root: Path, rel: str, n: int, text: str) -> Memory:
        obj = _load_json_object(text)
        missing = [k for k in ARCHIVE_REQUIRED if obj.get(k) is None]
        if missing:
            raise _Invalid(
                Reason.MISSING_REQUIRED_FIELD, f"archive entry lacks {', '.join(missing)}"
            )
        eid = obj["id"]
        if not isinstance(eid, str) or not eid.strip():
            raise _Invalid(Reason.WRONG_TYPE, "id is not a non-empty string")
        for key in ("archived_reason", "full_text"):
            if not isinstance(obj[key], str):
                raise _Invalid(Reason.WRONG_TYPE, f"{key} is not a string")
        raw_date = obj["original_date"]
        created = parse_datetime(raw_date) if isinstance(raw_date, str) else None
        if created is None:
            raise _Invalid(
                Reason.WRONG_TYPE, f"original_date {_clip(repr(raw_date))} is not an ISO date"
            )
        declared = obj.get("type")
        if declared is not None and not isinstance(declared, str):
            raise _Invalid(Reason.WRONG_TYPE, "type is not a string")
        importance = obj.get("importance")
        if importance is not None:
            if isinstance(importance, bool) or not isinstance(importance, int | float):
                raise _Invalid(
                    Reason.WRONG_TYPE, f"importance {_clip(repr(importance))} is not a number"
                )
            if not 0.0 <= importance <= 10.0:
                raise _Invalid(Reason.OUT_OF_RANGE, f"importance {importance} is outside 0-10")
            importance = float(importance)
        ttl = obj.get("ttl_days")
        if ttl is not None and not (ttl == "never" or _is_nonneg_int(ttl)):
            raise _Invalid(
                Reason.WRONG_TYPE,
                f"ttl_days {_clip(repr(ttl))} is not a whole number of days or 'never'",
            )
        full_text: str = obj["full_text"]
        kind = effective_type(declared)
        return Memory(
            format=self.format_id,
            vault_root=root,
            id=eid,
            kind=kind,
            title=_archive_title(full_text) or eid,
            body=full_text,
            path=rel,
            importance=importance,
            created=created,
            line=n,
            fields=dict(obj),
            extra={k: v for k, v in obj.items() if k not in ARCHIVE_KNOWN},
            archived=True,
            native={
                "type": kind,
                "declared_type": declared,
                "base_importance": importance,
                "ttl": None if ttl == "never" else ttl,
                "date": created.isoformat(),
                "archived_reason": obj["archived_reason"],
                "impact": obj.get("impact"),
                "tagged": declared is not None,
            },
        )

    # -- decay --------------------------------------------------------------

    def decay_brief(self, memory: Memory, as_of: date) -> tuple[str, Health, float, float | None]:
        """(status, health, weight, score) of `decay`, without its explanation.

        What a search index needs for every section; `decay` takes the same
        numbers from the same `_decay_numbers` (a test holds them equal).
        """
        if memory.archived:
            return "archived", Health.ARCHIVED, 0.0, None
        n = _decay_numbers(memory, as_of)
        if n is None:
            return "undated", STATUS_HEALTH["undated"], 1.0, None
        return n.status, n.health, n.weight, None

    def decay(self, memory: Memory, as_of: date, *, explain: bool = True) -> DecayInfo:
        native = memory.native
        if memory.archived:
            info = _archived_decay(memory)
            return info if explain else replace(info, why="")
        base = _float(native.get("base_importance"), UNTAGGED_IMPORTANCE)
        ttl = native.get("ttl") if isinstance(native.get("ttl"), int) else None
        n = _decay_numbers(memory, as_of)
        if n is None:
            return DecayInfo(
                status="undated",
                health=STATUS_HEALTH["undated"],
                strength=0.5,
                weight=1.0,
                current_importance=base,
                importance_band=importance_band(base),
                ttl_days=ttl,
                why=(
                    "No <!-- dc:... --> comment: Phase 1 backward compatibility gives "
                    f"type={memory.kind}, ttl_days={ttl}, importance={base}. There is no "
                    "dc:importance/dc:date, so the decay function skips it: importance stays "
                    f"{base} and no age or TTL expiry can be computed."
                    if explain
                    else ""
                ),
            )
        kind = memory.kind
        declared = native.get("declared_type")
        start, rate, raw_days, days = n.start, n.rate, n.raw_days, n.days
        decayed, charged, current, expired = n.decayed, n.charged, n.current, n.expired
        raw_value = round(base - rate * charged, 2)
        band = importance_band(current)
        status, health = n.status, n.health
        reasons: list[str] = []
        if expired:
            reasons.append(f"{kind} TTL expired ({ttl} days)")
        if current < ARCHIVE_THRESHOLD:
            reasons.append(f"importance below {ARCHIVE_THRESHOLD} (now {current})")
        numbers = DecayInfo(
            status=status,
            health=health,
            strength=clamp01(current / 10.0),
            weight=n.weight,
            current_importance=current,
            importance_band=band,
            days_elapsed=days,
            expires_on=_plus_days(start, ttl + 1) if ttl is not None else None,
            ttl_days=ttl,
            archive_reasons=tuple(reasons),
        )
        if not explain:
            return numbers

        # The arithmetic, in the words of expected.json's `why`.
        head = f"dc:type={declared}"
        if effective_type(declared) == FALLBACK_TYPE and str(declared).strip().lower() != "fact":
            if native.get("ttl_explicit"):
                head += (
                    f" (unknown type: falls back to the fact rate {DECAY_RATE[FALLBACK_TYPE]}"
                    f"/day; dc:ttl given)"
                )
            else:
                head += (
                    f" (unknown type: falls back to the fact rate {DECAY_RATE[FALLBACK_TYPE]}"
                    f"/day and fact TTL {TYPE_TTL[FALLBACK_TYPE]} days)"
                )
        age = f"days_elapsed = {as_of.isoformat()} − {start.isoformat()} = {raw_days}"
        if raw_days < 0:
            age += " → future date, clamped to 0 (no decay before the observation date)"
        if decayed is not None:
            age += (
                f"; dc:importance is as of dc:decayed={decayed.isoformat()}, "
                f"so {charged} days are charged"
            )
        formula = (
            f"importance = max(0, {base!r} − {rate!r} × {charged}) = max(0, {raw_value!r}) "
            f"= {current!r} (band {band})"
        )
        if ttl is None:
            tail = "ttl=never → never expires by age."
        elif expired:
            tail = f"ttl={ttl} days; {days} > {ttl} → TTL expired (archive candidate)."
        else:
            tail = f"ttl={ttl} days; {days} ≤ {ttl} → within TTL."
        if current < ARCHIVE_THRESHOLD:
            tail += f" Importance {current!r} < {ARCHIVE_THRESHOLD} → archive candidate."
        return replace(numbers, why=f"{head}; {age}; {formula}; {tail}")


# ---------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------


def _plus_days(d: date, days: int) -> date | None:
    try:
        return d + timedelta(days=days)
    except OverflowError:
        return None  # past year 9999: no date to show


def _where(m: Memory) -> str:
    if m.line is not None:
        return f"{m.path}:{m.line}"
    if m.index is not None:
        return f"{m.path} section {m.index}"
    return m.path


def _explicit_basis(kind: str, content: Classification) -> str:
    if content.basis == "default" or content.type == kind:
        return "explicit tag"
    what = "keyword" if content.basis == "keyword" else "heuristic"
    return f"explicit tag wins (content would match a {content.type} {what})"


def _load_json_object(text: str) -> dict[str, Any]:
    def no_constants(name: str) -> Any:
        raise ValueError(f"{name} is not valid JSON")

    try:
        obj = json.loads(text, parse_constant=no_constants)
    except (ValueError, RecursionError) as exc:
        msg = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc) or "too deeply nested"
        raise _Invalid(Reason.MALFORMED_JSON, f"not valid JSON: {_clip(msg)}") from None
    if not isinstance(obj, dict):
        raise _Invalid(
            Reason.MALFORMED_JSON, f"line holds a JSON {type(obj).__name__}, not an object"
        )
    return obj


def _peek_id(text: str) -> str | None:
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if isinstance(obj, dict) and isinstance(obj.get("id"), str):
        return str(obj["id"])
    return None


def restore_marker_id(text: str) -> str | None:
    """The entry id if this archive.jsonl line is a restore marker, else None.

    A marker is a JSON object whose `restored` is `true` and whose `id` is a
    non-empty string (memlens writes `restored_on` and `section_id` too).
    """
    if '"restored"' not in text:
        return None
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict) or obj.get("restored") is not True:
        return None
    eid = obj.get("id")
    return eid if isinstance(eid, str) and eid.strip() else None


def restore_markers(lines: list[str], bad: dict[int, str] | None = None) -> dict[str, int]:
    """Entry id -> 1-based line of its last restore marker in archive.jsonl lines."""
    out: dict[str, int] = {}
    for n, text in enumerate(lines, 1):
        if bad and n in bad:
            continue
        eid = restore_marker_id(text.lstrip("\ufeff"))
        if eid is not None:
            out[eid] = n
    return out


def _is_nonneg_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def _float(x: object, default: float) -> float:
    if isinstance(x, int | float) and not isinstance(x, bool):
        return float(x)
    return default


@dataclass(frozen=True, slots=True)
class _Numbers:
    """The arithmetic of one dated section's decay (see `_decay_numbers`)."""

    start: date
    rate: float
    raw_days: int
    days: int
    decayed: date | None
    charged: int
    current: float
    expired: bool
    status: str
    health: Health
    weight: float


def _decay_numbers(memory: Memory, as_of: date) -> _Numbers | None:
    """Days, charged days, current importance, status of a live section; None if undated."""
    native = memory.native
    start = parse_date(native.get("date"))
    if start is None:
        return None
    base = _float(native.get("base_importance"), UNTAGGED_IMPORTANCE)
    ttl = native.get("ttl") if isinstance(native.get("ttl"), int) else None
    rate = DECAY_RATE.get(memory.kind, DECAY_RATE[FALLBACK_TYPE])
    raw_days = (as_of - start).days
    days = max(0, raw_days)
    decayed = parse_date(native.get("decayed"))
    charged = max(0, (as_of - (decayed if decayed is not None else start)).days)
    current = round(max(0.0, min(10.0, base - rate * charged)), 2)
    expired = ttl is not None and days > ttl
    status = "ttl_expired" if expired else "active"
    health = STATUS_HEALTH[status]
    if status == "active" and current < ARCHIVE_THRESHOLD:
        health = Health.FADING
    weight = clamp01(current / base) if base > 0 else 1.0
    return _Numbers(
        start, rate, raw_days, days, decayed, charged, current, expired, status, health, weight
    )


def _archived_decay(memory: Memory) -> DecayInfo:
    imp = memory.importance
    where = f"{memory.path}:{memory.line}" if memory.line else f"{memory.path}"
    reason = memory.native.get("archived_reason")
    why = f"Archived in {where}"
    if reason:
        why += f" (archived_reason: {reason})"
    why += "; archived entries do not decay."
    return DecayInfo(
        status="archived",
        health=Health.ARCHIVED,
        strength=0.0,
        weight=0.0,
        current_importance=imp,
        importance_band=importance_band(imp) if imp is not None else None,
        ttl_days=memory.native.get("ttl") if isinstance(memory.native.get("ttl"), int) else None,
        why=why,
    )


__all__ = [
    "ARCHIVED_MD",
    "ARCHIVE_JSONL",
    "DECAY_RATE",
    "OBSERVATIONS",
    "TYPE_TTL",
    "Classification",
    "DreamCycleAdapter",
    "IdAllocator",
    "Section",
    "classify",
    "effective_type",
    "parse_sections",
    "restore_marker_id",
    "restore_markers",
    "section_base_id",
    "slugify",
    "split_lines",
]
