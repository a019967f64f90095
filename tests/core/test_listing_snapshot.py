"""List rows kept in the store for the next start (core/listing/snapshot.py).

The kept rows equal the linked rows they were made from, field for field
(without the memory); a file changed in the store since leaves its rows
out; another date, a damaged blob or an emptied store gives none.
"""

from __future__ import annotations

import sqlite3
from dataclasses import fields
from datetime import date
from pathlib import Path

import pytest

from memlens.core.formats import ADAPTERS
from memlens.core.listing import rows_for_vault, snapshot
from memlens.core.listing.rows import MemoryRow
from memlens.core.listing.snapshot import BLOB, save_rows, stored_rows
from memlens.core.scan.cache import cache_path
from memlens.core.scan.vault import Vault, discover, rescan_paths, save_cache, scan_vault

AS_OF = date(2026, 11, 22)
#: Every registered format (a new one is covered without editing this file).
FORMATS = tuple(adapter.format_id for adapter in ADAPTERS)
#: What a kept row does not hold: the memory and its decay details come with the linked row.
NOT_KEPT = {"memory", "problem", "info", "_key"}


#: Each test with a cache folder of its own (`private_cache` in tests/conftest.py).
pytestmark = pytest.mark.usefixtures("private_cache")


@pytest.fixture
def writes(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every write of kept rows to a store (`put_blobs` calls), the writes still made."""
    seen: list[object] = []
    real = snapshot.put_blobs

    def counting(*args: object, **kwargs: object) -> bool:
        seen.append(args)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(snapshot, "put_blobs", counting)
    return seen


def _scanned(root: Path, fmt: str) -> Vault:
    (found,) = [v for v in discover(root) if v.format == fmt]
    vault = Vault(root=found.root, format=fmt, rel=".")
    scan_vault(vault, cache=True)
    return vault


def _shape(row: MemoryRow) -> dict[str, object]:
    return {f.name: getattr(row, f.name) for f in fields(row) if f.name not in NOT_KEPT}


def _memory_rows(vault: Vault) -> list[MemoryRow]:
    return [r for r in rows_for_vault(vault, AS_OF) if r.memory is not None]


@pytest.mark.parametrize("fmt", FORMATS)
def test_kept_rows_are_the_linked_rows_without_their_memory(
    own_fixtures_copy: Path, fmt: str
) -> None:
    vault = _scanned(own_fixtures_copy, fmt)
    linked = _memory_rows(vault)
    assert linked
    assert save_rows(vault, rows_for_vault(vault, AS_OF), AS_OF)
    kept = stored_rows(vault, AS_OF)
    assert [_shape(r) for r in kept] == [_shape(r) for r in linked]
    assert all(r.pending and r.memory is None and r.info is None for r in kept)
    assert [r.key for r in kept] == [r.key for r in linked]


def test_a_file_changed_in_the_store_leaves_its_rows_out(own_fixtures_copy: Path) -> None:
    vault = _scanned(own_fixtures_copy, "project-ocean")
    save_rows(vault, rows_for_vault(vault, AS_OF), AS_OF)
    target = vault.memories[0]
    path = target.abs_path
    path.write_bytes(path.read_bytes() + b"\nOne more line.\n")
    rescan_paths(vault, [path])
    assert save_cache(vault).saved  # the store now holds the new bytes
    kept = stored_rows(vault, AS_OF)
    assert target.id not in {r.id for r in kept}
    assert len(kept) == len(_memory_rows(vault)) - 1


def test_another_date_a_damaged_blob_or_an_emptied_store_give_none(
    own_fixtures_copy: Path,
) -> None:
    vault = _scanned(own_fixtures_copy, "cognitive-memory")
    save_rows(vault, rows_for_vault(vault, AS_OF), AS_OF)
    assert stored_rows(vault, AS_OF)
    assert stored_rows(vault, date(2026, 11, 23)) == []
    conn = sqlite3.connect(cache_path(vault.root))
    with conn:
        conn.execute("UPDATE blobs SET value = ? WHERE name = ?", (b"not zlib", BLOB))
    conn.close()
    assert stored_rows(vault, AS_OF) == []
    save_rows(vault, rows_for_vault(vault, AS_OF), AS_OF)  # remade, then the store emptied
    assert stored_rows(vault, AS_OF)
    conn = sqlite3.connect(cache_path(vault.root))
    with conn:
        conn.execute("UPDATE meta SET value = 'other' WHERE key = 'code'")
    conn.close()
    assert stored_rows(vault, AS_OF) == []


def test_nothing_is_rewritten_when_nothing_changed(
    own_fixtures_copy: Path, writes: list[object]
) -> None:
    vault = _scanned(own_fixtures_copy, "observation-v1")
    save_rows(vault, rows_for_vault(vault, AS_OF), AS_OF)
    assert len(writes) == 1
    store = cache_path(vault.root)
    conn = sqlite3.connect(store)
    before = conn.execute("SELECT value FROM blobs WHERE name = ?", (BLOB,)).fetchone()
    assert save_rows(vault, rows_for_vault(vault, AS_OF), AS_OF)
    assert len(writes) == 1  # same files, same rows, same date: nothing written
    with conn:
        conn.execute("UPDATE blobs SET value = ? WHERE name = ?", (b"damaged", BLOB))
    assert save_rows(vault, rows_for_vault(vault, AS_OF), AS_OF)
    assert len(writes) == 2  # a damaged blob is written again
    after = conn.execute("SELECT value FROM blobs WHERE name = ?", (BLOB,)).fetchone()
    conn.close()
    assert before is not None and after == before


def test_rows_nearly_all_shown_are_left_as_kept(
    own_fixtures_copy: Path, writes: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = _scanned(own_fixtures_copy, "experience-records")
    linked = rows_for_vault(vault, AS_OF)
    save_rows(vault, linked, AS_OF)
    assert len(writes) == 1
    count = len(_memory_rows(vault))
    # One row's file changed since: the others still show, the kept rows stay.
    monkeypatch.setattr(snapshot, "_key", lambda *_a: b"another key")  # as if a file changed
    assert save_rows(vault, linked, AS_OF, shown=count)
    assert len(writes) == 1
    shown = int(count * snapshot.FRESH_ENOUGH) - 1  # too few shown: written again
    assert save_rows(vault, linked, AS_OF, shown=shown)
    assert len(writes) == 2


@pytest.mark.parametrize("fmt", FORMATS)
def test_kept_rows_of_an_unchanged_vault_are_taken_for_its_linked_rows(
    own_fixtures_copy: Path, fmt: str
) -> None:
    vault = _scanned(own_fixtures_copy, fmt)
    linked = rows_for_vault(vault, AS_OF)
    assert save_rows(vault, linked, AS_OF)
    again = _scanned(own_fixtures_copy, fmt)  # a new start: the same files, linked again
    held = snapshot.kept_rows(again, AS_OF)
    memories = held.matching(again, AS_OF)
    assert memories is not None and memories == again.memories
    rows = held.linked(again)
    snapshot.attach(rows, memories)
    # Field for field what the rows would have been, problems included;
    # each row's decay details worked out when asked, as the linked row's.
    assert [_shape(r) for r in rows] == [_shape(r) for r in linked]
    count = len(memories)
    assert [r.memory for r in rows[:count]] == memories
    assert [r.problem for r in rows[count:]] == [r.problem for r in linked[count:]]
    assert not any(r.pending for r in rows)
    assert [r.full_info() for r in rows] == [r.full_info() for r in linked]


def test_kept_rows_are_not_taken_for_a_changed_vault_or_another_date(
    own_fixtures_copy: Path,
) -> None:
    vault = _scanned(own_fixtures_copy, "cognitive-memory")
    assert save_rows(vault, rows_for_vault(vault, AS_OF), AS_OF)
    assert snapshot.kept_rows(vault, AS_OF).matching(vault, AS_OF) is not None
    # Another date: no kept rows at all.
    assert snapshot.kept_rows(vault, date(2026, 11, 23)).matching(vault, AS_OF) is None
    # A file changed (its row in the store too): some kept rows still show,
    # none is taken for a linked row.
    path = vault.memories[0].abs_path
    path.write_bytes(path.read_bytes() + b"\nOne more line.\n")
    again = _scanned(own_fixtures_copy, "cognitive-memory")
    held = snapshot.kept_rows(again, AS_OF)
    assert held.rows and held.matching(again, AS_OF) is None
    # Every file as kept but the seal damaged: not taken either.
    path.write_bytes(path.read_bytes()[: -len(b"\nOne more line.\n")])
    again = _scanned(own_fixtures_copy, "cognitive-memory")
    assert snapshot.kept_rows(again, AS_OF).matching(again, AS_OF) is not None
    conn = sqlite3.connect(cache_path(vault.root))
    with conn:
        conn.execute("UPDATE blobs SET value = ? WHERE name = ?", (b"\0" * 64, snapshot.KEY_BLOB))
    conn.close()
    held = snapshot.kept_rows(again, AS_OF)
    assert held.rows and held.matching(again, AS_OF) is None
