"""What `set` and promote accept: required and date fields, values checked per field,
the promote date and the promoted-from hint.
"""

from __future__ import annotations

import math
import os
from datetime import date, datetime
from pathlib import Path
from typing import Any

from ...errors import ParseError, RefusedError
from ...text.dates import parse_date
from ...text.paths import safe_join
from ...text.yamledit import REMOVE
from .decay import parse_decay_spec
from .decay2 import parse_max_age
from .linking import backlink_name, ref_by_id
from .observations import parse_observation

#: Fields the format requires; `set` may change them but never remove them.
_REQUIRED: tuple[str, ...] = ("tags", "confidence", "created", "source")

#: Fields whose value is a YYYY-MM-DD date.
_DATE_FIELDS: tuple[str, ...] = ("created", "promoted_at")


def _refuse_if_promoted(root: Path, dst_rel: str) -> Path:
    """RefusedError("already promoted ...") if a shared copy (live or archived) exists.

    Returns where the archived copy would be (checked absent), so the plan
    can refuse to apply if one appears there meanwhile.
    """
    name = dst_rel.rsplit("/", 1)[-1]
    archived_rel = f"shared/observations/archive/{name}"
    archived = safe_join(root, *archived_rel.split("/"))
    for rel in (dst_rel, archived_rel):
        path = safe_join(root, *rel.split("/"))
        if os.path.lexists(path):
            raise RefusedError(f"already promoted: {rel} exists{_promoted_from_hint(root, rel)}")
    return archived


def _promoted_from_hint(root: Path, rel: str) -> str:
    """` (promoted_from: hawk)` when the existing copy says where it came from."""
    try:
        copy = parse_observation(root, rel)
    except (ParseError, OSError, ValueError):
        return ""
    origin = copy.native.get("promoted_from")
    return f" (promoted_from: {origin})" if isinstance(origin, str) else ""


def _promote_date(value: object) -> date:
    """`promoted_at`: the caller's as_of, else today (the writer's one clock read)."""
    if value is None:
        return date.today()
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    parsed = parse_date(value)
    if parsed is None:
        raise RefusedError(f"as_of: {value!r} is not a YYYY-MM-DD date")
    return parsed


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_field(name: str, value: Any) -> Any:
    """The value to write for `name` (REMOVE for null), or RefusedError naming the field."""
    if value is None:
        if name in _REQUIRED:
            raise RefusedError(f"{name}: is required and cannot be removed")
        return REMOVE
    if name == "tags":
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise RefusedError(f"tags: {value!r} is not a list of strings")
        return list(value)
    if name == "confidence":
        if not _is_number(value):
            raise RefusedError(f"confidence: {value!r} is not a number between 0.0 and 1.0")
        if not math.isfinite(value) or not 0.0 <= value <= 1.0:
            raise RefusedError(f"confidence: {value} is outside 0.0-1.0")
        return value
    if name in _DATE_FIELDS:
        parsed = parse_date(value)
        if parsed is None:
            raise RefusedError(f"{name}: {value!r} is not a YYYY-MM-DD date")
        return parsed
    if name in ("source", "promoted_from"):
        if not isinstance(value, str) or not value.strip():
            raise RefusedError(f"{name}: {value!r} is not a non-empty string")
        return value
    if name == "decay":
        if parse_decay_spec(value) is None:
            raise RefusedError(
                f"decay: {value!r} is not linear-Nd or exponential-Nd "
                "(N a whole number of days; null makes the observation permanent)"
            )
        return value
    if name == "backlinks":
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise RefusedError(f"backlinks: {value!r} is not a list of observation names")
        for ref in value:
            if backlink_name(ref) is None:
                raise RefusedError(
                    f"backlinks: {ref!r} is not a bare observation name (obs-YYYY-MM-DD-NNN); "
                    "paths are refused"
                )
        return list(value)
    if name in ("importance", "neglect_penalty"):
        if not _is_number(value) or not math.isfinite(value) or not 0.0 <= value <= 1.0:
            raise RefusedError(f"{name}: {value!r} is not a number between 0.0 and 1.0")
        return value
    if name == "max_age":
        try:
            parse_max_age(value)
        except ValueError:
            raise RefusedError(
                f"max_age: {value!r} is not Nd (a whole number of days) or permanent"
            ) from None
        return value
    if name == "refs":
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise RefusedError(f"refs: {value!r} is not a whole number >= 0")
        return value
    if name == "ref_by":
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise RefusedError(f"ref_by: {value!r} is not a list of agent/obs-... names")
        for ref in value:
            if ref_by_id(ref) is None:
                raise RefusedError(f"ref_by: {ref!r} is not agent/name; paths are refused")
        return list(value)
    if name in ("verified", "pinned", "promoted"):
        if not isinstance(value, bool):
            raise RefusedError(f"{name}: {value!r} is not true or false")
        return value
    return value  # an extra field: any YAML value, kept as given
