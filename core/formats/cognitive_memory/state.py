"""`_state.json` (access counts per id, feeding decay) and `_index.json`, read leniently:
a bad entry is a problem located at its line, never a failed scan.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from ...errors import ParseError
from ...model import Problem, Reason
from ...text.dates import parse_datetime
from ...text.textio import decode_bytes, read_text
from ..reading import problem_from
from .memories import _number, _show
from .schema import FORMAT_ID, INDEX_FILE, STATE_FILE, _problem


@dataclass(frozen=True, slots=True)
class StateEntry:
    """One `_state.json` entry (the stored decay_score is stale, for display only)."""

    access_count: int
    last_accessed: datetime | date | None
    decay_score: float | None


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
