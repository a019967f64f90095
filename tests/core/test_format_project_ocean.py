"""Project Ocean adapter: the public fixture, edge cases in tmp vaults, fuzzing."""

from __future__ import annotations

import json
import math
import shutil
import string
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlens.core.formats import adapter_for
from memlens.core.formats.project_ocean.adapter import ProjectOceanAdapter
from memlens.core.formats.project_ocean.decay import parse_decay_spec
from memlens.core.formats.project_ocean.linking import backlink_name
from memlens.core.model import DecayInfo, Health, Memory, Reason, RefIssue, ScanResult

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
VAULT = FIXTURES / "project-ocean"
EXPECTED: dict[str, Any] = json.loads(
    (FIXTURES / "expected" / "project-ocean.json").read_text(encoding="utf-8")
)
DEMO = Path(__file__).resolve().parents[2] / "core" / "demo_vaults"
AS_OF = date(2026, 11, 22)
ADAPTER = ProjectOceanAdapter()


@pytest.fixture(scope="module")
def result() -> ScanResult:
    return ADAPTER.scan(VAULT)


@pytest.fixture(scope="module")
def by_id(result: ScanResult) -> dict[str, Memory]:
    return {m.id: m for m in result.memories}


# --------------------------------------------------------------------------- fixture


def test_registered_and_labelled() -> None:
    assert adapter_for("project-ocean").format_id == "project-ocean"
    assert ProjectOceanAdapter.label == "Project Ocean"


def test_detect(tmp_path: Path) -> None:
    assert ADAPTER.detect(VAULT)
    assert not ADAPTER.detect(tmp_path)
    (tmp_path / "agents" / "a" / "memory").mkdir(parents=True)
    assert not ADAPTER.detect(tmp_path)  # memory/ but neither vault/ nor archive/
    (tmp_path / "agents" / "a" / "memory" / "archive").mkdir()
    assert ADAPTER.detect(tmp_path)
    assert not ADAPTER.detect(VAULT / "agents")
    assert not ADAPTER.detect(FIXTURES / "cognitive-memory")
    for other in ("dream-cycle", "observation-v1", "experience-records", "cognitive-memory"):
        assert not ADAPTER.detect(DEMO / other)


def test_valid_count_and_breakdown(result: ScanResult) -> None:
    assert len(result.memories) == EXPECTED["valid_count"] == 35
    areas = Counter(str(m.native["area"]) for m in result.memories)
    agents = Counter(
        f"agent:{m.native['agent']}" for m in result.memories if not m.native["shared"]
    )
    breakdown = EXPECTED["valid_breakdown"]
    assert areas["vault"] == breakdown["vault"]
    assert areas["archive"] == breakdown["archive"]
    assert areas["shared"] == breakdown["shared"]
    for key, count in breakdown.items():
        if key.startswith("agent:"):
            assert agents[key] == count, key
    assert sum(1 for m in result.memories if m.archived) == breakdown["archive"]


def test_every_file_is_a_memory_or_a_problem(result: ScanResult) -> None:
    paths = sorted(p.relative_to(VAULT).as_posix() for p in VAULT.rglob("*.md"))
    assert len(paths) == EXPECTED["total_md_files"]
    seen = sorted([m.path for m in result.memories] + [p.path for p in result.problems])
    assert seen == paths


def test_invalid_items(result: ScanResult) -> None:
    got = {(p.path, p.reason.value, p.id, p.detail) for p in result.problems}
    want = {(i["path"], i["reason"], i["id"], i["detail"]) for i in EXPECTED["invalid"]}
    assert got == want
    assert len(result.problems) == len(EXPECTED["invalid"])
    assert all(p.format == "project-ocean" and p.vault_root == VAULT for p in result.problems)


def test_invalid_items_never_loaded(result: ScanResult) -> None:
    loaded = {m.path for m in result.memories}
    ids = {m.id for m in result.memories}
    for item in EXPECTED["invalid"]:
        assert item["path"] not in loaded
        assert item["id"] not in ids


def test_problem_lines_point_at_the_fault(result: ScanResult) -> None:
    at = {p.path: p.at_line for p in result.problems}
    assert at["agents/courier/memory/vault/obs-2026-11-17-002.md"] == 3  # confidence: 1.7
    assert at["agents/sentinel/memory/vault/obs-2026-11-16-001.md"] is not None


def test_references(result: ScanResult) -> None:
    got = {(r.path, r.field, r.ref, r.reason.value) for r in result.ref_problems}
    want = {(r["from"], r["field"], r["ref"], r["issue"]) for r in EXPECTED["references"]}
    assert got == want
    for r in result.ref_problems:
        assert r.id == r.path.split("/")[1] + "/" + Path(r.path).stem


def test_backlink_relations(by_id: dict[str, Memory]) -> None:
    rels = {r.target: r for r in by_id["courier/obs-2026-11-21-001"].relations}
    assert rels["obs-2026-11-18-001"].resolved == "courier/obs-2026-11-18-001"
    assert rels["obs-2026-11-18-001"].type == "backlink"
    assert rels["obs-2026-11-18-001"].field == "backlinks"
    assert rels["../../../sentinel/memory/vault/obs-2026-11-09-001"].resolved is None
    # own agent first, even though shared/ has a copy too
    (own,) = by_id["sentinel/obs-2026-10-14-001"].relations
    assert own.resolved == "sentinel/obs-2026-11-09-001"
    (shared,) = by_id["shared/obs-2026-10-14-001"].relations
    assert shared.resolved == "shared/obs-2026-11-09-001"
    # a vault memory can link to one already moved to archive/
    (arch,) = by_id["courier/obs-2026-10-08-002"].relations
    assert not by_id["courier/obs-2026-10-08-002"].archived
    assert arch.resolved == "courier/obs-2026-09-03-001"
    assert by_id["courier/obs-2026-09-03-001"].archived
    (dangling,) = by_id["scribe/obs-2026-11-16-002"].relations
    assert dangling.resolved is None


@pytest.mark.parametrize("case", EXPECTED["decay"], ids=lambda c: c["id"])
def test_decay_examples(case: dict[str, Any], by_id: dict[str, Memory]) -> None:
    memory = by_id[case["id"]]
    assert memory.path == case["path"]
    assert memory.created == date.fromisoformat(case["created"])
    assert memory.native["decay"] == case["decay"]
    info = ADAPTER.decay(memory, AS_OF)
    assert info.status == case["status"]
    assert info.age_days == case["age_days"]
    assert info.lifespan_days == case["lifespan_days"]
    if "linear_weight" in case:
        assert info.linear_weight == case["linear_weight"]
    assert (
        info.health
        == {
            "active": Health.ACTIVE,
            "near_expiry": Health.FADING,
            "expired": Health.EXPIRED,
            "archived": Health.ARCHIVED,
            "permanent": Health.STABLE,
        }[case["status"]]
    )
    # the arithmetic in `why` carries the same numbers
    assert f"= {case['age_days']} days" in info.why or f"age {case['age_days']} days" in info.why


def test_status_counts(result: ScanResult) -> None:
    counts = Counter(ADAPTER.decay(m, AS_OF).status for m in result.memories)
    assert dict(counts) == EXPECTED["status_counts"]


def test_decay_numbers(by_id: dict[str, Memory]) -> None:
    active = ADAPTER.decay(by_id["courier/obs-2026-11-18-001"], AS_OF)
    assert active.strength == active.weight == pytest.approx(1 - 4 / 14)
    assert active.expires_on == date(2026, 12, 3)  # created + 14 + 1
    assert active.archive_reasons == ()

    expired = ADAPTER.decay(by_id["ledger/obs-2026-10-30-001"], AS_OF)
    assert expired.archive_reasons == ("expired (age 23 > 14 days)",)
    assert expired.weight == 0.0
    assert expired.expires_on == date(2026, 11, 14)

    expo = ADAPTER.decay(by_id["ledger/obs-2026-11-10-002"], AS_OF)
    assert expo.linear_weight is None
    assert expo.strength == pytest.approx(math.exp(-3 * 12 / 30))
    assert expo.weight == expo.strength

    archived = ADAPTER.decay(by_id["courier/obs-2026-09-20-001"], AS_OF)
    assert archived.weight == 0.0
    assert archived.archive_reasons == ()  # already there

    permanent = ADAPTER.decay(by_id["sentinel/obs-2026-02-03-001"], AS_OF)
    assert permanent.weight == permanent.strength == 1.0
    assert permanent.expires_on is None
    assert permanent.linear_weight is None


def test_decay_uses_created_not_filename(by_id: dict[str, Memory]) -> None:
    info = ADAPTER.decay(by_id["courier/obs-2026-11-13-003"], AS_OF)
    assert info.age_days == 21
    assert "filename date 2026-11-13 differs from created 2026-11-01" in info.why


def test_memory_fields(by_id: dict[str, Memory]) -> None:
    m = by_id["ledger/obs-2026-10-24-002"]
    assert m.format == "project-ocean"
    assert m.kind == "observation"
    assert m.path == "agents/ledger/memory/vault/obs-2026-10-24-002.md"
    assert m.tags == ("pricing", "margin", "used-books")
    assert m.confidence == 0.85
    assert m.created == date(2026, 10, 24)
    assert m.source == "ledger"
    assert m.title.startswith("Used-book margin fell below")
    assert m.body == (VAULT / m.path).read_text(encoding="utf-8").split("---\n", 2)[2]
    assert m.native["agent"] == "ledger"
    assert m.native["area"] == "vault"
    assert m.native["decay_kind"] == "linear"
    assert m.native["lifespan_days"] == 30
    assert m.native["verified"] is True
    assert not m.archived and not m.pinned
    assert list(m.fields) == [
        "tags",
        "confidence",
        "created",
        "decay",
        "source",
        "backlinks",
        "verified",
    ]
    assert m.extra == {}

    shared = by_id["shared/obs-2026-10-24-002"]
    assert shared.native["agent"] == "shared"
    assert shared.native["area"] == "shared"
    assert shared.native["shared"] is True

    archived = by_id["courier/obs-2026-09-20-001"]
    assert archived.archived
    assert archived.native["area"] == "archive"


def test_extra_fields_preserved(by_id: dict[str, Memory]) -> None:
    for case in EXPECTED["extra_fields_preserved"]:
        m = by_id[case["id"]]
        assert m.path == case["path"]
        assert list(m.extra) == case["fields"]
        assert m.extra == {"priority": "high", "carrier_id": "NL-22", "reviewed_by": "marta"}
        # `fields` is the whole mapping in file order
        assert list(m.fields)[-3:] == case["fields"]
        assert list(m.fields)[:6] == [
            "tags",
            "confidence",
            "created",
            "decay",
            "source",
            "backlinks",
        ]


def test_bom_crlf_quoted_created_and_integer_confidence(by_id: dict[str, Memory]) -> None:
    bom = by_id["sentinel/obs-2026-11-06-001"]
    assert (VAULT / bom.path).read_bytes().startswith(b"\xef\xbb\xbf")
    assert bom.tags == ("chargeback", "card-testing", "block")

    crlf = by_id["scribe/obs-2026-11-14-001"]
    assert b"\r\n" in (VAULT / crlf.path).read_bytes()
    assert crlf.created == date(2026, 11, 14)  # quoted in the file
    assert "\r" not in crlf.body

    integer = by_id["sentinel/obs-2026-02-03-001"]
    assert integer.confidence == 1
    assert integer.native["decay"] is None
    assert by_id["shared/obs-2026-02-03-001"].confidence == 1


def test_titles(by_id: dict[str, Memory]) -> None:
    assert by_id["courier/obs-2026-11-19-002"].title.startswith("日本向け")
    assert by_id["scribe/obs-2026-11-20-002"].title.startswith("📦 Catalog import stalled")
    assert by_id["sentinel/obs-2026-11-17-002"].title.startswith("הזמנות")
    long = by_id["scribe/obs-2026-11-12-002"]
    assert len(long.title) == 500
    assert "\n" not in long.title
    esc = by_id["ledger/obs-2026-11-15-003"]
    assert "\x1b[31m" in esc.body
    assert "[link=file:///etc/passwd]" in esc.body


# --------------------------------------------------------------------------- tmp vaults

HEADER = {
    "tags": "[t]",
    "confidence": "0.5",
    "created": "2026-11-01",
    "decay": "linear-30d",
    "source": "a",
}


def write_obs(
    root: Path,
    rel: str,
    *,
    body: str = "# Title\n\nBody text.\n",
    drop: tuple[str, ...] = (),
    fields: dict[str, str] | None = None,
    **more: str,
) -> Path:
    """Write one observation; `fields`/`more` override HEADER values (raw YAML text)."""
    values = {k: v for k, v in HEADER.items() if k not in drop}
    values.update(fields or {})
    values.update(more)
    lines = ["---", *(f"{k}: {v}" for k, v in values.items()), "---", body]
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


V = "agents/a/memory/vault/"


def only(result: ScanResult) -> Memory:
    assert not result.problems, result.problems
    (m,) = result.memories
    return m


def problem_of(result: ScanResult) -> tuple[Reason, str]:
    assert not result.memories
    (p,) = result.problems
    return p.reason, p.detail


def test_copy_of_fixture_scans_the_same(tmp_path: Path, result: ScanResult) -> None:
    dest = tmp_path / "po"
    shutil.copytree(VAULT, dest)
    again = ADAPTER.scan(dest)
    assert sorted(m.id for m in again.memories) == sorted(m.id for m in result.memories)
    assert len(again.problems) == len(result.problems)


@pytest.mark.parametrize(
    ("fields", "drop", "reason", "detail"),
    [
        ({}, ("tags",), Reason.MISSING_REQUIRED_FIELD, "lacks tags"),
        ({}, ("created",), Reason.MISSING_REQUIRED_FIELD, "lacks created"),
        ({}, ("source",), Reason.MISSING_REQUIRED_FIELD, "lacks source"),
        ({"confidence": ""}, (), Reason.MISSING_REQUIRED_FIELD, "lacks confidence"),
        ({"tags": "campaign"}, (), Reason.WRONG_TYPE, "tags"),
        ({"tags": "[a, 3]"}, (), Reason.WRONG_TYPE, "tags"),
        ({"confidence": "true"}, (), Reason.WRONG_TYPE, "confidence"),
        ({"confidence": "high"}, (), Reason.WRONG_TYPE, "confidence"),
        ({"confidence": "1.7"}, (), Reason.OUT_OF_RANGE, "confidence 1.7 outside 0.0-1.0"),
        ({"confidence": "-0.1"}, (), Reason.OUT_OF_RANGE, "confidence -0.1 outside 0.0-1.0"),
        ({"confidence": "2"}, (), Reason.OUT_OF_RANGE, "confidence 2 outside 0.0-1.0"),
        ({"confidence": ".nan"}, (), Reason.OUT_OF_RANGE, "confidence"),
        ({"created": "yesterday"}, (), Reason.WRONG_TYPE, "created"),
        ({"created": "2026-11-01 10:00:00"}, (), Reason.WRONG_TYPE, "created"),
        ({"created": "'2026/11/01'"}, (), Reason.WRONG_TYPE, "created"),
        ({"source": "[a, b]"}, (), Reason.WRONG_TYPE, "source"),
        ({"decay": "linear-30"}, (), Reason.WRONG_TYPE, "decay"),
        ({"decay": "linear-0d"}, (), Reason.WRONG_TYPE, "decay"),
        ({"decay": "weekly"}, (), Reason.WRONG_TYPE, "decay"),
        ({"decay": "30"}, (), Reason.WRONG_TYPE, "decay"),
        ({"backlinks": "[1, 2]"}, (), Reason.WRONG_TYPE, "backlinks"),
        ({"backlinks": "obs-2026-11-01-001"}, (), Reason.WRONG_TYPE, "backlinks"),
        ({"verified": "'yes'"}, (), Reason.WRONG_TYPE, "verified"),
        ({"pinned": "1"}, (), Reason.WRONG_TYPE, "pinned"),
    ],
)
def test_field_validation(
    tmp_path: Path, fields: dict[str, str], drop: tuple[str, ...], reason: Reason, detail: str
) -> None:
    write_obs(tmp_path, V + "obs-2026-11-01-001.md", drop=drop, fields=fields)
    got_reason, got_detail = problem_of(ADAPTER.scan(tmp_path))
    assert got_reason == reason
    assert detail in got_detail
    (p,) = ADAPTER.scan(tmp_path).problems
    assert p.id == "a/obs-2026-11-01-001"
    assert p.path == V + "obs-2026-11-01-001.md"


@pytest.mark.parametrize(
    "fields",
    [
        {"confidence": "1"},
        {"confidence": "0"},
        {"confidence": "1.0"},
        {"created": "'2026-11-01'"},
        {"created": '"2026-11-01"'},
        {"decay": "exponential-7d"},
        {"decay": ""},  # `decay:` with no value = no decay
        {"backlinks": ""},
        {"backlinks": "[]"},
        {"tags": "[]"},
        {"verified": "false"},
        {"pinned": "true"},
        {"promoted_from": "b", "promoted_at": "2026-11-02"},
    ],
)
def test_valid_variants(tmp_path: Path, fields: dict[str, str]) -> None:
    write_obs(tmp_path, V + "obs-2026-11-01-001.md", fields=fields)
    m = only(ADAPTER.scan(tmp_path))
    assert m.id == "a/obs-2026-11-01-001"
    assert m.extra == {}


def test_unknown_fields_kept_in_order(tmp_path: Path) -> None:
    write_obs(tmp_path, V + "obs-2026-11-01-001.md", zeta="1", alpha="[x]", mid="{k: v}")
    m = only(ADAPTER.scan(tmp_path))
    assert list(m.extra) == ["zeta", "alpha", "mid"]
    assert m.extra == {"zeta": 1, "alpha": ["x"], "mid": {"k": "v"}}
    assert list(m.fields) == [*HEADER, "zeta", "alpha", "mid"]


def test_title_and_body(tmp_path: Path) -> None:
    write_obs(tmp_path, V + "obs-2026-11-01-001.md", body="\n\n##  Heading here  \nmore\n")
    m = only(ADAPTER.scan(tmp_path))
    assert m.title == "Heading here"
    assert m.body == "\n\n##  Heading here  \nmore\n"
    write_obs(tmp_path, V + "obs-2026-11-01-001.md", body="")
    assert only(ADAPTER.scan(tmp_path)).title == "obs-2026-11-01-001"


def test_promoted_fields_recorded(tmp_path: Path) -> None:
    write_obs(
        tmp_path,
        "shared/observations/obs-2026-11-01-001.md",
        promoted_from="a",
        promoted_at="2026-11-02",
    )
    (tmp_path / V).mkdir(parents=True)
    m = only(ADAPTER.scan(tmp_path))
    assert m.id == "shared/obs-2026-11-01-001"
    assert m.native["promoted_from"] == "a"
    assert m.native["promoted_at"] == "2026-11-02"
    assert m.extra == {}


def test_shared_archive_and_duplicates(tmp_path: Path) -> None:
    write_obs(tmp_path, V + "obs-2026-11-01-001.md")
    write_obs(tmp_path, "shared/observations/obs-2026-11-01-001.md")
    write_obs(tmp_path, "shared/observations/archive/obs-2026-11-01-002.md")
    write_obs(tmp_path, "shared/observations/obs-2026-11-01-003.md")
    write_obs(tmp_path, "shared/observations/archive/obs-2026-11-01-003.md")
    r = ADAPTER.scan(tmp_path)
    ids = {m.id: m for m in r.memories}
    assert set(ids) == {
        "a/obs-2026-11-01-001",
        "shared/obs-2026-11-01-001",
        "shared/obs-2026-11-01-002",
    }
    arch = ids["shared/obs-2026-11-01-002"]
    assert arch.archived and arch.native["shared"] and arch.native["area"] == "archive"
    assert ADAPTER.decay(arch, AS_OF).status == "archived"
    dups = sorted((p.path, p.detail) for p in r.problems)
    assert dups == [
        (
            "shared/observations/archive/obs-2026-11-01-003.md",
            "id 'shared/obs-2026-11-01-003' also used by shared/observations/obs-2026-11-01-003.md",
        ),
        (
            "shared/observations/obs-2026-11-01-003.md",
            "id 'shared/obs-2026-11-01-003' also used by "
            "shared/observations/archive/obs-2026-11-01-003.md",
        ),
    ]


def test_copy_that_fails_to_parse_still_claims_the_id(tmp_path: Path) -> None:
    write_obs(tmp_path, V + "obs-2026-11-01-001.md")
    bad = tmp_path / "agents/a/memory/archive/obs-2026-11-01-001.md"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"")
    r = ADAPTER.scan(tmp_path)
    assert r.memories == []
    reasons = {p.path: p.reason for p in r.problems}
    assert reasons == {
        V + "obs-2026-11-01-001.md": Reason.DUPLICATE_ID,
        "agents/a/memory/archive/obs-2026-11-01-001.md": Reason.EMPTY_FILE,
    }


def test_ignores_non_md_hidden_and_nested(tmp_path: Path) -> None:
    write_obs(tmp_path, V + "obs-2026-11-01-001.md")
    (tmp_path / V / "notes.txt").write_text("x")
    (tmp_path / V / ".obs-2026-11-01-002.md").write_text("x")
    (tmp_path / V / "sub").mkdir()
    write_obs(tmp_path, V + "sub/obs-2026-11-01-003.md")
    write_obs(tmp_path, "agents/a/notes/obs-2026-11-01-004.md")
    r = ADAPTER.scan(tmp_path)
    assert [m.id for m in r.memories] == ["a/obs-2026-11-01-001"]
    assert r.problems == []


def test_backlink_resolution(tmp_path: Path) -> None:
    write_obs(tmp_path, V + "obs-2026-11-01-001.md")
    write_obs(tmp_path, "agents/a/memory/archive/obs-2026-10-01-001.md")
    write_obs(tmp_path, "agents/b/memory/vault/obs-2026-09-01-001.md")
    write_obs(tmp_path, "shared/observations/obs-2026-08-01-001.md")
    write_obs(
        tmp_path,
        V + "obs-2026-11-02-001.md",
        backlinks="[obs-2026-11-01-001.md, obs-2026-10-01-001, obs-2026-08-01-001, "
        "obs-2026-09-01-001, 'b/obs-2026-09-01-001', '..\\x', obs-1, '/etc/passwd']",
    )
    write_obs(
        tmp_path,
        "shared/observations/obs-2026-11-03-001.md",
        source="b",
        backlinks="[obs-2026-08-01-001, obs-2026-09-01-001, obs-2026-11-01-001]",
    )
    r = ADAPTER.scan(tmp_path)
    by = {m.id: m for m in r.memories}
    resolved = {rel.target: rel.resolved for rel in by["a/obs-2026-11-02-001"].relations}
    assert resolved == {
        "obs-2026-11-01-001.md": "a/obs-2026-11-01-001",
        "obs-2026-10-01-001": "a/obs-2026-10-01-001",  # archive of the same agent
        "obs-2026-08-01-001": "shared/obs-2026-08-01-001",
        "obs-2026-09-01-001": None,  # another agent's: agents read their own vault + shared
        "b/obs-2026-09-01-001": None,
        "..\\x": None,
        "obs-1": None,
        "/etc/passwd": None,
    }
    shared = {rel.target: rel.resolved for rel in by["shared/obs-2026-11-03-001"].relations}
    assert shared == {
        "obs-2026-08-01-001": "shared/obs-2026-08-01-001",
        "obs-2026-09-01-001": "b/obs-2026-09-01-001",  # its source agent
        "obs-2026-11-01-001": "a/obs-2026-11-01-001",  # any agent
    }
    flagged = {(p.id, p.ref): p.reason for p in r.ref_problems}
    assert flagged == {
        ("a/obs-2026-11-02-001", "obs-2026-09-01-001"): RefIssue.DANGLING,
        ("a/obs-2026-11-02-001", "b/obs-2026-09-01-001"): RefIssue.UNSAFE,
        ("a/obs-2026-11-02-001", "..\\x"): RefIssue.UNSAFE,
        ("a/obs-2026-11-02-001", "obs-1"): RefIssue.UNSAFE,
        ("a/obs-2026-11-02-001", "/etc/passwd"): RefIssue.UNSAFE,
    }
    for p in r.ref_problems:
        assert p.path == V + "obs-2026-11-02-001.md"
        assert p.field == "backlinks"


def test_shared_backlink_prefers_promoting_agent(tmp_path: Path) -> None:
    write_obs(tmp_path, "agents/a/memory/vault/obs-2026-09-01-001.md")
    write_obs(tmp_path, "agents/b/memory/vault/obs-2026-09-01-001.md")
    write_obs(
        tmp_path,
        "shared/observations/obs-2026-11-03-001.md",
        source="nobody",
        promoted_from="b",
        backlinks="[obs-2026-09-01-001]",
    )
    r = ADAPTER.scan(tmp_path)
    (m,) = [m for m in r.memories if m.id.startswith("shared/")]
    assert m.relations[0].resolved == "b/obs-2026-09-01-001"


def test_backlink_to_invalid_memory_is_dangling(tmp_path: Path) -> None:
    write_obs(tmp_path, V + "obs-2026-11-01-001.md", confidence="9")
    write_obs(tmp_path, V + "obs-2026-11-02-001.md", backlinks="[obs-2026-11-01-001]")
    r = ADAPTER.scan(tmp_path)
    assert [p.reason for p in r.ref_problems] == [RefIssue.DANGLING]


def _decay_of(tmp_path: Path, as_of: date, **fields: str) -> DecayInfo:
    write_obs(tmp_path, V + "obs-2026-11-01-001.md", fields=fields)
    return ADAPTER.decay(only(ADAPTER.scan(tmp_path)), as_of)


@pytest.mark.parametrize(
    ("days", "status"),
    [
        (0, "active"),
        (23, "active"),  # 23/30 < 0.8
        (24, "near_expiry"),  # exactly 0.8
        (30, "near_expiry"),  # age == N is not expired (strictly greater)
        (31, "expired"),
    ],
)
def test_linear_boundaries(tmp_path: Path, days: int, status: str) -> None:
    as_of = date.fromordinal(date(2026, 11, 1).toordinal() + days)
    info = _decay_of(tmp_path, as_of)
    assert info.status == status
    assert info.age_days == days
    assert info.linear_weight == round(max(0.0, 1 - days / 30), 4)
    assert info.expires_on == date(2026, 12, 2)
    assert (info.archive_reasons != ()) == (status == "expired")


def test_fourteen_day_near_expiry_boundary(tmp_path: Path) -> None:
    # 0.8 * 14 = 11.2: age 11 is active, 12 near expiry (no float surprises)
    assert _decay_of(tmp_path, date(2026, 11, 12), decay="linear-14d").status == "active"
    assert _decay_of(tmp_path, date(2026, 11, 13), decay="linear-14d").status == "near_expiry"
    assert _decay_of(tmp_path, date(2026, 11, 15), decay="linear-14d").status == "near_expiry"
    assert _decay_of(tmp_path, date(2026, 11, 16), decay="linear-14d").status == "expired"


def test_exponential(tmp_path: Path) -> None:
    info = _decay_of(tmp_path, date(2026, 11, 11), decay="exponential-30d")
    assert info.status == "active"
    assert info.strength == info.weight == pytest.approx(math.exp(-1.0))
    assert info.linear_weight is None
    assert info.lifespan_days == 30


def test_future_created_is_clamped(tmp_path: Path) -> None:
    info = _decay_of(tmp_path, date(2026, 10, 1))
    assert info.age_days == -31
    assert info.status == "active"
    assert info.weight == 1.0
    assert info.linear_weight == 1.0


def test_pinned_is_permanent_with_decay_left_as_written(tmp_path: Path) -> None:
    info = _decay_of(tmp_path, date(2027, 6, 1), pinned="true")
    assert info.status == "permanent"
    assert info.health == Health.STABLE
    assert info.weight == 1.0
    assert info.expires_on is None
    assert info.archive_reasons == ()
    m = only(ADAPTER.scan(tmp_path))
    assert m.pinned
    assert m.native["decay"] == "linear-30d"
    assert m.fields["pinned"] is True


def test_no_decay_field_is_permanent(tmp_path: Path) -> None:
    write_obs(tmp_path, V + "obs-2026-11-01-001.md", drop=("decay",))
    info = ADAPTER.decay(only(ADAPTER.scan(tmp_path)), date(2036, 1, 1))
    assert info.status == "permanent"
    assert info.weight == 1.0
    assert info.lifespan_days is None


def test_archived_beats_everything(tmp_path: Path) -> None:
    write_obs(tmp_path, "agents/a/memory/archive/obs-2026-11-01-001.md", pinned="true")
    write_obs(tmp_path, "agents/a/memory/archive/obs-2026-11-01-002.md", drop=("decay",))
    r = ADAPTER.scan(tmp_path)
    for m in r.memories:
        info = ADAPTER.decay(m, AS_OF)
        assert info.status == "archived"
        assert info.health == Health.ARCHIVED
        assert info.weight == 0.0


def test_helpers() -> None:
    spec = parse_decay_spec("linear-30d")
    assert spec is not None and (spec.kind, spec.days) == ("linear", 30)
    assert parse_decay_spec("exponential-7d") is not None
    for bad in ("linear-0d", "linear-30", "Linear-30d", "quadratic-3d", 30, None, "linear--3d"):
        assert parse_decay_spec(bad) is None
    assert backlink_name("obs-2026-01-02-003.md") == "obs-2026-01-02-003"
    assert backlink_name("obs-2026-01-02-003") == "obs-2026-01-02-003"
    for bad in ("../obs-2026-01-02-003", "obs-2026-01-02-003/x", "obs-2026-01-02", "x"):
        assert backlink_name(bad) is None


# --------------------------------------------------------------------------- fuzzing

FUZZ_SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
FUZZ_REL = V + "obs-2026-01-01-001.md"


def _scan_one(root: Path, data: bytes) -> None:
    path = root / FUZZ_REL
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    r = ADAPTER.scan(root)
    assert len(r.memories) + len(r.problems) == 1
    for m in r.memories:
        assert m.id == "a/obs-2026-01-01-001"
        info = ADAPTER.decay(m, AS_OF)
        assert 0.0 <= info.weight <= 1.0
    for p in r.problems:
        assert p.id == "a/obs-2026-01-01-001"
        assert p.path == FUZZ_REL
        assert "\n" not in p.detail


@FUZZ_SETTINGS
@given(data=st.binary(max_size=400))
def test_fuzz_arbitrary_bytes(tmp_path: Path, data: bytes) -> None:
    _scan_one(tmp_path, data)


@FUZZ_SETTINGS
@given(data=st.binary(max_size=300))
def test_fuzz_bytes_after_a_fence(tmp_path: Path, data: bytes) -> None:
    _scan_one(tmp_path, b"---\n" + data + b"\n---\nbody\n")


_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
    | st.dates()
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(string.ascii_letters, min_size=1, max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)
_keys = st.sampled_from(
    ["tags", "confidence", "created", "decay", "source", "backlinks", "verified", "pinned"]
) | st.text(max_size=10)


@FUZZ_SETTINGS
@given(mapping=st.dictionaries(_keys, _values, max_size=10), body=st.text(max_size=80))
def test_fuzz_yaml_mappings(tmp_path: Path, mapping: dict[str, Any], body: str) -> None:
    header = yaml.safe_dump(mapping, allow_unicode=True, sort_keys=False)
    _scan_one(tmp_path, f"---\n{header}---\n{body}".encode())


@FUZZ_SETTINGS
@given(
    tags=st.lists(st.text(max_size=8), max_size=3),
    confidence=st.floats(min_value=0, max_value=1),
    created=st.dates(min_value=date(2000, 1, 1), max_value=date(2030, 12, 31)),
    decay=st.none()
    | st.builds("{}-{}d".format, st.sampled_from(["linear", "exponential"]), st.integers(1, 400)),
    backlinks=st.lists(st.text(max_size=25), max_size=3),
)
def test_fuzz_valid_headers_load(
    tmp_path: Path,
    tags: list[str],
    confidence: float,
    created: date,
    decay: str | None,
    backlinks: list[str],
) -> None:
    mapping: dict[str, Any] = {
        "tags": tags,
        "confidence": confidence,
        "created": created,
        "source": "a",
        "backlinks": backlinks,
    }
    if decay is not None:
        mapping["decay"] = decay
    header = yaml.safe_dump(mapping, allow_unicode=True, sort_keys=False)
    path = tmp_path / FUZZ_REL
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{header}---\nbody\n", encoding="utf-8")
    r = ADAPTER.scan(tmp_path)
    m = only(r)
    assert m.created == created
    info = ADAPTER.decay(m, AS_OF)
    assert info.status in {"active", "near_expiry", "expired", "permanent"}
    # every backlink is either resolved, or flagged exactly once
    assert len(r.ref_problems) == sum(1 for rel in m.relations if rel.resolved is None)


def test_future_created_exponential_does_not_overflow(tmp_path: Path) -> None:
    write_obs(tmp_path, V + "obs-2026-11-01-001.md", created="2999-01-01", decay="exponential-1d")
    info = ADAPTER.decay(only(ADAPTER.scan(tmp_path)), AS_OF)
    assert info.status == "active"
    assert info.weight == 1.0


def test_lifespans_past_year_9999_do_not_overflow(tmp_path: Path) -> None:
    vault = tmp_path / "agents" / "a" / "memory" / "vault"
    vault.mkdir(parents=True)
    for n, (created, decay) in enumerate(
        [("9999-12-31", "linear-30d"), ("2026-11-01", "linear-99999999999999999999d")], 1
    ):
        (vault / f"obs-2026-11-01-00{n}.md").write_text(
            "---\ntags: [x]\nconfidence: 0.9\n"
            f"created: {created}\ndecay: {decay}\nsource: a\n---\nb\n",
            encoding="utf-8",
        )
    adapter = ProjectOceanAdapter()
    result = adapter.scan(tmp_path)
    for m in result.memories:
        info = adapter.decay(m, date(2026, 11, 22))
        assert info.expires_on is None or info.expires_on.year <= 9999
