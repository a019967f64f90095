"""What the privacy scan reads of a memory, and the redaction every format's writer applies.

The scan (`memlens.core.privacy`) looks for secrets in every text a memory
holds.  Which texts those are, and on which line of the file each starts, is
format knowledge, so each adapter answers `FormatAdapter.text_fields` with
`TextField`s; the helpers here give the common answers (every string in the
native fields, the title, the body; frontmatter keys' lines) so a format's
override is a few lines.

A `Redaction` names one secret in one field and what replaces it
(`[REDACTED:<kind>]`).  `redact_span` replaces only the secret's characters
inside a span of a file's text; `check_redacted` proves, from a re-parse of
the new bytes, that every text field now reads exactly as the old one with
the secrets replaced, and nothing else changed.  The edits of frontmatter
files themselves (which need the YAML parser and the journal) are in
`redaction_edits`: every adapter imports this module, a search or a scan
never needs those.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import RefusedError
from ..model import Memory

#: Native fields that identify or link a record rather than hold its text
#: (their values are ids, hashes, signatures and vector pointers).
NON_TEXT_KEYS = frozenset({"id", "sign", "embeddings", "key_id", "purge_key"})
#: The text such a field may still hold: an experience's symbolic triples
#: (`embeddings.symbolic[].object` can name a person) beside its vector pointers.
TEXT_INSIDE = {"embeddings": "symbolic"}


@dataclass(frozen=True, slots=True)
class TextField:
    """One text a memory holds: its field name (`body`, `title`, `content.text`, ...).

    `line` is the 1-based file line where the text starts (None when the
    format cannot say).  With `multiline` a finding's line is `line` plus the
    newlines before it in `text` (bodies, whose lines are the file's own);
    without it every finding is on `line` (a JSON string on one line).
    """

    name: str
    text: str
    line: int | None = None
    multiline: bool = False

    def line_of(self, offset: int) -> int | None:
        """The file line of the character at `offset` in `text`."""
        if self.line is None:
            return None
        return self.line + self.text.count("\n", 0, offset) if self.multiline else self.line


@dataclass(frozen=True, slots=True)
class Redaction:
    """Replace every occurrence of `secret` in field `field` by `[REDACTED:<kind>]`."""

    field: str
    secret: str
    kind: str

    @property
    def marker(self) -> str:
        return f"[REDACTED:{self.kind}]"


def redacted(text: str, redactions: Iterable[Redaction]) -> str:
    """`text` with every redaction's secret replaced by its marker (longest secret first).

    A secret of several lines is found in a body read with universal newlines; a file
    written on Windows holds it with CRLF, replaced as such.
    """
    for r in sorted(redactions, key=lambda r: -len(r.secret)):
        if r.secret:
            text = text.replace(r.secret, r.marker)
            if "\n" in r.secret and "\r\n" in text:
                text = text.replace(r.secret.replace("\n", "\r\n"), r.marker)
    return text


def walk_strings(value: Any, name: str) -> Iterator[tuple[str, str]]:
    """Every string inside a parsed value, named `context.user`, `tags[1]`, ...

    An integer is read as its digits: a card or phone number written as a
    JSON or YAML number (`card_number: 4024953695187066`) is one all the same.
    """
    if isinstance(value, str):
        yield name, value
    elif isinstance(value, int) and not isinstance(value, bool):
        yield name, str(value)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            here = f"{name}.{key}" if name else str(key)
            inside = TEXT_INSIDE.get(str(key))
            if inside is not None and isinstance(item, Mapping) and inside in item:
                yield from walk_strings(item[inside], f"{here}.{inside}")
            if str(key) in NON_TEXT_KEYS:
                continue
            yield from walk_strings(item, here)
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from walk_strings(item, f"{name}[{i}]")


def top_key(name: str) -> str:
    """The top-level field a dotted/indexed name lives in (`context.user` -> `context`)."""
    return re.split(r"[.\[]", name, maxsplit=1)[0]


def line_text_field(raw: str, line: int) -> list[TextField]:
    """File line `line` (1-based) of `raw` as the text of an invalid item (none past the end)."""
    lines = raw.split("\n")
    if not 1 <= line <= len(lines):
        return []
    return [TextField("line", lines[line - 1].removesuffix("\r"), line)]


def default_text_fields(memory: Memory) -> list[TextField]:
    """Every string in the native fields, then the title and body when they hold other text.

    The title is left out when a field or the body already holds it (a
    heading taken from the body is one text, not two); so is a body that is
    a field's value (an experience's `content.text`).
    """
    out = [TextField(n, t) for n, t in walk_strings(memory.fields, "") if t.strip()]
    texts = {f.text for f in out}
    body = memory.body
    # A title cut short from a longer text ends in an ellipsis: its stem is that text.
    stem = memory.title.rstrip("…").rstrip()
    if stem and not any(stem in t for t in (*texts, body)):
        out.append(TextField("title", memory.title))
    if body.strip() and body not in texts:
        out.append(TextField("body", body, multiline=True))
    return out


_FENCES = ("---", "...")


def frontmatter_lines(raw: str) -> tuple[dict[str, int], int | None]:
    """1-based line of each top-level frontmatter key, and the body's first line.

    None for the body when the block is never closed.  Read from the text as
    written, so the lines are the file's own.
    """
    lines = raw.splitlines()
    keys: dict[str, int] = {}
    if not lines or lines[0].lstrip("\ufeff").strip() != "---":
        return keys, None
    for i in range(1, len(lines)):
        line = lines[i]
        if line.strip() in _FENCES:
            return keys, i + 2
        # (Not a list item holding a colon: `- "Run: doppler ..."` is no key.)
        m = re.match(r"""^(?!-(?:\s|$))(['"]?)([^\s:#'"][^:#]*?)\1\s*:(?:\s|$)""", line)
        if m and m.group(2) not in keys:
            keys[m.group(2)] = i + 1
    return keys, None


def _value_line(
    lines: list[str], keys: dict[str, int], end: int, name: str, text: str
) -> int | None:
    """The line inside `name`'s top-level block where `text` starts (else the key's line)."""
    start = keys.get(top_key(name))
    if start is None:
        return None
    stop = min([n for n in keys.values() if n > start] + [end])
    first = text.strip().splitlines()[0][:60] if text.strip() else ""
    for n in range(start, stop):
        if first and first in lines[n - 1]:
            return n
    return start


def frontmatter_text_fields(memory: Memory, raw: str | None) -> list[TextField]:
    """`default_text_fields` with lines, for a memory stored as one frontmatter file.

    A field's line is the one in its key's block where its text starts (a
    nested value or a list item on a line of its own), else the key's line.
    """
    keys, body_line = frontmatter_lines(raw) if raw is not None else ({}, None)
    lines = raw.splitlines() if raw is not None else []
    end = (body_line - 1) if body_line is not None else len(lines) + 1
    out: list[TextField] = []
    for f in default_text_fields(memory):
        if f.name == "body":
            out.append(TextField("body", f.text, body_line, multiline=True))
        else:
            out.append(TextField(f.name, f.text, _value_line(lines, keys, end, f.name, f.text)))
    return out


def redact_span(text: str, start: int, end: int, redactions: Sequence[Redaction]) -> str:
    """`text` with the secrets replaced inside `text[start:end]` only."""
    return text[:start] + redacted(text[start:end], redactions) + text[end:]


def fields_after(before: Sequence[TextField], redactions: Sequence[Redaction]) -> dict[str, str]:
    """What each text field must read after the redactions (by field name)."""
    by_field: dict[str, list[Redaction]] = {}
    for r in redactions:
        by_field.setdefault(r.field, []).append(r)
    return {f.name: redacted(f.text, by_field.get(f.name, ())) for f in before}


def check_redactions(before: Sequence[TextField], redactions: Sequence[Redaction]) -> None:
    """Refuse redactions that name no text field or whose secret is not in it (any more)."""
    if not redactions:
        raise RefusedError("nothing to redact")
    texts = {f.name: f.text for f in before}
    for r in redactions:
        if r.field not in texts:
            raise RefusedError(f"{r.field}: the memory has no such text field")
        if not r.secret or r.secret not in texts[r.field]:
            raise RefusedError(
                f"{r.field}: the {r.kind} found by the scan is not there any more;"
                " scan again (the file changed since)"
            )


def check_redacted(
    before: Sequence[TextField], after: Sequence[TextField], redactions: Sequence[Redaction]
) -> list[str]:
    """Field names whose text after the edit is not the expected one (empty: all good).

    A secret that also sat in another field (the title copied into the
    body) is replaced there too: the expectation applies every redaction's
    secret to every field, so no copy is left behind.
    """
    everywhere = [Redaction(f.name, r.secret, r.kind) for f in before for r in redactions]
    want = fields_after(before, everywhere)
    got = {f.name: f.text for f in after}
    names = list(dict.fromkeys([*want, *got]))
    return [n for n in names if want.get(n) != got.get(n)]


def redaction_summary(redactions: Sequence[Redaction]) -> str:
    """`2 secrets (aws-key in body, email in source)` for a plan summary (never the secret)."""
    where = ", ".join(f"{r.kind} in {r.field}" for r in redactions)
    n = len(redactions)
    return f"{n} secret{'s' if n != 1 else ''} ({where})"


def deep_redacted(value: Any, redactions: Sequence[Redaction]) -> Any:
    """`value` with the secrets replaced in every string inside it (structure kept).

    An integer holding a secret (`walk_strings` reads its digits) becomes the
    redacted text: a number cannot hold the marker.
    """
    if isinstance(value, str):
        return redacted(value, redactions)
    if isinstance(value, int) and not isinstance(value, bool):
        text = str(value)
        out = redacted(text, redactions)
        return value if out == text else out
    if isinstance(value, dict):
        return {k: deep_redacted(v, redactions) for k, v in value.items()}
    if isinstance(value, list):
        return [deep_redacted(v, redactions) for v in value]
    return value


__all__ = [
    "NON_TEXT_KEYS",
    "Redaction",
    "TextField",
    "check_redacted",
    "check_redactions",
    "deep_redacted",
    "default_text_fields",
    "fields_after",
    "frontmatter_lines",
    "frontmatter_text_fields",
    "line_text_field",
    "redact_span",
    "redacted",
    "redaction_summary",
    "top_key",
    "walk_strings",
]
