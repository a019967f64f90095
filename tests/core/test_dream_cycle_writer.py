"""Dream Cycle writer: pin, unpin, set, edit body, promote, archive, restore on fixture copies."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from memlens.core.errors import ConflictError, RefusedError, UnsafePathError
from memlens.core.formats.dream_cycle.write_fields import edit_inner
from memlens.core.formats.dream_cycle.writer import WRITER, DreamCycleWriter
from memlens.core.model import Memory
from memlens.core.scan.vault import open_catalog
from memlens.core.text.yamledit import REMOVE
from memlens.core.write.actions import Action, writer_for
from memlens.core.write.journal import apply_plan, undo_last

TODAY = date(2026, 11, 22)


@pytest.fixture
def root(own_fixtures_copy: Path) -> Path:
    return own_fixtures_copy / "dream-cycle"


@pytest.fixture
def writer() -> DreamCycleWriter:
    return DreamCycleWriter(clock=lambda: TODAY)


@pytest.fixture(autouse=True)
def fixed_clock() -> Iterator[None]:
    """The registered writer (used through Action) reads this clock."""
    old = WRITER.clock
    WRITER.clock = lambda: TODAY
    yield
    WRITER.clock = old


def scan(root: Path) -> dict[str, Memory]:
    """Valid memories by title (sections) and by id (archive entries)."""
    out: dict[str, Memory] = {}
    for m in open_catalog(root).memories():
        out[m.id] = m
        if not m.archived:
            out[m.title] = m
    return out


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".memlens" not in p.relative_to(root).parts
    }


def changed_lines(old: bytes, new: bytes) -> tuple[list[bytes], list[bytes]]:
    """Lines only in old, lines only in new (line endings kept)."""
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    return [x for x in a if x not in b], [x for x in b if x not in a]


def apply(plan: Any) -> None:
    apply_plan(plan)


# ---------------------------------------------------------------- pin / unpin


def test_pin_rewrites_only_the_comment_line_and_unpin_restores_it(
    root: Path, writer: DreamCycleWriter
) -> None:
    before = files(root)
    m = scan(root)["Clinic X-ray unit service contract"]
    plan = writer.plan_pin(m)
    assert "dc:ttl=never" in plan.summary and plan.memory_ids == [m.id]
    assert [c.path.name for c in plan.changes] == ["observations.md"]
    apply(plan)
    old, new = changed_lines(before["observations.md"], (root / "observations.md").read_bytes())
    assert old == [
        b"<!-- dc:type=fact dc:importance=4.5 dc:ttl=90 dc:confidence=0.95 dc:source=explicit"
        b" dc:date=2026-11-09 -->\n"
    ]
    assert new == [
        b"<!-- dc:type=fact dc:importance=4.5 dc:ttl=never dc:confidence=0.95 dc:source=explicit"
        b" dc:date=2026-11-09 dc:ttl_before_pin=90 -->\n"
    ]
    pinned = scan(root)["Clinic X-ray unit service contract"]
    assert pinned.pinned and pinned.id == m.id
    apply(writer.plan_unpin(pinned))
    assert files(root) == before  # dc:ttl=90 back, marker gone, byte for byte
    assert not scan(root)["Clinic X-ray unit service contract"].pinned


def test_pin_untagged_writes_a_valid_comment_and_unpin_removes_it(
    root: Path, writer: DreamCycleWriter
) -> None:
    before = files(root)
    m = scan(root)["Home printer model"]
    assert not m.native["tagged"]
    plan = writer.plan_pin(m)
    assert "dc:type=fact dc:importance=5.0" in plan.summary and "2026-11-22" in plan.summary
    apply(plan)
    text = (root / "observations.md").read_bytes()
    old, new = changed_lines(before["observations.md"], text)
    assert old == []
    assert new == [
        b"<!-- dc:type=fact dc:importance=5.0 dc:ttl=never dc:date=2026-11-22"
        b" dc:ttl_before_pin=untagged -->\n"
    ]
    assert b"## Home printer model\n<!-- dc:type=fact" in text
    after = scan(root)["Home printer model"]
    assert after.pinned and after.native["tagged"] and after.body == m.body
    assert after.importance == 5.0 and after.kind == "fact"
    apply(writer.plan_unpin(after))
    assert files(root) == before


def test_unpin_without_marker_drops_the_explicit_never(
    root: Path, writer: DreamCycleWriter
) -> None:
    m = scan(root)["Never disclose the controlled-drug safe code"]
    assert m.pinned
    plan = writer.plan_unpin(m)
    assert "no earlier dc:ttl was recorded" in plan.summary
    apply(plan)
    after = scan(root)["Never disclose the controlled-drug safe code"]
    assert not after.pinned
    assert "dc:ttl" not in after.fields
    assert after.native["ttl"] is None  # a rule still never expires by type


def test_pin_refuses_already_pinned(root: Path, writer: DreamCycleWriter) -> None:
    m = scan(root)["Confirm before paying any supplier invoice"]
    with pytest.raises(RefusedError, match="already pinned"):
        writer.plan_pin(m)
    with pytest.raises(RefusedError, match="already pinned"):
        Action("pin", m).plan()


def test_undo_restores_every_byte_after_each_action(root: Path) -> None:
    before = files(root)
    m = scan(root)
    actions = [
        Action("pin", m["Train seat preference"]),
        Action("set", m["Audiobook narrator preference"], {"changes": {"importance": 5.5}}),
        Action(
            "edit_body", m["Practice software upgrade"], {"body": "Done; the old laptop is wiped."}
        ),
        Action("promote", m["Morning clinic huddle"], {"as_of": "2026-11-22"}),
        Action("archive", m["Farrier contact for the riding stable"]),
    ]
    for action in actions:
        state = files(root)
        action.apply()
        assert files(root) != state
        undo_last(root)
        assert files(root) == state == before


# ---------------------------------------------------------------- set


def test_set_rewrites_only_the_comment_and_keeps_unknown_fields(
    root: Path, writer: DreamCycleWriter
) -> None:
    before = (root / "observations.md").read_bytes()
    m = scan(root)["Audiobook narrator preference"]
    apply(writer.plan_set(m, {"importance": 6.5, "dc:source": "explicit", "note": "x"}))
    old, new = changed_lines(before, (root / "observations.md").read_bytes())
    assert len(old) == len(new) == 1
    assert new[0] == (
        b"<!-- dc:type=preference dc:importance=6.5 dc:ttl=180 dc:confidence=0.7"
        b" dc:source=explicit dc:date=2026-09-20 dc:origin=watcher-2 dc:session=sig-0913"
        b" dc:note=x -->\n"
    )
    after = scan(root)["Audiobook narrator preference"]
    assert list(after.fields) == [*m.fields, "dc:note"]
    assert after.extra == {"dc:origin": "watcher-2", "dc:session": "sig-0913", "dc:note": "x"}
    assert after.body == m.body and after.importance == 6.5


def test_set_removes_an_optional_field(root: Path, writer: DreamCycleWriter) -> None:
    m = scan(root)["Audiobook narrator preference"]
    apply(writer.plan_set(m, {"origin": REMOVE, "confidence": None}))
    after = scan(root)["Audiobook narrator preference"]
    assert list(after.fields) == [
        "dc:type",
        "dc:importance",
        "dc:ttl",
        "dc:source",
        "dc:date",
        "dc:session",
    ]


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"importance": 11}, "importance"),
        ({"importance": "high"}, "importance"),
        ({"confidence": 1.7}, "confidence"),
        ({"date": "yesterday"}, "date"),
        ({"ttl": -3}, "ttl"),
        ({"ttl": "forever"}, "ttl"),
        ({"type": None}, "type"),
        ({"date": REMOVE}, "date"),
        ({"source": "two words"}, "source"),
        ({"source": "x-->y"}, "source"),
        ({"title": "New"}, "title"),
        ({"importance": True}, "importance"),
        ({"tags": ["a", "b"]}, "tags"),
    ],
)
def test_set_refusals_name_the_field(
    root: Path, writer: DreamCycleWriter, changes: dict[str, Any], field: str
) -> None:
    before = files(root)
    m = scan(root)["Boat insurance renewal"]
    with pytest.raises(RefusedError, match=rf"^{field}:"):
        writer.plan_set(m, changes)
    assert files(root) == before


def test_set_on_untagged_writes_a_comment_with_defaults(
    root: Path, writer: DreamCycleWriter
) -> None:
    m = scan(root)["Swimming distance for 2026"]
    plan = writer.plan_set(m, {"type": "goal", "importance": 6})
    assert "dc:date=2026-11-22" in plan.summary
    apply(plan)
    after = scan(root)["Swimming distance for 2026"]
    assert after.fields == {"dc:type": "goal", "dc:importance": "6", "dc:date": "2026-11-22"}
    assert after.kind == "goal" and after.body == m.body


def test_set_nothing_to_change_is_refused(root: Path, writer: DreamCycleWriter) -> None:
    m = scan(root)["Boat insurance renewal"]
    with pytest.raises(RefusedError, match="nothing to change"):
        writer.plan_set(m, {"importance": "6.0"})


def test_edit_inner_keeps_spacing() -> None:
    inner = "  dc:type=fact   dc:importance=4.5 dc:x=1  "
    assert (
        edit_inner(inner, {"dc:importance": "3.0"}) == "  dc:type=fact   dc:importance=3.0 dc:x=1  "
    )
    assert edit_inner(inner, {"dc:type": None}) == "  dc:importance=4.5 dc:x=1  "
    assert edit_inner(inner, {"dc:x": None}) == "  dc:type=fact   dc:importance=4.5  "
    assert (
        edit_inner(inner, {"dc:new": "v"}) == "  dc:type=fact   dc:importance=4.5 dc:x=1 dc:new=v  "
    )


# ---------------------------------------------------------------- edit body


def test_edit_body_replaces_only_the_body(root: Path, writer: DreamCycleWriter) -> None:
    before = (root / "observations.md").read_bytes()
    m = scan(root)["Mila's asthma action plan"]
    body = "Mila has exercise-induced asthma.\n\n### Details\n\nThe reliever is in her bag."
    apply(writer.plan_edit_body(m, body))
    text = (root / "observations.md").read_bytes()
    after = scan(root)["Mila's asthma action plan"]
    assert after.body == body and after.fields == m.fields and after.id == m.id
    head = "## Mila's asthma action plan\n<!-- dc:type=rule dc:importance=9.8 dc:ttl=never"
    assert head.encode() in text
    # Everything before and after the section is untouched.
    start = before.index(b"## Mila's asthma")
    nxt = before.index(b"## Home printer model")
    assert text.startswith(before[:start])
    assert text.endswith(before[nxt - 1 :])


def test_edit_body_of_an_empty_section_keeps_the_separator(
    root: Path, writer: DreamCycleWriter
) -> None:
    m = scan(root)["Luka — swimming gala"]
    assert m.body == ""
    apply(writer.plan_edit_body(m, "He swam the 50 m backstroke in 41 s.\r\n"))
    text = (root / "observations.md").read_text(encoding="utf-8-sig")
    assert (
        "dc:date=2026-11-21 -->\nHe swam the 50 m backstroke in 41 s.\n\n"
        "## Mila's asthma action plan\n"
    ) in text
    assert scan(root)["Luka — swimming gala"].body == "He swam the 50 m backstroke in 41 s."


def test_edit_body_refuses_a_heading_line(root: Path, writer: DreamCycleWriter) -> None:
    m = scan(root)["Practice software upgrade"]
    with pytest.raises(RefusedError, match=r"^body: line 2 starts with '## '"):
        writer.plan_edit_body(m, "Done.\n## Sneaky new section")


def test_edit_body_of_untagged_refuses_a_leading_comment(
    root: Path, writer: DreamCycleWriter
) -> None:
    m = scan(root)["Practice software upgrade"]
    with pytest.raises(RefusedError, match=r"^body:"):
        writer.plan_edit_body(m, "<!-- dc:type=rule dc:importance=9 dc:date=2026-01-01 -->\nx")


# ---------------------------------------------------------------- promote


def test_promote_untagged_tags_with_the_classification(
    root: Path, writer: DreamCycleWriter
) -> None:
    m = scan(root)["Guest Wi-Fi stays separate"]
    assert m.native["classified_type"] == "rule"
    plan = writer.plan_promote(m, {"as_of": "2026-11-20"})
    apply(plan)
    after = scan(root)["Guest Wi-Fi stays separate"]
    assert after.fields == {"dc:type": "rule", "dc:importance": "5.0", "dc:date": "2026-11-20"}
    assert after.kind == "rule" and after.body == m.body


def test_promote_untagged_with_a_chosen_type(root: Path, writer: DreamCycleWriter) -> None:
    m = scan(root)["Daily Summary — 2026-11-18"]
    apply(writer.plan_promote(m, {"type": "habit", "importance": 6.5}))
    after = scan(root)["Daily Summary — 2026-11-18"]
    assert after.fields == {"dc:type": "habit", "dc:importance": "6.5", "dc:date": "2026-11-22"}


def test_promote_tagged_only_raises_the_ttl(root: Path, writer: DreamCycleWriter) -> None:
    m = scan(root)["Train seat preference"]
    with pytest.raises(RefusedError, match=r"^type: event"):
        writer.plan_promote(m, {"type": "event"})
    with pytest.raises(RefusedError, match="already tagged"):
        writer.plan_promote(m, {})
    with pytest.raises(RefusedError, match=r"^type:"):
        writer.plan_promote(m, {"type": "../rule"})
    apply(writer.plan_promote(m, {"type": "goal", "as_of": "2026-11-22"}))
    after = scan(root)["Train seat preference"]
    assert after.fields["dc:type"] == "goal" and after.fields["dc:ttl"] == "365"
    assert after.fields["dc:date"] == m.fields["dc:date"]


def test_promote_importance_counts_from_the_promote_date(
    root: Path, writer: DreamCycleWriter
) -> None:
    m = scan(root)["Clinic flooring quotes"]  # 5.5, context, 2026-11-04 -> 3.7 now
    with pytest.raises(RefusedError, match=r"^importance: 3\.0 is below"):
        writer.plan_promote(m, {"importance": 3.0, "as_of": "2026-11-22"})
    apply(writer.plan_promote(m, {"importance": 7.0, "as_of": "2026-11-22"}))
    after = scan(root)["Clinic flooring quotes"]
    assert after.fields["dc:importance"] == "7.0"
    assert after.fields["dc:decayed"] == "2026-11-22"
    assert after.fields["dc:date"] == "2026-11-04"
    from memlens.core.decay import decay_of

    assert decay_of(after, date(2026, 11, 22)).current_importance == 7.0
    assert decay_of(after, date(2026, 11, 27)).current_importance == 6.5


# ---------------------------------------------------------------- archive / restore

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


def test_archive_moves_the_section_into_archive_jsonl(root: Path, writer: DreamCycleWriter) -> None:
    before = files(root)
    m = scan(root)["Farrier contact for the riding stable"]
    plan = writer.plan_archive(m)
    assert plan.describe() == ["rewrite observations.md", "rewrite archive.jsonl"]
    apply(plan)
    obs = (root / "observations.md").read_bytes()
    section = (
        b"## Farrier contact for the riding stable\n"
        b"<!-- dc:type=fact dc:importance=3.0 dc:ttl=90 dc:confidence=0.9 dc:source=explicit"
        b" dc:date=2026-08-11 -->\n"
        b"Goran Petek shoes the stable's horses on alternate Tuesdays. Mobile: +385 91 555 0187."
        b" He wants two days' notice for emergency visits.\n\n"
    )
    assert obs == before["observations.md"].replace(section, b"")
    arc = (root / "archive.jsonl").read_bytes()
    assert arc.startswith(before["archive.jsonl"])
    entry = json.loads(arc[len(before["archive.jsonl"]) :])
    assert list(entry)[:8] == SPEC_KEYS
    assert entry["id"] == "OBS-20260811-001"
    assert entry["original_date"] == "2026-08-11"
    assert entry["type"] == "fact" and entry["ttl_days"] == 90
    assert entry["importance"] == 0.0  # 3.0 - 0.1 x 103 days, clamped
    assert entry["impact"] == "low"
    assert entry["archived_reason"] == "manual"
    assert entry["full_text"] == section.decode().rstrip("\n")
    assert (
        entry["section_id"] == m.id
        and entry["after_section"] == scan(root)["Clinic X-ray unit service contract"].id
    )
    now = scan(root)
    assert m.id not in now
    assert now["OBS-20260811-001"].archived


def test_archive_then_restore_rebuilds_the_file_byte_for_byte(
    root: Path, writer: DreamCycleWriter
) -> None:
    before = files(root)
    m = scan(root)["Clinic flooring quotes"]
    archived_before = {k for k, v in scan(root).items() if v.archived}
    apply(writer.plan_archive(m, "context TTL expired (30 days)"))
    entry_id = "OBS-20261104-001"
    entry = scan(root)[entry_id]
    assert entry.native["archived_reason"] == "context TTL expired (30 days)"
    plan = writer.plan_restore(entry)
    assert "where it was" in plan.summary
    apply(plan)
    assert (root / "observations.md").read_bytes() == before["observations.md"]
    arc = (root / "archive.jsonl").read_bytes()
    lines = arc[len(before["archive.jsonl"]) :].decode().splitlines()
    assert len(lines) == 2  # the entry stays; a marker follows it
    assert json.loads(lines[0])["id"] == entry_id
    marker = json.loads(lines[1])
    assert marker == {
        "id": entry_id,
        "restored": True,
        "restored_on": "2026-11-22",
        "section_id": m.id,
    }
    now = scan(root)
    assert {k for k, v in now.items() if v.archived} == archived_before
    assert now[m.id].fields == m.fields and now[m.id].body == m.body


def test_restore_of_the_last_and_first_sections(root: Path, writer: DreamCycleWriter) -> None:
    before = files(root)["observations.md"]
    for title in ("Vaccination open day", "Clinic X-ray unit service contract"):
        m = scan(root)[title]
        apply(writer.plan_archive(m))
        entry = next(
            v for v in scan(root).values() if v.archived and v.fields.get("section_id") == m.id
        )
        apply(writer.plan_restore(entry))
        assert (root / "observations.md").read_bytes() == before


def test_restore_an_entry_written_by_another_tool(root: Path, writer: DreamCycleWriter) -> None:
    before = files(root)
    entry = scan(root)["OBS-20261024-002"]
    plan = writer.plan_restore(entry)
    assert "at the end" in plan.summary
    apply(plan)
    obs = (root / "observations.md").read_bytes()
    assert obs.startswith(before["observations.md"])
    added = obs[len(before["observations.md"]) :].decode()
    assert added == (
        "\n## Mila's judo grading moved to the small hall because of the roof repair.\n"
        "<!-- dc:type=event dc:importance=0.0 dc:ttl=14 dc:date=2026-10-24"
        " dc:decayed=2026-11-22 -->\n"
        "Mila's judo grading moved to the small hall because of the roof repair.\n"
    )
    now = scan(root)
    assert "OBS-20261024-002" not in now
    back = now["Mila's judo grading moved to the small hall because of the roof repair."]
    assert back.kind == "event" and back.importance == 0.0
    undo_last(root)
    assert files(root) == before


def test_restore_from_archived_observations_md(root: Path, writer: DreamCycleWriter) -> None:
    md = (
        "# Archived observations\n\n"
        "## Old Wi-Fi password rotation\n"
        "<!-- dc:type=fact dc:importance=2.0 dc:ttl=90 dc:date=2026-01-10 -->\n"
        "Rotated every quarter.\n\n"
        "## Auto-archived by decay (2026-06-01)\n"
        "<!-- dc:type=event dc:importance=1.0 dc:ttl=14 dc:date=2026-05-01 -->\n"
        "Plumber visit for the kitchen sink.\n"
    )
    (root / "archived-observations.md").write_text(md, encoding="utf-8")
    before = files(root)
    cat = scan(root)
    assert "Old Wi-Fi password rotation" not in cat  # archived ones are keyed by id only
    archived = [m for m in cat.values() if m.archived and m.path == "archived-observations.md"]
    assert len({m.id for m in archived}) == 2
    first = next(m for m in archived if m.title == "Old Wi-Fi password rotation")
    apply(writer.plan_restore(first))
    back = scan(root)["Old Wi-Fi password rotation"]
    assert not back.archived and back.importance == 2.0
    md_now = (root / "archived-observations.md").read_text(encoding="utf-8")
    assert "Old Wi-Fi" not in md_now and "Plumber visit" in md_now
    auto = next(m for m in scan(root).values() if m.archived and "Plumber" in m.body)
    apply(writer.plan_restore(auto))
    restored = scan(root)["Plumber visit for the kitchen sink."]
    assert restored.fields["dc:decayed"] == "2026-06-01"
    assert restored.fields["dc:date"] == "2026-05-01"
    undo_last(root)
    undo_last(root)
    assert files(root) == before


def test_restore_marker_rules_in_the_adapter(root: Path) -> None:
    arc = root / "archive.jsonl"
    text = arc.read_text(encoding="utf-8")
    again = {
        "id": "OBS-20261024-002",
        "original_date": "2026-10-20",
        "archived_reason": "archived again later",
        "full_text": "Mila's judo grading moved to the small hall because of the roof repair.",
    }
    marker = {"id": "OBS-20261024-002", "restored": True}
    arc.write_text(text + json.dumps(marker) + "\n" + json.dumps(again) + "\n", encoding="utf-8")
    cat = open_catalog(root)
    hits = [m for m in cat.memories() if m.id == "OBS-20261024-002"]
    assert len(hits) == 1 and hits[0].line == 10  # only the entry after the marker
    assert not [p for p in cat.problems() if p.id == "OBS-20261024-002"]


def test_archive_ids_are_unique_per_day(root: Path, writer: DreamCycleWriter) -> None:
    a = scan(root)["Clinic flooring quotes"]  # dc:date 2026-11-04
    b = scan(root)["Moved the clinic to electronic prescriptions"]  # also 2026-11-04
    apply(writer.plan_archive(a))
    apply(writer.plan_archive(b))
    now = scan(root)
    assert now["OBS-20261104-001"].body.startswith("## Clinic flooring quotes")
    assert now["OBS-20261104-002"].body.startswith("## Moved the clinic to electronic")


def test_archive_creates_archive_jsonl_when_absent(root: Path, writer: DreamCycleWriter) -> None:
    (root / "archive.jsonl").unlink()
    before = files(root)
    m = scan(root)["Home printer model"]
    plan = writer.plan_archive(m)
    assert plan.describe() == ["rewrite observations.md", "create archive.jsonl"]
    apply(plan)
    entry = json.loads((root / "archive.jsonl").read_text())
    assert entry["type"] == "fact" and entry["ttl_days"] == 90 and entry["importance"] == 5.0
    assert entry["original_date"] == "2026-11-22"  # undated: the archive date
    undo_last(root)
    assert files(root) == before


# ---------------------------------------------------------------- stale positions, bulk


def test_actions_locate_sections_by_id_after_other_edits(root: Path) -> None:
    cat = scan(root)  # one scan; every later action uses these (stale) objects
    targets = [
        "Farrier contact for the riding stable",
        "Boat insurance renewal",
        "Burst pipe under the clinic sink",
    ]
    for title in targets:
        Action("archive", cat[title], {"reason": "importance below 3.0"}).apply()
    Action("pin", cat["Weekly stock check at the clinic"]).apply()
    now = scan(root)
    for title in targets:
        assert title not in now
    assert now["Weekly stock check at the clinic"].pinned
    reasons = [m.native["archived_reason"] for m in now.values() if m.archived]
    assert reasons.count("importance below 3.0") == 3
    for _ in range(4):
        undo_last(root)
    assert scan(root).keys() == cat.keys()


def test_registered_writer_is_this_one() -> None:
    assert writer_for("dream-cycle") is WRITER


# ---------------------------------------------------------------- conflicts


def test_external_rewrite_after_scan_is_a_conflict(root: Path, writer: DreamCycleWriter) -> None:
    m = scan(root)["Train seat preference"]
    obs = root / "observations.md"
    changed = obs.read_bytes().replace(b"Window seat", b"Aisle seat")
    obs.write_bytes(changed)
    with pytest.raises(ConflictError, match="changed on disk"):
        writer.plan_pin(m)
    assert obs.read_bytes() == changed


def test_edit_to_another_section_is_not_a_conflict(root: Path, writer: DreamCycleWriter) -> None:
    m = scan(root)["Train seat preference"]
    obs = root / "observations.md"
    obs.write_bytes(obs.read_bytes().replace(b"with the door open.", b"with the door open!"))
    apply(writer.plan_pin(m))
    text = obs.read_bytes()
    assert b"with the door open!" in text and scan(root)["Train seat preference"].pinned


def test_same_size_same_mtime_rewrite_between_plan_and_apply(
    root: Path, writer: DreamCycleWriter
) -> None:
    m = scan(root)["Train seat preference"]
    plan = writer.plan_archive(m)
    obs = root / "observations.md"
    st = obs.stat()
    changed = obs.read_bytes().replace(b"Window seat", b"Window SEAT")
    obs.write_bytes(changed)
    os.utime(obs, ns=(st.st_atime_ns, st.st_mtime_ns))
    arc_before = (root / "archive.jsonl").read_bytes()
    with pytest.raises(ConflictError):
        apply(plan)
    assert obs.read_bytes() == changed
    assert (root / "archive.jsonl").read_bytes() == arc_before


def test_section_gone_is_a_conflict(root: Path, writer: DreamCycleWriter) -> None:
    m = scan(root)["Train seat preference"]
    obs = root / "observations.md"
    obs.write_bytes(obs.read_bytes().replace(b"## Train seat preference", b"## Flight seats"))
    with pytest.raises(ConflictError, match="no longer there"):
        writer.plan_set(m, {"importance": 7})


# ---------------------------------------------------------------- bytes: BOM, CRLF, bad lines


def test_crlf_and_bom_survive_every_action(root: Path, writer: DreamCycleWriter) -> None:
    obs = root / "observations.md"
    obs.write_bytes(obs.read_bytes().replace(b"\n", b"\r\n"))
    arc = root / "archive.jsonl"
    arc.write_bytes(arc.read_bytes().replace(b"\n", b"\r\n"))
    before = files(root)
    assert before["observations.md"].startswith(b"\xef\xbb\xbf")
    apply(writer.plan_pin(scan(root)["Home printer model"]))
    apply(writer.plan_set(scan(root)["Train seat preference"], {"importance": 6}))
    apply(
        writer.plan_edit_body(scan(root)["Practice software upgrade"], "Done.\nAll files copied.")
    )
    apply(writer.plan_archive(scan(root)["Farrier contact for the riding stable"]))
    for name in ("observations.md", "archive.jsonl"):
        data = (root / name).read_bytes()
        assert b"\n" not in data.replace(b"\r\n", b"")
    assert (root / "observations.md").read_bytes().startswith(b"\xef\xbb\xbf")
    assert b"## Practice software upgrade\r\nDone.\r\nAll files copied.\r\n" in obs.read_bytes()
    entry = next(m for m in scan(root).values() if m.fields.get("section_id"))
    apply(writer.plan_restore(entry))
    apply(writer.plan_unpin(scan(root)["Home printer model"]))
    for _ in range(6):
        undo_last(root)
    assert files(root) == before


def test_undecodable_lines_elsewhere_are_kept_byte_for_byte(
    root: Path, writer: DreamCycleWriter
) -> None:
    obs = root / "observations.md"
    bad = b"## Caf\xe9 order\nLatin-1 bytes: cr\xe8me br\xfbl\xe9e.\n\n"
    data = obs.read_bytes()
    at = data.index(b"## Farrier contact for the riding stable")
    obs.write_bytes(data[:at] + bad + data[at:])
    cat = open_catalog(root)
    assert any(p.reason.value == "encoding" for p in cat.problems())
    apply(writer.plan_archive(scan(root)["Farrier contact for the riding stable"]))
    apply(writer.plan_pin(scan(root)["Clinic X-ray unit service contract"]))
    assert bad in obs.read_bytes()


# ---------------------------------------------------------------- paths


def test_path_syntax_ids_are_refused(root: Path, writer: DreamCycleWriter, tmp_path: Path) -> None:
    m = scan(root)["Train seat preference"]
    for bad in ("../x", "/etc/passwd", "..\\x", "a\x00b"):
        fake = dataclasses.replace(m, id=bad)
        with pytest.raises(RefusedError, match="path syntax"):
            writer.plan_pin(fake)
    assert not (tmp_path / "x").exists()


def test_symlinked_archive_outside_the_vault_is_refused(
    root: Path, writer: DreamCycleWriter, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(b"")
    (root / "archive.jsonl").unlink()
    (root / "archive.jsonl").symlink_to(outside)
    m = scan(root)["Train seat preference"]
    with pytest.raises(UnsafePathError):
        writer.plan_archive(m)
    assert outside.read_bytes() == b""


# ---------------------------------------------------------------- odd layouts

ODD = (
    "# Observations\n"
    "\n"
    "## A\n"
    "   <!-- dc:type=fact  dc:importance=5 dc:date=2026-11-01 --> first body line\n"
    "more of A\n"
    "\n"
    "## B\n"
    "<!--\n"
    "  dc:type=goal\n"
    "  dc:importance=6 dc:date=2026-01-01\n"
    "-->\n"
    "body B\n"
    "\n"
    "## C\n"
    "\n"
    "<!-- dc:type=event dc:importance=4 dc:date=2026-11-20 -->\n"
    "\n"
    "body C"
)


@pytest.fixture
def odd(tmp_path: Path) -> Path:
    vault = tmp_path / "odd"
    vault.mkdir()
    (vault / "observations.md").write_text(ODD, encoding="utf-8")
    return vault


def test_odd_layouts_pin_and_set_touch_only_their_tokens(
    odd: Path, writer: DreamCycleWriter
) -> None:
    m = scan(odd)
    assert m["A"].body == "first body line\nmore of A"
    apply(writer.plan_pin(m["A"]))
    apply(writer.plan_set(scan(odd)["B"], {"importance": 7.5, "confidence": 0.5}))
    apply(writer.plan_pin(scan(odd)["C"]))
    text = (odd / "observations.md").read_text(encoding="utf-8")
    assert (
        "   <!-- dc:type=fact  dc:importance=5 dc:date=2026-11-01 dc:ttl=never"
        " dc:ttl_before_pin=none --> first body line\n"
    ) in text
    assert "  dc:type=goal\n  dc:importance=7.5 dc:date=2026-01-01 dc:confidence=0.5\n-->" in text
    assert text.endswith(
        "## C\n\n<!-- dc:type=event dc:importance=4 dc:date=2026-11-20 dc:ttl=never"
        " dc:ttl_before_pin=none -->\n\nbody C"
    )
    now = scan(odd)
    assert now["A"].pinned and now["C"].pinned and now["B"].importance == 7.5
    assert [now[t].body for t in "ABC"] == [m[t].body for t in "ABC"]
    apply(writer.plan_unpin(now["A"]))
    apply(writer.plan_unpin(scan(odd)["C"]))
    apply(writer.plan_set(scan(odd)["B"], {"importance": 6, "confidence": None}))
    assert (odd / "observations.md").read_text(encoding="utf-8") == ODD


def test_odd_layouts_edit_body_and_archive_restore(odd: Path, writer: DreamCycleWriter) -> None:
    apply(writer.plan_edit_body(scan(odd)["A"], "new A body"))
    text = (odd / "observations.md").read_text(encoding="utf-8")
    assert "dc:date=2026-11-01 -->\nnew A body\n\n## B\n" in text
    assert scan(odd)["A"].body == "new A body"
    apply(writer.plan_edit_body(scan(odd)["C"], "new C"))
    assert (odd / "observations.md").read_text(encoding="utf-8").endswith("-->\n\nnew C\n")
    undo_last(odd)
    undo_last(odd)
    before = (odd / "observations.md").read_text(encoding="utf-8")
    for title in ("B", "C", "A"):
        apply(writer.plan_archive(scan(odd)[title]))
    assert "## " not in (odd / "observations.md").read_text(encoding="utf-8")
    entries = sorted((m for m in scan(odd).values() if m.archived), key=lambda m: m.line or 0)
    for entry in reversed(entries):  # A, then C, then B
        apply(writer.plan_restore(entry))
    # Byte for byte, except that the file now ends with a newline.
    assert (odd / "observations.md").read_text(encoding="utf-8") == before + "\n"
    assert {m.title for m in scan(odd).values() if not m.archived} == {"A", "B", "C"}
