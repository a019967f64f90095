"""The dream-cycle adapter against the project's own test vault, its rules, and hostile input."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlens.core.formats import adapter_for
from memlens.core.formats.dream_cycle import detection as dream_cycle_detection
from memlens.core.formats.dream_cycle import files as dream_cycle_files
from memlens.core.formats.dream_cycle.adapter import DreamCycleAdapter
from memlens.core.formats.dream_cycle.classify import classify
from memlens.core.formats.dream_cycle.ids import section_base_id, slugify
from memlens.core.formats.dream_cycle.sections import parse_sections
from memlens.core.model import Health, Memory, Reason, ScanResult

AS_OF = date(2026, 11, 22)
ADAPTER = DreamCycleAdapter()


# -- helpers -----------------------------------------------------------------


@pytest.fixture(scope="module")
def vault(own_fixtures_dir: Path) -> Path:
    return own_fixtures_dir / "dream-cycle"


@pytest.fixture(scope="module")
def scanned(vault: Path) -> ScanResult:
    return ADAPTER.scan(vault)


@pytest.fixture(scope="module")
def exp(own_expected: dict[str, Any]) -> dict[str, Any]:
    return dict(own_expected["formats"]["dream-cycle"])


def by_index(result: ScanResult, path: str = "observations.md") -> dict[int, Memory]:
    return {m.index: m for m in result.memories if m.path == path and m.index is not None}


def copy_vault(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest)
    for p in [dest, *dest.rglob("*")]:
        p.chmod(p.stat().st_mode | 0o200)
    return dest


def write_vault(root: Path, observations: str | bytes, archive: str | bytes | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    data = observations.encode("utf-8") if isinstance(observations, str) else observations
    (root / "observations.md").write_bytes(data)
    if archive is not None:
        adata = archive.encode("utf-8") if isinstance(archive, str) else archive
        (root / "archive.jsonl").write_bytes(adata)
    return root


TAG = "<!-- dc:type={t} dc:importance={i} dc:date={d} -->"


# -- identity and detection ---------------------------------------------------------


def test_registered_under_its_format_id() -> None:
    adapter = adapter_for("dream-cycle")
    assert isinstance(adapter, DreamCycleAdapter)
    assert adapter.label == "Dream Cycle"


def test_detect(vault: Path, tmp_path: Path) -> None:
    assert ADAPTER.detect(vault)
    assert not ADAPTER.detect(tmp_path)
    write_vault(tmp_path / "plain", "# Notes\n\nno sections here\n")
    assert not ADAPTER.detect(tmp_path / "plain")
    write_vault(tmp_path / "archived", "# Notes\n", archive="")
    assert ADAPTER.detect(tmp_path / "archived")
    write_vault(tmp_path / "bom", "\ufeff## First\nbody\n")
    assert ADAPTER.detect(tmp_path / "bom")
    (tmp_path / "dir" / "observations.md").mkdir(parents=True)
    assert not ADAPTER.detect(tmp_path / "dir")


# -- the fixture against expected.json ----------------------------------------------


def test_valid_count_and_breakdown(scanned: ScanResult, exp: dict[str, Any]) -> None:
    assert len(scanned.memories) == exp["valid_count"]
    sections = [m for m in scanned.memories if m.path == "observations.md"]
    breakdown = exp["valid_breakdown"]
    assert len(sections) == breakdown["observations.md sections"]
    assert sum(m.native["tagged"] for m in sections) == breakdown["observations.md tagged"]
    assert sum(not m.native["tagged"] for m in sections) == breakdown["observations.md untagged"]
    archive = [m for m in scanned.memories if m.path == "archive.jsonl"]
    assert len(archive) == breakdown["archive.jsonl entries"]
    assert all(m.archived for m in archive)
    assert not any(m.archived for m in sections)


def test_total_sections(vault: Path, exp: dict[str, Any]) -> None:
    text = (vault / "observations.md").read_text("utf-8")
    sections = parse_sections(text)
    assert len(sections) == exp["total_sections"]
    assert [s.index for s in sections] == list(range(1, len(sections) + 1))


def test_every_invalid_item_is_reported(scanned: ScanResult, exp: dict[str, Any]) -> None:
    got = {
        (p.path, p.index, p.line, p.reason.value): p.detail
        for p in scanned.problems
        if p.reason is not None
    }
    want = {
        (e["file"], e.get("index"), e.get("line"), e["reason"]): e["detail"] for e in exp["invalid"]
    }
    assert got == want
    for p in scanned.problems:
        if p.index is not None:
            title = next(e["title"] for e in exp["invalid"] if e.get("index") == p.index)
            assert p.title == title
            assert p.at_line is not None
    # Invalid items are never loaded as valid.
    bad_indexes = {e["index"] for e in exp["invalid"] if "index" in e}
    assert not bad_indexes & set(by_index(scanned))
    dup_ids = {e["id"] for e in exp["invalid"] if e["reason"] == "duplicate_id"}
    assert not dup_ids & {m.id for m in scanned.memories}


def test_section_after_unclosed_comment_still_loads(scanned: ScanResult) -> None:
    sections = by_index(scanned)
    assert 41 not in sections
    nxt = sections[42]
    assert nxt.title == "Vaccination open day"
    assert nxt.kind == "event"
    assert nxt.native["tagged"] is True


@pytest.mark.parametrize("index", [11, 12, 4, 14, 9, 7, 16, 18, 19, 30])
def test_decay_matches_expected(scanned: ScanResult, exp: dict[str, Any], index: int) -> None:
    entry = next(e for e in exp["decay"] if e["index"] == index)
    memory = by_index(scanned)[index]
    info = ADAPTER.decay(memory, AS_OF)
    assert memory.title == entry["title"]
    assert memory.kind == entry["type"]
    assert memory.native["declared_type"] == entry["declared_type"]
    assert memory.native["base_importance"] == entry["base_importance"]
    assert memory.native["date"] == entry["date"]
    assert info.current_importance == pytest.approx(entry["current_importance"], abs=1e-9)
    assert info.importance_band == entry["importance_band"]
    assert info.days_elapsed == entry["days_elapsed"]
    assert info.status == entry["status"]
    assert info.ttl_days == entry["ttl_days"]
    expired = None if info.status == "undated" else info.status == "ttl_expired"
    assert expired == entry["ttl_expired"]
    # The arithmetic text follows expected.json's `why` (it may add a sentence).
    assert info.why.startswith(entry["why"])


def test_classification_matches_expected(scanned: ScanResult, exp: dict[str, Any]) -> None:
    sections = by_index(scanned)
    for entry in exp["classification"]:
        m = sections[entry["index"]]
        assert m.title == entry["title"]
        assert m.kind == entry["effective_type"]
        assert m.native["ttl"] == entry["effective_ttl_days"]
        assert m.importance == entry["effective_importance"]
        assert m.native["classified_type"] == entry["classified_type"], m.title
        if entry["classified_type"] is None:
            assert m.native["classification_basis"] == entry["basis"]
        else:
            assert m.native["classification_basis"] == entry["basis"]
            assert m.native["classification_signals"] == entry["signals"]


def test_extra_fields_kept_in_order(scanned: ScanResult, exp: dict[str, Any]) -> None:
    for entry in exp["extra_fields_preserved"]:
        m = by_index(scanned)[entry["index"]]
        assert m.title == entry["title"]
        assert list(m.extra) == entry["fields"]
        assert m.extra == {"dc:origin": "watcher-2", "dc:session": "sig-0913"}
        assert list(m.fields) == [
            "dc:type",
            "dc:importance",
            "dc:ttl",
            "dc:confidence",
            "dc:source",
            "dc:date",
            "dc:origin",
            "dc:session",
        ]
        assert all(isinstance(v, str) for v in m.fields.values())


def test_fixture_edge_cases(scanned: ScanResult) -> None:
    s = by_index(scanned)
    # Section 21: the comment follows a blank line and still counts.
    assert s[21].native["tagged"] and s[21].kind == "fact" and s[21].importance == 6.5
    assert s[21].native["comment_line"] == s[21].native["start_line"] + 2
    # Section 22: only the three required fields; type default TTL applies.
    assert s[22].kind == "habit" and s[22].native["ttl"] == 365 and s[22].confidence is None
    # Unicode titles.
    assert s[23].title == "祖母の八十歳の誕生日会"
    assert s[24].title.startswith("⛵")
    assert s[25].title.startswith("تذكير")
    # 500-character title: kept whole, id bounded.
    assert len(s[26].title) >= 500
    assert len(s[26].id) <= 48 + 7
    # Raw ESC and markup are data, kept literally.
    assert "\x1b[1;31m" in s[27].body and "[bold red]" in s[27].body
    # Empty body.
    assert s[28].body == ""
    # `###` does not split a section.
    assert "### Details" in s[29].body
    assert s[30].title == "Home printer model"
    # A dc comment quoted mid-body is body text: untagged.
    assert not s[38].native["tagged"]
    assert "<!-- dc:type=goal" in s[38].body
    assert s[38].kind == "fact" and s[38].native["date"] is None
    # Pinned means dc:ttl=never.
    assert s[14].pinned and s[14].native["ttl"] is None
    assert not s[1].pinned


def test_memory_fields(scanned: ScanResult, vault: Path) -> None:
    m = by_index(scanned)[1]
    assert m.format == "dream-cycle"
    assert m.path == "observations.md"
    assert m.title == "Clinic X-ray unit service contract"
    assert m.body.startswith("The Vetray DR-40")
    assert m.importance == 4.5
    assert m.confidence == 0.95
    assert m.created == date(2026, 11, 9)
    assert m.source == "explicit"
    lines = (vault / "observations.md").read_text("utf-8-sig").split("\n")
    assert lines[m.native["start_line"] - 1] == "## Clinic X-ray unit service contract"
    assert lines[m.native["comment_line"] - 1].startswith("<!-- dc:type=fact")
    end = m.native["end_line"]
    assert lines[end].startswith("## Farrier contact for the riding stable")


def test_archive_entries(scanned: ScanResult) -> None:
    archive = {m.line: m for m in scanned.memories if m.path == "archive.jsonl"}
    assert sorted(archive) == [1, 3, 4, 5, 7, 8]
    m = archive[1]
    assert m.id == "OBS-20261003-001"
    assert m.kind == "event"
    assert m.created == date(2026, 10, 3)
    assert m.importance == 0.5
    assert m.title.startswith("Sleep Tracker Summary — 2026-10-03")
    assert m.body.endswith("9,115 steps.")
    assert m.extra == {}
    assert list(m.fields)[:3] == ["id", "original_date", "impact"]
    assert archive[4].kind == "fact"  # WP1-era entry without a type
    info = ADAPTER.decay(m, AS_OF)
    assert info.status == "archived" and info.health is Health.ARCHIVED
    assert info.strength == 0.0 and info.weight == 0.0
    assert "event TTL expired" in info.why


# -- decay rules beyond the fixture's table ---------------------------------------------


def test_decay_details(scanned: ScanResult) -> None:
    s = by_index(scanned)
    sleep = ADAPTER.decay(s[11], AS_OF)  # active, importance 1.5
    assert sleep.health is Health.FADING
    assert sleep.expires_on == date(2026, 11, 29)
    assert sleep.archive_reasons == ("importance below 3.0 (now 1.5)",)
    assert sleep.strength == pytest.approx(0.15)
    assert sleep.weight == pytest.approx(1.5 / 5.5)
    ptc = ADAPTER.decay(s[12], AS_OF)
    assert ptc.health is Health.EXPIRED
    assert any(r.startswith("event TTL expired") for r in ptc.archive_reasons)
    assert any(r.startswith("importance below 3.0") for r in ptc.archive_reasons)
    rule = ADAPTER.decay(s[14], AS_OF)
    assert rule.expires_on is None and rule.health is Health.ACTIVE
    assert rule.archive_reasons == ()
    undated = ADAPTER.decay(s[30], AS_OF)
    assert undated.health is Health.STABLE
    assert undated.strength == 0.5 and undated.weight == 1.0
    assert undated.expires_on is None and undated.archive_reasons == ()


def test_expiry_boundary(scanned: ScanResult) -> None:
    m = by_index(scanned)[13]  # event dated 2026-11-19, ttl 14
    last_ok = date(2026, 11, 19) + timedelta(days=14)
    assert ADAPTER.decay(m, last_ok).status == "active"
    assert ADAPTER.decay(m, last_ok + timedelta(days=1)).status == "ttl_expired"
    assert ADAPTER.decay(m, AS_OF).expires_on == last_ok + timedelta(days=1)


def test_decay_never_compounds_and_honours_decayed(tmp_path: Path) -> None:
    text = (
        "## Plain\n"
        "<!-- dc:type=fact dc:importance=8.0 dc:date=2026-11-01 -->\nbody\n\n"
        "## Already decayed once\n"
        "<!-- dc:type=fact dc:importance=6.0 dc:date=2026-11-01 dc:decayed=2026-11-21 -->\n"
        "body\n"
    )
    result = ADAPTER.scan(write_vault(tmp_path / "v", text))
    plain, decayed = result.memories
    # Decay from dc:date on every call: the same as_of gives the same answer.
    first = ADAPTER.decay(plain, AS_OF)
    assert first.current_importance == 5.9
    assert ADAPTER.decay(plain, AS_OF).current_importance == 5.9
    # With dc:decayed only the days since then are charged; age still from dc:date.
    info = ADAPTER.decay(decayed, AS_OF)
    assert info.current_importance == 5.9
    assert info.days_elapsed == 21
    assert "dc:decayed" not in decayed.extra


def test_unknown_type_with_explicit_ttl(tmp_path: Path) -> None:
    text = "## Odd\n<!-- dc:type=Decision dc:importance=5 dc:ttl=10 dc:date=2026-11-01 -->\nx\n"
    (m,) = ADAPTER.scan(write_vault(tmp_path / "v", text)).memories
    assert m.kind == "fact" and m.native["ttl"] == 10
    info = ADAPTER.decay(m, AS_OF)
    assert info.status == "ttl_expired"
    assert info.current_importance == 2.9
    # Known types match case-insensitively.
    text2 = "## Ev\n<!-- dc:type=Event dc:importance=5 dc:date=2026-11-20 -->\nx\n"
    (ev,) = ADAPTER.scan(write_vault(tmp_path / "w", text2)).memories
    assert ev.kind == "event" and ev.native["ttl"] == 14


@pytest.mark.parametrize(
    ("comment", "reason", "detail"),
    [
        ("dc:type=fact dc:importance=11 dc:date=2026-01-01", "out_of_range", "dc:importance=11"),
        ("dc:type=fact dc:importance=-1 dc:date=2026-01-01", "out_of_range", "dc:importance=-1"),
        ("dc:type=fact dc:importance=nan dc:date=2026-01-01", "wrong_type", "not a number"),
        (
            "dc:type=fact dc:importance=5 dc:date=2026-01-01 dc:confidence=1.7",
            "out_of_range",
            "dc:confidence=1.7",
        ),
        (
            "dc:type=fact dc:importance=5 dc:date=2026-01-01 dc:confidence=high",
            "wrong_type",
            "dc:confidence=high",
        ),
        ("dc:type=fact dc:importance=5 dc:date=yesterday", "wrong_type", "dc:date=yesterday"),
        ("dc:type=fact dc:importance=5 dc:date=2026-02-30", "wrong_type", "dc:date=2026-02-30"),
        (
            "dc:type=fact dc:importance=5 dc:date=2026-01-01 dc:ttl=soon",
            "wrong_type",
            "dc:ttl=soon",
        ),
        ("dc:type=fact dc:importance=5 dc:date=2026-01-01 dc:ttl=-3", "out_of_range", "dc:ttl=-3"),
        (
            "dc:type=fact dc:importance=5 dc:date=2026-01-01 dc:ttl=" + "9" * 5000,
            "out_of_range",
            "more than",
        ),
        ("dc:importance=5", "missing_required_field", "lacks dc:type, dc:date"),
        ("dc:type= dc:importance=5 dc:date=2026-01-01", "missing_required_field", "dc:type"),
    ],
)
def test_field_validation(tmp_path: Path, comment: str, reason: str, detail: str) -> None:
    text = f"## Bad\n<!-- {comment} -->\nbody\n\n## Good\nplain\n"
    result = ADAPTER.scan(write_vault(tmp_path / "v", text))
    assert [m.title for m in result.memories] == ["Good"]
    (p,) = result.problems
    assert p.reason.value == reason
    assert detail in p.detail
    assert p.index == 1 and p.at_line == 2 and p.title == "Bad"
    assert "\n" not in p.detail


def test_far_dates_do_not_overflow(tmp_path: Path) -> None:
    text = "## Far\n<!-- dc:type=fact dc:importance=5 dc:ttl=1000000 dc:date=9999-12-01 -->\n"
    (m,) = ADAPTER.scan(write_vault(tmp_path / "v", text)).memories
    info = ADAPTER.decay(m, AS_OF)
    assert info.expires_on is None and info.status == "active" and info.days_elapsed == 0
    assert ADAPTER.decay(m, date.max).current_importance == 2.0  # 30 days at 0.1/day


def test_unclosed_comment_at_end_of_file(tmp_path: Path) -> None:
    text = "## A\nfine\n## B\n<!-- dc:type=fact dc:importance=5\nbody\n"
    result = ADAPTER.scan(write_vault(tmp_path / "v", text))
    assert [m.title for m in result.memories] == ["A"]
    (p,) = result.problems
    assert p.reason is Reason.MALFORMED_METADATA
    assert p.detail.endswith("end of the file")


def test_non_dc_comments_are_body_text(tmp_path: Path) -> None:
    text = "## Note\n<!-- just a note -->\nbody\n\n## Open\n<!-- never closed\nbody\n"
    result = ADAPTER.scan(write_vault(tmp_path / "v", text))
    assert result.problems == []
    note, open_ = result.memories
    assert not note.native["tagged"] and note.body.startswith("<!-- just a note -->")
    assert not open_.native["tagged"]


# -- ids -------------------------------------------------------------------------------


def test_ids_are_stable_across_unrelated_edits(vault: Path, tmp_path: Path) -> None:
    root = copy_vault(vault, tmp_path / "v")
    before = {(m.path, m.title): m.id for m in ADAPTER.scan(root).memories}
    obs = root / "observations.md"
    text = obs.read_text("utf-8")
    # Insert a new section before the first one and another in the middle,
    # and edit an unrelated body.
    new = "## Brand new observation\nSomething else entirely.\n\n"
    first = text.index("## ")
    middle = text.index("## Burst pipe under the clinic sink")
    text = text[:first] + new + text[first:middle] + new.replace("Brand", "Other") + text[middle:]
    text = text.replace("resting heart rate 57.", "resting heart rate 58.")
    obs.write_text(text, "utf-8")
    after_memories = ADAPTER.scan(root).memories
    after = {(m.path, m.title): m.id for m in after_memories}
    for key, mid in before.items():
        assert after[key] == mid, key
    moved = {m.title: m.index for m in after_memories if m.path == "observations.md"}
    assert moved["Burst pipe under the clinic sink"] == 15  # the position moved, the id did not


def test_id_shape_and_repeated_titles(tmp_path: Path) -> None:
    text = "## Same\nfirst\n\n## Other\nx\n\n## Same\nsecond\n\n## Same\nthird\n"
    result = ADAPTER.scan(write_vault(tmp_path / "v", text))
    ids = [m.id for m in result.memories]
    base = section_base_id("Same")
    assert ids == [base, section_base_id("Other"), f"{base}-2", f"{base}-3"]
    assert base.startswith("same-") and len(base) == len("same-") + 6
    assert result.problems == []
    assert slugify("Theo's allergy — action plan!") == "theo-s-allergy-action-plan"
    for mid in ids:
        assert "/" not in mid and ".." not in mid


def test_duplicate_id_across_files(tmp_path: Path) -> None:
    sid = section_base_id("Shared")
    archive = json.dumps(
        {"id": sid, "original_date": "2026-01-01", "archived_reason": "manual", "full_text": "x"}
    )
    result = ADAPTER.scan(write_vault(tmp_path / "v", "## Shared\nbody\n", archive + "\n"))
    assert result.memories == []
    details = sorted(p.detail for p in result.problems)
    assert all(p.reason is Reason.DUPLICATE_ID for p in result.problems)
    assert details == [
        f"id {sid!r} also used by archive.jsonl:1",
        f"id {sid!r} also used by observations.md section 1",
    ]


# -- encodings and line endings -----------------------------------------------------------


def test_bom_and_crlf_are_transparent(tmp_path: Path) -> None:
    lf = (
        "# Log\n\n## One\n<!-- dc:type=event dc:importance=6 dc:date=2026-11-20 -->\n"
        "line a\nline b\n\n## Two\nplain body\n"
    )
    arc = '{"id": "A-1", "original_date": "2026-01-01", "archived_reason": "m", "full_text": "t"}\n'
    plain = ADAPTER.scan(write_vault(tmp_path / "lf", lf, arc))
    crlf_bytes = b"\xef\xbb\xbf" + lf.replace("\n", "\r\n").encode("utf-8")
    arc_bytes = b"\xef\xbb\xbf" + arc.replace("\n", "\r\n").encode("utf-8")
    crlf = ADAPTER.scan(write_vault(tmp_path / "crlf", crlf_bytes, arc_bytes))
    assert crlf.problems == [] and plain.problems == []

    def view(r: ScanResult) -> list[tuple[Any, ...]]:
        return [(m.id, m.title, m.body, m.fields, m.native, m.index, m.line) for m in r.memories]

    assert view(crlf) == view(plain)
    assert all("\r" not in m.body and "\ufeff" not in m.title for m in crlf.memories)


def test_bad_utf8_spoils_only_its_section(tmp_path: Path) -> None:
    data = (
        b"## Good\nfine\n\n## Latin\nCaf\xe9 au lait\n\n## Also good\n"
        b"<!-- dc:type=fact dc:importance=5 dc:date=2026-11-01 -->\nok\n"
    )
    arc = (
        b'{"id": "X", "original_date": "2026-01-01", "archived_reason": "r", "full_text": "\xe9"}\n'
    )
    result = ADAPTER.scan(write_vault(tmp_path / "v", data, arc))
    assert [m.title for m in result.memories] == ["Good", "Also good"]
    reasons = sorted((p.path, p.reason.value, p.index, p.line) for p in result.problems)
    assert reasons == [
        ("archive.jsonl", "encoding", None, 1),
        ("observations.md", "encoding", 2, None),
    ]
    sec = next(p for p in result.problems if p.index == 2)
    assert sec.at_line == 5 and "0xe9" in sec.detail


# -- archive.jsonl ------------------------------------------------------------------------


def test_archive_jsonl_problems(tmp_path: Path) -> None:
    good = {"id": "G", "original_date": "2026-01-01", "archived_reason": "r", "full_text": "ok"}
    lines = [
        json.dumps(good),
        "",
        "   ",
        '{"id": "T", "original_date": "2026-01-01"',
        "[1, 2, 3]",
        json.dumps({"id": "M", "original_date": "2026-01-01", "full_text": "x"}),
        json.dumps({**good, "id": "D", "original_date": "last week"}),
        json.dumps({**good, "id": "I", "importance": "high"}),
        json.dumps({**good, "id": "R", "importance": 12}),
        json.dumps({**good, "id": 7}),
        '{"id": "N", "original_date": "2026-01-01", "archived_reason": "r", "full_text": NaN}',
        json.dumps({**good, "id": "E", "x_note": "kept"}),
    ]
    result = ADAPTER.scan(write_vault(tmp_path / "v", "## S\nx\n", "\n".join(lines) + "\n"))
    got = sorted((p.line, p.reason.value) for p in result.problems)
    assert got == [
        (4, "malformed_json"),
        (5, "malformed_json"),
        (6, "missing_required_field"),
        (7, "wrong_type"),
        (8, "wrong_type"),
        (9, "out_of_range"),
        (10, "wrong_type"),
        (11, "malformed_json"),
    ]
    missing = next(p for p in result.problems if p.line == 6)
    assert missing.detail == "archive entry lacks archived_reason" and missing.id == "M"
    arch = {m.id: m for m in result.memories if m.path == "archive.jsonl"}
    assert sorted(arch) == ["E", "G"]
    assert arch["E"].extra == {"x_note": "kept"}
    assert arch["G"].line == 1 and arch["E"].line == 12


# -- archived-observations.md ---------------------------------------------------------------


def test_archived_observations_md(tmp_path: Path) -> None:
    root = write_vault(tmp_path / "v", "## Live\nbody\n")
    (root / "archived-observations.md").write_text(
        "\n## Auto-archived by decay (2026-11-20)\n"
        "<!-- dc:type=event dc:importance=2.5 dc:ttl=14 dc:date=2026-11-10 -->\n"
        "<!-- dc:type=fact dc:importance=1.0 dc:date=2026-07-01 -->\n"
        "\n## Moved by hand\n"
        "<!-- dc:type=preference dc:importance=4 dc:date=2026-01-01 -->\n"
        "Old preference text.\n"
        "\n## Live\nan archived section whose title is also live\n",
        "utf-8",
    )
    assert ADAPTER.detect(root)
    result = ADAPTER.scan(root)
    assert result.problems == []
    archived = [m for m in result.memories if m.path == "archived-observations.md"]
    assert len(archived) == 4
    assert all(m.archived for m in archived)
    assert [m.kind for m in archived] == ["event", "fact", "preference", "fact"]
    assert archived[0].native["auto_archived_on"] == "2026-11-20"
    assert archived[0].native["comment_line"] == 3
    assert archived[2].title == "Moved by hand" and archived[2].body == "Old preference text."
    ids = [m.id for m in result.memories]
    assert len(set(ids)) == len(ids)
    assert archived[3].id == section_base_id("Live") + "-2"
    for m in archived:
        info = ADAPTER.decay(m, AS_OF)
        assert info.status == "archived" and info.health is Health.ARCHIVED


# -- parse_sections ----------------------------------------------------------------------------


def test_parse_sections_locations() -> None:
    text = (
        "preamble\n## not a heading? yes it is\n"  # line 2
        "\n<!-- dc:type=fact\n dc:importance=5 dc:date=2026-01-01 -->\nbody line\n"
        "### sub\nmore\n"
        "##no-space\n"
        "## Second\n<!-- dc:type=rule dc:importance=9 dc:date=2026-01-01 --> trailing\nrest\n"
    )
    first, second = parse_sections(text)
    assert (first.index, first.start_line, first.end_line) == (1, 2, 9)
    assert (first.comment_line, first.comment_end_line, first.body_start_line) == (4, 5, 6)
    assert first.fields == {"dc:type": "fact", "dc:importance": "5", "dc:date": "2026-01-01"}
    assert first.body == "body line\n### sub\nmore\n##no-space"
    assert first.tagged and not first.last
    assert (second.index, second.start_line, second.end_line, second.comment_line) == (
        2,
        10,
        12,
        11,
    )
    assert second.body == "trailing\nrest"
    assert second.last
    assert parse_sections("no sections\n") == []
    assert parse_sections("") == []


def test_classify_rules() -> None:
    assert classify("x", "Dana always uses the standing desk").type == "habit"
    assert classify("x", "We must always lock the door").signals == ("must", "always")
    assert classify("x", "She decided on oat milk").type == "preference"
    assert classify("x", "The milestone is in progress").type == "goal"  # longer TTL wins
    assert classify("Run log 2026-01-02", "5 km").signals == ("dated daily summary",)
    assert classify("Call with bank 2026-01-02", "done").signals == ("one-off dated entry",)
    assert classify("x", "Temporarily parked at the office").type == "context"
    assert classify("x", "<!-- dc:type=rule --> the router model").type == "fact"
    assert classify("x", "trusty router").basis == "default"


# -- hostile input never raises -----------------------------------------------------------------


def _scan_bytes(obs: bytes, archive: bytes | None = None) -> ScanResult:
    with tempfile.TemporaryDirectory() as tmp:
        root = write_vault(Path(tmp) / "v", obs, archive)
        ADAPTER.detect(root)
        result = ADAPTER.scan(root)
        for m in result.memories:
            info = ADAPTER.decay(m, AS_OF)
            assert 0.0 <= info.strength <= 1.0
            assert 0.0 <= info.weight <= 1.0
        for p in result.problems:
            assert "\n" not in p.detail
        return result


FUZZ = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.binary(max_size=2000), st.binary(max_size=800))
def test_scan_survives_arbitrary_bytes(obs: bytes, archive: bytes) -> None:
    _scan_bytes(obs, archive)


_words = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30).map(
    lambda s: s.replace("\n", " ")
)
_values = st.one_of(
    st.sampled_from(
        ["fact", "event", "rule", "never", "5", "10.0", "-1", "high", "2026-11-01", "", "nan"]
    ),
    st.text(alphabet=st.characters(blacklist_categories=("Cs", "Zs", "Cc")), max_size=8),
)
_keys = st.sampled_from(
    ["type", "importance", "date", "ttl", "confidence", "source", "decayed", "origin", "x"]
)
_comment = st.builds(
    lambda pairs, close: (
        "<!-- " + " ".join(f"dc:{k}={v}" for k, v in pairs) + (" -->" if close else "")
    ),
    st.lists(st.tuples(_keys, _values), max_size=7),
    st.booleans(),
)
_section = st.builds(
    lambda title, blank, comment, body: (
        f"## {title}\n"
        + ("\n" if blank else "")
        + (comment + "\n" if comment is not None else "")
        + "\n".join(body)
        + "\n"
    ),
    _words,
    st.booleans(),
    st.one_of(st.none(), _comment),
    st.lists(st.one_of(_words, _comment, st.just("### sub"), st.just("<!--")), max_size=4),
)


@FUZZ
@given(
    st.text(max_size=40).map(lambda s: s.replace("#", "")),
    st.lists(_section, max_size=8),
    st.booleans(),
    st.booleans(),
)
def test_scan_survives_generated_sections(
    preamble: str, sections: list[str], crlf: bool, bom: bool
) -> None:
    text = preamble + "\n" + "".join(sections)
    data = text.replace("\n", "\r\n") if crlf else text
    raw = (b"\xef\xbb\xbf" if bom else b"") + data.encode("utf-8", "surrogatepass")
    result = _scan_bytes(raw)
    # Every section is either a memory or a problem, never lost.
    n_sections = len(parse_sections(text))
    per_section = [p for p in result.problems if p.index is not None]
    assert len(result.memories) + len(per_section) == n_sections
    assert all(p.reason is not Reason.DUPLICATE_ID for p in result.problems)
    assert len({m.id for m in result.memories}) == len(result.memories)


def test_scan_survives_odd_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_vault(tmp_path / "v", "## A\nbody\n")
    (root / "archived-observations.md").mkdir()  # a folder where a file is expected
    os.mkfifo(root / "archive.jsonl")  # must not block
    (root / "notes.md").symlink_to(root / "notes.md")  # a symlink loop nearby
    result = ADAPTER.scan(root)
    assert [m.title for m in result.memories] == ["A"]
    # The odd entries are reported by name, not silently skipped.
    assert sorted(p.path for p in result.problems) == ["archive.jsonl", "archived-observations.md"]
    # A vault folder that vanished.
    assert ADAPTER.scan(tmp_path / "missing").memories == []
    assert not ADAPTER.detect(tmp_path / "missing")

    # Unreadable files are reported, not raised (simulated: tests may run as root).
    real_read = dream_cycle_files.read_regular
    real_open = dream_cycle_detection.open_regular

    def deny_read(path: Path, **kwargs: Any) -> bytes:
        if Path(path).name in {"observations.md", "archive.jsonl"}:
            raise PermissionError(13, "Permission denied", str(path))
        return real_read(path, **kwargs)

    def deny_open(path: Path, **kwargs: Any) -> int:
        if Path(path).name == "observations.md":
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, **kwargs)

    plain = write_vault(tmp_path / "w", "## A\nbody\n", "")
    monkeypatch.setattr(dream_cycle_files, "read_regular", deny_read)
    monkeypatch.setattr(dream_cycle_detection, "open_regular", deny_open)
    result = ADAPTER.scan(plain)
    assert result.memories == []
    assert sorted(p.path for p in result.problems) == ["archive.jsonl", "observations.md"]
    assert all("Permission denied" in p.detail for p in result.problems)
    assert ADAPTER.detect(plain)  # archive.jsonl beside it is enough
    (plain / "archive.jsonl").unlink()
    assert not ADAPTER.detect(plain)
