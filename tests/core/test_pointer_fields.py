"""Every pointer field a format declares is checked with the one shared rule.

Each format declares its pointer fields (`adapter.pointer_fields`); the vaults
below set every declared field to a value with path syntax, one naming
nothing and (experience records) one naming an erased record, and the test
derives the expected `validate --json` / `graph --health --json` rows from
the declarations, so a field declared but not checked fails here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memlens.core.formats import adapter_for, adapters
from memlens.core.refs import (
    PointerField,
    PointerKind,
    is_unsafe_reference,
    is_uri,
    pointer_values,
    reference_issue,
)
from memlens.tui.cli.main import cli

UNSAFE = (
    "../x",
    "a/b",
    "a\\b",
    "/etc/passwd",
    "C:\\Windows",
    "c:x",
    "~root",
    ".",
    "..",
    "a\x00b",
    "file:x",
    "FILE:///etc/passwd",
    "%2e%2e",
    ".%2E",
    "a%2fb",
    "a%5Cb",
    "a%00",
)
SAFE = ("obs-001", "exp_2025-10-02T17:01:05Z_9f3c", "3f0c6a9e-1d2b-4c5d-8e7f-0a1b2c3d4e5f", "a.b")


@pytest.mark.parametrize("ref", UNSAFE)
def test_path_syntax_is_unsafe(ref: str) -> None:
    assert is_unsafe_reference(ref)
    for kind in PointerKind:
        assert reference_issue(ref, {ref}, kind=kind) == "unsafe_reference"


@pytest.mark.parametrize("ref", SAFE)
def test_bare_ids_are_safe(ref: str) -> None:
    assert not is_unsafe_reference(ref)
    assert reference_issue(ref, {ref}) is None
    assert reference_issue(ref, set()) == "dangling_reference"
    assert reference_issue(ref, {ref}, erased={ref}) == "references_tombstoned"
    assert reference_issue(ref, set(), kind=PointerKind.EXTERNAL) is None


@pytest.mark.parametrize("ref", ["uri:abc", "urn:x:y", "https://ci.example/run/1", "vec://sem/e"])
def test_uris_are_never_resolved_where_allowed(ref: str) -> None:
    assert is_uri(ref)
    assert reference_issue(ref, set(), kind=PointerKind.RECORD_OR_URI) is None
    assert reference_issue(ref, set(), kind=PointerKind.EXTERNAL) is None
    # A field that holds record ids only: a URI is path syntax or names nothing.
    assert reference_issue(ref, set()) is not None


def test_file_uris_and_drive_letters_are_not_uris() -> None:
    assert not is_uri("file:///etc/passwd")
    assert not is_uri("C://x")
    assert reference_issue("file://x", set(), kind=PointerKind.RECORD_OR_URI) == "unsafe_reference"


def test_pointer_values_walk_dotted_names_and_lists() -> None:
    record: dict[str, Any] = {
        "a": ["x", 3, "y"],
        "b": {"c": [{"d": "p"}, {"d": ["q", "r"]}, {"e": "no"}, "s"]},
        "n": None,
    }
    assert pointer_values(record, "a") == ["x", "y"]
    assert pointer_values(record, "b.c.d") == ["p", "q", "r"]
    assert pointer_values(record, "n") == []
    assert pointer_values(record, "missing.x") == []


def test_every_adapter_declares_its_pointer_fields() -> None:
    for adapter in adapters():
        fields = adapter.pointer_fields
        assert all(isinstance(f, PointerField) for f in fields)
        assert len({f.name for f in fields}) == len(fields)
    assert adapter_for("dream-cycle").pointer_fields == ()


# --------------------------------------------------------------------------- vaults

UUID_A = "11111111-1111-4111-8111-111111111111"
UUID_MISSING = "99999999-9999-4999-8999-999999999999"


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _jsonl(*records: dict[str, Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def _experience_vault(root: Path) -> None:
    def exp(exp_id: str, kind: str, **more: Any) -> dict[str, Any]:
        return {
            "id": exp_id,
            "type": kind,
            "created_at": "2026-11-01T00:00:00Z",
            "content": {"text": exp_id},
            **more,
        }

    refs = ["../x", "exp_missing", "exp_gone"]
    _write(
        root,
        "experiences.jsonl",
        _jsonl(
            exp("exp_a", "occurrence"),
            exp("exp_gone", "occurrence"),
            exp(
                "exp_b",
                "observation",
                parents=[*refs, "exp_a"],
                evidence_ptrs=[*refs, "exp_a", "https://x.example/y", "uri:z", "file:///etc"],
                trace_ref="../x",
            ),
            exp("exp_c", "occurrence", trace_ref="trace-2026-11-01-77"),
        ),
    )
    _write(
        root,
        "views.jsonl",
        _jsonl(
            {
                "id": "view_1",
                "lens": "causal_v2",
                "applied_to": [*refs, "exp_a"],
                "provenance_braid": [*refs, "exp_a"],
                "delta_from_raw": {"reweighted": [{"exp": r, "w_new": 0.5} for r in refs]},
            }
        ),
    )
    _write(
        root,
        "stances.jsonl",
        _jsonl(
            {
                "id": "stance_1",
                "candidates": [{"exp": r, "claim": "c", "p": 0.5} for r in refs],
                "decision": {"claim": "c", "support": [*refs, "view_1"]},
            }
        ),
    )
    _write(
        root,
        "wal.jsonl",
        _jsonl(
            {"wal_id": "wal_1", "ops": [{"op": "tombstone", "target": "exp", "id": "exp_gone"}]}
        ),
    )


def _observation_vault(root: Path) -> None:
    def obs(obs_id: str, more: str) -> str:
        return (
            f"---\nspec: observation/v1\nid: {obs_id}\ntimestamp: 2026-11-02T09:00:00Z\n"
            f"source: agent/t\nevent: e\n{more}---\n\n# {obs_id}\n"
        )

    _write(root, "observations/obs-001.md", obs("obs-001", "context:\n  prior_belief: ../x/v1\n"))
    _write(
        root,
        "observations/obs-002.md",
        obs("obs-002", "context:\n  prior_belief: comp-missing/v1\ntrace_ref: ../x\n"),
    )
    _write(root, "observations/obs-003.md", obs("obs-003", "trace_ref: trace-2026-11-02-9c41\n"))
    _write(root, "observations/obs-004.md", obs("obs-004", "trace_ref: https://ci.example/r/1\n"))
    _write(root, "observations/obs-005.md", obs("obs-005", "context:\n  prior_belief: comp-a/v1\n"))
    _write(
        root,
        "comprehension/comp-a.md",
        "---\nspec: comprehension/v1\nid: comp-a\ntopic: t\ndomain: d\n"
        "created: 2026-11-02T09:30:00Z\nupdated: 2026-11-02T09:30:00Z\n"
        "prior:\n  statement: s\n  confidence: low\n  source: training\n"
        "observations: ['../x', obs-missing, obs-001]\n"
        "posterior:\n  statement: s\n  confidence: high\n  update_reasoning: r\n"
        "  observations_used: ['../x', obs-missing, obs-001]\n---\n\n# c\n",
    )


def _cognitive_vault(root: Path) -> None:
    rel = "graph/general/a-111111.md"
    _write(
        root,
        rel,
        f'---\nid: {UUID_A}\ntype: general\ntitle: "A"\nimportance: 0.5\n'
        "created: 2026-11-01T00:00:00+00:00\nupdated: 2026-11-01T00:00:00+00:00\n"
        "relations:\n"
        "- target: ../x\n  type: RELATED_TO\n  direction: outgoing\n"
        f"- target: {UUID_MISSING}\n  type: RELATED_TO\n  direction: outgoing\n"
        f"- target: {UUID_A}\n  type: RELATED_TO\n  direction: outgoing\n---\nbody\n",
    )


def _ocean_vault(root: Path) -> None:
    _write(
        root,
        "agents/hawk/memory/vault/obs-2026-11-01-001.md",
        "---\ntags: [a]\nconfidence: 0.9\ncreated: 2026-11-01\nsource: hawk\n"
        "backlinks: ['../x', obs-2030-01-01-001, obs-2026-11-01-002]\n---\nbody\n",
    )
    _write(
        root,
        "agents/hawk/memory/vault/obs-2026-11-01-002.md",
        "---\ntags: [a]\nconfidence: 0.9\ncreated: 2026-11-01\nsource: hawk\n---\nbody\n",
    )
    # The second generation's `ref_by` (who cites this observation).
    _write(
        root,
        "agents/hawk/memory/vault/obs-2026-11-01-003.md",
        "---\ntags: [a]\nimportance: 0.5\ncreated: 2026-11-01\nmax_age: 30d\nsource: hawk\n"
        "ref_by: ['../x', obs-2030-01-01-001, hawk/obs-2026-11-01-002]\n---\nbody\n",
    )


Row = tuple[str, str, str, str, str]  # (path, id, field, ref, reason)


def _owner(fmt: str, holder: str) -> tuple[str, str]:
    """(path, id) of the record that holds a field, in the vaults above."""
    return {
        ("experience-records", "experience"): ("experiences.jsonl", "exp_b"),
        ("experience-records", "view"): ("views.jsonl", "view_1"),
        ("experience-records", "stance"): ("stances.jsonl", "stance_1"),
        ("cognitive-memory", "memory"): ("graph/general/a-111111.md", UUID_A),
        ("project-ocean", "observation"): (
            "agents/hawk/memory/vault/obs-2026-11-01-001.md",
            "hawk/obs-2026-11-01-001",
        ),
        ("project-ocean", "observation (2nd generation)"): (
            "agents/hawk/memory/vault/obs-2026-11-01-003.md",
            "hawk/obs-2026-11-01-003",
        ),
        ("observation-v1", "comprehension"): ("comprehension/comp-a.md", "comp-a"),
    }[(fmt, holder)]


def _expected(fmt: str) -> set[Row]:
    """The rows every declared field must give, derived from the declarations."""
    rows: set[Row] = set()
    for f in adapter_for(fmt).pointer_fields:
        if fmt == "observation-v1" and f.holder == "observation":
            continue  # one value per document: listed below
        path, owner = _owner(fmt, f.holder)
        dangling = {
            "cognitive-memory": UUID_MISSING,
            "project-ocean": "obs-2030-01-01-001",
            "observation-v1": "obs-missing",
        }.get(fmt, "exp_missing")
        rows.add((path, owner, f.name, "../x", "unsafe_reference"))
        if f.kind is PointerKind.EXTERNAL:
            continue  # never resolved: only path syntax is wrong
        rows.add((path, owner, f.name, dangling, "dangling_reference"))
        if fmt == "experience-records" and f.name != "provenance_braid":
            rows.add((path, owner, f.name, "exp_gone", "references_tombstoned"))
    if fmt == "experience-records":
        rows.add(("experiences.jsonl", "exp_b", "evidence_ptrs", "file:///etc", "unsafe_reference"))
    if fmt == "observation-v1":
        rows |= {
            (
                "observations/obs-001.md",
                "obs-001",
                "context.prior_belief",
                "../x/v1",
                "unsafe_reference",
            ),
            (
                "observations/obs-002.md",
                "obs-002",
                "context.prior_belief",
                "comp-missing/v1",
                "dangling_reference",
            ),
            ("observations/obs-002.md", "obs-002", "trace_ref", "../x", "unsafe_reference"),
        }
    return rows


BUILDERS = {
    "experience-records": _experience_vault,
    "observation-v1": _observation_vault,
    "cognitive-memory": _cognitive_vault,
    "project-ocean": _ocean_vault,
}


def _rows(items: list[dict[str, Any]], fmt: str) -> set[Row]:
    out: set[Row] = set()
    for item in items:
        if item.get("reason") in (
            "dangling_reference",
            "unsafe_reference",
            "references_tombstoned",
        ):
            assert item["format"] == fmt
            assert item["vault"] == "."
            out.add((item["path"], item["id"], item["field"], item["ref"], item["reason"]))
    return out


@pytest.mark.parametrize("fmt", sorted(BUILDERS))
def test_every_declared_field_is_checked_in_validate_and_graph_health(
    tmp_path: Path, fmt: str
) -> None:
    BUILDERS[fmt](tmp_path)
    runner = CliRunner()
    validate = runner.invoke(cli, ["validate", str(tmp_path), "--json"])
    assert validate.exit_code == 1, validate.output
    items = json.loads(validate.stdout)
    invalid = [i for i in items if "field" not in i]
    assert invalid == []  # reference problems never make their owner invalid
    want = _expected(fmt)
    assert _rows(items, fmt) == want

    health = runner.invoke(cli, ["graph", str(tmp_path), "--health", "--json"])
    assert _rows(json.loads(health.stdout), fmt) == want
