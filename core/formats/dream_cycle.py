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
"""

from __future__ import annotations

import bisect
import hashlib
import json
import math
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any, ClassVar

from ..dates import parse_date, parse_datetime
from ..decay import STATUS_HEALTH, clamp01, importance_band
from ..model import DecayInfo, FileScan, Health, Memory, Problem, Reason, ScanResult
from .base import scan_by_files, split_duplicates

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


def _parse_section(lines: list[str], index: int, start: int, stop: int) -> Section:
    sec = Section(
        index=index,
        title=lines[start][3:].strip(),
        start_line=start + 1,
        end_line=stop,
        body_start_line=start + 2,
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
            sec.comment_line = first + 1
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
    sec.comment_line = first + 1
    sec.comment_end_line = close_line + 1
    sec.fields = fields
    sec.duplicate_keys = dups
    sec.body_start_line = close_line + 2
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
        key = f"dc:{m.group(1)}"
        if key in fields:
            if key not in dups:
                dups.append(key)
            continue
        fields[key] = m.group(2)
    return fields, tuple(dups)


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

    def take(self, base: str) -> str:
        n = self._seen.get(base, 0) + 1
        self._seen[base] = n
        return base if n == 1 else f"{base}-{n}"


#: What one section became: (id base, id given, memories, problems).
_SectionScan = tuple[str, str, list[Memory], list[Problem]]


class _RecordingIds(IdAllocator):
    """An IdAllocator that remembers each (base, id given), for link()."""

    def __init__(self) -> None:
        super().__init__()
        self.taken: list[tuple[str, str]] = []

    def take(self, base: str) -> str:
        given = super().take(base)
        self.taken.append((base, given))
        return given


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
    #: The keys of `bad`, ascending (filled in file order).
    bad_lines: list[int] = field(default_factory=list)

    def first_bad(self, first: int, last: int) -> int | None:
        """The first bad line number in `first..last`, if any."""
        nums = self.bad_lines
        i = bisect.bisect_left(nums, first)
        return nums[i] if i < len(nums) and nums[i] <= last else None


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
    return _Lines(lines, bad, list(bad))


def _read(path: Path) -> bytes | OSError | None:
    """File bytes; None if absent; the OSError if it exists but cannot be read."""
    try:
        if not path.is_file():
            return None
        return path.read_bytes()
    except OSError as exc:
        return exc


# ---------------------------------------------------------------------------
# The adapter
# ---------------------------------------------------------------------------


class DreamCycleAdapter:
    format_id: ClassVar[str] = "dream-cycle"
    label: ClassVar[str] = "Dream Cycle"

    def detect(self, root: Path) -> bool:
        obs = root / OBSERVATIONS
        try:
            if not obs.is_file():
                return False
            if (root / ARCHIVE_JSONL).is_file() or (root / ARCHIVED_MD).is_file():
                return True
            with obs.open("rb") as fh:
                for raw in fh:
                    if raw.startswith(b"\xef\xbb\xbf"):
                        raw = raw[3:]
                    if raw.startswith(b"## "):
                        return True
        except OSError:
            return False
        return False

    # -- scan ---------------------------------------------------------------

    def scan(self, root: Path) -> ScanResult:
        return scan_by_files(self, root)

    # -- per-file scanning (see FormatAdapter) ------------------------------

    def files(self, root: Path) -> list[Path]:
        return [root / rel for rel in _FILE_ORDER if (root / rel).is_file()]

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
        return self._markdown_scan(root, rel, out, data, None)

    def rescan_file(
        self, root: Path, path: Path, data: bytes, previous: FileScan
    ) -> FileScan | None:
        """`scan_file` again, reusing what the previous read made of unchanged sections.

        A 20k-section observations.md is re-read whole when one section
        changes; sections whose text and place are the same keep their
        objects (and skip parsing).
        """
        rel = path.relative_to(root).as_posix()
        memo = previous.data.get("sections")
        if rel not in (OBSERVATIONS, ARCHIVED_MD) or previous.rel != rel or not memo:
            return None
        out = FileScan(rel, order=(_FILE_ORDER.index(rel),))
        return self._markdown_scan(root, rel, out, data, memo)

    def _markdown_scan(
        self,
        root: Path,
        rel: str,
        out: FileScan,
        data: bytes | None,
        memo: Mapping[bytes, _SectionScan] | None,
    ) -> FileScan:
        # Ids are allocated per file here; link() re-allocates across the
        # markdown files in order (a title repeated in both gets `-2`).
        ids = _RecordingIds()
        record: dict[bytes, _SectionScan] = {}
        self._scan_markdown(
            root,
            rel,
            ids,
            out.memories,
            out.problems,
            archived=rel == ARCHIVED_MD,
            raw=data,
            memo=memo,
            record=record,
        )
        out.data["id_bases"] = ids.taken
        out.data["sections"] = record
        return out

    def link(self, root: Path, scans: Mapping[str, FileScan]) -> ScanResult:
        result = ScanResult()
        ids = IdAllocator()
        found: list[Memory] = []
        for fs in scans.values():
            bases: list[tuple[str, str]] | None = fs.data.get("id_bases")
            renamed: dict[str, str] = {}
            for base, given in bases or ():
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

    def _scan_markdown(
        self,
        root: Path,
        rel: str,
        ids: IdAllocator,
        out: list[Memory],
        problems: list[Problem],
        *,
        archived: bool,
        raw: bytes | None = None,
        memo: Mapping[bytes, _SectionScan] | None = None,
        record: dict[bytes, _SectionScan] | None = None,
    ) -> None:
        """Sections of one markdown file into `out` / `problems`.

        `memo` holds what a previous read of the file made of each section
        (by key); `record` receives the same for this read.
        """
        data = _read(root / rel) if raw is None else raw
        if data is None:
            return
        if isinstance(data, OSError):
            problems.append(
                self._problem(root, rel, Reason.ENCODING, f"cannot read the file: {data}")
            )
            return
        decoded = _decode_lines(data)
        lines = decoded.lines
        starts = [i for i, ln in enumerate(lines) if is_heading(ln)]
        first_heading = starts[0] + 1 if starts else len(lines) + 1
        for n, detail in decoded.bad.items():
            if n < first_heading:
                problems.append(
                    self._problem(
                        root,
                        rel,
                        Reason.ENCODING,
                        f"preamble {detail}",
                        at_line=n,
                    )
                )
        for k, start in enumerate(starts):
            stop = starts[k + 1] if k + 1 < len(starts) else len(lines)  # exclusive
            last = k + 1 == len(starts)
            title = lines[start][3:].strip()
            if archived and _AUTO_ARCHIVE_TITLE.match(title):
                sec = _parse_section(lines, k + 1, start, stop)
                sec.last = last
                self._auto_archived(root, rel, sec, lines, ids, out, problems)
                continue
            bad = decoded.first_bad(start + 1, stop)
            # Everything the section's memory (or problem) depends on: its
            # text, where it sits, and the bad byte if any.  A rescan reuses
            # the objects of sections whose key and id did not change.
            key = hashlib.blake2b(
                f"{k}\0{start}\0{stop}\0{last:d}\0{archived:d}\0{bad}\0"
                f"{decoded.bad.get(bad or 0, '')}\0".encode()
                + "\n".join(lines[start:stop]).encode("utf-8", "surrogatepass"),
                digest_size=16,
            ).digest()
            hit = memo.get(key) if memo else None
            base = hit[0] if hit is not None else section_base_id(title)
            sid = ids.take(base)
            if hit is not None and hit[1] == sid:
                out.extend(hit[2])
                problems.extend(hit[3])
                if record is not None:
                    record[key] = hit
                continue
            got: list[Memory] = []
            failed: list[Problem] = []
            if bad is not None:
                failed.append(
                    self._problem(
                        root,
                        rel,
                        Reason.ENCODING,
                        decoded.bad[bad],
                        id=sid,
                        index=k + 1,
                        title=title,
                        at_line=bad,
                    )
                )
            else:
                sec = _parse_section(lines, k + 1, start, stop)
                sec.last = last
                try:
                    got.append(self._section_memory(root, rel, sec, sid, archived=archived))
                except _Invalid as inv:
                    failed.append(
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
            out.extend(got)
            problems.extend(failed)
            if record is not None:
                record[key] = (base, sid, got, failed)

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
    ) -> None:
        """A `## Auto-archived by decay (date)` block: one entry per comment line.

        The reference decay run appends only the metadata comment lines it
        archived under such a heading; each becomes one archived memory whose
        body is whatever plain lines follow it.
        """
        entries: list[tuple[int, str, list[str]]] = []
        for n in range(sec.start_line + 1, sec.end_line + 1):
            text = lines[n - 1]
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
                self._problem(root, rel, Reason.ENCODING, f"cannot read the file: {data}")
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
            title=short_title(full_text) or eid,
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

    def decay(self, memory: Memory, as_of: date) -> DecayInfo:
        native = memory.native
        if memory.archived:
            return _archived_decay(memory)
        base = _float(native.get("base_importance"), UNTAGGED_IMPORTANCE)
        ttl = native.get("ttl") if isinstance(native.get("ttl"), int) else None
        start = parse_date(native.get("date"))
        if start is None:
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
                ),
            )
        kind = memory.kind
        declared = native.get("declared_type")
        rate = DECAY_RATE.get(kind, DECAY_RATE[FALLBACK_TYPE])
        raw_days = (as_of - start).days
        days = max(0, raw_days)
        decayed = parse_date(native.get("decayed"))
        charge_from = decayed if decayed is not None else start
        raw_charge = (as_of - charge_from).days
        charged = max(0, raw_charge)
        raw_value = round(base - rate * charged, 2)
        current = round(max(0.0, min(10.0, base - rate * charged)), 2)
        band = importance_band(current)
        expired = ttl is not None and days > ttl
        status = "ttl_expired" if expired else "active"
        health = STATUS_HEALTH[status]
        if status == "active" and current < ARCHIVE_THRESHOLD:
            health = Health.FADING
        reasons: list[str] = []
        if expired:
            reasons.append(f"{kind} TTL expired ({ttl} days)")
        if current < ARCHIVE_THRESHOLD:
            reasons.append(f"importance below {ARCHIVE_THRESHOLD} (now {current})")

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
        return DecayInfo(
            status=status,
            health=health,
            strength=clamp01(current / 10.0),
            weight=clamp01(current / base) if base > 0 else 1.0,
            current_importance=current,
            importance_band=band,
            days_elapsed=days,
            expires_on=_plus_days(start, ttl + 1) if ttl is not None else None,
            ttl_days=ttl,
            why=f"{head}; {age}; {formula}; {tail}",
            archive_reasons=tuple(reasons),
        )


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
