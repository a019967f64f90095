"""archive.jsonl entries and restore markers: one JSON object a line, append-only."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...model import Memory, Problem, Reason
from ...text.dates import parse_datetime
from .classify import effective_type
from .files import ARCHIVE_JSONL, FORMAT_ID, _read, problem
from .ids import short_title
from .validation import _clip, _Invalid

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


def _archive_title(full_text: str) -> str:
    """Title of an archive entry: the section heading when the entry keeps one.

    memlens archives a section whole (heading, comment, body) so restore can
    rebuild it byte for byte; its title is that heading without the `## `.
    """
    first = full_text.lstrip("\r\n").split("\n", 1)[0]
    if first.startswith("## "):
        return first[3:].strip()
    return short_title(full_text)


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


def scan_archive(
    root: Path, out: list[Memory], problems: list[Problem], raw: bytes | None = None
) -> None:
    rel = ARCHIVE_JSONL
    data = _read(root / rel) if raw is None else raw
    if data is None:
        return
    if isinstance(data, OSError):
        problems.append(
            problem(root, rel, Reason.UNREADABLE, f"cannot read the file: {data.strerror or data}")
        )
        return
    decoded = _decode_lines(data)
    restored = restore_markers(decoded.lines, decoded.bad)
    for n, text in enumerate(decoded.lines, 1):
        if n in decoded.bad:
            problems.append(problem(root, rel, Reason.ENCODING, decoded.bad[n], line=n, at_line=n))
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
            out.append(archive_memory(root, rel, n, text))
        except _Invalid as inv:
            problems.append(
                problem(
                    root,
                    rel,
                    inv.reason,
                    inv.detail,
                    id=_peek_id(text),
                    line=n,
                    at_line=n,
                )
            )


def archive_memory(root: Path, rel: str, n: int, text: str) -> Memory:
    obj = _load_json_object(text)
    missing = [k for k in ARCHIVE_REQUIRED if obj.get(k) is None]
    if missing:
        raise _Invalid(Reason.MISSING_REQUIRED_FIELD, f"archive entry lacks {', '.join(missing)}")
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
        format=FORMAT_ID,
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
