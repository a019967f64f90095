"""Incremental rescans of the two one-big-file formats equal full scans.

Dream cycle: `rescan_file` parses only the sections a change touches and
`relink` splices them into the previous result.  Experience records: lines
appended to `experiences.jsonl` are parsed alone and `relink` checks only
them.  Random edits, inserts, deletes and appends (bytes included) are
compared with a full scan after every step, and the fast paths are checked to
have been taken.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from memlens.core.formats.dream_cycle import reading as dream_cycle_reading
from memlens.core.formats.dream_cycle.adapter import DreamCycleAdapter
from memlens.core.formats.experience_record.adapter import ExperienceRecordAdapter
from memlens.core.model import ScanResult
from memlens.core.scan.memory_diff import diff_results
from memlens.core.scan.vault import Vault, rescan_paths, scan_vault


def assert_same(got: ScanResult, want: ScanResult) -> None:
    assert [m.id for m in got.memories] == [m.id for m in want.memories]
    assert got.memories == want.memories
    assert got.problems == want.problems
    assert got.ref_problems == want.ref_problems
    assert got.records == want.records


def spy(monkeypatch: pytest.MonkeyPatch, cls: type, name: str) -> list[bool]:
    """Record whether each call of `cls.name` returned something (the fast path)."""
    used: list[bool] = []
    original: Callable[..., Any] = getattr(cls, name)

    def wrapper(self: Any, *args: Any) -> Any:
        out = original(self, *args)
        used.append(out is not None)
        return out

    monkeypatch.setattr(cls, name, wrapper)
    return used


def spy_function(monkeypatch: pytest.MonkeyPatch, module: ModuleType, name: str) -> list[bool]:
    """Record each call of the module-level function `module.name`."""
    used: list[bool] = []
    original: Callable[..., Any] = getattr(module, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        out = original(*args, **kwargs)
        used.append(out is not None)
        return out

    monkeypatch.setattr(module, name, wrapper)
    return used


# --------------------------------------------------------------------------- dream cycle

TITLES = ["Alpha", "Beta", "Gamma", "Same", "Same", "Räksmörgås über", "Shared"]
#: Titles of the archived file: one also used above (its ids get `-2` there).
ARCHIVED_TITLES = ["Delta", "Epsilon", "Epsilon", "Shared"]
AUTO = "Auto-archived by decay (2026-11-01)"


def _section(rng: random.Random, *, archived: bool = False) -> bytes:
    if archived:
        title = AUTO if rng.random() < 0.25 else rng.choice(ARCHIVED_TITLES)
    else:
        title = rng.choice(TITLES)
    nl = b"\r\n" if rng.random() < 0.1 else b"\n"
    lines = [f"## {title}".encode()]
    r = rng.random()
    if r < 0.1:
        lines.append(b"<!-- dc:type=fact dc:importance=5")  # never closed
    elif r < 0.2:
        pass  # untagged
    elif r < 0.3:
        lines += [b"<!-- dc:type=event", b"dc:importance=3 dc:date=2026-11-02 -->"]
    else:
        kind = rng.choice(["fact", "event", "rule", "bogus"])
        day = rng.randint(1, 9)
        lines.append(
            f"<!-- dc:type={kind} dc:importance={rng.randint(0, 12)} "
            f"dc:date=2026-11-0{day} -->".encode()
        )
    for _ in range(rng.randint(0, 3)):
        lines.append(
            rng.choice(
                [
                    b"always alpha",
                    b"beta gamma",
                    b"",
                    b"### not a heading",
                    b"<!-- dc:type=fact dc:importance=2 dc:date=2026-10-01 -->",
                    b"must reach the goal",
                ]
            )
        )
    return nl.join(lines) + nl + (b"\n" if rng.random() < 0.5 else b"")


def _mutate(rng: random.Random, data: bytes, archived: bool) -> bytes:
    """One random change of a markdown file, at the section or the byte level."""
    heads = [0] + [i + 1 for i in range(len(data)) if data[i : i + 4] == b"\n## "]
    op = rng.choice(
        [
            "edit",
            "edit",
            "insert",
            "delete",
            "append",
            "byte",
            "newline",
            "join",
            "split",
            "bad",
            "preamble",
            "title",
        ]
    )
    at = rng.choice(heads)
    nxt = min([h for h in heads if h > at] or [len(data)])
    if op == "edit":
        return data[:at] + _section(rng, archived=archived) + data[nxt:]
    if op == "insert":
        return data[:at] + _section(rng, archived=archived) + data[at:]
    if op == "delete":
        return data[:at] + data[nxt:]
    if op == "append":
        return data + _section(rng, archived=archived)
    pos = rng.randrange(len(data) + 1)
    if op == "byte":
        return data[:pos] + rng.choice([b"x", b"", b" always"]) + data[pos + 1 :]
    if op == "newline":
        return data[:pos] + b"\n" + data[pos:]
    if op == "join":
        cut = data.find(b"\n", pos)
        return data if cut < 0 else data[:cut] + data[cut + 1 :]
    titles = ARCHIVED_TITLES if archived else TITLES
    if op == "split":
        return data[:pos] + b"\n## " + rng.choice(titles).encode() + b"\n" + data[pos:]
    if op == "bad":
        return data[:pos] + b"\xff" + data[pos:]
    if op == "preamble":
        return rng.choice([b"# Pre\n\n", b"\xef\xbb\xbf# Pre\n", b"", b"pre \xfe\n"]) + data
    # title: retitle one section (repeated titles renumber the later ones)
    end = data.find(b"\n", at)
    if end < 0 or not data.startswith(b"## ", at):
        return data
    return data[:at] + b"## " + rng.choice(titles).encode() + data[end:]


def _dc_vault(root: Path, rng: random.Random, sections: int) -> Vault:
    root.mkdir()
    (root / "observations.md").write_bytes(
        b"# Observations\n\n" + b"".join(_section(rng) for _ in range(sections))
    )
    (root / "archived-observations.md").write_bytes(
        b"# Archived\n\n" + b"".join(_section(rng, archived=True) for _ in range(4))
    )
    return scan_vault(Vault(root=root, format="dream-cycle", rel="."))


@pytest.mark.parametrize("seed", [21, 22, 23, 24])
def test_random_dream_cycle_changes_rescan_like_a_full_scan(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    root = tmp_path / "dc"
    vault = _dc_vault(root, rng, 30)
    adapter = vault.adapter
    rescanned = spy(monkeypatch, DreamCycleAdapter, "rescan_file")
    relinked = spy(monkeypatch, DreamCycleAdapter, "relink")
    for step in range(150):
        name = "observations.md" if rng.random() < 0.8 else "archived-observations.md"
        path = root / name
        changed = [path]
        path.write_bytes(_mutate(rng, path.read_bytes(), name != "observations.md"))
        if rng.random() < 0.05:
            archive = root / "archive.jsonl"
            # Late in the run ids repeat (from then on every change links in full).
            entry = {
                "id": rng.choice(["arch-1", "arch-2"]) if step > 120 else f"arch-{step}",
                "original_date": "2026-10-01",
                "archived_reason": "decay",
                "full_text": "Archived text.",
            }
            with archive.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(entry) + "\n")
            changed.append(archive)
        got = rescan_paths(vault, changed)
        assert_same(got, adapter.scan(root))
        # The per-file scan the vault keeps equals a fresh read of the file.
        fresh = adapter.scan_file(root, path)
        kept = vault.scans[name]
        assert kept.memories == fresh.memories
        assert kept.problems == fresh.problems
        assert kept.data["table"] == fresh.data["table"]
    assert any(rescanned), "sections were never parsed alone"
    assert any(relinked), "the relink fast path was never taken"
    assert not all(relinked), "the full link fallback was never taken"


def test_dream_cycle_edit_keeps_other_objects_and_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "dc"
    root.mkdir()
    section = "## Note {n}\n<!-- dc:type=fact dc:importance=5 dc:date=2026-11-01 -->\nBody {n}.\n\n"
    path = root / "observations.md"
    path.write_text("# Obs\n\n" + "".join(section.format(n=n) for n in range(40)))
    vault = scan_vault(Vault(root=root, format="dream-cycle", rel="."))
    old = vault.result
    target = old.memories[20]
    parsed = spy_function(monkeypatch, dream_cycle_reading, "parse_one")
    path.write_text(path.read_text().replace("Body 20.", "Body 20, rewritten."))
    new = rescan_paths(vault, [path])
    assert len(parsed) == 1  # only the edited section was parsed again
    changes = diff_results(old, new)
    assert [m.id for m in changes.changed] == [target.id]
    assert not changes.added and not changes.removed
    assert_same(new, vault.adapter.scan(root))
    assert all(a is b for a, b in zip(old.memories, new.memories, strict=True) if a is not target)
    # A line added before it moves the later sections: their lines change, ids do not.
    path.write_text(path.read_text().replace("Body 10.", "Body 10.\nSecond line."))
    newer = rescan_paths(vault, [path])
    assert_same(newer, vault.adapter.scan(root))
    assert [m.id for m in newer.memories] == [m.id for m in old.memories]
    assert newer.memories[30].native["start_line"] == old.memories[30].native["start_line"] + 1


def test_dream_cycle_repeated_titles_renumber_like_a_full_scan(tmp_path: Path) -> None:
    root = tmp_path / "dc"
    root.mkdir()
    section = "## Same\n<!-- dc:type=fact dc:importance=5 dc:date=2026-11-01 -->\nBody {n}.\n\n"
    path = root / "observations.md"
    path.write_text("# Obs\n\n" + "".join(section.format(n=n) for n in range(6)))
    vault = scan_vault(Vault(root=root, format="dream-cycle", rel="."))
    base = vault.memories[0].id
    assert [m.id for m in vault.memories] == [base] + [f"{base}-{n}" for n in range(2, 7)]
    # Retitle the second one: the later copies count on without it.
    path.write_text(
        path.read_text().replace("## Same", "## Other", 2).replace("## Other", "## Same", 1)
    )
    got = rescan_paths(vault, [path])
    assert_same(got, vault.adapter.scan(root))
    assert [m.id for m in got.memories if m.title == "Same"] == [base] + [
        f"{base}-{n}" for n in range(2, 6)
    ]
    # Insert a copy at the top: every later one shifts and renumbers.
    path.write_text(path.read_text().replace("# Obs\n\n", "# Obs\n\n" + section.format(n=99)))
    got = rescan_paths(vault, [path])
    assert_same(got, vault.adapter.scan(root))
    assert vault.scans["observations.md"].data["delta"].m_tail == 0


def test_dream_cycle_rescan_after_a_cache_round_trip(tmp_path: Path) -> None:
    """The table survives pickling (the persistent cache), so a warm start rescans fast."""
    import pickle

    rng = random.Random(9)
    root = tmp_path / "dc"
    vault = _dc_vault(root, rng, 20)
    vault.scans = pickle.loads(pickle.dumps(vault.scans))
    vault.result = vault.linked = pickle.loads(pickle.dumps(vault.result))
    path = root / "observations.md"
    path.write_bytes(path.read_bytes() + _section(rng))
    previous = vault.scans["observations.md"]
    got = rescan_paths(vault, [path])
    assert_same(got, vault.adapter.scan(root))
    delta = vault.scans["observations.md"].data["delta"]
    assert delta.base == previous.data["table"].token
    assert delta.m_lo >= len(previous.memories) - 1


# --------------------------------------------------------------------------- experience records


def _experience(rng: random.Random, n: int, known: list[str]) -> str:
    r = rng.random()
    exp_id = f"exp_{n}"
    if r < 0.05:
        exp_id = rng.choice(known) if known else exp_id  # a duplicate id
    elif r < 0.08:
        return "{broken json"
    elif r < 0.1:
        return json.dumps({"id": exp_id, "type": "nonsense", "created_at": "2026-11-01"})
    parents: list[str] = []
    if known and rng.random() < 0.5:
        parents = rng.sample(known, min(len(known), rng.randint(1, 2)))
    if rng.random() < 0.08:
        # Names an id that does not exist yet (a later append may bring it).
        parents.append(f"exp_{n + rng.randint(1, 5)}")
    if rng.random() < 0.03:
        parents.append("../etc/passwd")
    record: dict[str, Any] = {
        "id": exp_id,
        "type": rng.choice(["occurrence", "observation", "inference", "reconciliation"]),
        "created_at": "2026-11-01T10:00:00Z",
        "content": {"text": f"Experience {n}. More."},
        "parents": parents,
    }
    if rng.random() < 0.2:
        record["evidence_ptrs"] = [rng.choice(known or ["x"]), "uri:external"]
    return json.dumps(record)


def _er_vault(root: Path, rng: random.Random, count: int) -> tuple[Vault, list[str]]:
    root.mkdir()
    known: list[str] = []
    lines = []
    for n in range(count):
        lines.append(_experience(rng, n, known))
        known.append(f"exp_{n}")
    (root / "experiences.jsonl").write_text("\n".join(lines) + "\n")
    wal = {
        "wal_id": "wal_000001",
        "ops": [
            {"op": "tombstone", "target": "exp", "id": "exp_3", "reason": "gdpr_erasure"},
            {"op": "tombstone", "target": "exp", "id": f"exp_{count + 2}", "reason": "gdpr"},
            {"op": "tombstone", "target": "exp", "id": "exp_4", "reason": "archived"},
        ],
    }
    (root / "wal.jsonl").write_text(json.dumps(wal) + "\n")
    views = [
        {"id": "view_pin", "lens": "pin", "applied_to": ["exp_5", f"exp_{count + 4}"]},
        {"id": "view_braid", "lens": "summary", "provenance_braid": [f"exp_{count + 6}"]},
    ]
    (root / "views.jsonl").write_text("".join(json.dumps(v) + "\n" for v in views))
    (root / "stances.jsonl").write_text("")
    return scan_vault(Vault(root=root, format="experience-records", rel=".")), known


@pytest.mark.parametrize("seed", [31, 32, 33])
def test_random_experience_appends_relink_like_a_full_scan(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    root = tmp_path / "er"
    count = 40
    vault, known = _er_vault(root, rng, count)
    adapter = vault.adapter
    relinked = spy(monkeypatch, ExperienceRecordAdapter, "relink")
    appended = spy(monkeypatch, ExperienceRecordAdapter, "scan_appended")
    path = root / "experiences.jsonl"
    n = count
    for step in range(120):
        changed = [path]
        if step % 25 == 24:
            # Now and then another store changes (a full link) or a line is rewritten.
            if rng.random() < 0.5:
                op = {"op": "tombstone", "target": "exp", "id": rng.choice(known)}
                with (root / "wal.jsonl").open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps({"wal_id": f"wal_{step}", "ops": [op]}) + "\n")
                changed = [root / "wal.jsonl"]
            else:
                data = path.read_bytes()
                path.write_bytes(data.replace(b"Experience", b"Rewritten", 1))
        else:
            lines = []
            for _ in range(rng.choice([1, 1, 1, 2, 3])):
                lines.append(_experience(rng, n, known))
                known.append(f"exp_{n}")
                n += 1
            with path.open("a", encoding="utf-8") as fh:
                fh.write("".join(line + "\n" for line in lines))
        got = rescan_paths(vault, changed)
        assert_same(got, adapter.scan(root))
    assert any(appended), "appended lines were never parsed alone"
    assert any(relinked), "the relink fast path was never taken"
    assert not all(relinked), "the full link fallback was never taken"


def test_appended_experience_is_the_only_change(tmp_path: Path) -> None:
    rng = random.Random(3)
    root = tmp_path / "er"
    vault, known = _er_vault(root, rng, 30)
    old = vault.result
    record = {
        "id": "exp_new_one",
        "type": "inference",
        "created_at": "2026-11-02T10:00:00Z",
        "content": {"text": "A new one."},
        "parents": [known[0], "missing_parent"],
    }
    with (root / "experiences.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")
    new = rescan_paths(vault, [root / "experiences.jsonl"])
    assert_same(new, vault.adapter.scan(root))
    changes = diff_results(old, new)
    assert [m.id for m in changes.added] == ["exp_new_one"]
    assert not changes.changed and not changes.removed
    assert any(r.ref == "missing_parent" for r in new.ref_problems)
    # The records read before are the very objects of the previous result.
    assert all(a is b for a, b in zip(old.memories, new.memories, strict=False))


def test_appending_a_named_id_falls_back_to_a_full_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An id a view pins before it exists changes that view's links: linked in full."""
    rng = random.Random(4)
    root = tmp_path / "er"
    vault, _known = _er_vault(root, rng, 10)
    relinked = spy(monkeypatch, ExperienceRecordAdapter, "relink")
    record = {
        "id": "exp_14",  # pinned by view_pin before it existed
        "type": "occurrence",
        "created_at": "2026-11-02T10:00:00Z",
        "content": {"text": "Late."},
    }
    with (root / "experiences.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")
    got = rescan_paths(vault, [root / "experiences.jsonl"])
    assert relinked == [False]
    assert_same(got, vault.adapter.scan(root))
    assert next(m for m in got.memories if m.id == "exp_14").pinned
