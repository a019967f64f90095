"""The CLI's indented JSON is exactly what json.dumps(indent=2) gives."""

from __future__ import annotations

import json
from datetime import date, datetime
from enum import StrEnum
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from memlens.tui.cli.jsonout import dumps_indented, iter_indented


class Colour(StrEnum):
    RED = "red"


def reference(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2, default=str)


_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
    | st.dates()
    | st.datetimes()
)
_keys = st.text() | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(_keys, inner, max_size=4)
    ),
    max_leaves=25,
)


@settings(max_examples=400, deadline=None)
@given(_values)
def test_same_text_as_json_dumps(data: Any) -> None:
    assert dumps_indented(data) == reference(data)
    # What the CLI writes, one top-level element at a time: the same text.
    assert "".join(iter_indented(data)) == reference(data)


def test_edge_values() -> None:
    for data in (
        {},
        [],
        {"a": {}, "b": [], "c": [[]], "d": [{}]},
        {"bidi": "\u202e", "nul": "\x00", "quote": '"\\', "emoji": "⛵", "surrogate": "\ud800"},
        {2: "int key", False: "bool key", None: "none key", 1.5: "float key"},
        {"enum": Colour.RED, "when": date(2026, 1, 2), "at": datetime(2026, 1, 2, 3, 4)},
        [float("nan"), float("inf"), -float("inf"), -0.0, 1e300, 5e-324],
        {"set": {1, 2}},  # default=str
    ):
        assert dumps_indented(data) == reference(data)
        assert "".join(iter_indented(data)) == reference(data)
