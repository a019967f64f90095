"""Minimal-diff frontmatter edits: only the changed field's line changes."""

from __future__ import annotations

import difflib
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlens.core.errors import RefusedError
from memlens.core.text.yamledit import REMOVE, edit_frontmatter

DOC = (
    "---\n"
    "# written by the agent\n"
    'title: "Fixed Redis timeouts"\n'
    "tags: [redis, timeout]  # inline comment\n"
    "importance: 0.8\n"
    "when: 10:00\n"
    "answer: no\n"
    "created: 2025-12-06T16:25:58+00:00\n"
    "x-unknown: {a: 1}\n"
    "relations:\n"
    "- target: abc\n"
    "  type: SOLVES\n"
    "---\n"
    "Body with --- inside\n"
    "and trailing spaces   \n"
)


def changed_lines(a: str, b: str) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(a.splitlines(True), b.splitlines(True), n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def test_one_field_changes_one_line() -> None:
    out = edit_frontmatter(DOC, {"importance": 0.9})
    assert changed_lines(DOC, out) == ["-importance: 0.8\n", "+importance: 0.9\n"]


def test_new_field_is_appended_last_and_removal_drops_only_it() -> None:
    out = edit_frontmatter(DOC, {"pinned": True})
    assert changed_lines(DOC, out) == ["+pinned: true\n"]
    assert out.index("pinned: true") < out.index("---\nBody")
    back = edit_frontmatter(out, {"pinned": REMOVE})
    assert back == DOC


def test_quote_style_kept_and_comment_kept() -> None:
    out = edit_frontmatter(DOC, {"title": "New: title"})
    assert 'title: "New: title"\n' in out
    out = edit_frontmatter(DOC, {"tags": ["redis"]})
    assert "tags: [redis]  # inline comment\n" in out


def test_yaml_traps_are_quoted() -> None:
    out = edit_frontmatter(DOC, {"answer": "no", "when": "10:00"})
    data = yaml.safe_load(out.split("---\n")[1])
    assert data["answer"] == "no" and data["when"] == "10:00"


@pytest.mark.parametrize("value", ["\xa0", " ", "\u2028x", "x\x85y", "tab\tin", "\u200b"])
def test_whitespace_like_values_read_back_exactly(value: str) -> None:
    """A no-break space is not YAML whitespace but is Python whitespace: it must survive."""
    out = edit_frontmatter(DOC, {"answer": value})
    data = yaml.safe_load(out.split("---\n")[1])
    assert data["answer"] == value


def test_crlf_and_bom_survive() -> None:
    doc = "\ufeff" + DOC.replace("\n", "\r\n")
    out = edit_frontmatter(doc, {"importance": 0.1, "new": "x"})
    assert out.startswith("\ufeff---\r\n")
    assert "\n" not in out.replace("\r\n", "")
    assert out.endswith("Body with --- inside\r\nand trailing spaces   \r\n")


def test_bad_names_and_values_are_refused() -> None:
    with pytest.raises(RefusedError):
        edit_frontmatter(DOC, {"bad: key": 1})
    with pytest.raises(RefusedError):
        edit_frontmatter(DOC, {"x": float("nan")})
    with pytest.raises(RefusedError):
        edit_frontmatter("no frontmatter here\n", {"x": 1})


# ---------------------------------------------------------------- property

_keys = st.from_regex(r"[a-z][a-z0-9_\-]{0,10}", fullmatch=True)
_scalars = st.one_of(
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=20),
    st.sampled_from(["no", "yes", "10:00", "null", "~", "2026-11-22", "#x", "a: b", "- z"]),
    st.dates(min_value=date(1990, 1, 1), max_value=date(2100, 1, 1)),
    st.datetimes(
        min_value=datetime(1990, 1, 1),
        max_value=datetime(2100, 1, 1),
        timezones=st.sampled_from(
            [UTC, timezone(timedelta(hours=2)), timezone(timedelta(hours=-5))]
        ),
    ).map(lambda d: d.replace(microsecond=0)),
)


def _line_for(key: str, value: Any, style: int) -> str:
    dumped = yaml.safe_dump({key: value}, allow_unicode=True, default_flow_style=True, width=10**6)
    text = dumped.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    if style == 1 and isinstance(value, str):
        text = f"{key}: " + '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return text


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    fields=st.dictionaries(_keys, _scalars, min_size=1, max_size=6),
    new_value=_scalars,
    styles=st.lists(st.integers(0, 1), min_size=6, max_size=6),
    crlf=st.booleans(),
    bom=st.booleans(),
    comment=st.booleans(),
    body=st.text(max_size=40),
    pick=st.integers(0, 5),
)
def test_editing_one_field_changes_only_its_line(
    fields: dict[str, Any],
    new_value: Any,
    styles: list[int],
    crlf: bool,
    bom: bool,
    comment: bool,
    body: str,
    pick: int,
) -> None:
    keys = list(fields)
    lines = ["---"]
    if comment:
        lines.append("# a comment the agent wrote")
    for n, k in enumerate(keys):
        line = _line_for(k, fields[k], styles[n])
        try:
            loaded = yaml.safe_load(line)
        except yaml.YAMLError:
            return  # hypothesis built an odd line; not what we test here
        if not isinstance(loaded, dict) or loaded.get(k) != fields[k]:
            return
        lines.append(line)
    lines.append("---")
    nl = "\r\n" if crlf else "\n"
    doc = ("\ufeff" if bom else "") + nl.join(lines) + nl + body.replace("\r", "")
    target = keys[pick % len(keys)]
    out = edit_frontmatter(doc, {target: new_value})
    before, after = doc.splitlines(True), out.splitlines(True)
    assert len(before) == len(after)
    diff = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert len(diff) <= 1
    if diff:
        assert before[diff[0]].startswith(target) or before[diff[0]].startswith(("'", '"'))
    assert out.startswith("\ufeff") == bom
    header = out.lstrip("\ufeff").replace("\r\n", "\n").split("---\n")[1]
    data = yaml.safe_load(header)
    assert data[target] == new_value
    for k in keys:
        if k != target:
            assert data[k] == fields[k]
