"""One precomputed row per memory or invalid item, computed once per `as_of`.

A row holds the decay numbers, the text of the "age or expiry" column and a
lowercase haystack for filtering, so drawing, sorting and filtering never
call back into the formats.  Invalid items (`Problem`s) are rows too, with
health `invalid`, so the main list shows everything a vault holds.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

from ..decay import decay_of
from ..formats.adapter import FormatAdapter
from ..model import HEALTH_ORDER, DecayInfo, Health, Memory, Problem
from ..scan.progress import quiet_gc
from ..scan.vault import Vault

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
        if self.memory is None or self.as_of is None or (info is not None and info.why):
            return info
        if info is None and self.decay_error is not None:
            return None  # its decay raised: the row says so instead
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

    @property
    def pending(self) -> bool:
        """A row kept from the last run (`snapshot`), shown before its memory is read."""
        return self.memory is None and self.problem is None


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


#: Each health's value as a plain str.  Why a table: `Health.X.value` goes
#: through the enum's descriptor (~1 us); at 100k rows that was a tenth of
#: building the list's rows.
_HEALTH_TEXT: dict[Health, str] = {h: h.value for h in Health}
_ACTIVE = Health.ACTIVE.value


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
    created = memory.created
    when, when_key = _when(
        info, created.date() if isinstance(created, datetime) else created, as_of
    )
    title, tags, ident = memory.title, memory.tags, memory.id
    if info is not None:
        health, status, strength, expires = (
            _HEALTH_TEXT[info.health],
            info.status,
            info.strength,
            info.expires_on,
        )
    else:
        health, status, strength, expires = _ACTIVE, "decay error", None, None
    return MemoryRow(
        vault=vault,
        vault_root=memory.vault_root,
        format=memory.format,
        id=ident,
        title=title,
        kind=memory.kind,
        tags=tuple(tags),
        health=health,
        status=status,
        strength=strength,
        importance=memory.importance,
        confidence=memory.confidence,
        when=when,
        when_key=when_key,
        expires_on=expires,
        memory=memory,
        info=info,
        order=order,
        haystack="\n".join((title, " ".join(tags), ident)).lower(),
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
    """Rows of every memory then every invalid item of one scanned vault.

    Built with the cyclic collector paused (`quiet_gc`, as the scan does):
    rows live as long as the list and hold no cycles, and the collector's
    passes over the catalog while they were made cost ~30% of the time
    (100k rows: 2.4-3.1 s -> 1.7-1.8 s CPU).
    """
    adapter = vault.adapter
    with quiet_gc():
        rows = [
            memory_row(vault.name, m, as_of, start + i, adapter)
            for i, m in enumerate(vault.memories)
        ]
        base = start + len(rows)
        rows.extend(problem_row(vault.name, p, base + i) for i, p in enumerate(vault.problems))
    return rows


def rows_for_vaults(vaults: Iterable[Vault], as_of: date) -> list[MemoryRow]:
    rows: list[MemoryRow] = []
    for v in vaults:
        rows.extend(rows_for_vault(v, as_of, len(rows)))
    return rows
