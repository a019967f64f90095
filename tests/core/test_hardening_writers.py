"""Writers: plan_archive takes `as_of`; plans refuse to apply when a file they only read changed.

Audit #11: promote (project-ocean, observation-v1) and pin/archive/set
(experience-records) were computed from files they do not write; a change
to those files between plan and apply went unnoticed.  Their snapshots are
now in `Plan.reads`, which apply_plan checks before the first write.
"""

from __future__ import annotations

import inspect
import shutil
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from memlens.core.actions import Action
from memlens.core.errors import ConflictError
from memlens.core.formats.writers import writer_for
from memlens.core.model import Memory
from memlens.core.scan.vault import open_catalog
from memlens.core.write.journal import Plan, read_journal
from memlens.core.write.txn import apply_plan

AS_OF = date(2026, 11, 22)
FORMATS = (
    "cognitive-memory",
    "observation-v1",
    "project-ocean",
    "experience-records",
    "dream-cycle",
)
#: The formats with an own test vault (all five once every vault is written).
OWN = Path(__file__).resolve().parents[1] / "fixtures"
OWN_FORMATS = [f for f in FORMATS if (OWN / f).is_dir()]
DREAM_FIRST = "clinic-x-ray-unit-service-contract-310bdb"
EXP = "exp_2026-10-19T07:05:12Z_0828"
DEMO_OCEAN = Path(__file__).resolve().parents[2] / "core" / "demo_vaults" / "project-ocean"


def get(root: Path, memory_id: str) -> Memory:
    return open_catalog(root).get(memory_id)


def archivable(root: Path) -> Memory:
    """The vault's first live, unpinned memory (any format)."""
    return next(
        m for m in open_catalog(root).memories() if not (m.pinned or m.archived or m.tombstoned)
    )


def all_bytes(root: Path) -> dict[str, bytes]:
    """Every file of the vault (memlens's own .memlens/ excluded)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".memlens" not in p.relative_to(root).parts
    }


def touch_bytes(path: Path) -> None:
    """Change a file's bytes without making it invalid (a trailing newline)."""
    path.write_bytes(path.read_bytes() + b"\n")


def refused_and_untouched(plan: Plan, root: Path, change: Path) -> None:
    """Change `change` after planning: apply must refuse and write nothing."""
    touch_bytes(change)
    before = all_bytes(root)
    with pytest.raises(ConflictError):
        apply_plan(plan)
    assert all_bytes(root) == before
    assert read_journal(root) == []


# --------------------------------------------------------------------------- as_of


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_plan_archive_takes_as_of_keyword(fmt: str) -> None:
    params = inspect.signature(writer_for(fmt).plan_archive).parameters
    assert "as_of" in params
    assert params["as_of"].kind is inspect.Parameter.KEYWORD_ONLY
    assert params["as_of"].default is None


@pytest.mark.parametrize("fmt", [f for f in OWN_FORMATS if f != "dream-cycle"])
def test_as_of_does_not_change_a_non_dream_archive(own_fixtures_copy: Path, fmt: str) -> None:
    """Only Dream Cycle records a date on archive; the others ignore as_of."""
    root = own_fixtures_copy / fmt
    m = archivable(root)
    w = writer_for(fmt)
    plain = w.plan_archive(m, "decay")
    dated = w.plan_archive(m, "decay", as_of=date(2030, 1, 1))
    assert dated.summary == plain.summary
    assert [(c.kind, c.path, c.dst) for c in dated.changes] == [
        (c.kind, c.path, c.dst) for c in plain.changes
    ]
    if fmt != "experience-records":  # its WAL op carries the clock's timestamp
        assert [c.data for c in dated.changes] == [c.data for c in plain.changes]


def test_dream_cycle_archive_dates_the_entry_with_as_of(own_fixtures_copy: Path) -> None:
    root = own_fixtures_copy / "dream-cycle"
    m = get(root, DREAM_FIRST)
    plan = writer_for("dream-cycle").plan_archive(m, "decay", as_of=date(2026, 12, 1))
    archive = next(c for c in plan.changes if c.path.name == "archive.jsonl")
    assert archive.data is not None
    assert b'"archived_on": "2026-12-01"' in archive.data


# --------------------------------------------------------------------------- project-ocean promote


@pytest.fixture
def ocean(tmp_path: Path) -> Path:
    """A writable copy of the bundled project-ocean demo vault."""
    return Path(shutil.copytree(DEMO_OCEAN, tmp_path / "project-ocean"))


def ocean_source(root: Path) -> Memory:
    """An agent's live memory that has no copy in shared/ yet (promotable)."""
    return next(
        m
        for m in open_catalog(root).memories()
        if m.path.startswith("agents/")
        and not m.archived
        and not (root / "shared/observations" / Path(m.path).name).exists()
    )


def test_project_ocean_promote_records_what_it_read(ocean: Path) -> None:
    m = ocean_source(ocean)
    plan = Action("promote", m, {"as_of": AS_OF}).plan()
    read = {s.path for s in plan.reads}
    assert ocean / m.path in read
    assert ocean / "shared/observations/archive" / Path(m.path).name in read
    assert [c.kind for c in plan.changes] == ["create"]


def test_project_ocean_promote_refused_when_source_changed(ocean: Path) -> None:
    m = ocean_source(ocean)
    plan = Action("promote", m, {"as_of": AS_OF}).plan()
    refused_and_untouched(plan, ocean, ocean / m.path)
    assert not (ocean / "shared/observations" / Path(m.path).name).exists()


def test_project_ocean_promote_refused_when_an_archived_copy_appeared(ocean: Path) -> None:
    m = ocean_source(ocean)
    plan = Action("promote", m, {"as_of": AS_OF}).plan()
    archived = ocean / "shared/observations/archive" / Path(m.path).name
    archived.parent.mkdir(parents=True, exist_ok=True)
    archived.write_bytes((ocean / m.path).read_bytes())
    before = all_bytes(ocean)
    with pytest.raises(ConflictError):
        apply_plan(plan)
    assert all_bytes(ocean) == before
    assert not (ocean / "shared/observations" / Path(m.path).name).exists()


def test_project_ocean_promote_unchanged_source_still_applies(ocean: Path) -> None:
    m = ocean_source(ocean)
    source = (ocean / m.path).read_bytes()
    apply_plan(Action("promote", m, {"as_of": AS_OF}).plan())
    assert (ocean / "shared/observations" / Path(m.path).name).exists()
    assert (ocean / m.path).read_bytes() == source


# --------------------------------------------------------------------------- observation-v1 promote


def test_observation_v1_promote_refused_when_source_changed(own_fixtures_copy: Path) -> None:
    root = own_fixtures_copy / "observation-v1"
    m = get(root, "obs-001")
    plan = Action("promote", m, {"as_of": "2026-11-22"}).plan()
    assert root / m.path in {s.path for s in plan.reads}
    created = [c.path for c in plan.changes if c.kind == "create"]
    refused_and_untouched(plan, root, root / m.path)
    assert created and not any(p.exists() for p in created)


def test_observation_v1_promote_refused_when_a_cited_extra_changed(own_fixtures_copy: Path) -> None:
    root = own_fixtures_copy / "observation-v1"
    cat = open_catalog(root)
    m = cat.get("obs-001")
    other = next(
        x for x in cat.memories() if x.kind == "observation" and x.id != m.id and not x.archived
    )
    plan = Action("promote", m, {"as_of": "2026-11-22", "observations": [other.id]}).plan()
    assert {root / m.path, root / other.path} <= {s.path for s in plan.reads}
    refused_and_untouched(plan, root, root / other.path)


def test_observation_v1_promote_unchanged_sources_still_apply(own_fixtures_copy: Path) -> None:
    root = own_fixtures_copy / "observation-v1"
    m = get(root, "obs-001")
    plan = Action("promote", m, {"as_of": "2026-11-22"}).plan()
    apply_plan(plan)
    assert all(c.path.exists() for c in plan.changes)


# --------------------------------------------------------------------------- experience-records


@pytest.mark.parametrize(
    ("action", "params", "written", "changed"),
    [
        ("pin", {}, "views.jsonl", "experiences.jsonl"),
        ("pin", {}, "views.jsonl", "wal.jsonl"),
        ("set", {"changes": {"confidence": 0.5}}, "views.jsonl", "wal.jsonl"),
        ("set", {"changes": {"tags": ["x"]}}, "views.jsonl", "experiences.jsonl"),
        ("archive", {}, "wal.jsonl", "views.jsonl"),
        ("archive", {}, "wal.jsonl", "experiences.jsonl"),
    ],
)
def test_experience_records_refused_when_a_read_store_changed(
    own_fixtures_copy: Path, action: str, params: dict[str, Any], written: str, changed: str
) -> None:
    root = own_fixtures_copy / "experience-records"
    plan = Action(action, get(root, EXP), dict(params)).plan()
    assert [c.path.name for c in plan.changes] == [written]
    assert root / changed in {s.path for s in plan.reads}
    refused_and_untouched(plan, root, root / changed)


def test_experience_records_reads_never_include_the_written_store(own_fixtures_copy: Path) -> None:
    root = own_fixtures_copy / "experience-records"
    m = get(root, EXP)
    for action, params in (("pin", {}), ("archive", {}), ("promote", {})):
        plan = Action(action, m, params).plan()
        written = {c.path for c in plan.changes}
        read = {s.path for s in plan.reads}
        assert read and not (read & written)
        assert read | written == {
            root / n for n in ("experiences.jsonl", "views.jsonl", "wal.jsonl")
        }


def test_experience_records_plan_applies_when_nothing_changed(own_fixtures_copy: Path) -> None:
    root = own_fixtures_copy / "experience-records"
    apply_plan(Action("pin", get(root, EXP)).plan())
    assert get(root, EXP).pinned


# --------------------------------------------------------------------------- dream-cycle titles


def test_dream_cycle_restore_summary_names_the_heading_without_hashes(
    own_fixtures_copy: Path,
) -> None:
    root = own_fixtures_copy / "dream-cycle"
    entry = Action("archive", get(root, DREAM_FIRST)).apply()
    archived_id = next(i for i in entry["memory_ids"] if i.startswith("OBS-"))
    plan = Action("restore", get(root, archived_id)).plan()
    assert "section 'Clinic X-ray unit service contract'" in plan.summary
    assert "'## " not in plan.summary


def test_dream_cycle_archived_entry_title_has_no_heading_marker(own_fixtures_copy: Path) -> None:
    root = own_fixtures_copy / "dream-cycle"
    entry = Action("archive", get(root, DREAM_FIRST)).apply()
    archived_id = next(i for i in entry["memory_ids"] if i.startswith("OBS-"))
    assert get(root, archived_id).title == "Clinic X-ray unit service contract"
