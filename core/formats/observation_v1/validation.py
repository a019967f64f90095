"""Field checks of one document: the first fault raises a `ParseError` naming the field
and its line.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime
from typing import Any, NoReturn

from ...errors import ParseError
from ...model import Reason
from ...text.dates import parse_datetime
from ...text.frontmatter import SplitDocument
from ...text.paths import has_path_syntax
from .schema import CONFIDENCE_LEVELS


class _Checker:
    """Field checks that raise ParseError with the file, id and header line."""

    def __init__(self, rel: str, data: dict[str, Any], doc: SplitDocument) -> None:
        self.rel = rel
        self.data = data
        self.doc = doc
        raw_id = data.get("id")
        self.id = raw_id if isinstance(raw_id, str) and raw_id.strip() else None

    def fail(self, reason: Reason, detail: str, key: str | None) -> NoReturn:
        # Without a key (a field is missing) point at the header's first line.
        at_line = self._line_of(key) if key else 1
        raise ParseError(self.rel, reason, detail, at_line=at_line, id=self.id)

    def _line_of(self, key: str) -> int | None:
        """1-based file line of a top-level `key:` in the header, if found."""
        top = key.split(".", 1)[0]
        for i, line in enumerate(self.doc.header.split("\n")):
            if line.startswith((f"{top}:", f'"{top}":', f"'{top}':")):
                return 2 + i
        return None

    def required(self, keys: Iterable[str]) -> None:
        """Absent keys only: a null or empty value is checked by the field's type."""
        missing = [k for k in keys if k not in self.data]
        if missing:
            self.fail(Reason.MISSING_REQUIRED_FIELD, f"lacks {', '.join(missing)}", None)

    def spec(self, expected: str) -> None:
        """A spec, when given, must be `expected` (absence is checked separately)."""
        value = self.data.get("spec", expected)
        if value != expected:
            self.fail(Reason.WRONG_TYPE, f"spec {_show(value)} is not {expected!r}", "spec")

    def identifier(self) -> str:
        value = self.data.get("id")
        if not isinstance(value, str):
            self.fail(Reason.WRONG_TYPE, f"id must be a string, not {_show(value)}", "id")
        self._not_blank(value, "id", "id")
        # Why: ids name files in actions (promote writes `<id>.md`) and are
        # matched against references; path syntax in one is never safe.
        if has_path_syntax(value):
            self.fail(Reason.WRONG_TYPE, f"id {_show(value)} must be a bare name, not a path", "id")
        return value

    def string(self, key: str) -> str:
        value = self.data.get(key)
        if not isinstance(value, str):
            self.fail(Reason.WRONG_TYPE, f"{key} must be a string, not {_type_name(value)}", key)
        self._not_blank(value, key, key)
        return value

    def _not_blank(self, value: str, name: str, key: str) -> None:
        # Right type, value outside the field's range: see the module docstring.
        if not value.strip():
            self.fail(Reason.OUT_OF_RANGE, f"{name} is empty", key)

    def timestamp(self, key: str) -> datetime | date:
        value = self.data.get(key)
        parsed = None if isinstance(value, bool) else parse_datetime(value)
        if parsed is None:
            self.fail(Reason.WRONG_TYPE, f"{key} {_show(value)} is not an ISO datetime", key)
        return parsed

    def mapping(self, key: str) -> dict[Any, Any]:
        value = self.data.get(key)
        if not isinstance(value, dict):
            self.fail(Reason.WRONG_TYPE, f"{key} must be a mapping, not {_type_name(value)}", key)
        return value

    def nested_string(self, block: dict[Any, Any], parent: str, key: str) -> str:
        value = block.get(key)
        if not isinstance(value, str):
            self.fail(
                Reason.WRONG_TYPE,
                f"{parent}.{key} must be a string, not {_type_name(value)}",
                parent,
            )
        self._not_blank(value, f"{parent}.{key}", parent)
        return value

    def confidence(self, block: dict[Any, Any], parent: str) -> str:
        value = block.get("confidence")
        levels = "/".join(CONFIDENCE_LEVELS)
        if not isinstance(value, str):
            self.fail(
                Reason.WRONG_TYPE,
                f"{parent}.confidence {_show(value)} is not one of {levels}",
                parent,
            )
        if value not in CONFIDENCE_LEVELS:
            self.fail(
                Reason.OUT_OF_RANGE,
                f"{parent}.confidence {_show(value)} is not one of {levels}",
                parent,
            )
        return value

    def id_list(self, value: Any, name: str) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.fail(
                Reason.WRONG_TYPE,
                f"{name} must be a list of observation ids, not {_show(value)}",
                name,
            )
        return value


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _show(value: Any, limit: int = 60) -> str:
    """A short one-line rendering of a bad value for a problem detail."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _str_items(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
