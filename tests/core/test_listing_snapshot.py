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

from memlens.core.formats import adapters
from memlens.core.listing import rows_for_vault, snapshot
from memlens.core.listing.rows import MemoryRow
from memlens.core.listing.snapshot import BLOB, PATCH_BLOB, save_rows, stored_rows
from memlens.core.scan.cache import cache_path
from memlens.core.scan.vault import Vault, discover, rescan_paths, save_cache, scan_vault

AS_OF = date(2026, 11, 22)
#: Every registered format (a new one is covered without editing this file).
FORMATS = tuple(adapter.format_id for adapter in adapters())
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
    # Equal is not enough: kept values are shared, never -0.0 for 0.0 or 1 for 1.0.
    assert [repr(_shape(r)) for r in kept] == [repr(_shape(r)) for r in linked]
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
        conn.execute("UPDATE blobs SET value = ? WHERE name = ?", (b"not zstd", BLOB))
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


def _written(writes: list[object]) -> list[set[str]]:
    """The names of the blobs each store write held."""
    return [set(args[3]) for args in writes]  # type: ignore[index]


def _append_line(path: Path) -> None:
    path.write_bytes(path.read_bytes() + b"\nOne more line.\n")


def _linked_again(root: Path, fmt: str) -> tuple[Vault, list[MemoryRow]]:
    """A new start: the vault read again (store saved), its rows taken as kept if they are."""
    vault = _scanned(root, fmt)
    held = snapshot.kept_rows(vault, AS_OF)
    memories = held.matching(vault, AS_OF)
    if memories is None:
        return vault, []
    rows = held.linked(vault)
    snapshot.attach(rows, memories)
    return vault, rows


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_changed_vault_gets_a_patch_and_its_next_start_takes_the_patched_rows(
    own_fixtures_copy: Path, fmt: str, writes: list[object]
) -> None:
    vault = _scanned(own_fixtures_copy, fmt)
    assert save_rows(vault, rows_for_vault(vault, AS_OF), AS_OF)
    assert _written(writes) == [{BLOB, snapshot.KEY_BLOB, PATCH_BLOB, snapshot.PATCH_KEY_BLOB}]
    # One file changed: the patch holds its rows, and only those.
    changed = sorted({m.abs_path for m in vault.memories})[-1]
    _append_line(changed)
    again = _scanned(own_fixtures_copy, fmt)
    assert snapshot.kept_rows(again, AS_OF).matching(again, AS_OF) is None
    linked = rows_for_vault(again, AS_OF)
    given = rows_for_vault(again, AS_OF)
    for r in given:
        r.order = -1  # the app's list renumbers the rows it shows while they are kept
    assert save_rows(again, given, AS_OF)
    assert _written(writes)[1:] == [{PATCH_BLOB, snapshot.PATCH_KEY_BLOB}]  # the rows stay
    conn = sqlite3.connect(cache_path(vault.root))
    (blob,) = conn.execute("SELECT value FROM blobs WHERE name = ?", (PATCH_BLOB,)).fetchone()
    conn.close()
    patch = snapshot._doc(blob)
    assert patch is not None and patch["files"] == [changed.relative_to(vault.root).as_posix()]
    assert len(patch["row_file"]) == sum(m.abs_path == changed for m in again.memories)
    _vault, rows = _linked_again(own_fixtures_copy, fmt)
    assert [_shape(r) for r in rows] == [_shape(r) for r in linked]
    assert [r.full_info() for r in rows] == [r.full_info() for r in linked]
    # Nothing changed since: nothing written.
    assert save_rows(again, rows_for_vault(again, AS_OF), AS_OF)
    assert len(writes) == 2


def test_a_patch_follows_files_added_moved_and_gone(
    own_fixtures_copy: Path, writes: list[object]
) -> None:
    vault = _scanned(own_fixtures_copy, "observation-v1")
    assert save_rows(vault, rows_for_vault(vault, AS_OF), AS_OF)
    files = sorted({m.abs_path for m in vault.memories})
    assert len(files) >= 3
    first, second = files[0], files[1]
    text = first.read_text(encoding="utf-8")
    ident = vault.memories[[m.abs_path for m in vault.memories].index(first)].id
    # A new file sorting first, one renamed to sort last, one gone.
    first.with_name("aaa-new.md").write_text(
        text.replace(f"id: {ident}", "id: obs-added-0001"), encoding="utf-8"
    )
    second.rename(second.with_name("zzz-moved.md"))
    files[2].unlink()
    again = _scanned(own_fixtures_copy, "observation-v1")
    linked = rows_for_vault(again, AS_OF)
    assert "obs-added-0001" in {r.id for r in linked}
    assert save_rows(again, linked, AS_OF)
    assert _written(writes)[1:] == [{PATCH_BLOB, snapshot.PATCH_KEY_BLOB}]
    _vault, rows = _linked_again(own_fixtures_copy, "observation-v1")
    assert [_shape(r) for r in rows] == [_shape(r) for r in linked]
    assert [r.order for r in rows] == list(range(len(rows)))


def test_a_vault_back_as_its_rows_were_made_drops_the_patch(
    own_fixtures_copy: Path, writes: list[object]
) -> None:
    vault = _scanned(own_fixtures_copy, "cognitive-memory")
    assert save_rows(vault, rows_for_vault(vault, AS_OF), AS_OF)
    path = vault.memories[0].abs_path
    original = path.read_bytes()
    _append_line(path)
    again = _scanned(own_fixtures_copy, "cognitive-memory")
    assert save_rows(again, rows_for_vault(again, AS_OF), AS_OF)
    path.write_bytes(original)
    back = _scanned(own_fixtures_copy, "cognitive-memory")
    # The patch was made for other files: not taken; the kept rows are.
    assert snapshot.kept_rows(back, AS_OF).matching(back, AS_OF) is None
    linked = rows_for_vault(back, AS_OF)
    assert save_rows(back, linked, AS_OF)
    assert _written(writes)[2:] == [{PATCH_BLOB, snapshot.PATCH_KEY_BLOB}]  # emptied
    _vault, rows = _linked_again(own_fixtures_copy, "cognitive-memory")
    assert [_shape(r) for r in rows] == [_shape(r) for r in linked]


def test_a_patch_too_big_or_damaged_is_not_used(
    own_fixtures_copy: Path, writes: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = _scanned(own_fixtures_copy, "project-ocean")
    assert save_rows(vault, rows_for_vault(vault, AS_OF), AS_OF)
    _append_line(vault.memories[0].abs_path)
    again = _scanned(own_fixtures_copy, "project-ocean")
    linked = rows_for_vault(again, AS_OF)
    assert save_rows(again, linked, AS_OF)
    conn = sqlite3.connect(cache_path(vault.root))
    with conn:
        conn.execute("UPDATE blobs SET value = ? WHERE name = ?", (b"not zstd", PATCH_BLOB))
    conn.close()
    held = snapshot.kept_rows(again, AS_OF)
    # The rows as kept, less the changed file's; none taken for linked rows.
    assert held.rows and len(held.rows) < len(_memory_rows(again))
    assert held.matching(again, AS_OF) is None
    # A patch may hold no row: every row is then written whole.
    monkeypatch.setattr(snapshot, "PATCH_MIN", 0)
    monkeypatch.setattr(snapshot, "PATCH_SHARE", 0.0)
    assert save_rows(again, linked, AS_OF)
    assert _written(writes)[-1] == {BLOB, snapshot.KEY_BLOB, PATCH_BLOB, snapshot.PATCH_KEY_BLOB}
    _vault, rows = _linked_again(own_fixtures_copy, "project-ocean")
    assert [_shape(r) for r in rows] == [_shape(r) for r in linked]


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
    # Paired, each row holds its memory's id and title, not a copy of its own.
    assert all(r.id is m.id for r, m in zip(rows, memories, strict=False))
    assert all(r.title is m.title for r, m in zip(rows, memories, strict=False) if m.title)
    shared = [
        (r.importance, m.importance)
        for r, m in zip(rows, memories, strict=False)
        if isinstance(m.importance, float) and m.importance
    ]
    assert all(a is b for a, b in shared)


def test_kept_rows_decode_one_object_per_repeated_value(own_fixtures_copy: Path) -> None:
    vault = _scanned(own_fixtures_copy, "cognitive-memory")
    assert save_rows(vault, rows_for_vault(vault, AS_OF), AS_OF)
    kept = stored_rows(vault, AS_OF)
    for column in ("kind", "health", "status", "when", "when_key"):
        # A tuple with a zero in it is not shared (-0.0 == 0.0; `test_listing_sharing`).
        values = [v for r in kept if not (isinstance(v := getattr(r, column), tuple) and 0 in v)]
        if column in ("kind", "health", "status"):  # the fixture repeats these
            assert len(values) > len(set(values)), column
        assert len({id(v) for v in values}) == len(set(values)), column
    tags = [t for r in kept for t in r.tags]
    assert len(tags) > len(set(tags))  # the fixture repeats tags: each is one object
    assert len({id(t) for t in tags}) == len(set(tags))


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


# ------------------------------------------------------------------ the files seal


def _no_shas(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(self: object) -> None:
        raise AssertionError("the store's file rows were read")

    monkeypatch.setattr(snapshot.StoreReader, "shas", refused)


@pytest.mark.parametrize("fmt", FORMATS)
def test_sealed_files_are_not_read_again_until_a_file_row_is_written(
    own_fixtures_copy: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While no file row changed since the rows were kept, a start reads none of them.

    The rows are the same either way; a changed file's row still goes (the
    store's token changed with it, so the rows are checked one by one again).
    """
    vault = _scanned(own_fixtures_copy, fmt)
    assert save_rows(vault, rows_for_vault(vault, AS_OF), AS_OF)
    read = [_shape(r) for r in stored_rows(vault, AS_OF)]
    with monkeypatch.context() as patched:
        _no_shas(patched)
        assert [_shape(r) for r in stored_rows(vault, AS_OF)] == read
        held = snapshot.kept_rows(vault, AS_OF)
        assert held.whole and held.matching(vault, AS_OF) is not None
    target = vault.memories[0]
    _append_line(target.abs_path)
    rescan_paths(vault, [target.abs_path])
    assert save_cache(vault).saved  # a file row written: a new token
    with monkeypatch.context() as patched:
        _no_shas(patched)
        with pytest.raises(AssertionError, match="file rows were read"):
            stored_rows(vault, AS_OF)
    kept = stored_rows(vault, AS_OF)
    assert len(kept) == len(read) - sum(m.abs_path == target.abs_path for m in vault.memories)


def test_the_seal_is_written_only_for_the_files_the_rows_were_made_from(
    own_fixtures_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No seal when the store holds other file rows than the rows were made from."""
    from memlens.core.store.files import put_blob_if_files

    vault = _scanned(own_fixtures_copy, "cognitive-memory")
    target = vault.memories[0]
    moved = Vault(root=vault.root, format=vault.format, rel=".")
    scan_vault(moved, cache=True)
    _append_line(target.abs_path)
    rescan_paths(moved, [target.abs_path])
    assert save_cache(moved).saved  # the store now holds other bytes than `vault` read
    assert save_rows(vault, rows_for_vault(vault, AS_OF), AS_OF)
    conn = sqlite3.connect(cache_path(vault.root))
    sealed = conn.execute(
        "SELECT value FROM blobs WHERE name = ?", (snapshot.FILES_BLOB,)
    ).fetchone()
    conn.close()
    assert sealed is None
    # The rows are checked one by one: the changed file's rows are left out.
    assert target.id not in {r.id for r in stored_rows(vault, AS_OF)}
    with pytest.raises(ValueError):
        put_blob_if_files(vault.root, vault.format, "x", "files-token", {}, b"")


def test_a_seal_that_cannot_be_written_only_means_the_files_are_read(
    own_fixtures_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An I/O error while sealing: the rows are kept, no seal, and the next start checks them."""
    from memlens.core.store import files as store_files

    vault = _scanned(own_fixtures_copy, "project-ocean")
    real_write = store_files.write
    calls = [0]

    def failing(conn: sqlite3.Connection) -> object:
        calls[0] += 1
        if calls[0] == 2:  # the rows' blobs, then the seal
            raise sqlite3.OperationalError("disk I/O error")
        return real_write(conn)

    monkeypatch.setattr(store_files, "write", failing)
    assert save_rows(vault, rows_for_vault(vault, AS_OF), AS_OF)
    assert calls[0] == 2
    monkeypatch.setattr(store_files, "write", real_write)
    conn = sqlite3.connect(cache_path(vault.root))
    names = {r[0] for r in conn.execute("SELECT name FROM blobs")}
    conn.close()
    assert BLOB in names and snapshot.FILES_BLOB not in names
    assert [_shape(r) for r in stored_rows(vault, AS_OF)] == [
        _shape(r) for r in _memory_rows(vault)
    ]
