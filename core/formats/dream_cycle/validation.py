"""Checks of a section's dc fields: a fault raises `_Invalid` and the section becomes a problem."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from ...model import Reason
from ...text.dates import parse_date
from .classify import TYPE_TTL, effective_type

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

_NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$")
_INTEGER = re.compile(r"^[+-]?\d+$")

#: Longest TTL accepted (about 2,700 years); anything longer is surely a typo.
TTL_MAX = 1_000_000


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
