"""The search query language: tokens, filters, negation, phrases, errors."""

from __future__ import annotations

from datetime import date

import pytest

from memlens.core.search.query import QueryError, confidence_value, parse_query


def test_words_phrases_and_negation() -> None:
    q = parse_query('consent "one-to-one Rule" -spam -"marketing partners" lead')
    assert q.words == ("consent", "lead")
    assert q.excluded_words == ("spam",)
    assert q.phrases == ("one-to-one rule",)
    assert q.excluded_phrases == ("marketing partners",)
    assert q.filters == ()
    assert q.has_text


def test_every_filter_parses_to_its_field() -> None:
    q = parse_query(
        "tag:a,B type:rule kind:fact format:ocean vault:x agent:hawk health:fading "
        "status:near_expiry source:qa before:2026-01-02 after:2025-12-31 "
        "importance>0.5 confidence>=0.8 importance:<=3"
    )
    got = [(f.field, f.op, f.values) for f in q.filters]
    assert got == [
        ("tag", ":", ("a", "b")),
        ("kind", ":", ("rule",)),
        ("kind", ":", ("fact",)),
        ("format", ":", ("ocean",)),
        ("vault", ":", ("x",)),
        ("agent", ":", ("hawk",)),
        ("health", ":", ("fading",)),
        ("status", ":", ("near_expiry",)),
        ("source", ":", ("qa",)),
        ("before", ":", ("2026-01-02",)),
        ("after", ":", ("2025-12-31",)),
        ("importance", ">", ("0.5",)),
        ("confidence", ">=", ("0.8",)),
        ("importance", "<=", ("3",)),
    ]
    assert q.filters[9].day == date(2026, 1, 2)
    assert q.filters[11].number == 0.5
    assert not q.has_text


def test_negated_filters_and_quoted_values() -> None:
    q = parse_query('-tag:x -health:expired source:"agent a"')
    assert [(f.field, f.negated) for f in q.filters] == [
        ("tag", True),
        ("health", True),
        ("source", False),
    ]
    assert q.filters[2].values == ("agent a",)


def test_confidence_words() -> None:
    f = parse_query("confidence:high").filters[0]
    assert (f.op, f.number) == ("=", 0.9)
    assert confidence_value("medium") == (0.6, "word")
    assert confidence_value(None) == (1.0, "missing")
    assert confidence_value(1) == (1.0, "number")
    assert confidence_value("LOW") == (0.3, "word")
    assert confidence_value("whatever") == (0.5, "unknown")


@pytest.mark.parametrize(
    ("text", "culprit"),
    [
        ("consent foo:bar", "foo:bar"),
        ("before:yesterday", "before:yesterday"),
        ("importance>high", "importance>high"),
        ("health:sick", "health:sick"),
        ("status:weird", "status:weird"),
        ("format:notaformat", "format:notaformat"),
        ("tag:", "tag:"),
        ("type>3", "type>3"),
    ],
)
def test_bad_filters_name_the_token(text: str, culprit: str) -> None:
    with pytest.raises(QueryError) as err:
        parse_query(text)
    assert err.value.token == culprit
    assert culprit in str(err.value)


def test_things_that_only_look_like_filters_are_words() -> None:
    q = parse_query("03:25 https://example.org/x")
    assert q.words == ("03:25", "https://example.org/x")
    q = parse_query('"todo: fix"')
    assert q.phrases == ("todo: fix",)


def test_trailing_word_and_unclosed_quote() -> None:
    assert parse_query("consent ru").trailing_word
    assert not parse_query("consent ru ").trailing_word
    assert not parse_query("consent tag:x").trailing_word
    q = parse_query('lead "queue dep')
    assert q.phrases == ("queue dep",)
    assert parse_query("  -  ").is_empty
