"""A UI-free list model of memories: precomputed rows, filter as you type, sort, window.

The app shows up to 100k memories.  Holding a widget per memory, or a
DataTable row per memory, is far too slow, so the list is modelled here, in
core, and the app draws only the visible window (`rows[start:stop]`).

Each `MemoryRow` is computed once per `as_of`: the decay numbers, the text of
the "age or expiry" column and a lowercase haystack for filtering.  A
`MemoryList` keeps three integer index lists over those rows (natural order,
current sort, current matches) so sorting and narrowing never copy rows.
Invalid items (`Problem`s) are rows too, with health `invalid`, so the main
list shows everything a vault holds.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, overload

from .decay import decay_of
from .formats.adapter import FormatAdapter
from .model import HEALTH_ORDER, DecayInfo, Health, Memory, Problem, ReferenceProblem
from .scan.vault import Vault

#: Health shown for invalid items; not a `Health` because they have no decay.
INVALID = "invalid"

#: Urgency rank of each health for sorting (invalid first, tombstoned last).
HEALTH_RANK: dict[str, int] = {INVALID: 0, **{h.value: i + 1 for i, h in enumerate(HEALTH_ORDER)}}

#: Confidence words some formats use, mapped onto 0..1 for sorting only.
CONFIDENCE_WORDS: dict[str, float] = {
    "certain": 1.0,
    "high": 0.9,
    "medium": 0.6,
    "low": 0.3,
    "unknown": 0.0,
}


@dataclass(frozen=True, slots=True)
class Column:
    """One sortable column of the memory list."""

    key: str
    label: str


#: Columns in display order; `natural` is the order the vaults hold them in.
COLUMNS: tuple[Column, ...] = (
    Column("natural", "vault order"),
    Column("title", "title"),
    Column("kind", "kind"),
    Column("health", "health"),
    Column("strength", "strength"),
    Column("importance", "importance"),
    Column("confidence", "confidence"),
    Column("when", "age / expiry"),
    Column("tags", "tags"),
    Column("vault", "vault"),
)
SORT_KEYS: tuple[str, ...] = tuple(c.key for c in COLUMNS)


@dataclass(slots=True)
class MemoryRow:
    """One line of the memory list: a memory (or an invalid item) at one `as_of`."""

    #: Display name of the vault (its path relative to what the user opened).
    vault: str
    vault_root: Path
    format: str
    id: str
    title: str
    kind: str
    tags: tuple[str, ...]
    #: Unified health value, or `invalid` for a Problem.
    health: str
    #: Native status (or the problem's reason category).
    status: str
    strength: float | None
    importance: float | None
    confidence: float | str | None
    #: Column text for "age or expiry", relative to `as_of`.
    when: str
    #: Sort key for `when`: expiring ones first by days left, then by age.
    when_key: tuple[int, float]
    expires_on: date | None
    memory: Memory | None = None
    problem: Problem | None = None
    info: DecayInfo | None = None
    #: Position in the natural (vault, file) order; the tie-breaker of every sort.
    order: int = 0
    #: Lowercased title, tags and id, searched by the filter.
    haystack: str = ""
    #: Set when the format's decay raised: the row still shows, with this text.
    decay_error: str | None = None
    #: The date `info` was computed for.
    as_of: date | None = None
    #: `key`, once computed (the list asks for it of every row, often).
    _key: tuple[str, str] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def key(self) -> tuple[str, str]:
        """Identity across vaults and across rebuilds at another `as_of`."""
        key = self._key
        if key is None:
            key = self._key = self._make_key()
        return key

    def full_info(self) -> DecayInfo | None:
        """`info` with its explanation (`why`), computed for this one row."""
        info = self.info
        if info is None or info.why or self.memory is None or self.as_of is None:
            return info
        try:
            return decay_of(self.memory, self.as_of)
        except Exception:  # the row's own numbers are still worth showing
            return info

    def _make_key(self) -> tuple[str, str]:
        if self.problem is not None:
            p = self.problem
            where = p.line if p.line is not None else p.index
            # The id and detail too: one line of a minified JSON file can
            # hold several problems of the same reason.
            return (
                str(self.vault_root),
                f"!{p.path}#{where}#{p.reason.value}#{p.id or ''}#{p.detail}",
            )
        return (str(self.vault_root), self.id)

    @property
    def is_invalid(self) -> bool:
        return self.problem is not None


def _day(value: date | datetime | None) -> date | None:
    if value is None:
        return None
    return value.date() if isinstance(value, datetime) else value


def _when(
    info: DecayInfo | None, created: date | None, as_of: date
) -> tuple[str, tuple[int, float]]:
    """Text and sort key for the "age or expiry" column."""
    if info is not None and info.expires_on is not None:
        left = (info.expires_on - as_of).days
        if left >= 0:
            return f"exp in {left}d", (0, float(left))
        return f"exp {-left}d ago", (0, float(left))
    age: int | None = None
    if info is not None:
        age = info.age_days if info.age_days is not None else info.days_elapsed
    if age is None and created is not None:
        age = (as_of - created).days
    if age is None:
        return "", (2, 0.0)
    if age < 0:
        return f"in {-age}d", (1, float(age))
    return f"{age}d old", (1, float(-age))


def _haystack(title: str, tags: Iterable[str], ident: str) -> str:
    return "\n".join((title, " ".join(tags), ident)).lower()


def memory_row(
    vault: str,
    memory: Memory,
    as_of: date,
    order: int = 0,
    adapter: FormatAdapter | None = None,
) -> MemoryRow:
    """The row of one valid memory at `as_of` (`adapter`: its format's, if known)."""
    info: DecayInfo | None
    error: str | None = None
    try:
        # Without the explanation text (most of a decay's cost); the detail
        # pane asks for the full one of the row it shows (`full_info`).
        if adapter is None:
            info = decay_of(memory, as_of, explain=False)
        else:
            info = adapter.decay(memory, as_of, explain=False)
    except Exception as exc:
        # Why: one adapter bug in one memory's decay must not hide the whole
        # vault from the app; the row shows the error instead of numbers.
        info = None
        error = f"{type(exc).__name__}: {exc}"
    when, when_key = _when(info, _day(memory.created), as_of)
    return MemoryRow(
        vault=vault,
        vault_root=memory.vault_root,
        format=memory.format,
        id=memory.id,
        title=memory.title,
        kind=memory.kind,
        tags=tuple(memory.tags),
        health=info.health.value if info else Health.ACTIVE.value,
        status=info.status if info else "decay error",
        strength=info.strength if info else None,
        importance=memory.importance,
        confidence=memory.confidence,
        when=when,
        when_key=when_key,
        expires_on=info.expires_on if info else None,
        memory=memory,
        info=info,
        order=order,
        haystack=_haystack(memory.title, memory.tags, memory.id),
        decay_error=error,
        as_of=as_of,
    )


def problem_row(vault: str, problem: Problem, order: int = 0) -> MemoryRow:
    """The row of one invalid item."""
    title = problem.title or problem.path
    ident = problem.id or problem.path
    return MemoryRow(
        vault=vault,
        vault_root=problem.vault_root,
        format=problem.format,
        id=ident,
        title=title,
        kind=INVALID,
        tags=(),
        health=INVALID,
        status=problem.reason.value,
        strength=None,
        importance=None,
        confidence=None,
        when=problem.reason.value,
        when_key=(3, 0.0),
        expires_on=None,
        problem=problem,
        order=order,
        haystack=_haystack(title, (problem.reason.value,), f"{ident}\n{problem.path}"),
    )


def rows_for_vault(vault: Vault, as_of: date, start: int = 0) -> list[MemoryRow]:
    """Rows of every memory then every invalid item of one scanned vault."""
    adapter = vault.adapter
    rows = [
        memory_row(vault.name, m, as_of, start + i, adapter) for i, m in enumerate(vault.memories)
    ]
    base = start + len(rows)
    rows.extend(problem_row(vault.name, p, base + i) for i, p in enumerate(vault.problems))
    return rows


def rows_for_vaults(vaults: Iterable[Vault], as_of: date) -> list[MemoryRow]:
    rows: list[MemoryRow] = []
    for v in vaults:
        rows.extend(rows_for_vault(v, as_of, len(rows)))
    return rows


# --------------------------------------------------------------------------- sorting


def _none_last(value: float | None) -> tuple[int, float]:
    return (1, 0.0) if value is None else (0, value)


def _confidence_value(value: float | str | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, str):
        return CONFIDENCE_WORDS.get(value.lower())
    return float(value)


def sort_key(column: str) -> Callable[[MemoryRow], Any]:
    """The key function that orders rows by `column` (ascending)."""
    if column == "natural":
        return lambda r: r.order
    if column == "title":
        return lambda r: r.title.lower()
    if column == "kind":
        return lambda r: r.kind.lower()
    if column == "health":
        return lambda r: (HEALTH_RANK.get(r.health, 99), _none_last(r.strength))
    if column == "strength":
        return lambda r: _none_last(r.strength)
    if column == "importance":
        return lambda r: _none_last(r.importance)
    if column == "confidence":
        return lambda r: _none_last(_confidence_value(r.confidence))
    if column == "when":
        return lambda r: r.when_key
    if column == "tags":
        return lambda r: (not r.tags, " ".join(r.tags).lower())
    if column == "vault":
        return lambda r: r.vault.lower()
    raise ValueError(f"unknown sort column {column!r}")


# --------------------------------------------------------------------------- filtering

#: `field:value` terms the filter understands, and the row text each one searches.
FILTER_FIELDS: dict[str, Callable[[MemoryRow], str]] = {
    "kind": lambda r: r.kind.lower(),
    "health": lambda r: r.health,
    "status": lambda r: r.status.lower(),
    "tag": lambda r: "\n".join(r.tags).lower(),
    "vault": lambda r: r.vault.lower(),
    "format": lambda r: r.format,
    "id": lambda r: r.id.lower(),
}


@dataclass(frozen=True, slots=True)
class Term:
    """One whitespace-separated word of a filter: `field:value` or plain text."""

    field: str | None
    value: str

    def implied_by(self, other: Term) -> bool:
        """True if every row matching `other` also matches this term."""
        return self.field == other.field and self.value in other.value


def parse_query(query: str) -> tuple[Term, ...]:
    """Filter words; all must match (AND).  Plain words match title, tags or id."""
    terms: list[Term] = []
    for word in query.lower().split():
        name, sep, value = word.partition(":")
        if sep and name in FILTER_FIELDS:
            if value:
                terms.append(Term(name, value))
            continue
        terms.append(Term(None, word))
    return tuple(terms)


def narrows(old: Sequence[Term], new: Sequence[Term]) -> bool:
    """True if `new` can only remove matches of `old` (so we filter the old result)."""
    if len(new) < len(old):
        return False
    return all(o.implied_by(n) for o, n in zip(old, new, strict=False))


def _predicate(terms: Sequence[Term]) -> Callable[[MemoryRow], bool]:
    plain = [t.value for t in terms if t.field is None]
    fielded = [(FILTER_FIELDS[t.field], t.value) for t in terms if t.field is not None]
    if not fielded:
        if len(plain) == 1:
            word = plain[0]
            return lambda r: word in r.haystack
        return lambda r: all(w in r.haystack for w in plain)
    return lambda r: all(w in r.haystack for w in plain) and all(v in get(r) for get, v in fielded)


@dataclass(slots=True)
class MemoryList:
    """Rows in a sort order, narrowed by a filter, read by window.

    `len(lst)` and `lst[i]` / `lst[start:stop]` see only the current matches
    in the current order; `total` counts every row.
    """

    rows: list[MemoryRow] = field(default_factory=list)
    sort_column: str = "natural"
    reverse: bool = False
    query: str = ""
    #: Only rows of this vault root (None: every vault).
    scope: Path | None = None
    show_invalid: bool = True
    _terms: tuple[Term, ...] = ()
    _sorted: list[int] = field(default_factory=list)
    _matches: list[int] = field(default_factory=list)
    _mask: bytearray = field(default_factory=bytearray)
    #: key -> index in `rows`, built on first use (identity lookups stay O(1)).
    _key_index: dict[tuple[str, str], int] | None = None
    #: Parallel to `rows`: haystacks, vault roots, invalid flags (tight filter loops).
    _hay: list[str] = field(default_factory=list)
    _roots: list[str] = field(default_factory=list)
    _invalid: bytearray = field(default_factory=bytearray)
    #: Sort keys per column, parallel to `rows`, computed on first use.
    _sort_keys: dict[str, list[Any]] = field(default_factory=dict)
    #: Parallel to `rows`: 0 for a slot `update` removed (compacted later).
    _alive: bytearray = field(default_factory=bytearray)
    _dead: int = 0
    #: id(row) -> index in `rows`, built on first use by `update`.
    _slot: dict[int, int] | None = None
    #: One past the largest natural order given out (where `extend` continues).
    _order_end: int = 0

    def __post_init__(self) -> None:
        rows, self.rows = self.rows, []
        self._terms = parse_query(self.query)
        self.extend(rows)

    # -- reading
    def __len__(self) -> int:
        return len(self._matches)

    @overload
    def __getitem__(self, index: int) -> MemoryRow: ...
    @overload
    def __getitem__(self, index: slice) -> list[MemoryRow]: ...
    def __getitem__(self, index: int | slice) -> MemoryRow | list[MemoryRow]:
        if isinstance(index, slice):
            rows = self.rows
            return [rows[i] for i in self._matches[index]]
        return self.rows[self._matches[index]]

    def __iter__(self) -> Iterator[MemoryRow]:
        rows = self.rows
        return (rows[i] for i in self._matches)

    @property
    def total(self) -> int:
        return len(self.rows) - self._dead

    def _index(self) -> dict[tuple[str, str], int]:
        if self._key_index is None:
            alive = self._alive
            self._key_index = {row.key: i for i, row in enumerate(self.rows) if alive[i]}
        return self._key_index

    def position_of(self, key: tuple[str, str]) -> int | None:
        """Where the row with this key is in the current view, if it is shown."""
        index = self._index().get(key)
        if index is None or not self._mask[index]:
            return None
        return self._matches.index(index)

    def find(self, vault_root: Path | str, memory_id: str) -> MemoryRow | None:
        """The row of a valid memory by vault and id, shown or not."""
        index = self._index().get((str(vault_root), memory_id))
        if index is None:
            return None
        row = self.rows[index]
        return row if row.problem is None else None

    def position_of_row(self, row: MemoryRow) -> int | None:
        """Where this very row object is in the current view, if it is shown."""
        index = self._slots().get(id(row))
        if index is None or not self._mask[index]:
            return None
        return self._matches.index(index)

    def __contains__(self, row: object) -> bool:
        """True if this very row object is in the list (shown or not)."""
        return id(row) in self._slots()

    # -- changing
    def extend(self, rows: Iterable[MemoryRow]) -> None:
        """Append rows (e.g. one more scanned vault), keeping sort and filter."""
        start = self._order_end
        new = list(rows)
        for offset, row in enumerate(new):
            row.order = start + offset
        self._order_end = start + len(new)
        # The key, slot and sort-key caches grow with the new rows (a vault
        # of 20k rows no longer makes the next lookup rebuild them for all).
        self._append_slots(new, keep_caches=True)
        self._resort()

    def replace(self, rows: Iterable[MemoryRow]) -> None:
        """Swap every row (e.g. rebuilt at another `as_of`), keeping sort and filter."""
        self._clear_slots()
        self._order_end = 0
        self.extend(rows)

    def update(
        self,
        *,
        replaced: Iterable[tuple[MemoryRow, MemoryRow]] = (),
        added: Iterable[MemoryRow] = (),
        removed: Iterable[MemoryRow] = (),
    ) -> None:
        """Change a few rows in place; every other row keeps its place (live reload).

        Rows are matched by object identity (a vault may hold an id twice).
        `replaced` pairs (old, new) put the new row in the old one's slot and
        natural order; `removed` rows leave the list; `added` rows keep the
        `order` they carry (ties go after the rows already there, so the
        order of a vault's last row puts a row at the end of that vault), or
        go at the very end when it is negative.  Sort and filter apply to the
        new rows.  Costs a few O(n) C-level list passes plus O(k log n) for k
        changed rows instead of a rebuild; unknown old rows are ignored.
        """
        pairs = list(replaced)
        new_rows = list(added)
        gone = list(removed)
        if not (pairs or new_rows or gone):
            return
        slots = self._slots()
        pred = self._accepts()
        keys_by_col = {col: sort_key(col) for col in self._sort_keys}
        touched: list[int] = []
        dropped: set[int] = set()
        current = self._sort_keys.get(self.sort_column)
        for old, new in pairs:
            i = slots.pop(id(old), None)
            new.order = old.order
            if i is None or not self._alive[i]:
                new_rows.append(new)
                continue
            was_key = current[i] if current is not None else None
            was_shown = self._mask[i]
            self._put(i, new, pred, keys_by_col)
            slots[id(new)] = i
            if current is None or current[i] != was_key or self._mask[i] != was_shown:
                # Only a row that moves in the sort or in or out of the
                # filter changes the view; most edits change neither.
                touched.append(i)
        for old in gone:
            i = slots.pop(id(old), None)
            if i is None or not self._alive[i]:
                continue
            self._alive[i] = 0
            self._mask[i] = 0
            self._dead += 1
            dropped.add(i)
            if self._key_index is not None and self._key_index.get(old.key) == i:
                del self._key_index[old.key]
        start = len(self.rows)
        if new_rows:
            for row in new_rows:
                if row.order < 0:
                    row.order = self._order_end
                self._order_end = max(self._order_end, row.order + 1)
            self._append_slots(new_rows, keep_caches=True)
            touched.extend(range(start, len(self.rows)))
        if self._dead * 4 > max(len(self.rows), 4000):
            self._compact()
            self._resort()
            return
        if touched and not dropped and min(touched) >= start and self._append_after(start):
            return
        if touched or dropped:
            self._reposition(touched, dropped)

    # -- internals
    def _clear_slots(self) -> None:
        self.rows = []
        self._mask = bytearray()
        self._hay = []
        self._roots = []
        self._invalid = bytearray()
        self._alive = bytearray()
        self._dead = 0
        self._key_index = None
        self._slot = None
        self._sort_keys.clear()

    def _slots(self) -> dict[int, int]:
        if self._slot is None:
            alive = self._alive
            self._slot = {id(row): i for i, row in enumerate(self.rows) if alive[i]}
        return self._slot

    def _append_slots(self, new: list[MemoryRow], *, keep_caches: bool) -> None:
        start = len(self.rows)
        self.rows.extend(new)
        self._hay.extend(r.haystack for r in new)
        self._roots.extend(str(r.vault_root) for r in new)
        self._invalid.extend(1 if r.problem is not None else 0 for r in new)
        self._alive.extend(b"\x01" * len(new))
        pred = self._accepts()
        self._mask.extend(1 if pred(r) else 0 for r in new)
        if not keep_caches:
            self._key_index = None
            self._slot = None
            self._sort_keys.clear()
            return
        for col, keys in self._sort_keys.items():
            key = sort_key(col)
            keys.extend(key(r) for r in new)
        if self._slot is not None:
            for offset, r in enumerate(new):
                self._slot[id(r)] = start + offset
        if self._key_index is not None:
            for offset, r in enumerate(new):
                self._key_index[r.key] = start + offset

    def _put(
        self,
        i: int,
        row: MemoryRow,
        pred: Callable[[MemoryRow], bool],
        keys_by_col: dict[str, Callable[[MemoryRow], Any]],
    ) -> None:
        """Put `row` into slot `i` (its parallel arrays and cached sort keys too)."""
        old = self.rows[i]
        self.rows[i] = row
        self._hay[i] = row.haystack
        self._roots[i] = str(row.vault_root)
        self._invalid[i] = 1 if row.problem is not None else 0
        self._mask[i] = 1 if pred(row) else 0
        for col, keys in self._sort_keys.items():
            keys[i] = keys_by_col[col](row)
        if self._key_index is not None:
            if self._key_index.get(old.key) == i:
                del self._key_index[old.key]
            self._key_index[row.key] = i

    def _reposition(self, touched: list[int], dropped: set[int]) -> None:
        """Move touched slots to their sorted place, drop removed ones, refresh matches."""
        alive = self._alive
        moving = {i for i in touched if alive[i]}
        if len(moving) + len(dropped) > 64 or self.sort_column not in self._sort_keys:
            # Many rows: one sort is cheaper than many list inserts.
            self._resort()
            return
        order = self._sorted
        for i in moving | dropped:
            with contextlib.suppress(ValueError):  # an added slot is not in it yet
                order.remove(i)
        for i in sorted(moving):
            self._insort(i)
        mask = self._mask
        self._matches = [i for i in order if mask[i]]

    def _append_after(self, start: int) -> bool:
        """Slots from `start` on are new; if they all sort after every other, append them.

        The common case while a vault loads in steps, or when an agent
        appends a memory in vault order: no sort of the whole list.
        """
        keys = self._sort_keys.get(self.sort_column)
        if keys is None:
            return False
        reverse = self.reverse
        new = sorted(range(start, len(self.rows)), key=keys.__getitem__, reverse=reverse)
        order = self._sorted
        if order:
            first, last = keys[new[0]], keys[order[-1]]
            # Equal keys are fine: a new slot's index is larger, so it goes after.
            if (last < first) if reverse else (first < last):
                return False
        order.extend(new)
        mask = self._mask
        self._matches.extend(i for i in new if mask[i])
        return True

    def _insort(self, i: int) -> None:
        """Insert slot `i` where a stable sort by the current column would put it."""
        keys = self._sort_keys[self.sort_column]
        k = keys[i]
        order = self._sorted
        reverse = self.reverse
        lo, hi = 0, len(order)
        while lo < hi:
            mid = (lo + hi) // 2
            j = order[mid]
            kj = keys[j]
            # `sorted(..., reverse=True)` keeps equal keys in index order too.
            tie = not k < kj and not kj < k
            if (kj < k if reverse else k < kj) or (tie and i < j):
                hi = mid
            else:
                lo = mid + 1
        order.insert(lo, i)

    def _compact(self) -> None:
        """Drop removed slots for good (renumbers every slot)."""
        alive = self._alive
        live = [r for i, r in enumerate(self.rows) if alive[i]]
        self._clear_slots()
        self._append_slots(live, keep_caches=False)

    def set_query(self, query: str) -> None:
        """Narrow to rows matching every word of `query` (see `parse_query`)."""
        terms = parse_query(query)
        self.query = query
        if terms == self._terms:
            return
        incremental = narrows(self._terms, terms)
        self._terms = terms
        self._refilter(incremental)

    def set_scope(self, vault_root: Path | None) -> None:
        if vault_root == self.scope:
            return
        self.scope = vault_root
        self._refilter(False)

    def set_show_invalid(self, show: bool) -> None:
        if show == self.show_invalid:
            return
        self.show_invalid = show
        self._refilter(False)

    def sort_by(self, column: str, reverse: bool | None = None) -> None:
        sort_key(column)  # validates the column name
        self.sort_column = column
        if reverse is not None:
            self.reverse = reverse
        self._resort()

    def cycle_sort(self, step: int = 1) -> str:
        """Move to the next sort column; returns its key."""
        i = SORT_KEYS.index(self.sort_column)
        self.sort_by(SORT_KEYS[(i + step) % len(SORT_KEYS)])
        return self.sort_column

    def toggle_reverse(self) -> bool:
        self.reverse = not self.reverse
        self._resort()
        return self.reverse

    def _accepts(self) -> Callable[[MemoryRow], bool]:
        base = _predicate(self._terms) if self._terms else None
        scope = str(self.scope) if self.scope is not None else None
        show_invalid = self.show_invalid
        if base is None and scope is None and show_invalid:
            return lambda r: True

        def accepts(r: MemoryRow) -> bool:
            if scope is not None and str(r.vault_root) != scope:
                return False
            if not show_invalid and r.problem is not None:
                return False
            return base is None or base(r)

        return accepts

    def _refilter(self, incremental: bool) -> None:
        # Each condition narrows the candidate list in its own tight loop over
        # the parallel arrays (no per-row function call): ~3x faster at 100k.
        candidates = self._matches if incremental else self._sorted
        if self.scope is not None:
            scope, roots = str(self.scope), self._roots
            candidates = [i for i in candidates if roots[i] == scope]
        if not self.show_invalid:
            invalid = self._invalid
            candidates = [i for i in candidates if not invalid[i]]
        hay = self._hay
        for term in self._terms:
            word = term.value
            if term.field is None:
                candidates = [i for i in candidates if word in hay[i]]
            else:
                get, rows = FILTER_FIELDS[term.field], self.rows
                candidates = [i for i in candidates if word in get(rows[i])]
        if candidates is self._matches or candidates is self._sorted:
            candidates = list(candidates)
        self._matches = candidates
        mask = bytearray(len(self.rows))
        for i in candidates:
            mask[i] = 1
        self._mask = mask

    def _resort(self) -> None:
        keys = self._sort_keys.get(self.sort_column)
        if keys is None:
            key = sort_key(self.sort_column)
            keys = self._sort_keys[self.sort_column] = [key(r) for r in self.rows]
        # Stable sort over the natural order: equal keys keep vault order,
        # so every view is deterministic.
        slots: Iterable[int] = range(len(keys))
        if self._dead:
            alive = self._alive
            slots = [i for i in slots if alive[i]]
        self._sorted = sorted(slots, key=keys.__getitem__, reverse=self.reverse)
        mask = self._mask
        self._matches = [i for i in self._sorted if mask[i]]


# --------------------------------------------------------------------------- triage


def triage_key(row: MemoryRow) -> tuple[int, date, float]:
    """Soonest expiry first, then lowest strength."""
    has_expiry = 0 if row.expires_on is not None else 1
    strength = row.strength if row.strength is not None else 2.0
    return (has_expiry, row.expires_on or date.max, strength)


def strength_first_key(row: MemoryRow) -> tuple[float, int, date]:
    """Lowest strength first, then soonest expiry."""
    strength = row.strength if row.strength is not None else 2.0
    return (strength, 0 if row.expires_on is not None else 1, row.expires_on or date.max)


#: Triage orders by name: `expiry` (soonest first) or `strength` (weakest first).
TRIAGE_ORDERS: dict[str, Callable[[MemoryRow], Any]] = {
    "expiry": triage_key,
    "strength": strength_first_key,
}


def triage_groups(
    rows: Iterable[MemoryRow], order: str = "expiry"
) -> list[tuple[Health, list[MemoryRow]]]:
    """Valid memories grouped by health (most urgent group first), each group in `order`."""
    key = TRIAGE_ORDERS[order]
    groups: dict[str, list[MemoryRow]] = {h.value: [] for h in HEALTH_ORDER}
    for row in rows:
        if row.problem is None and row.health in groups:
            groups[row.health].append(row)
    return [
        (h, sorted(groups[h.value], key=lambda r: (key(r), r.order)))
        for h in HEALTH_ORDER
        if groups[h.value]
    ]


def health_counts(rows: Iterable[MemoryRow]) -> Counter[str]:
    """Rows per health value (`invalid` included)."""
    return Counter(r.health for r in rows)


def strength_histogram(rows: Iterable[MemoryRow], buckets: int = 20) -> list[int]:
    """How many valid memories fall in each of `buckets` equal strength bands, weakest first."""
    counts = [0] * buckets
    for r in rows:
        if r.strength is None or r.problem is not None:
            continue
        s = min(max(r.strength, 0.0), 1.0)
        counts[min(int(s * buckets), buckets - 1)] += 1
    return counts


def forecast_rows(
    rows: Iterable[MemoryRow],
    as_of: date,
    horizons: Sequence[int] = (7, 30, 90),
    cancelled: Callable[[], bool] | None = None,
) -> dict[int, list[MemoryRow]]:
    """Rows healthy (stable/active) at `as_of` that are fading or expired `h` days later.

    Same rule as `core.decay.forecast`, but over rows whose health at `as_of`
    is already known, so each memory costs one decay per horizon.
    """
    healthy = [
        r
        for r in rows
        if r.memory is not None and r.health in (Health.ACTIVE.value, Health.STABLE.value)
    ]
    out: dict[int, list[MemoryRow]] = {}
    for h in horizons:
        later = as_of + timedelta(days=h)
        fading: list[MemoryRow] = []
        for r in healthy:
            if cancelled is not None and cancelled():
                return out
            assert r.memory is not None
            try:
                health = decay_of(r.memory, later, explain=False).health
            except Exception:  # a decay bug is shown on the row already
                continue
            if health in (Health.FADING, Health.EXPIRED):
                fading.append(r)
        out[h] = fading
    return out


# --------------------------------------------------------------------------- problems


@dataclass(frozen=True, slots=True)
class ProblemEntry:
    """One invalid item or flagged reference, flattened for a problems list."""

    vault: str
    vault_root: Path
    format: str
    path: str
    #: `invalid` or `reference`.
    kind: str
    reason: str
    detail: str
    id: str | None
    line: int | None
    index: int | None
    #: 1-based line of the fault in the file, where known.
    at_line: int | None
    source: Problem | ReferenceProblem

    @property
    def where(self) -> str:
        if self.line is not None:
            return f"{self.path}:{self.line}"
        if self.index is not None:
            return f"{self.path} §{self.index}"
        if self.at_line is not None:
            return f"{self.path}:{self.at_line}"
        return self.path


def problem_entries(vaults: Iterable[Vault]) -> list[ProblemEntry]:
    """Every problem of every vault: invalid items first, then references, in file order."""
    out: list[ProblemEntry] = []
    for v in vaults:
        for p in v.problems:
            out.append(
                ProblemEntry(
                    vault=v.name,
                    vault_root=v.root,
                    format=p.format,
                    path=p.path,
                    kind="invalid",
                    reason=p.reason.value,
                    detail=p.detail,
                    id=p.id,
                    line=p.line,
                    index=p.index,
                    at_line=p.at_line if p.at_line is not None else p.line,
                    source=p,
                )
            )
        for rp in v.ref_problems:
            out.append(
                ProblemEntry(
                    vault=v.name,
                    vault_root=v.root,
                    format=rp.format,
                    path=rp.path,
                    kind="reference",
                    reason=rp.reason.value,
                    detail=f"{rp.field}: {rp.ref}",
                    id=rp.id,
                    line=rp.line,
                    index=None,
                    at_line=rp.line,
                    source=rp,
                )
            )
    return out
