"""Per-file scanning: scan == link(scan_file ...), and rescans equal full scans."""

from __future__ import annotations

import json
import pickle
import random
import re
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest

from memlens.core.formats import adapter_for
from memlens.core.formats.files import rel_posix
from memlens.core.model import FileScan, ScanResult
from memlens.core.scan import parallel as scan_parallel
from memlens.core.scan.cache import scan_files
from memlens.core.scan.memory_diff import diff_results
from memlens.core.scan.vault import (
    Vault,
    discover,
    open_catalog,
    rescan_paths,
    scan_progressive,
    scan_vault,
    stale_paths,
)

ALL_FORMATS = (
    "dream-cycle",
    "observation-v1",
    "experience-records",
    "project-ocean",
    "cognitive-memory",
)
#: The formats with an own test vault (all five once every vault is written).
OWN = Path(__file__).resolve().parents[1] / "fixtures"
FORMATS = tuple(f for f in ALL_FORMATS if (OWN / f).is_dir())
DEMO = Path(__file__).resolve().parents[2] / "core" / "demo_vaults"


def demo_copy(tmp_path: Path, fmt: str) -> Path:
    """A writable copy of one bundled demo vault (for one format's own rules)."""
    return Path(shutil.copytree(DEMO / fmt, tmp_path / "demo" / fmt))


def assert_same(got: ScanResult, want: ScanResult) -> None:
    assert [m.id for m in got.memories] == [m.id for m in want.memories]
    assert got.memories == want.memories
    assert got.problems == want.problems
    assert got.ref_problems == want.ref_problems
    assert got.records == want.records


def vault_of(root: Path, fmt: str) -> Vault:
    (vault,) = [v for v in discover(root) if v.format == fmt]
    return vault


def per_file(vault: Vault) -> dict[str, FileScan]:
    adapter = vault.adapter
    return {
        rel_posix(vault.root, p): adapter.scan_file(vault.root, p)
        for p in adapter.files(vault.root)
    }


@pytest.mark.parametrize("fmt", FORMATS)
def test_scan_is_link_over_scan_file(own_fixtures_dir: Path, fmt: str) -> None:
    vault = vault_of(own_fixtures_dir, fmt)
    adapter = vault.adapter
    full = adapter.scan(vault.root)
    assert full.memories, "fixture vault should hold memories"
    assert_same(adapter.link(vault.root, per_file(vault)), full)


@pytest.mark.parametrize("fmt", FORMATS)
def test_link_is_repeatable(own_fixtures_dir: Path, fmt: str) -> None:
    """Linking the same FileScans again (as a rescan does) never accumulates state."""
    vault = vault_of(own_fixtures_dir, fmt)
    adapter = vault.adapter
    scans = per_file(vault)
    first = adapter.link(vault.root, scans)
    snapshot = pickle.loads(pickle.dumps(first))
    second = adapter.link(vault.root, scans)
    assert_same(second, snapshot)
    assert_same(second, adapter.scan(vault.root))


@pytest.mark.parametrize("fmt", FORMATS)
def test_scan_file_with_bytes_equals_reading(own_fixtures_dir: Path, fmt: str) -> None:
    vault = vault_of(own_fixtures_dir, fmt)
    adapter = vault.adapter
    for path in adapter.files(vault.root):
        read = adapter.scan_file(vault.root, path)
        given = adapter.scan_file(vault.root, path, path.read_bytes())
        assert given == read, path


@pytest.mark.parametrize("fmt", FORMATS)
def test_files_are_owned_and_sorted(own_fixtures_dir: Path, fmt: str) -> None:
    vault = vault_of(own_fixtures_dir, fmt)
    adapter = vault.adapter
    files = adapter.files(vault.root)
    rels = [rel_posix(vault.root, p) for p in files]
    assert all(adapter.owns(vault.root, r) for r in rels)
    orders = [adapter.scan_file(vault.root, p).order for p in files]
    assert orders == sorted(orders)
    for rel in rels[:3]:
        folder, _, name = rel.rpartition("/")
        for junk in (f".{name}.swp", f"{name}~", f".memlens-tmp-abc-{name}"):
            junk_rel = f"{folder}/{junk}" if folder else junk
            assert not adapter.owns(vault.root, junk_rel), junk_rel


@pytest.mark.parametrize("fmt", FORMATS)
def test_file_scans_survive_pickle(own_fixtures_dir: Path, fmt: str) -> None:
    vault = vault_of(own_fixtures_dir, fmt)
    scans = per_file(vault)
    again: dict[str, FileScan] = pickle.loads(pickle.dumps(scans))
    assert_same(vault.adapter.link(vault.root, again), vault.adapter.scan(vault.root))


# --------------------------------------------------------------------------- rescans


def _sibling(path: Path, prefix: str) -> Path:
    return path.with_name(f"{prefix}{path.name}")


def _edit(path: Path) -> None:
    data = path.read_bytes()
    if path.suffix == ".jsonl":
        # A new valid-looking line and a broken one.
        path.write_bytes(data + b'\n{"id": "added-by-test", "x": 1}\n{broken\n')
    elif path.suffix == ".json":
        path.write_bytes(data.replace(b"1", b"2", 1) if b"1" in data else b"{}")
    else:
        path.write_bytes(data + b"\n\n## Edited by the test\n\nMore text.\n")


def _cases(vault: Vault) -> list[str]:
    """A few files of the vault to change: first, middle and last in scan order."""
    rels = [rel_posix(vault.root, p) for p in vault.adapter.files(vault.root)]
    picks = {rels[0], rels[len(rels) // 2], rels[-1]}
    return sorted(picks)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("change", ["edit", "remove", "rename", "add"])
def test_rescan_after_one_change_equals_full_scan(
    own_fixtures_copy: Path, fmt: str, change: str
) -> None:
    root = vault_of(own_fixtures_copy, fmt).root
    for rel in _cases(vault_of(own_fixtures_copy, fmt)):
        # Each case starts from a fresh scan of the vault as the last one left it.
        vault = scan_vault(Vault(root=root, format=fmt, rel="."))
        path = root / rel
        if not path.exists():
            continue
        touched = [path]
        if change == "edit":
            _edit(path)
        elif change == "remove":
            path.unlink()
        elif change == "rename":
            target = _sibling(path, "renamed-")
            path.rename(target)
            touched.append(target)
        else:
            target = _sibling(path, "copy-")
            shutil.copyfile(path, target)
            touched = [target]
        got = rescan_paths(vault, touched)
        want = vault.adapter.scan(vault.root)
        assert_same(got, want)
        assert vault.result is got
        # The vault's own bookkeeping follows the disk.
        listed = [rel_posix(root, p) for p in vault.adapter.files(root)]
        assert list(vault.scans) == listed
        assert set(vault.stamps) <= set(listed)
        assert all(p.exists() for p in stale_paths(vault))


@pytest.mark.parametrize("fmt", FORMATS)
def test_rescan_of_a_removed_folder(own_fixtures_copy: Path, fmt: str) -> None:
    vault = scan_vault(vault_of(own_fixtures_copy, fmt))
    rels = [rel_posix(vault.root, p) for p in vault.adapter.files(vault.root)]
    folders = sorted({r.rpartition("/")[0] for r in rels if "/" in r})
    if not folders:
        pytest.skip("every file of this format sits at the vault root")
    gone = vault.root / folders[0]
    shutil.rmtree(gone)
    assert_same(rescan_paths(vault, [gone]), vault.adapter.scan(vault.root))


@pytest.mark.parametrize("fmt", FORMATS)
def test_rescan_ignores_foreign_and_outside_paths(
    own_fixtures_copy: Path, tmp_path: Path, fmt: str
) -> None:
    vault = scan_vault(vault_of(own_fixtures_copy, fmt))
    before = vault.result
    folder = min(m.abs_path.parent for m in vault.memories)
    swap = folder / ".obs.md.swp"
    swap.parent.mkdir(parents=True, exist_ok=True)
    swap.write_text("junk")
    outside = tmp_path / "elsewhere.md"
    outside.write_text("---\n---\n")
    got = rescan_paths(vault, [swap, outside, "no/such/file.md"])
    assert_same(got, before)


def test_rescan_dream_cycle_ids_follow_the_other_file(tmp_path: Path) -> None:
    """A title in both markdown files gets `-2` in the archive, and loses it when freed."""
    root = tmp_path / "dc"
    root.mkdir()
    section = "## Same title\n<!-- dc:type=fact dc:importance=5 dc:date=2026-11-01 -->\nBody.\n"
    (root / "observations.md").write_text("# Obs\n\n" + section)
    (root / "archived-observations.md").write_text("# Archived\n\n" + section)
    vault = scan_vault(vault_of(root.parent, "dream-cycle"))
    ids = sorted(m.id for m in vault.memories)
    assert ids[1] == ids[0] + "-2"
    (root / "observations.md").write_text("# Obs\n\n## Another\nText.\n")
    got = rescan_paths(vault, [root / "observations.md"])
    assert_same(got, vault.adapter.scan(root))
    assert ids[0] in {m.id for m in got.memories}


def test_rescan_observation_incorporation_is_recomputed(own_fixtures_copy: Path) -> None:
    vault = scan_vault(vault_of(own_fixtures_copy, "observation-v1"))
    incorporated = [m for m in vault.memories if m.native.get("incorporated_by")]
    assert incorporated
    comps = {c for m in incorporated for c in m.native["incorporated_by"]}
    for comp in [m for m in vault.memories if m.id in comps]:
        comp.abs_path.unlink()
        rescan_paths(vault, [comp.abs_path])
    assert not [m for m in vault.memories if m.native.get("incorporated_by")]
    assert_same(vault.result, vault.adapter.scan(vault.root))


def with_state(root: Path) -> Path:
    """Give a cognitive-memory vault a `_state.json` entry for each memory."""
    vault = scan_vault(vault_of(root.parent, "cognitive-memory"))
    entries = {
        m.id: {"access_count": 2, "last_accessed": "2026-11-01T08:00:00+00:00"}
        for m in vault.memories
    }
    (root / "_state.json").write_text(json.dumps({"version": 1, "entries": entries}))
    return root


def test_rescan_cognitive_state_change(tmp_path: Path) -> None:
    root = with_state(demo_copy(tmp_path, "cognitive-memory"))
    vault = scan_vault(vault_of(root.parent, "cognitive-memory"))
    state = vault.root / "_state.json"
    assert any(m.native.get("has_state") for m in vault.memories)
    state.write_text('{"entries": {}}')
    got = rescan_paths(vault, [state])
    assert not any(m.native.get("has_state") for m in got.memories)
    assert_same(got, vault.adapter.scan(vault.root))
    state.unlink()
    assert_same(rescan_paths(vault, [state]), vault.adapter.scan(vault.root))


def test_rescan_experience_wal_erasure(own_fixtures_copy: Path) -> None:
    vault = scan_vault(vault_of(own_fixtures_copy, "experience-records"))
    live = next(m for m in vault.memories if not m.tombstoned and not m.archived)
    wal = vault.root / "wal.jsonl"
    op = (
        '{"wal_id": "wal_test", "ops": [{"op": "tombstone", "target": "exp", '
        f'"id": "{live.id}", "reason": "gdpr_erasure"}}]}}\n'
    )
    with wal.open("a", encoding="utf-8") as fh:
        fh.write("\n" + op)
    got = rescan_paths(vault, [wal])
    erased = next(m for m in got.memories if m.id == live.id)
    assert erased.tombstoned and erased.body == ""
    assert_same(got, vault.adapter.scan(vault.root))


# --------------------------------------------------------------------------- progressive


@pytest.mark.parametrize("fmt", FORMATS)
def test_progressive_scan_ends_with_the_full_result(own_fixtures_dir: Path, fmt: str) -> None:
    vault = vault_of(own_fixtures_dir, fmt)
    steps = list(scan_progressive(vault, batch=5))
    assert steps[-1].done and all(not s.done for s in steps[:-1])
    final = steps[-1].result
    assert final is not None
    assert_same(final, vault.adapter.scan(vault.root))
    assert vault.result is final
    shown = {m.id for s in steps for m in s.memories}
    assert {m.id for m in final.memories} <= shown
    assert [s.files_done for s in steps] == sorted(s.files_done for s in steps)


@pytest.mark.parametrize("peek", [0, 3])
def test_progressive_scan_shows_rows_before_the_end(
    own_fixtures_dir: Path, monkeypatch: pytest.MonkeyPatch, peek: int
) -> None:
    """First rows come before the end: a batch of parsed files, or before them the
    few files a cold start parses before listing the vault (`cache.PEEK`)."""
    from memlens.core.scan import cache as scan_cache

    monkeypatch.setattr(scan_cache, "PEEK", peek)
    vault = vault_of(own_fixtures_dir, "observation-v1")
    steps = list(scan_progressive(vault, batch=10))
    first = steps[0]
    assert not first.done and len(first.memories) >= (1 if peek else 10)
    assert first.files_done < steps[-1].files_total
    if peek:
        assert first.files_done == first.files_total == peek  # before the listing


def test_parallel_parse_gives_the_same_result(
    own_fixtures_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan_parallel, "PARALLEL_MIN_FILES", 2)
    vault = vault_of(own_fixtures_dir, "observation-v1")
    adapter = adapter_for("observation-v1")
    steps = list(scan_files(adapter, vault.root, parallel=True))
    result = steps[-1].result
    assert result is not None and steps[-1].stats.parallel > 0
    assert_same(result, adapter.scan(vault.root))
    assert all(m.vault_root == vault.root for m in result.memories)


def test_open_catalog_keeps_per_file_scans(own_fixtures_dir: Path) -> None:
    catalog = open_catalog(own_fixtures_dir)
    assert {v.format for v in catalog.vaults} == set(FORMATS)
    for v in catalog.vaults:
        assert list(v.scans) == [rel_posix(v.root, p) for p in v.adapter.files(v.root)]
        assert set(v.stamps) <= set(v.scans)
        assert_same(v.result, v.adapter.scan(v.root))


# --------------------------------------------------------------------------- diffs for indexes


def test_diff_results_names_exactly_what_changed(tmp_path: Path) -> None:
    # Project Ocean ids are file names: a copied file is a new memory.
    vault = scan_vault(vault_of(demo_copy(tmp_path, "project-ocean").parent, "project-ocean"))
    rels = [r for r, fs in vault.scans.items() if len(fs.memories) == 1]
    edited, removed, copied = (vault.root / r for r in rels[:3])

    old = vault.result
    edited.write_bytes(edited.read_bytes() + b"\nMore.\n")
    changes = diff_results(old, rescan_paths(vault, [edited]))
    assert [m.abs_path for m in changes.changed] == [edited]
    assert not changes.added and not changes.removed

    old = vault.result
    gone_id = next(m.id for m in old.memories if m.abs_path == removed)
    removed.unlink()
    changes = diff_results(old, rescan_paths(vault, [removed]))
    assert [m.id for m in changes.removed] == [gone_id]
    assert not changes.added and not changes.changed

    old = vault.result
    new_path = copied.with_name("obs-2031-01-01-001.md")
    shutil.copyfile(copied, new_path)
    changes = diff_results(old, rescan_paths(vault, [new_path]))
    assert [m.abs_path for m in changes.added] == [new_path]
    assert not changes.changed and not changes.removed
    assert not vault.last_rescan_vault_wide


def test_vault_wide_file_marks_the_rescan(tmp_path: Path) -> None:
    root = with_state(demo_copy(tmp_path, "cognitive-memory"))
    vault = scan_vault(vault_of(root.parent, "cognitive-memory"))
    old = vault.result
    state = vault.root / "_state.json"
    state.write_text('{"entries": {}}')
    new = rescan_paths(vault, [state])
    assert vault.last_rescan_vault_wide
    assert not diff_results(old, new)  # same objects, updated in place ...
    everything = diff_results(old, new, everything=vault.last_rescan_vault_wide)
    assert len(everything.changed) == len(new.memories)  # ... so count them all


# --------------------------------------------------------------------------- append-only stores


def _append_lines(path: Path, *lines: str) -> None:
    with path.open("ab") as fh:
        fh.write("".join(line + "\n" for line in lines).encode("utf-8"))


NEW_EXPERIENCE = (
    '{"id": "exp_appended_by_test", "type": "observation", '
    '"created_at": "2026-11-20T10:00:00Z", "content": {"text": "Appended. Second sentence."}}'
)


def test_appended_experiences_parse_only_the_tail(own_fixtures_copy: Path) -> None:
    vault = scan_vault(vault_of(own_fixtures_copy, "experience-records"))
    path = vault.root / "experiences.jsonl"
    if not path.read_bytes().endswith(b"\n"):
        _append_lines(path)  # the fast path needs the old bytes to end a line
        rescan_paths(vault, [path])
    before = list(vault.scans["experiences.jsonl"].memories)
    _append_lines(path, NEW_EXPERIENCE, "{broken json", "")
    got = rescan_paths(vault, [path])
    after = vault.scans["experiences.jsonl"].memories
    # The lines read before are the very same objects: only the tail was parsed.
    assert all(a is b for a, b in zip(before, after, strict=False))
    assert len(after) == len(before) + 1
    assert_same(got, vault.adapter.scan(vault.root))
    assert "exp_appended_by_test" in {m.id for m in got.memories}


def test_rewritten_store_is_parsed_whole(own_fixtures_copy: Path) -> None:
    vault = scan_vault(vault_of(own_fixtures_copy, "experience-records"))
    path = vault.root / "experiences.jsonl"
    data = path.read_bytes()
    first_end = data.index(b"\n")
    # Change an early line (same length) and append: the prefix no longer matches.
    changed = data[:1] + (b" " if data[1:2] != b" " else b"\t") + data[2:]
    path.write_bytes(changed + b"\n" + NEW_EXPERIENCE.encode() + b"\n")
    assert first_end > 2
    got = rescan_paths(vault, [path])
    assert_same(got, vault.adapter.scan(vault.root))


def test_append_after_a_line_without_newline(own_fixtures_copy: Path) -> None:
    vault_root = vault_of(own_fixtures_copy, "experience-records").root
    path = vault_root / "experiences.jsonl"
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    vault = scan_vault(vault_of(own_fixtures_copy, "experience-records"))
    # Appending to an unterminated last line changes that line: parsed whole.
    with path.open("ab") as fh:
        fh.write(b"\n" + NEW_EXPERIENCE.encode() + b"\n")
    assert_same(rescan_paths(vault, [path]), vault.adapter.scan(vault.root))


def test_editing_one_section_changes_one_memory(own_fixtures_copy: Path) -> None:
    vault = scan_vault(vault_of(own_fixtures_copy, "dream-cycle"))
    target = next(m for m in vault.memories if m.path == "observations.md" and len(m.body) > 20)
    path = vault.root / "observations.md"
    text = path.read_text(encoding="utf-8")
    word = target.body.split()[0]
    start = text.index(target.body)
    edited = (
        text[:start] + target.body.replace(word, word.upper(), 1) + text[start + len(target.body) :]
    )
    assert edited != text and edited.count("\n") == text.count("\n")
    old = vault.result
    path.write_text(edited, encoding="utf-8")
    new = rescan_paths(vault, [path])
    changes = diff_results(old, new)
    assert [m.id for m in changes.changed] == [target.id]
    assert not changes.added and not changes.removed
    assert_same(new, vault.adapter.scan(vault.root))


# ------------------------------------------------------------------ random edits vs full scan


def _ocean_doc(rng: random.Random, stems: list[str]) -> str:
    links = rng.sample(stems, min(len(stems), rng.randint(0, 3)))
    if rng.random() < 0.1:
        links.append("../../etc/passwd")
    body = f"Note {rng.randint(0, 10**6)}"
    return (
        f"---\ntags: [a]\nconfidence: 0.{rng.randint(1, 9)}\n"
        f"created: 2026-11-0{rng.randint(1, 9)}\nsource: test\n"
        f"backlinks: [{', '.join(links)}]\n---\n{body}\n"
    )


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_ocean_changes_relink_like_a_full_scan(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    root = tmp_path / "ocean"
    stems = [f"obs-2026-11-{d:02d}-{n:03d}" for d in range(1, 4) for n in range(1, 6)]
    folders = [
        "agents/hawk/memory/vault",
        "agents/hawk/memory/archive",
        "agents/scout/memory/vault",
        "shared/observations",
        "shared/observations/archive",
    ]
    for folder in folders:
        (root / folder).mkdir(parents=True)
    for stem in rng.sample(stems, 8):
        (root / rng.choice(folders[:3]) / f"{stem}.md").write_text(_ocean_doc(rng, stems))
    vault = scan_vault(Vault(root=root, format="project-ocean", rel="."))

    used: list[bool] = []
    adapter_type = type(vault.adapter)
    original = adapter_type.relink

    def spy(self: Any, *args: Any) -> Any:
        out = original(self, *args)
        used.append(out is not None)
        return out

    monkeypatch.setattr(adapter_type, "relink", spy)
    for _ in range(120):
        existing = sorted(root.rglob("obs-*.md"))
        op = rng.choice(["add", "edit", "edit", "remove", "move", "break"])
        touched: list[Path] = []
        if op == "add" or not existing:
            path = root / rng.choice(folders) / f"{rng.choice(stems)}.md"
            path.write_text(_ocean_doc(rng, stems))
            touched = [path]
        elif op == "edit":
            path = rng.choice(existing)
            path.write_text(_ocean_doc(rng, stems))
            touched = [path]
        elif op == "remove":
            path = rng.choice(existing)
            path.unlink()
            touched = [path]
        elif op == "move":
            path = rng.choice(existing)
            target = root / rng.choice(folders) / path.name
            if target.exists():
                continue
            path.rename(target)
            touched = [path, target]
        else:
            path = rng.choice(existing)
            path.write_text("---\nconfidence: [\n---\n")
            touched = [path]
        got = rescan_paths(vault, touched)
        assert_same(got, vault.adapter.scan(root))
    assert any(used), "the relink fast path was never taken"
    assert not all(used), "the full link fallback was never taken"


def _cognitive_doc(rng: random.Random, mem_id: str, ids: list[str]) -> str:
    targets = rng.sample(ids, min(len(ids), rng.randint(0, 2)))
    if rng.random() < 0.2:
        targets.append(str(uuid.UUID(int=rng.getrandbits(128))))
    if rng.random() < 0.1:
        targets.append("../escape")
    relations = "".join(
        f"  - target: {t}\n    type: RELATED_TO\n    direction: outgoing\n" for t in targets
    )
    return (
        f"---\nid: {mem_id}\ntype: fix\ntitle: Note {rng.randint(0, 999)}\ntags: [x]\n"
        f"importance: 0.{rng.randint(1, 9)}\ncreated: 2026-11-01T10:00:00Z\n"
        f"updated: 2026-11-02T10:00:00Z\n"
        + (f"relations:\n{relations}" if targets else "")
        + "---\nBody.\n"
    )


@pytest.mark.parametrize("seed", [4, 5, 6])
def test_random_cognitive_changes_relink_like_a_full_scan(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    root = tmp_path / "cog"
    folders = ["graph/fixes", "graph/general", "vault", "archive/fixes"]
    for folder in folders:
        (root / folder).mkdir(parents=True)
    ids = [str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(12)]
    for n, mem_id in enumerate(ids[:8]):
        (root / rng.choice(folders) / f"note-{n}.md").write_text(_cognitive_doc(rng, mem_id, ids))
    state = {i: {"access_count": rng.randint(0, 5)} for i in rng.sample(ids, 6)}
    (root / "_state.json").write_text(json.dumps({"entries": state}))
    (root / "episodes").mkdir()
    (root / "episodes" / "2026-11-05.md").write_text(
        "## 10:00 - Work\n- **Memory:** [n](../graph/fixes/note-1.md)\n"
        "## 11:00 - More\n- **Memory:** [m](../vault/note-2.md)\n"
    )
    vault = scan_vault(Vault(root=root, format="cognitive-memory", rel="."))

    used: list[bool] = []
    adapter_type = type(vault.adapter)
    original = adapter_type.relink

    def spy(self: Any, *args: Any) -> Any:
        out = original(self, *args)
        used.append(out is not None)
        return out

    monkeypatch.setattr(adapter_type, "relink", spy)
    for step in range(120):
        existing = sorted(p for p in root.rglob("note-*.md"))
        op = rng.choice(["add", "edit", "edit", "remove", "move", "break", "dup"])
        touched: list[Path] = []
        if op in ("add", "dup") or not existing:
            mem_id = rng.choice(ids) if op == "dup" else str(uuid.UUID(int=rng.getrandbits(128)))
            if op == "add":
                ids.append(mem_id)
            path = root / rng.choice(folders) / f"note-{100 + step}.md"
            path.write_text(_cognitive_doc(rng, mem_id, ids))
            touched = [path]
        elif op == "edit":
            path = rng.choice(existing)
            mem_id = path.read_text().split("id: ", 1)[1].split("\n", 1)[0]
            path.write_text(_cognitive_doc(rng, mem_id, ids))
            touched = [path]
        elif op == "remove":
            path = rng.choice(existing)
            path.unlink()
            touched = [path]
        elif op == "move":
            path = rng.choice(existing)
            target = root / rng.choice(folders) / path.name
            if target.exists():
                continue
            path.rename(target)
            touched = [path, target]
        else:
            path = rng.choice(existing)
            path.write_text("---\nid: [\n---\n")
            touched = [path]
        got = rescan_paths(vault, touched)
        assert_same(got, vault.adapter.scan(root))
    assert any(used), "the relink fast path was never taken"
    assert not all(used), "the full link fallback was never taken"


def _obs_doc(rng: random.Random, obs_id: str, comp_ids: list[str]) -> str:
    belief = ""
    if comp_ids and rng.random() < 0.5:
        belief = f"  prior_belief: {rng.choice(comp_ids)}/v{rng.randint(1, 3)}\n"
    return (
        f"---\nspec: observation/v1\nid: {obs_id}\ntimestamp: 2026-11-01T10:00:00Z\n"
        f"source: test\nevent: e{rng.randint(0, 99)}\ncontext:\n  k: v\n{belief}---\n# Body\n"
    )


def _comp_doc(rng: random.Random, comp_id: str, obs_ids: list[str]) -> str:
    cited = rng.sample(obs_ids, min(len(obs_ids), rng.randint(0, 3)))
    if rng.random() < 0.2:
        cited.append("obs-missing")
    used = rng.sample(cited, min(len(cited), 1))
    return (
        "---\nspec: comprehension/v1\n"
        f"id: {comp_id}\ntopic: t{rng.randint(0, 99)}\ndomain: d\n"
        "prior: {statement: s, confidence: low, source: x}\n"
        f"observations: [{', '.join(cited)}]\n"
        "posterior: {statement: s, confidence: high, update_reasoning: r, "
        f"observations_used: [{', '.join(used)}]}}\n"
        "created: 2026-11-01T10:00:00Z\nupdated: 2026-11-02T10:00:00Z\n---\nBody\n"
    )


@pytest.mark.parametrize("seed", [7, 8, 9])
def test_random_observation_changes_relink_like_a_full_scan(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    root = tmp_path / "obs"
    folders = {
        "obs": ["observations", "archive/observations"],
        "comp": ["comprehension", "archive/comprehension"],
    }
    for group in folders.values():
        for folder in group:
            (root / folder).mkdir(parents=True)
    obs_ids = [f"obs-{n}" for n in range(10)]
    comp_ids = [f"comp-{n}" for n in range(4)]
    for i in obs_ids[:7]:
        (root / "observations" / f"{i}.md").write_text(_obs_doc(rng, i, comp_ids))
    for c in comp_ids[:3]:
        (root / "comprehension" / f"{c}.md").write_text(_comp_doc(rng, c, obs_ids))
    vault = scan_vault(Vault(root=root, format="observation-v1", rel="."))

    used: list[bool] = []
    adapter_type = type(vault.adapter)
    original = adapter_type.relink

    def spy(self: Any, *args: Any) -> Any:
        out = original(self, *args)
        used.append(out is not None)
        return out

    monkeypatch.setattr(adapter_type, "relink", spy)
    for step in range(150):
        kind = rng.choice(["obs", "obs", "comp"])
        existing = sorted(p for folder in folders[kind] for p in (root / folder).glob("*.md"))
        op = rng.choice(["add", "edit", "edit", "remove", "move", "break"])
        touched: list[Path] = []
        if op == "add" or not existing:
            ids = obs_ids if kind == "obs" else comp_ids
            new_id = rng.choice(ids)
            path = root / rng.choice(folders[kind]) / f"{new_id}-{step}.md"
            doc = (
                _obs_doc(rng, new_id, comp_ids)
                if kind == "obs"
                else _comp_doc(rng, new_id, obs_ids)
            )
            path.write_text(doc)
            touched = [path]
        elif op == "edit":
            path = rng.choice(existing)
            found = re.search(r"^id: ([\w-]+)$", path.read_text(), re.MULTILINE)
            doc_id = found.group(1) if found else rng.choice(obs_ids if kind == "obs" else comp_ids)
            doc = (
                _obs_doc(rng, doc_id, comp_ids)
                if kind == "obs"
                else _comp_doc(rng, doc_id, obs_ids)
            )
            path.write_text(doc)
            touched = [path]
        elif op == "remove":
            path = rng.choice(existing)
            path.unlink()
            touched = [path]
        elif op == "move":
            path = rng.choice(existing)
            target = root / rng.choice(folders[kind]) / path.name
            if target.exists():
                continue
            path.rename(target)
            touched = [path, target]
        else:
            path = rng.choice(existing)
            path.write_text("---\nspec: [\n---\n")
            touched = [path]
        got = rescan_paths(vault, touched)
        assert_same(got, vault.adapter.scan(root))
    assert any(used), "the relink fast path was never taken"
    assert not all(used), "the full link fallback was never taken"


@pytest.mark.parametrize("fmt", FORMATS)
def test_file_rels_match_files(own_fixtures_dir: Path, fmt: str) -> None:
    vault = vault_of(own_fixtures_dir, fmt)
    listed = [rel_posix(vault.root, p) for p in vault.adapter.files(vault.root)]
    assert vault.adapter.file_rels(vault.root) == listed


def _dream_section(rng: random.Random, titles: list[str]) -> str:
    title = rng.choice(titles)
    kind = rng.choice(["fact", "event", "rule", "bogus"])
    if rng.random() < 0.15:
        meta = "<!-- dc:type=fact dc:importance=5"  # never closed
    elif rng.random() < 0.2:
        meta = ""
    else:
        day = rng.randint(1, 9)
        meta = f"<!-- dc:type={kind} dc:importance={rng.randint(0, 12)} dc:date=2026-11-0{day} -->"
    body = " ".join(
        rng.choice(["alpha", "beta", "gamma", "delta"]) for _ in range(rng.randint(1, 8))
    )
    return f"## {title}\n{meta}\n{body}\n\n"


@pytest.mark.parametrize("seed", [10, 11, 12])
def test_random_dream_cycle_edits_rescan_like_a_full_scan(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    root = tmp_path / "dc"
    root.mkdir()
    titles = [f"Title {n}" for n in range(6)] + ["Auto-archived by decay (2026-11-01)"]
    files = {"observations.md": 12, "archived-observations.md": 4}
    docs: dict[str, list[str]] = {
        name: [_dream_section(rng, titles[:-1]) for _ in range(n)] for name, n in files.items()
    }

    def write(name: str) -> Path:
        path = root / name
        path.write_bytes(("# Preamble\n\n" + "".join(docs[name])).encode("utf-8"))
        return path

    for name in docs:
        write(name)
    vault = scan_vault(Vault(root=root, format="dream-cycle", rel="."))
    used: list[bool] = []
    adapter_type = type(vault.adapter)
    original = adapter_type.rescan_file

    def spy(self: Any, *args: Any) -> Any:
        out = original(self, *args)
        used.append(out is not None)
        return out

    monkeypatch.setattr(adapter_type, "rescan_file", spy)
    for _ in range(100):
        name = rng.choice(list(docs))
        sections = docs[name]
        op = rng.choice(["edit", "edit", "insert", "delete", "append"])
        if op == "edit" and sections:
            sections[rng.randrange(len(sections))] = _dream_section(rng, titles)
        elif op == "insert":
            sections.insert(rng.randint(0, len(sections)), _dream_section(rng, titles))
        elif op == "delete" and sections:
            sections.pop(rng.randrange(len(sections)))
        else:
            sections.append(_dream_section(rng, titles))
        path = write(name)
        if rng.random() < 0.1:
            path.write_bytes(path.read_bytes().replace(b"beta", b"b\xffta", 1))
        got = rescan_paths(vault, [path])
        assert_same(got, vault.adapter.scan(root))
    assert any(used), "sections were never reused"
