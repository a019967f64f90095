"""The cognitive-memory format: typed markdown memories in a graph, with decay.

Layout of a vault root (specs/cognitive-memory.md, DESIGN.md)::

    graph/<type-dir>/<slug>-<6hex>.md   memories, one folder per type
    vault/*.md                          pinned memories (decay score 999.0)
    archive/<type-dir>/*.md             memories memlens archived (outside graph/)
    episodes/YYYY-MM-DD.md              daily session logs linking to memories
    _state.json                         access counts and last access per id
    _index.json                         derived index (rebuilt by `reindex`)

The markdown files are the source of truth.  `_state.json` only feeds decay;
its stored `decay_score` values are stale and always recomputed here.
"""

from __future__ import annotations

import bisect
import json
import math
import posixpath
import re
from collections import Counter
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import unquote

from ...decay import STATUS_HEALTH, clamp01
from ...errors import ParseError
from ...identity import ByIdentity
from ...model import (
    DecayInfo,
    FileScan,
    Health,
    LinkState,
    Memory,
    Problem,
    Reason,
    ReferenceProblem,
    Relation,
    ScanResult,
)
from ...refs import PointerField, reference_issue
from ...text.dates import day_of, iso, parse_datetime
from ...text.frontmatter import load_frontmatter
from ...text.textio import decode_bytes, read_text
from ..adapter import FormatAdapter, FormatInfo, PromoteOption
from ..files import (
    Listing,
    SkippedEntry,
    dir_state,
    iter_md,
    list_files,
    list_md,
    rel_posix,
    unlistable,
)
from ..linking import Changes, one_memory_files, relinked, split_duplicates
from ..reading import as_str_list, problem_from

FORMAT_ID = "cognitive-memory"

#: Memory type -> its folder under graph/ (and archive/).
TYPE_DIRS: dict[str, str] = {
    "solution": "solutions",
    "fix": "fixes",
    "decision": "decisions",
    "configuration": "configurations",
    "problem": "problems",
    "workflow": "workflows",
    "code_pattern": "code-patterns",
    "error": "errors",
    "general": "general",
    "procedure": "procedures",
    "insight": "insights",
}
#: Folder name -> memory type.
DIR_TYPES: dict[str, str] = {d: t for t, d in TYPE_DIRS.items()}

#: Per-type multiplier in the decay score (spec "Type Weights").
TYPE_WEIGHTS: dict[str, float] = {
    "procedure": 1.4,
    "decision": 1.3,
    "insight": 1.25,
    "solution": 1.2,
    "code_pattern": 1.1,
    "configuration": 1.1,
    "fix": 1.0,
    "workflow": 1.0,
    "problem": 0.9,
    "error": 0.8,
    "general": 0.8,
}

RELATION_TYPES: tuple[str, ...] = (
    "SOLVES",
    "CAUSES",
    "BUILDS_ON",
    "ALTERNATIVE_TO",
    "REQUIRES",
    "FOLLOWS",
    "RELATED_TO",
)
DIRECTIONS: tuple[str, ...] = ("outgoing", "incoming")
#: Every field the spec defines as pointing at a memory (see `core.refs`).
POINTER_FIELDS: tuple[PointerField, ...] = (
    PointerField("relations.target", "memory", "another memory's id (UUID)"),
)

#: Decay rate per day (half-life ~23 days).
LAMBDA = 0.03
#: Usage factor for a memory never accessed ("new memories start at half strength").
UNUSED_USAGE = 0.5
#: Status thresholds on the decay score (lower bounds, inclusive).
ACTIVE_THRESHOLD = 0.5
FADING_THRESHOLD = 0.2
DORMANT_THRESHOLD = 0.05
#: (lower bound, status), highest first; below the last one the status is "archived".
STATUS_THRESHOLDS: tuple[tuple[float, str], ...] = (
    (ACTIVE_THRESHOLD, "active"),
    (FADING_THRESHOLD, "fading"),
    (DORMANT_THRESHOLD, "dormant"),
)
STATUSES: tuple[str, ...] = ("active", "fading", "dormant", "archived")
#: Score of a pinned memory in vault/ ("effectively infinite").
VAULT_SCORE = 999.0
DEFAULT_CONFIDENCE = 0.8

GRAPH_DIR = "graph"
VAULT_DIR = "vault"
ARCHIVE_DIR = "archive"
EPISODES_DIR = "episodes"
STATE_FILE = "_state.json"
INDEX_FILE = "_index.json"
EMBEDDINGS_FILE = "_embeddings.json"
CORE_FILE = "CORE.md"
REFLECTION_FILE = "REFLECTION.md"

#: Frontmatter keys the spec defines; anything else is kept in `extra`.
KNOWN_FIELDS: tuple[str, ...] = (
    "id",
    "type",
    "title",
    "tags",
    "importance",
    "confidence",
    "steps",
    "preconditions",
    "postconditions",
    "created",
    "updated",
    "relations",
)
_KNOWN = frozenset(KNOWN_FIELDS)
REQUIRED_FIELDS: tuple[str, ...] = ("id", "type", "title", "importance", "created", "updated")

_UUID_RE = re.compile(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
)
_EPISODE_NAME_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md$")
_EPISODE_HEADING_RE = re.compile(r"^##(?!#)\s*(.*?)\s*$")
_EPISODE_TIME_RE = re.compile(r"^(\d{1,2}:\d{2})(?:\s*[-–—]\s*|\s+)(.*)$")
_EPISODE_FIELD_RE = re.compile(r"^\s*[-*]\s+\*\*\s*([A-Za-z ]+?)\s*:?\s*\*\*\s*:?\s*(.*?)\s*$")
_LINK_RE = re.compile(r"\[([^\]]*)\]\(\s*<?([^)>]*)>?\s*\)")


# --------------------------------------------------------------------------- decay arithmetic


def usage_factor(access_count: int) -> float:
    """log2(access_count + 1), or 0.5 for a memory never accessed."""
    if access_count <= 0:
        return UNUSED_USAGE
    return math.log2(access_count + 1)


def decay_score(importance: float, days: int, access_count: int, kind: str) -> float:
    """The spec's score for `days` since last access (unrounded)."""
    return (
        importance
        * math.exp(-LAMBDA * max(0, days))
        * usage_factor(access_count)
        * TYPE_WEIGHTS.get(kind, 1.0)
    )


def status_for_score(score: float) -> str:
    """active / fading / dormant / archived by the spec's thresholds."""
    for bound, status in STATUS_THRESHOLDS:
        if score >= bound:
            return status
    return "archived"


def days_until_below(
    importance: float, access_count: int, kind: str, threshold: float = DORMANT_THRESHOLD
) -> int:
    """Smallest whole number of days since access at which the score is below `threshold`.

    Solved from the closed form, then nudged by one day either way so that
    floating-point error never puts it off by one.  0 if it is below already
    at day 0.
    """
    if decay_score(importance, 0, access_count, kind) < threshold:
        return 0
    base = importance * usage_factor(access_count) * TYPE_WEIGHTS.get(kind, 1.0)
    if base <= 0:
        return 0
    d = max(0, math.floor(math.log(base / threshold) / LAMBDA) + 1)
    while d > 0 and decay_score(importance, d - 1, access_count, kind) < threshold:
        d -= 1
    while decay_score(importance, d, access_count, kind) >= threshold:
        d += 1
    return d


# --------------------------------------------------------------------------- _state.json


@dataclass(frozen=True, slots=True)
class StateEntry:
    """One `_state.json` entry (the stored decay_score is stale, for display only)."""

    access_count: int
    last_accessed: datetime | date | None
    decay_score: float | None


def _number(value: Any) -> float | None:
    """A real number (bool is not one), finite; else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    f = float(value)
    return f if math.isfinite(f) else None


#: One bad value in a `_state.json` entry: (reason, field or None for the whole entry, detail).
_StateFault = tuple[Reason, str | None, str]


def _state_entry(raw: Any) -> tuple[StateEntry | None, list[_StateFault]]:
    """One entry, with the defaults in place of bad values, and what was bad.

    A missing or null field is simply not recorded (the defaults apply
    quietly); a value of the wrong type or range is reported and also falls
    back to the default (access_count 0, last access = created), because the
    markdown file, not `_state.json`, is the source of truth.
    """
    if not isinstance(raw, Mapping):
        return None, [(Reason.MALFORMED_JSON, None, f"is a JSON {_json_kind(raw)}, not an object")]
    faults: list[_StateFault] = []
    access_count = 0
    count = raw.get("access_count")
    if count is None:
        pass
    elif isinstance(count, bool) or not isinstance(count, int):
        why = f"access_count {_show(count)} is not a whole number (counted as 0)"
        faults.append((Reason.WRONG_TYPE, "access_count", why))
    elif count < 0:
        why = f"access_count {_show(count)} is negative (counted as 0)"
        faults.append((Reason.OUT_OF_RANGE, "access_count", why))
    else:
        access_count = count
    last_raw = raw.get("last_accessed")
    last = parse_datetime(last_raw)
    if last_raw is not None and last is None:
        why = (
            f"last_accessed {_show(last_raw)} is not an ISO 8601 timestamp "
            "(decay counts from created)"
        )
        faults.append((Reason.WRONG_TYPE, "last_accessed", why))
    score_raw = raw.get("decay_score")
    score = _number(score_raw)
    if score_raw is not None and score is None:
        if isinstance(score_raw, float):  # NaN / Infinity
            why = f"decay_score {_show(score_raw)} is not finite"
            faults.append((Reason.OUT_OF_RANGE, "decay_score", why))
        else:
            why = f"decay_score {_show(score_raw)} is not a number"
            faults.append((Reason.WRONG_TYPE, "decay_score", why))
    return StateEntry(access_count, last, score), faults


def read_state(root: Path) -> tuple[dict[str, StateEntry], Problem | None]:
    """Entries of `_state.json` by id, and a Problem if the file is unreadable.

    A missing file is an empty state.  A malformed one is reported and also
    treated as empty: decay then falls back to `created`, as for new memories.
    Bad values inside single entries are reported by `scan` (with defaults
    in their place here).
    """
    path = root / STATE_FILE
    if not path.is_file():
        return {}, None
    state, problem, _faults = _parse_state(root, path, None)
    return state, problem


#: A state entry's problem, by the id it belongs to (reported only for ids a
#: memory file claims: entries of other ids are orphans, ignored).
_EntryProblem = tuple[str, Problem]


def _parse_state(
    root: Path, path: Path, data: bytes | None
) -> tuple[dict[str, StateEntry], Problem | None, list[_EntryProblem]]:
    """(entries by id, the problem that makes the whole file unusable, entry problems)."""
    try:
        text = read_text(path).text if data is None else decode_bytes(data, path).text
    except ParseError as err:
        return {}, problem_from(err, FORMAT_ID, root, STATE_FILE), []
    except OSError as exc:
        return {}, _problem(root, STATE_FILE, Reason.UNREADABLE, f"unreadable: {exc}"), []
    try:
        parsed = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        lineno = getattr(exc, "lineno", None)
        msg = getattr(exc, "msg", None) or "too deeply nested"
        bad = _problem(
            root, STATE_FILE, Reason.MALFORMED_JSON, f"not valid JSON: {msg}", at_line=lineno
        )
        return {}, bad, []
    if not isinstance(parsed, dict):
        bad = _problem(
            root,
            STATE_FILE,
            Reason.MALFORMED_JSON,
            f"top level is a {_json_kind(parsed)}, not an object",
        )
        return {}, bad, []
    entries = parsed.get("entries", {})
    if entries is None:
        entries = {}
    if not isinstance(entries, dict):
        bad = _problem(
            root,
            STATE_FILE,
            Reason.MALFORMED_JSON,
            f"'entries' is a {_json_kind(entries)}, not an object",
        )
        return {}, bad, []
    state: dict[str, StateEntry] = {}
    faulty: list[tuple[str, list[_StateFault]]] = []
    for key, raw in entries.items():
        entry, faults = _state_entry(raw)
        if entry is not None:
            state[key] = entry
        if faults:
            faulty.append((key, faults))
    return state, None, _entry_problems(root, text, faulty)


def _entry_problems(
    root: Path, text: str, faulty: list[tuple[str, list[_StateFault]]]
) -> list[_EntryProblem]:
    """One Problem per bad value, at the line of its field (or of its entry)."""
    if not faulty:
        return []
    places = _entry_places(text)
    newlines = [m.end() for m in re.finditer("\n", text)]
    out: list[_EntryProblem] = []
    for key, faults in faulty:
        key_at, fields = places.get(key, (None, {}))
        for reason, name, detail in faults:
            offset = fields.get(name, key_at) if name is not None else key_at
            line = None if offset is None else bisect.bisect_right(newlines, offset) + 1
            problem = Problem(
                format=FORMAT_ID,
                vault_root=root,
                path=STATE_FILE,
                reason=reason,
                detail=f"entry {_show(key)}: {detail}",
                line=line,
                at_line=line,
            )
            out.append((key, problem))
    return out


_JSON_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _skip_ws(text: str, pos: int) -> int:
    """The offset of the first non-whitespace character (JSON whitespace) from `pos`."""
    match = _JSON_WS.match(text, pos)
    return match.end() if match else pos


def _members(text: str, start: int) -> Iterable[tuple[str, int, int]]:
    """(key, key offset, value offset) of each member of the JSON object at `start`.

    `text` is known to be valid JSON (json.loads read it), so this only walks
    it; the values are skipped with the C decoder.
    """
    pos = _skip_ws(text, start + 1)
    if text[pos] == "}":
        return
    while True:
        key_at = pos
        key, pos = _DECODER.raw_decode(text, pos)
        pos = _skip_ws(text, _skip_ws(text, pos) + 1)  # past the ':'
        value_at = pos
        _, pos = _DECODER.raw_decode(text, pos)
        yield str(key), key_at, value_at
        pos = _skip_ws(text, pos)
        if text[pos] != ",":
            return
        pos = _skip_ws(text, pos + 1)


def _entry_places(text: str) -> dict[str, tuple[int, dict[str, int]]]:
    """Offsets of each `_state.json` entry key and of its fields' keys.

    As json.loads, the last of duplicate keys wins.  Only called when some
    entry has a bad value; {} if the text is not the shape expected.
    """
    out: dict[str, tuple[int, dict[str, int]]] = {}
    try:
        top = _skip_ws(text, 0)
        entries_at: int | None = None
        for key, _key_at, value_at in _members(text, top):
            if key == "entries":
                entries_at = value_at
        if entries_at is None or text[entries_at] != "{":
            return {}
        for key, key_at, value_at in _members(text, entries_at):
            fields: dict[str, int] = {}
            if text[value_at] == "{":
                fields = {name: at for name, at, _v in _members(text, value_at)}
            out[key] = (key_at, fields)
    except (ValueError, IndexError, RecursionError):
        return out
    return out


def load_index(root: Path) -> dict[str, Any] | None:
    """The parsed `_index.json` if present and a JSON object, else None.

    It is derived data (rebuilt by `reindex`), so a broken one is not a
    problem of the vault: it is simply ignored.
    """
    path = root / INDEX_FILE
    if not path.is_file():
        return None
    return _parse_index(path, None)


def _parse_index(path: Path, data: bytes | None) -> dict[str, Any] | None:
    try:
        text = read_text(path).text if data is None else decode_bytes(data, path).text
        parsed = json.loads(text)
    except (ParseError, OSError, ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, dict) else None


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return "number"


def _problem(
    root: Path,
    rel: str,
    reason: Reason,
    detail: str,
    *,
    id: str | None = None,
    title: str | None = None,
    at_line: int | None = None,
) -> Problem:
    return Problem(
        format=FORMAT_ID,
        vault_root=root,
        path=rel,
        reason=reason,
        detail=detail,
        id=id,
        title=title,
        at_line=at_line,
    )


# --------------------------------------------------------------------------- frontmatter validation


class _Invalid(Exception):
    """One validation failure of a memory file (the first one found is reported)."""

    def __init__(self, reason: Reason, detail: str, key: str | None = None) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail
        self.key = key


def _show(value: Any) -> str:
    """A value as quoted in a one-line detail, cut to a readable length."""
    text = repr(value) if isinstance(value, str) else str(value)
    text = text.replace("\n", " ")
    return text if len(text) <= 60 else text[:57] + "..."


def _require(data: Mapping[Any, Any], key: str) -> Any:
    if key not in data:
        raise _Invalid(Reason.MISSING_REQUIRED_FIELD, f"lacks {key}", key)
    return data[key]


def _fraction(value: Any, name: str, key: str) -> float:
    """A number in 0.0-1.0 (integers fine, bool not)."""
    number = _number(value)
    if number is None:
        if isinstance(value, float):  # nan / inf
            raise _Invalid(Reason.OUT_OF_RANGE, f"{name} {_show(value)} outside 0.0-1.0", key)
        raise _Invalid(Reason.WRONG_TYPE, f"{name} {_show(value)} is not a number", key)
    if not 0.0 <= number <= 1.0:
        raise _Invalid(Reason.OUT_OF_RANGE, f"{name} {_show(value)} outside 0.0-1.0", key)
    return number


def _timestamp(value: Any, key: str) -> datetime | date:
    parsed = parse_datetime(value)
    if parsed is None:
        raise _Invalid(Reason.WRONG_TYPE, f"{key} {_show(value)} is not an ISO 8601 timestamp", key)
    return parsed


def _str_list(data: Mapping[Any, Any], key: str) -> list[str]:
    items = as_str_list(data.get(key))
    if items is None:
        raise _Invalid(Reason.WRONG_TYPE, f"{key} must be a list of strings", key)
    return items


def _raw_scalar(header: str, key: str) -> str | None:
    """The text after `key:` on its header line (for a title YAML typed as non-text)."""
    m = re.search(rf"^{re.escape(key)}:[ \t]*(.*?)[ \t]*$", header, re.MULTILINE)
    if m is None:
        return None
    text = re.sub(r"\s+#.*$", "", m.group(1))
    return text or None


def _key_line(header: str, key: str | None) -> int | None:
    """1-based file line of a top-level frontmatter key (line 1 is the '---')."""
    if key is None:
        return None
    prefix = f"{key}:"
    for i, line in enumerate(header.split("\n")):
        if line.startswith(prefix):
            return i + 2
    return None


@dataclass(frozen=True, slots=True)
class _RawRelation:
    target: str
    type: str
    direction: str
    strength: float | None
    context: str | None


def _relations(value: Any) -> list[_RawRelation]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Invalid(Reason.WRONG_TYPE, "relations must be a list of mappings", "relations")
    out: list[_RawRelation] = []
    for i, item in enumerate(value):
        where = f"relations[{i}]"
        if not isinstance(item, Mapping):
            raise _Invalid(Reason.WRONG_TYPE, f"{where} is not a mapping", "relations")
        for key in ("target", "type", "direction"):
            if key not in item:
                raise _Invalid(Reason.MISSING_REQUIRED_FIELD, f"{where} lacks {key}", "relations")
            if not isinstance(item[key], str):
                raise _Invalid(
                    Reason.WRONG_TYPE,
                    f"{where}.{key} {_show(item[key])} is not a string",
                    "relations",
                )
        direction = item["direction"]
        if direction not in DIRECTIONS:
            raise _Invalid(
                Reason.WRONG_TYPE,
                f"{where}.direction {_show(direction)} is not outgoing or incoming",
                "relations",
            )
        strength_raw = item.get("strength")
        strength = (
            None
            if strength_raw is None
            else _fraction(strength_raw, f"{where}.strength", "relations")
        )
        context = item.get("context")
        if context is not None and not isinstance(context, str):
            raise _Invalid(
                Reason.WRONG_TYPE, f"{where}.context {_show(context)} is not a string", "relations"
            )
        out.append(_RawRelation(item["target"], item["type"], direction, strength, context))
    return out


@dataclass(slots=True)
class _Parsed:
    """A memory file that passed validation, before state and links are applied."""

    memory: Memory
    raw_relations: list[_RawRelation]


def _validate(
    data: dict[Any, Any], header: str, root: Path, rel: str, area: str, type_dir: str | None
) -> _Parsed:
    raw_id = _require(data, "id")
    if not isinstance(raw_id, str):
        raise _Invalid(Reason.WRONG_TYPE, f"id {_show(raw_id)} is not a string", "id")
    if not _UUID_RE.match(raw_id):
        raise _Invalid(Reason.WRONG_TYPE, f"id {_show(raw_id)} is not a UUID", "id")

    kind = _require(data, "type")
    if not isinstance(kind, str) or kind not in TYPE_DIRS:
        hint = ""
        if isinstance(kind, str) and kind in RELATION_TYPES:
            # The spec's transcription lost indentation; a column-0 `type:` under
            # `- target:` silently overrides the memory's own type in YAML.
            hint = " (a relation 'type' at column 0? indent it under '- target:')"
        raise _Invalid(
            Reason.WRONG_TYPE,
            f"type {_show(kind)} is not one of {', '.join(TYPE_DIRS)}{hint}",
            "type",
        )

    title = _require(data, "title")
    if not isinstance(title, str):
        # An unquoted title YAML read as a number, bool or date: keep its text.
        raw = _raw_scalar(header, "title")
        if raw is None or isinstance(title, list | dict) or title is None:
            raise _Invalid(Reason.WRONG_TYPE, f"title {_show(title)} is not a string", "title")
        title = raw

    importance = _fraction(_require(data, "importance"), "importance", "importance")
    created = _timestamp(_require(data, "created"), "created")
    updated = _timestamp(_require(data, "updated"), "updated")

    confidence_explicit = data.get("confidence") is not None
    confidence = (
        _fraction(data["confidence"], "confidence", "confidence")
        if confidence_explicit
        else DEFAULT_CONFIDENCE
    )
    tags = _str_list(data, "tags")
    for key in ("steps", "preconditions", "postconditions"):
        _str_list(data, key)
    raw_relations = _relations(data.get("relations"))

    source = data.get("source")
    extra = {k: v for k, v in data.items() if k not in _KNOWN}
    memory = Memory(
        format=FORMAT_ID,
        vault_root=root,
        id=raw_id,
        kind=kind,
        title=title,
        body="",
        path=rel,
        tags=tuple(tags),
        importance=importance,
        confidence=confidence,
        created=created,
        updated=updated,
        source=source if isinstance(source, str) else None,
        fields=data,  # a fresh mapping per read: nothing else holds it
        extra=extra,
        pinned=area == VAULT_DIR,
        archived=area == ARCHIVE_DIR,
        native={
            "area": area,
            "type_dir": type_dir if type_dir is not None else TYPE_DIRS[kind],
            "confidence_explicit": confidence_explicit,
            "access_count": 0,
            "last_accessed": None,
            "has_state": False,
            "stored_decay_score": None,
        },
    )
    return _Parsed(memory, raw_relations)


def _read_memory(
    root: Path,
    rel: str,
    area: str,
    type_dir: str | None,
    raw: bytes | None = None,
    path: Path | None = None,
) -> _Parsed | Problem:
    """One memory file -> a validated memory, or the Problem that stops it loading.

    `raw` holds the file's bytes when the caller read them; otherwise the
    file is read from `path` (default: `rel` below `root`).
    """
    try:
        if raw is None:
            decoded = read_text(path if path is not None else root.joinpath(*rel.split("/")))
        else:
            decoded = decode_bytes(raw, rel)
        data, doc = load_frontmatter(decoded.text, rel)
    except ParseError as err:
        return problem_from(err, FORMAT_ID, root, rel)
    except OSError as exc:
        return _problem(root, rel, Reason.UNREADABLE, f"could not read file: {exc.strerror or exc}")
    raw_id = data.get("id")
    mem_id = raw_id if isinstance(raw_id, str) else None
    raw_title = data.get("title")
    title = raw_title if isinstance(raw_title, str) else None
    try:
        parsed = _validate(data, doc.header, root, rel, area, type_dir)
    except _Invalid as bad:
        return _problem(
            root,
            rel,
            bad.reason,
            bad.detail,
            id=mem_id,
            title=title,
            at_line=_key_line(doc.header, bad.key),
        )
    parsed.memory.body = doc.body
    return parsed


def _memory_files(root: Path) -> Iterable[tuple[Path, str, str | None]]:
    """(file, area, type dir) for every memory file, in a stable order."""
    for type_dir in TYPE_DIRS.values():
        for path in iter_md(root / GRAPH_DIR / type_dir, root):
            yield path, GRAPH_DIR, type_dir
    for path in iter_md(root / VAULT_DIR, root):
        yield path, VAULT_DIR, None
    for type_dir in TYPE_DIRS.values():
        for path in iter_md(root / ARCHIVE_DIR / type_dir, root):
            yield path, ARCHIVE_DIR, type_dir


# --------------------------------------------------------------------------- episodes


def episode_link_path(link: str, valid_paths: Mapping[str, str] | None = None) -> str | None:
    """Vault-relative path an episode's memory link points at, if it stays inside the vault.

    Links are written relative to `episodes/` (`../graph/...`); a vault-relative
    link is also accepted when that is what names an existing memory.  The
    result is only normalised text: nothing is joined onto a real path here.
    """
    link = link.strip()
    if not link or "\\" in link or "\x00" in link or "://" in link or link.startswith("#"):
        return None
    link = link.split("#", 1)[0].split("?", 1)[0]
    candidates: list[str] = []
    for raw in dict.fromkeys((link, unquote(link))):
        if not raw or raw.startswith(("/", "~")) or re.match(r"^[A-Za-z]:", raw):
            continue
        for base in (EPISODES_DIR, ""):
            norm = (
                posixpath.normpath(posixpath.join(base, raw)) if base else posixpath.normpath(raw)
            )
            if norm in (".", "..") or norm.startswith("../") or norm.startswith("/"):
                continue
            candidates.append(norm)
    if not candidates:
        return None
    if valid_paths:
        for cand in candidates:
            if cand in valid_paths:
                return cand
    return candidates[0]


def parse_episode_text(
    text: str, date_text: str, rel: str, valid_paths: Mapping[str, str]
) -> list[dict[str, Any]]:
    """Entries of one daily episode file (`## HH:MM - Title` and its bullet fields)."""
    entries: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for lineno, line in enumerate(text.split("\n"), start=1):
        heading = _EPISODE_HEADING_RE.match(line)
        if heading is not None:
            head = heading.group(1)
            timed = _EPISODE_TIME_RE.match(head)
            current = {
                "date": date_text,
                "time": timed.group(1) if timed else None,
                "title": timed.group(2).strip() if timed else head,
                "type": None,
                "tags": [],
                "memory_text": None,
                "memory_link": None,
                "memory_path": None,
                "memory_id": None,
                "summary": None,
                "file": rel,
                "line": lineno,
            }
            entries.append(current)
            continue
        if current is None:
            continue
        field = _EPISODE_FIELD_RE.match(line)
        if field is None:
            continue
        name, value = field.group(1).strip().lower(), field.group(2)
        if name == "type":
            current["type"] = value or None
        elif name == "tags":
            current["tags"] = [t.strip() for t in value.split(",") if t.strip()]
        elif name == "summary":
            current["summary"] = value
        elif name == "memory":
            link = _LINK_RE.search(value)
            if link is None:
                current["memory_text"] = value or None
                continue
            current["memory_text"] = link.group(1)
            current["memory_link"] = link.group(2).strip()
            target = episode_link_path(link.group(2), valid_paths)
            current["memory_path"] = target
            current["memory_id"] = valid_paths.get(target) if target else None
    return entries


def _read_episode(
    root: Path, path: Path, valid_paths: Mapping[str, str], data: bytes | None = None
) -> tuple[list[dict[str, Any]], Problem | None]:
    """Entries of one daily episode file, or the Problem that stops it being read."""
    m = _EPISODE_NAME_RE.match(path.name)
    if m is None:
        return [], None
    rel = rel_posix(root, path)
    try:
        text = read_text(path).text if data is None else decode_bytes(data, rel).text
    except ParseError as err:
        # An empty daily log is harmless; undecodable bytes are reported.
        if err.reason is not Reason.EMPTY_FILE:
            return [], problem_from(err, FORMAT_ID, root, rel)
        return [], None
    except OSError:
        return [], None
    return parse_episode_text(text, m.group(1), rel, valid_paths), None


def _relink_episode(entry: dict[str, Any], valid_paths: Mapping[str, str]) -> None:
    """Point an episode entry's memory link at the memories valid now (as parsing would)."""
    link = entry.get("memory_link")
    if not isinstance(link, str):
        return
    target = episode_link_path(link, valid_paths)
    entry["memory_path"] = target
    entry["memory_id"] = valid_paths.get(target) if target else None


#: FileScan.data["kind"] values, which also order the files in a scan.
_MEMORY, _EPISODE, _STATE, _INDEX = 0, 1, 2, 3
_TYPE_DIR_RANK: dict[str, int] = {d: i for i, d in enumerate(TYPE_DIRS.values())}
_AREA_RANK: dict[str, int] = {GRAPH_DIR: 0, VAULT_DIR: 1, ARCHIVE_DIR: 2}


def _place(rel: str) -> tuple[int, str | None, str | None] | None:
    """(kind, area, type dir) of a vault file scan() reads, from its path alone."""
    parts = rel.split("/")
    if any(p.startswith(".") for p in parts):
        return None
    if len(parts) == 1:
        if rel == STATE_FILE:
            return _STATE, None, None
        if rel == INDEX_FILE:
            return _INDEX, None, None
        return None
    if not parts[-1].endswith(".md"):
        return None
    if len(parts) == 2:
        if parts[0] == VAULT_DIR:
            return _MEMORY, VAULT_DIR, None
        if parts[0] == EPISODES_DIR and _EPISODE_NAME_RE.match(parts[1]):
            return _EPISODE, None, None
        return None
    if len(parts) == 3 and parts[0] in (GRAPH_DIR, ARCHIVE_DIR) and parts[1] in DIR_TYPES:
        # The shared constants, not the path's copies (every memory keeps them).
        area = GRAPH_DIR if parts[0] == GRAPH_DIR else ARCHIVE_DIR
        return _MEMORY, area, TYPE_DIRS[DIR_TYPES[parts[1]]]
    return None


def _order(rel: str, place: tuple[int, str | None, str | None]) -> tuple[int, int, int, str]:
    kind, area, type_dir = place
    if kind != _MEMORY:
        return (kind, 0, 0, rel)
    area_rank = _AREA_RANK[area or GRAPH_DIR]
    dir_rank = _TYPE_DIR_RANK[type_dir] if type_dir is not None else 0
    # Within one folder the relative path orders as the file name does.
    return (kind, area_rank, dir_rank, rel)


# --------------------------------------------------------------------------- adapter


def _raw_of(scans: Mapping[str, FileScan], changes: Changes, memory: Memory) -> list[_RawRelation]:
    """The raw relations read with `memory` (from its file's scan, old or new)."""
    for fs in (*changes.get(memory.path, (None, None)), scans.get(memory.path)):
        if fs is not None and fs.memories and fs.memories[0] is memory:
            raw: list[_RawRelation] = fs.data.get("raw_relations", [])
            return raw
    return []


def _link_relations(
    root: Path, memory: Memory, raw_relations: list[_RawRelation], valid: Container[str]
) -> list[ReferenceProblem]:
    """Resolve a memory's relations in place against the valid ids; its broken ones."""
    problems: list[ReferenceProblem] = []
    resolved_all: list[str | None] = []
    for raw in raw_relations:
        issue = reference_issue(raw.target, valid)
        resolved = raw.target if issue is None else None
        resolved_all.append(resolved)
        if issue is not None:
            problems.append(
                ReferenceProblem(
                    format=FORMAT_ID,
                    vault_root=root,
                    path=memory.path,
                    id=memory.id,
                    field="relations.target",
                    ref=raw.target,
                    reason=issue,
                )
            )
    current = memory.relations
    if len(current) == len(raw_relations) and all(
        r.resolved == res for r, res in zip(current, resolved_all, strict=True)
    ):
        return problems  # linked before with the same outcome: keep the objects
    memory.relations = tuple(
        Relation(
            target=raw.target,
            type=raw.type,
            field="relations",
            resolved=resolved,
            direction=raw.direction,
            strength=raw.strength,
            context=raw.context,
        )
        for raw, resolved in zip(raw_relations, resolved_all, strict=True)
    )
    return problems


def _apply_state(memory: Memory, entry: StateEntry | None) -> None:
    """Access counts from `_state.json` (or the defaults of a memory it does not list)."""
    native = memory.native
    if entry is None:
        if native.get("has_state"):
            native.update(
                access_count=0, last_accessed=None, has_state=False, stored_decay_score=None
            )
        return
    native.update(
        access_count=entry.access_count,
        last_accessed=iso(entry.last_accessed),
        has_state=True,
        stored_decay_score=entry.decay_score,
    )


def _decay_numbers(memory: Memory, as_of: date) -> tuple[float, int, date, str, int, float] | None:
    """(importance, access count, last access day, its origin, days, score); None: pinned."""
    if memory.pinned or memory.native.get("area") == VAULT_DIR:
        return None
    importance = memory.importance if memory.importance is not None else 0.0
    count_raw = memory.native.get("access_count", 0)
    access_count = count_raw if isinstance(count_raw, int) and count_raw > 0 else 0
    last_raw = parse_datetime(memory.native.get("last_accessed"))
    if last_raw is not None:
        last_day = day_of(last_raw)
        source = "state"
    elif memory.created is not None:
        last_day = day_of(memory.created)
        source = "created"
    else:
        last_day = as_of
        source = "as_of"
    days = max(0, (as_of - last_day).days)
    return (
        importance,
        access_count,
        last_day,
        source,
        days,
        decay_score(importance, days, access_count, memory.kind),
    )


def _fmt(x: float) -> str:
    return f"{x:g}"


_THRESHOLDS_TEXT = "(thresholds: ≥0.5 active, 0.2–0.5 fading, 0.05–0.2 dormant, <0.05 archived)"


@dataclass(slots=True)
class _CognitiveLinkState(LinkState):
    """What `link` leaves for `relink` (valid only for the newest result).

    `valid`: the kept memories by id; `claims`: how many memory files claim
    each id; `refs`: who points at each target id; `state`: the parsed
    `_state.json`; `faulty_state`: ids with a bad state entry;
    `valid_paths`: path -> id of the kept memories; `episode_files`: rels.
    """

    valid: dict[str, Memory]
    claims: Counter[str]
    refs: dict[str, dict[int, Memory]]
    state: dict[str, StateEntry]
    faulty_state: set[str]
    valid_paths: dict[str, str]
    episode_files: list[str]


class CognitiveMemoryAdapter(FormatAdapter):
    """Reads cognitive-memory vaults and computes their decay score."""

    info: ClassVar[FormatInfo] = FormatInfo(
        id=FORMAT_ID,
        label="Cognitive memory",
        short_label="cognitive",
        # Every relation is expected on both ends (see core.graph.relations).
        two_way_relations=True,
        promote_note="retypes to insight and/or raises importance; the file stays where it is",
        promote_options=(
            PromoteOption("type", "insight", "insight, or blank to keep the type"),
            PromoteOption("importance", "", "0-1, only raises it", number=True),
        ),
        has_episodes=True,
        tracks_access=True,
    )
    pointer_fields: ClassVar[tuple[PointerField, ...]] = POINTER_FIELDS
    #: The linked result (link_state included) pickles faithfully: the scan
    #: cache keeps it and an unchanged vault is not linked again.
    cache_linked: ClassVar[bool] = True

    def detect(self, root: Path) -> bool:
        """A `graph/<type-dir>/`, or a state file beside `graph/` or `vault/`.

        A `graph/` that cannot be read counts when another part of the
        layout is there (`vault/`, `episodes/`, a state file): the scan
        reports it as one problem instead of the vault vanishing.
        """
        graph = root / GRAPH_DIR
        kinds = {dir_state(graph / d) for d in TYPE_DIRS.values()}
        if True in kinds:
            return True
        has_marker = (root / INDEX_FILE).is_file() or (root / STATE_FILE).is_file()
        has_vault = dir_state(root / VAULT_DIR) is True
        if has_marker and (dir_state(graph) is True or has_vault):
            return True
        return None in kinds and (has_marker or has_vault or dir_state(root / EPISODES_DIR) is True)

    # -- per-file scanning (see FormatAdapter) ------------------------------

    def files(self, root: Path) -> list[Path]:
        return [root / rel for rel in self.file_listing(root).names]

    def owns(self, root: Path, rel: str) -> bool:
        return _place(rel) is not None

    def file_rels(self, root: Path) -> list[str]:
        """`files` as vault-relative strings (a cheaper stat walk)."""
        return self.file_listing(root).names

    def file_listing(self, root: Path) -> Listing:
        """Memory files, episodes and the two state files, and the entries
        left out (links out of the vault, pipes, ...)."""
        names: list[str] = []
        skipped: list[SkippedEntry] = []
        for area in (GRAPH_DIR, VAULT_DIR, ARCHIVE_DIR):
            refused = unlistable(root, area) if area != VAULT_DIR else None
            if refused is not None:
                skipped.append(refused)  # one problem for `graph/`, not one per type
                continue
            dirs = [f"{area}/{d}" for d in TYPE_DIRS.values()] if area != VAULT_DIR else [area]
            for folder in dirs:
                listing = list_md(root, folder)
                names.extend(f"{folder}/{n}" for n in listing.names)
                skipped.extend(listing.skipped)
        episodes = list_md(root, EPISODES_DIR)
        names.extend(f"{EPISODES_DIR}/{n}" for n in episodes.names if _EPISODE_NAME_RE.match(n))
        skipped.extend(
            s
            for s in episodes.skipped
            # (`episodes/` itself when it cannot be listed, or one episode file.)
            if s.rel == EPISODES_DIR or _EPISODE_NAME_RE.match(s.rel.rpartition("/")[2])
        )
        state = list_files(root, (STATE_FILE, INDEX_FILE))
        return Listing(names + state.names, skipped + state.skipped)

    def scan_file(self, root: Path, path: Path, data: bytes | None = None) -> FileScan:
        return self.scan_rel(root, rel_posix(root, path), data, path)

    def scan_rel(
        self, root: Path, rel: str, data: bytes | None = None, path: Path | None = None
    ) -> FileScan:
        """`scan_file` by vault-relative path (a Path is built only to read the file)."""
        place = _place(rel)
        if place is None:
            return FileScan(rel)
        kind, area, type_dir = place
        if kind == _MEMORY:
            # A memory file's data holds only its raw relations, when it has
            # some (link() reads the kind and relations with defaults).
            out = FileScan(rel, order=_order(rel, place))
            item = _read_memory(root, rel, area or GRAPH_DIR, type_dir, data, path)
            if isinstance(item, Problem):
                out.problems.append(item)
            else:
                out.memories.append(item.memory)
                if item.raw_relations:
                    out.data["raw_relations"] = item.raw_relations
            return out
        if path is None:
            path = root.joinpath(*rel.split("/"))
        out = FileScan(rel, order=_order(rel, place), data={"kind": kind})
        if kind == _EPISODE:
            # Links are pointed at memories by link(), which knows them all.
            entries, problem = _read_episode(root, path, {}, data)
            out.data["entries"] = entries
            if problem is not None:
                out.problems.append(problem)
        elif kind == _STATE:
            out.vault_wide = True  # access counts feed every memory's decay
            state, problem, entry_problems = _parse_state(root, path, data)
            out.data["state"] = state
            # Reported by link(), which knows which ids are orphans.
            out.data["entry_problems"] = entry_problems
            if problem is not None:
                out.problems.append(problem)
        else:
            index = _parse_index(path, data)
            out.data["index"] = [index] if index is not None else []
        return out

    def link(self, root: Path, scans: Mapping[str, FileScan]) -> ScanResult:
        result = ScanResult()
        state: dict[str, StateEntry] = {}
        state_problems: list[Problem] = []
        entry_problems: list[_EntryProblem] = []
        episode_files: list[FileScan] = []
        index: list[dict[str, Any]] = []
        parsed: list[Memory] = []
        raw_of: dict[int, list[_RawRelation]] = {}
        #: How many memory files claim each id (valid, duplicate or invalid).
        claims: Counter[str] = Counter()
        for fs in scans.values():
            kind = fs.data.get("kind", _MEMORY)
            if kind == _MEMORY:
                for p in fs.problems:
                    result.problems.append(p)
                    if p.id is not None:
                        claims[p.id] += 1
                for m in fs.memories:
                    parsed.append(m)
                    claims[m.id] += 1
                    raw_of[id(m)] = fs.data.get("raw_relations", [])
            elif kind == _STATE:
                state = fs.data.get("state", {})
                state_problems.extend(fs.problems)
                entry_problems = fs.data.get("entry_problems", [])
            elif kind == _EPISODE:
                episode_files.append(fs)
            else:
                index = fs.data.get("index", [])

        valid, dup_problems = split_duplicates(parsed, FORMAT_ID, root)
        result.problems.extend(dup_problems)
        result.problems.extend(state_problems)
        # Bad values of orphan entries are ignored, as the orphans themselves.
        result.problems.extend(p for mem_id, p in entry_problems if mem_id in claims)

        valid_ids = {m.id for m in valid}
        refs: dict[str, dict[int, Memory]] = {}
        for memory in valid:
            _apply_state(memory, state.get(memory.id))
            raw_relations = raw_of[id(memory)]
            for raw in raw_relations:
                refs.setdefault(raw.target, ByIdentity())[id(memory)] = memory
            result.ref_problems.extend(_link_relations(root, memory, raw_relations, valid_ids))
        result.memories = valid

        valid_paths = {m.path: m.id for m in valid}
        episodes: list[dict[str, Any]] = []
        for fs in episode_files:
            result.problems.extend(fs.problems)
            for entry in fs.data.get("entries", []):
                _relink_episode(entry, valid_paths)
                episodes.append(entry)
        result.records["episodes"] = episodes
        result.records["state_orphans"] = [{"id": i} for i in state if i not in claims]
        # records holds lists; the whole parsed _index.json is its one item.
        result.records["index"] = list(index)
        result.link_state = _CognitiveLinkState(
            valid={m.id: m for m in valid},
            claims=claims,
            refs=refs,
            state=state,
            faulty_state={mem_id for mem_id, _p in entry_problems},
            valid_paths=valid_paths,
            episode_files=[fs.rel for fs in episode_files],
        )
        return result

    def relink(
        self, root: Path, scans: Mapping[str, FileScan], previous: ScanResult, changes: Changes
    ) -> ScanResult | None:
        """`link` after a few memory files changed, touching only what they affect.

        Handles memory files holding one valid memory before and after
        (edits, additions, removals, moves) whose ids no other file claims;
        state, episode and index files, problems and duplicates fall back to
        a full link (None).  Relations of other memories are re-resolved only
        when they point at an id that appeared or disappeared.
        """
        st = previous.link_state
        split = one_memory_files(changes)
        if not isinstance(st, _CognitiveLinkState) or split is None:
            return None
        valid, claims, refs = st.valid, st.claims, st.refs
        for before, after in changes.values():
            for fs in (before, after):
                if fs is not None and fs.data.get("kind", _MEMORY) != _MEMORY:
                    return None  # state, episodes, index: relink in full
        gone, new = split
        delta: Counter[str] = Counter()
        for m in gone:
            delta[m.id] -= 1
        for m in new:
            delta[m.id] += 1
        for mem_id, d in delta.items():
            before_n = claims[mem_id]
            gone_n = sum(1 for m in gone if m.id == mem_id)
            if before_n != gone_n or before_n + d > 1:
                return None  # another file claims this id: duplicates may change
        for m in gone:
            if valid.get(m.id) is not m:
                return None
        if any(d and mem_id in st.faulty_state for mem_id, d in delta.items()):
            return None  # an id with a bad _state.json entry (dis)appeared: its problem too

        # From here on the tables move to the new result.
        state, valid_paths = st.state, st.valid_paths
        for mem_id, d in delta.items():
            claims[mem_id] += d
            if claims[mem_id] <= 0:
                del claims[mem_id]
        for m in gone:
            del valid[m.id]
            valid_paths.pop(m.path, None)
            for raw in _raw_of(scans, changes, m):
                holders = refs.get(raw.target)
                if holders is not None:
                    holders.pop(id(m), None)
                    if not holders:
                        del refs[raw.target]
        for m in new:
            valid[m.id] = m
            valid_paths[m.path] = m.id
        appeared_or_gone = {k for k, d in delta.items() if d != 0}

        def order(x: Memory | ReferenceProblem) -> tuple[Any, ...]:
            return scans[x.path].order

        owners: dict[int, Memory] = {id(m): m for m in new}
        for mem_id in appeared_or_gone:
            owners.update(refs.get(mem_id, {}))
        ref_problems: list[ReferenceProblem] = []
        fresh = {id(m) for m in new}
        for memory in sorted(owners.values(), key=order):
            raw_relations = _raw_of(scans, changes, memory)
            if id(memory) in fresh:
                _apply_state(memory, state.get(memory.id))
                for raw in raw_relations:
                    refs.setdefault(raw.target, ByIdentity())[id(memory)] = memory
            ref_problems.extend(_link_relations(root, memory, raw_relations, valid))
        dropped = {id(m) for m in gone}
        owner_ids = {m.id for m in owners.values()} | {m.id for m in gone}
        records = dict(previous.records)
        paths_changed = {m.path for m in gone} != {m.path for m in new} or bool(appeared_or_gone)
        if paths_changed:
            for rel in st.episode_files:
                fs = scans.get(rel)
                for entry in fs.data.get("entries", []) if fs is not None else []:
                    _relink_episode(entry, valid_paths)
        if appeared_or_gone:
            records["state_orphans"] = [{"id": i} for i in state if i not in claims]
        return relinked(previous, dropped, new, owner_ids, ref_problems, order, st, records)

    def decay_brief(self, memory: Memory, as_of: date) -> tuple[str, Health, float, float | None]:
        """(status, health, weight, score) of `decay`, without its explanation.

        What a search index needs for 100k memories; `decay` computes the
        same numbers through the same `_decay_numbers` (a test holds them equal).
        """
        numbers = _decay_numbers(memory, as_of)
        if numbers is None:
            return "active", Health.STABLE, 1.0, VAULT_SCORE
        _importance, _count, _last, _source, _days, score = numbers
        if memory.archived or memory.native.get("area") == ARCHIVE_DIR:
            return "archived", Health.ARCHIVED, 0.0, round(score, 4)
        status = status_for_score(score)
        health = Health.EXPIRED if status == "archived" else STATUS_HEALTH[status]
        return status, health, clamp01(score), round(score, 4)

    def decay(self, memory: Memory, as_of: date, *, explain: bool = True) -> DecayInfo:
        area = memory.native.get("area")
        numbers = _decay_numbers(memory, as_of)
        if numbers is None:
            return DecayInfo(
                status="active",
                health=Health.STABLE,
                strength=1.0,
                weight=1.0,
                score=VAULT_SCORE,
                why=(
                    "Pinned memory in vault/ → decay score 999.0 by definition "
                    "(effectively infinite) → active."
                    if explain
                    else ""
                ),
            )
        importance, access_count, last_day, origin, days, score = numbers
        status = status_for_score(score)
        arithmetic = (
            _arithmetic(memory, as_of, importance, access_count, last_day, origin, days, score)
            if explain
            else ""
        )

        if memory.archived or area == ARCHIVE_DIR:
            return DecayInfo(
                status="archived",
                health=Health.ARCHIVED,
                strength=clamp01(score),
                weight=0.0,
                score=round(score, 4),
                days_elapsed=days,
                why=f"Moved to archive/ → archived (score would be: {arithmetic})."
                if explain
                else "",
            )

        expires_on: date | None = None
        if status != "archived":
            below = days_until_below(importance, access_count, memory.kind)
            expires_on = last_day + timedelta(days=below)
        health = Health.EXPIRED if status == "archived" else STATUS_HEALTH[status]
        reasons = (
            (f"decay score {round(score, 4)} below {DORMANT_THRESHOLD}",)
            if status == "archived"
            else ()
        )
        return DecayInfo(
            status=status,
            health=health,
            strength=clamp01(score),
            weight=clamp01(score),
            score=round(score, 4),
            days_elapsed=days,
            expires_on=expires_on,
            why=f"{arithmetic} → {status} {_THRESHOLDS_TEXT}." if explain else "",
            archive_reasons=reasons,
        )


def _arithmetic(
    memory: Memory,
    as_of: date,
    importance: float,
    access_count: int,
    last_day: date,
    origin: str,
    days: int,
    score: float,
) -> str:
    """The decay score's arithmetic in words (for `decay`'s explanation)."""
    if origin == "state":
        source = f"_state.json last_accessed {last_day.isoformat()}"
    elif origin == "created":
        source = (
            f"no _state.json last_accessed → access_count {access_count} and last access "
            f"taken as created {last_day.isoformat()}"
        )
    else:
        source = "no last access or created date → counted from as_of"
    weight_t = TYPE_WEIGHTS.get(memory.kind, 1.0)
    usage = usage_factor(access_count)
    usage_text = (
        f"log2({access_count} + 1) = {round(usage, 4)}"
        if access_count > 0
        else f"{UNUSED_USAGE} (access_count = 0)"
    )
    return (
        f"{source}; days_since_access = {as_of.isoformat()} − {last_day.isoformat()} = {days}; "
        f"score = importance {_fmt(importance)} × e^(−{LAMBDA}×{days}) "
        f"[{math.exp(-LAMBDA * days):.4f}] × usage_factor {usage_text} × "
        f"type_weight({memory.kind}) {_fmt(weight_t)} = {round(score, 4)}"
    )


def type_dir_for(kind: str) -> str:
    """The folder a memory of `kind` lives in under graph/ and archive/ (KeyError if unknown)."""
    return TYPE_DIRS[kind]
