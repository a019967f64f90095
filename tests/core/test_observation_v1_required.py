"""observation/v1 and comprehension/v1: absent, null, empty and wrong-typed required fields.

The rule (core/formats/observation_v1.py docstring): an absent key is
`missing_required_field`; a key present but null, or of the wrong type, is
`wrong_type`; a required text that is empty or blank is `out_of_range`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memlens.core.formats.observation_v1.adapter import ObservationV1Adapter

ADAPTER = ObservationV1Adapter()

OBS_FIELDS: dict[str, str] = {
    "spec": "observation/v1",
    "id": "obs-001",
    "timestamp": "2026-11-02T09:14:07Z",
    "source": "agent/test",
    "event": '"something happened"',
}

COMP_HEADER = """\
spec: comprehension/v1
id: comp-a-001
topic: "A topic"
domain: testing
created: 2026-11-02T09:30:00Z
updated: 2026-11-03T09:30:00Z
prior:
  statement: "Before"
  confidence: medium
  source: accumulated
observations: [obs-001]
posterior:
  statement: "After"
  confidence: high
  update_reasoning: "Because"
  observations_used: [obs-001]
"""


def _obs_header(**override: str | None) -> str:
    """The observation header with fields replaced (a value of None drops the key)."""
    lines = []
    for key, value in {**OBS_FIELDS, **override}.items():
        if value is not None:
            lines.append(f"{key}:{' ' if value else ''}{value}")
    return "\n".join(lines) + "\n"


def _problem(root: Path, rel: str, header: str) -> tuple[str, str]:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{header}---\n\n# T\n", encoding="utf-8")
    res = ADAPTER.scan(root)
    assert res.memories == []
    assert len(res.problems) == 1, res.problems
    return res.problems[0].reason.value, res.problems[0].detail


@pytest.mark.parametrize("key", ["spec", "id", "timestamp", "source", "event"])
def test_observation_absent_key_is_missing(tmp_path: Path, key: str) -> None:
    header = _obs_header(**{key: None})
    assert _problem(tmp_path, "observations/obs-001.md", header) == (
        "missing_required_field",
        f"lacks {key}",
    )


@pytest.mark.parametrize("key", ["spec", "id", "timestamp", "source", "event"])
@pytest.mark.parametrize("written", ["", "null", "~"])
def test_observation_null_value_is_wrong_type(tmp_path: Path, key: str, written: str) -> None:
    reason, _detail = _problem(tmp_path, "observations/obs-001.md", _obs_header(**{key: written}))
    assert reason == "wrong_type"


@pytest.mark.parametrize(
    ("key", "reason", "detail"),
    [
        ("id", "out_of_range", "id is empty"),
        ("source", "out_of_range", "source is empty"),
        ("event", "out_of_range", "event is empty"),
        # A timestamp is a datetime: an empty string is not one at all.
        ("timestamp", "wrong_type", "timestamp '' is not an ISO datetime"),
        ("spec", "wrong_type", "spec '' is not 'observation/v1'"),
    ],
)
@pytest.mark.parametrize("empty", ['""', "''", '"   "'])
def test_observation_empty_string(
    tmp_path: Path, key: str, reason: str, detail: str, empty: str
) -> None:
    got = _problem(tmp_path, "observations/obs-001.md", _obs_header(**{key: empty}))
    assert got[0] == reason
    if empty != '"   "':
        assert got[1] == detail


@pytest.mark.parametrize("written", ["", "null", "[]", "text", "3"])
def test_observation_context_present_but_not_a_mapping(tmp_path: Path, written: str) -> None:
    header = _obs_header() + f"context:{' ' if written else ''}{written}\n"
    reason, detail = _problem(tmp_path, "observations/obs-001.md", header)
    assert reason == "wrong_type"
    assert detail.startswith("context must be a mapping, not ")


def test_observation_without_context_or_with_an_empty_mapping_is_valid(tmp_path: Path) -> None:
    (tmp_path / "observations").mkdir()
    (tmp_path / "observations/obs-001.md").write_text(
        f"---\n{_obs_header()}---\n\n# T\n", encoding="utf-8"
    )
    (tmp_path / "observations/obs-002.md").write_text(
        f"---\n{_obs_header(id='obs-002')}context: {{}}\n---\n\n# T\n", encoding="utf-8"
    )
    res = ADAPTER.scan(tmp_path)
    assert res.problems == []
    assert sorted(m.id for m in res.memories) == ["obs-001", "obs-002"]


def _comp_with(line: str, replacement: str | None) -> str:
    """The comprehension header with one line replaced (None drops it)."""
    lines = COMP_HEADER.splitlines()
    index = lines.index(line)
    if replacement is None:
        del lines[index]
    else:
        lines[index] = replacement
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("line", "key", "name"),
    [
        ('topic: "A topic"', "topic", "topic"),
        ("domain: testing", "domain", "domain"),
        ('  statement: "Before"', "  statement", "prior.statement"),
        ("  source: accumulated", "  source", "prior.source"),
        ('  update_reasoning: "Because"', "  update_reasoning", "posterior.update_reasoning"),
    ],
)
def test_comprehension_text_fields(tmp_path: Path, line: str, key: str, name: str) -> None:
    rel = "comprehension/comp-a-001.md"
    assert _problem(tmp_path, rel, _comp_with(line, None)) == (
        "missing_required_field",
        f"lacks {name}",
    )
    reason, _ = _problem(tmp_path, rel, _comp_with(line, f"{key}:"))
    assert reason == "wrong_type"
    assert _problem(tmp_path, rel, _comp_with(line, f'{key}: ""')) == (
        "out_of_range",
        f"{name} is empty",
    )


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ("observations: [obs-001]", "observations"),
        ("created: 2026-11-02T09:30:00Z", "created"),
        ("updated: 2026-11-03T09:30:00Z", "updated"),
        ("  observations_used: [obs-001]", "  observations_used"),
    ],
)
def test_comprehension_null_is_wrong_type_absent_is_missing(
    tmp_path: Path, line: str, key: str
) -> None:
    rel = "comprehension/comp-a-001.md"
    assert _problem(tmp_path, rel, _comp_with(line, None))[0] == "missing_required_field"
    assert _problem(tmp_path, rel, _comp_with(line, f"{key}:"))[0] == "wrong_type"
