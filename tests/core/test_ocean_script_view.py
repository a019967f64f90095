"""memory-search.py's reading of a file and its per-file rules (`script_view`, `script_rules`),
and the first generation's ranking on a small vault against values computed by hand."""

from __future__ import annotations

import math
from datetime import date
from pathlib import Path

import pytest

from memlens.core.formats.project_ocean.script_rules import (
    gen1_confidence,
    gen1_decayed,
    gen1_weight,
    gen2_freshness,
    tag_set,
    tag_text,
)
from memlens.core.formats.project_ocean.script_view import parse_script_frontmatter
from memlens.core.formats.recall_model import RecallRequest
from memlens.core.scan.vault import open_catalog

AS_OF = date(2026, 11, 22)


def test_values_are_typed_the_scripts_way_not_yamls() -> None:
    text = (
        "---\n"
        'tags: [insurance, "cpl, leads"]\n'
        "confidence: 0.9  # an estimate\n"
        "created: '2026-11-08'\n"
        "verified: yes\n"
        "count: 3\n"
        "ratio: 0.50\n"
        "big: 1e3\n"
        "flag: TRUE\n"
        "# a comment line\n"
        "no colon here\n"
        "review:\n"
        "  confidence_note: nested keys count as top-level ones\n"
        "---\n\n  Body line one.\nBody --- line two.\n\n"
    )
    view = parse_script_frontmatter(text, 1)
    assert view.fields == {
        # the quoted comma splits, the quotes are stripped from each piece
        "tags": ["insurance", "cpl", "leads"],
        "confidence": "0.9  # an estimate",
        "created": "2026-11-08",
        "verified": "yes",
        "count": 3,
        "ratio": 0.5,
        "big": "1e3",
        "flag": True,
        "review": "",
        "confidence_note": "nested keys count as top-level ones",
    }
    assert view.body == "Body line one.\nBody --- line two."
    # A comment after the number: text that is no number reads 0.5.
    assert gen1_confidence(view.fields) == 0.5
    assert gen1_confidence({}) == 1.0


def test_block_list_tags_and_empty_items() -> None:
    block = parse_script_frontmatter("---\ntags:\n  - a\n  - b\n---\nx", 1)
    assert block.fields == {"tags": ""}
    assert tag_text(block.fields["tags"]) == "" and tag_set(block.fields["tags"]) == set()
    # A text value joins (and compares) its characters, as " ".join does in the script.
    assert tag_text("ab") == "a b" and tag_set("ab") == {"a", "b"}
    # Empty items: the first generation drops them after taking the quotes off, the second before.
    assert parse_script_frontmatter("---\ntags: [a, '', b]\n---\n", 1).fields["tags"] == ["a", "b"]
    assert parse_script_frontmatter("---\ntags: [a, '', b]\n---\n", 2).fields["tags"] == [
        "a",
        "",
        "b",
    ]


def test_no_frontmatter_keeps_the_whole_text_unstripped() -> None:
    view = parse_script_frontmatter("Just a note.\n", 1)
    assert view.fields == {} and view.body == "Just a note.\n"
    unclosed = parse_script_frontmatter("---\ntags: [a]\n", 1)
    assert unclosed.fields == {} and unclosed.body == "---\ntags: [a]\n"


@pytest.mark.parametrize(
    ("created", "decay", "decayed", "weight"),
    [
        ("2026-10-23", "linear-30d", False, 0.0),  # age 30 = N: weight 0, still in the pool
        ("2026-10-22", "linear-30d", True, 0.0),  # age 31 > N: out of the pool
        ("2026-11-12", "linear-40d", False, 1 - 10 / 40),
        ("2026-11-12", "exponential-60d", False, math.exp(-3 * 10 / 60)),
        ("2026-11-30", "linear-30d", False, 1 - (-8 / 30)),  # the future: above 1, as the script
        ("2026-11-12", "linear-30days", False, 1 - 10 / 30),  # the pattern is matched at the start
        ("2026-11-10T08:00", "linear-1d", False, 1.0),  # not YYYY-MM-DD: no decay
        ("2026-11-12", "Linear-30d", False, 1.0),  # another word: no decay
        ("", "linear-1d", False, 1.0),
    ],
)
def test_first_generation_decay(created: str, decay: str, decayed: bool, weight: float) -> None:
    fields: dict[str, object] = {"decay": decay}
    if created:
        fields["created"] = created
    assert gen1_decayed(fields, AS_OF) is decayed  # type: ignore[arg-type]
    assert gen1_weight(fields, AS_OF) == pytest.approx(weight, abs=1e-12)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("fields", "importance", "fresh"),
    [
        ({"created": "2026-11-12"}, 0.5, 1 - 0.95 * 10 / 30),  # max_age defaults to 30d
        ({"created": "2026-10-01", "max_age": "30d"}, 0.85, 1 - 0.95 * 52 / 60),  # doubled
        ({"created": "2026-09-01", "max_age": "30d"}, 0.95, 1 - 0.95 * 82 / 90),  # tripled
        ({"created": "2026-09-01", "max_age": "30d"}, 0.5, 0.05),  # past it: 0.05, not 0
        ({"created": "2026-09-01", "max_age": "permanent"}, 0.5, 1.0),
        ({"created": "2026-09-01", "max_age": 30}, 0.5, 1.0),  # no "d": unreadable, fresh
        ({"max_age": "30d"}, 0.5, 1.0),  # no created date
    ],
)
def test_second_generation_freshness(
    fields: dict[str, object], importance: float, fresh: float
) -> None:
    assert gen2_freshness(fields, importance, AS_OF) == pytest.approx(fresh, abs=1e-12)  # type: ignore[arg-type]


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_first_generation_ranking_by_hand(tmp_path: Path) -> None:
    """The first generation's formula on three files, computed by hand.

    A: tags [alpha], body "beta" -> tokens [alpha, beta] (tags once, not twice);
    B: body "beta" -> [beta]; C: body "alpha", decayed (age 11 > 10): out of the
    pool before the idf.  n = 2; idf(alpha) = ln(3/2) + 1 = 1.405465, idf(beta) =
    ln(3/3) + 1 = 1.  A = {alpha: 0.702733, beta: 0.5}; query "alpha" =
    {alpha: 1.405465}; cosine = 0.702733 / sqrt(0.702733² + 0.5²) = 0.814807.
    A: confidence 0.8, linear-10d, age 2 -> weight 0.8; score = 0.814807 × 0.8 ×
    0.8 = 0.521477 -> 0.5215.  B has no "alpha": no hit.
    """
    head = (
        "---\ntags: [{tags}]\nconfidence: {c}\ncreated: {d}\ndecay: linear-10d\nsource: hawk\n---\n"
    )
    _write(tmp_path, "agents/hawk/memory/vault/obs-2026-11-20-001.md",
           head.format(tags="alpha", c=0.8, d="2026-11-20") + "beta\n")  # fmt: skip
    _write(tmp_path, "agents/hawk/memory/vault/obs-2026-11-20-002.md",
           head.format(tags="", c=0.9, d="2026-11-20") + "beta\n")  # fmt: skip
    _write(tmp_path, "agents/hawk/memory/vault/obs-2026-11-11-001.md",
           head.format(tags="", c=0.9, d="2026-11-11") + "alpha\n")  # fmt: skip
    (vault,) = open_catalog(tmp_path).vaults
    hits = vault.adapter.recall(vault.memories, RecallRequest(query="alpha", as_of=AS_OF))
    assert hits is not None and len(hits) == 1
    (hit,) = hits
    cosine = 0.702733 / math.sqrt(0.702733**2 + 0.5**2)
    assert hit.explain["cosine"] == pytest.approx(cosine, abs=1e-6)
    assert hit.explain["weight"] == 0.8 and hit.explain["freshness"] == pytest.approx(0.8)
    assert hit.score == 0.5215
    assert hit.record is not None
    assert list(hit.record) == [
        "score", "file", "path", "source", "tags", "confidence", "created", "snippet",
    ]  # fmt: skip
    assert hit.record["tags"] == ["alpha"] and hit.record["created"] == "2026-11-20"
    assert hit.record["path"] == str(
        tmp_path.resolve() / "agents/hawk/memory/vault/obs-2026-11-20-001.md"
    )
