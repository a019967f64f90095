"""Project Ocean's second generation: each formula against values worked by hand.

The arithmetic is written next to each expected value; nothing here reads a
vault (see test_ocean_gen2.py for the vaults).
"""

from __future__ import annotations

import math
from datetime import date
from pathlib import Path

import pytest

from memlens.core.formats.project_ocean.decay2 import (
    effective_days,
    extended_max_age,
    freshness,
    neglect_due,
    parse_max_age,
    verdict,
    writeback,
)
from memlens.core.formats.project_ocean.recall import recall, tokenize
from memlens.core.formats.project_ocean.references import reference_updates
from memlens.core.formats.recall_model import RecallRequest
from memlens.core.model import Memory

AS_OF = date(2026, 11, 22)


def gen2(
    mem_id: str,
    importance: float,
    created: date | None,
    max_age: str = "30d",
    *,
    refs: int = 0,
    penalty: float | None = None,
    pinned: bool = False,
    backlinks: tuple[str, ...] = (),
    ref_by: tuple[str, ...] = (),
    tags: tuple[str, ...] = (),
    body: str = "",
    verified: bool = False,
) -> Memory:
    """A second-generation memory as the reader makes it (only what the formulas read)."""
    from memlens.core.model import Relation

    agent, _, stem = mem_id.partition("/")
    return Memory(
        format="project-ocean",
        vault_root=Path("/v"),
        id=mem_id,
        kind="observation",
        title=stem,
        body=body,
        path=f"agents/{agent}/memory/vault/{stem}.md",
        tags=tags,
        importance=importance,
        created=created,
        pinned=pinned,
        relations=tuple(Relation(target=b, type="backlink", field="backlinks") for b in backlinks),
        native={
            "agent": agent,
            "area": "vault",
            "shared": False,
            "generation": 2,
            "max_age": max_age,
            "max_age_days": parse_max_age(max_age),
            "refs": refs,
            "ref_by": list(ref_by),
            "neglect_penalty": penalty,
            "verified": verified,
        },
    )


def test_max_age_values() -> None:
    assert parse_max_age("14d") == 14
    assert parse_max_age(" 180d ") == 180
    assert parse_max_age("permanent") is None
    for bad in ("forever", "0d", "30", 30, None, "-3d", "3w"):
        with pytest.raises(ValueError):
            parse_max_age(bad)


def test_effective_max_age() -> None:
    assert effective_days(30, 0.79) == 30  # below 0.8: as written
    assert effective_days(30, 0.8) == 60  # 30 × 2
    assert effective_days(30, 0.89) == 60
    assert effective_days(30, 0.9) == 90  # 30 × 3
    assert effective_days(14, 1.0) == 42  # 14 × 3
    assert effective_days(None, 0.95) is None  # permanent


def test_freshness() -> None:
    assert freshness(0, 30) == 1.0  # 1 − 0.95 · 0/30
    assert math.isclose(freshness(15, 30), 0.525)  # 1 − 0.95 · 15/30 = 1 − 0.475
    assert math.isclose(freshness(29, 30), 1 - 0.95 * 29 / 30)  # 0.08166…
    assert freshness(30, 30) == 0.05  # age reached the effective max age: the floor
    assert freshness(400, 30) == 0.05
    assert freshness(None, 30) == 1.0  # no created date
    assert freshness(400, None) == 1.0  # permanent
    assert math.isclose(freshness(52, 60), 1 - 0.95 * 52 / 60)  # 0.17666…


def test_neglect_penalty_blocks() -> None:
    assert neglect_due(14, 0) == 0.0  # no penalty within the first 14 days
    assert neglect_due(27, 0) == 0.0  # (27 − 14) // 14 = 0 blocks
    assert neglect_due(28, 0) == 0.1  # (28 − 14) // 14 = 1
    assert neglect_due(30, 0) == 0.1  # the script's own test: 30 days → −0.1
    assert neglect_due(42, 0) == 0.2  # (42 − 14) // 14 = 2
    assert neglect_due(56, 0) == 0.3  # 3 blocks
    assert neglect_due(500, 0) == 0.3  # capped at 0.3
    assert neglect_due(500, 1) == 0.0  # referenced: never penalised


def test_neglect_penalty_never_compounds() -> None:
    # created 30 days before: due 0.1.  Run 1 writes 0.5 → 0.4 and neglect_penalty 0.1.
    before = gen2("scout/obs-old-001", 0.5, date(2026, 10, 23), "90d")
    v = verdict(before, AS_OF)
    assert (v.age, v.penalty_due, v.importance, v.status) == (30, 0.1, 0.4, "active")
    assert writeback(before, AS_OF) == (
        {"importance": 0.4, "neglect_penalty": 0.1},
        "neglect penalty: importance 0.50 → 0.40 (no refs, age 30 days)",
    )
    # What run 1 left: the script would take 0.1 off again every day (0.3, 0.2, ...);
    # with 0.1 recorded as written, nothing is due on the same or the next day.
    after = gen2("scout/obs-old-001", 0.4, date(2026, 10, 23), "90d", penalty=0.1)
    assert writeback(after, AS_OF) is None
    assert writeback(after, date(2026, 11, 23)) is None
    assert verdict(after, AS_OF).importance == 0.4
    # Day 42 (2026-12-04): due 0.2, written 0.1 → only 0.1 more: 0.4 → 0.3.
    assert writeback(after, date(2026, 12, 4)) == (
        {"importance": 0.3, "neglect_penalty": 0.2},
        "neglect penalty: importance 0.40 → 0.30 (no refs, age 42 days)",
    )


def test_run_verdicts_in_the_scripts_order() -> None:
    # importance 0.15 < 0.2: archived at any age.
    assert verdict(gen2("a/x", 0.15, AS_OF), AS_OF).status == "expired"
    # 45 days, max_age 30d, importance 0.3 (< 0.4), refs 0: due (45−14)//14 = 2 blocks
    # = 0.2 → 0.1 < 0.2 → archived.
    v = verdict(gen2("a/x", 0.3, date(2026, 10, 8)), AS_OF)
    assert (v.age, v.penalty_due, v.importance, v.status) == (45, 0.2, 0.1, "expired")
    # 45 days, 30d, importance 0.75 with refs (no penalty): 45 > 30, ≥ 0.7 → extend 30 × 1.5 = 45d.
    v = verdict(gen2("a/x", 0.75, date(2026, 10, 8), refs=2), AS_OF)
    assert (v.status, v.new_max_age) == ("extend", 45)
    # 20 days, 14d, importance 0.5: no penalty yet ((20−14)//14 = 0), past 14 → review.
    assert verdict(gen2("a/x", 0.5, date(2026, 11, 2), "14d"), AS_OF).status == "review"
    # importance 0.85 → effective 60 days; 52 days old: 5·52 = 260 ≥ 4·60 = 240 → near_expiry,
    # judged by 0.85 although the penalty due, (52−14)//14 = 2 → 0.2, makes it 0.65 now.
    v = verdict(gen2("a/x", 0.85, date(2026, 10, 1)), AS_OF)
    assert (v.eff, v.importance, v.status) == (60, 0.65, "near_expiry")
    # permanent: never expires, but the penalty and the 0.2 rule still apply.
    assert verdict(gen2("a/x", 0.92, date(2020, 1, 1), "permanent", refs=1), AS_OF).status == (
        "permanent"
    )
    assert verdict(gen2("a/x", 0.25, date(2020, 1, 1), "permanent"), AS_OF).status == "expired"
    # pinned: permanent, nothing written.
    pinned = gen2("a/x", 0.3, date(2026, 1, 1), pinned=True)
    assert verdict(pinned, AS_OF).status == "permanent" and writeback(pinned, AS_OF) is None


def test_extension_steps_worked_out() -> None:
    # 30 → int(30·1.5) = 45 → int(45·1.5) = 67 → int(67·1.5) = 100.
    assert extended_max_age(30, 46, 0.75) == 67
    assert extended_max_age(30, 68, 0.75) == 100
    # At importance 0.85 the effective max age is twice the days: 45 · 2 = 90 ≥ 68.
    assert extended_max_age(30, 68, 0.85) == 45
    # 1d never stays 1d: int(1·1.5) = 1, so memlens adds a day at least.
    assert extended_max_age(1, 2, 0.75) == 2


def test_script_tokens() -> None:
    # Lowercase alphanumerics; stopwords ("the", "for", "is") and one-letter tokens go.
    assert tokenize("The CPL for Facebook is 18$ a lead!") == ["cpl", "facebook", "18", "lead"]
    # The script's tag string doubled with nothing between: "cpl facebook" × 2.
    assert tokenize(" ".join(("cpl", "facebook")) * 2) == ["cpl", "facebookcpl", "facebook"]


def test_recall_score_by_hand() -> None:
    # Two documents, query "alpha".  Document tokens (no tags): A = [alpha, beta], B = [beta].
    # n = 2; df(alpha) = 1, df(beta) = 2; idf = ln(3/2) + 1 = 1.405465, ln(3/3) + 1 = 1.
    # A = {alpha: ½·1.405465, beta: ½·1}; query = {alpha: 1·1.405465}.
    # cosine(A, q) = 0.702733·1.405465 / (|A| · 1.405465) = 0.702733 / √(0.702733² + 0.5²)
    #              = 0.702733 / 0.862454 = 0.814807.
    # A: importance 0.5, created as_of (freshness 1.0) → score 0.814807 · 0.5 = 0.4074.
    a = gen2("hawk/obs-a", 0.5, AS_OF, body="alpha beta")
    b = gen2("hawk/obs-b", 0.9, AS_OF, body="beta")
    hits = recall([a, b], RecallRequest(query="alpha", as_of=AS_OF))
    assert [(h.memory.id, h.score) for h in hits] == [("hawk/obs-a", 0.4074)]
    idf = math.log(3 / 2) + 1
    cosine = (0.5 * idf) / math.sqrt((0.5 * idf) ** 2 + 0.25)
    assert math.isclose(hits[0].explain["cosine"], cosine)  # type: ignore[arg-type]
    # Below importance 0.1 a file leaves the pool (and the idf): only B is left, no hit.
    low = gen2("hawk/obs-a", 0.05, AS_OF, body="alpha beta")
    assert recall([low, b], RecallRequest(query="alpha", as_of=AS_OF)) == []


def test_reference_boosts_by_hand() -> None:
    # captain's obs cited by forge and shield (cross-agent: +0.15 each) and by another
    # captain obs (same agent: +0.1): 0.5 + 0.15 + 0.15 + 0.1 = 0.90, refs 3.
    target = gen2("captain/obs-1", 0.5, AS_OF)
    citing = [
        gen2("forge/obs-2", 0.5, AS_OF, backlinks=("obs-1",)),
        gen2("shield/obs-3", 0.5, AS_OF, backlinks=("obs-1.md",)),
        gen2("captain/obs-4", 0.5, AS_OF, backlinks=("obs-1", "obs-1")),
    ]
    (u,), skipped = reference_updates([target, *citing])
    assert skipped == []
    assert (u.memory.id, u.refs, u.importance, u.delta) == ("captain/obs-1", 3, 0.9, 0.4)
    # Sources in the script's order: captain, shield, hawk..., forge: captain/obs-4 first.
    assert u.ref_by == ["captain/obs-4", "shield/obs-3", "forge/obs-2"]
    # Capped at 1.0: 0.9 + 0.15 = 1.05 → 1.0.
    high = gen2("captain/obs-1", 0.9, AS_OF)
    (u,), _ = reference_updates([high, citing[0]])
    assert u.importance == 1.0
    # A second run: every citation is in ref_by already and refs agree: nothing to do.
    done = gen2(
        "captain/obs-1", 0.9, AS_OF, refs=3, ref_by=("captain/obs-4", "shield/obs-3", "forge/obs-2")
    )
    assert reference_updates([done, *citing]) == ([], [])
