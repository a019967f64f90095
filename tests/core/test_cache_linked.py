"""A vault read from the store is linked from its stored per-file scans, and stays relinkable."""

from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path

import pytest

from memlens.core.formats import adapter_for
from memlens.core.identity import ByIdentity, by_identity
from memlens.core.model import ScanResult
from memlens.core.scan.vault import Vault, discover, rescan_paths, save_cache, scan_vault

#: The own test vaults; the formats below run where one exists (all five
#: once every vault is written).
OWN = Path(__file__).resolve().parents[1] / "fixtures"
LINKED = tuple(
    f
    for f in (
        "observation-v1",
        "project-ocean",
        "cognitive-memory",
        "dream-cycle",
        "experience-records",
    )
    if (OWN / f).is_dir()
)


def assert_same(got: ScanResult, want: ScanResult) -> None:
    assert [m.id for m in got.memories] == [m.id for m in want.memories]
    assert got.memories == want.memories
    assert got.problems == want.problems
    assert got.ref_problems == want.ref_problems
    assert got.records == want.records


def fresh(root: Path, fmt: str) -> Vault:
    (vault,) = [v for v in discover(root) if v.format == fmt]
    return vault


def _rel(vault: Vault, path: Path) -> str:
    return path.relative_to(vault.root).as_posix()


def memory_files(vault: Vault) -> list[Path]:
    return [vault.root / rel for rel, fs in vault.scans.items() if fs.memories]


def grow(path: Path, text: str) -> None:
    """Add `text` to a memory file as an agent would (a new record in a JSON Lines store)."""
    if path.suffix == ".jsonl":
        record = {
            "id": f"exp_{abs(hash(text)) % 10**8}",
            "type": "observation",
            "created_at": "2026-11-20T10:00:00Z",
            "content": {"text": text},
        }
        path.write_bytes(path.read_bytes() + (json.dumps(record) + "\n").encode())
    else:
        path.write_bytes(path.read_bytes() + f"\n{text}\n".encode())


#: Formats whose fixture edits above always take the fast relink (the
#: dream-cycle fixture repeats an id, which always needs a full link).
FAST_RELINK = ("observation-v1", "project-ocean", "cognitive-memory", "experience-records")

#: Formats whose link builds no memory objects of its own (the experience
#: store's link applies views and pins to fresh objects).
PER_FILE_OBJECTS = ("observation-v1", "project-ocean", "cognitive-memory", "dream-cycle")


def test_by_identity_is_rekeyed_after_a_round_trip() -> None:
    items = [object(), object()]
    table = by_identity(items)
    got = pickle.loads(pickle.dumps((items, table)))
    again_items, again = got
    assert isinstance(again, ByIdentity)
    assert again == {id(x): x for x in again_items}


@pytest.mark.parametrize("fmt", LINKED)
def test_unchanged_vault_is_linked_once_from_the_stored_scans(
    own_fixtures_copy: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store keeps per-file rows, not the linked result (it would be rewritten
    whole for any change): an unchanged vault parses nothing and links once."""
    first = scan_vault(fresh(own_fixtures_copy, fmt), cache=True)
    assert first.cache_stats is not None and first.cache_stats.saved
    adapter = adapter_for(fmt)
    calls: list[int] = []
    real_link = type(adapter).link

    def counting_link(self: object, root: Path, scans: object) -> ScanResult:
        calls.append(1)
        return real_link(self, root, scans)  # type: ignore[arg-type]

    monkeypatch.setattr(type(adapter), "link", counting_link)
    again = scan_vault(fresh(own_fixtures_copy, fmt), cache=True)
    assert calls == [1]
    stats = again.cache_stats
    assert stats is not None and stats.reused == len(again.scans) and stats.parsed == 0
    assert_same(again.result, adapter.scan(again.root))
    if fmt in PER_FILE_OBJECTS:
        # The result's memories are the very objects of the per-file scans.
        per_file = {id(m) for fs in again.scans.values() for m in fs.memories}
        assert all(id(m) in per_file for m in again.result.memories)


@pytest.mark.parametrize("fmt", LINKED)
def test_a_changed_file_is_linked_not_served_from_the_cache(
    own_fixtures_copy: Path, fmt: str
) -> None:
    vault = scan_vault(fresh(own_fixtures_copy, fmt), cache=True)
    target = memory_files(vault)[0]
    grow(target, "changed text zanzibarquux")
    again = scan_vault(fresh(own_fixtures_copy, fmt), cache=True)
    assert again.cache_stats is not None and again.cache_stats.parsed == 1
    assert_same(again.result, again.adapter.scan(again.root))
    rel = target.relative_to(again.root).as_posix()
    assert any("zanzibarquux" in m.body for m in again.result.memories if m.path == rel)


@pytest.mark.parametrize("fmt", LINKED)
def test_relink_after_a_cached_start_equals_a_full_scan(
    own_fixtures_copy: Path, tmp_path: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same edits, from a cached result and from a freshly linked one:
    each rescan equals a full link, and the cached link_state serves the
    fast relink exactly as often as a fresh one does."""
    reference = tmp_path / "reference"
    shutil.copytree(own_fixtures_copy, reference, symlinks=True)
    scan_vault(fresh(own_fixtures_copy, fmt), cache=True)
    vault = scan_vault(fresh(own_fixtures_copy, fmt), cache=True)  # result from the cache
    assert vault.cache_stats is not None and vault.cache_stats.reused == len(vault.scans)
    assert vault.result.link_state
    other = scan_vault(fresh(reference, fmt), cache=False)
    adapter = vault.adapter
    full_links: list[Path] = []
    real_link = type(adapter).link

    def counting_link(self: object, root: Path, scans: object) -> ScanResult:
        full_links.append(root)
        return real_link(self, root, scans)  # type: ignore[arg-type]

    files = memory_files(vault)
    clean = [p for p in files if not vault.scans[_rel(vault, p)].problems] or files
    monkeypatch.setattr(type(adapter), "link", counting_link)
    for n, path in enumerate((clean[0], clean[len(clean) // 2])):
        for v in (vault, other):
            target = v.root / _rel(vault, path)
            grow(target, f"Edited after a cached start {n}.")
            got = rescan_paths(v, [target])
            assert_same(got, real_link(adapter, v.root, dict(v.scans)))
    assert full_links.count(vault.root) == full_links.count(other.root)
    if fmt in FAST_RELINK:
        assert vault.root not in full_links
    removed = files[-1]
    removed.unlink()
    monkeypatch.setattr(type(adapter), "link", real_link)
    assert_same(rescan_paths(vault, [removed]), vault.adapter.scan(vault.root))


@pytest.mark.parametrize("fmt", LINKED)
def test_save_cache_after_rescans_keeps_a_usable_result(own_fixtures_copy: Path, fmt: str) -> None:
    vault = scan_vault(fresh(own_fixtures_copy, fmt), cache=True)
    path = memory_files(vault)[-1]
    grow(path, "One more line.")
    rescan_paths(vault, [path])
    assert save_cache(vault).saved
    again = scan_vault(fresh(own_fixtures_copy, fmt), cache=True)
    assert again.cache_stats is not None and again.cache_stats.parsed == 0
    assert_same(again.result, again.adapter.scan(again.root))
