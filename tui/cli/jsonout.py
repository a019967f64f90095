"""`json.dumps(data, ensure_ascii=False, indent=2, default=str)`, byte for byte, faster.

The standard library only uses its C encoder without `indent`; with it, every
value goes through nested Python generators, which took about 8 s of a
100k-memory `memlens list --json`.  This encoder walks the value once with
plain recursion and joins strings, using the standard library's own C string
escaper and `float.__repr__`, so the text is identical (a differential test
compares them on generated values).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from json.encoder import encode_basestring
from typing import Any

_INDENT = "  "


def dumps_indented(data: Any) -> str:
    """The text `json.dumps(data, ensure_ascii=False, indent=2, default=str)` gives."""
    out: list[str] = []
    _encode(data, out, "\n")
    return "".join(out)


def iter_indented(data: Any) -> Iterator[str]:
    """`dumps_indented(data)` in pieces, one per element of a top-level list.

    Why: `list --json` at 100k memories held the whole text as millions of
    small strings at once (the command's peak memory); piece by piece, only
    one record's pieces are alive at a time.  Joined, the pieces are the
    same text.
    """
    if not isinstance(data, list | tuple) or not data:
        yield dumps_indented(data)
        return
    inner = "\n" + _INDENT
    first = True
    for item in data:
        out = ["[" + inner if first else "," + inner]
        first = False
        _encode(item, out, inner)
        yield "".join(out)
    yield "\n]"


def _key(key: Any) -> str:
    # What json.dumps does with non-string keys (YAML metadata can have them).
    if isinstance(key, str):
        return key
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, float):
        return _float(key)
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _float(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def _encode(value: Any, out: list[str], newline: str) -> None:
    if isinstance(value, str):
        out.append(encode_basestring(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(_float(value))
    elif isinstance(value, list | tuple):
        _encode_list(value, out, newline)
    elif isinstance(value, dict):
        _encode_dict(value, out, newline)
    else:
        # `default=str`: the string is then encoded like any other.
        _encode(str(value), out, newline)


def _encode_list(value: list[Any] | tuple[Any, ...], out: list[str], newline: str) -> None:
    if not value:
        out.append("[]")
        return
    inner = newline + _INDENT
    out.append("[")
    first = True
    for item in value:
        out.append(inner if first else "," + inner)
        first = False
        _encode(item, out, inner)
    out.append(newline + "]")


def _encode_dict(value: dict[Any, Any], out: list[str], newline: str) -> None:
    if not value:
        out.append("{}")
        return
    inner = newline + _INDENT
    out.append("{")
    first = True
    for key, item in value.items():
        out.append(inner if first else "," + inner)
        first = False
        out.append(encode_basestring(_key(key)))
        out.append(": ")
        _encode(item, out, inner)
    out.append(newline + "}")
