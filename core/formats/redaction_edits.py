"""The write side of redaction and erasure for the formats with YAML frontmatter.

Split from `privacy_model` (what the privacy scan reads of a memory, which
every format adapter imports): these edits need the YAML parser, the
minimal frontmatter editor and the journal's plans, which a scan or a
search never loads.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import yaml

from ..errors import RefusedError
from ..text.frontmatter import SafeYamlLoader
from ..text.yamledit import edit_frontmatter
from ..write.journal import Plan
from .privacy_model import (
    Redaction,
    TextField,
    check_redacted,
    check_redactions,
    deep_redacted,
    frontmatter_lines,
    redacted,
)


def _load_header(text: str) -> dict[str, Any] | None:
    try:
        data = yaml.load(text, Loader=SafeYamlLoader)
    except yaml.YAMLError:
        return None
    return data if isinstance(data, dict) else None


def _quote_whole(block: str, redactions: Sequence[Redaction]) -> str:
    """`block` with each secret that is a whole plain scalar replaced by its quoted marker.

    `key: SECRET` would become `key: [REDACTED:x]`, which YAML reads as a
    list; `key: '[REDACTED:x]'` adds only the two quotes.
    """
    for r in redactions:
        pattern = re.compile(
            r"(^[ \t]*(?:-[ \t]+)?(?:[^\s#:][^:#\n]*:[ \t]+)?)"
            + re.escape(r.secret)
            + r"([ \t]*)$",
            re.MULTILINE,
        )
        quoted = f"'{r.marker}'"
        block = pattern.sub(lambda m: f"{m.group(1)}{quoted}{m.group(2)}", block)  # noqa: B023
    return block


def redact_frontmatter_file(
    raw: str, redactions: Sequence[Redaction], edit: Callable[[str, dict[str, Any]], str]
) -> str:
    """The file's text with the secrets replaced, touching as few bytes as YAML allows.

    The body and each top-level frontmatter key are redacted in place (only
    the secret's characters change).  Where that would change how YAML reads
    the value (the marker's `[` opening a scalar reads as a list), that key
    is written instead through `edit` (the minimal frontmatter edit, which
    quotes as needed); the caller re-parses the result and checks it.
    """
    keys, body_line = frontmatter_lines(raw)
    lines = raw.splitlines(keepends=True)
    if body_line is None:
        return redacted(raw, redactions)
    header_end = body_line - 1  # index of the first body line
    body = redacted("".join(lines[header_end:]), redactions)
    original = _load_header("".join(lines[1 : header_end - 1]))
    starts = sorted(keys.values())
    out = list(lines[:header_end])
    rewrite: dict[str, Any] = {}
    for key, start in keys.items():
        stop = min([n for n in starts if n > start] + [header_end])
        block = "".join(lines[start - 1 : stop - 1])
        new_block = redacted(block, redactions)
        if new_block == block:
            continue
        want = deep_redacted(original.get(key), redactions) if original else None
        for candidate in (new_block, redacted(_quote_whole(block, redactions), redactions)):
            trial = out[: start - 1] + [candidate] + [""] * (stop - start - 1) + out[stop - 1 :]
            parsed = _load_header("".join(trial[1 : header_end - 1]))
            if parsed is not None and original is not None and parsed.get(key) == want:
                out = trial
                break
        else:
            if original is not None and key in original:
                rewrite[key] = want
    text = "".join(out) + body
    return edit(text, rewrite) if rewrite else text


def redacted_file_text(
    raw: str,
    redactions: Sequence[Redaction],
    before: Sequence[TextField],
    after_of: Callable[[str], list[TextField]],
) -> str:
    """A frontmatter file's new text with the redactions, checked by re-parsing it.

    `before` are the memory's text fields now; `after_of(new_text)` parses
    the candidate with the format's rules (refusing if it is invalid) and
    lists its text fields.  Refuses unless every field reads exactly as
    before with the secrets replaced.
    """
    check_redactions(before, redactions)
    new = redact_frontmatter_file(raw, redactions, edit_frontmatter)
    if new == raw:
        raise RefusedError("nothing to redact: the secrets are not in the file's text")
    bad = check_redacted(before, after_of(new), redactions)
    if bad:
        raise RefusedError(
            f"{', '.join(bad)}: the redaction would not read back as intended; not written"
        )
    return new


def refuse_upward(upward: bool, label: str) -> None:
    """`--upward` is the experience-record way; other formats edit the text in place."""
    if upward:
        raise RefusedError(
            f"upward: {label} memories are redacted in place; an upward record is only"
            " for experience records (whose raw records are immutable)"
        )


def as_erase(plan: Plan) -> Plan:
    """An archive plan relabelled as the erasure it carries out (journal and summary)."""
    return replace(plan, action="erase", summary=f"erase: {plan.summary}")


__all__ = ["as_erase", "redact_frontmatter_file", "redacted_file_text", "refuse_upward"]
