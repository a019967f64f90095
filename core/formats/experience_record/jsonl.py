"""JSON Lines reading: one object a line, strictly decoded; a bad line becomes a `LineError`."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...model import Reason
from ...safe_io import read_regular

_BOM = b"\xef\xbb\xbf"
_JSON_WS = " \t\r\n"
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


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
