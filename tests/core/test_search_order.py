"""Search pages are stable: equal scores come in one documented total order.

Order: score desc, relevance desc, then vault root, path, line/index, id.  So
every `limit=k` page is a prefix of the `limit=k+1` page, in the API and in
`memlens search --json`, whatever order the memories were indexed in.
"""

from __future__ import annotations

import json
import random
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

import memlens.core.search.phrases as phrases
import memlens.core.search.ranking as ranking
from memlens.core.model import Memory
from memlens.core.scan.vault import open_catalog as load_catalog
from memlens.core.search.index import SearchIndex
from memlens.tui.cli.search import search

AS_OF = date(2026, 11, 22)
AGENTS = ("hawk", "scout", "shield")
PER_AGENT = 7

OBS = """\
---
tags: [pricing, leads]
confidence: 0.9
created: 2026-11-01
source: {agent}
---
Lead pricing rose on the insurance vertical; buyers accepted the new floor.
"""


def _ocean_vault(root: Path) -> None:
    """Identical observations under several agents and shared/: every score ties."""
    for agent in AGENTS:
        folder = root / "agents" / agent / "memory" / "vault"
        folder.mkdir(parents=True)
        for n in range(1, PER_AGENT + 1):
            (folder / f"obs-2026-11-{n:02d}-001.md").write_text(
                OBS.format(agent=agent), encoding="utf-8"
            )
    shared = root / "shared" / "observations"
    shared.mkdir(parents=True)
    for n in range(1, 4):
        (shared / f"obs-2026-11-{n:02d}-001.md").write_text(
            OBS.format(agent="hawk"), encoding="utf-8"
        )


@pytest.fixture(scope="module")
def vaults(tmp_path_factory: pytest.TempPathFactory) -> Path:
    top = tmp_path_factory.mktemp("ties")
    # Two vaults holding the same ids: the vault decides between them.
    _ocean_vault(top / "b-ocean")
    _ocean_vault(top / "a-ocean")
    return top


@pytest.fixture(scope="module")
def memories(vaults: Path) -> list[Memory]:
    return list(load_catalog(vaults).memories())


def _place(m: Memory) -> tuple[str, str, int, int, str]:
    return (str(m.vault_root), m.path, m.line or 0, m.index or 0, m.id)


QUERIES = ["pricing", "lead pricing buyers", "tag:leads", '"insurance vertical"']


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("mode", ["small", "ranked", "checked"])
def test_every_page_is_a_prefix_of_the_next(
    memories: list[Memory], query: str, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if mode == "ranked":  # equal scores ordered through the cached place ranks
        monkeypatch.setattr(ranking, "RANKED_SORT_MIN", 0)
    if mode == "checked":  # phrase checks in score order until the page is full
        monkeypatch.setattr(phrases, "VERIFY_ALL_MAX", 0)
    index = SearchIndex.build(memories, AS_OF)
    full = index.search(query, limit=len(memories) + 5)
    assert len(full) == len(memories)
    assert len({h.score for h in full}) == 1  # the premise: every score ties
    assert [_place(h.memory) for h in full] == sorted(_place(h.memory) for h in full)
    keys = [h.memory.key for h in full]
    for k in range(1, len(memories) + 1):
        assert [h.memory.key for h in index.search(query, limit=k)] == keys[:k]
    for offset in range(0, len(memories), 4):
        page = index.run(query, 4, offset=offset).hits
        assert [h.memory.key for h in page] == keys[offset : offset + 4]


@pytest.mark.parametrize("seed", range(5))
def test_indexing_order_does_not_change_the_order(memories: list[Memory], seed: int) -> None:
    want = [h.memory.key for h in SearchIndex.build(memories, AS_OF).search("pricing", 100)]
    shuffled = memories[:]
    random.Random(seed).shuffle(shuffled)
    built = SearchIndex.build(shuffled, AS_OF)
    assert [h.memory.key for h in built.search("pricing", 100)] == want
    # Rows added one by one (live reload) order the same way.
    grown = SearchIndex.build(shuffled[:3], AS_OF)
    for m in shuffled[3:]:
        grown.add(m)
    assert [h.memory.key for h in grown.search("pricing", 100)] == want


def test_higher_scores_still_come_first(vaults: Path, tmp_path: Path) -> None:
    memories = list(load_catalog(vaults).memories())
    index = SearchIndex.build(memories, AS_OF)
    best = memories[len(memories) // 2]
    best.confidence = 1.0
    index.update(best)
    hits = index.search("pricing", limit=3)
    assert hits[0].memory.key == best.key
    assert hits[0].score > hits[1].score


def test_cli_json_pages_are_prefixes(vaults: Path) -> None:
    runner = CliRunner()

    def ids(limit: int) -> list[tuple[str, str, str]]:
        result = runner.invoke(
            search,
            [str(vaults), "pricing", "--limit", str(limit), "--json", "--as-of", "2026-11-22"],
        )
        assert result.exit_code == 0, result.output
        return [(h["vault"], h["path"], h["id"]) for h in json.loads(result.stdout)]

    total = len(AGENTS) * PER_AGENT * 2 + 6
    longest = ids(total)
    assert len(longest) == total
    assert longest == sorted(longest)  # vault, then path
    for k in range(1, total):
        assert ids(k) == longest[:k]


def test_order_is_documented() -> None:
    result = CliRunner().invoke(search, ["--help"])
    assert "--limit 5 is the start of --limit 6" in " ".join(result.output.split())
