"""Frontmatter reading: safe loading only, and hostile headers are reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from memlens.core.errors import ParseError
from memlens.core.model import Reason
from memlens.core.text.frontmatter import load_frontmatter


def test_python_object_tags_are_refused_and_nothing_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    text = f"---\nx: !!python/object/apply:os.system ['touch {marker}']\n---\nbody\n"
    with pytest.raises(ParseError) as info:
        load_frontmatter(text, "m.md")
    assert info.value.reason is Reason.MALFORMED_FRONTMATTER
    assert not marker.exists()


def test_alias_bomb_is_reported_not_expanded() -> None:
    lines = ["---", "a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 10)}]")
    lines += ["---", "body"]
    with pytest.raises(ParseError) as info:
        load_frontmatter("\n".join(lines), "bomb.md")
    assert "aliases" in info.value.detail


def test_small_anchors_are_fine() -> None:
    data, doc = load_frontmatter("---\na: &x [1, 2]\nb: *x\n---\nbody\n", "m.md")
    assert data == {"a": [1, 2], "b": [1, 2]} and doc.body == "body\n"


def test_deep_nesting_is_reported_not_a_crash() -> None:
    text = "---\nx: " + "[" * 30000 + "]" * 30000 + "\n---\n"
    with pytest.raises(ParseError) as info:
        load_frontmatter(text, "deep.md")
    assert info.value.reason is Reason.MALFORMED_FRONTMATTER
