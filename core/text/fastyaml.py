"""A strict fast path for the YAML that frontmatter headers usually hold.

PyYAML's C loader parses in C but still builds every node and value in
Python: at 100k files that is most of a cold scan.  Headers are nearly
always a flat mapping of one-line values, so `fast_load` reads that common
subset directly and returns exactly what ``yaml.load(text, CSafeLoader)``
returns for it, or `None` ("not handled: use the real loader").  It never
raises and never guesses: anything outside the subset falls back, so every
error message still comes from the real loader.

The subset (every line of the header fits one of these):

- blank lines and whole-line comments;
- ``key: value`` at column 0, where ``key`` is a plain word
  (``[A-Za-z0-9_][A-Za-z0-9_.-]*`` resolving to a string) and ``value`` is a
  one-line plain scalar, a single- or double-quoted scalar without escapes,
  a one-line flow list of such scalars, or nothing (null);
- ``key:`` followed by a nested block: a mapping one level deep with the
  same kind of values, or a block list whose items are such values or flat
  mappings (``- target: x`` with its other keys aligned below).

Plain scalars are typed by the loader's own implicit resolvers (the YAML
1.1 rules: yes/no/on/off, null/~, octal/hex/sexagesimal ints, .inf/.nan,
timestamps) and built by the loader's own constructors, so booleans, numbers
and dates come out as the loader makes them.  Anything else falls back:
anchors, aliases, tags, block scalars, multi-line or escaped scalars,
comments after a value, nested flow collections, duplicate keys, tabs,
unusual indentation, non-printable characters, keys that are not strings.
`tests/core/test_fast_yaml.py` checks this against the real loader.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Container
from typing import Any

from yaml.constructor import SafeConstructor
from yaml.nodes import ScalarNode

try:  # the loader whose results this module reproduces
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

__all__ = ["fast_load"]

_STR_TAG = "tag:yaml.org,2002:str"
#: Tags whose values are immutable scalars we can build (and share).
_SCALAR_TAGS = frozenset(
    {
        "tag:yaml.org,2002:null",
        "tag:yaml.org,2002:bool",
        "tag:yaml.org,2002:int",
        "tag:yaml.org,2002:float",
        "tag:yaml.org,2002:timestamp",
    }
)

#: Anything the subset never holds: tabs, CR, YAML's other line breaks, a
#: BOM, and every character the loader rejects as non-printable.
_UNSAFE = re.compile(
    "[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)
_KEY = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}):(?: +|$)")
#: A top-level line: key, and the value text after the colon and its spaces.
_TOP = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}):(?: +(.*)|$)")
#: Characters that may not start a plain scalar we accept (YAML indicators).
_PLAIN_FIRST_BAD = frozenset("-?:,[]{}#&*!|>'\"%@`")
#: One flow-list item: a double-quoted (no escapes), single-quoted or plain
#: scalar (no flow indicators, quotes, colons or comment signs), then `,` or the end.
_FLOW_ITEM = re.compile(
    r" *(?:\"([^\"\\]*)\"|'((?:[^']|'')*)'|([^\-?:,\[\]{}#&*!|>'\"%@` ][^,\[\]{}#:'\"]*)) *(,|$)"
)

#: Characters that send a flow list to the item pattern (or to the loader).
_FLOW_ODD = re.compile("[\"'\\[\\]{}#:&*!|>%@`]")

_constructor = SafeConstructor()
_resolvers: dict[Any, list[tuple[str, re.Pattern[str]]]] = _Loader.yaml_implicit_resolvers
_constructors: dict[Any, Any] = _Loader.yaml_constructors
#: Typed plain scalars (dates, numbers, booleans, null) by text, as built:
#: they repeat a lot across a vault, and sharing the immutable objects
#: saves memory too.
_built: dict[str, Any] = {}
_BUILT_MAX = 8192
#: Resolvers to try per first character, the wildcard ones (first char None) last.
_wildcard: list[tuple[str, re.Pattern[str]]] = list(_resolvers.get(None, []))
_candidates: dict[str, list[tuple[str, re.Pattern[str]]]] = {
    k: [*v, *_wildcard] for k, v in _resolvers.items() if isinstance(k, str)
}
#: PyYAML's bool and null patterns (YAML 1.1 words: yes/no/on/off/true/false,
#: null/~): no string longer than _WORD_MAX characters matches them.  Only
#: when the loader still uses exactly these does `_typed` skip longer strings.
_WORD_PATTERNS = {
    "tag:yaml.org,2002:bool": "^(?:yes|Yes|YES|no|No|NO\n                    "
    "|true|True|TRUE|false|False|FALSE\n                    |on|On|ON|off|Off|OFF)$",
    "tag:yaml.org,2002:null": "^(?: ~\n                    "
    "|null|Null|NULL\n                    | )$",
}
_WORD_MAX = 5
#: First characters whose only resolvers are those word patterns.
_WORD_FIRST = frozenset(
    k
    for k, candidates in _candidates.items()
    if k
    and candidates
    and all(_WORD_PATTERNS.get(tag) == regexp.pattern for tag, regexp in candidates)
)
#: Plain strings up to this length are interned (tags, kinds, sources repeat).
_INTERN_MAX = 40
#: First characters some implicit resolver looks at (others are strings).
_TYPED_FIRST: Container[str] = frozenset(k for k in _resolvers if isinstance(k, str) and k)
if _resolvers.get(None):  # pragma: no cover - a resolver for any first character

    class _Every:
        def __contains__(self, _item: object) -> bool:
            return True

    _TYPED_FIRST = _Every()
#: Plain keys that resolve to strings, interned.
_keys: dict[str, str] = {}


class _Fallback(Exception):
    """The header leaves the subset: use the real loader."""


def _tag_of(value: str) -> str:
    """The implicit tag the loader's resolver gives a plain scalar (as Resolver.resolve)."""
    for tag, regexp in _candidates.get(value[0] if value else "", _wildcard):
        if regexp.match(value):
            return tag
    return _STR_TAG


def _typed(value: str) -> Any:
    """A plain scalar whose first character some implicit resolver looks at."""
    if len(value) > _WORD_MAX and value[0] in _WORD_FIRST:
        # Only the bool/null words start with this character, and none is
        # this long: a string (an id like `obs-000052`, `observation/v1`).
        return sys.intern(value) if len(value) <= _INTERN_MAX else value
    found = _built.get(value, _built)
    if found is not _built:
        return found
    tag = _tag_of(value)
    if tag == _STR_TAG:  # not cached: ids and words seldom repeat
        return sys.intern(value) if len(value) <= _INTERN_MAX else value
    if tag not in _SCALAR_TAGS:
        raise _Fallback  # `=` (value), `<<` (merge) and anything added later
    try:
        built = _constructors[tag](_constructor, ScalarNode(tag, value))
    except Exception:
        raise _Fallback from None  # e.g. 2026-02-30: the loader reports it
    if len(_built) >= _BUILT_MAX:
        _built.clear()
    _built[value] = built
    return built


def _plain(value: str) -> Any:
    """A one-line plain scalar's value, typed as the loader types it."""
    if value[0] in _TYPED_FIRST:
        return _typed(value)
    return sys.intern(value) if len(value) <= _INTERN_MAX else value


def _key(raw: str) -> str:
    key = _keys.get(raw)
    if key is None:
        if _tag_of(raw) != _STR_TAG:
            raise _Fallback  # `yes:`, `1:`, `null:` ... keys that are not strings
        if len(_keys) >= _BUILT_MAX:
            _keys.clear()
        key = _keys[raw] = sys.intern(raw)
    return key


def _flow(inner: str) -> list[Any]:
    """The items of a one-line flow list (text between the brackets)."""
    if not inner.strip(" "):
        return []
    if not _FLOW_ODD.search(inner):
        # Plain items only (no quotes, colons, comment signs or indicators
        # that need the item pattern): split on the commas.
        items: list[Any] = []
        for item in inner.split(","):
            text = item.strip(" ")
            if not text or text[0] in "-?":
                raise _Fallback  # an empty item (`[a,,b]`, `[a,]`) or `-x`/`?x`
            items.append(_plain(text))
        return items
    out: list[Any] = []
    pos, end = 0, len(inner)
    match = _FLOW_ITEM.match
    while pos < end:
        m = match(inner, pos)
        if m is None:
            raise _Fallback
        dq, sq, plain, sep = m.groups()
        if dq is not None:
            out.append(dq)
        elif sq is not None:
            out.append(sq.replace("''", "'"))
        else:
            out.append(_plain(plain.rstrip(" ")))
        pos = m.end()
        if sep == "," and pos >= end:
            raise _Fallback  # a trailing comma
    return out


def _value(text: str) -> Any:
    """A one-line value (already stripped of surrounding spaces, not empty)."""
    first = text[0]
    if first not in _PLAIN_FIRST_BAD:
        if ": " in text or " #" in text or text[-1] == ":":
            raise _Fallback
        if first in _TYPED_FIRST:
            return _typed(text)
        return sys.intern(text) if len(text) <= _INTERN_MAX else text
    if first == '"':
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != '"' or '"' in inner or "\\" in inner:
            raise _Fallback
        return inner
    if first == "'":
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != "'" or "'" in inner.replace("''", ""):
            raise _Fallback
        return inner.replace("''", "'")
    if first == "[" and text[-1] == "]":
        return _flow(text[1:-1])
    raise _Fallback


def _skip(lines: list[str], i: int) -> tuple[int, int]:
    """(index, indent) of the next content line at or after `i`; (len, -1) at the end."""
    n = len(lines)
    while i < n:
        line = lines[i]
        stripped = line.lstrip(" ")
        if stripped and stripped[0] != "#":
            return i, len(line) - len(stripped)
        i += 1
    return n, -1


def _pair(line: str, col: int) -> tuple[str, str]:
    """(key, value text) of `key: value` starting at column `col`."""
    m = _KEY.match(line, col)
    if m is None:
        raise _Fallback
    raw = m.group(1)
    return _keys.get(raw) or _key(raw), line[m.end() :].rstrip(" ")


def _mapping(lines: list[str], i: int, col: int, into: dict[str, Any]) -> int:
    """`key: value` lines at exactly column `col` into `into` (one level); the next index."""
    while True:
        i, indent = _skip(lines, i)
        if indent < col:
            return i
        if indent > col:
            raise _Fallback
        key, text = _pair(lines[i], col)
        i += 1
        if key in into:
            raise _Fallback
        if text:
            into[key] = _value(text)
        else:
            _no_block(lines, i, col)
            into[key] = None


def _no_block(lines: list[str], i: int, col: int) -> None:
    """A nested `key:` is null only if no block follows it (deeper blocks leave the subset)."""
    i, indent = _skip(lines, i)
    if indent > col or (indent == col and lines[i][col] == "-"):
        raise _Fallback


def _sequence(lines: list[str], i: int, col: int) -> tuple[list[Any], int]:
    """A block list whose dashes sit at column `col`; (items, next index)."""
    out: list[Any] = []
    while True:
        i, indent = _skip(lines, i)
        if indent < col:
            return out, i
        if indent > col:
            raise _Fallback
        line = lines[i]
        if line[col] != "-" or (len(line) > col + 1 and line[col + 1] != " "):
            if col == 0:
                return out, i  # the next top-level key
            raise _Fallback
        i += 1
        rest = line[col + 1 :]
        text = rest.strip(" ")
        if not text:
            raise _Fallback  # an empty item, or a block below it
        item_col = col + 1 + len(rest) - len(rest.lstrip(" "))
        if _KEY.match(line, item_col):
            key, value = _pair(line, item_col)
            item: dict[str, Any] = {}
            if value:
                item[key] = _value(value)
            else:
                _no_block(lines, i, item_col)
                item[key] = None
            i = _mapping(lines, i, item_col, item)
            out.append(item)
        else:
            out.append(_value(text))


def _block(lines: list[str], i: int) -> tuple[Any, int]:
    """The value of a top-level `key:` with nothing after the colon; (value, next index)."""
    i, indent = _skip(lines, i)
    if indent < 0:
        return None, i
    line = lines[i]
    if line[indent] == "-" and (len(line) == indent + 1 or line[indent + 1] == " "):
        return _sequence(lines, i, indent)
    if indent == 0:
        return None, i
    nested: dict[str, Any] = {}
    i = _mapping(lines, i, indent, nested)
    if _skip(lines, i)[1] > 0:
        raise _Fallback  # dedented to a column no block started at
    return nested, i


def fast_load(source: str) -> dict[str, Any] | None:
    """`source` loaded as the YAML loader would, if it is in the subset; else None.

    Returns None too for an empty header (the loader's None/{} handling
    stays with the caller's fallback).
    """
    if _UNSAFE.search(source):
        return None
    lines = source.split("\n")
    n = len(lines)
    out: dict[str, Any] = {}
    match = _TOP.match
    keys = _keys
    i = 0
    try:
        while i < n:
            line = lines[i]
            i += 1
            m = match(line)
            if m is None:
                stripped = line.lstrip(" ")
                if not stripped or stripped[0] == "#":
                    continue
                raise _Fallback
            raw, text = m.groups()
            key = keys.get(raw) or _key(raw)
            if key in out:
                raise _Fallback
            if text:
                # The pattern ate the spaces after the colon: text starts
                # with a non-space character.
                out[key] = _value(text.rstrip(" ") if text[-1] == " " else text)
            else:
                out[key], i = _block(lines, i)
    except _Fallback:
        return None
    except (IndexError, ValueError, TypeError):  # pragma: no cover - a gap in the checks
        return None
    return out or None


#: The loader this module reproduces (for tests that compare).
LOADER: type[Any] = _Loader
