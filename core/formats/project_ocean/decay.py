"""Project Ocean decay: `decay: linear|exponential(N days)`, computed from `created`, with
the arithmetic explained in words.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass, replace
from datetime import date, timedelta

from ...decay import STATUS_HEALTH, clamp01
from ...model import DecayInfo, Memory
from ...text.dates import day_of

#: `linear-Nd` / `exponential-Nd` with N a positive whole number of days.
DECAY_RE = re.compile(r"^(linear|exponential)-(\d+)d$")


@dataclass(frozen=True, slots=True)
class DecaySpec:
    """A parsed `decay` value."""

    kind: str  # "linear" | "exponential"
    days: int  # lifespan N


def parse_decay_spec(value: object) -> DecaySpec | None:
    """`linear-30d` -> DecaySpec('linear', 30); None if the value is not one."""
    if not isinstance(value, str):
        return None
    m = DECAY_RE.match(value.strip())
    if m is None:
        return None
    days = int(m.group(2))
    if days <= 0:
        return None
    return DecaySpec(sys.intern(m.group(1)), days)


_specs: dict[str, DecaySpec | None] = {}


def _decay_spec(value: object) -> DecaySpec | None:
    """`parse_decay_spec`, remembered per text (a vault uses a handful of specs)."""
    if not isinstance(value, str):
        return None
    if value not in _specs:
        if len(_specs) >= 1024:
            _specs.clear()
        _specs[value] = parse_decay_spec(value)
    return _specs[value]


def _lifespan(
    memory: Memory, as_of: date
) -> tuple[date, int, int, float, float, float, float] | None:
    """(created, age, lifespan, fraction, linear, exponential, strength); None: no decay.

    None when the memory has no created date or no valid decay spec.
    """
    kind = memory.native.get("decay_kind")
    n = memory.native.get("lifespan_days")
    if memory.created is None or not isinstance(n, int) or kind not in ("linear", "exponential"):
        return None
    created = day_of(memory.created)
    age = (as_of - created).days
    fraction = age / n
    # A future `created` (negative age) would give a weight above 1 (and
    # overflow e^x for exponential decay): it counts as brand new.
    linear = clamp01(1 - fraction)
    exponential = math.exp(-3 * max(0.0, fraction))
    strength = linear if kind == "linear" else exponential
    return created, age, n, fraction, linear, exponential, strength


def _status(memory: Memory, age: int, n: int) -> str:
    """Native status of a memory with a decay spec, `age` days old, lifespan `n`."""
    # Integer comparisons: 0.8 * N in floats is not exact (0.8 * 14).
    if memory.archived:
        return "archived"
    if memory.pinned:
        return "permanent"
    if age > n:
        return "expired"
    if 5 * age >= 4 * n:
        return "near_expiry"
    return "active"


def _fmt(x: float) -> str:
    return str(round(x, 4))


def observation_decay(memory: Memory, as_of: date, *, explain: bool = True) -> DecayInfo:
    """Status and weight as memory-decay.py / memory-search.py would see them."""
    kind = memory.native.get("decay_kind")
    n = memory.native.get("lifespan_days")
    archived_or_permanent = "archived" if memory.archived else "permanent"

    if memory.created is None:  # not produced by scan(); be defensive, never crash
        return DecayInfo(
            status=archived_or_permanent,
            health=STATUS_HEALTH[archived_or_permanent],
            strength=1.0,
            weight=0.0 if memory.archived else 1.0,
            why="No created date; cannot decay." if explain else "",
        )
    created = day_of(memory.created)
    age = (as_of - created).days

    if not isinstance(n, int) or kind not in ("linear", "exponential"):
        why = (
            "No decay field \u2192 permanent (the spec's 'Permanent | (no decay)' row); "
            f"created {created.isoformat()}, age {age} days, never expires."
        )
        if memory.archived:
            why += " File is in archive/ \u2192 status archived."
        return DecayInfo(
            status=archived_or_permanent,
            health=STATUS_HEALTH[archived_or_permanent],
            strength=1.0,
            weight=0.0 if memory.archived else 1.0,
            age_days=age,
            why=why if explain else "",
        )

    life = _lifespan(memory, as_of)
    assert life is not None  # created and a valid decay were checked above
    _created, _age, _n, _fraction, linear, _exponential, strength = life
    try:
        expires_on: date | None = created + timedelta(days=n + 1)
    except OverflowError:  # a lifespan that ends after year 9999: never, in practice
        expires_on = None

    status = _status(memory, age, n)
    permanent = status == "permanent"
    numbers = DecayInfo(
        status=status,
        health=STATUS_HEALTH[status],
        strength=1.0 if permanent else strength,
        weight=0.0 if status == "archived" else 1.0 if permanent else strength,
        linear_weight=round(linear, 4) if kind == "linear" else None,
        age_days=age,
        lifespan_days=n,
        expires_on=None if permanent else expires_on,
        archive_reasons=(f"expired (age {age} > {n} days)",) if status == "expired" else (),
    )
    if not explain:
        return numbers
    return replace(numbers, why=_decay_why(memory, as_of, life, status))


def _decay_why(
    memory: Memory,
    as_of: date,
    life: tuple[date, int, int, float, float, float, float],
    status: str,
) -> str:
    """The arithmetic of a decaying memory's status, in words."""
    kind = memory.native.get("decay_kind")
    spec = memory.native.get("decay")
    created, age, n, fraction, linear, exponential, _strength = life
    parts = [
        f"decay {spec}: lifespan {n} days",
        f"age = {as_of.isoformat()} \u2212 created {created.isoformat()} = {age} days",
        f"fraction = {age}/{n} = {_fmt(fraction)}",
    ]
    if kind == "linear":
        parts.append(f"linear weight = max(0, 1 \u2212 {age}/{n}) = {_fmt(linear)}")
    else:
        parts.append(f"exponential weight = e^(\u22123\u00b7{age}/{n}) = {_fmt(exponential)}")

    if status == "archived":
        verdict = "file is already in archive/ \u2192 status archived regardless of age."
    elif status == "permanent":
        verdict = "pinned: true \u2192 permanent (decay left as written, never expires)."
    elif status == "expired":
        where = "shared/observations/archive/" if memory.native.get("shared") else "archive/"
        verdict = (
            f"{age} > {n} \u2192 expired (still in {memory.native.get('area')}/: "
            f"the decay script would move it to {where})."
        )
    elif status == "near_expiry":
        upper = "< 1" if age < n else "= 1 (age equals the lifespan; expired only past it)"
        verdict = f"0.8 \u2264 {_fmt(fraction)} {upper} \u2192 near_expiry."
    else:
        verdict = f"{_fmt(fraction)} < 0.8 \u2192 active."
    parts.append(verdict)
    why = "; ".join(parts)
    m = re.match(r"^obs-(\d{4}-\d{2}-\d{2})", str(memory.native.get("stem", "")))
    if m and m.group(1) != created.isoformat():
        why += (
            f" Note: filename date {m.group(1)} differs from created "
            f"{created.isoformat()}; decay uses the created field."
        )
    return why
