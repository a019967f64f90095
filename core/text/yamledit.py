"""Minimal-diff edits of YAML frontmatter.

A metadata edit rewrites only the lines of the top-level keys that changed.
Every other byte stays as it was: comments, key order, quoting, date forms,
unknown fields, the BOM, CRLF endings and the body.  (Round-tripping through
python-frontmatter or a YAML dumper would sort keys, drop comments and change
dates, which is exactly the data loss we refuse.)

After editing, the header is parsed again with the safe loader and compared
with what was intended; any surprise refuses the edit instead of writing it.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import yaml

from ..errors import RefusedError
from .frontmatter import SafeYamlLoader

_KEY_LINE = re.compile(r"^(?P<key>[^\s#'\"\-?:][^:#]*?|'[^']*'|\"[^\"]*\"):(?=\s|$)")

#: Sentinel for "remove this key".
REMOVE = object()


@dataclass(frozen=True, slots=True)
class _Block:
    key: str
    start: int  # index of the key line in `lines`
    end: int  # one past the last line of its value


def _split_lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _line_ending(line: str, default: str) -> str:
    if line.endswith("\r\n"):
        return "\r\n"
    if line.endswith("\n"):
        return "\n"
    return default


def _header_bounds(lines: list[str]) -> tuple[int, int]:
    """Index of the opening fence line and of the closing fence line."""
    first = lines[0] if lines else ""
    if first.startswith("\ufeff"):
        first = first[1:]
    if not lines or first.rstrip("\r\n").rstrip() != "---":
        raise RefusedError("the file has no frontmatter block to edit")
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r\n").rstrip() in ("---", "..."):
            return 0, i
    raise RefusedError("the frontmatter block is never closed")


def _blocks(lines: list[str], start: int, end: int) -> list[_Block]:
    """Top-level key blocks between the fences (exclusive)."""
    keys: list[tuple[str, int]] = []
    for i in range(start + 1, end):
        m = _KEY_LINE.match(lines[i])
        if m:
            key = m.group("key").strip()
            if key[:1] in "'\"":
                key = key[1:-1]
            keys.append((key, i))
    blocks: list[_Block] = []
    for n, (key, i) in enumerate(keys):
        stop = keys[n + 1][1] if n + 1 < len(keys) else end
        # A column-0 comment or blank run before the next key is not part of this value.
        j = stop
        while j - 1 > i and (lines[j - 1].strip() == "" or lines[j - 1].startswith("#")):
            j -= 1
        blocks.append(_Block(key, i, j))
    return blocks


def render_scalar(value: Any, like: str | None = None) -> str:
    """YAML text for one value on one line, keeping the old quote style if possible."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise RefusedError("refusing a non-finite number")
        return repr(value)
    if isinstance(value, str):
        if like is not None and like.startswith('"'):
            return json.dumps(value, ensure_ascii=False)
        if like is not None and like.startswith("'") and "\n" not in value:
            return "'" + value.replace("'", "''") + "'"
        return _dump_inline(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(render_scalar(v) for v in value) + "]"
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(f"{_dump_inline(str(k))}: {render_scalar(v)}" for k, v in value.items())
            + "}"
        )
    raise RefusedError(f"cannot write a value of type {type(value).__name__}")


def _dump_inline(value: str) -> str:
    out = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=math.inf)
    # Strip only what YAML itself added: str.strip() would also eat a value
    # that is a no-break space (PyYAML writes one as a plain scalar).
    out = out.strip("\n ")
    if out.endswith("\n..."):
        out = out[: -len("\n...")]
    if out.endswith("..."):
        out = out[:-3].rstrip("\n ")
    if "\n" in out or _reads_back(out) != value:
        # Long, multi-line or unusual strings: a JSON string with \u escapes
        # is a valid YAML double-quoted scalar; escape everything non-ASCII
        # only when the readable form would not read back exactly.
        readable = json.dumps(value, ensure_ascii=False)
        return readable if _reads_back(readable) == value else json.dumps(value)
    return out


def _reads_back(text: str) -> object:
    try:
        loaded = yaml.load("k: " + text, Loader=SafeYamlLoader)
    except yaml.YAMLError:
        return None
    return loaded.get("k") if isinstance(loaded, dict) else None


def _old_value_text(line: str) -> tuple[str, str]:
    """(value text, trailing comment including its leading spaces) of a key line.

    The comment starts at the first ` #` after which the value still parses
    to the same thing (so a `#` inside quotes or brackets is not a comment).
    """
    body = line.rstrip("\r\n")
    _, _, rest = body.partition(":")
    try:
        whole = yaml.load("k:" + rest, Loader=SafeYamlLoader)
    except yaml.YAMLError:
        return rest.strip(), ""
    for m in re.finditer(r"\s+#", rest):
        candidate = rest[: m.start()]
        try:
            if yaml.load("k:" + candidate, Loader=SafeYamlLoader) == whole:
                return candidate.strip(), rest[m.start() :]
        except yaml.YAMLError:
            continue
    return rest.strip(), ""


def _load(header_text: str) -> dict[str, Any]:
    data = yaml.load(header_text, Loader=SafeYamlLoader)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise RefusedError("the frontmatter is not a mapping")
    return data


def edit_frontmatter(text: str, changes: dict[str, Any]) -> str:
    """Return `text` with top-level keys set (or removed with REMOVE).

    Changed keys keep their place; new keys are added as the last header
    lines, in the order given.  Lines of untouched keys are not rewritten.
    """
    lines = _split_lines(text)
    open_i, close_i = _header_bounds(lines)
    newline = _line_ending(lines[open_i], "\n")
    header_before = "".join(lines[open_i + 1 : close_i])
    before = _load(header_before)
    blocks = {b.key: b for b in _blocks(lines, open_i, close_i)}
    replacements: dict[int, tuple[int, list[str]]] = {}
    additions: list[str] = []
    for key, value in changes.items():
        if not isinstance(key, str) or not key or "\n" in key or ":" in key:
            raise RefusedError(f"refusing an unusual field name {key!r}")
        block = blocks.get(key)
        if value is REMOVE:
            if block is not None:
                replacements[block.start] = (block.end, [])
            continue
        if block is None:
            additions.append(f"{_dump_inline(key)}: {render_scalar(value)}{newline}")
            continue
        old_line = lines[block.start]
        old_value, comment = _old_value_text(old_line)
        key_text = old_line[: old_line.index(":") + 1]
        ending = _line_ending(lines[block.end - 1], newline)
        like = old_value if block.end == block.start + 1 else None
        new_line = f"{key_text} {render_scalar(value, like)}{comment}{ending}"
        replacements[block.start] = (block.end, [new_line])
    out: list[str] = []
    i = 0
    while i < len(lines):
        if i == close_i and additions:
            out.extend(additions)
        if i in replacements:
            end, new = replacements[i]
            out.extend(new)
            i = end
            continue
        out.append(lines[i])
        i += 1
    result = "".join(out)
    _verify(result, before, changes)
    return result


def _verify(result: str, before: dict[str, Any], changes: dict[str, Any]) -> None:
    """Parse the edited header and check that only the intended keys changed."""
    lines = _split_lines(result)
    open_i, close_i = _header_bounds(lines)
    try:
        after = _load("".join(lines[open_i + 1 : close_i]))
    except yaml.YAMLError as exc:
        raise RefusedError(f"the edit would make the frontmatter invalid YAML: {exc}") from None
    expected = dict(before)
    for key, value in changes.items():
        if value is REMOVE:
            expected.pop(key, None)
        else:
            expected[key] = _normalise(value)
    if {k: _normalise(v) for k, v in after.items()} != {
        k: _normalise(v) for k, v in expected.items()
    }:
        raise RefusedError("the edit would change more than the fields asked for; not written")


def _normalise(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_normalise(v) for v in value]
    if isinstance(value, list):
        return [_normalise(v) for v in value]
    if isinstance(value, dict):
        return {k: _normalise(v) for k, v in value.items()}
    return value
