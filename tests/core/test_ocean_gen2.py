"""Project Ocean's second generation on our vaults: reading, decay, graph, and the runs.

The vaults are tests/fixtures/.second-generation/ (a dot-folder, so the
suite's whole-folder scans keep one vault per format); their figures are in
its expected/figures.json, judged as of 2026-11-22.  Runs write to a copy
and are undone byte for byte.
"""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from memlens.core.actions import Action
from memlens.core.decay import archive_candidates, decay_of
from memlens.core.formats.project_ocean.references import reference_run
from memlens.core.formats.project_ocean.runs import promotion_candidates
from memlens.core.graph.relations import build_graph
from memlens.core.records import memory_record
from memlens.core.scan.vault import Catalog, open_catalog
from memlens.core.write.txn import apply_run
from memlens.core.write.undo import undo_last

GEN2 = Path(__file__).resolve().parents[1] / "fixtures" / ".second-generation"
AS_OF = date(2026, 11, 22)
FIGURES: dict[str, Any] = json.loads((GEN2 / "expected" / "figures.json").read_text())


def _bytes(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".memlens" not in p.relative_to(root).parts
    }


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    dest = tmp_path / "gen2"
    shutil.copytree(GEN2 / "project-ocean-gen2", dest)
    return dest


def _catalog(name: str) -> Catalog:
    return open_catalog(GEN2 / name)


@pytest.mark.parametrize("name", ["project-ocean-gen2", "project-ocean-mixed"])
def test_valid_and_invalid_files(name: str) -> None:
    want = FIGURES[name]
    catalog = _catalog(name)
    assert len(list(catalog.memories())) == want["valid_count"]
    got = {(p.path, p.reason.value, p.detail) for p in catalog.problems()}
    assert len(got) == len(want["invalid"])
    for item in want["invalid"]:
        assert any(
            path == item["path"] and reason == item["reason"] and item["detail_contains"] in detail
            for path, reason, detail in got
        ), item


def test_each_file_is_read_by_its_generation() -> None:
    want = FIGURES["project-ocean-mixed"]
    by_id = {m.id: m for m in _catalog("project-ocean-mixed").memories()}
    for mem_id, generation in want["generations"].items():
        m = by_id[mem_id]
        assert m.native["generation"] == generation
        # The first generation has a confidence and no importance; the second the reverse.
        assert (m.confidence is None) == (generation == 2)
        assert (m.importance is None) == (generation == 1)
        assert decay_of(m, AS_OF).status == want["statuses"][mem_id]


def test_decay_figures_and_list_records() -> None:
    catalog = _catalog("project-ocean-gen2")
    by_id = {m.id: m for m in catalog.memories()}
    for item in FIGURES["project-ocean-gen2"]["decay"]:
        rec = memory_record(by_id[item["id"]], AS_OF, GEN2 / "project-ocean-gen2")
        for key in ("status", "health", "age_days", "effective_max_age_days", "freshness"):
            assert rec[key] == item[key], (item["id"], key)
        assert rec["current_importance"] == item["current_importance"]
        if "new_max_age" in item:
            assert rec["new_max_age"] == item["new_max_age"]
        # The contract's fields stay; the second generation's numbers are added.
        assert rec["confidence"] is None and rec["generation"] == 2
        assert {"refs", "ref_by", "verified", "max_age", "importance"} <= rec.keys()
    statuses: dict[str, int] = {}
    for m in catalog.memories():
        key = decay_of(m, AS_OF).status
        key = f"shared_{key}" if m.native.get("shared") else key
        statuses[key] = statuses.get(key, 0) + 1
    assert statuses == FIGURES["project-ocean-gen2"]["status_counts"]


@pytest.mark.parametrize("name", ["project-ocean-gen2", "project-ocean-mixed"])
def test_graph_edges_and_flagged_references(name: str) -> None:
    catalog = _catalog(name)
    graph = build_graph(catalog)
    edges = {(graph.nodes[e.source].id, graph.nodes[e.target].id, e.type) for e in graph.edges()}
    for e in FIGURES[name]["edges"]:
        assert (e["source"], e["target"], e["type"]) in edges, e
    got = {(p.id, p.field, p.ref, p.reason.value) for p in catalog.ref_problems()}
    want = {
        (r["id"], r["field"], r["ref"], r["issue"]) for r in FIGURES[name].get("references", [])
    }
    assert got == want


def _decay_run(root: Path, as_of: date) -> tuple[dict[str, Any] | None, list[tuple[str, str]]]:
    """What `memlens decay --apply` runs: the writebacks, then the archives, one transaction."""
    catalog = open_catalog(root)
    steps = [
        (w.memory.id, Action("set", w.memory, {"changes": w.changes}).plan)
        for v in catalog.vaults
        for w in v.adapter.decay_writebacks(v.memories, as_of)
    ]
    steps += [
        (m.id, Action("archive", m, {"reason": "; ".join(r), "as_of": as_of.isoformat()}).plan)
        for m, r in archive_candidates(catalog, as_of)
    ]
    return apply_run(root, "decay", steps)


def test_decay_run_does_not_compound_and_undoes(vault: Path) -> None:
    before = _bytes(vault)
    entry, refused = _decay_run(vault, AS_OF)
    assert entry is not None and refused == []
    after = _bytes(vault)
    # The second run on the same as_of, and on the next day, changes nothing.
    assert _decay_run(vault, AS_OF) == (None, [])
    assert _decay_run(vault, date(2026, 11, 23)) == (None, [])
    assert _bytes(vault) == after
    captain = (vault / "agents/captain/memory/vault/obs-2026-10-01-001.md").read_text()
    assert "importance: 0.65\n" in captain and "neglect_penalty: 0.2\n" in captain
    # The other lines are as written, in their order.
    assert captain.startswith(
        "---\ntags: [strategy, payout]\nimportance: 0.65\ncreated: 2026-10-01\n"
    )
    shield = (vault / "agents/shield/memory/vault/obs-2026-10-13-001.md").read_text()
    assert "max_age: 45d\n" in shield
    assert (vault / "agents/scout/memory/archive/obs-2026-09-01-001.md").read_bytes() == before[
        "agents/scout/memory/vault/obs-2026-09-01-001.md"
    ]  # moved byte for byte
    undo_last(vault)
    assert _bytes(vault) == before


def test_decay_run_later_takes_only_the_next_block(vault: Path) -> None:
    _decay_run(vault, AS_OF)
    # captain/obs-2026-10-01-001: 0.85 written down to 0.65 (0.2) on 2026-11-22, age 52.
    # Age 56 (2026-11-26): (56 − 14) // 14 = 3 blocks = 0.3 → 0.1 more: 0.55, not 0.35.
    _decay_run(vault, date(2026, 11, 26))
    text = (vault / "agents/captain/memory/vault/obs-2026-10-01-001.md").read_text()
    assert "importance: 0.55\n" in text and "neglect_penalty: 0.3\n" in text


def test_promote_second_generation(vault: Path) -> None:
    before = _bytes(vault)
    cands, skipped = promotion_candidates(open_catalog(vault))
    assert [m.id for m in cands] == [
        "captain/obs-2026-10-01-001",  # 0.85 >= 0.8
        "hawk/obs-2026-11-20-001",  # 0.92
        "shield/obs-2026-11-12-001",  # verified and 0.65 >= 0.6
    ]
    why = dict((m.id, w) for m, w in skipped)
    assert why["forge/obs-2026-11-15-001"].startswith("importance 0.6 below 0.8")
    steps = [(m.id, Action("promote", m, {"as_of": AS_OF.isoformat()}).plan) for m in cands]
    entry, refused = apply_run(vault, "promote", steps)
    assert entry is not None and refused == []
    copy = (vault / "shared/observations/captain-obs-2026-10-01-001.md").read_text()
    source = (vault / "agents/captain/memory/vault/obs-2026-10-01-001.md").read_text()
    assert copy.endswith(
        "promoted_from: captain\npromoted_at: 2026-11-22\n---\n" + source.split("---\n", 2)[2]
    )
    assert "promoted: true\n" in source and "promoted: true" not in copy
    # A second run finds them promoted (promoted: true) and copies nothing.
    again, _ = promotion_candidates(open_catalog(vault))
    assert again == []
    undo_last(vault)
    assert _bytes(vault) == before


def test_references_run_is_idempotent_and_undoes(vault: Path) -> None:
    before = _bytes(vault)
    (run,) = reference_run(open_catalog(vault))
    _vault, updates, skipped = run
    assert skipped == []
    got = {u.memory.id: (u.refs, u.importance) for u in updates}
    assert got == {
        "captain/obs-2026-11-01-001": (3, 0.95),  # 3 cross-agent: 0.5 + 3 × 0.15
        "hawk/obs-2026-11-07-002": (1, 0.4),  # same agent: 0.3 + 0.1
        "hawk/obs-2026-11-20-001": (1, 1.0),  # cross-agent: 0.92 + 0.15 capped at 1.0
    }
    steps = [(u.memory.id, Action("set", u.memory, {"changes": u.changes}).plan) for u in updates]
    apply_run(vault, "ref", steps)
    text = (vault / "agents/captain/memory/vault/obs-2026-11-01-001.md").read_text()
    assert "refs: 3\n" in text and "importance: 0.95\n" in text
    assert (
        "ref_by: [shield/obs-2026-11-05-001, hawk/obs-2026-11-07-001, forge/obs-2026-11-03-001]"
        in text
    )
    ((_v, updates, _s),) = reference_run(open_catalog(vault))
    assert updates == []
    undo_last(vault)
    assert _bytes(vault) == before
