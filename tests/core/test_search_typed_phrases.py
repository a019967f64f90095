"""Phrases typed in the search box: only the page is checked, the page is the same.

`core.search.phrases`: as the user types, past VERIFY_TYPED_MAX rows to
check, rows are checked in full hit order until the page is full (each
check may read a memory file).  The page must be exactly the one checking
every row gives; the total becomes an upper bound.
"""

from __future__ import annotations

from datetime import date

import pytest

import memlens.core.search.index as index_module
import memlens.core.search.phrases as phrases
from memlens.core.model import Memory
from memlens.core.scan.vault import open_catalog
from memlens.core.search.index import SearchIndex

AS_OF = date(2026, 11, 22)
COUNT = 60

NOTE = """\
---
tags: [pricing]
confidence: {confidence}
created: 2026-11-{day:02d}
source: hawk
---
{text}
"""


@pytest.fixture(scope="module")
def memories(tmp_path_factory: pytest.TempPathFactory) -> list[Memory]:
    """Every third note holds the words but not the phrase; confidences tie in groups."""
    root = tmp_path_factory.mktemp("typed") / "ocean"
    folder = root / "agents" / "hawk" / "memory" / "vault"
    folder.mkdir(parents=True)
    for n in range(COUNT):
        text = (
            "The vertical of insurance leads moved."
            if n % 3 == 0
            else "Lead pricing rose on the insurance vertical this week."
        )
        note = NOTE.format(confidence=(0.5, 0.7, 0.9)[n % 3], day=1 + n % 20, text=text)
        (folder / f"obs-2026-11-{1 + n % 20:02d}-{n:03d}.md").write_text(note, encoding="utf-8")
    return list(open_catalog(root).memories())


TYPED = ['"in', '"insu', '"insurance v', '"insurance vertical', '"insurance vertical"']


def _page(index: SearchIndex, text: str, limit: int) -> list[tuple[str, float]]:
    return [(h.memory.id, h.score) for h in index.run(text, limit, as_you_type=True).hits]


@pytest.mark.parametrize("text", TYPED)
@pytest.mark.parametrize("limit", [1, 5, 20])
def test_typed_phrase_pages_are_the_pages_of_a_full_check(
    memories: list[Memory], text: str, limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = SearchIndex.build(memories, AS_OF)
    monkeypatch.setattr(phrases, "VERIFY_TYPED_MAX", 10**9)
    full = index.run(text, limit, as_you_type=True)
    monkeypatch.setattr(phrases, "VERIFY_TYPED_MAX", 0)
    typed = index.run(text, limit, as_you_type=True)
    assert [(h.memory.id, h.score) for h in typed.hits] == [
        (h.memory.id, h.score) for h in full.hits
    ]
    assert full.total_exact
    if typed.total_exact:
        assert typed.total == full.total
    else:
        assert typed.total >= full.total


def test_typed_phrase_checks_only_what_the_page_needs(
    memories: list[Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    index = SearchIndex.build(memories, AS_OF)
    checked: list[int] = []
    real = index_module.lower_text

    def counting(cache: dict[int, str], rows: list[Memory], row: int) -> str:
        checked.append(row)
        return real(cache, rows, row)

    monkeypatch.setattr(index_module, "lower_text", counting)
    monkeypatch.setattr(phrases, "VERIFY_TYPED_MAX", 0)
    results = index.run('"insurance vertical', 5, as_you_type=True)
    assert len(results.hits) == 5
    # The five best pass, plus at most the non-phrase notes ranked among them.
    assert 5 <= len(checked) < COUNT // 2
    assert not results.total_exact and results.total >= COUNT * 2 // 3
    # Not as-you-type (the CLI): every candidate is checked, the total exact.
    checked.clear()
    index._lower.clear()
    exact = index.run('"insurance vertical"', 5)
    assert exact.total_exact and exact.total == COUNT - COUNT // 3
    assert len(checked) == COUNT
    index.prepare_order()  # computed ahead, same order after
    assert _page(index, '"insurance vertical', 5) == [(h.memory.id, h.score) for h in results.hits]


@pytest.mark.parametrize(
    ("phrase", "open_end", "text", "found"),
    [
        ("postgres m", True, "the postgres memory grew", True),
        ("postgres m", True, "mypostgres memory", False),  # starts at a word boundary
        ("postgres m", True, "postgres slow, then postgres m", True),  # later occurrence
        ("redis time", False, "redis timeouts again", False),  # a closed phrase ends one too
        ("redis time", False, "xredis time; redis time.", True),
        ("-42 c", True, "at -42 celsius", True),  # opens with a non-word character
        ("ab.cd", False, "ab cd abxcd", False),  # literal punctuation, not a regex dot
        ("cache", False, "", False),
    ],
)
def test_a_phrase_is_found_exactly_where_its_pattern_matches(
    phrase: str, open_end: bool, text: str, found: bool
) -> None:
    """`Phrase.found_in` looks for the literal first: the answer is still the pattern's."""
    ph = phrases.compile_phrase(phrase, open_end)
    assert ph is not None
    assert ph.found_in(text) is found
    assert (ph.pattern.search(text) is not None) is found
