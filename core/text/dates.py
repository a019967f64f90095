"""Date handling shared by adapters and decay: parsing and day arithmetic.

All ages are whole calendar days between dates (the specs count days, and the
fixtures' arithmetic uses dates), computed against an explicit `as_of`.
"""

from __future__ import annotations

import re
from datetime import date, datetime

_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_date(value: object) -> date | None:
    """A `YYYY-MM-DD` date (YAML date, or string); None if it is not one."""
    if isinstance(value, datetime):
        return None
    if isinstance(value, date):
        return value
    if isinstance(value, str) and _DATE_RE.match(value.strip()):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            return None
    return None


def parse_datetime(value: object) -> datetime | date | None:
    """An ISO 8601 timestamp or date (YAML-typed or string); None otherwise."""
    if isinstance(value, datetime | date):
        return value
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or not text[0].isdigit():
        return None
    try:
        if _DATE_RE.match(text):
            return date.fromisoformat(text)
        return datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        return None


def day_of(value: date | datetime) -> date:
    """The calendar date of a date or datetime (in its own time zone)."""
    return value.date() if isinstance(value, datetime) else value


def days_between(start: date | datetime, as_of: date) -> int:
    """Whole days from `start` to `as_of` (negative for a future start)."""
    return (as_of - day_of(start)).days


def iso(value: date | datetime | None) -> str | None:
    """ISO text for JSON output, keeping a time zone where there is one."""
    if value is None:
        return None
    return value.isoformat()
