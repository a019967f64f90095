"""Secrets in invalid items: a file, section or line memlens could not read as a memory.

The secret is still in the vault (and in every prompt that loads the file),
so the scan reads the item's own text (`FormatAdapter.problem_texts`) and
lists its findings as `invalid`; they are never redacted (memlens never
rewrites what it could not parse).  Each format's invalid item is checked
for its kind, line and id, with the valid memories beside it found once.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from privacy_invalid import AWS, GITHUB, NAS, plant_invalid

from memlens.core.privacy import scan_catalog, scan_vault
from memlens.core.privacy.incremental import FindingsCache
from memlens.core.scan.vault import Catalog, open_catalog

AS_OF = date(2026, 11, 27)


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    plant_invalid(tmp_path)
    return open_catalog(tmp_path, cache=False)


def test_every_format_s_invalid_item_is_scanned_and_marked(catalog: Catalog) -> None:
    found = scan_catalog(catalog, AS_OF)
    got = {(f.format, f.id, f.field, f.line, f.kind, f.health, f.invalid) for f in found}
    assert got == {
        ("dream-cycle", "good-one-276d40", "body", 5, "password", "active", False),
        ("dream-cycle", "bad-one-cdae6a", "section", 9, "github-token", "invalid", True),
        ("experience-records", "experiences.jsonl", "line", 2, "aws-key", "invalid", True),
        ("observation-v1", "observations/obs-001.md", "file", 11, "email", "invalid", True),
        ("project-ocean", "atlas/obs-2026-11-02-001", "file", 6, "phone", "invalid", True),
    }
    secrets = {f.kind: f.secret for f in found}
    assert (secrets["github-token"], secrets["aws-key"], secrets["password"]) == (GITHUB, AWS, NAS)
    assert all(GITHUB not in json.dumps(f.to_dict()) for f in found)


def test_a_valid_memory_s_json_record_has_no_invalid_key(catalog: Catalog) -> None:
    found = scan_catalog(catalog, AS_OF)
    records = {f.kind: f.to_dict() for f in found}
    assert "invalid" not in records["password"]
    assert records["aws-key"]["invalid"] is True
    assert records["aws-key"]["masked"] != AWS


def test_a_whole_file_problem_beside_memories_is_not_scanned_twice(tmp_path: Path) -> None:
    """A bad byte in a Dream Cycle preamble: the sections are memories, scanned as such."""
    dream = tmp_path / "dream"
    dream.mkdir()
    (dream / "observations.md").write_bytes(
        b"# Observations \xff\n\n## Good one\n"
        b"<!-- dc:type=fact dc:importance=6.0 dc:ttl=90 dc:date=2026-11-10 -->\n"
        b"The NAS password is " + NAS.encode() + b" now.\n"
    )
    catalog = open_catalog(tmp_path, cache=False)
    assert list(catalog.problems()), "the preamble's byte is a problem"
    found = scan_catalog(catalog, AS_OF)
    assert [(f.kind, f.secret, f.invalid) for f in found] == [("password", NAS, False)]


def test_the_app_s_incremental_scan_finds_the_same(catalog: Catalog, tmp_path: Path) -> None:
    cache = FindingsCache()
    for v in catalog.vaults:
        whole = scan_vault(v, AS_OF)
        for _ in range(2):  # the second time from what the first kept
            got = cache.scan_vault(v, AS_OF)
            assert got is not None
            assert [(f, f.secret, f.health) for f in got] == [
                (f, f.secret, f.health) for f in whole
            ]
    # The invalid file fixed: its finding is gone, the memory it became is scanned.
    fixed = tmp_path / "ocean" / "agents" / "atlas" / "memory" / "vault" / "obs-2026-11-02-001.md"
    fixed.write_text(
        "---\ntags: [ops]\nconfidence: 0.9\ncreated: 2026-11-02\nsource: atlas\n---\n\n"
        "Call Jonas at +49 151 2345 6781\n",
        encoding="utf-8",
    )
    again = open_catalog(tmp_path, cache=False)
    ocean = next(v for v in again.vaults if v.format == "project-ocean")
    got = cache.scan_vault(ocean, AS_OF)
    assert got is not None
    assert [(f.kind, f.id, f.invalid) for f in got] == [
        ("phone", "atlas/obs-2026-11-02-001", False)
    ]
