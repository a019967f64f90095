"""The cognitive-memory adapter against the public fixture and hand-made edge cases."""

from __future__ import annotations

import json
import math
import shutil
from collections import Counter
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlens.core.formats import adapter_for
from memlens.core.formats.cognitive_memory.adapter import CognitiveMemoryAdapter
from memlens.core.formats.cognitive_memory.decay import (
    LAMBDA,
    TYPE_WEIGHTS,
    days_until_below,
    decay_score,
    status_for_score,
    usage_factor,
)
from memlens.core.formats.cognitive_memory.episodes import episode_link_path
from memlens.core.formats.cognitive_memory.schema import RELATION_TYPES, TYPE_DIRS
from memlens.core.model import Health, Memory, Reason, RefIssue, ScanResult

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
VAULT = FIXTURES / "cognitive-memory"
CM: dict[str, Any] = json.loads(
    (FIXTURES / "expected" / "cognitive-memory.json").read_text("utf-8")
)
DEMO = Path(__file__).resolve().parents[2] / "core" / "demo_vaults"
AS_OF = date(2026, 11, 22)

ADAPTER = CognitiveMemoryAdapter()


@pytest.fixture(scope="module")
def scanned() -> ScanResult:
    return ADAPTER.scan(VAULT)


@pytest.fixture
def vault_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "cm"
    shutil.copytree(VAULT, dest)
    return dest


def by_path(result: ScanResult) -> dict[str, Memory]:
    return {m.path: m for m in result.memories}


def by_id(result: ScanResult) -> dict[str, Memory]:
    return {m.id: m for m in result.memories}


MEMORY_TEMPLATE = """---
id: {id}
type: {type}
title: "{title}"
importance: 0.5
created: 2026-01-01T00:00:00+00:00
updated: 2026-01-01T00:00:00+00:00
{extra}---
Body.
"""


def write_memory(root: Path, rel: str, *, id: str, type: str = "general", **kw: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    text = MEMORY_TEMPLATE.format(
        id=id, type=type, title=kw.get("title", "T"), extra=kw.get("extra", "")
    )
    path.write_text(text, encoding="utf-8")
    return path


UUID_A = "aaaaaaaa-1111-4111-8111-111111111111"
UUID_B = "bbbbbbbb-2222-4222-8222-222222222222"


# --------------------------------------------------------------------------- constants, detect


def test_constants() -> None:
    assert len(TYPE_DIRS) == 11
    assert TYPE_DIRS["code_pattern"] == "code-patterns"
    assert set(TYPE_WEIGHTS) == set(TYPE_DIRS)
    assert TYPE_WEIGHTS["procedure"] == 1.4 and TYPE_WEIGHTS["general"] == 0.8
    assert RELATION_TYPES == (
        "SOLVES",
        "CAUSES",
        "BUILDS_ON",
        "ALTERNATIVE_TO",
        "REQUIRES",
        "FOLLOWS",
        "RELATED_TO",
    )
    assert LAMBDA == 0.03
    assert adapter_for("cognitive-memory").label == "Cognitive memory"


def test_detect(tmp_path: Path) -> None:
    assert ADAPTER.detect(VAULT)
    assert not ADAPTER.detect(tmp_path)
    assert not ADAPTER.detect(FIXTURES / "project-ocean")
    assert not ADAPTER.detect(DEMO / "dream-cycle")
    (tmp_path / "graph" / "notes").mkdir(parents=True)
    assert not ADAPTER.detect(tmp_path)  # graph/ without a type dir
    (tmp_path / "graph" / "insights").mkdir()
    assert ADAPTER.detect(tmp_path)
    only_vault = tmp_path / "v2"
    (only_vault / "vault").mkdir(parents=True)
    assert not ADAPTER.detect(only_vault)
    (only_vault / "_state.json").write_text("{}", "utf-8")
    assert ADAPTER.detect(only_vault)


# --------------------------------------------------------------------------- valid, invalid, refs


def test_valid_count_and_breakdown(scanned: ScanResult) -> None:
    assert len(scanned.memories) == CM["valid_count"]
    breakdown = CM["valid_breakdown"]
    areas = Counter(m.native["area"] for m in scanned.memories)
    assert areas["graph"] == breakdown["graph"]
    assert areas["vault"] == breakdown["vault_pinned"]
    assert areas["archive"] == breakdown["archive"]
    assert sum(m.archived for m in scanned.memories) == breakdown["archive"]
    assert sum(m.pinned for m in scanned.memories) == breakdown["vault_pinned"]
    kinds = Counter(m.kind for m in scanned.memories)
    for key, count in breakdown.items():
        if key.startswith("type:"):
            assert kinds[key.removeprefix("type:")] == count, key
    assert len(scanned.memories) + len(scanned.problems) == CM["total_md_files"]


def test_every_invalid_item(scanned: ScanResult) -> None:
    got = sorted((p.path, p.reason.value, p.id, p.detail) for p in scanned.problems)
    want = sorted((i["path"], i["reason"], i["id"], i["detail"]) for i in CM["invalid"])
    assert got == want
    for problem in scanned.problems:
        assert problem.format == "cognitive-memory"
        assert "\n" not in problem.detail
    loaded = {m.path for m in scanned.memories}
    assert not loaded & {i["path"] for i in CM["invalid"]}


def test_problem_points_at_the_faulty_line(scanned: ScanResult) -> None:
    problems = {p.path: p for p in scanned.problems}
    yesterday = problems["graph/workflows/rotating-the-discord-bot-token-8e3f6d.md"]
    text = (VAULT / yesterday.path).read_text("utf-8").split("\n")
    assert yesterday.at_line is not None
    assert text[yesterday.at_line - 1].startswith("created:")


def test_references(scanned: ScanResult) -> None:
    got = sorted((r.path, r.field, r.ref, r.reason.value) for r in scanned.ref_problems)
    want = sorted((r["from"], r["field"], r["ref"], r["issue"]) for r in CM["references"])
    assert got == want
    memories = by_path(scanned)
    for ref in scanned.ref_problems:
        assert ref.id == memories[ref.path].id  # flagged, but the owner stays valid
    escaped = memories["graph/fixes/escaped-player-names-in-the-lobby-chat-c4d8a9.md"]
    (rel,) = escaped.relations
    assert rel.target == "../../../../etc/passwd" and rel.resolved is None


def test_relations_resolve(scanned: ScanResult) -> None:
    ids = by_id(scanned)
    resolved = [r for m in scanned.memories for r in m.relations if r.resolved]
    assert resolved
    for r in resolved:
        assert r.resolved in ids and r.field == "relations"
        assert r.type in RELATION_TYPES
        assert r.direction in ("outgoing", "incoming")
    proc = ids["08e5b3f7-d4a1-4c6e-b2f9-57c0a3e8d164"]
    (rel,) = proc.relations
    assert rel.type == "FOLLOWS" and rel.direction == "outgoing"
    assert rel.strength == 0.5 and rel.context == "Tags the same rules release"
    assert rel.resolved == "7c0e4f6b-93a2-4d1c-8f57-a0b6d2e9c413"
    assert proc.fields["steps"][0] == "Run the rules tests with pnpm test"


def test_state_orphans(scanned: ScanResult) -> None:
    assert [o["id"] for o in scanned.records["state_orphans"]] == CM["state_orphans"]


# --------------------------------------------------------------------------- decay


@pytest.mark.parametrize("case", CM["decay"], ids=lambda c: c["path"].split("/")[-1][:40])
def test_decay_matches_expected(scanned: ScanResult, case: dict[str, Any]) -> None:
    memory = by_id(scanned)[case["id"]]
    assert memory.path == case["path"] and memory.kind == case["type"]
    assert memory.title == case["title"]
    info = ADAPTER.decay(memory, AS_OF)
    assert info.score is not None
    assert abs(info.score - case["score"]) <= case["tolerance"]
    assert info.status == case["status"]
    assert info.why


def test_decay_why_shows_arithmetic(scanned: ScanResult) -> None:
    memory = by_id(scanned)["08e5b3f7-d4a1-4c6e-b2f9-57c0a3e8d164"]
    info = ADAPTER.decay(memory, AS_OF)
    assert info.score == 3.4547 and info.days_elapsed == 3
    assert "log2(7 + 1) = 3.0 ×" in info.why and "type_weight(procedure) 1.4" in info.why
    assert info.health is Health.ACTIVE and info.strength == 1.0 and info.weight == 1.0


def test_decay_health_mapping(scanned: ScanResult) -> None:
    for memory in scanned.memories:
        info = ADAPTER.decay(memory, AS_OF)
        if memory.pinned:
            assert (info.status, info.health, info.score) == ("active", Health.STABLE, 999.0)
            assert info.expires_on is None and info.weight == 1.0
            continue
        if memory.archived:  # moved to archive/
            assert (info.status, info.health, info.weight) == ("archived", Health.ARCHIVED, 0.0)
            continue
        assert info.score is not None and info.status == status_for_score(info.score)
        expected = {
            "active": Health.ACTIVE,
            "fading": Health.FADING,
            "dormant": Health.FADING,
            "archived": Health.EXPIRED,  # archived by score while still in graph/
        }[info.status]
        assert info.health is expected
        assert 0.0 <= info.strength <= 1.0
        if info.status == "archived":
            assert info.expires_on is None and info.archive_reasons
        else:
            assert info.expires_on is not None and info.expires_on > AS_OF
            assert not info.archive_reasons


def test_expires_on_is_first_day_below_threshold(scanned: ScanResult) -> None:
    checked = 0
    for memory in scanned.memories:
        info = ADAPTER.decay(memory, AS_OF)
        if info.expires_on is None:
            continue
        on = ADAPTER.decay(memory, info.expires_on)
        before = ADAPTER.decay(memory, info.expires_on - timedelta(days=1))
        assert on.status == "archived" and on.health is Health.EXPIRED
        assert before.status == "dormant"
        checked += 1
    assert checked > 20  # 24 of the 29 graph/ memories are not yet archived by score


def test_no_state_entry_decays_from_created(scanned: ScanResult) -> None:
    memory = by_id(scanned)["4f29d8b6-e1c3-4a07-b95f-d6a8c2e07b31"]
    assert memory.native["has_state"] is False and memory.native["access_count"] == 0
    assert memory.native["last_accessed"] is None
    info = ADAPTER.decay(memory, AS_OF)
    assert info.days_elapsed == 150
    assert info.status == "archived" and info.health is Health.EXPIRED


def test_stored_decay_score_is_not_used(scanned: ScanResult) -> None:
    memory = by_id(scanned)["2f85c9a1-6d0e-4b38-a7f4-c9e2b15d80a7"]
    assert memory.native["stored_decay_score"] == 0.2
    assert ADAPTER.decay(memory, AS_OF).score == 0.0144


def test_decay_arithmetic_helpers() -> None:
    assert usage_factor(0) == 0.5 and usage_factor(1) == 1.0 and usage_factor(3) == 2.0
    assert decay_score(0.7, 25, 3, "decision") == pytest.approx(0.7 * math.exp(-0.75) * 2 * 1.3)
    assert decay_score(1.0, -5, 1, "fix") == 1.0  # future access clamps to 0 days
    assert [status_for_score(s) for s in (0.5, 0.49, 0.2, 0.05, 0.0499)] == [
        "active",
        "fading",
        "fading",
        "dormant",
        "archived",
    ]
    d = days_until_below(0.8, 12, "procedure")
    assert decay_score(0.8, d, 12, "procedure") < 0.05 <= decay_score(0.8, d - 1, 12, "procedure")
    assert days_until_below(0.01, 0, "general") == 0


def test_decay_is_a_function_of_as_of(scanned: ScanResult) -> None:
    memory = by_id(scanned)["d4a7e21c-83b5-4f09-a6d1-49c0e5b7f312"]
    later = ADAPTER.decay(memory, AS_OF + timedelta(days=30))
    now = ADAPTER.decay(memory, AS_OF)
    assert (later.score or 0) < (now.score or 0)
    assert ADAPTER.decay(memory, AS_OF) == now


# --------------------------------------------------------------------------- fields and edge cases


def test_extra_fields_preserved_in_order(scanned: ScanResult) -> None:
    for case in CM["extra_fields_preserved"]:
        memory = by_id(scanned)[case["id"]]
        assert memory.path == case["path"]
        assert list(memory.extra) == case["fields"]
        keys = list(memory.fields)
        known = ["id", "type", "title", "tags", "importance", "confidence", "created", "updated"]
        assert keys[: len(keys) - len(case["fields"])] == known + (
            ["relations"] if memory.relations else []
        )
        assert keys[-3:] == case["fields"]
    memory = by_id(scanned)["7a1c30e4-5b2d-4c8f-9e61-2f4a8b0c6d13"]
    assert memory.extra == {
        "project": "strat-gameplay-webapp",
        "x-reviewed": True,
        "source_session": "2026-09-14-deploy",
    }


def test_edge_case_files_are_valid(scanned: ScanResult) -> None:
    mems = by_path(scanned)
    crlf = mems["graph/configurations/fly-machine-sizing-for-the-match-server-f7b0c4.md"]
    assert "\r" not in crlf.body and "\r" not in crlf.title
    bom = mems["graph/decisions/adopt-pnpm-workspaces-for-the-monorepo-1e6c9f.md"]
    assert bom.id == "1e6c9f4a-" + bom.id.split("-", 1)[1] and bom.kind == "decision"
    unquoted = mems["graph/code-patterns/zod-schema-per-websocket-message-3e7b2c.md"]
    assert unquoted.title == "Zod schema per websocket message"
    assert unquoted.confidence == 0.8 and unquoted.native["confidence_explicit"] is False
    assert mems["graph/insights/most-desyncs-start-with-clock-skew-63a9d0.md"].native[
        "confidence_explicit"
    ]
    for flat in (
        "graph/insights/most-desyncs-start-with-clock-skew-63a9d0.md",
        "graph/workflows/shipping-a-new-card-set-c61d0b.md",
    ):
        rels = mems[flat].relations
        assert rels and all(r.resolved and r.direction == "outgoing" for r in rels)
    assert len(mems["graph/insights/most-desyncs-start-with-clock-skew-63a9d0.md"].relations) == 2
    esc = mems["graph/errors/vite-build-fails-with-heap-out-of-memory-b19d4c.md"]
    assert "\x1b[31m" in esc.body and "\x1b]8;;" in esc.body and "[/]" in esc.title
    big = mems["graph/errors/captured-playwright-trace-for-the-flaky-lobby-test-e04a7b.md"]
    assert len(big.body) > 100_000
    long_title = mems[
        "graph/general/notes-from-the-long-retrospective-about-the-first-tournament-season-5c0b7a.md"
    ]
    assert len(long_title.title) == 500


def test_non_ascii_file_name(scanned: ScanResult) -> None:
    cjk = "graph/decisions/选择-redis-streams-而不是-kafka-处理对局事件-a0f3d6.md"
    memory = by_path(scanned)[cjk]
    assert memory.title == "选择 Redis Streams 而不是 Kafka 处理对局事件"
    assert memory.id == "a0f3d6b2-7c19-4e58-9d24-6b1e8c05f7a9"


def test_memory_fields(scanned: ScanResult) -> None:
    memory = by_id(scanned)["63a9d0e8-f2b4-4c15-a7e3-0b8d6c9f21e5"]
    assert memory.format == "cognitive-memory" and memory.vault_root == VAULT
    assert memory.kind == "insight" and memory.tags == ("multiplayer", "time", "debugging")
    assert memory.importance == 0.7 and memory.confidence == 0.8
    assert isinstance(memory.created, datetime) and memory.created.year == 2026
    assert memory.native["type_dir"] == "insights" and memory.native["area"] == "graph"
    raw = (VAULT / memory.path).read_text("utf-8")
    assert raw.endswith("---\n" + memory.body)
    assert memory.body.startswith("Three of the last four desync reports")
    assert memory.native["access_count"] >= 0 and memory.native["has_state"] is True
    pinned = by_id(scanned)["e9d0c3b7-4a6f-4e12-b8c5-3f1a7d02e694"]
    assert pinned.pinned and not pinned.archived
    assert pinned.native["area"] == "vault" and pinned.native["type_dir"] == "decisions"


def test_episodes(scanned: ScanResult) -> None:
    episodes = scanned.records["episodes"]
    assert len(episodes) == 6
    ids = by_id(scanned)
    first = episodes[0]
    assert first["date"] == "2026-09-14" and first["time"] == "19:20"
    assert first["title"] == "Stopped websocket reconnect storms after deploys"
    assert first["type"] == "solution"
    assert first["tags"] == ["websocket", "deploy", "strat-gameplay-webapp"]
    assert (
        first["memory_path"]
        == "graph/solutions/stopped-websocket-reconnect-storms-after-deploys-7a1c30.md"
    )
    assert first["memory_id"] == "7a1c30e4-5b2d-4c8f-9e61-2f4a8b0c6d13"
    assert first["summary"].startswith("Jittered reconnects")
    assert first["file"] == "episodes/2026-09-14.md" and first["line"] == 3
    for entry in episodes:
        assert entry["memory_id"] in ids
        assert ids[entry["memory_id"]].path == entry["memory_path"]


def test_episode_links_never_leave_the_vault() -> None:
    paths = {"graph/fixes/a-123456.md": UUID_A}
    assert episode_link_path("../graph/fixes/a-123456.md", paths) == "graph/fixes/a-123456.md"
    assert episode_link_path("graph/fixes/a-123456.md", paths) == "graph/fixes/a-123456.md"
    assert episode_link_path("../vault/x.md") == "vault/x.md"
    for bad in ("../../etc/passwd", "/etc/passwd", "../../../x.md", "..", "C:/x.md", "a\\..\\b"):
        assert episode_link_path(bad, paths) is None, bad
    assert episode_link_path("https://example.com/x.md") is None


def test_episode_with_unsafe_link(vault_copy: Path) -> None:
    (vault_copy / "episodes" / "2026-11-22.md").write_text(
        "# 2026-11-22\n\n## 07:00 - Sneaky\n- **Type:** fix\n"
        "- **Memory:** [x](../../../../etc/passwd)\n- **Summary:** no\n",
        "utf-8",
    )
    result = ADAPTER.scan(vault_copy)
    (entry,) = [e for e in result.records["episodes"] if e["date"] == "2026-11-22"]
    assert entry["memory_path"] is None and entry["memory_id"] is None
    assert entry["memory_link"] == "../../../../etc/passwd"


def test_index_record(scanned: ScanResult) -> None:
    (index,) = scanned.records["index"]
    assert index["count"] == CM["index"]["count"] == len(index["entries"])


# --------------------------------------------------------------------------- state file


def test_malformed_state_is_reported_and_scan_continues(vault_copy: Path) -> None:
    (vault_copy / "_state.json").write_text('{"version": 1, "entries": {', "utf-8")
    result = ADAPTER.scan(vault_copy)
    assert len(result.memories) == CM["valid_count"]
    state_problems = [p for p in result.problems if p.path == "_state.json"]
    assert len(state_problems) == 1 and state_problems[0].reason is Reason.MALFORMED_JSON
    assert result.records["state_orphans"] == []
    for memory in result.memories:
        assert memory.native["access_count"] == 0 and memory.native["last_accessed"] is None
        assert ADAPTER.decay(memory, AS_OF).score is not None


def test_missing_state_is_empty(vault_copy: Path) -> None:
    (vault_copy / "_state.json").unlink()
    result = ADAPTER.scan(vault_copy)
    assert len(result.memories) == CM["valid_count"]
    assert len(result.problems) == len(CM["invalid"])
    assert result.records["state_orphans"] == []


def test_state_entries_of_odd_shape_are_reported_and_defaulted(vault_copy: Path) -> None:
    (vault_copy / "_state.json").write_text(
        json.dumps(
            {
                "entries": {
                    "63a9d0e8-f2b4-4c15-a7e3-0b8d6c9f21e5": {
                        "access_count": "many",
                        "last_accessed": "soon",
                    },
                    "d4a7e21c-83b5-4f09-a6d1-49c0e5b7f312": [1, 2],
                }
            }
        ),
        "utf-8",
    )
    result = ADAPTER.scan(vault_copy)
    # One problem per bad value (more cases in test_cognitive_state_values.py);
    # the memories stay listed with the defaults.
    reasons = sorted(p.reason.value for p in result.problems if p.path == "_state.json")
    assert reasons == ["malformed_json", "wrong_type", "wrong_type"]
    assert len(result.memories) == CM["valid_count"]
    memory = by_id(result)["63a9d0e8-f2b4-4c15-a7e3-0b8d6c9f21e5"]
    assert memory.native["access_count"] == 0 and memory.native["last_accessed"] is None


# --------------------------------------------------------------------------- areas


def test_archive_folder(vault_copy: Path) -> None:
    src = vault_copy / "graph/configurations/litestream-replication-to-object-storage-9b4f17.md"
    dest = vault_copy / "archive/configurations" / src.name
    dest.parent.mkdir(parents=True)
    src.rename(dest)
    result = ADAPTER.scan(vault_copy)
    assert len(result.memories) == CM["valid_count"]
    memory = by_id(result)["9b4f17ec-2d60-4a8b-b3f5-e8c7a0d19624"]
    assert memory.archived and not memory.pinned
    assert memory.path == "archive/configurations/" + src.name
    assert memory.native["area"] == "archive" and memory.native["type_dir"] == "configurations"
    info = ADAPTER.decay(memory, AS_OF)
    assert (info.status, info.health, info.weight) == ("archived", Health.ARCHIVED, 0.0)
    assert info.expires_on is None
    # Relations into an archived memory still resolve.
    decision = by_path(result)[
        "graph/decisions/chose-sqlite-with-litestream-over-hosted-postgres-d4a7e2.md"
    ]
    assert any(r.resolved == memory.id for r in decision.relations)
    assert not [r for r in result.ref_problems if r.ref == memory.id]


def test_duplicate_between_vault_and_graph(tmp_path: Path) -> None:
    write_memory(tmp_path, "graph/general/a-aaaaaa.md", id=UUID_A)
    write_memory(tmp_path, "vault/a-aaaaaa.md", id=UUID_A)
    result = ADAPTER.scan(tmp_path)
    assert result.memories == []
    details = sorted(p.detail for p in result.problems)
    assert details == [
        f"id '{UUID_A}' also used by graph/general/a-aaaaaa.md",
        f"id '{UUID_A}' also used by vault/a-aaaaaa.md",
    ]


# --------------------------------------------------------------------------- validation rules


@pytest.mark.parametrize(
    ("extra", "replace", "reason", "detail"),
    [
        (
            "",
            ("importance: 0.5", "importance: true"),
            Reason.WRONG_TYPE,
            "importance True is not a number",
        ),
        (
            "",
            ("importance: 0.5", "importance: 1.5"),
            Reason.OUT_OF_RANGE,
            "importance 1.5 outside 0.0-1.0",
        ),
        (
            "",
            ("importance: 0.5", "importance: .nan"),
            Reason.OUT_OF_RANGE,
            "importance nan outside 0.0-1.0",
        ),
        ("", ("type: general", "type: note"), Reason.WRONG_TYPE, None),
        (
            "",
            (f"id: {UUID_A}", "id: not-a-uuid"),
            Reason.WRONG_TYPE,
            "id 'not-a-uuid' is not a UUID",
        ),
        ("", (f"id: {UUID_A}", "id: 42"), Reason.WRONG_TYPE, "id 42 is not a string"),
        ("", ('title: "T"\n', ""), Reason.MISSING_REQUIRED_FIELD, "lacks title"),
        ("", ('title: "T"', "title: [a, b]"), Reason.WRONG_TYPE, None),
        (
            "",
            ("updated: 2026-01-01T00:00:00+00:00", "updated: soon"),
            Reason.WRONG_TYPE,
            "updated 'soon' is not an ISO 8601 timestamp",
        ),
        ("tags: {a: 1}\n", None, Reason.WRONG_TYPE, "tags must be a list of strings"),
        ("steps: [1, 2]\n", None, Reason.WRONG_TYPE, "steps must be a list of strings"),
        (
            "relations: {target: x}\n",
            None,
            Reason.WRONG_TYPE,
            "relations must be a list of mappings",
        ),
        (
            "relations:\n  - type: SOLVES\n    direction: outgoing\n",
            None,
            Reason.MISSING_REQUIRED_FIELD,
            "relations[0] lacks target",
        ),
        (
            f"relations:\n  - target: {UUID_B}\n    type: SOLVES\n    direction: sideways\n",
            None,
            Reason.WRONG_TYPE,
            "relations[0].direction 'sideways' is not outgoing or incoming",
        ),
        (
            f"relations:\n  - target: {UUID_B}\n    type: SOLVES\n    direction: incoming\n"
            "    strength: 2\n",
            None,
            Reason.OUT_OF_RANGE,
            "relations[0].strength 2 outside 0.0-1.0",
        ),
        ("confidence: high\n", None, Reason.WRONG_TYPE, "confidence 'high' is not a number"),
    ],
)
def test_validation_rules(
    tmp_path: Path,
    extra: str,
    replace: tuple[str, str] | None,
    reason: Reason,
    detail: str | None,
) -> None:
    path = write_memory(tmp_path, "graph/general/x-aaaaaa.md", id=UUID_A, extra=extra)
    if replace is not None:
        text = path.read_text("utf-8")
        assert replace[0] in text
        path.write_text(text.replace(replace[0], replace[1]), "utf-8")
    result = ADAPTER.scan(tmp_path)
    assert result.memories == []
    (problem,) = result.problems
    assert problem.reason is reason
    if detail is not None:
        assert problem.detail == detail
    written = path.read_text("utf-8")
    want_id = None if "id: 42" in written else "not-a-uuid" if "not-a-uuid" in written else UUID_A
    assert problem.id == want_id


def test_accepted_variants(tmp_path: Path) -> None:
    write_memory(
        tmp_path,
        "graph/general/x-aaaaaa.md",
        id=UUID_A,
        extra=(
            "confidence: 1\ntags: solo\nsource: cli\n"
            f"relations:\n- target: {UUID_B}\n  type: CUSTOM_LINK\n  direction: incoming\n"
        ),
    )
    path = write_memory(tmp_path, "graph/fixes/y-bbbbbb.md", id=UUID_B, type="fix")
    text = path.read_text("utf-8")
    text = text.replace('title: "T"', "title: 2026").replace(
        "created: 2026-01-01T00:00:00+00:00", 'created: "2026-01-01"'
    )
    path.write_text(text, "utf-8")
    result = ADAPTER.scan(tmp_path)
    assert result.problems == [] and result.ref_problems == []
    a, b = by_id(result)[UUID_A], by_id(result)[UUID_B]
    assert a.confidence == 1.0 and a.tags == ("solo",) and a.source == "cli"
    assert a.extra == {"source": "cli"}
    (rel,) = a.relations
    assert (rel.type, rel.direction, rel.resolved, rel.strength) == (
        "CUSTOM_LINK",
        "incoming",
        UUID_B,
        None,
    )
    assert b.title == "2026" and b.created == date(2026, 1, 1)


def test_spec_transcription_flat_relation_is_explained(tmp_path: Path) -> None:
    """The spec's indentation-less example overrides `type`; the detail says why."""
    write_memory(
        tmp_path,
        "graph/general/x-aaaaaa.md",
        id=UUID_A,
        extra=f"relations:\n- target: {UUID_B}\ntype: SOLVES\ndirection: outgoing\n",
    )
    (problem,) = ADAPTER.scan(tmp_path).problems
    assert problem.reason is Reason.WRONG_TYPE and "column 0" in problem.detail


def test_dangling_and_unsafe_targets(tmp_path: Path) -> None:
    write_memory(
        tmp_path,
        "graph/general/x-aaaaaa.md",
        id=UUID_A,
        extra=(
            "relations:\n"
            f"  - {{target: {UUID_B}, type: SOLVES, direction: outgoing}}\n"
            "  - {target: 'graph/general/x', type: SOLVES, direction: outgoing}\n"
            "  - {target: '~root', type: SOLVES, direction: outgoing}\n"
        ),
    )
    result = ADAPTER.scan(tmp_path)
    (memory,) = result.memories
    assert [r.resolved for r in memory.relations] == [None, None, None]
    assert [(r.ref, r.reason) for r in result.ref_problems] == [
        (UUID_B, RefIssue.DANGLING),
        ("graph/general/x", RefIssue.UNSAFE),
        ("~root", RefIssue.UNSAFE),
    ]
    assert all(r.field == "relations.target" and r.id == UUID_A for r in result.ref_problems)


def test_yaml_is_loaded_safely(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    path = tmp_path / "graph" / "general" / "x-aaaaaa.md"
    path.parent.mkdir(parents=True)
    path.write_text(
        f"---\nid: !!python/object/apply:os.system ['touch {marker}']\ntype: general\n"
        "title: x\nimportance: 0.5\ncreated: 2026-01-01\nupdated: 2026-01-01\n---\nbody\n",
        "utf-8",
    )
    result = ADAPTER.scan(tmp_path)
    assert not marker.exists()
    assert result.memories == []
    (problem,) = result.problems
    assert problem.reason is Reason.MALFORMED_FRONTMATTER
    assert problem.path == "graph/general/x-aaaaaa.md"


def test_files_outside_type_dirs_are_not_memories(tmp_path: Path) -> None:
    write_memory(tmp_path, "graph/general/x-aaaaaa.md", id=UUID_A)
    write_memory(tmp_path, "graph/notes/y-bbbbbb.md", id=UUID_B)
    (tmp_path / "CORE.md").write_text("# Memory Core\n", "utf-8")
    result = ADAPTER.scan(tmp_path)
    assert [m.id for m in result.memories] == [UUID_A]


# --------------------------------------------------------------------------- property tests

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30)
    | st.dates()
    | st.datetimes()
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)
_keys = st.sampled_from(
    [
        "id",
        "type",
        "title",
        "importance",
        "confidence",
        "created",
        "updated",
        "tags",
        "steps",
        "relations",
        "source",
    ]
) | st.text(max_size=12)
_good_values: dict[str, Any] = {
    "id": UUID_A,
    "type": "general",
    "title": "t",
    "importance": 0.5,
    "created": "2026-01-01T00:00:00+00:00",
    "updated": "2026-01-01T00:00:00+00:00",
}


def _one_file_outcome(root: Path) -> None:
    result = ADAPTER.scan(root)
    here = "graph/general/x-abcdef.md"
    mems = [m for m in result.memories if m.path == here]
    probs = [p for p in result.problems if p.path == here]
    assert len(mems) + len(probs) == 1
    for memory in mems:
        info = ADAPTER.decay(memory, AS_OF)
        assert info.status in ("active", "fading", "dormant", "archived")


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.binary(max_size=400))
def test_arbitrary_bytes_never_crash(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "graph" / "general" / "x-abcdef.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    _one_file_outcome(tmp_path)
    path.write_bytes(b"---\n" + data + b"\n---\nbody\n")
    _one_file_outcome(tmp_path)


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    mapping=st.dictionaries(_keys, _values, max_size=8),
    base=st.booleans(),
)
def test_arbitrary_yaml_mappings_never_crash(
    tmp_path: Path, mapping: dict[str, Any], base: bool
) -> None:
    doc = {**_good_values, **mapping} if base else mapping
    header = yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)
    path = tmp_path / "graph" / "general" / "x-abcdef.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{header}---\nbody\n", "utf-8")
    _one_file_outcome(tmp_path)
