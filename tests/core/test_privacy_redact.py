"""Redaction per format: only the secrets' characters change, undo restores every byte."""

from __future__ import annotations

import json
from pathlib import Path

import privacy_plant as pp
import pytest

from memlens.core.actions import Action, undo
from memlens.core.errors import ConflictError, RefusedError
from memlens.core.formats.privacy_model import Redaction, redacted
from memlens.core.privacy import memory_findings, redactions_for, scan_catalog
from memlens.core.scan.vault import open_catalog

IN_PLACE = ("project-ocean", "observation-v1", "cognitive-memory", "dream-cycle")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    pp.plant(tmp_path)
    return tmp_path


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".memlens" not in p.parts
    }


def _with_findings(root: Path, fmt: str) -> list:
    return [
        m
        for m in open_catalog(root, cache=False).memories()
        if m.format == fmt and memory_findings(m)
    ]


@pytest.mark.parametrize("fmt", IN_PLACE)
def test_redaction_changes_only_the_secrets_and_undo_restores(root: Path, fmt: str) -> None:
    for memory in _with_findings(root, fmt):
        reds = redactions_for(memory)
        before = _tree(root)
        entry = Action("redact", memory, {}).apply()
        after = _tree(root)
        changed = [rel for rel in after if after[rel] != before.get(rel)]
        assert changed == [f"{memory.vault_root.name}/{memory.path}"], changed
        old = before[changed[0]].decode("utf-8")
        # The byte diff is exactly the secrets replaced by their markers.
        assert after[changed[0]].decode("utf-8") == redacted(old, reds)
        assert entry["action"] == "redact"
        assert (
            memory_findings(
                next(
                    m
                    for m in open_catalog(root, cache=False).memories()
                    if m.format == fmt and m.path == memory.path and m.index == memory.index
                )
            )
            == []
        )
        undo(memory.vault_root)
        assert _tree(root) == before


def test_a_secret_that_is_a_whole_yaml_value_gets_quoted(tmp_path: Path) -> None:
    folder = tmp_path / "observations"
    folder.mkdir()
    doc = (
        "---\nspec: observation/v1\ntype: observation\nid: obs-1\n"
        "timestamp: 2026-11-03T08:41:19Z\nsource: agent/x\nevent: Key rotated\n"
        "api_key: Zx9vQ2mN7pL4kR8tW1yB6cH3\ncontext:\n  owner: mara.lind@fernmail.hr\n"
        "---\n\nBody.\n"
    )
    (folder / "obs-1.md").write_text(doc, encoding="utf-8")
    memory = open_catalog(tmp_path, cache=False).get("obs-1")
    Action("redact", memory, {}).apply()
    text = (folder / "obs-1.md").read_text(encoding="utf-8")
    assert "api_key: '[REDACTED:generic-secret]'\n" in text
    assert "context:\n  owner: '[REDACTED:email]'\n" in text
    fresh = open_catalog(tmp_path, cache=False).get("obs-1")
    assert fresh.fields["api_key"] == "[REDACTED:generic-secret]"
    assert fresh.fields["context"] == {"owner": "[REDACTED:email]"}


def test_redaction_refuses_when_the_file_changed_since_the_scan(root: Path) -> None:
    memory = _with_findings(root, "project-ocean")[0]
    path = memory.abs_path
    path.write_text(path.read_text(encoding="utf-8") + "\nAppended later.\n", encoding="utf-8")
    with pytest.raises(ConflictError):
        Action("redact", memory, {}).plan()


def test_a_redaction_whose_secret_is_gone_is_refused(root: Path) -> None:
    memory = _with_findings(root, "observation-v1")[0]
    gone = Redaction("body", "not-in-this-memory-at-all", "password")
    with pytest.raises(RefusedError, match="not there any more"):
        Action("redact", memory, {"redactions": [gone]}).plan()


def test_kinds_limit_what_is_redacted(root: Path) -> None:
    memory = _with_findings(root, "cognitive-memory")[0]
    kinds = {f.kind for f in memory_findings(memory)}
    one = sorted(kinds)[0]
    Action("redact", memory, {"kinds": [one]}).apply()
    fresh = open_catalog(root, cache=False).get(memory.id)
    assert {f.kind for f in memory_findings(fresh)} == kinds - {one}


def test_dream_cycle_heading_secret_changes_the_id_and_keeps_the_place(root: Path) -> None:
    memory = next(
        m for m in _with_findings(root, "dream-cycle") if m.title.startswith("Courier number")
    )
    Action("redact", memory, {}).apply()
    fresh = next(
        m
        for m in open_catalog(root, cache=False).memories()
        if m.format == "dream-cycle" and m.index == memory.index
    )
    assert fresh.title == "Courier number [REDACTED:phone]"
    assert fresh.id != memory.id


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("upward", [False, True])
def test_experience_record_redaction_tombstones_and_keeps_raw(root: Path, upward: bool) -> None:
    memory = _with_findings(root, "experience-records")[0]
    vault = memory.vault_root
    raw_before = (vault / "experiences.jsonl").read_bytes()
    before = _tree(root)
    Action("redact", memory, {"upward": upward}).apply()
    raw_after = (vault / "experiences.jsonl").read_bytes()
    assert raw_after.startswith(raw_before)  # raw lines immutable: only appended to
    wal = _lines(vault / "wal.jsonl")
    ops = wal[-1]["ops"]
    assert ops[-1] == {
        "ts": ops[-1]["ts"],
        "op": "tombstone",
        "target": "exp",
        "id": memory.id,
        "reason": "redaction",
    }
    catalog = open_catalog(vault, cache=False)
    assert catalog.get(memory.id).tombstoned
    assert [p.detail for p in catalog.problems()] == []
    assert list(catalog.ref_problems()) == []
    if upward:
        new = _lines(vault / "experiences.jsonl")[-1]
        assert ops[0] == {"ts": ops[0]["ts"], "op": "append", "target": "exp", "id": new["id"]}
        assert new["type"] == "observation"  # one step up from occurrence
        assert new["provenance"]["redacted_from"] == memory.id
        assert new["content"]["text"] == redacted(memory.body, redactions_for(memory))
        assert "[REDACTED:aws-key]" in new["content"]["text"]
        derived = catalog.get(new["id"])
        assert memory_findings(derived) == []
    else:
        assert raw_after == raw_before
    undo(vault)
    assert _tree(root) == before


def test_erase_per_format(root: Path) -> None:
    catalog = open_catalog(root, cache=False)
    for fmt in (*IN_PLACE, "experience-records"):
        memory = next(m for m in catalog.memories() if m.format == fmt and not m.archived)
        before = _tree(root)
        entry = Action("erase", memory, {}).apply()
        assert entry["action"] == "erase"
        fresh = open_catalog(memory.vault_root, cache=False)
        gone = [m for m in fresh.memories() if m.id == memory.id]
        if fmt == "experience-records":
            assert gone[0].tombstoned and gone[0].title == "[tombstoned: gdpr_erasure]"
        else:
            assert all(m.archived for m in gone)
        undo(memory.vault_root)
        assert _tree(root) == before


def test_a_redacted_vault_scans_clean_but_for_erased_raw_lines(root: Path) -> None:
    for m in open_catalog(root, cache=False).memories():
        if memory_findings(m):
            Action("redact", open_catalog(m.vault_root, cache=False).get(m.id), {}).apply()
    left = scan_catalog(open_catalog(root, cache=False))
    assert left and {f.format for f in left} == {"experience-records"}
