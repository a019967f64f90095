"""The experience-record format: JSON Lines raw and view stores.

Layout (fixtures/experience-records/FORMAT.md): a vault root holds
`experiences.jsonl` (the raw store of `experience` records, append-only),
`wal.jsonl` (`wal_entry` records: `{"wal_id", "ops": [...]}`), and the view
store `views.jsonl` and `stances.jsonl`.  Only experiences are memories; views,
stances and WAL entries are kept as plain records in `ScanResult.records`.

Reading
    One JSON object per line, UTF-8 decoded strictly line by line (a bad line
    is an `encoding` problem for that line only).  A BOM at the start of a
    file and CRLF endings are accepted; blank lines are ignored; a line that
    is not one JSON object is `malformed_json` ("JSON error: <msg> (col N)").
    A JSON string with an unpaired surrogate escape (`"\\ud800"`) is valid
    JSON but not text: it is reported as `encoding` so no front end has to
    print it.

Experiences
    Need `id`, `type` (the lattice occurrence ⊑ observation ⊑ inference ⊑
    reconciliation), `created_at` (ISO 8601) and `content.text`; when present,
    `confidence.p` must be a number in [0, 1], `affect.vad` v and d in
    [-1, 1] and a in [0, 1], `parents` / `evidence_ptrs` lists of strings.
    One problem per line (the first rule it breaks).  Ids used by more than
    one valid line are `duplicate_id` on every copy.  A record whose `parents`
    name a valid experience of a higher lattice rank is a `lattice_violation`
    (lineage only derives upward); it is checked once against the valid set,
    so a violator's children are not themselves re-checked.

WAL (applied in file order, ops in list order)
    * `{"op": "tombstone", "target": "exp", "id": X, "reason": R}` with
      R == "archived" archives X (memlens's archive action appends this):
      status `archived`, content still shown.
    * The same op with any other reason (e.g. `gdpr_erasure`) or no reason
      erases X: status `tombstoned`; the Memory keeps only id, type,
      created_at and the tombstone info (title `[tombstoned: R]`, empty body,
      no fields, tags, relations, confidence or source).  Erasure is final.
    * `{"op": "restore", "target": "exp", "id": X}` (memlens's restore action
      appends this, see `restore_op`) reverses an earlier *archived*
      tombstone of X.  It never undoes an erasure: that content is gone.
    * Other ops (`append`, ...) do not change state.
    Well-formed ops are applied even from a WAL entry that is itself reported
    invalid (say, one op is not an object): an erasure must never be skipped
    because a neighbouring op is broken.

Views and pins
    A view with lens `pin` pins every id in its `applied_to`; a later view (in
    file order) with lens `unpin` applied to the same id supersedes it, and a
    still later `pin` pins it again.  Raw records are never rewritten.

Metadata edits (memlens's `set` action)
    A view with lens `edit_v1` carries `delta_from_raw.fields`, a mapping of
    edited metadata (`EDITABLE_FIELDS`: `tags`, `confidence.p`, `note`) to the
    new values; `null` drops the override so the raw value shows again.  Edit
    views apply in file order, later ones winning per field, to every id in
    `applied_to`.  The Memory shows the edited `tags` and `confidence`, keeps
    the raw record untouched in `fields`, and lists the active overrides in
    `native["edits"]` (`native["note"]` for a note) and the edit views in
    `native["edited_by"]`.  An edit view whose `fields` is not an object, or
    holds a bad value for an editable field, is an invalid view (unknown
    field names are kept but not applied).  Erased experiences ignore edits.

References
    `POINTER_FIELDS` lists them; `core.refs` decides each value.
    Experiences: `parents` (type `derived_from`) and `evidence_ptrs` (type
    `evidence`; URIs such as `uri:...`, `urn:...` or any `scheme://...` are
    not ids and are never resolved, but a `file:` URI is a path and unsafe).
    Views: `applied_to`, `provenance_braid`, `delta_from_raw.reweighted[].exp`;
    stances: `candidates[].exp`, `decision.support`.  Path syntax ->
    `unsafe_reference` (never resolved); an id erased by the WAL ->
    `references_tombstoned`; an id not among valid experiences ->
    `dangling_reference`.  An experience's `trace_ref` (not in the spec, but
    observation/v1's trace pointer) is only checked for path syntax.  WAL
    ops name the raw lines they append or erase: they are the store's own
    bookkeeping, not links, and are not checked.  `provenance_braid` and
    `decision.support` may also name views and stances.  A provenance braid is
    lineage history, which by design outlives an erasure, so a braid entry
    naming an erased id is not flagged (its `applied_to` twin is).  Links of
    an erased experience are erased with it and not checked.  The links of
    views and stances are also listed in `records["edges"]` as
    `{source, target, type, field, issue}` for the graph module.

Decay
    None: raw experiences are immutable and stay `live` until the WAL names
    them; status `live` / `archived` / `tombstoned`, strength and weight 1.0
    for live and 0.0 otherwise.

Rescans
    Lines appended to `experiences.jsonl` are parsed alone (`scan_appended`)
    and checked against the previous link's tables (`relink`); anything else
    links in full.

An empty (zero-byte) JSON Lines file is an empty store, not a problem.  A
file that exists but cannot be read at all is reported as `encoding` on line 1.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, ClassVar, TypeGuard

from ...decay import STATUS_HEALTH
from ...model import (
    DecayInfo,
    FileScan,
    Health,
    LinkState,
    Memory,
    Problem,
    Reason,
    ReferenceProblem,
    RefIssue,
    Relation,
    ScanResult,
)
from ...refs import PointerField, PointerKind, is_uri, pointer_values, reference_issue
from ...safe_io import read_regular
from ...text.dates import days_between, parse_datetime
from ..adapter import FormatAdapter, FormatInfo, PromoteOption
from ..files import Listing, list_files
from ..linking import Changes, split_duplicates

FORMAT_ID = "experience-records"

EXPERIENCES = "experiences.jsonl"
VIEWS = "views.jsonl"
STANCES = "stances.jsonl"
WAL = "wal.jsonl"
#: The files of a vault in scan order: the WAL first (erasure decides what of
#: an experience may be kept), then the view stores, then the raw store.
_FILE_ORDER: tuple[str, ...] = (WAL, VIEWS, STANCES, EXPERIENCES)

#: The experience type lattice, lowest first.
LATTICE: tuple[str, ...] = ("occurrence", "observation", "inference", "reconciliation")
TYPE_RANK: dict[str, int] = {t: i for i, t in enumerate(LATTICE)}

#: Keys the spec's `experience` table defines; anything else is an extra field.
SPEC_KEYS: frozenset[str] = frozenset(
    {
        "id",
        "type",
        "created_at",
        "content",
        "provenance",
        "evidence_ptrs",
        "confidence",
        "embeddings",
        "affect",
        "parents",
        "sign",
    }
)

#: Every field the spec defines as pointing at a record (see `core.refs`).
POINTER_FIELDS: tuple[PointerField, ...] = (
    PointerField("parents", "experience", "direct lineage: parent experiences"),
    PointerField(
        "evidence_ptrs",
        "experience",
        "parent experiences or external URIs",
        PointerKind.RECORD_OR_URI,
    ),
    # Not in the spec's table; observation/v1's name for a trace, checked
    # (for path syntax only) when an experience carries it.
    PointerField("trace_ref", "experience", "an execution trace", PointerKind.EXTERNAL),
    PointerField("applied_to", "view", "the raw experiences the lens reframes"),
    PointerField("provenance_braid", "view", "lineage: experiences, views and stances"),
    PointerField("delta_from_raw.reweighted.exp", "view", "the experiences reweighted"),
    PointerField("candidates.exp", "stance", "the experiences whose claims compete"),
    PointerField("decision.support", "stance", "supporting experiences, views, stances"),
)
#: Record fields: (field, graph edge type); raw-only ones name experiences.
_VIEW_LINKS: tuple[tuple[str, str], ...] = (
    ("applied_to", "applied_to"),
    ("provenance_braid", "provenance"),
    ("delta_from_raw.reweighted.exp", "reweighted"),
)
_STANCE_LINKS: tuple[tuple[str, str], ...] = (
    ("candidates.exp", "candidate"),
    ("decision.support", "support"),
)
_RAW_ONLY = frozenset({"applied_to", "delta_from_raw.reweighted.exp", "candidates.exp"})

#: WAL tombstone reason that archives (reversible) instead of erasing.
ARCHIVED_REASON = "archived"
OP_TOMBSTONE = "tombstone"
OP_RESTORE = "restore"
LENS_PIN = "pin"
LENS_UNPIN = "unpin"
LENS_EDIT = "edit_v1"
#: Metadata an `edit_v1` view may override (raw records stay immutable).
EDITABLE_FIELDS: tuple[str, ...] = ("tags", "confidence.p", "note")

_TITLE_MAX = 100
_SHOW_MAX = 60
_BOM = b"\xef\xbb\xbf"
_JSON_WS = " \t\r\n"
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


# --------------------------------------------------------------------------
# JSON Lines reading


@dataclass(frozen=True, slots=True)
class JsonLine:
    """One JSON object read from a JSON Lines file, with its 1-based line."""

    line: int
    obj: dict[str, Any]


@dataclass(frozen=True, slots=True)
class LineError:
    """A line that could not be read as one JSON object."""

    line: int
    reason: Reason
    detail: str


def _has_surrogate(value: Any) -> bool:
    """True if any string (key or value) holds an unpaired surrogate.

    Iterative, because json.loads accepts nesting deep enough that a
    recursive walk could exceed the recursion limit.
    """
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "null"


def parse_json_lines(data: bytes, first_line: int = 1) -> list[JsonLine | LineError]:
    """Every non-blank line of JSON Lines bytes, as an object or an error.

    `first_line` numbers the lines of a tail that was appended to a file
    (its first line is that line of the file; no BOM can start it).
    """
    if first_line == 1 and data.startswith(_BOM):
        data = data[len(_BOM) :]
    out: list[JsonLine | LineError] = []
    for number, raw in enumerate(data.split(b"\n"), start=first_line):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            bad = raw[exc.start]
            out.append(
                LineError(
                    number,
                    Reason.ENCODING,
                    f"not valid UTF-8 (byte 0x{bad:02x} at column {exc.start + 1})",
                )
            )
            continue
        if not text.strip(_JSON_WS):
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            out.append(
                LineError(number, Reason.MALFORMED_JSON, f"JSON error: {exc.msg} (col {exc.colno})")
            )
            continue
        except (ValueError, RecursionError) as exc:
            # e.g. an integer beyond Python's digit limit, or absurd nesting.
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            out.append(LineError(number, Reason.MALFORMED_JSON, f"JSON error: {msg}"))
            continue
        if not isinstance(obj, dict):
            out.append(
                LineError(
                    number,
                    Reason.MALFORMED_JSON,
                    f"JSON error: expected one object, got {_json_kind(obj)}",
                )
            )
            continue
        # Strict UTF-8 text has no surrogates; only a `\\uD8xx` escape can
        # bring one in, so walk the object only when the text has one.
        if _SURROGATE_ESCAPE.search(text) and _has_surrogate(obj):
            out.append(
                LineError(number, Reason.ENCODING, "JSON string holds an unpaired surrogate escape")
            )
            continue
        out.append(JsonLine(number, obj))
    return out


def read_json_lines(path: Path) -> list[JsonLine | LineError]:
    """Read one JSON Lines file (see `parse_json_lines`); [] if it is absent."""
    if not path.is_file():
        return []
    return parse_json_lines(read_regular(path))


# --------------------------------------------------------------------------
# Records memlens's actions append (raw stays immutable)


def archive_op(exp_id: str, ts: str) -> dict[str, Any]:
    """The WAL op that archives an experience (reversible by `restore_op`)."""
    return {"ts": ts, "op": OP_TOMBSTONE, "target": "exp", "id": exp_id, "reason": ARCHIVED_REASON}


def restore_op(exp_id: str, ts: str) -> dict[str, Any]:
    """The WAL op that reverses an earlier archive of `exp_id`."""
    return {"ts": ts, "op": OP_RESTORE, "target": "exp", "id": exp_id}


def pin_view(view_id: str, exp_id: str, *, unpin: bool = False) -> dict[str, Any]:
    """A view record that pins (or, later in the file, unpins) an experience."""
    return {
        "id": view_id,
        "lens": LENS_UNPIN if unpin else LENS_PIN,
        "applied_to": [exp_id],
        "delta_from_raw": {"added": "", "removed": "", "reweighted": []},
        "provenance_braid": [exp_id],
    }


def next_wal_id(entries: list[dict[str, Any]]) -> str:
    """The next `wal_NNNNNN` id after the highest numbered one in `entries`."""
    highest = 0
    for entry in entries:
        m = re.fullmatch(r"wal_(\d+)", str(entry.get("wal_id", "")))
        if m:
            highest = max(highest, int(m.group(1)))
    return f"wal_{highest + 1:06d}"


# --------------------------------------------------------------------------
# Helpers


def _show(value: Any) -> str:
    """A short one-line rendering of a JSON value for a problem detail."""
    if isinstance(value, str):
        short = value if len(value) <= _SHOW_MAX else value[: _SHOW_MAX - 1] + "…"
        return repr(short)
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= _SHOW_MAX else text[: _SHOW_MAX - 1] + "…"


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_str_list(value: Any) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def title_of(text: str) -> str:
    """First line, then first sentence, of a text; at most ~100 characters."""
    first = next((ln.strip() for ln in text.split("\n") if ln.strip()), "")
    first = _SENTENCE_END.split(first, maxsplit=1)[0].strip()
    if len(first) > _TITLE_MAX:
        first = first[: _TITLE_MAX - 1].rstrip() + "…"
    return first


def is_external_pointer(ref: str) -> bool:
    """`uri:...`, `urn:...`, `https://...`, `vec://...`: pointers, not ids (`file:` is a path)."""
    return is_uri(ref)


class _Invalid(Exception):
    def __init__(self, reason: Reason, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def _check_number(obj: dict[str, Any], key: str, name: str, lo: float, hi: float) -> None:
    if key not in obj or obj[key] is None:
        return
    value = obj[key]
    if not _is_number(value):
        raise _Invalid(Reason.WRONG_TYPE, f"{name} {_show(value)} is not a number")
    # `not (lo <= v <= hi)` also catches NaN.
    if not lo <= value <= hi:
        bounds = f"{lo:g}-{hi:g}" if lo >= 0 else f"{lo:g} to {hi:g}"
        raise _Invalid(Reason.OUT_OF_RANGE, f"{name} {_show(value)} outside {bounds}")


def _validate_experience(obj: dict[str, Any]) -> None:
    """Raise _Invalid for the first rule an experience object breaks."""
    if "id" not in obj:
        raise _Invalid(Reason.MISSING_REQUIRED_FIELD, "lacks id")
    if not isinstance(obj["id"], str) or not obj["id"]:
        raise _Invalid(Reason.WRONG_TYPE, f"id {_show(obj['id'])} is not a non-empty string")
    if "type" not in obj:
        raise _Invalid(Reason.MISSING_REQUIRED_FIELD, "lacks type")
    if obj["type"] not in LATTICE or not isinstance(obj["type"], str):
        raise _Invalid(
            Reason.WRONG_TYPE, f"type {_show(obj['type'])} is not one of {', '.join(LATTICE)}"
        )
    if "created_at" not in obj:
        raise _Invalid(Reason.MISSING_REQUIRED_FIELD, "lacks created_at")
    created = obj["created_at"]
    if not isinstance(created, str) or parse_datetime(created) is None:
        raise _Invalid(Reason.WRONG_TYPE, f"created_at {_show(created)} is not an ISO timestamp")
    if "content" not in obj:
        raise _Invalid(Reason.MISSING_REQUIRED_FIELD, "lacks content.text")
    content = obj["content"]
    if not isinstance(content, dict):
        raise _Invalid(Reason.WRONG_TYPE, "content is not an object")
    if "text" not in content:
        raise _Invalid(Reason.MISSING_REQUIRED_FIELD, "lacks content.text")
    if not isinstance(content["text"], str):
        raise _Invalid(Reason.WRONG_TYPE, f"content.text {_show(content['text'])} is not a string")
    confidence = obj.get("confidence")
    if confidence is not None:
        if not isinstance(confidence, dict):
            raise _Invalid(Reason.WRONG_TYPE, "confidence is not an object")
        _check_number(confidence, "p", "confidence.p", 0.0, 1.0)
    affect = obj.get("affect")
    if affect is not None:
        if not isinstance(affect, dict):
            raise _Invalid(Reason.WRONG_TYPE, "affect is not an object")
        vad = affect.get("vad")
        if vad is not None:
            if not isinstance(vad, dict):
                raise _Invalid(Reason.WRONG_TYPE, "affect.vad is not an object")
            _check_number(vad, "v", "affect.vad.v", -1.0, 1.0)
            _check_number(vad, "a", "affect.vad.a", 0.0, 1.0)
            _check_number(vad, "d", "affect.vad.d", -1.0, 1.0)
    for key in ("parents", "evidence_ptrs"):
        value = obj.get(key)
        if value is not None and not _is_str_list(value):
            raise _Invalid(Reason.WRONG_TYPE, f"{key} is not a list of strings")


def edit_value_problem(name: str, value: Any) -> tuple[Reason, str] | None:
    """Why `value` cannot be the edited value of field `name` (None if it can).

    `null` is always allowed: it drops the override.
    """
    if value is None:
        return None
    if name == "tags":
        if not _is_str_list(value) or not all(t.strip() for t in value):
            return Reason.WRONG_TYPE, f"tags {_show(value)} is not a list of non-empty strings"
    elif name == "confidence.p":
        if not _is_number(value):
            return Reason.WRONG_TYPE, f"confidence.p {_show(value)} is not a number"
        if not 0.0 <= value <= 1.0:
            return Reason.OUT_OF_RANGE, f"confidence.p {_show(value)} outside 0-1"
    elif name == "note" and not isinstance(value, str):
        return Reason.WRONG_TYPE, f"note {_show(value)} is not a string"
    return None


def _edit_fields(obj: dict[str, Any]) -> dict[str, Any] | None:
    delta = obj.get("delta_from_raw")
    fields = delta.get("fields") if isinstance(delta, dict) else None
    return fields if isinstance(fields, dict) else None


def _validate_view(obj: dict[str, Any]) -> None:
    _require_id(obj)
    if "lens" in obj and not isinstance(obj["lens"], str):
        raise _Invalid(Reason.WRONG_TYPE, f"lens {_show(obj['lens'])} is not a string")
    for key in ("applied_to", "provenance_braid"):
        value = obj.get(key)
        if value is not None and not _is_str_list(value):
            raise _Invalid(Reason.WRONG_TYPE, f"{key} is not a list of strings")
    if obj.get("lens") == LENS_EDIT:
        fields = _edit_fields(obj)
        if fields is None:
            raise _Invalid(
                Reason.WRONG_TYPE, f"delta_from_raw.fields of an {LENS_EDIT} view is not an object"
            )
        for name in EDITABLE_FIELDS:
            bad = edit_value_problem(name, fields.get(name))
            if bad is not None:
                raise _Invalid(bad[0], f"delta_from_raw.fields: {bad[1]}")


def experience_problem(obj: dict[str, Any]) -> str | None:
    """The first rule an experience object breaks, as a one-line detail (None: valid)."""
    try:
        _validate_experience(obj)
    except _Invalid as bad:
        return bad.detail
    return None


def view_problem(obj: dict[str, Any]) -> str | None:
    """The first rule a view object breaks, as a one-line detail (None: valid)."""
    try:
        _validate_view(obj)
    except _Invalid as bad:
        return bad.detail
    return None


def wal_problem(obj: dict[str, Any]) -> str | None:
    """The first rule a WAL entry breaks, as a one-line detail (None: valid)."""
    try:
        _validate_wal(obj)
    except _Invalid as bad:
        return bad.detail
    return None


def _validate_stance(obj: dict[str, Any]) -> None:
    _require_id(obj)
    candidates = obj.get("candidates")
    if candidates is not None:
        if not isinstance(candidates, list) or not all(isinstance(c, dict) for c in candidates):
            raise _Invalid(Reason.WRONG_TYPE, "candidates is not a list of objects")
        for n, cand in enumerate(candidates):
            if cand.get("exp") is not None and not isinstance(cand["exp"], str):
                raise _Invalid(Reason.WRONG_TYPE, f"candidates[{n}].exp is not a string")
    decision = obj.get("decision")
    if decision is not None:
        if not isinstance(decision, dict):
            raise _Invalid(Reason.WRONG_TYPE, "decision is not an object")
        support = decision.get("support")
        if support is not None and not _is_str_list(support):
            raise _Invalid(Reason.WRONG_TYPE, "decision.support is not a list of strings")


def _validate_wal(obj: dict[str, Any]) -> None:
    if "wal_id" not in obj:
        raise _Invalid(Reason.MISSING_REQUIRED_FIELD, "lacks wal_id")
    if not isinstance(obj["wal_id"], str) or not obj["wal_id"]:
        raise _Invalid(Reason.WRONG_TYPE, f"wal_id {_show(obj['wal_id'])} is not a string")
    if "ops" not in obj:
        raise _Invalid(Reason.MISSING_REQUIRED_FIELD, "lacks ops")
    ops = obj["ops"]
    if not isinstance(ops, list):
        raise _Invalid(Reason.WRONG_TYPE, "ops is not a list")
    for n, op in enumerate(ops):
        if not isinstance(op, dict):
            raise _Invalid(Reason.WRONG_TYPE, f"ops[{n}] is not an object")
        if not isinstance(op.get("op"), str):
            raise _Invalid(Reason.WRONG_TYPE, f"ops[{n}] has no op name")


def _require_id(obj: dict[str, Any]) -> None:
    if "id" not in obj:
        raise _Invalid(Reason.MISSING_REQUIRED_FIELD, "lacks id")
    if not isinstance(obj["id"], str) or not obj["id"]:
        raise _Invalid(Reason.WRONG_TYPE, f"id {_show(obj['id'])} is not a non-empty string")


@dataclass(slots=True)
class _ExpState:
    """What the WAL says about one experience id."""

    erased: dict[str, Any] | None = None
    archived: dict[str, Any] | None = None


@dataclass(slots=True)
class _Scan:
    """Working state of one scan."""

    root: Path
    result: ScanResult = field(default_factory=ScanResult)
    states: dict[str, _ExpState] = field(default_factory=dict)
    pinned_by: dict[str, str] = field(default_factory=dict)
    edits: dict[str, dict[str, Any]] = field(default_factory=dict)
    edited_by: dict[str, list[str]] = field(default_factory=dict)

    def problem(
        self,
        rel: str,
        line: int,
        reason: Reason,
        detail: str,
        *,
        id: str | None = None,
        title: str | None = None,
    ) -> None:
        self.result.problems.append(
            Problem(
                format=FORMAT_ID,
                vault_root=self.root,
                path=rel,
                reason=reason,
                detail=detail,
                id=id,
                line=line,
                title=title,
                at_line=line,
            )
        )

    def erased(self, exp_id: str) -> bool:
        state = self.states.get(exp_id)
        return state is not None and state.erased is not None

    def read(self, rel: str, data: bytes | None = None) -> list[JsonLine]:
        """Objects of one file (or of `data`, its bytes); unreadable lines become problems."""
        try:
            items = read_json_lines(self.root / rel) if data is None else parse_json_lines(data)
        except OSError as exc:
            # Not a parse failure but still bad input: report, never raise.
            self.problem(rel, 1, Reason.UNREADABLE, f"cannot read file: {exc.strerror or exc}")
            return []
        good: list[JsonLine] = []
        for item in items:
            if isinstance(item, LineError):
                self.problem(rel, item.line, item.reason, item.detail)
            else:
                good.append(item)
        return good

    def load_records(
        self,
        rel: str,
        key: str,
        validate: Callable[[dict[str, Any]], None],
        *,
        id_key: str = "id",
        unique_ids: bool = True,
        data: bytes | None = None,
    ) -> list[dict[str, Any]]:
        """Valid records of a view-store / WAL file, each with `_line`, `_file`.

        WAL entries are applied before validation (see the module docstring).
        """
        kept: list[dict[str, Any]] = []
        for item in self.read(rel, data):
            obj = item.obj
            if rel == WAL:
                self.apply_wal(obj, item.line)
            try:
                validate(obj)
            except _Invalid as bad:
                rid = obj.get(id_key)
                self.problem(
                    rel, item.line, bad.reason, bad.detail, id=rid if isinstance(rid, str) else None
                )
                continue
            kept.append({**obj, "_line": item.line, "_file": rel})
        if unique_ids:
            kept = self.drop_duplicate_records(rel, kept)
        self.result.records[key] = kept
        return kept

    def drop_duplicate_records(
        self, rel: str, records: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        counts = Counter(r["id"] for r in records)
        keep: list[dict[str, Any]] = []
        for r in records:
            if counts[r["id"]] == 1:
                keep.append(r)
                continue
            others = ", ".join(
                f"{rel}:{o['_line']}" for o in records if o["id"] == r["id"] and o is not r
            )
            self.problem(
                rel,
                r["_line"],
                Reason.DUPLICATE_ID,
                f"id {r['id']!r} also used by {others}",
                id=r["id"],
            )
        return keep

    def apply_wal(self, entry: dict[str, Any], line: int) -> None:
        ops = entry.get("ops")
        if not isinstance(ops, list):
            return
        wal_id = entry.get("wal_id")
        for op in ops:
            if not isinstance(op, dict) or op.get("target") != "exp":
                continue
            exp_id = op.get("id")
            if not isinstance(exp_id, str):
                continue
            state = self.states.setdefault(exp_id, _ExpState())
            ts = op.get("ts")
            info: dict[str, Any] = {
                "wal_id": wal_id if isinstance(wal_id, str) else None,
                "wal_line": line,
                "ts": ts if isinstance(ts, str) else None,
            }
            if op.get("op") == OP_TOMBSTONE:
                reason = op.get("reason")
                info["reason"] = reason if isinstance(reason, str) else None
                if reason == ARCHIVED_REASON:
                    if state.erased is None:
                        state.archived = info
                elif state.erased is None:
                    # Erasure is final and wins over an archive.
                    state.erased = info
                    state.archived = None
            elif op.get("op") == OP_RESTORE:
                # Only an archive is reversible; erased content is gone.
                state.archived = None

    def apply_pins(self, views: list[dict[str, Any]]) -> None:
        for view in views:
            lens = view.get("lens")
            if lens not in (LENS_PIN, LENS_UNPIN):
                continue
            for exp_id in view.get("applied_to") or []:
                if lens == LENS_PIN:
                    self.pinned_by[exp_id] = view["id"]
                else:
                    self.pinned_by.pop(exp_id, None)

    def apply_edits(self, views: list[dict[str, Any]]) -> None:
        """Fold `edit_v1` views (already validated) in file order."""
        for view in views:
            if view.get("lens") != LENS_EDIT:
                continue
            fields = _edit_fields(view) or {}
            for exp_id in view.get("applied_to") or []:
                active = self.edits.setdefault(exp_id, {})
                for name in EDITABLE_FIELDS:
                    if name not in fields:
                        continue
                    if fields[name] is None:
                        active.pop(name, None)
                    else:
                        active[name] = fields[name]
                self.edited_by.setdefault(exp_id, []).append(view["id"])


# --------------------------------------------------------------------------
# Memories


def _build_memory(scan: _Scan, obj: dict[str, Any], line: int) -> Memory:
    exp_id: str = obj["id"]
    kind: str = obj["type"]
    created = parse_datetime(obj["created_at"])
    state = scan.states.get(exp_id)
    if state is not None and state.erased is not None:
        reason = state.erased.get("reason") or "erased"
        kept = {"id": exp_id, "type": kind, "created_at": obj["created_at"]}
        # Content, provenance, tags, links: all erased; only the shell stays.
        return Memory(
            format=FORMAT_ID,
            vault_root=scan.root,
            id=exp_id,
            kind=kind,
            title=f"[tombstoned: {reason}]",
            body="",
            path=EXPERIENCES,
            created=created,
            line=line,
            fields=dict(kept),
            tombstoned=True,
            native={**kept, "tombstone": dict(state.erased)},
        )
    text: str = obj["content"]["text"]
    confidence = obj.get("confidence")
    p = confidence.get("p") if isinstance(confidence, dict) else None
    provenance = obj.get("provenance")
    actor = provenance.get("actor") if isinstance(provenance, dict) else None
    tags = obj.get("tags")
    relations: list[Relation] = [
        Relation(target=ref, type="derived_from", field="parents")
        for ref in obj.get("parents") or []
    ]
    relations.extend(
        Relation(target=ref, type="evidence", field="evidence_ptrs")
        for ref in obj.get("evidence_ptrs") or []
        if not is_external_pointer(ref)
    )
    native: dict[str, Any] = {}
    archived = state is not None and state.archived is not None
    if state is not None and state.archived is not None:
        native["archive"] = dict(state.archived)
    pinned = exp_id in scan.pinned_by
    if pinned:
        native["pinned_by"] = scan.pinned_by[exp_id]
    shown_tags = tuple(tags) if _is_str_list(tags) else ()
    shown_p = float(p) if _is_number(p) else None
    if exp_id in scan.edited_by:
        edits = scan.edits.get(exp_id, {})
        native["edits"] = dict(edits)
        native["edited_by"] = list(scan.edited_by[exp_id])
        if "tags" in edits:
            shown_tags = tuple(edits["tags"])
        if "confidence.p" in edits:
            shown_p = float(edits["confidence.p"])
        if "note" in edits:
            native["note"] = edits["note"]
    return Memory(
        format=FORMAT_ID,
        vault_root=scan.root,
        id=exp_id,
        kind=kind,
        title=title_of(text) or exp_id,
        body=text,
        path=EXPERIENCES,
        tags=shown_tags,
        confidence=shown_p,
        created=created,
        source=actor if isinstance(actor, str) else None,
        relations=tuple(relations),
        line=line,
        fields=dict(obj),
        extra={k: v for k, v in obj.items() if k not in SPEC_KEYS},
        pinned=pinned,
        archived=archived,
        native=native,
    )


def _read_experiences(scan: _Scan, items: list[JsonLine], out: list[Memory]) -> None:
    """Experiences built as if the WAL and views said nothing about them.

    link() rebuilds the few they do name; invalid lines become problems.
    """
    for item in items:
        obj = item.obj
        try:
            _validate_experience(obj)
        except _Invalid as bad:
            exp_id = obj.get("id") if isinstance(obj.get("id"), str) else None
            title = None
            content = obj.get("content")
            if (
                exp_id is not None
                and isinstance(content, dict)
                and isinstance(content.get("text"), str)
            ):
                title = title_of(content["text"]) or None
            scan.problem(EXPERIENCES, item.line, bad.reason, bad.detail, id=exp_id, title=title)
            continue
        out.append(_build_memory(scan, obj, item.line))


def _parents_of(m: Memory) -> list[str]:
    """The parents the lattice check reads (an erased record keeps them aside)."""
    parents = m.fields.get("parents") if not m.tombstoned else m.native.get("_parents")
    return parents or []


def _lattice_split(
    scan: _Scan, memories: list[Memory], rank: dict[str, int] | None = None
) -> list[Memory]:
    """Drop (and report) records derived from a higher-lattice parent.

    `rank` (id -> lattice rank of every unique experience) defaults to the
    ranks of `memories`; a relink passes the vault's, new records included.
    """
    if rank is None:
        rank = {m.id: TYPE_RANK[m.kind] for m in memories}
    keep: list[Memory] = []
    for m in memories:
        parents = m.fields.get("parents") if not m.tombstoned else m.native.get("_parents")
        if not parents:
            keep.append(m)
            continue
        own = rank[m.id]
        higher: list[str] = []
        for ref in parents:
            if ref in rank and rank[ref] > own and ref not in higher:
                higher.append(ref)
        if not higher:
            keep.append(m)
            continue
        names = ", ".join(f"{ref} ({LATTICE[rank[ref]]})" for ref in higher)
        scan.problem(
            EXPERIENCES,
            m.line or 0,
            Reason.LATTICE_VIOLATION,
            f"{m.kind} derives from higher-lattice parent(s) {names}",
            id=m.id,
            title=m.title,
        )
    return keep


class _Erased:
    """The ids the WAL erased, as a container for `reference_issue`."""

    def __init__(self, scan: _Scan) -> None:
        self.scan = scan

    def __contains__(self, ref: object) -> bool:
        return isinstance(ref, str) and self.scan.erased(ref)


def _ref_issue(
    scan: _Scan, ref: str, valid: set[str], *, flag_erased: bool = True
) -> RefIssue | None:
    issue = reference_issue(ref, valid, erased=_Erased(scan))
    if issue is RefIssue.TOMBSTONED and not flag_erased:
        return None  # lineage outlives an erasure (see References above)
    return issue


def _flag(
    scan: _Scan, rel: str, owner: str, line: int | None, fld: str, ref: str, issue: RefIssue
) -> None:
    scan.result.ref_problems.append(
        ReferenceProblem(
            format=FORMAT_ID,
            vault_root=scan.root,
            path=rel,
            id=owner,
            field=fld,
            ref=ref,
            reason=issue,
            line=line,
        )
    )


def _check_memory_refs(
    scan: _Scan, memories: list[Memory], valid: set[str] | None = None
) -> list[Memory]:
    """Flag broken links and fill each Relation's `resolved`.

    `valid` (the ids of every valid experience) defaults to those of `memories`.
    """
    if valid is None:
        valid = {m.id for m in memories}
    out: list[Memory] = []
    for m in memories:
        seen: set[tuple[str, str]] = set()
        rels: list[Relation] = []
        changed = False
        for r in m.relations:
            issue = _ref_issue(scan, r.target, valid)
            if issue is not None and (r.field, r.target) not in seen:
                seen.add((r.field, r.target))
                _flag(scan, EXPERIENCES, m.id, m.line, r.field, r.target, issue)
            resolved = r.target if issue is None or issue is RefIssue.TOMBSTONED else None
            if r.resolved != resolved:
                changed = True
                r = Relation(target=r.target, type=r.type, field=r.field, resolved=resolved)
            rels.append(r)
        if changed:
            # Relinking after one file changed rebuilds only what changed.
            m.relations = tuple(rels)
        trace = None if m.tombstoned else m.fields.get("trace_ref")
        if isinstance(trace, str):
            issue = reference_issue(trace, (), kind=PointerKind.EXTERNAL)
            if issue is not None:
                _flag(scan, EXPERIENCES, m.id, m.line, "trace_ref", trace, issue)
        out.append(m)
    return out


def _record_links(record: dict[str, Any], kind: str) -> list[tuple[str, str, str]]:
    """(field, edge type, target) for every id a view or stance names."""
    fields = _VIEW_LINKS if kind == "views" else _STANCE_LINKS
    return [(fld, etype, t) for fld, etype in fields for t in pointer_values(record, fld)]


def _check_record_refs(
    scan: _Scan, kind: str, records: list[dict[str, Any]], exp_ids: set[str], any_ids: set[str]
) -> None:
    rel = VIEWS if kind == "views" else STANCES
    edges = scan.result.records.setdefault("edges", [])
    for record in records:
        seen: set[tuple[str, str]] = set()
        for fld, etype, target in _record_links(record, kind):
            # Raw-only fields must name an experience; lineage/support may
            # also name views and stances.
            valid = exp_ids if fld in _RAW_ONLY else any_ids
            issue = _ref_issue(scan, target, valid, flag_erased=fld != "provenance_braid")
            edges.append(
                {
                    "source": record["id"],
                    "target": target,
                    "type": etype,
                    "field": fld,
                    "issue": issue.value if issue is not None else None,
                }
            )
            if issue is not None and (fld, target) not in seen:
                seen.add((fld, target))
                _flag(scan, rel, record["id"], record["_line"], fld, target, issue)


@dataclass(slots=True)
class _ExperienceLinkState(LinkState):
    """What `link` leaves for `relink` (valid only for the newest result).

    `rank`: lattice rank of every unique experience id; `valid`: ids of the
    experiences kept; `dup_ids`: ids used more than once; `n_exp` /
    `n_refs`: how many problems / reference problems belong to experiences
    (the view-store ones follow); `named`: every id anything names (filled
    on the first relink).
    """

    rank: dict[str, int]
    valid: set[str]
    dup_ids: set[str]
    n_exp: int
    n_refs: int
    named: set[str] | None = None


def _named_ids(
    memories: list[Memory], views: list[dict[str, Any]], stances: list[dict[str, Any]]
) -> set[str]:
    """Every id the experiences (parents, evidence), views and stances name.

    `memories` are the records as read (before the WAL erased any of them),
    so their relations list every parent and evidence pointer.
    """
    named = {r.target for m in memories for r in m.relations}
    for kind, records in (("views", views), ("stances", stances)):
        for record in records:
            named.update(target for _f, _t, target in _record_links(record, kind))
    return named


# --------------------------------------------------------------------------
# The adapter


class ExperienceRecordAdapter(FormatAdapter):
    """Reads an experience-record vault (JSON Lines raw + view stores)."""

    info: ClassVar[FormatInfo] = FormatInfo(
        id=FORMAT_ID,
        label="Experience records",
        short_label="exp-rec",
        # `parents` form a lattice: a cycle through them is a problem.
        acyclic_fields=frozenset({"parents"}),
        promote_note="derives a new record one type up (the raw line never changes)",
        promote_options=(
            PromoteOption("text", "", "blank: the body with Observed:/Inferred: in front"),
            PromoteOption("type", "", "blank: the next type up"),
        ),
    )
    pointer_fields: ClassVar[tuple[PointerField, ...]] = POINTER_FIELDS
    #: The linked result (link_state included) pickles faithfully: the scan
    #: cache keeps it and an unchanged vault is not linked again.
    cache_linked: ClassVar[bool] = True

    def detect(self, root: Path) -> bool:
        return (root / EXPERIENCES).is_file()

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
        # The WAL and the views change experiences (erasure, archive, pins, edits).
        out = FileScan(rel, order=(_FILE_ORDER.index(rel),), vault_wide=rel in (WAL, VIEWS))
        scan = _Scan(root=root)
        if rel == WAL:
            # Which experiences are erased decides what of them may be kept.
            wal = scan.load_records(
                WAL, "wal", _validate_wal, id_key="wal_id", unique_ids=False, data=data
            )
            out.data.update(records=wal, states=scan.states)
        elif rel == VIEWS:
            views = scan.load_records(VIEWS, "views", _validate_view, data=data)
            scan.apply_pins(views)
            scan.apply_edits(views)
            out.data.update(
                records=views,
                pinned_by=scan.pinned_by,
                edits=scan.edits,
                edited_by=scan.edited_by,
            )
        elif rel == STANCES:
            stances = scan.load_records(STANCES, "stances", _validate_stance, data=data)
            out.data.update(records=stances)
        else:
            if data is None and path.is_file():
                with contextlib.suppress(OSError):  # `scan.read` reports it
                    data = read_regular(path)
            _read_experiences(scan, scan.read(EXPERIENCES, data), out.memories)
            if data is not None:
                # Where appended lines start next time (see `scan_appended`).
                out.data["newlines"] = data.count(b"\n")
        out.problems = scan.result.problems
        return out

    def scan_appended(
        self, root: Path, path: Path, previous: FileScan, tail: bytes, first_line: int
    ) -> FileScan | None:
        """`previous` plus the lines appended to `experiences.jsonl` (None for other files).

        The raw store is append-only and each line is read on its own, so the
        lines already read stay exactly as they were: only the tail is parsed.
        The WAL and view stores are not extended this way (their lines
        interact: duplicates, pins superseded by later views).
        """
        if previous.rel != EXPERIENCES or path.name != EXPERIENCES:
            return None
        scan = _Scan(root=root)
        memories: list[Memory] = []
        try:
            items = parse_json_lines(tail, first_line)
        except ValueError:
            return None
        good: list[JsonLine] = []
        for item in items:
            if isinstance(item, LineError):
                scan.problem(EXPERIENCES, item.line, item.reason, item.detail)
            else:
                good.append(item)
        _read_experiences(scan, good, memories)
        # `appended` tells relink how much was there before (the objects are kept).
        data = dict(previous.data)
        data["appended"] = (len(previous.memories), len(previous.problems))
        if isinstance(previous.data.get("newlines"), int):
            data["newlines"] = previous.data["newlines"] + tail.count(b"\n")
        return FileScan(
            previous.rel,
            order=previous.order,
            memories=[*previous.memories, *memories],
            problems=[*previous.problems, *scan.result.problems],
            data=data,
            # Every memory read before is the very object it was: nothing to match up.
            kept_objects=True,
        )

    def link(self, root: Path, scans: Mapping[str, FileScan]) -> ScanResult:
        empty = FileScan("")
        wal = scans.get(WAL, empty)
        views_fs = scans.get(VIEWS, empty)
        stances_fs = scans.get(STANCES, empty)
        experiences = scans.get(EXPERIENCES, empty)

        scan = _Scan(root=root)
        scan.states = wal.data.get("states", {})
        scan.pinned_by = views_fs.data.get("pinned_by", {})
        scan.edits = views_fs.data.get("edits", {})
        scan.edited_by = views_fs.data.get("edited_by", {})
        views: list[dict[str, Any]] = views_fs.data.get("records", [])
        stances: list[dict[str, Any]] = stances_fs.data.get("records", [])
        scan.result.records["wal"] = wal.data.get("records", [])
        scan.result.records["views"] = views
        scan.result.records["stances"] = stances
        record_problems = [*wal.problems, *views_fs.problems, *stances_fs.problems]

        for problem in experiences.problems:
            if problem.title is not None and problem.id is not None and scan.erased(problem.id):
                # An erased record's content must not show, not even as a title.
                problem = replace(problem, title=None)
            scan.result.problems.append(problem)

        candidates: list[Memory] = []
        touched = scan.states.keys() | scan.pinned_by.keys() | scan.edited_by.keys()
        for pre in experiences.memories:
            if pre.id not in touched:
                candidates.append(pre)
                continue
            memory = _build_memory(scan, pre.fields, pre.line or 0)
            if memory.tombstoned:
                # Kept out of the Memory; needed only for the lattice check.
                parents = pre.fields.get("parents")
                memory.native["_parents"] = list(parents) if _is_str_list(parents) else []
            candidates.append(memory)

        unique, dups = split_duplicates(candidates, FORMAT_ID, root)
        scan.result.problems.extend(dups)
        rank = {m.id: TYPE_RANK[m.kind] for m in unique}
        memories = _lattice_split(scan, unique, rank)
        for m in memories:
            if m.tombstoned:
                m.native.pop("_parents", None)
        exp_ids = {m.id for m in memories}
        scan.result.memories = _check_memory_refs(scan, memories, exp_ids)
        n_refs = len(scan.result.ref_problems)

        any_ids = exp_ids | {v["id"] for v in views} | {s["id"] for s in stances}
        scan.result.records["edges"] = []
        _check_record_refs(scan, "views", views, exp_ids, any_ids)
        _check_record_refs(scan, "stances", stances, exp_ids, any_ids)

        scan.result.problems.sort(key=lambda p: p.line or 0)
        n_exp = len(scan.result.problems)
        scan.result.problems.extend(record_problems)
        # For relink (appended experiences): see `_ExperienceLinkState`.
        scan.result.link_state = _ExperienceLinkState(
            rank=rank,
            valid=exp_ids,
            dup_ids={p.id for p in dups if p.id is not None},
            n_exp=n_exp,
            n_refs=n_refs,
        )
        return scan.result

    def relink(
        self,
        root: Path,
        scans: Mapping[str, FileScan],
        previous: ScanResult,
        changes: Changes,
    ) -> ScanResult | None:
        """`link` after lines were appended to `experiences.jsonl`, in O(lines appended).

        The records read before keep their place and objects; the new ones
        are checked against the vault's tables (ids, lattice ranks, valid
        ids), their references resolved, and their problems put where a full
        link sorts them.  A new id that is already used, or that anything
        already names (a parent, an evidence pointer, a view or a stance),
        would change records read before: None, link in full.  So does any
        other change.  `previous` gives up its link state either way.
        """
        state = previous.link_state
        previous.link_state = None
        if not isinstance(state, _ExperienceLinkState) or set(changes) != {EXPERIENCES}:
            return None
        before, after = changes[EXPERIENCES]
        if before is None or after is None:
            return None
        n_mem, n_prob = len(before.memories), len(before.problems)
        if after.data.get("appended") != (n_mem, n_prob) or (
            n_mem and after.memories[n_mem - 1] is not before.memories[n_mem - 1]
        ):
            return None
        if len(previous.problems) < state.n_exp or len(previous.ref_problems) < state.n_refs:
            return None
        empty = FileScan("")
        wal = scans.get(WAL, empty)
        views_fs = scans.get(VIEWS, empty)
        stances_fs = scans.get(STANCES, empty)
        scan = _Scan(root=root)
        scan.states = wal.data.get("states", {})
        scan.pinned_by = views_fs.data.get("pinned_by", {})
        scan.edits = views_fs.data.get("edits", {})
        scan.edited_by = views_fs.data.get("edited_by", {})

        fresh = after.memories[n_mem:]
        ids = [m.id for m in fresh]
        if len(set(ids)) != len(ids):
            return None
        if any(i in state.rank or i in state.dup_ids for i in ids):
            return None
        if state.named is None:
            state.named = _named_ids(
                before.memories,
                views_fs.data.get("records", []),
                stances_fs.data.get("records", []),
            )
        if any(i in state.named for i in ids):
            return None

        touched = scan.states.keys() | scan.pinned_by.keys() | scan.edited_by.keys()
        candidates: list[Memory] = []
        for pre in fresh:
            memory = pre
            if pre.id in touched:
                memory = _build_memory(scan, pre.fields, pre.line or 0)
                if memory.tombstoned:
                    parents = pre.fields.get("parents")
                    memory.native["_parents"] = list(parents) if _is_str_list(parents) else []
            candidates.append(memory)
            state.rank[memory.id] = TYPE_RANK[memory.kind]
            state.named.update(_parents_of(memory))
            state.named.update(r.target for r in pre.relations)
        kept = _lattice_split(scan, candidates, state.rank)
        for m in kept:
            if m.tombstoned:
                m.native.pop("_parents", None)
        state.valid.update(m.id for m in kept)
        added = _check_memory_refs(scan, kept, state.valid)

        problems: list[Problem] = list(scan.result.problems)  # lattice violations
        for problem in after.problems[n_prob:]:
            if problem.title is not None and problem.id is not None and scan.erased(problem.id):
                problem = replace(problem, title=None)
            problems.append(problem)
        # Appended lines come after every line read before: only they need sorting.
        problems.sort(key=lambda p: p.line or 0)
        refs = scan.result.ref_problems

        result = ScanResult(
            memories=[*previous.memories, *added],
            problems=[
                *previous.problems[: state.n_exp],
                *problems,
                *previous.problems[state.n_exp :],
            ],
            ref_problems=[
                *previous.ref_problems[: state.n_refs],
                *refs,
                *previous.ref_problems[state.n_refs :],
            ],
            records=dict(previous.records),
        )
        state.n_exp += len(problems)
        state.n_refs += len(refs)
        result.link_state = state
        return result

    def decay_brief(self, memory: Memory, as_of: date) -> tuple[str, Health, float, float | None]:
        """(status, health, weight, score) of `decay`, without its explanation."""
        status = _status_of(memory)
        return status, STATUS_HEALTH[status], 1.0 if status == "live" else 0.0, None

    def decay(self, memory: Memory, as_of: date, *, explain: bool = True) -> DecayInfo:
        created = memory.created
        if isinstance(created, datetime) and created.tzinfo is not None:
            # created_at is a UTC capture time: count days from its UTC date.
            created = created.astimezone(UTC)
        age = days_between(created, as_of) if created is not None else None
        status = _status_of(memory)
        live = status == "live"
        if not explain:
            return DecayInfo(
                status=status,
                health=STATUS_HEALTH[status],
                strength=1.0 if live else 0.0,
                weight=1.0 if live else 0.0,
                age_days=max(0, age) if age is not None else None,
            )
        age_text = "unknown" if age is None else f"{age} day{'s' if age != 1 else ''}"
        if status == "tombstoned":
            info = memory.native.get("tombstone") or {}
            why = (
                "No decay model in the experience-record format; the record is excluded from "
                f"the live set only because {info.get('wal_id') or 'the WAL'} carries a tombstone "
                f"op for it (reason {info.get('reason') or 'unstated'}, "
                f"ts {info.get('ts') or '?'}). "
                "Content must not be shown; the raw line stays on disk (append-only store)."
            )
        elif status == "archived":
            info = memory.native.get("archive") or {}
            why = (
                "No decay model in the experience-record format; archived by a tombstone op "
                f"with reason 'archived' in {info.get('wal_id') or 'the WAL'} "
                f"(ts {info.get('ts') or '?'}). Content stays readable; a later WAL restore op "
                f"brings it back. Age {age_text}."
            )
        else:
            why = (
                "The experience-record format defines no decay or TTL: raw experiences are "
                "immutable and stay live until a WAL tombstone names them. "
                f"Age {age_text} and confidence.p do not change status."
            )
            if memory.pinned:
                why += f" Pinned by view {memory.native.get('pinned_by', '?')}."
        return DecayInfo(
            status=status,
            health=STATUS_HEALTH[status],
            strength=1.0 if live else 0.0,
            weight=1.0 if live else 0.0,
            age_days=max(0, age) if age is not None else None,
            why=why,
        )


def _status_of(memory: Memory) -> str:
    """A record's decay status: the WAL decides, age never does."""
    if memory.tombstoned:
        return "tombstoned"
    return "archived" if memory.archived else "live"


__all__ = [
    "EDITABLE_FIELDS",
    "EXPERIENCES",
    "LATTICE",
    "LENS_EDIT",
    "STANCES",
    "TYPE_RANK",
    "VIEWS",
    "WAL",
    "ExperienceRecordAdapter",
    "JsonLine",
    "LineError",
    "archive_op",
    "edit_value_problem",
    "experience_problem",
    "is_external_pointer",
    "next_wal_id",
    "parse_json_lines",
    "pin_view",
    "read_json_lines",
    "restore_op",
    "title_of",
    "view_problem",
    "wal_problem",
]
