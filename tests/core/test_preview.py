"""What each agent sees (issue 21 item 2): every format's load and recall, hand-worked.

Each test writes a small vault of its own into tmp_path and checks the
preview against numbers worked out by hand in the comments, from the
format's own rules (specs/ and DESIGN.md) as of AS_OF.
"""

from __future__ import annotations

import json
import math
from datetime import date
from pathlib import Path
from typing import Any

from memlens.core import open_catalog
from memlens.core.formats.preview_model import approx_tokens
from memlens.core.preview import VaultPreview, preview_vaults, previews_to_json

AS_OF = date(2026, 3, 1)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _preview(root: Path, **kw: Any) -> VaultPreview:
    previews = preview_vaults(open_catalog(root, cache=False).vaults, AS_OF, **kw)
    assert len(previews) == 1
    return previews[0]


def _section(p: VaultPreview, key: str, agent: str | None = None) -> Any:
    found = [s for s in p.sections if s.key == key and s.agent == agent]
    assert len(found) == 1, [(s.key, s.agent) for s in p.sections]
    return found[0]


def test_tokens_are_characters_over_four_rounded_up() -> None:
    assert [approx_tokens("x" * n) for n in (0, 1, 4, 5, 8)] == [0, 1, 1, 2, 2]


# ---------------------------------------------------------------- cognitive memory


KIND_CODE = {"solution": 1, "decision": 2, "fix": 3}


def _cm_memory(root: Path, folder: str, kind: str, n: int, importance: float) -> None:
    # Titles of 300 characters make every CORE.md line len(path) + 306 long.
    title = f"{kind} {n:02d} ".ljust(300, "x")
    uuid = f"{n:08d}-0000-4000-8000-{KIND_CODE[kind]:012d}"
    _write(
        root / "graph" / folder / f"{kind[0]}{n:02d}.md",
        f'---\nid: {uuid}\ntype: {kind}\ntitle: "{title}"\nimportance: {importance}\n'
        "created: 2026-03-01T00:00:00+00:00\nupdated: 2026-03-01T00:00:00+00:00\n---\nBody.\n",
    )


def _cognitive_vault(root: Path) -> None:
    # Created on AS_OF, never accessed: score = importance × 1 × 0.5 × type weight.
    for n in range(1, 17):  # 16 solutions, weight 1.2: scores 0.6 .. 0.51
        _cm_memory(root, "solutions", "solution", n, round(1.0 - 0.01 * (n - 1), 2))
    for n in range(1, 16):  # 15 decisions, weight 1.3
        _cm_memory(root, "decisions", "decision", n, round(1.0 - 0.01 * (n - 1), 2))
    for n in range(1, 16):  # 15 fixes, weight 1.0: 0.5 .. 0.43
        _cm_memory(root, "fixes", "fix", n, round(1.0 - 0.01 * (n - 1), 2))
    _write(root / "CORE.md", "# Memory Core (auto-generated)\n> an old file\n")


def test_cognitive_core_md_regenerated_with_budget_and_cuts(tmp_path: Path) -> None:
    _cognitive_vault(tmp_path)
    p = _preview(tmp_path)
    core = _section(p, "core")
    cut = _section(p, "core_cut")
    # Header: 31 + 90 characters (active 16 + 15 + 1 = 32 of 46).  Solutions:
    # 23 + 15 × 329 (the 16th is past the section cap); decisions: 21 + 15 × 329;
    # so far 10,035.  Fixes: 14 + 325 each, and 10,035 + 14 + 6 × 325 = 11,999
    # fits where a 7th (12,324) is over 12,000: fixes 7..15 are cut by the budget.
    assert "Active memories: 32/46" in core.text
    assert core.budget.limit_chars == 12_000
    assert core.budget.used_chars == len(core.text) == 11_999
    sections = [e.details["section"] for e in core.entries]
    assert sections.count("Critical Solutions") == 15
    assert sections.count("Active Decisions") == 15
    assert sections.count("Key Fixes") == 6
    assert [e.path for e in core.entries if e.details["section"] == "Key Fixes"] == [
        f"graph/fixes/f{n:02d}.md" for n in range(1, 7)
    ]
    assert [(e.path, e.details["cut"]) for e in cut.entries] == [
        ("graph/solutions/s16.md", "section_cap"),
        *((f"graph/fixes/f{n:02d}.md", "over_budget") for n in range(7, 16)),
    ]
    assert core.entries[0].score == 0.6
    # The file on disk differs: the diff runs from it to the regenerated text.
    assert core.details["on_disk"] == "differs"
    assert core.diff[0] == "--- CORE.md (on disk)"
    assert "-> an old file" in core.diff
    assert core.tokens == math.ceil(11_999 / 4)


# --------------------------------------------------------------------- dream cycle

DREAM = """# Observations

## Vet visit for Pico
<!-- dc:type=event dc:importance=6.0 dc:ttl=14 dc:date=2026-02-25 -->
Pico had his vaccines.

## Sprint context
<!-- dc:type=context dc:importance=9.0 dc:date=2026-02-10 -->
Working on the billing export this sprint.

## Never share client files by email
<!-- dc:type=rule dc:importance=9.5 dc:date=2025-01-01 -->
Use the portal.

## Untagged note
Plain text without metadata.

## Parking receipt
<!-- dc:type=event dc:importance=2.0 dc:date=2026-02-28 -->
Paid 4 EUR.

## Prefers morning meetings
<!-- dc:type=preference dc:importance=7.0 dc:ttl=180 dc:date=2026-02-01 -->
Before 11:00.

## Pinned trivia
<!-- dc:type=event dc:importance=2.0 dc:ttl=never dc:date=2026-02-28 -->
Kept on purpose.
"""


def test_dream_cycle_loads_every_section_and_what_decays_out(tmp_path: Path) -> None:
    _write(tmp_path / "observations.md", DREAM)
    p = _preview(tmp_path)
    loaded = _section(p, "observations")
    assert [e.title for e in loaded.entries] == [
        "Vet visit for Pico",
        "Sprint context",
        "Never share client files by email",
        "Untagged note",
        "Parking receipt",
        "Prefers morning meetings",
        "Pinned trivia",
    ]
    # Vet visit: event, 6.0 − 0.5/day from 02-25: 4.0 now, below 3.0 from day 7
    # after its date (2.5), i.e. 3 days after AS_OF (TTL 14 would be day 15).
    # Sprint context: context, TTL 30 from 02-10: expired when age > 30, at
    # 03-13 = AS_OF + 12 (importance 9.0 − 0.1 × 31 = 5.9 stays above 3).
    # Parking receipt: event 2.0 − 0.5 = 1.5 already: due now.  Pinned trivia
    # has ttl=never (kept whatever its importance); the rule, the untagged
    # note and the preference (7.0 − 0.02 × 58 = 5.84 at +30) stay.
    week = _section(p, "decays_7")
    month = _section(p, "decays_30")
    assert [(e.title, e.details["in_days"]) for e in week.entries] == [
        ("Vet visit for Pico", 3),
        ("Parking receipt", 0),
    ]
    assert [(e.title, e.details["leaves_on"]) for e in month.entries] == [
        ("Vet visit for Pico", "2026-03-04"),
        ("Sprint context", "2026-03-13"),
        ("Parking receipt", "2026-03-01"),
    ]
    vet = week.entries[0]
    assert vet.details["reasons"] == ["importance below 3.0 (now 2.5)"]
    assert month.entries[1].details["reasons"] == ["context TTL expired (30 days)"]
    assert loaded.entries[0].score == 4.0
    assert loaded.entries[0].tokens == approx_tokens("## Vet visit for Pico\n" + vet.memory.body)


# ------------------------------------------------------------------ project ocean

BODY = "Carrier rates renewed for the north lane."


def _obs(root: Path, rel: str, confidence: float, created: str, decay: str | None) -> None:
    decay_line = f"decay: {decay}\n" if decay else ""
    _write(
        root / rel,
        f"---\ntags: [carrier]\nconfidence: {confidence}\ncreated: {created}\n"
        f"{decay_line}source: hawk\n---\n{BODY}\n",
    )


def _ocean_vault(root: Path) -> None:
    hawk = "agents/hawk/memory/vault"
    _obs(root, f"{hawk}/obs-2026-02-20-001.md", 0.9, "2026-02-20", None)
    _obs(root, f"{hawk}/obs-2026-02-21-001.md", 0.6, "2026-02-21", None)
    _obs(root, f"{hawk}/obs-2026-02-22-001.md", 0.8, "2026-02-25", "linear-10d")
    _obs(root, f"{hawk}/obs-2026-01-01-001.md", 1.0, "2026-01-01", "linear-30d")
    _write(
        root / f"{hawk}/obs-2026-02-23-001.md",
        "---\ntags: [food]\nconfidence: 1.0\ncreated: 2026-02-23\nsource: hawk\n---\n"
        "Lunch menu changed.\n",
    )
    _obs(root, "agents/hawk/memory/archive/obs-2025-12-01-001.md", 1.0, "2025-12-01", None)
    _obs(root, "agents/kite/memory/vault/obs-2026-02-20-001.md", 1.0, "2026-02-20", None)
    _obs(root, "shared/observations/obs-2026-02-24-001.md", 0.7, "2026-02-24", None)


def test_ocean_recall_top_three_for_an_agent_and_what_shared_adds(tmp_path: Path) -> None:
    _ocean_vault(tmp_path)
    p = _preview(tmp_path, agent="hawk", prompt="carrier rates")
    recall = _section(p, "recall", "hawk")
    adds = _section(p, "shared_adds", "hawk")
    # Same text, so the same cosine: the order is confidence × decay weight.
    # 0.9 × 1 (hawk 02-20), 0.7 × 1 (shared), 0.6 × 1 (hawk 02-21), then
    # 0.8 × (1 − 4/10) = 0.48 (hawk 02-22).  The 01-01 file is expired (age 59
    # > 30), the archive is never searched, kite is another agent, and the
    # lunch note does not match.
    assert [e.id for e in recall.entries] == [
        "hawk/obs-2026-02-20-001",
        "shared/obs-2026-02-24-001",
        "hawk/obs-2026-02-21-001",
    ]
    assert [e.note for e in recall.entries] == ["own vault", "shared/", "own vault"]
    first, second = recall.entries[0].score, recall.entries[1].score
    assert second / first == 0.7 / 0.9 or math.isclose(second / first, 0.7 / 0.9)
    # Without shared/ the third place is hawk 02-22 (0.48): shared/ pushes it out.
    assert [e.id for e in adds.entries] == ["shared/obs-2026-02-24-001"]
    assert adds.details["displaced"] == ["hawk/obs-2026-02-22-001"]
    assert adds.details["without_shared"] == [
        "hawk/obs-2026-02-20-001",
        "hawk/obs-2026-02-21-001",
        "hawk/obs-2026-02-22-001",
    ]
    assert recall.details["searched"] == {"agent": 5, "shared": 1}


def test_ocean_every_agent_without_a_name_and_nothing_without_a_prompt(tmp_path: Path) -> None:
    _ocean_vault(tmp_path)
    p = _preview(tmp_path, prompt="carrier rates")
    assert sorted({s.agent for s in p.sections}) == ["hawk", "kite"]
    kite = _section(p, "recall", "kite")
    assert [e.id for e in kite.entries] == ["kite/obs-2026-02-20-001", "shared/obs-2026-02-24-001"]
    quiet = _preview(tmp_path, agent="hawk")
    assert [(s.key, len(s.entries)) for s in quiet.sections] == [("recall", 0)]


# ------------------------------------------------------------- experience records


def _exp(exp_id: str, kind: str, created: str, text: str, parents: list[str]) -> str:
    return json.dumps(
        {
            "id": exp_id,
            "type": kind,
            "created_at": created,
            "content": {"text": text, "media": [], "structured": {}},
            "confidence": {"p": 0.9, "method": "direct"},
            "parents": parents,
            "evidence_ptrs": list(parents),
        }
    )


E1 = "exp_2026-03-01T09:00:00Z_0001"
E2 = "exp_2026-02-01T09:00:00Z_0002"
E3 = "exp_2026-03-01T10:00:00Z_0003"
E4 = "exp_2026-02-20T09:00:00Z_0004"
E5 = "exp_2026-04-01T09:00:00Z_0005"
E6 = "exp_2026-02-21T09:00:00Z_0006"


def _experience_vault(root: Path) -> None:
    lines = [
        _exp(
            E2,
            "occurrence",
            "2026-02-01T09:00:00Z",
            "Run schema changes before traffic shifts.",
            [],
        ),
        _exp(
            E1,
            "observation",
            "2026-03-01T09:00:00Z",
            "Deploy failed: the database migration locked the orders table.",
            [E2],
        ),
        _exp(E3, "occurrence", "2026-03-01T10:00:00Z", "Nightly database backup finished.", []),
        _exp(E4, "occurrence", "2026-02-20T09:00:00Z", "database migration locked again", []),
        _exp(E5, "occurrence", "2026-04-01T09:00:00Z", "database migration locked in April", []),
        _exp(E6, "occurrence", "2026-02-21T09:00:00Z", "Lunch was late.", []),
    ]
    _write(root / "experiences.jsonl", "\n".join(lines) + "\n")
    wal = {
        "wal_id": "wal_000001",
        "ops": [
            {
                "ts": "2026-02-22T00:00:00Z",
                "op": "tombstone",
                "target": "exp",
                "id": E4,
                "reason": "gdpr_erasure",
            }
        ],
    }
    _write(root / "wal.jsonl", json.dumps(wal) + "\n")
    view = {
        "id": "view_2026-03-01_0001",
        "lens": "causal_v2",
        "applied_to": [E1],
        "delta_from_raw": {"added": "lock -> failure", "removed": "", "reweighted": []},
    }
    _write(root / "views.jsonl", json.dumps(view) + "\n")
    stance = {
        "id": "stance_2026-03-01_0001",
        "question": "Why did the deploy fail?",
        "candidates": [{"exp": E1, "claim": "table lock", "p": 0.8}],
        "decision": {"claim": "table lock", "support": [E1], "residual_uncertainty": 0.2},
    }
    _write(root / "stances.jsonl", json.dumps(stance) + "\n")


def test_experience_records_hybrid_retrieval_order(tmp_path: Path) -> None:
    _experience_vault(tmp_path)
    p = _preview(tmp_path, prompt="database migration locked")
    hits = _section(p, "retrieval").entries
    # E4 is tombstoned and E5 is created after AS_OF: neither is recalled.  E1
    # holds all three words (keyword 1.0 after normalising, recency 1.0); E3
    # holds one.  E2 holds none but is E1's parent: one hop on the causal walk
    # (causal 1.0), 28 days old: 0.1 × 0.5^(28/30) + 0.2 × 1.0.  E6 is in no pool.
    assert hits[0].id == E1
    assert {e.id for e in hits} == {E1, E2, E3}
    by_id = {e.id: e for e in hits}
    e1, e2, e3 = by_id[E1], by_id[E2], by_id[E3]
    assert e1.details["parts"]["keyword"] == 1.0
    assert e1.details["parts"]["recency"] == 1.0
    assert e1.details["parts"]["causal"] == 0.0
    assert e2.details["parts"]["semantic"] == 0.0
    assert e2.details["parts"]["causal"] == 1.0
    assert math.isclose(e2.score, 0.1 * 0.5 ** (28 / 30) + 0.2)
    assert 0 < e3.details["parts"]["keyword"] < 1.0
    assert e1.score > e3.score
    # Lens application: the view and the stance on E1 come with it.
    assert e1.details["views"] == [{"id": "view_2026-03-01_0001", "lens": "causal_v2"}]
    assert e1.details["stances"][0]["decision"] == "table lock"
    assert "Lunch" not in json.dumps([e.to_dict() for e in hits])


# ---------------------------------------------------------------- observation/v1


def _ov1_obs(root: Path, obs_id: str, event: str) -> None:
    _write(
        root / "observations" / f"{obs_id}.md",
        f"---\nspec: observation/v1\nid: {obs_id}\ntimestamp: 2026-02-20T10:00:00Z\n"
        f'source: agent/tester\nevent: "{event}"\n---\n\n# {event}\n',
    )


def test_observation_v1_comprehension_documents_and_what_they_incorporate(tmp_path: Path) -> None:
    _ov1_obs(tmp_path, "obs-001", "Login returned 404")
    _ov1_obs(tmp_path, "obs-002", "Login returned 404 again")
    _ov1_obs(tmp_path, "obs-003", "Health check slow")
    _write(
        tmp_path / "comprehension" / "comp-auth-001.md",
        "---\nid: comp-auth-001\ntopic: Auth endpoint\ndomain: api\n"
        "prior:\n  statement: Login lives at /api/auth/login\n  confidence: medium\n"
        "  source: docs\nobservations: [obs-001, obs-009]\n"
        "posterior:\n  statement: Login moved to /api/v2/login\n  confidence: high\n"
        "  update_reasoning: two 404s\n  observations_used: [obs-001, obs-002]\n"
        "created: 2026-02-21T00:00:00Z\nupdated: 2026-02-21T00:00:00Z\n---\n\nNotes.\n",
    )
    p = _preview(tmp_path)
    docs = _section(p, "comprehension").entries
    assert [e.id for e in docs] == ["comp-auth-001"]
    doc = docs[0]
    assert doc.details["belief"] == "Login moved to /api/v2/login"
    assert doc.details["confidence"] == "high"
    assert doc.details["incorporates"] == ["obs-001", "obs-002"]
    assert doc.details["missing"] == ["obs-009"]
    assert doc.tokens == approx_tokens(
        "# Auth endpoint\nBelief (high): Login moved to /api/v2/login\n" + doc.memory.body
    )
    pending = _section(p, "not_incorporated").entries
    assert [e.id for e in pending] == ["obs-003"]


def test_json_document_shape(tmp_path: Path) -> None:
    _write(tmp_path / "dc" / "observations.md", DREAM)
    _ocean_vault(tmp_path / "ocean")
    catalog = open_catalog(tmp_path, cache=False)
    previews = preview_vaults(catalog.vaults, AS_OF, prompt="carrier rates")
    doc = previews_to_json(previews, AS_OF, None, "carrier rates")
    assert doc["as_of"] == "2026-03-01"
    assert doc["token_estimate"] == "ceil(characters / 4)"
    assert doc["prompt_tokens"] == 4
    assert [(v["vault"], v["format"]) for v in doc["vaults"]] == [
        ("dc", "dream-cycle"),
        ("ocean", "project-ocean"),
    ]
    dc = doc["vaults"][0]
    assert [s["key"] for s in dc["sections"]] == ["observations", "decays_7", "decays_30"]
    first = dc["sections"][0]["entries"][0]
    assert set(first) >= {"id", "title", "path", "tokens", "chars", "score", "note"}
    assert dc["tokens"]["load"] == sum(e["tokens"] for e in dc["sections"][0]["entries"])
    assert doc["tokens"]["recall"] == doc["vaults"][1]["tokens"]["recall"] > 0
    # --agent limits agent formats to that agent and other formats to a vault of that name.
    only = preview_vaults(catalog.vaults, AS_OF, agent="hawk", prompt="carrier rates")
    assert [v.rel for v in only] == ["ocean"]
