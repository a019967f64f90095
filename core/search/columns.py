"""Per-row metadata columns (numpy) and the string codes behind them.

Filters run as numpy masks over these columns, computed once per row at
build time (decay at the index's `as_of` included), so a query never calls
back into the memories or their adapters.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from ..model import Health, Memory
from .aliases import BoolArray, Brief
from .query import confidence_value

HEALTHS: tuple[Health, ...] = tuple(Health)
HEALTH_CODE: dict[Health, int] = {h: i for i, h in enumerate(HEALTHS)}


class Codes:
    """Interning of small string sets (formats, kinds, statuses) to int codes."""

    __slots__ = ("code", "values")

    def __init__(self) -> None:
        self.values: list[str] = []
        self.code: dict[str, int] = {}

    def of(self, value: str) -> int:
        c = self.code.get(value)
        if c is None:
            c = self.code[value] = len(self.values)
            self.values.append(value)
        return c

    def table(self, pred: Callable[[str], bool]) -> BoolArray:
        """A lookup table: code -> pred(value)."""
        return np.fromiter((pred(v) for v in self.values), dtype=bool, count=len(self.values))


class Column:
    """A growable numpy column (amortised appends for incremental adds)."""

    __slots__ = ("data", "size")

    def __init__(self, dtype: Any, values: Sequence[Any] = ()) -> None:
        self.data: npt.NDArray[Any] = np.array(values, dtype=dtype)
        self.size = len(values)

    def append(self, value: Any) -> None:
        if self.size == len(self.data):
            grown = np.empty(max(16, 2 * len(self.data)), dtype=self.data.dtype)
            grown[: self.size] = self.data[: self.size]
            self.data = grown
        self.data[self.size] = value
        self.size += 1

    @property
    def view(self) -> npt.NDArray[Any]:
        return self.data[: self.size]


def date_ordinal(value: date | datetime | None) -> int:
    if value is None:
        return 0
    if isinstance(value, datetime):
        return value.date().toordinal()
    return value.toordinal()


def agent_of(m: Memory) -> str:
    agent = m.native.get("agent")
    return agent.lower() if isinstance(agent, str) else ""


def importance_of(m: Memory) -> float:
    imp = m.importance
    return float(imp) if isinstance(imp, int | float) and not isinstance(imp, bool) else math.nan


def coded(codes: Codes, values: list[str], norm: Callable[[str], str]) -> list[int]:
    """Codes of `values` (after `norm`), normalising each distinct value once."""
    table = {v: codes.of(norm(v)) for v in dict.fromkeys(values)}
    return list(map(table.__getitem__, values))


def _column(dtype: Any) -> Column:
    return Column(dtype)


@dataclass(slots=True)
class Columns:
    """Every row's metadata, one numpy column each, and the codes of the string ones."""

    alive: Column = field(default_factory=lambda: _column(np.bool_))
    fmt: Column = field(default_factory=lambda: _column(np.int32))
    kind: Column = field(default_factory=lambda: _column(np.int32))
    vault: Column = field(default_factory=lambda: _column(np.int32))
    agent: Column = field(default_factory=lambda: _column(np.int32))
    health: Column = field(default_factory=lambda: _column(np.int8))
    status: Column = field(default_factory=lambda: _column(np.int32))
    source: Column = field(default_factory=lambda: _column(np.int32))
    created: Column = field(default_factory=lambda: _column(np.int64))
    importance: Column = field(default_factory=lambda: _column(np.float64))
    conf: Column = field(default_factory=lambda: _column(np.float64))
    weight: Column = field(default_factory=lambda: _column(np.float64))
    #: The decay score at the index's `as_of` per row (NaN when the format has none).
    score: Column = field(default_factory=lambda: _column(np.float64))
    fmt_codes: Codes = field(default_factory=Codes)
    kind_codes: Codes = field(default_factory=Codes)
    vault_codes: Codes = field(default_factory=Codes)
    agent_codes: Codes = field(default_factory=Codes)
    status_codes: Codes = field(default_factory=Codes)
    source_codes: Codes = field(default_factory=Codes)
    #: vault root -> lower-cased names it answers to (`vault:` filter).
    vault_names: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def all(self) -> tuple[Column, ...]:
        """Every column, in `row_values` order."""
        return (
            self.alive,
            self.fmt,
            self.kind,
            self.vault,
            self.agent,
            self.health,
            self.status,
            self.source,
            self.created,
            self.importance,
            self.conf,
            self.weight,
            self.score,
        )

    def vault_code(self, memory: Memory) -> int:
        root = str(memory.vault_root)
        if root not in self.vault_names:
            name = memory.vault_root.name.lower()
            self.vault_names[root] = (name,) if name else ()
        return self.vault_codes.of(root)

    def row_values(self, m: Memory, decay: Brief) -> tuple[Any, ...]:
        """One row's column values, in `all` order."""
        status, health, weight, score = decay
        return (
            True,
            self.fmt_codes.of(m.format),
            self.kind_codes.of(m.kind.lower()),
            self.vault_code(m),
            self.agent_codes.of(agent_of(m)),
            HEALTH_CODE[health],
            self.status_codes.of(status),
            self.source_codes.of((m.source or "").lower()),
            date_ordinal(m.created),
            importance_of(m),
            confidence_value(m.confidence)[0],
            float(weight),
            math.nan if score is None else float(score),
        )

    def append(self, m: Memory, decay: Brief) -> None:
        """One new row (incremental adds)."""
        for col, value in zip(self.all(), self.row_values(m, decay), strict=True):
            col.append(value)

    def fill(self, memories: Sequence[Memory], briefs: list[Brief]) -> None:
        """Every column of a build's rows at once (the same values `append` gives).

        Values are gathered per column, then each column of strings is
        coded through its distinct values only.
        """
        n = len(memories)
        by_root: dict[str, Memory] = {}
        for m in memories:
            by_root.setdefault(str(m.vault_root), m)
        vault_code = {root: self.vault_code(m) for root, m in by_root.items()}
        confidences: dict[tuple[type, Any], float] = {}

        def confidence(value: Any) -> float:
            key = (type(value), value)
            found = confidences.get(key)
            if found is None:
                found = confidences[key] = confidence_value(value)[0]
            return found

        statuses, healths, weights, scores = zip(*briefs, strict=True)
        values: list[Any] = [
            np.ones(n, dtype=bool),
            coded(self.fmt_codes, [m.format for m in memories], str),
            coded(self.kind_codes, [m.kind for m in memories], str.lower),
            [vault_code[str(m.vault_root)] for m in memories],
            coded(self.agent_codes, list(map(agent_of, memories)), str),
            [HEALTH_CODE[h] for h in healths],
            coded(self.status_codes, list(statuses), str),
            coded(self.source_codes, [m.source or "" for m in memories], str.lower),
            [date_ordinal(m.created) for m in memories],
            list(map(importance_of, memories)),
            [confidence(m.confidence) for m in memories],
            list(weights),
            [math.nan if x is None else x for x in scores],
        ]
        for col, column_values in zip(self.all(), values, strict=True):
            col.data = np.array(column_values, dtype=col.data.dtype)
            col.size = n

    def set_decay(self, row: int, decay: Brief) -> None:
        """A row's decay columns for a new `as_of`."""
        status, health, weight, score = decay
        self.weight.view[row] = weight
        self.health.view[row] = HEALTH_CODE[health]
        self.status.view[row] = self.status_codes.of(status)
        self.score.view[row] = math.nan if score is None else score
