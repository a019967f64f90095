"""Hand-written queries on the own test vaults; expected hits reasoned from their content.

All judged as of 2026-11-22 (tests/fixtures/README.md).  Comments give the
reasoning.  Queries name a format (or an id of one) so that the other
formats' own vaults cannot change their answers; the agent filters of
Project Ocean run on the bundled demo vault.
"""

from __future__ import annotations

import math
import shutil
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from memlens.core import Catalog, open_catalog
from memlens.core.search.index import FUZZY_WEIGHT, Hit, SearchIndex

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DEMO_OCEAN = Path(__file__).resolve().parents[2] / "core" / "demo_vaults" / "project-ocean"
AS_OF = date(2026, 11, 22)
# experience-records ids (experiences.jsonl line numbers in the comments)
FW_UPDATE_LOG = "exp_2026-10-19T07:08:40Z_77ab"  # line 2
CRON_FILE = "exp_2026-10-19T07:12:03Z_8969"  # line 3
CI_LOG = "exp_2026-10-26T22:07:15Z_69b3"  # line 10
REFUND_MAIL = "exp_2026-10-31T09:30:00Z_b9ce"  # line 14
NO_GAP_NIGHT = "exp_2026-11-12T06:45:00Z_9d6f"  # line 17
MIDNIGHT_THEORY = "exp_2026-10-27T08:05:00Z_c259"  # line 37, p 0.28
ERASED = "exp_2026-10-29T15:40:00Z_6400"  # line 12, tombstoned


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return open_catalog(FIXTURES)


@pytest.fixture(scope="module")
def index(catalog: Catalog) -> SearchIndex:
    return SearchIndex.from_catalog(catalog, AS_OF)


@pytest.fixture(scope="module")
def ocean() -> SearchIndex:
    """The bundled Project Ocean demo vault: agents atlas and quill, one shared copy."""
    return SearchIndex.from_catalog(open_catalog(DEMO_OCEAN), AS_OF)


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


def test_index_covers_every_valid_memory(
    catalog: Catalog, index: SearchIndex, own_expected: dict[str, Any]
) -> None:
    assert len(index) == sum(f["valid_count"] for f in own_expected["formats"].values())
    assert len(index) == sum(1 for _ in catalog.memories())


def test_words_rank_by_content(index: SearchIndex) -> None:
    # Four observation/v1 records are about the green pool; the three short
    # observations with "green" in the title outrank the comprehension.
    hits = index.search("green format:observation-v1")
    assert set(ids(hits)[:3]) == {"obs-004", "obs-006", "obs-007"}
    assert ids(hits)[3] == "comp-blue-green-002"
    # SERVFAIL is the resolver story: obs-013 says it in its event, title and body.
    assert ids(index.search("servfail"))[0] == "obs-013"
    # mosquitto is the gateway story of the experience records: the journal
    # line quoting it (p 0.99) and the inference naming it (p 0.82).
    assert set(ids(index.search("mosquitto format:experience"))) == {
        FW_UPDATE_LOG,
        "exp_2026-10-19T07:35:00Z_0855",
    }
    for q in ("green", "servfail", "mosquitto", "refund", "clinic"):
        for h in index.search(q):
            check_explain(h)


def test_decay_weight_decides_between_equal_matches(index: SearchIndex) -> None:
    # A filter-only query gives every hit relevance 1, so confidence x weight
    # orders them.  The fading dream-cycle sections (active, importance < 3):
    # backup output 2.8/3.5 = 0.8 (conf 0.9), audiobook 2.74/4.0 = 0.685
    # (conf 0.7), sleep summary 1.5/5.5 = 0.27 (conf 0.95), then the boat
    # insurance and the vaccination day, both decayed to 0.
    hits = index.search("health:fading format:dream", limit=50)
    assert titles(hits)[:3] == [
        "Backup script output",
        "Audiobook narrator preference",
        "Sleep Tracker Summary — 2026-11-14",
    ]
    assert set(titles(hits)[3:]) == {"Boat insurance renewal", "Vaccination open day"}
    assert all(h.explain["health"] == "fading" for h in hits)


def test_misspelling_and_unicode_via_fuzzy(index: SearchIndex) -> None:
    # "resolvr" is no word in any memory; fuzzy title/tag matching finds
    # "resolver" (obs-013's title and its label).
    hits = index.search("resolvr")
    assert ids(hits)[0] == "obs-013"
    assert hits[0].explain["fuzzy_matches"][0]["matched"] == "resolver"
    # The Japanese birthday dinner is an event past its 14-day TTL (health
    # expired): asked for with health:all, its one-word title 祖母の八十歳の誕生日会
    # matches 八十歳の誕生日会 fuzzily.
    hits = index.search("八十歳の誕生日会 health:all")
    assert titles(hits) == ["祖母の八十歳の誕生日会"]
    assert index.search("八十歳の誕生日会") == []


def test_tag_and_health_filters(index: SearchIndex) -> None:
    # obs-013 is the only memory labelled dns; comprehension domains are tags.
    assert ids(index.search("tag:dns")) == ["obs-013"]
    assert ids(index.search("tag:webhook-auth")) == ["comp-webhook-auth-001"]
    # "bread": the Saturday habit is past its TTL (expired), the archived
    # duplicate of it is in archive.jsonl; neither shows by default.
    assert index.search("bread format:dream") == []
    assert titles(index.search("bread health:archived")) == ["Ines bakes bread at weekends."]
    assert titles(index.search("bread health:expired")) == ["Saturday bread baking"]
    assert ids(index.search("health:tombstoned")) == [ERASED]
    ttl = index.search("status:ttl_expired", limit=50)
    assert ttl and {h.memory.format for h in ttl} == {"dream-cycle"}
    # health:all brings back the expired Saturday habit too
    assert "Saturday bread baking" in titles(index.search("bread health:all"))


def test_type_format_vault_filters(index: SearchIndex) -> None:
    # Dream Cycle has exactly three rule sections (all confidence 1, weight 1).
    assert sorted(titles(index.search("type:rule"))) == [
        "Confirm before paying any supplier invoice",
        "Mila's asthma action plan",
        "Never disclose the controlled-drug safe code",
    ]
    assert titles(index.search("type:rule payment")) == [
        "Confirm before paying any supplier invoice"
    ]
    assert titles(index.search("vault:dream-cycle exam")) == ["Cello grade 6 exam, June 2027"]
    # "gateway": the pilot-booking observations and the gateway cron file.
    with_exp = {h.memory.format for h in index.search("gateway", limit=50)}
    without = {h.memory.format for h in index.search("gateway -format:experience", limit=50)}
    assert "experience-records" in with_exp
    assert "experience-records" not in without and "observation-v1" in without


def test_agent_filters(ocean: SearchIndex) -> None:
    # atlas wrote both latency notes (the regression and its postmortem).
    assert set(ids(ocean.search("agent:atlas latency"))) == {
        "atlas/obs-2026-11-20-001",
        "atlas/obs-2026-11-21-002",
    }
    assert ocean.search("agent:quill latency") == []
    # The failover SOP is permanent with confidence 0.95 in atlas/ and shared/.
    assert ids(ocean.search("agent:shared failover")) == ["shared/obs-2026-10-01-001"]
    hits = ocean.search("-agent:shared failover")
    assert ids(hits)[0] == "atlas/obs-2026-10-01-001"
    assert not any(i.startswith("shared/") for i in ids(hits))


def test_source_filter(index: SearchIndex) -> None:
    # Four valid qa-runner observations and one comprehension; the
    # observations carry no confidence (1.0), the comprehension's "high" less.
    hits = index.search("source:qa-runner", limit=50)
    assert len(hits) == 5
    assert ids(hits)[-1] == "comp-ui-tests-005"
    # Titles, bodies and tags are searched (an observation's `event` is not):
    # obs-018's title and the comprehension's topic say "booking-form".
    assert set(ids(index.search("source:qa-runner booking-form"))) == {
        "obs-018",
        "comp-ui-tests-005",
    }
    others = ids(index.search("booking-form -source:qa-runner", limit=50))
    assert "comp-ui-tests-005" not in others and "obs-018" not in others


def test_date_filters(index: SearchIndex) -> None:
    # Only obs-030 (2025-03-11) of the observations predates October 2025.
    assert ids(index.search("before:2025-10-01 allocator")) == ["obs-030"]
    # Created after 2026-11-17 outside dream-cycle, Project Ocean and
    # cognitive-memory: three observation/v1
    # records (obs-029's own date is 2026-11-18, at +02:00); the latest
    # experience is of 2026-11-12.
    assert set(
        ids(index.search("after:2026-11-17 -format:dream -format:ocean -format:cognitive"))
    ) == {
        "obs-029",
        "obs-031",
        "obs-20261118-b2c9",
    }


def test_numeric_filters(index: SearchIndex) -> None:
    # Dream-cycle importance is 0-10: three rules are >= 9.
    assert set(titles(index.search("importance>=9"))) == {
        "Confirm before paying any supplier invoice",
        "Never disclose the controlled-drug safe code",
        "Mila's asthma action plan",
    }
    # Five captures by tools are p 0.99 (the bank export is 0.98).
    assert set(ids(index.search("confidence>=0.99 format:experience"))) == {
        FW_UPDATE_LOG,
        CRON_FILE,
        CI_LOG,
        REFUND_MAIL,
        NO_GAP_NIGHT,
    }
    # Four comprehension documents are "high" (the quota one is "medium").
    assert set(ids(index.search("confidence:high format:observation"))) == {
        "comp-webhook-auth-001",
        "comp-blue-green-002",
        "comp-schema-backfill-003",
        "comp-ui-tests-005",
    }
    # The midnight-clock inference (0.28) is the only live memory below 0.5.
    assert ids(index.search("confidence<0.5")) == [MIDNIGHT_THEORY]


def test_negated_words_and_phrases(index: SearchIndex) -> None:
    # obs-001 and the webhook comprehension name the gateway and the webhook;
    # the gateway's cron file (experiences.jsonl line 3) only the gateway.
    with_webhook = ids(index.search("gateway", limit=50))
    without = ids(index.search("gateway -webhook", limit=50))
    assert {"obs-001", "comp-webhook-auth-001", CRON_FILE} <= set(with_webhook)
    assert CRON_FILE in without
    assert "obs-001" not in without and "comp-webhook-auth-001" not in without
    for h in index.search("gateway -webhook", limit=50):
        assert "webhook" not in (h.memory.title + h.memory.body + " ".join(h.memory.tags)).lower()
    for h in index.search('pool -"blue pool"', limit=50):
        assert "blue pool" not in (h.memory.title + h.memory.body).lower()


def test_phrases(index: SearchIndex) -> None:
    # Only the gateway journal line says "keepalive timeout".
    assert ids(index.search('"keepalive timeout"')) == [FW_UPDATE_LOG]
    # obs-012's title and the backfill comprehension's topic; the observation
    # (no confidence: 1.0) before the comprehension ("high").
    assert ids(index.search('"idle transactions" format:observation')) == [
        "obs-012",
        "comp-schema-backfill-003",
    ]


def test_similar_finds_the_promoted_copy(ocean: SearchIndex) -> None:
    (m,) = [x for x in ocean.memories() if x.id == "atlas/obs-2026-10-01-001"]
    hits = ocean.similar(m, k=3)
    assert ids(hits)[0] == "shared/obs-2026-10-01-001"
    assert math.isclose(hits[0].score, 1.0)


def test_near_duplicates_are_the_copies(own_fixtures_copy: Path, ocean: SearchIndex) -> None:
    groups = ocean.near_duplicates(0.9)
    pairs = {frozenset(m.id for m in g.memories) for g in groups}
    assert frozenset({"atlas/obs-2026-10-01-001", "shared/obs-2026-10-01-001"}) in pairs
    # An observation saved twice under a second id is a near duplicate too.
    root = own_fixtures_copy / "observation-v1" / "observations"
    text = (root / "obs-013.md").read_text(encoding="utf-8")
    (root / "obs-913.md").write_text(text.replace("id: obs-013", "id: obs-913"), "utf-8")
    index = SearchIndex.from_catalog(open_catalog(root.parent), AS_OF)
    pairs = {frozenset(m.id for m in g.memories) for g in index.near_duplicates(0.9)}
    assert frozenset({"obs-013", "obs-913"}) in pairs
    shutil.rmtree(root.parent)


def test_incremental_update_on_real_memories(catalog: Catalog) -> None:
    from dataclasses import replace

    index = SearchIndex.from_catalog(catalog, AS_OF)
    (m,) = [x for x in catalog.memories() if x.id == "obs-013"]
    changed = replace(m, body=m.body + " The fix shipped with a zebra-striped dashboard.")
    index.update(changed)
    assert ids(index.search("zebra"))[0] == "obs-013"
    others = [x for x in catalog.memories() if x.key != m.key] + [changed]
    rebuilt = SearchIndex.build(others, AS_OF, vaults=catalog.vaults)
    for q in ("resolver servfail", "dashboard", "dns key roll"):
        assert ids(index.search(q)) == ids(rebuilt.search(q)), q


def test_every_filter_negates(index: SearchIndex) -> None:
    # Only the three dream-cycle rules have importance >= 9.
    assert index.search("importance>=9 -type:rule") == []
    assert index.search("importance>=9 -vault:dream-cycle") == []
    assert index.search("importance>=9 -format:dream") == []
    # Of the rules only "Confirm before paying any supplier invoice" has importance 10.
    assert titles(index.search("type:rule -importance<10")) == [
        "Confirm before paying any supplier invoice"
    ]
    assert len(index.search("type:rule -confidence<1")) == 3  # all three are confidence 1
    # Of the two dream-cycle sections before October 2025 that are not expired,
    # only the safe-code rule stays when the date filter is negated the other way.
    assert titles(index.search("-after:2025-10-01 importance>=9")) == [
        "Never disclose the controlled-drug safe code"
    ]
    assert index.search("status:ttl_expired -status:ttl_expired") == []
    assert titles(index.search("bread health:all -health:archived format:dream")) == [
        "Saturday bread baking"
    ]
    assert ids(index.search("tag:dns -tag:resolver")) == []
