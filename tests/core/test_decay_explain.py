"""`decay(..., explain=False)`: the same numbers without the explanation text.

List rows use it (100k decays at a start); the detail pane asks for the full
decay of the one row it shows (`MemoryRow.full_info`).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

import pytest

from memlens.core.decay import decay_of
from memlens.core.listing import memory_row
from memlens.core.scan.vault import open_catalog

AS_OF = date(2026, 11, 22)


@pytest.mark.parametrize("days", [-400, 0, 30, 200, 5000])
def test_unexplained_decay_is_the_full_one_without_why(own_fixtures_dir: Path, days: int) -> None:
    as_of = AS_OF + timedelta(days=days)
    formats = set()
    checked = 0
    for vault in open_catalog(own_fixtures_dir).vaults:
        for m in vault.memories:
            full = vault.adapter.decay(m, as_of)
            quiet = vault.adapter.decay(m, as_of, explain=False)
            assert quiet == replace(full, why=""), m.id
            assert full.why  # every format explains itself
            checked += 1
        formats.add(vault.format)
    assert len(formats) == 5 and checked > 50


def test_rows_carry_the_numbers_and_give_the_explanation_on_demand(own_fixtures_dir: Path) -> None:
    catalog = open_catalog(own_fixtures_dir)
    for vault in catalog.vaults:
        for m in vault.memories[:5]:
            row = memory_row(vault.name, m, AS_OF)
            full = decay_of(m, AS_OF)
            assert row.info == replace(full, why="")
            assert row.full_info() == full
            assert (row.health, row.status, row.strength, row.expires_on) == (
                full.health.value,
                full.status,
                full.strength,
                full.expires_on,
            )
