"""What set and promote accept: field names, values checked, the promote options."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from ...errors import RefusedError
from ...model import Memory
from .schema import EDITABLE_FIELDS
from .validation import edit_value_problem

_TS_FORMAT = "%Y-%m-%dT%H:%M:%SZ"

_PROMOTE_PREFIX = {
    "observation": "Observed: ",
    "inference": "Inferred: ",
    "reconciliation": "Reconciled: ",
}
_FIELD_ALIASES = {"confidence": "confidence.p"}
_RAW_ONLY = {
    "content": "edit the body instead (it derives a new experience; raw text is immutable)",
    "content.text": "edit the body instead (it derives a new experience; raw text is immutable)",
    "text": "edit the body instead (it derives a new experience; raw text is immutable)",
    "body": "edit the body instead (it derives a new experience; raw text is immutable)",
    "type": "promote instead (it derives a higher-type experience; raw records are immutable)",
}
_PROMOTE_OPTIONS = frozenset({"text", "body", "type", "now", "as_of"})


def _show(value: Any) -> str:
    """A value as JSON text, for the human-readable `added` / `removed`."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _parse_now(value: Any) -> datetime:
    if isinstance(value, datetime):
        when = value
    elif isinstance(value, str):
        try:
            when = datetime.fromisoformat(value.strip())
        except ValueError:
            raise RefusedError(f"now: {value!r} is not an ISO 8601 timestamp") from None
    else:
        raise RefusedError(f"now: {value!r} is not an ISO 8601 timestamp")
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _normalize_field(name: str, value: Any) -> tuple[str, Any]:
    """The native field name and a checked value, or RefusedError naming the field."""
    key = _FIELD_ALIASES.get(name, name)
    if key in _RAW_ONLY:
        raise RefusedError(f"{name}: not editable on a raw experience; {_RAW_ONLY[key]}")
    if key not in EDITABLE_FIELDS:
        raise RefusedError(
            f"{name}: not editable on an experience record (raw records are immutable; "
            f"an edit view can change {', '.join(EDITABLE_FIELDS)})"
        )
    if key == "tags":
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list | tuple) and all(isinstance(t, str) for t in value):
            cleaned: list[str] = []
            for tag in value:
                tag = tag.strip()
                if tag and tag not in cleaned:
                    cleaned.append(tag)
            value = cleaned
    elif key == "confidence.p":
        if isinstance(value, str):
            try:
                value = float(value.strip())
            except ValueError:
                raise RefusedError(f"{name}: {value!r} is not a number") from None
        if (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and not 0.0 <= value <= 1.0
        ):
            raise RefusedError(f"{name}: {value!r} is outside 0.0-1.0")
    elif key == "note" and isinstance(value, str) and not value.strip():
        value = None  # an empty note clears it
    bad = edit_value_problem(key, value)
    if bad is not None:
        raise RefusedError(f"{name}: {bad[1]}")
    return key, value


def _current_value(memory: Memory, key: str) -> Any:
    if key == "tags":
        return list(memory.tags)
    if key == "confidence.p":
        return memory.confidence
    return memory.native.get("note")
