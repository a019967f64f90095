"""Second-generation decay: earned `importance`, a `max_age`, freshness and the neglect penalty.

The arithmetic of the repository's current `memory-search.py` and
`memory-decay.py`, with an explicit `as_of` and without their compounding:

- effective max age = `max_age` days ×3 at importance ≥ 0.9, ×2 at ≥ 0.8
  (`permanent`: none);
- freshness = 1 − 0.95 · age / effective max age, 0.05 once the age reaches
  it, 1.0 for `permanent` or no `created` (memory-search.py);
- neglect penalty (no refs): 0.1 per whole 14-day block after day 14, at
  most 0.3.  The script subtracts the whole penalty from the importance as
  written on every run, so a daily cron compounds it (0.50 → 0.40 → 0.30 →
  0.20 → archived in four days).  memlens records the penalty it has already
  written back in `neglect_penalty` and only ever subtracts what is due
  beyond that: the current importance is `importance − (due − applied)`, and
  a second run on the same `as_of` changes nothing.  The effective max age
  is judged by the importance before neglect (`importance + applied`), as
  the script judges it before applying its penalty: neglect lowers the
  importance but does not also shorten the life (and the judgement does not
  change once the run has written its penalty);
- the run's verdict, in the script's order: current importance < 0.2
  archives; past the effective max age (`age > days`), < 0.4 archives,
  0.4-0.7 is flagged for review, ≥ 0.7 extends `max_age` ×1.5.

Statuses: `active`, `near_expiry` (age ≥ 0.8 of the effective max age),
`review`, `extend`, `expired` (the next decay run archives it), `archived`
(in archive/), `permanent` (`max_age: permanent` or pinned).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from ...health import STATUS_HEALTH
from ...model import DecayInfo, Memory
from ...text.dates import day_of

#: `14d`, `30d`, ... (a positive whole number of days) or `permanent`.
MAX_AGE_RE = re.compile(r"^(\d+)d$")
PERMANENT = "permanent"

NEGLECT_GRACE_DAYS = 14
NEGLECT_BLOCK_DAYS = 14
NEGLECT_STEP = 0.1
NEGLECT_CAP = 0.3
ARCHIVE_BELOW = 0.2
EXPIRED_ARCHIVE_BELOW = 0.4
EXTEND_FROM = 0.7
FRESHNESS_FLOOR = 0.05
RECALL_SKIP_BELOW = 0.1


def parse_max_age(value: object) -> int | None:
    """Days of a `max_age` value; None for `permanent`; ValueError when it is neither."""
    text = value.strip() if isinstance(value, str) else ""
    if text == PERMANENT:
        return None
    m = MAX_AGE_RE.match(text)
    if m is None or int(m.group(1)) <= 0:
        raise ValueError(f"max_age {value!r} is not Nd or permanent")
    return int(m.group(1))


def effective_days(days: int | None, importance: float) -> int | None:
    """`max_age` lengthened by importance: ×3 at ≥ 0.9, ×2 at ≥ 0.8 (None: permanent)."""
    if days is None:
        return None
    if importance >= 0.9:
        return days * 3
    if importance >= 0.8:
        return days * 2
    return days


def freshness(age: int | None, eff: int | None) -> float:
    """memory-search.py's freshness weight (1.0 when permanent or undated)."""
    if age is None or eff is None:
        return 1.0
    if age >= eff:
        return FRESHNESS_FLOOR
    return 1.0 - 0.95 * age / eff


def neglect_due(age: int, refs: int) -> float:
    """The whole neglect penalty due at `age` days: 0.1 per 14-day block after day 14, ≤ 0.3."""
    if refs > 0 or age <= NEGLECT_GRACE_DAYS:
        return 0.0
    blocks = (age - NEGLECT_GRACE_DAYS) // NEGLECT_BLOCK_DAYS
    return round(min(blocks * NEGLECT_STEP, NEGLECT_CAP), 2)


def extended_max_age(days: int, age: int, importance: float) -> int:
    """`max_age` ×1.5 (whole days), repeated until the age is within the effective max age.

    The script extends once per daily run; a run on a later `as_of` (or one
    after runs were missed) extends as many times as those daily runs would
    have, so a second run on the same `as_of` finds nothing to extend.
    """
    new = days
    while True:
        new = max(new + 1, int(new * 1.5))
        eff = effective_days(new, importance)
        if eff is None or age <= eff:
            return new


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the second-generation decay run does with one observation at `as_of`."""

    status: str
    age: int | None
    days: int | None  # max_age as written (None: permanent)
    eff: int | None  # effective max age
    base_importance: float  # before any neglect penalty (what `eff` is judged by)
    importance: float  # current: after the penalty due
    penalty_due: float
    penalty_applied: float
    freshness: float
    new_max_age: int | None = None  # set when the run extends it

    @property
    def penalty_to_write(self) -> float:
        """Penalty the run still has to write back (0 once written)."""
        return round(self.penalty_due - self.penalty_applied, 2)


def _age(memory: Memory, as_of: date) -> int | None:
    if memory.created is None:
        return None
    return (as_of - day_of(memory.created)).days


def verdict(memory: Memory, as_of: date) -> Verdict:
    """Status and numbers of a second-generation observation at `as_of`."""
    n = memory.native
    stored = float(memory.importance if memory.importance is not None else 0.5)
    applied = float(n.get("neglect_penalty") or 0.0)
    days = n.get("max_age_days")
    age = _age(memory, as_of)
    base = round(min(stored + applied, 1.0), 2)
    eff = effective_days(days, base)
    fresh = freshness(age, effective_days(days, stored))
    pinned = memory.pinned
    # Never below what is written: penalties already applied are not refunded.
    due = applied if pinned else max(neglect_due(age or 0, int(n.get("refs") or 0)), applied)
    current = round(max(stored - (due - applied), 0.0), 2)
    v = Verdict("active", age, days, eff, base, current, due, applied, fresh)
    if memory.archived:
        return _with(v, "archived")
    if pinned:
        return _with(v, PERMANENT)
    if current < ARCHIVE_BELOW:
        return _with(v, "expired")
    a = age or 0
    if eff is None:
        return _with(v, PERMANENT)
    if a > eff:
        if current < EXPIRED_ARCHIVE_BELOW:
            return _with(v, "expired")
        if current < EXTEND_FROM:
            return _with(v, "review")
        assert days is not None
        return Verdict(
            "extend", age, days, eff, base, current, due, applied, fresh,
            new_max_age=extended_max_age(days, a, base),
        )  # fmt: skip
    if 5 * a >= 4 * eff:
        return _with(v, "near_expiry")
    return v


def _with(v: Verdict, status: str) -> Verdict:
    return Verdict(
        status, v.age, v.days, v.eff, v.base_importance, v.importance,
        v.penalty_due, v.penalty_applied, v.freshness,
    )  # fmt: skip


def recall_weight(memory: Memory, as_of: date) -> float:
    """memory-search.py's multiplier: importance × freshness (0 below importance 0.1).

    The importance is the one written in the file, as the script reads it
    (the neglect penalty is the decay run's to write).
    """
    if memory.archived:
        return 0.0
    importance = float(memory.importance if memory.importance is not None else 0.5)
    if importance < RECALL_SKIP_BELOW:
        return 0.0
    days = memory.native.get("max_age_days")
    return importance * freshness(_age(memory, as_of), effective_days(days, importance))


def _archive_reason(v: Verdict) -> tuple[str, ...]:
    if v.status != "expired":
        return ()
    if v.importance < ARCHIVE_BELOW:
        return (f"importance {v.importance:.2f} < {ARCHIVE_BELOW} (archived at any age)",)
    return (
        f"expired (age {v.age} > {v.eff} days) with importance "
        f"{v.importance:.2f} < {EXPIRED_ARCHIVE_BELOW}",
    )


def observation2_decay(memory: Memory, as_of: date, *, explain: bool = True) -> DecayInfo:
    """Status, freshness and the run's verdict of a second-generation observation."""
    v = verdict(memory, as_of)
    weight = recall_weight(memory, as_of)
    expires_on: date | None = None
    if v.eff is not None and memory.created is not None and v.status != PERMANENT:
        try:
            expires_on = day_of(memory.created) + timedelta(days=v.eff + 1)
        except OverflowError:
            expires_on = None
    return DecayInfo(
        status=v.status,
        health=STATUS_HEALTH[v.status],
        strength=v.freshness,
        weight=weight,
        current_importance=v.importance,
        age_days=v.age,
        lifespan_days=v.eff,
        expires_on=expires_on,
        archive_reasons=_archive_reason(v),
        numbers=numbers_of(memory, v),
        why=_why(memory, v, as_of) if explain else "",
    )


def numbers_of(memory: Memory, v: Verdict) -> dict[str, object]:
    """The second generation's own figures, added to `list --json` records."""
    n = memory.native
    return {
        "generation": 2,
        "freshness": round(v.freshness, 4),
        "max_age": n.get("max_age"),
        "effective_max_age_days": v.eff,
        "refs": n.get("refs"),
        "ref_by": list(n.get("ref_by") or ()),
        "verified": bool(n.get("verified")),
        "promoted": bool(n.get("promoted")),
        "neglect_penalty": v.penalty_due,
        "neglect_penalty_written": v.penalty_applied,
        "new_max_age": f"{v.new_max_age}d" if v.new_max_age is not None else None,
    }


def _why(memory: Memory, v: Verdict, as_of: date) -> str:
    """The arithmetic in words."""
    parts: list[str] = []
    if v.age is None:
        parts.append("no created date: age 0, freshness 1.0")
    else:
        created = day_of(memory.created) if memory.created is not None else as_of
        parts.append(f"age = {as_of.isoformat()} − created {created.isoformat()} = {v.age} days")
    if v.days is None:
        parts.append("max_age permanent: never expires, freshness 1.0")
    else:
        parts.append(
            f"max_age {v.days}d, effective {v.eff}d at importance {v.base_importance:.2f} "
            "(×3 at ≥ 0.9, ×2 at ≥ 0.8)"
        )
        parts.append(f"freshness = {round(v.freshness, 4)}")
    if v.penalty_due:
        parts.append(
            f"neglect penalty due {v.penalty_due:.2f} (no refs, 0.1 per 14 days after day 14, "
            f"≤ 0.3; {v.penalty_applied:.2f} already written) → importance {v.importance:.2f}"
        )
    verdicts = {
        "archived": "file is in archive/ → archived",
        PERMANENT: "pinned or max_age permanent → permanent",
        "expired": "; ".join(_archive_reason(v)) + " → the decay run archives it",
        "review": f"past the effective max age with importance {v.importance:.2f} in 0.4-0.7 "
        "→ flagged for review",
        "extend": f"past the effective max age with importance {v.importance:.2f} ≥ 0.7 → "
        f"the decay run extends max_age to {v.new_max_age}d",
        "near_expiry": "age ≥ 0.8 of the effective max age → near_expiry",
        "active": "within the effective max age → active",
    }
    parts.append(verdicts[v.status])
    return "; ".join(parts)


def writeback(memory: Memory, as_of: date) -> tuple[dict[str, object], str] | None:
    """(fields, why) the decay run writes into a second-generation file; None: nothing.

    The neglect penalty not yet written (with `neglect_penalty`, the total
    written so far, so it is never subtracted twice) and an extended
    `max_age`.  A file the run archives is moved as it is: nothing is written
    back into it on the way (the script rewrites it before the move).
    """
    if memory.archived or memory.pinned or memory.tombstoned:
        return None
    v = verdict(memory, as_of)
    if v.status in ("expired", "archived"):
        return None
    changes: dict[str, object] = {}
    why: list[str] = []
    if v.penalty_to_write > 0:
        changes["importance"] = v.importance
        changes["neglect_penalty"] = v.penalty_due
        why.append(
            f"neglect penalty: importance {v.importance + v.penalty_to_write:.2f} → "
            f"{v.importance:.2f} (no refs, age {v.age} days)"
        )
    if v.status == "extend" and v.new_max_age is not None:
        changes["max_age"] = f"{v.new_max_age}d"
        why.append(f"extend: max_age {v.days}d → {v.new_max_age}d (importance {v.importance:.2f})")
    if not changes:
        return None
    return changes, "; ".join(why)
