"""The core list model behind the app's memory list: sort, filter, window, triage."""

from __future__ import annotations

import random
from datetime import date
from pathlib import Path

import pytest

from memlens.core import open_catalog
from memlens.core.listing import (
    INVALID,
    SORT_KEYS,
    MemoryList,
    MemoryRow,
    Term,
    narrows,
    parse_query,
    problem_entries,
    rows_for_vaults,
    strength_histogram,
    triage_groups,
)
from memlens.core.model import Health, Problem, Reason

AS_OF = date(2026, 11, 22)
ROOT = Path("/vaults/a")


def make_row(
    i: int,
    title: str,
    *,
    tags: tuple[str, ...] = (),
    health: str = "active",
    strength: float | None = 0.5,
    importance: float | None = None,
    kind: str = "fact",
    expires_on: date | None = None,
    root: Path = ROOT,
) -> MemoryRow:
    return MemoryRow(
        vault=root.name,
        vault_root=root,
        format="test",
        id=f"m{i}",
        title=title,
        kind=kind,
        tags=tags,
        health=health,
        status=health,
        strength=strength,
        importance=importance,
        confidence=None,
        when="",
        when_key=(1, 0.0),
        expires_on=expires_on,
        haystack="\n".join((title, " ".join(tags), f"m{i}")).lower(),
    )


def sample() -> list[MemoryRow]:
    return [
        make_row(0, "Deploy the Billing service", tags=("deploy", "ops"), strength=0.9),
        make_row(1, "Billing retries", tags=("billing",), strength=0.2, health="fading"),
        make_row(2, "Garden notes", tags=("home",), strength=None, health="stable", kind="note"),
        make_row(3, "Rate limits", tags=("api",), strength=0.0, health="expired"),
        make_row(4, "billing DISPUTE", tags=("money",), strength=0.5, importance=7.0),
    ]


def ids(lst: MemoryList) -> list[str]:
    return [r.id for r in lst]


def test_window_and_len() -> None:
    lst = MemoryList(sample())
    assert len(lst) == 5 and lst.total == 5
    assert [r.id for r in lst[1:3]] == ["m1", "m2"]
    assert lst[-1].id == "m4"
    assert [r.order for r in lst] == [0, 1, 2, 3, 4]


def test_filter_is_case_insensitive_over_title_tags_and_id() -> None:
    lst = MemoryList(sample())
    lst.set_query("billing")
    assert ids(lst) == ["m0", "m1", "m4"]
    lst.set_query("ops")  # a tag
    assert ids(lst) == ["m0"]
    lst.set_query("m3")  # an id
    assert ids(lst) == ["m3"]
    lst.set_query("billing dispute")  # every word must match
    assert ids(lst) == ["m4"]
    lst.set_query("")
    assert len(lst) == 5


def test_field_terms() -> None:
    lst = MemoryList(sample())
    lst.set_query("health:fad")
    assert ids(lst) == ["m1"]
    lst.set_query("kind:note")
    assert ids(lst) == ["m2"]
    lst.set_query("tag:home garden")
    assert ids(lst) == ["m2"]
    lst.set_query("kind:")  # a field with no value yet matches everything
    assert len(lst) == 5


def test_incremental_narrowing_gives_the_same_result_as_a_fresh_filter() -> None:
    rng = random.Random(7)
    words = ["alpha", "beta", "gamma", "delta", "billing", "deploy"]
    rows = [
        make_row(i, " ".join(rng.choice(words) for _ in range(3)), tags=(rng.choice(words),))
        for i in range(500)
    ]
    typed = MemoryList(list(rows))
    query = "bil dep"
    for n in range(1, len(query) + 1):
        typed.set_query(query[:n])
        fresh = MemoryList([make_row(r.order, r.title, tags=r.tags) for r in rows])
        fresh.set_query(query[:n])
        assert ids(typed) == ids(fresh), query[:n]
    # Deleting characters widens again.
    typed.set_query("bil")
    assert len(typed) == sum(1 for r in rows if "bil" in r.haystack)


def test_narrows_only_when_every_old_term_is_implied() -> None:
    assert narrows(parse_query("bil"), parse_query("bill"))
    assert narrows(parse_query("bill"), parse_query("bill ops"))
    assert not narrows(parse_query("bill"), parse_query("bil"))
    # A plain word becoming a field term is not a narrowing.
    assert not narrows(parse_query("kind"), parse_query("kind:x"))
    assert parse_query("Kind:Note x") == (Term("kind", "note"), Term(None, "x"))
    # An unknown field name is just text.
    assert parse_query("http://x") == (Term(None, "http://x"),)


def test_sort_by_every_column_and_reverse_is_stable() -> None:
    lst = MemoryList(sample())
    for column in SORT_KEYS:
        lst.sort_by(column, reverse=False)
        assert len(lst) == 5
    lst.sort_by("strength")
    # None sorts last; ties keep natural order.
    assert ids(lst) == ["m3", "m1", "m4", "m0", "m2"]
    lst.sort_by("title")
    assert ids(lst) == ["m4", "m1", "m0", "m2", "m3"]
    lst.toggle_reverse()
    assert ids(lst) == ["m3", "m2", "m0", "m1", "m4"]
    lst.sort_by("health", reverse=False)
    assert ids(lst)[:2] == ["m3", "m1"]  # expired, then fading
    with pytest.raises(ValueError):
        lst.sort_by("nope")


def test_cycle_sort_wraps() -> None:
    lst = MemoryList(sample())
    seen = [lst.cycle_sort() for _ in SORT_KEYS]
    assert seen[-1] == "natural" and set(seen) == set(SORT_KEYS)


def test_filter_survives_sort_and_extend() -> None:
    lst = MemoryList(sample())
    lst.set_query("billing")
    lst.sort_by("strength")
    assert ids(lst) == ["m1", "m4", "m0"]
    lst.extend([make_row(9, "Billing audit", strength=0.1), make_row(10, "Other")])
    assert ids(lst) == ["m9", "m1", "m4", "m0"]
    assert lst.total == 7
    assert lst[0].order == 5  # appended rows continue the natural order


def test_scope_and_invalid_toggle() -> None:
    other = Path("/vaults/b")
    rows = [*sample(), make_row(5, "Elsewhere", root=other)]
    bad = make_row(6, "broken.md", health=INVALID, strength=None)
    bad.problem = Problem("test", ROOT, "broken.md", Reason.EMPTY_FILE, "zero-byte file")
    lst = MemoryList([*rows, bad])
    lst.set_scope(other)
    assert ids(lst) == ["m5"]
    lst.set_scope(None)
    assert len(lst) == 7
    lst.set_show_invalid(False)
    assert "m6" not in ids(lst)
    lst.set_show_invalid(True)
    assert lst.position_of(bad.key) == 6


@pytest.mark.parametrize("column", ["natural", "title", "strength"])
def test_extend_keeps_its_caches_equal_to_a_fresh_list(column: str) -> None:
    """Rows appended vault by vault: lookups, sort and filter as if built at once."""
    first = sample()
    more = [make_row(20, "Billing later", strength=0.2), make_row(21, "Zeta", strength=0.9)]
    grown = MemoryList(first)
    grown.sort_by(column)
    grown.set_query("billing")
    grown.position_of(first[0].key)  # builds the key index
    assert first[0] in grown  # and the slot map
    grown.extend(more)
    fresh = MemoryList([*first, *more])
    fresh.sort_by(column)
    fresh.set_query("billing")
    assert ids(grown) == ids(fresh)
    for row in [*first, *more]:
        assert grown.position_of(row.key) == fresh.position_of(row.key)
        assert row in grown


def test_problems_on_one_line_have_distinct_keys() -> None:
    """A minified `_state.json` puts every bad entry on line 1 with one reason."""
    rows = []
    for n, entry in enumerate(("a", "b")):
        row = make_row(20 + n, "_state.json", health=INVALID, strength=None)
        row.problem = Problem(
            "test",
            ROOT,
            "_state.json",
            Reason.WRONG_TYPE,
            f"entry '{entry}': access_count 'many' is not a whole number",
            line=1,
        )
        rows.append(row)
    assert rows[0].key != rows[1].key
    lst = MemoryList(rows)
    assert [lst.position_of(r.key) for r in rows] == [0, 1]


def test_position_and_find() -> None:
    lst = MemoryList(sample())
    lst.sort_by("title")
    assert lst.position_of((str(ROOT), "m1")) == 1
    lst.set_query("garden")
    assert lst.position_of((str(ROOT), "m1")) is None
    found = lst.find(ROOT, "m1")
    assert found is not None and found.title == "Billing retries"


def test_triage_groups_order_by_expiry_then_strength() -> None:
    rows = [
        make_row(0, "a", health="fading", strength=0.3, expires_on=date(2026, 12, 5)),
        make_row(1, "b", health="fading", strength=0.1),
        make_row(2, "c", health="fading", strength=0.4, expires_on=date(2026, 11, 30)),
        make_row(3, "d", health="expired", strength=0.0),
        make_row(4, "e", health="stable", strength=1.0),
    ]
    groups = triage_groups(rows)
    assert [h for h, _ in groups] == [Health.EXPIRED, Health.FADING, Health.STABLE]
    assert [r.id for r in groups[1][1]] == ["m2", "m0", "m1"]


def test_strength_histogram() -> None:
    rows = [make_row(i, "x", strength=s) for i, s in enumerate([0.0, 0.05, 0.5, 1.0, None])]
    assert strength_histogram(rows, buckets=4) == [2, 0, 1, 1]


def test_rows_from_the_fixture_vaults(own_fixtures_dir: Path) -> None:
    catalog = open_catalog(own_fixtures_dir)
    rows = rows_for_vaults(catalog.vaults, AS_OF)
    memories = sum(len(v.memories) for v in catalog.vaults)
    problems = sum(len(v.problems) for v in catalog.vaults)
    assert len(rows) == memories + problems
    assert sum(1 for r in rows if r.health == INVALID) == problems
    assert [r.order for r in rows] == list(range(len(rows)))
    for r in rows:
        assert r.haystack == r.haystack.lower()
        if r.problem is None:
            assert r.decay_error is None, r.decay_error
            assert r.info is not None and r.health == r.info.health.value
            assert r.strength is not None and 0.0 <= r.strength <= 1.0
    lst = MemoryList(rows)
    lst.sort_by("when")
    assert len(lst) == len(rows)
    entries = problem_entries(catalog.vaults)
    refs = sum(len(v.ref_problems) for v in catalog.vaults)
    assert len(entries) == problems + refs
    assert all(e.reason and e.path for e in entries)


def test_forecast_rows_agrees_with_core_decay_forecast(own_fixtures_dir: Path) -> None:
    from memlens.core.decay import forecast
    from memlens.core.listing import forecast_rows

    catalog = open_catalog(own_fixtures_dir)
    rows = rows_for_vaults(catalog.vaults, AS_OF)
    ours = forecast_rows(rows, AS_OF)
    theirs = forecast(catalog.memories(), AS_OF)
    assert {h: len(v) for h, v in ours.items()} == theirs
    assert all(r.health in ("active", "stable") for v in ours.values() for r in v)


def test_triage_groups_by_strength() -> None:
    rows = [
        make_row(0, "a", health="fading", strength=0.3, expires_on=date(2026, 12, 5)),
        make_row(1, "b", health="fading", strength=0.1),
        make_row(2, "c", health="fading", strength=0.4, expires_on=date(2026, 11, 30)),
    ]
    groups = triage_groups(rows, "strength")
    assert [r.id for r in groups[0][1]] == ["m1", "m0", "m2"]


def test_a_failing_decay_still_gives_a_row() -> None:
    from memlens.core.listing import memory_row
    from memlens.core.model import Memory

    memory = Memory(
        format="no-such-format",
        vault_root=ROOT,
        id="x1",
        kind="fact",
        title="T",
        body="",
        path="a.md",
    )
    row = memory_row("a", memory, AS_OF)
    assert row.decay_error and row.info is None and row.strength is None
    assert row.status == "decay error"
    MemoryList([row]).sort_by("strength")  # sortable with the numbers missing
