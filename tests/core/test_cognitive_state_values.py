"""Bad values inside `_state.json` entries are reported, and the memory keeps its defaults."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from memlens.core.formats.cognitive_memory.adapter import CognitiveMemoryAdapter
from memlens.core.formats.cognitive_memory.schema import STATE_FILE
from memlens.core.model import Memory, Problem, Reason, ScanResult
from memlens.core.scan.vault import Vault, rescan_paths, scan_vault

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
VAULT = FIXTURES / "cognitive-memory"
ADAPTER = CognitiveMemoryAdapter()
AS_OF = date(2026, 11, 22)

# Ids of fixture memories (graph/insights/, graph/decisions/, graph/errors/).
INSIGHT = "63a9d0e8-f2b4-4c15-a7e3-0b8d6c9f21e5"
DECISION = "d4a7e21c-83b5-4f09-a6d1-49c0e5b7f312"
ERROR = "6b3e9f15-c8a2-4d70-b1f6-94e0a7c3d528"
ORPHAN = "ffffffff-0000-4000-8000-000000000000"


@pytest.fixture
def vault_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "cm"
    shutil.copytree(VAULT, dest)
    return dest


def write_state(root: Path, entries: dict[str, Any], *, indent: int | None = 2) -> list[str]:
    """Write `_state.json` with these entries; return its lines (for line checks)."""
    text = json.dumps({"version": 1, "entries": entries}, indent=indent)
    (root / STATE_FILE).write_text(text, "utf-8")
    return text.split("\n")


def state_problems(result: ScanResult) -> list[Problem]:
    return [p for p in result.problems if p.path == STATE_FILE]


def by_id(result: ScanResult) -> dict[str, Memory]:
    return {m.id: m for m in result.memories}


def clean_count(root: Path) -> tuple[int, int]:
    """(valid memories, problems) of the vault with a clean `_state.json`."""
    write_state(root, {})
    result = ADAPTER.scan(root)
    return len(result.memories), len(result.problems)


def test_fixture_state_has_no_entry_problems() -> None:
    assert state_problems(ADAPTER.scan(VAULT)) == []


@pytest.mark.parametrize(
    ("entry", "field", "reason", "words"),
    [
        ({"access_count": "many"}, "access_count", Reason.WRONG_TYPE, "not a whole number"),
        ({"access_count": 2.5}, "access_count", Reason.WRONG_TYPE, "not a whole number"),
        ({"access_count": True}, "access_count", Reason.WRONG_TYPE, "not a whole number"),
        ({"access_count": -3}, "access_count", Reason.OUT_OF_RANGE, "negative"),
        ({"last_accessed": "yesterday"}, "last_accessed", Reason.WRONG_TYPE, "ISO 8601"),
        ({"last_accessed": "2026-13-45"}, "last_accessed", Reason.WRONG_TYPE, "ISO 8601"),
        ({"last_accessed": 1700000000}, "last_accessed", Reason.WRONG_TYPE, "ISO 8601"),
        ({"decay_score": "high"}, "decay_score", Reason.WRONG_TYPE, "not a number"),
    ],
)
def test_each_bad_value_is_one_problem(
    vault_copy: Path, entry: dict[str, Any], field: str, reason: Reason, words: str
) -> None:
    valid, problems = clean_count(vault_copy)
    lines = write_state(vault_copy, {ERROR: {"access_count": 1}, INSIGHT: entry})
    result = ADAPTER.scan(vault_copy)
    (problem,) = state_problems(result)
    assert problem.reason is reason
    assert problem.format == "cognitive-memory" and problem.id is None
    assert INSIGHT in problem.detail and field in problem.detail and words in problem.detail
    assert "\n" not in problem.detail
    # The line of the field itself, both as the record line and the jump target.
    assert problem.line == problem.at_line
    assert problem.line is not None and lines[problem.line - 1].strip().startswith(f'"{field}"')
    # The memory stays listed, with the defaults in place of the bad value.
    assert len(result.memories) == valid and len(result.problems) == problems + 1
    memory = by_id(result)[INSIGHT]
    if field == "access_count":
        assert memory.native["access_count"] == 0
    if field == "last_accessed":
        assert memory.native["last_accessed"] is None
        info = ADAPTER.decay(memory, AS_OF)
        assert info.score is not None and "created" in info.why
    # The good entry is used as before.
    assert by_id(result)[ERROR].native["access_count"] == 1


def test_entry_that_is_not_an_object(vault_copy: Path) -> None:
    lines = write_state(vault_copy, {DECISION: [1, 2], INSIGHT: "often"})
    result = ADAPTER.scan(vault_copy)
    problems = state_problems(result)
    assert [p.reason for p in problems] == [Reason.MALFORMED_JSON] * 2
    details = {p.detail for p in problems}
    assert any(DECISION in d and "array, not an object" in d for d in details)
    assert any(INSIGHT in d and "string, not an object" in d for d in details)
    for p in problems:
        assert p.line is not None
        mem_id = DECISION if DECISION in p.detail else INSIGHT
        assert lines[p.line - 1].strip().startswith(f'"{mem_id}"')
    for mem_id in (DECISION, INSIGHT):
        native = by_id(result)[mem_id].native
        assert native["has_state"] is False and native["access_count"] == 0


def test_several_bad_fields_of_one_entry(vault_copy: Path) -> None:
    lines = write_state(
        vault_copy,
        {INSIGHT: {"access_count": "many", "last_accessed": "soon", "decay_score": 0.3}},
    )
    problems = state_problems(ADAPTER.scan(vault_copy))
    assert sorted((p.detail.split(": ", 1)[1].split(" ", 1)[0]) for p in problems) == [
        "access_count",
        "last_accessed",
    ]
    assert len({p.line for p in problems}) == 2
    for p in problems:
        assert p.line is not None and INSIGHT in p.detail
        field = "access_count" if "access_count" in p.detail else "last_accessed"
        assert lines[p.line - 1].strip().startswith(f'"{field}"')


def test_good_and_null_values_are_quiet(vault_copy: Path) -> None:
    write_state(
        vault_copy,
        {
            INSIGHT: {"access_count": 0, "last_accessed": "2026-11-01", "decay_score": 999.0},
            DECISION: {"access_count": None, "last_accessed": None, "decay_score": None},
            ERROR: {"access_count": 10**30, "last_accessed": "2026-11-01T10:00:00Z"},
        },
    )
    result = ADAPTER.scan(vault_copy)
    assert state_problems(result) == []
    assert by_id(result)[ERROR].native["access_count"] == 10**30
    assert by_id(result)[INSIGHT].native["last_accessed"] == "2026-11-01"


def test_orphan_entries_are_ignored_even_when_bad(vault_copy: Path) -> None:
    write_state(vault_copy, {ORPHAN: {"access_count": "lots"}, "not-an-id": [1]})
    result = ADAPTER.scan(vault_copy)
    assert state_problems(result) == []
    assert [o["id"] for o in result.records["state_orphans"]] == [ORPHAN]


def test_one_line_state_file(vault_copy: Path) -> None:
    write_state(vault_copy, {INSIGHT: {"access_count": -1}, DECISION: 7}, indent=None)
    problems = state_problems(ADAPTER.scan(vault_copy))
    assert {p.reason for p in problems} == {Reason.OUT_OF_RANGE, Reason.MALFORMED_JSON}
    assert all(p.line == 1 for p in problems)


def test_duplicate_keys_point_at_the_copy_json_keeps(vault_copy: Path) -> None:
    text = (
        '{\n  "entries": {\n'
        f'    "{INSIGHT}": {{"access_count": 1}},\n'
        f'    "{INSIGHT}": {{"access_count": "x"}}\n'
        "  }\n}\n"
    )
    (vault_copy / STATE_FILE).write_text(text, "utf-8")
    (problem,) = state_problems(ADAPTER.scan(vault_copy))
    assert problem.line == 4 and problem.reason is Reason.WRONG_TYPE


def test_escaped_keys_still_get_a_line(vault_copy: Path) -> None:
    escaped = "".join(f"\\u{ord(c):04x}" for c in INSIGHT)
    text = f'{{"version": 1,\n "entries": {{\n  "{escaped}":\n   {{"access_count": "x"}}}}}}'
    (vault_copy / STATE_FILE).write_text(text, "utf-8")
    (problem,) = state_problems(ADAPTER.scan(vault_copy))
    assert INSIGHT in problem.detail and problem.line == 4


def test_state_problem_follows_its_memory_on_rescan(vault_copy: Path) -> None:
    """A memory file leaving or coming back makes its entry an orphan or not."""
    write_state(vault_copy, {INSIGHT: {"access_count": "many"}})
    vault = scan_vault(Vault(root=vault_copy, format="cognitive-memory", rel="."))
    assert len(state_problems(vault.result)) == 1
    path = vault_copy / by_id(vault.result)[INSIGHT].path
    data = path.read_bytes()
    path.unlink()
    got = rescan_paths(vault, [path])
    assert state_problems(got) == []
    assert got.problems == ADAPTER.scan(vault_copy).problems
    path.write_bytes(data)
    got = rescan_paths(vault, [path])
    assert len(state_problems(got)) == 1
    assert got.problems == ADAPTER.scan(vault_copy).problems
    # Fixing the value clears the problem.
    write_state(vault_copy, {INSIGHT: {"access_count": 3}})
    got = rescan_paths(vault, [vault_copy / STATE_FILE])
    assert state_problems(got) == []
    assert by_id(got)[INSIGHT].native["access_count"] == 3
