"""The frontmatter fast path gives exactly what the YAML loader gives, or falls back."""

from __future__ import annotations

import math
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memlens.core.errors import ParseError
from memlens.core.model import Reason
from memlens.core.text.fastyaml import LOADER, fast_load
from memlens.core.text.frontmatter import load_frontmatter, split_frontmatter


def same(a: Any, b: Any) -> bool:
    """Equal values of identical types all the way down (True is not 1, nan is nan)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, datetime):
        return a == b and a.utcoffset() == b.utcoffset() and a.tzinfo == b.tzinfo
    return bool(a == b)


def loader_result(header: str) -> Any:
    try:
        return yaml.load(header, Loader=LOADER)
    except Exception as exc:  # the loader's own verdict
        return exc


def check(header: str) -> bool:
    """True when the fast path handled `header` (and matched the loader)."""
    fast = fast_load(header)
    if fast is None:
        return False
    expected = loader_result(header)
    assert not isinstance(expected, Exception), (header, expected)
    assert same(fast, expected), (header, fast, expected)
    return True


# -- generated headers -------------------------------------------------------

TRAP_SCALARS = [
    "yes", "Yes", "YES", "no", "No", "NO", "on", "On", "off", "OFF", "true", "False",
    "y", "n", "Y", "N", "~", "null", "Null", "NULL", "nul", "0", "-0", "+1", "012", "019",
    "0o17", "0x1F", "0x1g", "0b101", "1_000", "10:00", "1:20:30", "190:20:30.15", "60:61",
    "1.0", "1.", ".5", "1e3", "1.0e+3", "1.0E-3", "6.8523015e+5", ".inf", "-.Inf", "+.INF",
    ".nan", ".NaN", "NaN", "inf", "2026-01-01", "2026-02-30", "2026-1-1", "2026-01-01T10:00:00Z",
    "2026-01-01 10:00:00", "2026-01-01t10:00:00.5+02:00", "2001-12-14 21:59:43.10 -5",
    "2026-01-01T25:00:00Z", "=", "<<", "<a", "-", "--", "---", "...", "?", "?a", ":a", "a:",
    "a:b", "a: b", "a #b", "a#b", "#a", "a,b", "[a", "a]", "{a}", "&a", "*a", "!a", "!!str a",
    "|", ">", "'a'", '"a"', "'it''s'", "'a'b'", '"a\\"b"', '"a\\tb"', "@a", "`a", "%a",
    "a  b", "ünïcödé", "日本語", "🔥 fire", "a\tb", "a\x85b", "a\u2028b", "\ufeffa", "a\x7fb",
    "C#", "http://x.y/z?q=1#f", "50%", "1,000", "v1.2.3", "observation/v1", "x-y",
]  # fmt: skip
TRAP_KEYS = [
    "id", "title", "tags", "x-reviewed", "a.b", "a_b", "A1", "1", "1.5", "yes", "on", "no",
    "null", "~", "<<", "=", "true", "2026-01-01", "0x1", "key with space", "-k", "?k",
    '"q"', "'q'", "k:", "é", "_", "k" * 130,
]  # fmt: skip

chars = st.sampled_from(list("ab1 :-#'\"[],{}&*!|>%@`\\.~+_?=<\tx\u00e9\u2028\x85\x00/"))
words = st.text(chars, min_size=0, max_size=12)
scalars = st.one_of(
    st.sampled_from(TRAP_SCALARS),
    words,
    words.map(lambda w: f'"{w}"'),
    words.map(lambda w: f"'{w}'"),
)
flows = st.lists(scalars, max_size=4).map(lambda xs: "[" + ", ".join(xs) + "]")
flows_odd = st.lists(st.one_of(scalars, st.just("")), max_size=4).map(
    lambda xs: "[" + st_join(xs) + "]"
)
keys = st.one_of(
    st.sampled_from(TRAP_KEYS), st.from_regex(r"[a-z_][a-z0-9_-]{0,6}", fullmatch=True)
)
values = st.one_of(scalars, flows, flows_odd, st.just(""))
# Mostly well-formed pieces, so that many headers do take the fast path.
clean_words = st.text(st.sampled_from(list("aaaabbbb111   :-#'.~+_/xé")), min_size=1, max_size=10)
#: The traps the fast path must type itself (YAML 1.1 implicit types).
RESOLVER_TRAPS = [
    "yes", "Yes", "NO", "on", "Off", "true", "FALSE", "y", "n", "~", "null", "Null", "0", "012",
    "019", "0o17", "0x1F", "0b101", "1_000", "10:00", "1:20:30", "190:20:30.15", "60:61", "1.0",
    "1.", ".5", "1e3", "1.0e+3", "6.8523015e+5", ".inf", "+.INF", ".NaN", "NaN", "inf",
    "2026-01-01", "2026-1-1", "2026-01-01T10:00:00Z", "2026-01-01 10:00:00",
    "2026-01-01t10:00:00.5+02:00", "2001-12-14 21:59:43.10 -5", "2026-01-01T10:00:00.123456789Z",
    "C#", "50%", "1,000", "v1.2.3", "~x", "<a", "a]", "a}", "a,b", "x- y", "a ? b", "a :b",
    "offline", "nullable", "yesterday", "Trueish", "Noon", "FALSEY", "onward", "obs-000052",
    "falses", "NULLS", "~~~~~~", "ON OFF", "no no", "yes!",
]  # fmt: skip
clean_scalars = st.one_of(
    st.sampled_from(RESOLVER_TRAPS),
    clean_words.filter(lambda w: w.strip() == w),
    clean_words.map(lambda w: f'"{w}"'),
    clean_words.map(lambda w: "'" + w.replace("'", "''") + "'"),
)
clean_values = st.one_of(
    clean_scalars,
    st.lists(clean_scalars, max_size=4).map(lambda xs: "[" + ", ".join(xs) + "]"),
)
clean_keys = st.one_of(
    st.from_regex(r"[a-z][a-z0-9_.-]{2,8}", fullmatch=True),
    st.sampled_from(["on", "yes", "null", "1", "x-y", "a.b", "k"]),
    st.from_regex(r"[a-z][a-z0-9_.-]{2,8}", fullmatch=True),
    st.from_regex(r"[a-z][a-z0-9_.-]{2,8}", fullmatch=True),
)
spaces = st.sampled_from(["", " ", "  ", "\t"])


def st_join(items: list[str]) -> str:
    return ",".join(items)


@st.composite
def blocks(draw: st.DrawFn, clean: bool = False) -> list[str]:
    """The lines of one top-level entry (a key and maybe a block below it).

    `clean` draws mostly well-formed entries (so many headers take the fast
    path); otherwise indentation, comments and characters are anything.
    """
    keys_ = clean_keys if clean else keys
    values_ = clean_values if clean else values

    def pick(odd: list[Any], good: Any) -> Any:
        return good if clean and draw(st.integers(0, 9)) else draw(st.sampled_from(odd))

    key = draw(keys_)
    kind = draw(st.sampled_from(["scalar", "scalar", "seq", "map", "seqmap", "comment", "blank"]))
    if kind == "comment":
        return [draw(st.sampled_from(["# note", "  # note", "#", "   "]))]
    if kind == "blank":
        return [""]
    if kind == "scalar":
        v = draw(values_)
        return [f"{key}:{' ' if v else ''}{v}{pick(['', ' ', ' # c'], '')}"]
    ind = draw(st.sampled_from([0, 1, 2, 2, 4]))
    pad = " " * ind
    out = [f"{key}:{pick([' ', '  ', '', ' # c'], '')}"]
    for _ in range(draw(st.integers(0, 3))):
        if kind == "seq":
            out.append(f"{pad}-{pick(['  ', '', ' '], ' ')}{draw(values_)}")
        elif kind == "map":
            sub = pick([ind + 1, max(0, ind - 1), ind], ind)
            v = draw(values_)
            out.append(f"{' ' * sub}{draw(keys_)}:{' ' if v else ''}{v}")
        else:
            out.append(f"{pad}- {draw(keys_)}: {draw(values_)}")
            for _ in range(draw(st.integers(0, 3))):
                sub = pick([ind + 1, ind + 3, ind, ind + 2], ind + 2)
                v = draw(values_)
                out.append(f"{' ' * sub}{draw(keys_)}:{' ' if v else ''}{v}")
        if draw(st.integers(0, 3)) == 0:
            out.append(draw(st.sampled_from(["", "# c", f"{pad}  # c", f"{pad}   more"])))
    return out


headers = st.one_of(
    st.lists(blocks(), min_size=0, max_size=8),
    st.lists(blocks(clean=True), min_size=1, max_size=8),
).map(lambda bs: "\n".join(line for b in bs for line in b))


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(headers)
@example("id: x\nid: y")
@example("a: 1\n  b: 2")
@example("a:\n  b: 1\n c: 2")
@example("a:\n- x\n- y\nb: 1")
@example("a:\n  - x\n  -\n")
@example("relations:\n  - target: t\n    type: x\n    strength: 0.5\n  - target: u\n    type: y")
@example("a: [x, y,]")
@example("a: [x,, y]")
@example("yes: 1")
@example("a: 2026-02-30")
def test_generated_headers_match_the_loader_or_fall_back(header: str) -> None:
    check(header)


@settings(max_examples=2000, deadline=None)
@given(st.sampled_from(TRAP_SCALARS), st.sampled_from(["", " ", "  "]))
def test_every_trap_scalar_is_typed_as_the_loader_types_it(value: str, pad: str) -> None:
    for header in (f"k: {value}{pad}", f"k: [{value}]", f"k:\n  - {value}", f"k:\n  s: {value}"):
        check(header)


def test_the_common_subset_really_takes_the_fast_path() -> None:
    headers = [
        'id: a\ntitle: "T: x"\ntags: [a, \'b c\', "d"]\nimportance: 0.5\ncreated: 2026-01-01',
        "spec: observation/v1\ntimestamp: 2026-05-24T20:50:28Z\ncontext:\n  project: s\n  n: 3",
        "tags:\n- a\n- b\nrelations:\n  - target: x\n    type: related\n    strength: 0.8\n",
        "# comment\nverified: yes\nnothing:\npinned: off\nwhen: 10:30\nk: ~",
        "a: 'it''s'\nb: .inf\nc: 0x1F\nd: 2026-01-01 10:00:00 +02:00\ne: C#",
    ]
    for header in headers:
        assert check(header), header


@pytest.mark.parametrize(
    "header",
    [
        "a: &x 1\nb: *x",
        "a: !!str 1",
        "a: |\n  text",
        "a: >\n  text",
        "a: x # c",
        'a: "x\\ty"',
        "a: {b: 1}",
        "a: [[1]]",
        "a: x\n  y",
        "a: 1\na: 2",
        "yes: 1",
        "<<: {a: 1}",
        "a:\tb",
        "a: =",
        "a: 2026-02-30",
        "a: b: c",
        "  a: 1",
        "--- a",
        "a:\n  b:\n    c: 1",
    ],
)
def test_outside_the_subset_falls_back(header: str) -> None:
    assert fast_load(header) is None


def _fixture_headers(fixtures: Path) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for path in sorted(fixtures.rglob("*.md")):
        raw = path.read_bytes()
        try:
            text = raw.decode("utf-8").lstrip("\ufeff").replace("\r\n", "\n")
            doc = split_frontmatter(text, str(path))
        except (UnicodeDecodeError, ParseError):
            continue
        out.append((str(path.relative_to(fixtures)), doc.header))
    return out


def test_every_fixture_header_matches_the_loader_or_falls_back(own_fixtures_dir: Path) -> None:
    # The own test vaults and the bundled demo vaults: every project-owned header.
    demo = Path(__file__).resolve().parents[2] / "core" / "demo_vaults"
    found = _fixture_headers(own_fixtures_dir) + _fixture_headers(demo)
    assert len(found) > 50
    handled = sum(check(header) for _rel, header in found)
    assert handled > len(found) // 2  # the fast path is the common path


def test_load_frontmatter_errors_are_the_loaders() -> None:
    for text, needle in [
        ("---\na: b: c\n---\n", "mapping values are not allowed"),
        ("---\na: 2026-02-30\n---\n", "day is out of range"),
        ("---\na: [x,, y]\n---\n", "YAML error"),
    ]:
        with pytest.raises(ParseError) as info:
            load_frontmatter(text, "m.md")
        assert needle in info.value.detail


def test_shared_scalars_are_immutable_and_equal() -> None:
    a = fast_load("d: 2026-01-01\nt: [x]")
    b = fast_load("d: 2026-01-01\nt: [x]")
    assert a is not None and b is not None
    assert a == b and a["d"] == date(2026, 1, 1)
    assert a["t"] is not b["t"]  # containers are never shared


def _split_by_lines(text: str) -> tuple[str, str, int] | str:
    """The original line-list splitter, as a reference for split_frontmatter."""
    lines = text.split("\n")
    if lines[0].rstrip() != "---":
        return "no_frontmatter"
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            return "\n".join(lines[1:i]), "\n".join(lines[i + 1 :]), i + 2
    return "never closed"


@settings(max_examples=1500, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "---",
                "--- ",
                "---\t",
                "...",
                "... x",
                "----",
                "-- -",
                "a: 1",
                "",
                " ---",
                "x",
                "\x1c",
            ]
        ),
        max_size=8,
    )
)
def test_split_frontmatter_cuts_where_the_line_splitter_did(lines: list[str]) -> None:
    text = "\n".join(lines)
    expected = _split_by_lines(text)
    try:
        doc = split_frontmatter(text, "m.md")
    except ParseError as err:
        verdict = {
            Reason.NO_FRONTMATTER: "no_frontmatter",
            Reason.MALFORMED_FRONTMATTER: "never closed",
        }
        assert verdict[err.reason] == expected
        return
    assert (doc.header, doc.body, doc.body_line) == expected
