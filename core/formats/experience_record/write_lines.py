"""The stores as the writer reads them, and JSON lines appended in each file's own style."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import RefusedError
from ...model import Memory
from ...write.writes import FileSnapshot
from .jsonl import JsonLine, LineError

_BOM = b"\xef\xbb\xbf"

#: Characters str.splitlines() breaks on that json.dumps leaves unescaped.
_LINE_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}


@dataclass(frozen=True, slots=True)
class _Store:
    """One JSON Lines file as read at plan time (data None: the file is absent)."""

    rel: str
    path: Path
    data: bytes | None
    snap: FileSnapshot
    items: list[JsonLine | LineError]

    def objects(self) -> list[dict[str, Any]]:
        return [i.obj for i in self.items if isinstance(i, JsonLine)]

    def ids(self, key: str = "id") -> set[str]:
        return {str(o.get(key)) for o in self.objects()}


@dataclass(frozen=True, slots=True)
class _State:
    """The memory as re-read at plan time, and the files it came from."""

    memory: Memory
    stores: dict[str, _Store]


def _dumps(record: dict[str, Any]) -> str:
    """One JSON line: the fixtures' `", "` / `": "` style, UTF-8 text kept."""
    try:
        text = json.dumps(record, ensure_ascii=False, allow_nan=False)
    except ValueError as exc:
        raise RefusedError(f"cannot write the record as JSON: {exc}") from None
    for char, escape in _LINE_BREAKS.items():
        text = text.replace(char, escape)
    return text


def _encode(text: str, what: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise RefusedError(
            f"{what}: holds characters that are not valid Unicode text (unpaired surrogates)"
        ) from None


def _eol(data: bytes) -> bytes:
    """The file's line ending: CRLF if its first line ends in CRLF, else LF."""
    first = data.find(b"\n")
    return b"\r\n" if first > 0 and data[first - 1 : first] == b"\r" else b"\n"


def append_line(data: bytes | None, line: bytes) -> bytes:
    """`data` with one more line, in the file's own line-ending style.

    Every existing byte is kept (the BOM included); only a missing final
    newline is added before the new line.
    """
    if not data:
        return line + b"\n"
    eol = _eol(data)
    body = data
    if body != _BOM and not body.endswith(b"\n"):
        body += b"\n" if body.endswith(b"\r") else eol
    return body + line + eol


def _same(a: Any, b: Any) -> bool:
    """Equality of JSON values (NaN-safe: compares their JSON text)."""
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)
