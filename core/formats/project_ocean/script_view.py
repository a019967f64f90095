"""A file as memory-search.py reads it: its line-by-line frontmatter reading, not YAML.

memlens validates every observation with a YAML safe loader; the script
splits the header on ``:`` line by line.  On most files the two agree, but
not on all valid ones: a comment after a value (``confidence: 0.8  # est``
is 0.5 to the script), a block list of tags (an empty string to it), a
quoted tag holding a comma (two tags to it), ``verified: yes`` (the word
"yes"), ``importance: 1`` (printed 1.0).  `search --format ocean` promises the
script's hits, scores and JSON, so its recall ranks every valid file by the
values the script would read, taken from the file's text by the rules below.
Nothing here decides validity: a file memlens cannot parse never gets here.

The script's reading (both generations):

- the header is what lies between the opening ``---`` (the file's first
  three characters) and the next ``---`` anywhere after them; the body is
  everything after that one, stripped of surrounding whitespace.  No
  opening ``---``: no fields, and the whole text, unstripped, is the body;
- each header line is stripped; empty lines, ``#`` lines and lines without
  ``:`` are skipped; key and value split at the first ``:``, both stripped
  (an indented ``key:`` counts like a top-level one; the last one wins);
- a value in ``[...]`` is a list split on ``,``, each item stripped of
  spaces and then of ``'``/``"``; empty items dropped (the first
  generation drops them after the quotes are stripped, the second before);
- digits with an optional ``-`` and decimal part: int, or float with a
  ``.``; ``true``/``false`` in any case: a boolean; anything else: the text
  with ``'``/``"`` stripped from both ends.

Deliberate differences: the text is read as memlens reads it (a leading BOM
is dropped, so a BOM file's frontmatter counts; the script reads such a file
as all body), and a file that is not UTF-8 never gets here (it is invalid).
Line ends are the script's: CRLF and a lone CR read as LF.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from ...errors import ParseError
from ...model import Memory
from ...text.textio import read_text

#: A value the script's reader gives: text, a number, a boolean or a list of text.
ScriptValue = str | int | float | bool | list[str]

_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")
_QUOTES = "'\""


@dataclass(frozen=True, slots=True)
class ScriptFile:
    """The frontmatter values and body memory-search.py reads from one file."""

    fields: dict[str, ScriptValue]
    body: str


def _list_value(inner: str, generation: int) -> list[str]:
    """A ``[...]`` value's items (see the module docstring for the empty-item rule)."""
    parts = inner.split(",")
    if generation == 1:
        items = [p.strip().strip(_QUOTES) for p in parts]
        return [x for x in items if x]
    return [p.strip().strip(_QUOTES) for p in parts if p.strip()]


def _value(val: str, generation: int) -> ScriptValue:
    """One header value, typed the script's way."""
    if val.startswith("[") and val.endswith("]"):
        return _list_value(val[1:-1], generation)
    if _NUMBER.match(val):
        return float(val) if "." in val else int(val)
    if val.lower() in ("true", "false"):
        return val.lower() == "true"
    return val.strip(_QUOTES)


def parse_script_frontmatter(text: str, generation: int) -> ScriptFile:
    """`text` (LF line ends) read by the given generation's memory-search.py."""
    fields: dict[str, ScriptValue] = {}
    if not text.startswith("---"):
        return ScriptFile(fields, text)
    end = text.find("---", 3)
    if end == -1:
        return ScriptFile(fields, text)
    header = text[3:end].strip()
    for raw_line in header.split("\n"):
        line = raw_line.strip()
        if not line or line.startswith("#") or ":" not in line:
            continue
        key, val = line.split(":", 1)
        fields[key.strip()] = _value(val.strip(), generation)
    return ScriptFile(fields, text[end + 3 :].strip())


def _plain(value: object) -> ScriptValue | None:
    """A parsed (YAML) value as the script would have read it from a plain line."""
    if isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, list):
        return [str(v) for v in value]
    return None


def view_of_memory(memory: Memory) -> ScriptFile:
    """The script's reading rebuilt from the parsed memory (when its text cannot be read).

    Exact for the plain values the script and YAML read alike; used for a
    memory whose file is gone since the scan, or one built in memory.
    """
    fields: dict[str, ScriptValue] = {}
    for key, value in memory.fields.items():
        plain = _plain(value)
        if plain is not None:
            fields[str(key)] = plain
    typed: dict[str, object] = {
        "tags": list(memory.tags) if memory.tags else None,
        "created": memory.created,
        "source": memory.source,
        "confidence": memory.confidence,
        "importance": memory.importance,
        "decay": memory.native.get("decay"),
        "max_age": memory.native.get("max_age"),
        "refs": memory.native.get("refs"),
        "verified": memory.native.get("verified"),
    }
    for key, value in typed.items():
        plain = _plain(value)
        if plain is not None and key not in fields:
            fields[key] = plain
    return ScriptFile(fields, memory.body.strip())


def read_script_file(memory: Memory, generation: int) -> ScriptFile:
    """The memory's file as the script reads it.

    Read fresh at search time: the script's values come from the text, which
    the parsed memory does not keep.  A file gone or unreadable since the
    scan is read from the parsed memory instead (`view_of_memory`).
    """
    try:
        decoded = read_text(memory.abs_path)
    except (OSError, ParseError):
        return view_of_memory(memory)
    # Python's text mode (the script's read_text) turns \r\n and a lone \r into \n;
    # memlens's reader already turned \r\n into \n.
    return parse_script_frontmatter(decoded.text.replace("\r", "\n"), generation)


__all__ = [
    "ScriptFile",
    "ScriptValue",
    "parse_script_frontmatter",
    "read_script_file",
    "view_of_memory",
]
