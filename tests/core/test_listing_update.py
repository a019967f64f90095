"""`MemoryList.update`: a few rows change in place and the view equals a fresh sort."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from memlens.core.listing import SORT_KEYS, MemoryList, MemoryRow, parse_query, sort_key

ROOTS = (Path("/vaults/a"), Path("/vaults/b"))
WORDS = ("alpha", "beta", "gamma", "delta", "omega")


def row(rng: random.Random, n: int, root: Path | None = None) -> MemoryRow:
    title = f"{rng.choice(WORDS)} {rng.choice(WORDS)} {n}"
    tags = tuple(rng.sample(WORDS, rng.randint(0, 2)))
    root = root or rng.choice(ROOTS)
    strength = rng.choice([None, round(rng.random(), 2)])
    return MemoryRow(
        vault=root.name,
        vault_root=root,
        format="test",
        id=f"m{n}",
        title=title,
        kind=rng.choice(("fact", "note")),
        tags=tags,
        health=rng.choice(("active", "fading", "stable")),
        status="",
        strength=strength,
        importance=rng.choice([None, 0.1, 0.5, 0.9]),
        confidence=None,
        when="",
        when_key=(1, float(rng.randint(0, 9))),
        expires_on=None,
        haystack="\n".join((title, " ".join(tags), f"m{n}")).lower(),
    )


def expected_view(lst: MemoryList) -> list[MemoryRow]:
    """What a full sort and filter of the live rows shows (slot order breaks ties)."""
    live = [r for r in lst.rows if r in lst]
    key = sort_key(lst.sort_column)
    ordered = sorted(live, key=key, reverse=lst.reverse)
    terms = parse_query(lst.query)
    out = []
    for r in ordered:
        if lst.scope is not None and r.vault_root != lst.scope:
            continue
        if all(t.value in r.haystack for t in terms if t.field is None):
            out.append(r)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_random_updates_match_a_fresh_sort(seed: int) -> None:
    rng = random.Random(seed)
    counter = 0

    def fresh() -> MemoryRow:
        nonlocal counter
        counter += 1
        return row(rng, counter)

    lst = MemoryList([fresh() for _ in range(300)])
    lst.sort_by(rng.choice(SORT_KEYS), reverse=rng.random() < 0.5)
    if seed % 2:
        lst.set_query(rng.choice(WORDS))
    for _ in range(60):
        live = [r for r in lst.rows if r in lst]
        k = rng.choice([1, 2, 5, 80])
        picked = rng.sample(live, min(k, len(live)))
        half = len(picked) // 2
        replaced = [(old, replace(old, title=f"{rng.choice(WORDS)} x")) for old in picked[:half]]
        for _, new in replaced:
            new.haystack = new.title.lower()
        removed = picked[half:]
        added = [fresh() for _ in range(rng.randint(0, k))]
        for r in added:
            r.order = rng.choice([-1, *(o.order for o in live[:3])])
        lst.update(replaced=replaced, added=added, removed=removed)
        assert list(lst) == expected_view(lst)
        assert lst.total == len(live) - len(removed) + len(added)
        if rng.random() < 0.1:
            lst.sort_by(rng.choice(SORT_KEYS), reverse=rng.random() < 0.5)
            assert list(lst) == expected_view(lst)


def test_replaced_row_keeps_its_slot_key_and_natural_place() -> None:
    rng = random.Random(1)
    rows = [row(rng, i, ROOTS[0]) for i in range(10)]
    lst = MemoryList(rows)
    new = replace(rows[4], title="changed")
    lst.update(replaced=[(rows[4], new)])
    assert lst[4] is new
    assert lst.position_of(new.key) == 4
    assert lst.position_of_row(new) == 4
    assert rows[4] not in lst
    assert lst.find(ROOTS[0], new.id) is new


def test_added_row_goes_after_its_anchor_in_vault_order() -> None:
    rng = random.Random(2)
    a = [row(rng, i, ROOTS[0]) for i in range(3)]
    b = [row(rng, 10 + i, ROOTS[1]) for i in range(3)]
    lst = MemoryList(a + b)
    extra = row(rng, 99, ROOTS[0])
    extra.order = a[-1].order
    lst.update(added=[extra])
    assert list(lst) == [*a, extra, *b]
    # A later extend continues after every order given out.
    c = row(rng, 50, ROOTS[1])
    lst.extend([c])
    assert list(lst)[-1] is c


def test_removed_rows_leave_lookups_and_compact_eventually() -> None:
    rng = random.Random(3)
    rows = [row(rng, i) for i in range(5000)]
    lst = MemoryList(rows)
    lst.update(removed=rows[:10])
    assert lst.total == 4990
    assert lst.find(rows[0].vault_root, rows[0].id) is None
    assert lst.position_of(rows[0].key) is None
    lst.update(removed=rows[10:2000])  # past a quarter: slots are compacted
    assert len(lst.rows) == lst.total == 3000
    assert list(lst) == rows[2000:]
    lst.set_query("alpha")
    assert list(lst) == [r for r in rows[2000:] if "alpha" in r.haystack]


def test_update_with_unknown_rows_is_harmless() -> None:
    rng = random.Random(4)
    rows = [row(rng, i) for i in range(5)]
    lst = MemoryList(rows)
    stranger = row(rng, 77)
    lst.update(removed=[stranger])
    assert list(lst) == rows
    lst.update(replaced=[(stranger, row(rng, 78))])
    assert lst.total == 6
