"""Dream Cycle decay run and dream-log type distribution, on copies of the own test vault."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memlens.core.actions import Action
from memlens.core.decay import decay_of
from memlens.core.errors import ConflictError, RefusedError
from memlens.core.formats.dream_cycle.runs import decay_run, type_distribution
from memlens.core.model import Memory
from memlens.core.scan.vault import open_catalog
from memlens.core.write.txn import apply_plan
from memlens.core.write.undo import undo_last
from memlens.tui.cli.dream import dream

SPEC_KEYS = [
    "id",
    "original_date",
    "impact",
    "type",
    "ttl_days",
    "importance",
    "archived_reason",
    "full_text",
]


@pytest.fixture
def root(own_fixtures_copy: Path) -> Path:
    return own_fixtures_copy / "dream-cycle"


@pytest.fixture
def as_of(own_expected: dict[str, Any]) -> date:
    return date.fromisoformat(own_expected["as_of"])


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".memlens" not in p.relative_to(root).parts
    }


def sections(root: Path) -> list[Memory]:
    return [m for m in open_catalog(root).memories() if not m.archived]


def new_entries(root: Path, before: bytes) -> list[dict[str, Any]]:
    data = (root / "archive.jsonl").read_bytes()
    assert data.startswith(before)
    return [json.loads(x) for x in data[len(before) :].decode().splitlines()]


def test_decay_run_archives_exactly_the_expired_and_faded_sections(
    root: Path, as_of: date, own_expected: dict[str, Any]
) -> None:
    before = files(root)
    original = {m.title: m for m in sections(root)}
    plan, report = decay_run(root, as_of)
    assert plan.describe() == ["rewrite observations.md", "rewrite archive.jsonl"]
    archived_titles = {i.title for i in report.archived}

    # Every section expected.json describes, judged by its numbers.
    for row in own_expected["formats"]["dream-cycle"]["decay"]:
        due = (row["ttl_expired"] is True or row["current_importance"] < 3.0) and row[
            "ttl_days"
        ] is not None
        if row["status"] == "undated":
            due = False
        assert (row["title"] in archived_titles) == due, row["title"]
    # And every other section by the adapter's own rules (never ttl=never ones).
    for title, m in original.items():
        d = decay_of(m, as_of)
        due = bool(d.archive_reasons) and m.native["ttl"] is not None
        assert (title in archived_titles) == due, title
    assert not any(original[t].native["ttl"] is None for t in archived_titles)

    apply_plan(plan)
    entries = new_entries(root, before["archive.jsonl"])
    assert [e["section_id"] for e in entries] == [i.id for i in report.archived]
    ids = [e["id"] for e in entries]
    assert len(set(ids)) == len(ids)
    for e in entries:
        assert list(e)[:8] == SPEC_KEYS
        m = original[next(i.title for i in report.archived if i.id == e["section_id"])]
        d = decay_of(m, as_of)
        assert e["original_date"] == m.native["date"]
        assert e["id"] == f"OBS-{m.native['date'].replace('-', '')}-" + e["id"][-3:]
        assert e["type"] == m.native["declared_type"]
        assert e["ttl_days"] == m.native["ttl"]
        assert e["importance"] == d.current_importance
        assert e["archived_reason"] == "; ".join(d.archive_reasons)
        assert e["full_text"].startswith(f"## {m.title}\n<!-- dc:")
        assert e["full_text"].endswith(m.body)
        assert e["archived_on"] == as_of.isoformat()
    labels = " ".join(e["archived_reason"] for e in entries)
    assert "event TTL expired (14 days)" in labels and "importance below 3.0" in labels
    now = {m.title for m in sections(root)}
    assert now == set(original) - archived_titles


def test_write_back_records_dc_decayed_and_never_compounds(root: Path, as_of: date) -> None:
    original = {m.title: m for m in sections(root)}
    day1 = date(2026, 11, 12)
    apply_plan(decay_run(root, day1)[0])
    apply_plan(decay_run(root, as_of)[0])
    after = {m.title: m for m in sections(root)}
    checked = 0
    for title, m in after.items():
        old = original[title]
        assert m.body == old.body
        if not old.native["tagged"]:
            assert m.fields == old.fields
            continue
        # dc:date stays the first-recorded date; the value matches on-the-fly decay.
        assert m.fields["dc:date"] == old.fields["dc:date"]
        assert decay_of(m, as_of).current_importance == decay_of(old, as_of).current_importance
        if "dc:decayed" in m.fields:
            assert m.fields["dc:decayed"] == as_of.isoformat()
            assert float(m.fields["dc:importance"]) == decay_of(old, as_of).current_importance
            checked += 1
        else:
            assert m.fields == old.fields
    assert checked >= 5
    # Only the importance and dc:decayed tokens changed in those comments.
    m = after["Clinic X-ray unit service contract"]
    assert list(m.fields.items()) == [
        ("dc:type", "fact"),
        ("dc:importance", "3.2"),
        ("dc:ttl", "90"),
        ("dc:confidence", "0.95"),
        ("dc:source", "explicit"),
        ("dc:date", "2026-11-09"),
        ("dc:decayed", "2026-11-22"),
    ]


def test_second_run_changes_nothing(root: Path, as_of: date) -> None:
    apply_plan(decay_run(root, as_of)[0])
    state = files(root)
    plan, report = decay_run(root, as_of)
    assert plan.changes == [] and not report.changes_anything
    assert "nothing to do" in plan.summary
    assert files(root) == state


def test_undo_restores_every_byte(root: Path, as_of: date) -> None:
    before = files(root)
    apply_plan(decay_run(root, as_of)[0])
    assert files(root) != before
    undo_last(root)
    assert files(root) == before


def test_ttl_never_sections_are_kept(root: Path) -> None:
    obs = root / "observations.md"
    text = obs.read_bytes().replace(
        b"dc:type=rule dc:importance=9.5 dc:ttl=never",
        b"dc:type=fact dc:importance=2.5 dc:ttl=never",
    )
    obs.write_bytes(text)
    _plan, report = decay_run(root, date(2026, 11, 22))
    kept = {i.title: i for i in report.kept}
    assert "Never disclose the controlled-drug safe code" in kept
    assert "importance below 3.0" in kept["Never disclose the controlled-drug safe code"].reasons[0]
    assert "Never disclose the controlled-drug safe code" not in {i.title for i in report.archived}


def test_decay_run_preserves_crlf_bom_and_other_bytes(root: Path, as_of: date) -> None:
    obs = root / "observations.md"
    obs.write_bytes(obs.read_bytes().replace(b"\n", b"\r\n"))
    before = files(root)
    apply_plan(decay_run(root, as_of)[0])
    data = obs.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert b"\n" not in data.replace(b"\r\n", b"")
    # The invalid sections are never touched.
    for title in (
        b"## Dog sitter rate",
        b"## Swimming pool membership pause",
        b"## Claim for the dented van",
    ):
        start = before["observations.md"].index(title)
        end = before["observations.md"].index(b"\r\n## ", start + 1)
        assert before["observations.md"][start:end] in data
    undo_last(root)
    assert files(root) == before


def test_plan_refuses_when_the_file_changes_before_apply(root: Path, as_of: date) -> None:
    plan, _ = decay_run(root, as_of)
    obs = root / "observations.md"
    obs.write_bytes(obs.read_bytes() + b"\n## New one\nAdded by the agent.\n")
    state = files(root)
    with pytest.raises(ConflictError):
        apply_plan(plan)
    assert files(root) == state


def test_not_a_dream_cycle_vault(own_fixtures_copy: Path) -> None:
    with pytest.raises(RefusedError):
        decay_run(own_fixtures_copy / "observation-v1", date(2026, 11, 22))


def test_lead_decay_apply_path_archives_the_same_sections(root: Path, as_of: date) -> None:
    _plan, report = decay_run(root, as_of)
    original = {m.title for m in sections(root)}
    cat = open_catalog(root)
    for m in list(cat.memories()):
        if m.pinned or m.archived or m.native.get("ttl") is None:
            continue
        d = decay_of(m, as_of)
        if d.archive_reasons:
            Action("archive", m, {"reason": "; ".join(d.archive_reasons)}).apply()
    remaining = {m.title for m in sections(root)}
    assert remaining == set(original) - {i.title for i in report.archived}
    entries = [m for m in open_catalog(root).memories() if m.fields.get("section_id")]
    assert sorted(e.native["archived_reason"] for e in entries) == sorted(
        "; ".join(i.reasons) for i in report.archived
    )


# ---------------------------------------------------------------- type distribution


def test_type_distribution_counts(root: Path, as_of: date, own_expected: dict[str, Any]) -> None:
    dist = type_distribution(root, as_of)
    dc = own_expected["formats"]["dream-cycle"]
    breakdown = dc["valid_breakdown"]
    assert dist.sections == breakdown["observations.md sections"]
    assert dist.tagged == breakdown["observations.md tagged"]
    assert dist.untagged == breakdown["observations.md untagged"]
    assert dist.archived == breakdown["archive.jsonl entries"]
    assert dist.invalid == sum(1 for i in dc["invalid"] if i["file"] == "observations.md")
    assert sum(t.total for t in dist.types.values()) == dist.sections
    untagged: dict[str, int] = {}
    for row in dc["classification"]:
        if row["classified_type"] is not None:
            untagged[row["classified_type"]] = untagged.get(row["classified_type"], 0) + 1
    assert {t: r.untagged for t, r in dist.types.items() if r.untagged} == untagged
    assert sum(t.untagged for t in dist.types.values()) == breakdown["observations.md untagged"]
    assert dist.unknown_declared == {"decision": 1}
    per_type: dict[str, int] = {}
    for m in sections(root):
        if m.native["tagged"]:
            per_type[m.kind] = per_type.get(m.kind, 0) + 1
    assert {t: r.tagged for t, r in dist.types.items() if r.tagged} == per_type
    _plan, report = decay_run(root, as_of)
    assert dist.archive_candidates == len(report.archived)
    md = dist.to_markdown()
    assert "| event | 14 d |" in md and "`decision` ×1" in md


# ---------------------------------------------------------------- CLI


def test_cli_dry_run_writes_nothing_and_apply_is_undoable(root: Path) -> None:
    before = files(root)
    _plan, report = decay_run(root, date(2026, 11, 22))
    res = CliRunner().invoke(
        dream, ["decay", str(root), "--as-of", "2026-11-22", "--dry-run"], catch_exceptions=False
    )
    assert res.exit_code == 0, res.output
    assert "archive farrier-contact-for-the-riding-stable-" in res.stdout
    assert files(root) == before
    res = CliRunner().invoke(
        dream, ["decay", str(root), "--as-of", "2026-11-22", "--json"], catch_exceptions=False
    )
    data = json.loads(res.stdout)
    assert data[0]["applied"] is True and data[0]["vault"] == "."
    assert [a["id"] for a in data[0]["archived"]] == [i.id for i in report.archived]
    assert files(root) != before
    undo_last(root)
    assert files(root) == before


def test_cli_report_json_and_text(own_fixtures_copy: Path) -> None:
    res = CliRunner().invoke(
        dream, ["report", str(own_fixtures_copy), "--as-of", "2026-11-22", "--json"]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert [d["vault"] for d in data] == ["dream-cycle"]
    assert data[0]["sections"] == 39
    res = CliRunner().invoke(dream, ["report", str(own_fixtures_copy), "--as-of", "2026-11-22"])
    assert "### Type distribution — 2026-11-22" in res.stdout


def test_cli_without_dream_vault_is_a_usage_error(own_fixtures_copy: Path) -> None:
    res = CliRunner().invoke(dream, ["decay", str(own_fixtures_copy / "experience-records")])
    assert res.exit_code == 2
