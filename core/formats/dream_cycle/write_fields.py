"""Edits of a section's `<!-- dc:... -->` comment: field names and values checked,
the comment rewritten in place (or created, or dropped) and planned.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any

from ...errors import ConflictError, RefusedError
from ...model import Memory
from ...text.dates import parse_date, parse_datetime
from ...text.yamledit import REMOVE
from ...write.journal import FileChange, Plan
from .files import OBSERVATIONS
from .sections import Section
from .write_files import (
    TextFile,
    VaultState,
    _ending,
    check_section,
    plan_of,
    scan_candidate,
    splice,
)

#: Phase 3 defaults written when a tag must be created.
DEFAULT_TYPE = "fact"
DEFAULT_IMPORTANCE = "5.0"
REQUIRED = ("dc:type", "dc:importance", "dc:date")

_TOKEN = re.compile(r"(?:^|(?<=\s))dc:([^\s=]+)=(\S*)")
_KEY = re.compile(r"dc:[A-Za-z0-9_.\-]+")
_NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$")
_INTEGER = re.compile(r"^\+?\d+$")

_ALIASES = {"ttl_days": "dc:ttl", "kind": "dc:type"}


def _comment_span(lines: list[str], sec: Section) -> tuple[int, int, str, int, int]:
    """(first, last) 0-based comment lines, their joined text, `<!--` and `-->` offsets."""
    assert sec.comment_line is not None and sec.comment_end_line is not None
    first, last = sec.comment_line - 1, sec.comment_end_line - 1
    region = "\n".join(lines[first : last + 1])
    open_at = region.find("<!--")
    close_at = region.find("-->", open_at + 4)
    if open_at < 0 or close_at < 0:
        raise ConflictError(f"{OBSERVATIONS}: the metadata comment of '{sec.title}' moved")
    return first, last, region, open_at, close_at


def edit_inner(inner: str, changes: dict[str, str | None]) -> str:
    """Edit `dc:key=value` tokens in a comment's inner text, touching nothing else.

    A changed value is replaced in place (first occurrence, as the adapter
    reads it); a None value removes the token and one run of spaces; a new key
    is added before the closing `-->`.
    """
    for key, value in changes.items():
        name = key[3:]
        m = next((t for t in _TOKEN.finditer(inner) if t.group(1) == name), None)
        if value is None:
            if m is None:
                continue
            s, e = m.start(), m.end()
            j = s
            while j > 0 and inner[j - 1] in " \t":
                j -= 1
            if j > 0 and inner[j - 1] != "\n":
                s = j
            else:
                while e < len(inner) and inner[e] in " \t":
                    e += 1
            inner = inner[:s] + inner[e:]
        elif m is not None:
            inner = inner[: m.start(2)] + value + inner[m.end(2) :]
        else:
            core = inner.rstrip()
            trail = inner[len(core) :]
            sep = " " if core and not core[-1].isspace() else ""
            inner = f"{core}{sep}{key}={value}{trail}"
    return inner


def rewrite_comment(
    f: TextFile, raw: list[bytes], sec: Section, changes: dict[str, str | None]
) -> list[bytes]:
    """`raw` with only the section's comment line(s) rewritten (line endings kept)."""
    first, last, region, open_at, close_at = _comment_span(f.lines, sec)
    inner = edit_inner(region[open_at + 4 : close_at], changes)
    new_lines = (region[: open_at + 4] + inner + region[close_at:]).split("\n")
    if len(new_lines) != last - first + 1:
        raise RefusedError("the metadata edit would change the comment's line count; not written")
    out = list(raw)
    for k, text in enumerate(new_lines):
        old = f.lines[first + k]
        if text != old:
            out[first + k] = text.encode("utf-8") + _ending(raw[first + k])
    return out


def _show_fields(fields: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in fields.items())


def _new_comment(fields: dict[str, str]) -> str:
    return f"<!-- {_show_fields(fields)} -->"


def _apply_changes(fields: dict[str, str], changes: dict[str, str | None]) -> dict[str, str]:
    out = dict(fields)
    for k, v in changes.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = v
    return out


def _label(key: str) -> str:
    return key[3:] if key.startswith("dc:") else key


def field_key(name: object) -> str:
    """The dc key for a `set` field name (`importance`, `dc:importance`, ...)."""
    if not isinstance(name, str) or not name.strip():
        raise RefusedError(f"{name!r}: not a field name")
    key = name.strip()
    key = _ALIASES.get(key, key)
    if key in ("title", "heading"):
        raise RefusedError(
            f"{key}: the heading is not metadata (the section id derives from it);"
            " edit it in the file"
        )
    if key in ("body", "text"):
        raise RefusedError(f"{key}: use edit body to change the section's text")
    if not key.startswith("dc:"):
        key = f"dc:{key}"
    if not _KEY.fullmatch(key):
        raise RefusedError(f"{_label(key)}: not a usable dc field name (letters, digits, _ . -)")
    return key


def _num_text(x: float | int) -> str:
    if isinstance(x, int):
        return str(x)
    text = repr(x)
    if "e" in text or "E" in text:
        text = f"{x:.10f}".rstrip("0")
        text = text + "0" if text.endswith(".") else text
    return text


def field_value(key: str, value: Any) -> str | None:
    """The text to write for `key`, validated; None means remove the field."""
    label = _label(key)
    if value is None or value is REMOVE:
        return None
    if isinstance(value, bool):
        raise RefusedError(f"{label}: {value!r} is not a valid value (true/false)")
    if isinstance(value, list | tuple | dict | set):
        raise RefusedError(f"{label}: must be a single value, not {type(value).__name__}")
    if key in ("dc:importance", "dc:confidence"):
        high = 10.0 if key == "dc:importance" else 1.0
        if isinstance(value, int | float):
            if value != value or value in (float("inf"), float("-inf")):
                raise RefusedError(f"{label}: {value!r} is not a number")
            text = _num_text(value)
            number = float(value)
        elif isinstance(value, str) and _NUMBER.match(value.strip()):
            text = value.strip()
            number = float(text)
        else:
            raise RefusedError(f"{label}: {value!r} is not a number")
        if not 0.0 <= number <= high:
            raise RefusedError(f"{label}: {text} is outside 0.0-{high:.1f}")
        return text
    if key in ("dc:date", "dc:decayed"):
        if isinstance(value, datetime):
            raise RefusedError(f"{label}: {value.isoformat()} is not a YYYY-MM-DD date")
        when = value if isinstance(value, date) else parse_date(str(value))
        if when is None:
            raise RefusedError(f"{label}: {value!r} is not a YYYY-MM-DD date")
        return when.isoformat()
    if key == "dc:ttl":
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        text = str(value).strip()
        if text.lower() == "never":
            return "never"
        if not _INTEGER.match(text):
            raise RefusedError(f"ttl: {value!r} is not a whole number of days or 'never'")
        return str(int(text))
    if isinstance(value, date):
        text = value.isoformat()
    elif isinstance(value, int | float):
        text = _num_text(value)
    else:
        text = str(value).strip()
    if not text:
        raise RefusedError(f"{label}: empty value (use null to remove the field)")
    if any(c.isspace() for c in text):
        raise RefusedError(f"{label}: {text!r} contains spaces; a dc value is one word")
    if "-->" in text or "<!--" in text:
        raise RefusedError(f"{label}: {text!r} would break the metadata comment")
    return text


def _as_date(value: Any, name: str) -> date | None:
    if value is None:
        return None
    when = parse_datetime(value) if not isinstance(value, bool) else None
    if when is None:
        raise RefusedError(f"{name}: {value!r} is not an ISO date")
    return when.date() if isinstance(when, datetime) else when


def meta_plan(
    action: str,
    state: VaultState,
    fresh: Memory,
    sec: Section,
    changes: dict[str, str | None],
    summary: str,
    *,
    create: dict[str, str] | None = None,
    drop_comment: bool = False,
) -> Plan:
    """Rewrite (or create, or drop) one section's comment; validate; plan."""
    raw = state.obs.raw
    if drop_comment:
        first, last, region, open_at, close_at = _comment_span(state.obs.lines, sec)
        if region[:open_at].strip() or region[close_at + 3 :].strip():
            raise RefusedError("the comment shares its line with other text; not removed")
        new_raw = splice(state.obs, raw, first, last + 1, [])
        expected: dict[str, str] = {}
    elif create is not None:
        fields = _apply_changes(create, changes)
        new_raw = splice(state.obs, raw, sec.start_line, sec.start_line, [_new_comment(fields)])
        expected = fields
    else:
        new_raw = rewrite_comment(state.obs, raw, sec, changes)
        expected = _apply_changes(dict(sec.fields), changes)
    new = state.obs.render(new_raw)
    if new == state.obs.data:
        raise RefusedError(f"{OBSERVATIONS}: nothing to change (the values are already set)")
    after = scan_candidate(state, obs=new)
    check_section(state, after, fresh, expected_fields=expected)
    return plan_of(
        action,
        state,
        [fresh.id],
        summary,
        [FileChange("write", state.obs.path, state.obs.snap, data=new, append_only=True)],
    )
