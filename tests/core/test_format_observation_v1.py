"""observation/v1 adapter: the own test vault, edge cases in tmp vaults, fuzzing."""

from __future__ import annotations

import json
import tempfile
import textwrap
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlens.core.formats import adapter_for
from memlens.core.formats.observation_v1.adapter import ObservationV1Adapter
from memlens.core.model import Health, Memory, Reason, RefIssue, ScanResult

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
VAULT = FIXTURES / "observation-v1"
EXPECTED: dict[str, Any] = json.loads(
    (FIXTURES / "expected" / "observation-v1.json").read_text(encoding="utf-8")
)
AS_OF = date(2026, 11, 22)
ADAPTER = ObservationV1Adapter()
#: Project-owned vaults of the other formats (detection must say no to each).
DEMO = Path(__file__).resolve().parents[2] / "core" / "demo_vaults"


@pytest.fixture(scope="module")
def result() -> ScanResult:
    return ADAPTER.scan(VAULT)


@pytest.fixture(scope="module")
def by_id(result: ScanResult) -> dict[str, Memory]:
    return {m.id: m for m in result.memories}


# --------------------------------------------------------------------------- helpers

OBS = """\
---
spec: observation/v1
id: {id}
timestamp: 2026-11-02T09:14:07Z
source: agent/test
event: "{event}"
{more}---

{body}
"""

COMP = """\
---
spec: comprehension/v1
id: {id}
topic: "A topic"
domain: testing
created: 2026-11-02T09:30:00Z
updated: 2026-11-03T09:30:00Z
prior:
  statement: "Before"
  confidence: {prior_conf}
  source: accumulated
observations: {observations}
posterior:
  statement: "After"
  confidence: high
  update_reasoning: "Because"
  observations_used: {used}
{more}---

# Comprehension: A topic

Body.
"""


def obs_text(
    id: str = "obs-001", event: str = "something happened", more: str = "", body: str = "# Hi"
) -> str:
    return OBS.format(id=id, event=event, more=more, body=body)


def comp_text(
    id: str = "comp-a-001",
    observations: str = "[obs-001]",
    used: str = "[obs-001]",
    prior_conf: str = "medium",
    more: str = "",
) -> str:
    return COMP.format(
        id=id, observations=observations, used=used, prior_conf=prior_conf, more=more
    )


def write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def only_problem(res: ScanResult, rel: str) -> tuple[str, str]:
    hits = [p for p in res.problems if p.path == rel]
    assert len(hits) == 1, hits
    return hits[0].reason.value, hits[0].detail


def accounted(res: ScanResult, files: list[str]) -> None:
    """Every file is exactly one memory or at least one problem, never neither."""
    mem_paths = [m.path for m in res.memories]
    prob_paths = {p.path for p in res.problems}
    assert len(mem_paths) == len(set(mem_paths))
    for rel in files:
        assert (rel in mem_paths) != (rel in prob_paths), rel
    assert set(mem_paths) | prob_paths <= set(files)


# --------------------------------------------------------------------------- fixture


def test_registered_and_labelled() -> None:
    assert adapter_for("observation-v1").format_id == "observation-v1"
    assert ObservationV1Adapter.label == "observation/v1"


def test_detects_its_own_vault_only() -> None:
    assert ADAPTER.detect(VAULT)
    for other in ("dream-cycle", "project-ocean", "cognitive-memory", "experience-records"):
        assert not ADAPTER.detect(DEMO / other), other
    assert not ADAPTER.detect(VAULT / "observations")


def test_valid_count_and_breakdown(result: ScanResult) -> None:
    assert len(result.memories) == EXPECTED["valid_count"] == 30
    kinds = [m.kind for m in result.memories]
    assert kinds.count("observation") == EXPECTED["valid_breakdown"]["observations"]
    assert kinds.count("comprehension") == EXPECTED["valid_breakdown"]["comprehension"]
    assert all(m.format == "observation-v1" and not m.archived for m in result.memories)


def test_every_invalid_item(result: ScanResult) -> None:
    got = {(p.path, p.id, p.reason.value, p.detail) for p in result.problems}
    want = {(i["path"], i["id"], i["reason"], i["detail"]) for i in EXPECTED["invalid"]}
    assert got == want
    assert len(result.problems) == len(EXPECTED["invalid"])
    valid_paths = {m.path for m in result.memories}
    assert not valid_paths & {p.path for p in result.problems}


def test_every_file_is_accounted_for(result: ScanResult) -> None:
    files = sorted(p.relative_to(VAULT).as_posix() for p in VAULT.rglob("*.md"))
    assert len(files) == EXPECTED["files"]["observations"] + EXPECTED["files"]["comprehension"]
    accounted(result, files)


def test_problem_locations(result: ScanResult) -> None:
    by_path = {p.path: p for p in result.problems}
    assert by_path["observations/obs-017.md"].at_line is not None
    # `timestamp: yesterday` is on line 4 of obs-021.md.
    assert by_path["observations/obs-021.md"].at_line == 4
    assert by_path["observations/obs-025.md"].at_line is not None


def test_every_reference(result: ScanResult) -> None:
    got = {(r.path, r.field, r.ref, r.reason.value) for r in result.ref_problems}
    want = {(r["from"], r["field"], r["ref"], r["issue"]) for r in EXPECTED["references"]}
    assert got == want
    assert len(result.ref_problems) == len(EXPECTED["references"])
    for ref in result.ref_problems:
        assert ref.id == Path(ref.path).stem  # the owning memory's id


def test_relations_resolve(by_id: dict[str, Memory]) -> None:
    comp = by_id["comp-webhook-auth-001"]
    rels = [(r.field, r.target, r.type, r.resolved) for r in comp.relations]
    assert rels == [
        ("observations", "obs-001", "cites", "obs-001"),
        ("observations", "obs-002", "cites", "obs-002"),
        ("observations", "obs-003", "cites", "obs-003"),
        ("posterior.observations_used", "obs-001", "cites", "obs-001"),
        ("posterior.observations_used", "obs-003", "cites", "obs-003"),
    ]
    # The '<comp-id>/v<N>' form is the format's syntax, not a path.
    (belief,) = by_id["obs-003"].relations
    assert (belief.type, belief.field, belief.target, belief.resolved) == (
        "prior_belief",
        "context.prior_belief",
        "comp-webhook-auth-001/v1",
        "comp-webhook-auth-001",
    )
    (belief2,) = by_id["obs-20261118-b2c9"].relations
    assert belief2.resolved == "comp-webhook-auth-001"
    unsafe = [r for r in by_id["comp-quota-004"].relations if r.target.startswith("..")]
    assert [(r.resolved, r.field) for r in unsafe] == [(None, "observations")]
    dangling = [r for r in by_id["comp-schema-backfill-003"].relations if r.target == "obs-099"]
    assert len(dangling) == 2 and all(r.resolved is None for r in dangling)


def test_incorporated_by(by_id: dict[str, Memory]) -> None:
    assert by_id["obs-001"].native["incorporated_by"] == ["comp-webhook-auth-001"]
    # Cited only in `observations` (not the posterior) still counts.
    assert by_id["obs-002"].native["incorporated_by"] == ["comp-webhook-auth-001"]
    assert by_id["obs-005"].native["incorporated_by"] == []
    assert by_id["comp-quota-004"].native["cites"] == ["obs-014", "obs-016"]
    why = ADAPTER.decay(by_id["obs-001"], AS_OF).why
    assert "Incorporated into comp-webhook-auth-001" in why
    assert "Incorporated" not in ADAPTER.decay(by_id["obs-005"], AS_OF).why


@pytest.mark.parametrize("entry", EXPECTED["decay"], ids=lambda e: e["id"])
def test_decay_entries(by_id: dict[str, Memory], entry: dict[str, Any]) -> None:
    memory = by_id[entry["id"]]
    assert memory.path == entry["path"]
    assert memory.native["timestamp"] == entry["timestamp"]
    info = ADAPTER.decay(memory, AS_OF)
    assert info.status == entry["status"] == "retained"
    assert info.age_days == entry["age_days"]
    assert info.health is Health.STABLE
    assert (info.strength, info.weight) == (1.0, 1.0)
    assert info.score is None and info.expires_on is None and info.archive_reasons == ()
    assert info.why.startswith(entry["why"])


def test_decay_never_changes_with_time(by_id: dict[str, Memory]) -> None:
    memory = by_id["obs-030"]
    later = ADAPTER.decay(memory, AS_OF + timedelta(days=10_000))
    assert later.status == "retained" and later.health is Health.STABLE
    assert later.age_days == 621 + 10_000


def test_comprehension_decay(by_id: dict[str, Memory]) -> None:
    info = ADAPTER.decay(by_id["comp-ui-tests-005"], AS_OF)
    assert (info.status, info.health, info.age_days) == ("retained", Health.STABLE, 8)
    assert info.why.startswith("comprehension/v1 defines no decay")


@pytest.mark.parametrize("entry", EXPECTED["extra_fields_preserved"], ids=lambda e: e["id"])
def test_extra_fields_preserved(by_id: dict[str, Memory], entry: dict[str, Any]) -> None:
    memory = by_id[entry["id"]]
    assert memory.path == entry["path"]
    assert list(memory.extra) == entry["fields"]  # file order kept
    for key in entry["fields"]:
        assert memory.fields[key] == memory.extra[key]
    # `fields` is the whole header, in file order.
    assert next(iter(memory.fields)) == "spec"


def test_obs_013_extras_and_tags(by_id: dict[str, Memory]) -> None:
    memory = by_id["obs-013"]
    assert memory.extra == {
        "type": "observation",
        "severity": "high",
        "x-reviewed-by": "harbour-ops",
        "labels": ["dns", "resolver"],
    }
    assert memory.tags == ("dns", "resolver")


def test_observation_memory_fields(by_id: dict[str, Memory]) -> None:
    memory = by_id["obs-001"]
    assert memory.kind == "observation"
    assert memory.title == "Pilot-booking webhook rejected with 401"
    assert memory.source == "agent/integration-agent"
    assert memory.created == datetime(2026, 11, 3, 8, 41, 19, tzinfo=UTC)
    assert memory.confidence is None and memory.updated is None
    assert memory.body.startswith("\n# Observation: Pilot-booking webhook rejected with 401\n")
    assert memory.body.endswith('{"error": "signature mismatch", "hook": "berth-update"}\n```\n')
    assert memory.native["trace_ref"] == "trace-2026-11-03-4be71a"
    assert not memory.pinned


def test_unicode_long_and_escape_titles(by_id: dict[str, Memory]) -> None:
    assert by_id["obs-005"].title == "泊位调度接口返回 503"
    assert by_id["obs-009"].title.startswith("🚨")
    assert by_id["obs-015"].title.startswith("جدول")
    long = by_id["obs-028"]
    assert len(long.title) > 400 and long.title == long.fields["event"]
    assert "\x1b[2J" in by_id["obs-027"].body  # kept literally


def test_comprehension_memory_fields(by_id: dict[str, Memory]) -> None:
    memory = by_id["comp-webhook-auth-001"]
    assert memory.kind == "comprehension"
    assert memory.title == memory.fields["topic"]
    assert memory.confidence == "high"
    assert memory.tags == ("webhook-auth",)
    assert memory.source == "agent/integration-agent"
    assert memory.created == memory.updated == datetime(2026, 11, 3, 10, 15, tzinfo=UTC)
    assert memory.native["version"] == 2 and memory.native["verified"] is False
    assert memory.native["prior_confidence"] == "medium"
    assert list(memory.extra) == ["type", "source"]


def test_bom_and_crlf_files_are_valid(by_id: dict[str, Memory]) -> None:
    crlf = by_id["obs-007"]
    assert crlf.title == "Traffic at 75% green" and "\r" not in crlf.body
    bom = by_id["obs-011"]
    assert bom.title == "Backfill batch 17 committed"
    assert bom.fields["spec"] == "observation/v1"


def test_timestamp_variants(by_id: dict[str, Memory]) -> None:
    plus_two = timezone(timedelta(hours=2))
    assert by_id["obs-029"].created == datetime(2026, 11, 18, 23, 30, tzinfo=plus_two)
    assert by_id["obs-031"].created == datetime(2026, 11, 20, 6, 15)  # no zone
    assert by_id["obs-20261118-b2c9"].created == datetime(2026, 11, 18, 5, 47, 31, tzinfo=UTC)
    # Age counts the timestamp's own calendar date, not UTC's.
    assert ADAPTER.decay(by_id["obs-029"], AS_OF).age_days == 4


def test_scan_does_not_write() -> None:
    before = {p: p.read_bytes() for p in VAULT.rglob("*") if p.is_file()}
    ADAPTER.scan(VAULT)
    assert {p: p.read_bytes() for p in VAULT.rglob("*") if p.is_file()} == before


# --------------------------------------------------------------------------- tmp vaults


def test_detect_markers(tmp_path: Path) -> None:
    assert not ADAPTER.detect(tmp_path)
    write(tmp_path, "observations/note.md", "---\ntitle: not this format\n---\n")
    assert not ADAPTER.detect(tmp_path)
    comp_only = tmp_path / "c"
    write(comp_only, "comprehension/comp-a-001.md", comp_text())
    assert ADAPTER.detect(comp_only)
    archived_only = tmp_path / "a"
    write(archived_only, "archive/observations/obs-001.md", obs_text())
    assert ADAPTER.detect(archived_only)
    quoted = tmp_path / "q"
    write(quoted, "observations/x.md", obs_text().replace("observation/v1", '"observation/v1"'))
    assert ADAPTER.detect(quoted)


def test_detect_reads_only_a_few_files(tmp_path: Path) -> None:
    for i in range(20):
        write(tmp_path, f"observations/n{i:02d}.md", "---\nspec: other\n---\n")
    assert not ADAPTER.detect(tmp_path)


def test_safe_load_refuses_python_tags(tmp_path: Path) -> None:
    canary = tmp_path / "pwned"
    payload = f"!!python/object/apply:os.system ['touch {canary}']"
    write(tmp_path, "observations/obs-001.md", obs_text(more=f"trace_ref: {payload}\n"))
    write(tmp_path, "observations/obs-002.md", f"---\n{payload}\n---\nbody\n")
    res = ADAPTER.scan(tmp_path)
    assert res.memories == []
    assert {p.reason for p in res.problems} == {Reason.MALFORMED_FRONTMATTER}
    assert len(res.problems) == 2
    assert not canary.exists()


def test_deeply_nested_yaml_is_reported_not_fatal(tmp_path: Path) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    write(tmp_path, "observations/obs-001.md", obs_text(more=f"context: {deep}\n"))
    write(tmp_path, "observations/obs-002.md", obs_text(id="obs-002", more="x: " + "- " * 50_000))
    res = ADAPTER.scan(tmp_path)
    assert [(p.path, p.reason) for p in res.problems] == [
        ("observations/obs-001.md", Reason.MALFORMED_FRONTMATTER),
        ("observations/obs-002.md", Reason.MALFORMED_FRONTMATTER),
    ]


@pytest.mark.parametrize(
    ("more", "reason", "detail"),
    [
        ("context: [a, b]\n", "wrong_type", "context must be a mapping, not list"),
        ("context: just text\n", "wrong_type", "context must be a mapping, not str"),
        ("trace_ref: 42\n", "wrong_type", "trace_ref must be a string, not int"),
    ],
)
def test_observation_optional_field_types(
    tmp_path: Path, more: str, reason: str, detail: str
) -> None:
    write(tmp_path, "observations/obs-001.md", obs_text(more=more))
    res = ADAPTER.scan(tmp_path)
    assert res.memories == []
    assert only_problem(res, "observations/obs-001.md") == (reason, detail)
    assert res.problems[0].id == "obs-001"


@pytest.mark.parametrize(
    ("header", "reason", "detail"),
    [
        (
            "id: obs-001\ntimestamp: 2026-11-02T09:14:07Z\nsource: s\nevent: e\n",
            "missing_required_field",
            "lacks spec",
        ),
        (
            "spec: observation/v2\nid: obs-001\ntimestamp: 2026-11-02T09:14:07Z\n"
            "source: s\nevent: e\n",
            "wrong_type",
            "spec 'observation/v2' is not 'observation/v1'",
        ),
        (
            "spec: observation/v1\nid: obs-001\n",
            "missing_required_field",
            "lacks timestamp, source, event",
        ),
        (
            "spec: observation/v1\nid: obs-001\ntimestamp: 2026-11-02T09:14:07Z\n"
            "source:\nevent: e\n",
            "wrong_type",
            "source must be a string, not null",
        ),
        (
            "spec: observation/v1\nid: 17\ntimestamp: 2026-11-02T09:14:07Z\nsource: s\nevent: e\n",
            "wrong_type",
            "id must be a string, not 17",
        ),
        (
            "spec: observation/v1\nid: ../obs-001\ntimestamp: 2026-11-02T09:14:07Z\n"
            "source: s\nevent: e\n",
            "wrong_type",
            "id '../obs-001' must be a bare name, not a path",
        ),
        (
            "spec: observation/v1\nid: obs-001\ntimestamp: 1700000000\nsource: s\nevent: e\n",
            "wrong_type",
            "timestamp 1700000000 is not an ISO datetime",
        ),
        (
            "spec: observation/v1\nid: obs-001\ntimestamp: '2026-13-40T00:00:00Z'\n"
            "source: s\nevent: e\n",
            "wrong_type",
            "timestamp '2026-13-40T00:00:00Z' is not an ISO datetime",
        ),
        (
            "spec: observation/v1\nid: obs-001\ntimestamp: 2026-11-02T09:14:07Z\n"
            "source: [a, b]\nevent: e\n",
            "wrong_type",
            "source must be a string, not list",
        ),
        (
            "spec: observation/v1\nid: obs-001\ntimestamp: 2026-11-02T09:14:07Z\n"
            "source: s\nevent: 404\n",
            "wrong_type",
            "event must be a string, not int",
        ),
        ("- just\n- a list\n", "malformed_frontmatter", "frontmatter is a list, not a mapping"),
    ],
)
def test_observation_required_fields(tmp_path: Path, header: str, reason: str, detail: str) -> None:
    write(tmp_path, "observations/obs-001.md", f"---\n{header}---\n\n# T\n")
    res = ADAPTER.scan(tmp_path)
    assert res.memories == []
    assert only_problem(res, "observations/obs-001.md") == (reason, detail)


@pytest.mark.parametrize(
    ("stamp", "want"),
    [
        ("2026-11-02T09:14:07Z", datetime(2026, 11, 2, 9, 14, 7, tzinfo=UTC)),
        ('"2026-11-02T09:14:07Z"', datetime(2026, 11, 2, 9, 14, 7, tzinfo=UTC)),
        (
            "'2026-11-02T09:14:07.250-05:00'",
            datetime(2026, 11, 2, 9, 14, 7, 250000, tzinfo=timezone(timedelta(hours=-5))),
        ),
        ("2026-11-02 09:14:07", datetime(2026, 11, 2, 9, 14, 7)),
        ('"2026-11-02 09:14"', datetime(2026, 11, 2, 9, 14)),
        ("2026-11-02", date(2026, 11, 2)),
    ],
)
def test_timestamp_forms(tmp_path: Path, stamp: str, want: date) -> None:
    text = obs_text().replace("timestamp: 2026-11-02T09:14:07Z", f"timestamp: {stamp}")
    write(tmp_path, "observations/obs-001.md", text)
    res = ADAPTER.scan(tmp_path)
    assert res.problems == []
    (memory,) = res.memories
    assert memory.created == want
    assert ADAPTER.decay(memory, date(2026, 11, 12)).age_days == 10


def test_titles(tmp_path: Path) -> None:
    write(tmp_path, "observations/a.md", obs_text(id="obs-a", event="E-a", body="No heading."))
    write(
        tmp_path,
        "observations/b.md",
        obs_text(
            id="obs-b", event="E-b", body="```\n# not a title\n```\n\n# Observation:   Real ##"
        ),
    )
    write(tmp_path, "observations/c.md", obs_text(id="obs-c", body="## Sub\n\n# Plain title"))
    write(tmp_path, "observations/d.md", obs_text(id="obs-d", event="E-d", body="# Observation: "))
    res = ADAPTER.scan(tmp_path)
    titles = {m.id: m.title for m in res.memories}
    assert titles == {"obs-a": "E-a", "obs-b": "Real", "obs-c": "Plain title", "obs-d": "E-d"}


def test_pinned_tags_and_extras(tmp_path: Path) -> None:
    more = "pinned: true\ntags: [b, a]\nlabels: a\nzeta: 1\nalpha: {x: 2}\n"
    write(tmp_path, "observations/obs-001.md", obs_text(more=more))
    write(tmp_path, "observations/obs-002.md", obs_text(id="obs-002", more="pinned: 'yes'\n"))
    write(tmp_path, "observations/obs-003.md", obs_text(id="obs-003", more="tags: [1, 2]\n"))
    res = ADAPTER.scan(tmp_path)
    mems = {m.id: m for m in res.memories}
    assert mems["obs-001"].pinned and not mems["obs-002"].pinned
    assert mems["obs-001"].tags == ("a", "b")
    assert list(mems["obs-001"].extra) == ["pinned", "tags", "labels", "zeta", "alpha"]
    assert mems["obs-003"].tags == ()
    assert ADAPTER.decay(mems["obs-001"], AS_OF).health is Health.STABLE


def test_archived_documents(tmp_path: Path) -> None:
    write(tmp_path, "observations/obs-001.md", obs_text())
    write(tmp_path, "archive/observations/obs-002.md", obs_text(id="obs-002"))
    write(
        tmp_path,
        "archive/comprehension/comp-a-001.md",
        comp_text(observations="[obs-001, obs-002]", used="[obs-002]"),
    )
    res = ADAPTER.scan(tmp_path)
    assert res.problems == [] and res.ref_problems == []
    mems = {m.id: m for m in res.memories}
    assert not mems["obs-001"].archived
    assert mems["obs-002"].archived and mems["comp-a-001"].archived
    assert mems["obs-002"].path == "archive/observations/obs-002.md"
    info = ADAPTER.decay(mems["obs-002"], AS_OF)
    assert (info.status, info.health, info.weight) == ("archived", Health.ARCHIVED, 0.0)
    assert "Archived" in info.why
    assert mems["obs-002"].native["incorporated_by"] == ["comp-a-001"]


def test_archive_and_live_copy_are_duplicates(tmp_path: Path) -> None:
    write(tmp_path, "observations/obs-001.md", obs_text())
    write(tmp_path, "archive/observations/obs-001.md", obs_text())
    res = ADAPTER.scan(tmp_path)
    assert res.memories == []
    assert sorted((p.path, p.reason.value) for p in res.problems) == [
        ("archive/observations/obs-001.md", "duplicate_id"),
        ("observations/obs-001.md", "duplicate_id"),
    ]


def test_duplicate_across_kinds(tmp_path: Path) -> None:
    write(tmp_path, "observations/x.md", obs_text(id="shared-1"))
    write(tmp_path, "comprehension/y.md", comp_text(id="shared-1", observations="[]", used="[]"))
    write(tmp_path, "observations/obs-002.md", obs_text(id="obs-002"))
    res = ADAPTER.scan(tmp_path)
    assert [m.id for m in res.memories] == ["obs-002"]
    assert {(p.path, p.reason.value, p.detail) for p in res.problems} == {
        ("observations/x.md", "duplicate_id", "id 'shared-1' also used by comprehension/y.md"),
        ("comprehension/y.md", "duplicate_id", "id 'shared-1' also used by observations/x.md"),
    }


def test_citation_of_a_duplicate_is_dangling(tmp_path: Path) -> None:
    write(tmp_path, "observations/a.md", obs_text(id="obs-001"))
    write(tmp_path, "observations/b.md", obs_text(id="obs-001"))
    write(tmp_path, "comprehension/comp-a-001.md", comp_text())
    res = ADAPTER.scan(tmp_path)
    assert {(r.field, r.ref, r.reason) for r in res.ref_problems} == {
        ("observations", "obs-001", RefIssue.DANGLING),
        ("posterior.observations_used", "obs-001", RefIssue.DANGLING),
    }


@pytest.mark.parametrize(
    ("belief", "issue", "resolved"),
    [
        ("comp-a-001/v1", None, "comp-a-001"),
        ("comp-a-001/v12", None, "comp-a-001"),
        ("comp-a-001", None, "comp-a-001"),
        ("comp-gone-009/v2", RefIssue.DANGLING, None),
        ("obs-001/v1", RefIssue.DANGLING, None),  # prior beliefs are comprehension ids
        ("../comp-a-001/v1", RefIssue.UNSAFE, None),
        ("comp-a-001/../x/v1", RefIssue.UNSAFE, None),
        ("comp-a-001/v1/extra", RefIssue.UNSAFE, None),
        ("comp-a-001/latest", RefIssue.UNSAFE, None),
        ("/etc/passwd", RefIssue.UNSAFE, None),
        ("C:\\\\x/v1", RefIssue.UNSAFE, None),
    ],
)
def test_prior_belief(
    tmp_path: Path, belief: str, issue: RefIssue | None, resolved: str | None
) -> None:
    more = f"context:\n  prior_belief: {json.dumps(belief)}\n"
    write(tmp_path, "observations/obs-002.md", obs_text(id="obs-002", more=more))
    write(tmp_path, "observations/obs-001.md", obs_text())
    write(tmp_path, "comprehension/comp-a-001.md", comp_text())
    res = ADAPTER.scan(tmp_path)
    assert len(res.memories) == 3
    obs = next(m for m in res.memories if m.id == "obs-002")
    (rel,) = obs.relations
    assert (rel.target, rel.type, rel.field, rel.resolved) == (
        json.loads(json.dumps(belief)),
        "prior_belief",
        "context.prior_belief",
        resolved,
    )
    flagged = [(r.path, r.id, r.field, r.ref, r.reason) for r in res.ref_problems]
    if issue is None:
        assert flagged == []
    else:
        assert flagged == [
            ("observations/obs-002.md", "obs-002", "context.prior_belief", rel.target, issue)
        ]


def test_prior_belief_of_other_types_is_ignored(tmp_path: Path) -> None:
    write(tmp_path, "observations/obs-001.md", obs_text(more="context:\n  prior_belief: [a]\n"))
    res = ADAPTER.scan(tmp_path)
    assert res.memories[0].relations == () and res.ref_problems == []


@pytest.mark.parametrize(
    ("text", "reason", "detail"),
    [
        (
            comp_text(prior_conf="certain"),
            "out_of_range",
            "prior.confidence 'certain' is not one of high/medium/low/unknown",
        ),
        (
            comp_text(prior_conf="0.9"),
            "wrong_type",
            "prior.confidence 0.9 is not one of high/medium/low/unknown",
        ),
        (
            comp_text(observations="obs-001"),
            "wrong_type",
            "observations must be a list of observation ids, not 'obs-001'",
        ),
        (
            comp_text(used="[obs-001, 7]"),
            "wrong_type",
            "posterior.observations_used must be a list of observation ids, not ['obs-001', 7]",
        ),
        (comp_text(more="version: two\n"), "wrong_type", "version must be an integer, not 'two'"),
        (comp_text(more="version: true\n"), "wrong_type", "version must be an integer, not True"),
        (
            comp_text(more="verified: maybe\n"),
            "wrong_type",
            "verified must be true or false, not 'maybe'",
        ),
        (
            comp_text().replace("  source: accumulated\n", ""),
            "missing_required_field",
            "lacks prior.source",
        ),
        (
            comp_text()
            .replace("domain: testing\n", "")
            .replace('  update_reasoning: "Because"\n', ""),
            "missing_required_field",
            "lacks domain, posterior.update_reasoning",
        ),
        (
            comp_text().replace("prior:\n", "prior: text\nx_prior:\n"),
            "wrong_type",
            "prior must be a mapping, not str",
        ),
        (
            comp_text().replace("created: 2026-11-02T09:30:00Z", "created: yesterday"),
            "wrong_type",
            "created 'yesterday' is not an ISO datetime",
        ),
        (
            comp_text().replace("spec: comprehension/v1", "spec: observation/v1"),
            "wrong_type",
            "spec 'observation/v1' is not 'comprehension/v1'",
        ),
        (
            comp_text().replace('topic: "A topic"', "topic: [a]"),
            "wrong_type",
            "topic must be a string, not list",
        ),
    ],
)
def test_comprehension_validation(tmp_path: Path, text: str, reason: str, detail: str) -> None:
    write(tmp_path, "observations/obs-001.md", obs_text())
    write(tmp_path, "comprehension/comp-a-001.md", text)
    res = ADAPTER.scan(tmp_path)
    assert [m.id for m in res.memories] == ["obs-001"]
    assert only_problem(res, "comprehension/comp-a-001.md") == (reason, detail)
    assert res.problems[0].id == "comp-a-001"
    # An invalid comprehension incorporates nothing.
    assert res.memories[0].native["incorporated_by"] == []


def test_comprehension_defaults_and_optional(tmp_path: Path) -> None:
    text = comp_text(prior_conf="unknown").replace("spec: comprehension/v1\n", "")
    text = text.replace("  source: accumulated\n", "  source: accumulated\n  reasoning: r\n")
    write(tmp_path, "comprehension/comp-a-001.md", text)
    write(tmp_path, "observations/obs-001.md", obs_text())
    res = ADAPTER.scan(tmp_path)
    assert res.problems == []
    comp = next(m for m in res.memories if m.kind == "comprehension")
    assert comp.native["version"] == 1 and comp.native["verified"] is False
    assert comp.native["prior_confidence"] == "unknown"
    assert comp.updated == datetime(2026, 11, 3, 9, 30, tzinfo=UTC)
    assert comp.extra == {}


def test_wrong_kind_in_observations_folder(tmp_path: Path) -> None:
    write(tmp_path, "observations/comp-a-001.md", comp_text())
    res = ADAPTER.scan(tmp_path)
    assert only_problem(res, "observations/comp-a-001.md") == (
        "wrong_type",
        "spec 'comprehension/v1' is not 'observation/v1'",
    )


def test_bom_crlf_written(tmp_path: Path) -> None:
    raw = obs_text(body="# Observation: Windows\n\nline").replace("\n", "\r\n")
    write(tmp_path, "observations/obs-001.md", b"\xef\xbb\xbf" + raw.encode())
    res = ADAPTER.scan(tmp_path)
    assert res.problems == []
    assert res.memories[0].title == "Windows"
    assert "\r" not in res.memories[0].body
    assert ADAPTER.detect(tmp_path)


def test_non_md_and_hidden_files_ignored(tmp_path: Path) -> None:
    write(tmp_path, "observations/obs-001.md", obs_text())
    write(tmp_path, "observations/notes.txt", "hello")
    write(tmp_path, "observations/.obs-002.md", obs_text(id="obs-002"))
    write(tmp_path, "observations/sub/obs-003.md", obs_text(id="obs-003"))
    res = ADAPTER.scan(tmp_path)
    assert [m.id for m in res.memories] == ["obs-001"] and res.problems == []


# --------------------------------------------------------------------------- fuzzing

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False),
    st.text(max_size=30),
    st.sampled_from(["observation/v1", "comprehension/v1", "obs-001", "comp-a-001/v1", "../x"]),
    st.datetimes(timezones=st.none() | st.just(UTC)),
    st.dates(),
)
_keys = st.one_of(
    st.sampled_from(
        [
            "spec",
            "id",
            "timestamp",
            "source",
            "event",
            "context",
            "trace_ref",
            "prior_belief",
            "labels",
            "tags",
            "pinned",
            "type",
            "observations",
            "posterior",
            "prior",
        ]
    ),
    st.text(min_size=1, max_size=12),
)
_values = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_keys, children, max_size=4),
    max_leaves=20,
)
_mappings = st.dictionaries(_keys, _values, max_size=8)

_BASE_OBS: dict[str, Any] = {
    "spec": "observation/v1",
    "id": "obs-001",
    "timestamp": "2026-11-02T09:14:07Z",
    "source": "agent/x",
    "event": "e",
}


def _fuzz_scan(files: dict[str, bytes]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for rel, data in files.items():
            write(root, rel, data)
        res = ADAPTER.scan(root)
        accounted(res, list(files))
        for memory in res.memories:
            info = ADAPTER.decay(memory, AS_OF)
            assert info.health in (Health.STABLE, Health.ARCHIVED)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.binary(max_size=300), min_size=1, max_size=4), st.binary(max_size=200))
def test_fuzz_arbitrary_bytes(blobs: list[bytes], prefix_tail: bytes) -> None:
    files = {f"observations/obs-{i}.md": b for i, b in enumerate(blobs)}
    files["comprehension/c.md"] = b"---\n" + prefix_tail
    _fuzz_scan(files)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_mappings, st.booleans(), st.text(max_size=80)), min_size=1, max_size=4))
def test_fuzz_yaml_mappings(docs: list[tuple[dict[str, Any], bool, str]]) -> None:
    files: dict[str, bytes] = {}
    for i, (mapping, on_valid_base, body) in enumerate(docs):
        header = {**_BASE_OBS, **mapping} if on_valid_base else mapping
        try:
            dumped = yaml.safe_dump(header, allow_unicode=True, sort_keys=False)
        except yaml.YAMLError:
            dumped = "{}\n"
        folder = "comprehension" if i == 3 else "observations"
        files[f"{folder}/doc-{i}.md"] = f"---\n{dumped}---\n{body}".encode(errors="surrogatepass")
    _fuzz_scan(files)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400), st.text(max_size=100))
def test_fuzz_yamlish_text(header: str, body: str) -> None:
    text = textwrap.dedent(f"---\nspec: observation/v1\n{header}\n---\n{body}")
    _fuzz_scan({"observations/obs-1.md": text.encode(errors="surrogatepass")})
