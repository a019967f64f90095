"""How the writer writes values: timestamps in the file's own style, checked field
changes, and a new body under the same frontmatter.
"""

from __future__ import annotations

import math
from datetime import UTC, date, datetime
from typing import Any

from ...errors import RefusedError
from ...text.dates import parse_datetime
from ...text.yamledit import REMOVE
from .schema import TYPE_DIRS

#: Fields that must not be removed (the adapter requires them).
_REQUIRED = ("id", "type", "title", "importance", "created", "updated")


def _now() -> datetime:
    """The only clock read of this module: used when no explicit time is given."""
    return datetime.now(UTC)


class _Stamp(datetime):
    """A datetime that renders as the exact text chosen for it (keeps `Z`, separators)."""

    text: str

    def isoformat(self, sep: str = "T", timespec: str = "auto") -> str:
        return self.text


def _stamp(value: datetime, text: str) -> _Stamp:
    out = _Stamp(
        value.year,
        value.month,
        value.day,
        value.hour,
        value.minute,
        value.second,
        value.microsecond,
        tzinfo=value.tzinfo,
    )
    out.text = text
    return out


def _format_like(old: datetime | date, old_text: str, now: datetime) -> tuple[datetime | date, str]:
    """`now` as a value and text in the style of an existing timestamp."""
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    if not isinstance(old, datetime):
        day = now.astimezone(UTC).date()
        return day, day.isoformat()
    if old.tzinfo is None:
        new = now.astimezone(UTC).replace(tzinfo=None)
    else:
        new = now.astimezone(old.tzinfo)
    if old.microsecond == 0:
        new = new.replace(microsecond=0)
    sep = old_text[10] if len(old_text) > 10 and old_text[10] in "Tt " else "T"
    text = new.isoformat(sep=sep, timespec="seconds" if old.microsecond == 0 else "microseconds")
    stripped = old_text.rstrip()
    if stripped[-1:] in ("Z", "z") and new.utcoffset() is not None and text.endswith("+00:00"):
        text = text[: -len("+00:00")] + stripped[-1]
    return new, text


def _raw_value_text(text: str, key: str) -> str:
    """The scalar text of top-level `key` in a frontmatter (quotes removed)."""
    for line in text.split("\n")[1:]:
        body = line.rstrip("\r")
        if body.rstrip() in ("---", "..."):
            break
        if body.startswith(f"{key}:"):
            value = body[len(key) + 1 :].strip()
            if " #" in value:
                value = value.split(" #", 1)[0].rstrip()
            return value.strip("'\"")
    return ""


def bumped_updated(fields: dict[str, Any], raw_text: str, now: datetime) -> Any:
    """The new `updated` value (typed for edit_frontmatter) in the old value's style."""
    old = fields.get("updated")
    old_text = _raw_value_text(raw_text, "updated")
    if isinstance(old, str):
        parsed = parse_datetime(old)
        if parsed is None:
            raise RefusedError(f"updated: {old!r} is not an ISO 8601 timestamp")
        _, text = _format_like(parsed, old, now)
        return text  # a quoted string stays a quoted string
    if isinstance(old, datetime | date):
        value, text = _format_like(old, old_text or old.isoformat(), now)
        if isinstance(value, datetime):
            return _stamp(value, text)
        return value
    raise RefusedError("updated: missing or not a timestamp; cannot bump it")


def _fraction_ok(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RefusedError(f"{name}: {value!r} is not a number")
    if not math.isfinite(float(value)) or not 0.0 <= float(value) <= 1.0:
        raise RefusedError(f"{name}: {value} is outside 0.0-1.0")


def _check_change(key: str, value: Any) -> None:
    """Field-level checks with messages that name the field and the reason."""
    if value is REMOVE:
        if key in _REQUIRED:
            raise RefusedError(f"{key}: required by the format, cannot be removed")
        return
    if key in ("importance", "confidence"):
        _fraction_ok(key, value)
    elif key == "type":
        if not isinstance(value, str) or value not in TYPE_DIRS:
            raise RefusedError(f"type: {value!r} is not one of {', '.join(TYPE_DIRS)}")
    elif key == "title":
        if not isinstance(value, str) or not value.strip():
            raise RefusedError(f"title: {value!r} is not a non-empty text")
        if "\n" in value or "\r" in value:
            raise RefusedError("title: must be one line")
    elif key in ("tags", "steps", "preconditions", "postconditions"):
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise RefusedError(f"{key}: must be a list of texts")
    elif key in ("created", "updated") and parse_datetime(value) is None:
        raise RefusedError(f"{key}: {value!r} is not an ISO 8601 timestamp")


def _to_text(raw: bytes, rel: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:  # pragma: no cover - a valid memory decodes
        raise RefusedError(f"{rel}: not valid UTF-8; not rewriting it") from None


def _with_body(text: str, body: str) -> str:
    """`text` with everything after the closing frontmatter fence replaced by `body`."""
    lines = text.splitlines(keepends=True)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r\n").rstrip() in ("---", "..."):
            head = "".join(lines[: i + 1])
            if not head.endswith("\n"):
                head += newline
            new_body = body.replace("\r\n", "\n")
            if newline != "\n":
                new_body = new_body.replace("\n", newline)
            return head + new_body
    raise RefusedError("the frontmatter block is never closed")  # pragma: no cover


def _now_of(value: Any) -> datetime:
    if value is None:
        return _now()
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    if isinstance(value, str):
        parsed = parse_datetime(value)
        if isinstance(parsed, datetime):
            return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
    raise RefusedError(f"now: {value!r} is not a timestamp")
