"""Hand-written queries on the public fixtures; expected hits reasoned from their content.

All judged as of 2026-11-22 (fixtures/README.md).  Comments give the reasoning.
"""

from __future__ import annotations

import json
import math
from datetime import date
from pathlib import Path

import pytest

from memlens.core import Catalog, open_catalog
from memlens.core.search import FUZZY_WEIGHT, Hit, SearchIndex

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures"
AS_OF = date(2026, 11, 22)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return open_catalog(FIXTURES)


@pytest.fixture(scope="module")
def index(catalog: Catalog) -> SearchIndex:
    return SearchIndex.from_catalog(catalog, AS_OF)


def ids(hits: list[Hit]) -> list[str]:
    return [h.memory.id for h in hits]


def titles(hits: list[Hit]) -> list[str]:
    """Dream-cycle ids are derived by the adapter; tests name sections by title."""
    return [h.memory.title for h in hits]


def check_explain(hit: Hit) -> None:
    e = hit.explain
    assert math.isclose(
        e["cosine"], math.fsum(t["contribution"] for t in e["terms"]), abs_tol=1e-15
    )
    relevance = 1.0 if e["filter_only"] else e["cosine"] + FUZZY_WEIGHT * e["fuzzy"] / 100.0
    assert e["relevance"] == relevance
    assert hit.score == relevance * e["confidence"] * e["decay_weight"]


def test_index_covers_every_valid_memory(catalog: Catalog, index: SearchIndex) -> None:
    expected = json.loads((FIXTURES / "expected.json").read_text())
    assert len(index) == sum(f["valid_count"] for f in expected["formats"].values())
    assert len(index) == sum(1 for _ in catalog.memories())


def test_words_rank_by_content(index: SearchIndex) -> None:
    # shield/obs-2026-11-19-002 says "TCPA disclosure" twice in its body and is
    # tagged disclosure; the FCC one-to-one rule (and its shared copy) is only
    # tagged tcpa.
    hits = index.search("tcpa disclosure")
    assert ids(hits)[0] == "shield/obs-2026-11-19-002"
    assert set(ids(hits)[1:3]) == {"shield/obs-2026-11-12-001", "shared/obs-2026-11-12-001"}
    # Four observation/v1 records are about the canary; the three short
    # observations with "Canary" in the title outrank the comprehension.
    hits = index.search("canary format:observation-v1")
    assert set(ids(hits)[:3]) == {"obs-004", "obs-006", "obs-007"}
    assert ids(hits)[3] == "comp-canary-rollout-002"
    # pg_dump is the staging-backup story of the experience records; the
    # first occurrence quotes it twice.
    assert ids(index.search("pg_dump"))[0] == "exp_2026-10-27T08:12:44Z_5c6b"
    for q in ("tcpa disclosure", "canary", "pg_dump", "restic backup", "consent"):
        for h in index.search(q):
            check_explain(h)


def test_decay_weight_decides_between_equal_matches(index: SearchIndex) -> None:
    # Both memories name Apex Debt Partners; the near-expiry acceptance note
    # (weight 0.13) and the near-expiry pricing (0.09) lose to nothing else,
    # but the pricing one ranks last.
    hits = index.search("apex debt partners health:fading")
    assert set(ids(hits)[:2]) == {"hawk/obs-2026-10-27-002", "shared/obs-2026-10-27-002"}
    assert ids(hits)[2] == "hawk/obs-2026-09-01-001"
    assert all(h.explain["health"] == "fading" for h in hits)


def test_misspelling_and_unicode_via_fuzzy(index: SearchIndex) -> None:
    # "restik" is no word in any memory; fuzzy title/tag matching finds
    # "restic".  The pinned vault/ memory tagged restic (weight 1.0) wins.
    hits = index.search("restik")
    assert ids(hits)[0] == "8b627624-d612-4bfc-bc86-ee90fe189732"
    assert hits[0].explain["fuzzy_matches"][0]["matched"] == "restic"
    # The CJK decision is archived by score (health expired): asked for with
    # health:all, its title word 做异地备份 matches 异地备份 fuzzily.
    hits = index.search("异地备份 health:all")
    assert ids(hits) == ["e6454985-5d65-45ca-8054-2b73f8685844"]
    assert index.search("异地备份") == []


def test_tag_and_health_filters(index: SearchIndex) -> None:
    # Two memories are tagged postback; the September one is in archive/.
    assert ids(index.search("tag:postback")) == ["watchtower/obs-2026-11-12-002"]
    assert ids(index.search("tag:postback health:archived")) == ["watchtower/obs-2026-09-12-001"]
    assert ids(index.search("latency health:expired")) == ["watchtower/obs-2026-11-01-001"]
    assert ids(index.search("health:tombstoned")) == ["exp_2026-11-05T09:02:00Z_1614"]
    # status: matches the native status; expected.json counts six near_expiry.
    expected = json.loads((FIXTURES / "expected.json").read_text())
    near = expected["formats"]["project-ocean"]["status_counts"]["near_expiry"]
    assert index.run("status:near_expiry", limit=50).total == near
    ttl = index.search("status:ttl_expired", limit=50)
    assert ttl and {h.memory.format for h in ttl} == {"dream-cycle"}
    # health:all brings back the archived CJK restic decision
    assert "e6454985-5d65-45ca-8054-2b73f8685844" not in ids(index.search("restic"))
    assert "e6454985-5d65-45ca-8054-2b73f8685844" in ids(index.search("restic health:all"))


def test_type_format_vault_filters(index: SearchIndex) -> None:
    # Dream Cycle has exactly three rule sections (all confidence 1, weight 1).
    assert sorted(titles(index.search("type:rule"))) == [
        "Confirm before sending money",
        "Never share the kids' school schedule",
        "Theo's allergy action plan",
    ]
    assert titles(index.search("type:rule money")) == ["Confirm before sending money"]
    assert titles(index.search("vault:dream-cycle marathon")) == [
        "Half marathon under 2:05 at Lakefront, April 2027"
    ]
    with_cognitive = {h.memory.format for h in index.search("backup", limit=50)}
    without = {h.memory.format for h in index.search("backup -format:cognitive", limit=50)}
    assert "cognitive-memory" in with_cognitive
    assert "cognitive-memory" not in without and "experience-records" in without


def test_agent_filters(index: SearchIndex) -> None:
    # scout's two QuoteNest notes and the source audit; the duplicate-rate
    # note is the freshest (weight 0.9, confidence 0.8).
    hits = index.search("agent:scout quotenest")
    assert ids(hits)[0] == "scout/obs-2026-11-19-003"
    assert set(ids(hits)) == {
        "scout/obs-2026-11-19-003",
        "scout/obs-2026-11-13-002",
        "scout/obs-2026-11-11-001",
    }
    # The consent SOP is permanent with confidence 1 in shield/ and shared/.
    assert ids(index.search("agent:shared consent"))[0] == "shared/obs-2026-01-15-001"
    hits = index.search("-agent:shared consent")
    assert ids(hits)[0] == "shield/obs-2026-01-15-001"
    assert not any(i.startswith("shared/") for i in ids(hits))


def test_source_filter(index: SearchIndex) -> None:
    # Five qa-runner observations and one comprehension (confidence medium 0.6).
    hits = index.search("source:qa-runner", limit=50)
    assert len(hits) == 6
    assert ids(hits)[-1] == "comp-flaky-e2e-005"
    assert ids(index.search("source:qa-runner flaky")) == ["comp-flaky-e2e-005"]
    assert "comp-flaky-e2e-005" not in ids(index.search("flaky -source:qa-runner"))


def test_date_filters(index: SearchIndex) -> None:
    # Only the two pinned cognitive memories of 2025-09-14 predate October 2025;
    # one of them is the homelab break-glass procedure.
    assert ids(index.search("before:2025-10-01 homelab")) == [
        "f74a780d-9639-4ab1-8195-c46ed817c8cc"
    ]
    # Created after 2026-11-20 outside dream-cycle: one observation/v1 and two
    # Project Ocean notes of 2026-11-21 (obs-031 is 2026-11-20 22:05, not after).
    assert set(ids(index.search("after:2026-11-20 -format:dream"))) == {
        "obs-20261121-7f3a",
        "watchtower/obs-2026-11-21-002",
        "shield/obs-2026-11-21-001",
    }


def test_numeric_filters(index: SearchIndex) -> None:
    # Dream-cycle importance is 0-10: three rules are >= 9.
    assert set(titles(index.search("importance>=9"))) == {
        "Confirm before sending money",
        "Never share the kids' school schedule",
        "Theo's allergy action plan",
    }
    # Cognitive importance is 0-1: the three pinned vault/ memories exceed 0.9.
    assert set(ids(index.search("importance>0.9 format:cognitive"))) == {
        "8b627624-d612-4bfc-bc86-ee90fe189732",
        "a9efc08a-9727-4684-989d-063b34bbcee9",
        "f74a780d-9639-4ab1-8195-c46ed817c8cc",
    }
    assert set(ids(index.search("confidence>=0.95 format:ocean"))) == {
        "shared/obs-2026-01-15-001",
        "shield/obs-2026-01-15-001",
        "shield/obs-2026-11-05-001",
    }
    # Four comprehension documents are "high".
    assert set(ids(index.search("confidence:high format:observation"))) == {
        "comp-billing-auth-001",
        "comp-canary-rollout-002",
        "comp-invoice-migration-003",
        "comp-rate-limit-004",
    }
    # The xdist-workers inference (0.31) is the only live memory below 0.5.
    assert ids(index.search("confidence<0.5")) == ["exp_2026-11-05T08:05:00Z_ce1d"]


def test_negated_words_and_phrases(index: SearchIndex) -> None:
    with_restic = ids(index.search("backup", limit=50))
    without = ids(index.search("backup -restic", limit=50))
    assert "d02c8d54-0b83-4f80-931d-cd868710fa13" in with_restic
    assert "d02c8d54-0b83-4f80-931d-cd868710fa13" not in without
    for h in index.search("backup -restic", limit=50):
        assert "restic" not in (h.memory.title + h.memory.body + " ".join(h.memory.tags)).lower()
    for h in index.search('lead -"debt-relief"', limit=50):
        assert "debt-relief" not in (h.memory.title + h.memory.body).lower()


def test_phrases(index: SearchIndex) -> None:
    # Only the incident note says "queue depth" (the hand-written notes without
    # frontmatter are invalid and not indexed).
    assert ids(index.search('"queue depth"')) == ["watchtower/obs-2026-11-21-002"]
    assert ids(index.search('"one-to-one consent" agent:shield')) == ["shield/obs-2026-11-12-001"]


def test_similar_finds_the_promoted_copy(index: SearchIndex) -> None:
    (m,) = [x for x in index.memories() if x.id == "shield/obs-2026-11-12-001"]
    hits = index.similar(m, k=3)
    assert ids(hits)[0] == "shared/obs-2026-11-12-001"
    assert math.isclose(hits[0].score, 1.0)


def test_near_duplicates_are_the_promoted_copies(index: SearchIndex) -> None:
    groups = index.near_duplicates(0.9)
    pairs = {frozenset(m.id for m in g.memories) for g in groups}
    for stem in ("obs-2026-01-15-001", "obs-2026-10-27-002", "obs-2026-11-12-001"):
        agent_copy = next(
            i for g in pairs for i in g if i.endswith(stem) and not i.startswith("shared/")
        )
        assert frozenset({agent_copy, f"shared/{stem}"}) in pairs
    assert frozenset({"watchtower/obs-2026-10-10-001", "shared/obs-2026-10-10-001"}) in pairs
    assert frozenset({"shield/obs-2026-10-20-001", "shared/obs-2026-10-20-001"}) in pairs


def test_incremental_update_on_real_memories(catalog: Catalog) -> None:
    from dataclasses import replace

    index = SearchIndex.from_catalog(catalog, AS_OF)
    (m,) = [x for x in catalog.memories() if x.id == "hawk/obs-2026-11-19-001"]
    changed = replace(m, body=m.body + " Switched the creative to a zebra-striped banner.")
    index.update(changed)
    assert ids(index.search("zebra"))[0] == "hawk/obs-2026-11-19-001"
    others = [x for x in catalog.memories() if x.key != m.key] + [changed]
    rebuilt = SearchIndex.build(others, AS_OF, vaults=catalog.vaults)
    for q in ("debt-relief facebook cpl", "creative", "campaign cpl"):
        assert ids(index.search(q)) == ids(rebuilt.search(q)), q


def test_every_filter_negates(index: SearchIndex) -> None:
    # Only the three dream-cycle rules have importance >= 9.
    assert index.search("importance>=9 -type:rule") == []
    assert index.search("importance>=9 -vault:dream-cycle") == []
    assert index.search("importance>=9 -format:dream") == []
    # Of the rules only "Confirm before sending money" has importance 10.
    assert titles(index.search("type:rule -importance<10")) == ["Confirm before sending money"]
    assert len(index.search("type:rule -confidence<1")) == 3  # all three are confidence 1
    # The two pinned cognitive memories of 2025-09-14 drop out; the passphrase
    # note of 2025-10-20 stays.
    assert ids(index.search("-before:2025-10-01 importance>0.9 format:cognitive")) == [
        "8b627624-d612-4bfc-bc86-ee90fe189732"
    ]
    assert index.search("status:near_expiry -status:near_expiry") == []
    assert ids(index.search("tag:postback health:all -health:archived")) == [
        "watchtower/obs-2026-11-12-002"
    ]
    assert ids(index.search("tag:postback health:all -tag:apex")) == [
        "watchtower/obs-2026-09-12-001"
    ]
