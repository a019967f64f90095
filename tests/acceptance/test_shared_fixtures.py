"""The acceptance layer: memlens against `../shared/fixtures` and its expected.json.

Data-driven from expected.json for all five formats: valid counts, every
invalid item with its reason, every flagged reference, and the decay numbers.
Present on our machines and in CI; on a clone alone every test here skips
with the one reason `conftest.ACCEPTANCE_SKIP` (through `fixtures_dir`).
Each test walks the five formats itself (not one test per format), so a
clone alone skips four tests, not twenty.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest

from memlens.core.decay import decay_of
from memlens.core.model import Memory
from memlens.core.scan.vault import Catalog, Vault, open_catalog

FORMATS = (
    "dream-cycle",
    "observation-v1",
    "experience-records",
    "project-ocean",
    "cognitive-memory",
)
#: Each format's numbers in expected.json's `decay` entries and the DecayInfo
#: field that must equal them (the scores of cognitive-memory have a tolerance).
DECAY_NUMBERS = (
    "current_importance",
    "importance_band",
    "days_elapsed",
    "age_days",
    "ttl_days",
    "lifespan_days",
    "linear_weight",
)


@pytest.fixture(scope="module")
def catalog(fixtures_dir: Path) -> Catalog:
    return open_catalog(fixtures_dir)


def vault_of(catalog: Catalog, fmt: str) -> Vault:
    (vault,) = [v for v in catalog.vaults if v.format == fmt]
    return vault


def where(item: dict[str, Any]) -> tuple[str, int | None, int | None]:
    """An invalid item's file and its line or section, as expected.json writes them."""
    return (item.get("path") or item["file"], item.get("line"), item.get("index"))


def memory_for(vault: Vault, entry: dict[str, Any]) -> Memory:
    """The memory a decay entry describes: by id, or by section number (dream-cycle)."""
    if "id" in entry:
        (m,) = [m for m in vault.memories if m.id == entry["id"]]
    else:
        (m,) = [
            m for m in vault.memories if m.path == "observations.md" and m.index == entry["index"]
        ]
    return m


def test_valid_counts(catalog: Catalog, expected: dict[str, Any]) -> None:
    got = {fmt: len(vault_of(catalog, fmt).memories) for fmt in FORMATS}
    assert got == {fmt: expected["formats"][fmt]["valid_count"] for fmt in FORMATS}


def test_every_invalid_item_with_its_reason(catalog: Catalog, expected: dict[str, Any]) -> None:
    for fmt in FORMATS:
        vault = vault_of(catalog, fmt)
        got = sorted(
            ((p.path, p.line, p.index), p.reason.value)
            for p in vault.problems
            if p.reason is not None
        )
        want = sorted((where(i), i["reason"]) for i in expected["formats"][fmt]["invalid"])
        assert got == want, fmt
        # Invalid items are never loaded as valid.
        bad_files = {w[0] for w, _ in want if w[1] is None and w[2] is None}
        assert not bad_files & {m.path for m in vault.memories}, fmt


def test_every_flagged_reference(catalog: Catalog, expected: dict[str, Any]) -> None:
    for fmt in FORMATS:
        problems = vault_of(catalog, fmt).result.ref_problems
        refs = expected["formats"][fmt]["references"]
        got = sorted((r.field, r.ref, r.reason.value) for r in problems)
        assert got == sorted((r["field"], r["ref"], r["issue"]) for r in refs), fmt
        for ref in refs:
            assert any(ref["from"] in (r.path, r.id) and r.ref == ref["ref"] for r in problems), ref


def test_decay_numbers(catalog: Catalog, expected: dict[str, Any]) -> None:
    as_of = date.fromisoformat(expected["as_of"])
    for fmt in FORMATS:
        vault = vault_of(catalog, fmt)
        entries = expected["formats"][fmt]["decay"]
        assert entries, fmt
        for entry in entries:
            info = decay_of(memory_for(vault, entry), as_of)
            assert info.status == entry["status"], entry
            for key in DECAY_NUMBERS:
                if entry.get(key) is not None:
                    assert getattr(info, key) == pytest.approx(entry[key], abs=1e-4), (key, entry)
            if "score" in entry:
                assert info.score == pytest.approx(entry["score"], abs=entry["tolerance"] + 1e-9)
