"""Edits of a document's frontmatter: field names resolved, nested values rewritten in
place, ids checked unique.
"""

from __future__ import annotations

import re
from typing import Any

from ...errors import ParseError, RefusedError
from ...model import ScanResult
from ...text.frontmatter import load_frontmatter
from ...text.paths import has_path_syntax
from ...text.textio import BOM
from ...text.yamledit import REMOVE, edit_frontmatter
from .adapter import ObservationV1Adapter
from .schema import KIND_COMPREHENSION
from .write_files import _Loaded, _same, _show

#: Comprehension shorthands for `set`, used only when the document has no
#: top-level key of that name.
_COMPREHENSION_ALIASES: dict[str, str] = {
    "confidence": "posterior.confidence",
    "statement": "posterior.statement",
    "title": "topic",
}


def _native_name(doc: _Loaded, name: str) -> str:
    name = name.strip()
    if doc.kind == KIND_COMPREHENSION and name not in doc.fresh.fields:
        return _COMPREHENSION_ALIASES.get(name, name)
    return name


def _used_ids(result: ScanResult, skip_path: str | None = None) -> dict[str, str]:
    """Every id in a scanned vault (valid or not) -> the file that holds it."""
    used: dict[str, str] = {}
    for m in result.memories:
        if m.path != skip_path:
            used.setdefault(m.id, m.path)
    for p in result.problems:
        if p.id is not None and p.path != skip_path:
            used.setdefault(p.id, p.path)
    return used


def _check_new_id(doc: _Loaded, value: Any) -> None:
    if not isinstance(value, str) or not value.strip():
        raise RefusedError(f"id: {_show(value)} is not a usable id (a non-empty string)")
    if has_path_syntax(value) or value != value.strip():
        raise RefusedError(f"id: {value!r} has path syntax or spaces; an id must be a bare name")
    if value == doc.fresh.id:
        return
    owner = _used_ids(ObservationV1Adapter().scan(doc.root), skip_path=doc.rel).get(value)
    if owner is not None:
        raise RefusedError(f"id: {value!r} is already used by {owner}")


def _header_lines(text: str) -> tuple[list[str], int]:
    lines = text.splitlines(keepends=True)
    return lines, _closing_fence(lines)


def _closing_fence(lines: list[str]) -> int:
    """Index of the closing `---`/`...` line (the file was parsed, so it exists)."""
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r\n").rstrip() in ("---", "..."):
            return i
    raise RefusedError("the frontmatter block is never closed")


def _ending(line: str, default: str) -> str:
    if line.endswith("\r\n"):
        return "\r\n"
    if line.endswith("\n"):
        return "\n"
    return default


def _edit_nested(text: str, parent: str, child: str, value: Any) -> str:
    """Set (or REMOVE) `parent.child`, rewriting only that line when possible.

    The child lines of a block mapping are dedented into a small document,
    edited with edit_frontmatter (which keeps comments, quoting and order),
    and indented back.  A flow mapping (`context: {a: 1}`) or a missing
    parent is rewritten as one line.
    """
    lines, close = _header_lines(text)
    pattern = re.compile(
        rf"^(?:{re.escape(parent)}|'{re.escape(parent)}'|\"{re.escape(parent)}\"):"
    )
    start = next((i for i in range(1, close) if pattern.match(lines[i])), None)
    data, _ = load_frontmatter(text.lstrip(BOM).replace("\r\n", "\n"), "header")
    current = data.get(parent)
    if start is None or lines[start].partition(":")[2].split("#", 1)[0].strip():
        merged = dict(current) if isinstance(current, dict) else {}
        if value is REMOVE:
            merged.pop(child, None)
        else:
            merged[child] = value
        return edit_frontmatter(text, {parent: merged})
    end = start + 1
    while end < close and (not lines[end].strip() or lines[end][0] in " \t"):
        end += 1
    while end - 1 > start and not lines[end - 1].strip():
        end -= 1
    block = lines[start + 1 : end]
    body = [ln for ln in block if ln.strip()]
    newline = _ending(lines[0], "\n")
    if not body:
        if value is REMOVE:
            return text
        return edit_frontmatter(text, {parent: {child: value}})
    indent = body[0][: len(body[0]) - len(body[0].lstrip(" \t"))]
    if any(not ln.startswith(indent) for ln in body):
        raise RefusedError(
            f"{parent}.{child}: the {parent} block is indented unevenly; edit the whole field"
        )
    inner = "".join(ln[len(indent) :] if ln.strip() else ln for ln in block)
    edited = edit_frontmatter(f"---{newline}{inner}---{newline}", {child: value})
    new_lines, new_close = _header_lines(edited)
    new_block = [indent + ln if ln.strip() else ln for ln in new_lines[1:new_close]]
    head = lines[start]
    if not any(ln.strip() for ln in new_block):
        # The last child went: `parent:` alone would be null, which the model
        # rejects for a mapping, so the emptied block is written as `{}`.
        key, _, rest = head.partition(":")
        head = f"{key}: {{}}{rest}"
    return "".join([*lines[:start], head, *new_block, *lines[end:]])


def _check_only(
    doc: _Loaded, new_text: str, top: dict[str, Any], nested: dict[tuple[str, str], Any]
) -> None:
    """The new header must equal the old one with exactly the asked changes."""
    try:
        after, _ = load_frontmatter(new_text.lstrip(BOM).replace("\r\n", "\n"), doc.rel)
    except ParseError as err:
        raise RefusedError(f"the edit would make the header invalid: {err.detail}") from None
    expected: dict[str, Any] = dict(doc.fresh.fields)
    for key, value in top.items():
        if value is REMOVE:
            expected.pop(key, None)
        else:
            expected[key] = value
    for (parent, child), value in nested.items():
        block = dict(expected.get(parent) or {})
        if value is REMOVE:
            block.pop(child, None)
        else:
            block[child] = value
        expected[parent] = block
    if not _same(_plain(after), _plain(expected)):
        raise RefusedError("the edit would change more than the fields asked for; not written")


def _plain(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
