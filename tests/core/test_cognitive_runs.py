"""Cognitive-memory maintenance runs against the own fixture vault's generated files.

_index.json, CORE.md and REFLECTION.md are compared with the fixture's files
(the format's documented layout) field by field, the decay run with
expected/cognitive-memory.json, and every run is applied, checked and undone on a copy.
"""

from __future__ import annotations

import difflib
import json
import re
import shutil
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memlens.core.errors import ConflictError, NotFoundError, RefusedError
from memlens.core.formats.cognitive_memory.adapter import CognitiveMemoryAdapter
from memlens.core.formats.cognitive_memory.runs import (
    CORE_BUDGET_CHARS,
    CORE_PER_SECTION,
    build_index,
    plan_core,
    plan_reindex,
    render_core,
    render_index,
)
from memlens.core.formats.cognitive_memory.runs_reflection import (
    KNOWN_PROJECTS,
    plan_reflection,
    render_reflection,
)
from memlens.core.formats.cognitive_memory.runs_state import plan_decay_scores, plan_record_access
from memlens.core.model import Memory
from memlens.core.write.journal import apply_plan, undo_last
from memlens.tui.cli.cognitive import COMMANDS, access, core, reflection, reindex, rescore

ADAPTER = CognitiveMemoryAdapter()
INDEX_TIME = datetime(2026, 11, 21, 22, 0, tzinfo=UTC)
#: The fixture's CORE.md was written on 2026-11-21 from that day's scores.
CORE_SCORES_DAY = date(2026, 11, 21)
GENERATED_ON = date(2026, 11, 21)


@pytest.fixture
def vault(own_fixtures_copy: Path) -> Path:
    return (own_fixtures_copy / "cognitive-memory").resolve()


@pytest.fixture(scope="module")
def original(own_fixtures_dir: Path) -> Path:
    return own_fixtures_dir / "cognitive-memory"


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".memlens" not in p.relative_to(root).parts
    }


def diff_files(before: dict[str, bytes], after: dict[str, bytes]) -> set[str]:
    return {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}


def sections(text: str) -> dict[str, list[str]]:
    """'## ' heading -> its non-blank lines; '' holds the lines before the first one."""
    out: dict[str, list[str]] = {"": []}
    current = ""
    for line in text.split("\n"):
        if line.startswith("## "):
            current = line[3:]
            out[current] = []
        elif line.strip():
            out[current].append(line)
    return out


def live(root: Path) -> list[Memory]:
    return [m for m in ADAPTER.scan(root).memories if not m.archived]


# --------------------------------------------------------------------------- _index.json


def test_index_matches_the_fixture_byte_for_byte(original: Path) -> None:
    text = render_index(build_index(original, INDEX_TIME))
    assert text == (original / "_index.json").read_text(encoding="utf-8")


def test_index_shape_field_by_field(original: Path, own_expected: dict[str, Any]) -> None:
    ours = build_index(original, datetime(2026, 12, 1, 8, 0, 30, 999, tzinfo=UTC))
    theirs = json.loads((original / "_index.json").read_text(encoding="utf-8"))
    assert list(ours) == ["version", "updated", "count", "entries"]
    assert ours["version"] == 1
    assert ours["updated"] == "2026-12-01T08:00:30+00:00"
    cm = own_expected["formats"]["cognitive-memory"]
    assert ours["count"] == cm["index"]["count"] == len(ours["entries"])
    assert list(ours["entries"]) == list(theirs["entries"])
    for mem_id, entry in theirs["entries"].items():
        mine = ours["entries"][mem_id]
        assert list(mine) == list(entry), mem_id
        for key, value in entry.items():
            assert mine[key] == value, (mem_id, key)
    # invalid files are not indexed; the duplicated id is indexed once
    invalid_paths = {p["path"] for p in cm["invalid"] if p["reason"] != "duplicate_id"}
    paths = {e["path"] for e in ours["entries"].values()}
    assert not paths & invalid_paths
    dup_ids = {p["id"] for p in cm["invalid"] if p["reason"] == "duplicate_id"}
    for dup in dup_ids:
        assert dup in ours["entries"]
        assert ours["entries"][dup]["path"] in cm["index"]["note"]


def test_index_duplicate_rule_is_first_in_path_order(vault: Path) -> None:
    a = vault / "graph/code-patterns/aaa-dup-111111.md"
    b = vault / "graph/workflows/zzz-dup-111111.md"
    for path, title in ((a, "First"), (b, "Second")):
        path.write_text(
            "---\nid: 11111111-2222-4333-8444-555555555555\ntype: general\n"
            f'title: "{title}"\nimportance: 0.5\ncreated: 2026-01-01T00:00:00Z\n'
            "updated: 2026-01-01T00:00:00Z\n---\nx\n",
            encoding="utf-8",
        )
    entry = build_index(vault, INDEX_TIME)["entries"]["11111111-2222-4333-8444-555555555555"]
    assert entry["title"] == "First"
    assert entry["path"] == "graph/code-patterns/aaa-dup-111111.md"
    assert entry["created"] == "2026-01-01T00:00:00Z"  # as written in the file
    assert entry["confidence"] == 0.8  # the default
    assert entry["tags"] == [] and entry["relations"] == []


def test_archived_memories_are_not_indexed(vault: Path) -> None:
    rel = "graph/decisions/chose-sqlite-with-litestream-over-hosted-postgres-d4a7e2.md"
    (vault / "archive/decisions").mkdir(parents=True)
    shutil.move(vault / rel, vault / "archive/decisions" / Path(rel).name)
    index = build_index(vault, INDEX_TIME)
    assert "d4a7e21c-83b5-4f09-a6d1-49c0e5b7f312" not in index["entries"]
    assert "80b6f3d9-2e4c-4a71-9f08-6c3e1b5a7d42" not in index["entries"]  # archived in the fixture
    assert index["count"] == 31


def test_reindex_plan_writes_only_the_index_and_undoes(vault: Path) -> None:
    before = tree(vault)
    plan = plan_reindex(vault, datetime(2026, 11, 22, tzinfo=UTC))
    assert plan.describe() == ["rewrite _index.json"]
    apply_plan(plan)
    after = tree(vault)
    assert diff_files(before, after) == {"_index.json"}
    data = json.loads(after["_index.json"])
    assert data["updated"] == "2026-11-22T00:00:00+00:00"
    undo_last(vault)
    assert tree(vault) == before
    # the same time again: nothing to write
    plan = plan_reindex(vault, INDEX_TIME)
    assert plan.changes == []


def test_reindex_creates_a_missing_index_and_undo_sets_it_aside(vault: Path) -> None:
    (vault / "_index.json").unlink()
    before = tree(vault)
    plan = plan_reindex(vault, INDEX_TIME)
    assert plan.describe() == ["create _index.json"]
    apply_plan(plan)
    assert (vault / "_index.json").exists()
    undo_last(vault)
    assert tree(vault) == before
    assert list((vault / ".memlens" / "undone").rglob("_index.json"))  # moved aside, not deleted


def test_reindex_refuses_a_change_between_plan_and_apply(vault: Path) -> None:
    plan = plan_reindex(vault, datetime(2026, 11, 22, tzinfo=UTC))
    (vault / "_index.json").write_text("{}\n", encoding="utf-8")
    with pytest.raises(ConflictError):
        apply_plan(plan)
    assert (vault / "_index.json").read_text(encoding="utf-8") == "{}\n"


# --------------------------------------------------------------------------- CORE.md


def test_core_matches_the_fixture(original: Path) -> None:
    text = render_core(original, CORE_SCORES_DAY, GENERATED_ON)
    assert text == (original / "CORE.md").read_text(encoding="utf-8")


def test_core_follows_the_rules_at_any_date(original: Path) -> None:
    as_of = date(2026, 11, 22)
    text = render_core(original, as_of)
    by_path = {m.path: m for m in live(original)}
    header = text.split("\n")[1]
    m = re.fullmatch(
        r"> Last updated: (\S+) \| Active memories: (\d+)/(\d+) \| "
        r"Next refresh: daily \(systemd timer\)",
        header,
    )
    assert m is not None
    scores = {p: ADAPTER.decay(x, as_of).score or 0.0 for p, x in by_path.items()}
    assert m.group(1) == "2026-11-22"
    assert int(m.group(2)) == sum(1 for s in scores.values() if s >= 0.5)
    assert int(m.group(3)) == len(by_path) == 31
    kinds = {
        "Critical Solutions": {"solution"},
        "Active Decisions": {"decision"},
        "Key Fixes": {"fix"},
        "Configurations": {"configuration"},
        "Patterns & Workflows": {"procedure", "code_pattern", "workflow"},
    }
    listed: set[str] = set()
    for heading, lines in sections(text).items():
        if not heading:
            continue
        assert heading in kinds
        got = []
        for line in lines:
            lm = re.fullmatch(r"- \[(.+)\]\((.+)\) \((.+)\)", line)
            assert lm is not None, line
            mem = by_path[lm.group(2)]
            assert lm.group(1) == mem.title
            assert lm.group(3) == ", ".join(mem.tags[:2])
            assert mem.kind in kinds[heading]
            got.append(scores[mem.path])
            listed.add(mem.path)
        assert got == sorted(got, reverse=True)
        assert len(got) <= CORE_PER_SECTION
    wanted = {
        p for p, s in scores.items() if s >= 0.2 and by_path[p].kind in set().union(*kinds.values())
    }
    assert listed == wanted


def _synthetic(root: Path, kind: str, folder: str, n: int, title: str, tag: str) -> None:
    d = root / "graph" / folder
    d.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (d / f"{tag}-{i:06x}.md").write_text(
            f"---\nid: {i:08x}-{tag}-4000-8000-000000000000\ntype: {kind}\n"
            f'title: "{title} {i:03d}"\ntags: [alpha, beta, gamma]\nimportance: 0.{i % 5 + 5}\n'
            "created: 2026-11-20T00:00:00+00:00\nupdated: 2026-11-20T00:00:00+00:00\n---\nx\n",
            encoding="utf-8",
        )


def test_core_caps_sections_at_15(tmp_path: Path) -> None:
    root = tmp_path / "many"
    _synthetic(root, "solution", "solutions", 40, "Short", "1111")
    _synthetic(root, "decision", "decisions", 3, "Few", "2222")
    text = render_core(root, date(2026, 11, 22))
    parts = sections(text)
    assert len(parts["Critical Solutions"]) == CORE_PER_SECTION
    assert len(parts["Active Decisions"]) == 3
    assert "Key Fixes" not in parts  # empty sections are left out
    # the 15 kept are the highest scores: importance 0.9 and 0.8 (8 each), then 0.7
    kept = [int(re.findall(r"Short (\d+)", line)[0]) for line in parts["Critical Solutions"]]
    assert [k % 5 for k in kept[:8]] == [4] * 8
    assert [k % 5 for k in kept[8:15]] == [3] * 7


def test_core_stays_within_the_budget(tmp_path: Path) -> None:
    root = tmp_path / "big"
    long_title = "A long title that goes on " * 11
    for kind, folder, tag in (
        ("solution", "solutions", "1111"),
        ("decision", "decisions", "2222"),
        ("fix", "fixes", "3333"),
        ("configuration", "configurations", "4444"),
    ):
        _synthetic(root, kind, folder, 15, long_title, tag)
    text = render_core(root, date(2026, 11, 22))
    assert len(text) <= CORE_BUDGET_CHARS
    longest = max(len(line) for line in text.split("\n"))
    assert len(text) > CORE_BUDGET_CHARS - longest - 40  # filled up to the budget
    parts = sections(text)
    assert len(parts["Critical Solutions"]) == CORE_PER_SECTION  # earlier sections first
    assert sum(len(v) for k, v in parts.items() if k) < 60


def test_core_plan_apply_undo(vault: Path) -> None:
    before = tree(vault)
    plan = plan_core(vault, date(2026, 11, 22))
    apply_plan(plan)
    assert diff_files(before, tree(vault)) == {"CORE.md"}
    undo_last(vault)
    assert tree(vault) == before
    assert plan_core(vault, CORE_SCORES_DAY, GENERATED_ON).changes == []  # already as generated


# --------------------------------------------------------------------------- REFLECTION.md


def test_reflection_matches_the_fixture_section_by_section(original: Path) -> None:
    ours = sections(render_reflection(original, GENERATED_ON))
    theirs = sections((original / "REFLECTION.md").read_text(encoding="utf-8"))
    assert list(ours) == list(theirs)
    assert ours[""] == theirs[""]  # title and header line
    for name in ("Cross-Project Patterns", "Most Accessed", "Recent Insights"):
        assert ours[name] == theirs[name], name
    assert ours["Consolidation History"] == theirs["Consolidation History"]


def test_reflection_themes_field_by_field(original: Path) -> None:
    ours = sections(render_reflection(original, GENERATED_ON))["Themes"]
    theirs = sections((original / "REFLECTION.md").read_text(encoding="utf-8"))["Themes"]
    assert ours[0] == theirs[0]
    pattern = re.compile(r"- \*\*(.+) \+ (.+)\*\*: (\d+) memories \((.*)\)")
    ms = live(original)

    def parse(line: str) -> tuple[str, str, int, list[str]]:
        m = pattern.fullmatch(line)
        assert m is not None, line
        examples = json.loads("[" + m.group(4) + "]")
        return m.group(1), m.group(2), int(m.group(3)), examples

    assert [parse(x)[:3] for x in ours[1:]] == [parse(x)[:3] for x in theirs[1:]]
    for line in ours[1:]:
        a, b, count, examples = parse(line)
        members = [m for m in ms if a in m.tags and b in m.tags]
        assert count == len(members)
        assert len(examples) == min(3, count)
        cut = {m.title if len(m.title) <= 40 else m.title[:40] + "..." for m in members}
        assert set(examples) <= cut


def test_reflection_cross_project_rule(original: Path) -> None:
    lines = sections(render_reflection(original, GENERATED_ON))["Cross-Project Patterns"][1:]
    ms = live(original)
    for line in lines:
        m = re.fullmatch(r"- \*\*(.+)\*\*: appears in (.+)", line)
        assert m is not None
        tag = m.group(1)
        assert tag not in KNOWN_PROJECTS
        spread = re.findall(r"([\w-]+) \((\d+)\)", m.group(2))
        assert len(spread) >= 2
        for project, n in spread:
            assert int(n) == sum(1 for x in ms if tag in x.tags and project in x.tags)


def test_reflection_counts_merges_and_carries_reflection_counts(vault: Path) -> None:
    (vault / "episodes" / "2026-11-22.md").write_text(
        "# 2026-11-22\n\n## 09:00 - Merged two redis memories\n- **Type:** merge\n"
        "- **Summary:** merged\n\n## 10:00 - Something else\n- **Type:** fix\n",
        encoding="utf-8",
    )
    text = render_reflection(vault, date(2026, 11, 22))
    assert "- Total merges performed: 1" in text
    assert "> Last updated: 2026-11-22 | Last reflection: 2026-11-20 | Total reflections: 2" in text
    (vault / "REFLECTION.md").unlink()
    text = render_reflection(vault, date(2026, 11, 22))
    assert "Last reflection: never | Total reflections: 0" in text


def test_reflection_plan_apply_undo(vault: Path) -> None:
    before = tree(vault)
    apply_plan(plan_reflection(vault, date(2026, 11, 22)))
    assert diff_files(before, tree(vault)) == {"REFLECTION.md"}
    undo_last(vault)
    assert tree(vault) == before


# --------------------------------------------------------------------------- decay scores


def test_decay_run_recomputes_scores_as_expected(vault: Path, own_expected: dict[str, Any]) -> None:
    expected = own_expected
    as_of = date.fromisoformat(expected["as_of"])
    before = tree(vault)
    state_before = json.loads(before["_state.json"])
    plan = plan_decay_scores(vault, as_of, datetime(2026, 11, 22, 6, 0, tzinfo=UTC))
    apply_plan(plan)
    assert diff_files(before, tree(vault)) == {"_state.json"}
    state = json.loads((vault / "_state.json").read_text(encoding="utf-8"))
    entries = state["entries"]
    checked = 0
    for item in expected["formats"]["cognitive-memory"]["decay"]:
        if item["id"] in entries:
            got = entries[item["id"]]["decay_score"]
            assert got == pytest.approx(item["score"], abs=item["tolerance"] + 1e-9), item["id"]
            checked += 1
    assert checked > 0
    # other keys, key order and the orphan entry are untouched
    assert list(entries) == list(state_before["entries"])
    for mem_id, entry in state_before["entries"].items():
        assert list(entries[mem_id]) == list(entry)
        assert entries[mem_id]["access_count"] == entry["access_count"]
        assert entries[mem_id]["last_accessed"] == entry["last_accessed"]
    for orphan in expected["formats"]["cognitive-memory"]["state_orphans"]:
        assert entries[orphan] == state_before["entries"][orphan]
    assert state["updated"] == "2026-11-22T06:00:00+00:00"
    # only decay_score lines (and updated) changed
    diff = [
        line
        for line in difflib.unified_diff(
            before["_state.json"].decode().splitlines(),
            (vault / "_state.json").read_text().splitlines(),
            n=0,
        )
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    assert diff
    assert all('"decay_score":' in line or '"updated":' in line for line in diff)
    undo_last(vault)
    assert tree(vault) == before


def test_decay_run_twice_is_a_no_op(vault: Path) -> None:
    apply_plan(plan_decay_scores(vault, date(2026, 11, 22)))
    assert plan_decay_scores(vault, date(2026, 11, 22)).changes == []


def test_decay_run_refuses_a_malformed_state_file(vault: Path) -> None:
    (vault / "_state.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(RefusedError, match="not valid JSON"):
        plan_decay_scores(vault, date(2026, 11, 22))


# --------------------------------------------------------------------------- access tracking


def test_record_access_increments_and_undoes(vault: Path) -> None:
    before = tree(vault)
    m = next(x for x in live(vault) if x.id.startswith("08e5b3f7"))
    when = datetime(2026, 11, 22, 8, 15, 0, tzinfo=UTC)
    apply_plan(plan_record_access(m, when))
    assert diff_files(before, tree(vault)) == {"_state.json"}
    state = json.loads((vault / "_state.json").read_text(encoding="utf-8"))
    entry = state["entries"][m.id]
    assert entry["access_count"] == 8
    assert entry["last_accessed"] == "2026-11-22T08:15:00+00:00"
    assert entry["decay_score"] == pytest.approx(0.9 * 3.169925001442312 * 1.4, abs=1e-4)
    assert state["updated"] == "2026-11-22T08:15:00+00:00"
    # Access entries are undone like any action (latest first; the app and
    # `memlens access` both say "memlens undo reverts it").
    assert undo_last(vault)["action"] == "access"
    assert tree(vault) == before
    with pytest.raises(NotFoundError):
        undo_last(vault)


def test_rescore_then_access_undoes_fully(vault: Path) -> None:
    """rescore writes _state.json, access writes it again: two undos restore every byte."""
    before = tree(vault)
    m = next(x for x in live(vault) if x.id.startswith("08e5b3f7"))  # has a state entry
    apply_plan(plan_decay_scores(vault, date(2026, 12, 1), datetime(2026, 12, 1, tzinfo=UTC)))
    apply_plan(plan_record_access(m, datetime(2026, 12, 2, tzinfo=UTC)))
    assert undo_last(vault)["action"] == "access"
    assert undo_last(vault)["action"] == "decay_scores"
    assert tree(vault) == before


def test_record_access_creates_missing_entry_and_file(vault: Path) -> None:
    m = next(x for x in live(vault) if x.id.startswith("4f29d8b6"))  # no state entry
    when = datetime(2026, 11, 22, 8, 15, tzinfo=UTC)
    apply_plan(plan_record_access(m, when))
    state = json.loads((vault / "_state.json").read_text(encoding="utf-8"))
    assert state["entries"][m.id]["access_count"] == 1
    assert list(state["entries"])[-1] == m.id
    (vault / "_state.json").unlink()
    apply_plan(plan_record_access(m, when))
    state = json.loads((vault / "_state.json").read_text(encoding="utf-8"))
    assert state["version"] == 1
    assert state["entries"][m.id]["access_count"] == 1


# --------------------------------------------------------------------------- CLI


def run(*args: str) -> Any:
    from click import Group

    group = Group(commands={c.name or "": c for c in COMMANDS})
    return CliRunner().invoke(group, list(args), catch_exceptions=False)


def test_cli_dry_run_writes_nothing(own_fixtures_copy: Path) -> None:
    fixtures_copy = own_fixtures_copy
    vault = fixtures_copy / "cognitive-memory"
    before = tree(vault)
    for cmd in ("reindex", "core", "reflection", "rescore"):
        result = run(cmd, str(fixtures_copy), "--dry-run", "--as-of", "2026-11-22")
        assert result.exit_code == 0, result.output
        assert "would" in result.output
    assert tree(vault) == before
    result = run("reindex", str(fixtures_copy), "--dry-run", "--as-of", "2026-11-22")
    assert '-  "updated": "2026-11-21T22:00:00+00:00",' in result.output
    assert '+  "updated": "2026-11-22T00:00:00+00:00",' in result.output


def test_cli_acts_on_every_cognitive_vault_below_path(
    own_fixtures_copy: Path, tmp_path: Path
) -> None:
    both = tmp_path / "both"
    shutil.copytree(own_fixtures_copy / "cognitive-memory", both / "one")
    shutil.copytree(own_fixtures_copy / "cognitive-memory", both / "two")
    shutil.copytree(own_fixtures_copy / "project-ocean", both / "dc")
    dc_before = tree(both / "dc")
    result = run("core", str(both), "--as-of", "2026-11-22")
    assert result.exit_code == 0, result.output
    for name in ("one", "two"):
        text = (both / name / "CORE.md").read_text(encoding="utf-8")
        assert "> Last updated: 2026-11-22 |" in text
    assert tree(both / "dc") == dc_before
    assert "undo with: memlens undo PATH" in result.output


def test_cli_usage_and_refusal_exit_codes(own_fixtures_copy: Path) -> None:
    fixtures_copy = own_fixtures_copy
    result = run("reindex", str(fixtures_copy / "project-ocean"))
    assert result.exit_code == 2
    assert "no cognitive-memory vault" in result.output
    (fixtures_copy / "cognitive-memory" / "_state.json").write_text("[1, 2", encoding="utf-8")
    result = run("rescore", str(fixtures_copy / "cognitive-memory"), "--as-of", "2026-11-22")
    assert result.exit_code == 1
    assert "refused" in result.output


def test_cli_access(own_fixtures_copy: Path) -> None:
    vault = own_fixtures_copy / "cognitive-memory"
    mem_id = "08e5b3f7-d4a1-4c6e-b2f9-57c0a3e8d164"
    result = run("access", str(vault), mem_id)
    assert result.exit_code == 0, result.output
    state = json.loads((vault / "_state.json").read_text(encoding="utf-8"))
    assert state["entries"][mem_id]["access_count"] == 8
    assert run("access", str(vault), "no-such-id").exit_code == 1


def test_commands_are_exported() -> None:
    assert {c.name for c in COMMANDS} == {"reindex", "core", "reflection", "rescore", "access"}
    assert (reindex, core, reflection, rescore, access) == COMMANDS
