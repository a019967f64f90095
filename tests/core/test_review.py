"""The review queue (issue 21 item 1): candidates, merge, supersede, dismiss, per format.

The vaults are built by tests/review_vaults.py (the same planted statements
in every format's layout).  Merge and supersede are checked against the
full expected bytes of every file they touch, written here as the input
file with the documented edit applied; undo must give back every byte.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
import review_vaults as rv

from memlens.core.actions import undo
from memlens.core.curation import (
    DECISIONS_REL,
    apply_curation,
    dismiss,
    review,
    review_json,
)
from memlens.core.curation.candidates import candidate_id
from memlens.core.curation.conflicts import claims, compare
from memlens.core.errors import RefusedError
from memlens.core.formats.experience_record import writer as er_writer
from memlens.core.scan.vault import Catalog, open_catalog

AS_OF = date(2026, 11, 22)
NOW = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    # Experience-record archive ops stamp the writer's clock.
    monkeypatch.setattr(er_writer.WRITER, "clock", lambda: NOW)


def tree(root: Path) -> dict[str, bytes]:
    """Every file of the vault outside `.memlens/`, by relative path."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).parts[0] != ".memlens"
    }


def _open(tmp_path: Path, fmt: str) -> tuple[Path, Catalog, dict[str, str]]:
    root = rv.build(tmp_path, fmt)
    catalog = open_catalog(root)
    return root, catalog, rv.ids(catalog.memories())


def _pairs(items: list[object]) -> dict[frozenset[str], str]:
    out: dict[frozenset[str], str] = {}
    for item in items:
        c = item.candidate  # type: ignore[attr-defined]
        out[frozenset(m.id for m in c.members)] = c.kind
    return out


# ------------------------------------------------------------------ finding


@pytest.mark.parametrize("fmt", rv.FORMATS)
def test_every_planted_pair_is_found_and_no_decoy(tmp_path: Path, fmt: str) -> None:
    _root, catalog, ids = _open(tmp_path, fmt)
    assert set(ids) == set(rv.ITEMS), "every item became one memory"
    found = _pairs(review(catalog.vaults, AS_OF))
    for (a, b), kind in rv.PLANTED.items():
        assert found.get(frozenset((ids[a], ids[b]))) == kind, (a, b)
    for a, b in rv.DECOYS:
        assert frozenset((ids[a], ids[b])) not in found, f"decoy {a}/{b} reported"
    vector_pair = frozenset(ids[k] for k in rv.VECTOR_PAIR)
    # Only cognitive-memory ships stored vectors; elsewhere the pair shares no words.
    assert (vector_pair in found) == (fmt == "cognitive-memory")
    assert len(found) == len(rv.PLANTED) + (fmt == "cognitive-memory")


def test_kind_and_limit_filter_and_rank_by_confidence(tmp_path: Path) -> None:
    _root, catalog, _ids = _open(tmp_path, "project-ocean")
    every = review(catalog.vaults, AS_OF)
    confidences = [i.candidate.confidence for i in every]
    assert confidences == sorted(confidences, reverse=True)
    contradictions = review(catalog.vaults, AS_OF, kind="contradiction")
    assert {i.candidate.kind for i in contradictions} == {"contradiction"}
    assert len(contradictions) == sum(k == "contradiction" for k in rv.PLANTED.values())
    assert [i.candidate.id for i in review(catalog.vaults, AS_OF, limit=2)] == [
        i.candidate.id for i in every[:2]
    ]


def test_candidate_json_has_id_members_and_differing_words(tmp_path: Path) -> None:
    _root, catalog, ids = _open(tmp_path, "observation-v1")
    doc = review_json(review(catalog.vaults, AS_OF, kind="contradiction"), AS_OF)
    by_members = {frozenset(m["id"] for m in c["members"]): c for c in doc["candidates"]}
    c = by_members[frozenset((ids["num_a"], ids["num_b"]))]
    members = sorted((catalog.get(ids["num_a"]), catalog.get(ids["num_b"])), key=lambda m: m.id)
    assert c["id"] == candidate_id(members)
    assert c["kind"] == "contradiction" and 0.5 <= c["confidence"] <= 0.99
    assert {"op": "replace", "a": "20", "b": "50"} in c["diff"]
    assert c["differing_words"][0][-1] == "20" and c["differing_words"][1][-1] == "50"
    assert [m["id"] for m in c["members"]] == ["obs-009", "obs-010"]
    assert c["members"][0] == {
        "vault": ".",
        "format": "observation-v1",
        "id": "obs-009",
        "path": "observations/obs-009.md",
        "title": "Orders database connection pool",
        "health": "stable",
    }


def test_candidate_ids_are_stable_across_runs(tmp_path: Path) -> None:
    root, catalog, _ids = _open(tmp_path, "dream-cycle")
    first = [i.candidate.id for i in review(catalog.vaults, AS_OF)]
    again = [i.candidate.id for i in review(open_catalog(root).vaults, AS_OF)]
    assert first == again and len(set(first)) == len(first)


@pytest.mark.parametrize(
    ("a", "b", "how"),
    [
        (
            "The cache is enabled in production.",
            "The cache is not enabled in production.",
            "negation",
        ),
        ("The cache is enabled in production.", "The cache is disabled in production.", "negation"),
        ("Staff can edit the rota.", "Staff cannot edit the rota.", "negation"),
        ("Staff can edit the rota.", "Staff can't edit the rota.", "negation"),
        ("We always tag the release.", "We never tag the release.", "negation"),
        ("The launch date is 2026-03-01.", "The launch date is 2026-04-15.", "value"),
        ("Max upload size is 10mb.", "Max upload size is 25mb.", "value"),
        (
            "Feature flags are enabled in staging.",
            "Feature flags have been disabled in staging.",
            "negation",
        ),
        ("The user prefers dark mode.", "The user does not prefer dark mode.", "negation"),
        ("The release is planned for March 3.", "The release is planned for April 10.", "value"),
    ],
)
def test_clause_conflicts(a: str, b: str, how: str) -> None:
    found = [compare(x, y) for x in claims("", a) for y in claims("", b)]
    assert [c.how for c in found if c is not None] == [how]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("The pool size is 20 for orders.", "The pool size is 20 for orders."),  # agreement
        ("The timeout for payments is 30s.", "The timeout for search is 60s."),  # two subjects
        ("Backups run nightly, but logs are not kept.", "Backups run nightly."),  # other clause
        ("It is 5.", "It is 7."),  # no subject words
        # Two conditions, not a flip.
        (
            "When the flag is on, audit logging is enabled.",
            "When the flag is off, audit logging is not enabled.",
        ),
        (
            "The staging database is backed up nightly.",
            "The production database is backed up nightly.",
        ),
    ],
)
def test_clause_decoys(a: str, b: str) -> None:
    found = [compare(x, y) for x in claims("", a) for y in claims("", b)]
    assert [c for c in found if c is not None] == []


# ------------------------------------------------------------------ actions


def _expected_ocean(before: dict[str, bytes], action: str) -> dict[str, bytes]:
    after = dict(before)
    vault, archive = "agents/alpha/memory/vault/", "agents/alpha/memory/archive/"
    if action == "merge":
        keep, other = "obs-2026-11-01-001.md", "obs-2026-11-02-001.md"
        after[vault + keep] = before[vault + keep].replace(
            b"backlinks: []\n", b"backlinks: []\nmerged_from: [obs-2026-11-02-001]\n"
        )
    else:
        keep, other = "obs-2026-11-10-001.md", "obs-2026-11-09-001.md"
        after[vault + keep] = before[vault + keep].replace(
            b"backlinks: []\n", b"backlinks: [obs-2026-11-09-001]\n"
        )
    after[archive + other] = after.pop(vault + other)
    return after


def _expected_observation(before: dict[str, bytes], action: str) -> dict[str, bytes]:
    after = dict(before)
    keep, other, line = (
        ("obs-001", "obs-002", b"merged_from: [obs-002]\n")
        if action == "merge"
        else ("obs-010", "obs-009", b"supersedes: [obs-009]\n")
    )
    text = before[f"observations/{keep}.md"]
    head, sep, rest = text.partition(b"\n---\n")
    after[f"observations/{keep}.md"] = head + b"\n" + line.rstrip(b"\n") + sep + rest
    after[f"archive/observations/{other}.md"] = after.pop(f"observations/{other}.md")
    return after


def _cm_file(before: dict[str, bytes], n: int) -> str:
    return next(k for k in before if k.endswith(f"-a{n:05x}.md"))


def _expected_cognitive(before: dict[str, bytes], action: str) -> dict[str, bytes]:
    after = dict(before)
    bumped = b"updated: 2026-11-22T10:00:00+00:00\n"
    if action == "merge":
        keep, other = _cm_file(before, 1), _cm_file(before, 2)
        after[keep] = (
            before[keep]
            .replace(b"tags: [ops, dup1a]", b"tags: [ops, dup1a, dup1b]")
            .replace(
                b"updated: 2026-11-01T09:00:00+00:00\n",
                bumped + b"merged_from: [a0000200-0000-4000-8000-000000000002]\n",
            )
        )
        after[other.replace("graph/", "archive/", 1)] = after.pop(other)
        return after
    new, old = _cm_file(before, 10), _cm_file(before, 9)
    new_id, old_id = "a0000a00-0000-4000-8000-00000000000a", "a0000900-0000-4000-8000-000000000009"
    rel = "type: BUILDS_ON, direction: {d}, strength: 1.0, context: supersedes " + old_id
    after[new] = before[new].replace(
        b"updated: 2026-11-10T09:00:00+00:00\n",
        bumped + f"relations: [{{target: {old_id}, {rel.format(d='outgoing')}}}]\n".encode(),
    )
    after[old.replace("graph/", "archive/", 1)] = after.pop(old).replace(
        b"updated: 2026-11-09T09:00:00+00:00\n",
        bumped + f"relations: [{{target: {new_id}, {rel.format(d='incoming')}}}]\n".encode(),
    )
    return after


def _section(title: str, date_: str, body: str, extra: str = "") -> bytes:
    return (
        f"## {title}\n<!-- dc:type=fact dc:importance=6.0 dc:ttl=180 dc:date={date_}{extra} -->"
        f"\n{body}\n\n"
    ).encode()


def _expected_dream(before: dict[str, bytes], action: str, ids: dict[str, str]) -> dict[str, bytes]:
    after = dict(before)
    obs = before["observations.md"]
    if action == "merge":
        keep, other, n_keep, n_other, prev = "dup1a", "dup1b", 1, 2, "dup1a"
        note = f" dc:merged_from={ids[other]}"
        reason, importance = f"merged into {ids[keep]}", 4.0
    else:
        keep, other, n_keep, n_other, prev = "num_b", "num_a", 10, 9, "freq_b"
        note = f" dc:supersedes={ids[other]}"
        reason, importance = f"superseded by {ids[keep]}", 4.7
    t_keep, b_keep = rv.ITEMS[keep]
    t_other, b_other = rv.ITEMS[other]
    kept = _section(t_keep, f"2026-11-{n_keep:02d}", b_keep)
    gone = _section(t_other, f"2026-11-{n_other:02d}", b_other)
    assert kept in obs and gone in obs
    after["observations.md"] = obs.replace(gone, b"").replace(
        kept, _section(t_keep, f"2026-11-{n_keep:02d}", b_keep, note)
    )
    entry = {
        "id": f"OBS-202611{n_other:02d}-001",
        "original_date": f"2026-11-{n_other:02d}",
        "impact": "medium",
        "type": "fact",
        "ttl_days": 180,
        "importance": importance,
        "archived_reason": reason,
        "full_text": gone.decode().rstrip("\n"),
        "section_id": ids[other],
        "after_section": ids[prev],
        "archived_on": "2026-11-22",
    }
    after["archive.jsonl"] = (json.dumps(entry, ensure_ascii=False) + "\n").encode()
    return after


def _expected_experience(
    before: dict[str, bytes], action: str, ids: dict[str, str]
) -> dict[str, bytes]:
    after = dict(before)
    if action == "merge":
        keep, other = ids["dup1a"], ids["dup1b"]
        view = {
            "id": "view_2026-11-22T10:00:00Z_19e2",
            "lens": "merge_v1",
            "applied_to": [keep],
            "delta_from_raw": {
                "added": f"merged_from: {other}",
                "removed": "",
                "reweighted": [],
                "merged_from": [other],
            },
            "provenance_braid": [keep, other],
        }
        after["views.jsonl"] = (json.dumps(view) + "\n").encode()
        note = f"merged into {keep}"
    else:
        keep, other = ids["num_b"], ids["num_a"]
        new_text = "Orders database pool tuning. " + rv.ITEMS["num_b"][1]
        old_text = "Orders database connection pool. " + rv.ITEMS["num_a"][1]
        stance = {
            "id": "stance_2026-11-22_3977",
            "question": f"Which holds now: {keep} or {other}?",
            "candidates": [
                {"exp": keep, "claim": new_text, "p": 1.0},
                {"exp": other, "claim": old_text, "p": 0.0},
            ],
            "method": "manual_review",
            "decision": {
                "claim": new_text,
                "support": [keep],
                "supersedes": [other],
                "residual_uncertainty": 0.0,
            },
            "created_at": "2026-11-22T10:00:00Z",
        }
        after["stances.jsonl"] = (json.dumps(stance) + "\n").encode()
        note = f"superseded by {keep}"
    op = {
        "ts": "2026-11-22T10:00:00Z",
        "op": "tombstone",
        "target": "exp",
        "id": other,
        "reason": "archived",
        "note": note,
    }
    after["wal.jsonl"] = (json.dumps({"wal_id": "wal_000001", "ops": [op]}) + "\n").encode()
    return after


ACTIONS = {"merge": ("dup1a", "dup1b"), "supersede": ("num_b", "num_a")}


def _expected(fmt: str, before: dict[str, bytes], action: str, ids: dict[str, str]) -> dict:
    if fmt == "project-ocean":
        return _expected_ocean(before, action)
    if fmt == "observation-v1":
        return _expected_observation(before, action)
    if fmt == "cognitive-memory":
        return _expected_cognitive(before, action)
    if fmt == "dream-cycle":
        return _expected_dream(before, action, ids)
    return _expected_experience(before, action, ids)


@pytest.mark.parametrize("action", sorted(ACTIONS))
@pytest.mark.parametrize("fmt", rv.FORMATS)
def test_merge_and_supersede_write_exactly_and_undo_restores(
    tmp_path: Path, fmt: str, action: str
) -> None:
    root, catalog, ids = _open(tmp_path, fmt)
    first, second = (catalog.get(ids[k]) for k in ACTIONS[action])
    before = tree(root)
    entry = apply_curation(action, first, second, AS_OF, now=NOW)
    assert entry["action"] == action
    after = tree(root)
    expected = _expected(fmt, before, action, ids)
    assert sorted(after) == sorted(expected)
    for rel, data in expected.items():
        assert after[rel] == data, rel
    fresh = open_catalog(root)
    assert list(fresh.problems()) == [] and list(fresh.ref_problems()) == []
    pairs = _pairs(review(fresh.vaults, AS_OF))
    assert frozenset((first.id, second.id)) not in pairs, "the pair is settled"
    undo(root)
    assert tree(root) == before


@pytest.mark.parametrize("fmt", rv.FORMATS)
def test_supersede_keeping_the_old_records_the_decision(tmp_path: Path, fmt: str) -> None:
    root, catalog, ids = _open(tmp_path, fmt)
    new, old = catalog.get(ids["neg_b"]), catalog.get(ids["neg_a"])
    before = tree(root)
    apply_curation("supersede", new, old, AS_OF, keep_old=True, now=NOW)
    fresh = open_catalog(root)
    assert not fresh.get(old.id).archived
    assert frozenset((new.id, old.id)) not in _pairs(review(fresh.vaults, AS_OF))
    assert (root / DECISIONS_REL).is_file()
    undo(root)
    assert tree(root) == before
    assert frozenset((new.id, old.id)) in _pairs(review(open_catalog(root).vaults, AS_OF))


# ------------------------------------------------------------------ dismiss


def test_dismiss_hides_until_a_member_changes_and_undo_brings_it_back(tmp_path: Path) -> None:
    root, catalog, ids = _open(tmp_path, "project-ocean")
    pair = frozenset((ids["num_a"], ids["num_b"]))
    item = next(
        i
        for i in review(catalog.vaults, AS_OF)
        if frozenset(m.id for m in i.candidate.members) == pair
    )
    before = tree(root)
    dismiss(item.candidate, AS_OF)
    assert tree(root) == before, "keep both changes no memory"
    assert pair not in _pairs(review(open_catalog(root).vaults, AS_OF))
    saved = json.loads((root / DECISIONS_REL).read_text())
    assert saved["decisions"][item.candidate.id]["action"] == "dismiss"
    undo(root)
    assert pair in _pairs(review(open_catalog(root).vaults, AS_OF))
    dismiss(item.candidate, AS_OF)
    changed = root / catalog.get(ids["num_a"]).path
    changed.write_bytes(changed.read_bytes() + b"Set by Ana.\n")
    assert pair in _pairs(review(open_catalog(root).vaults, AS_OF)), "a changed member is back"


def test_a_broken_decisions_file_is_never_rewritten(tmp_path: Path) -> None:
    root, catalog, _ids = _open(tmp_path, "observation-v1")
    path = root / DECISIONS_REL
    path.parent.mkdir(parents=True)
    path.write_bytes(b"{not json")
    items = review(catalog.vaults, AS_OF)
    assert items, "the queue still shows"
    with pytest.raises(RefusedError, match=r"decisions\.json"):
        dismiss(items[0].candidate, AS_OF)
    assert path.read_bytes() == b"{not json"


def test_refusals(tmp_path: Path) -> None:
    root, catalog, ids = _open(tmp_path, "project-ocean")
    a = catalog.get(ids["dup1a"])
    with pytest.raises(RefusedError, match="same memory"):
        apply_curation("merge", a, a, AS_OF)
    other_root, other_catalog, other_ids = _open(tmp_path / "second", "project-ocean")
    with pytest.raises(RefusedError, match="different vaults"):
        apply_curation("merge", a, other_catalog.get(other_ids["dup1b"]), AS_OF)
    # Another agent's observation: the backlink would not resolve.
    cross = catalog.get(ids["dup2a"])
    assert cross.id.startswith("beta/") and a.id.startswith("alpha/")
    before = tree(root)
    with pytest.raises(RefusedError, match="different agents"):
        apply_curation("supersede", a, cross, AS_OF)
    assert tree(root) == before and other_root.is_dir()
