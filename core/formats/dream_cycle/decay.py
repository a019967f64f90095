"""Dream Cycle decay: computed on the fly from `dc:date`, never compounding, with the
arithmetic explained in words.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, timedelta

from ...decay import STATUS_HEALTH, clamp01, importance_band
from ...model import DecayInfo, Health, Memory
from ...text.dates import parse_date
from .classify import DECAY_RATE, FALLBACK_TYPE, TYPE_TTL, UNTAGGED_IMPORTANCE, effective_type

#: The reference decay run archives sections whose importance falls below this.
ARCHIVE_THRESHOLD = 3.0


def _plus_days(d: date, days: int) -> date | None:
    try:
        return d + timedelta(days=days)
    except OverflowError:
        return None  # past year 9999: no date to show


def _float(x: object, default: float) -> float:
    if isinstance(x, int | float) and not isinstance(x, bool):
        return float(x)
    return default


@dataclass(frozen=True, slots=True)
class _Numbers:
    """The arithmetic of one dated section's decay (see `_decay_numbers`)."""

    start: date
    rate: float
    raw_days: int
    days: int
    decayed: date | None
    charged: int
    current: float
    expired: bool
    status: str
    health: Health
    weight: float


def _decay_numbers(memory: Memory, as_of: date) -> _Numbers | None:
    """Days, charged days, current importance, status of a live section; None if undated."""
    native = memory.native
    start = parse_date(native.get("date"))
    if start is None:
        return None
    base = _float(native.get("base_importance"), UNTAGGED_IMPORTANCE)
    ttl = native.get("ttl") if isinstance(native.get("ttl"), int) else None
    rate = DECAY_RATE.get(memory.kind, DECAY_RATE[FALLBACK_TYPE])
    raw_days = (as_of - start).days
    days = max(0, raw_days)
    decayed = parse_date(native.get("decayed"))
    charged = max(0, (as_of - (decayed if decayed is not None else start)).days)
    current = round(max(0.0, min(10.0, base - rate * charged)), 2)
    expired = ttl is not None and days > ttl
    status = "ttl_expired" if expired else "active"
    health = STATUS_HEALTH[status]
    if status == "active" and current < ARCHIVE_THRESHOLD:
        health = Health.FADING
    weight = clamp01(current / base) if base > 0 else 1.0
    return _Numbers(
        start, rate, raw_days, days, decayed, charged, current, expired, status, health, weight
    )


def _archived_decay(memory: Memory) -> DecayInfo:
    imp = memory.importance
    where = f"{memory.path}:{memory.line}" if memory.line else f"{memory.path}"
    reason = memory.native.get("archived_reason")
    why = f"Archived in {where}"
    if reason:
        why += f" (archived_reason: {reason})"
    why += "; archived entries do not decay."
    return DecayInfo(
        status="archived",
        health=Health.ARCHIVED,
        strength=0.0,
        weight=0.0,
        current_importance=imp,
        importance_band=importance_band(imp) if imp is not None else None,
        ttl_days=memory.native.get("ttl") if isinstance(memory.native.get("ttl"), int) else None,
        why=why,
    )


def section_decay(memory: Memory, as_of: date, *, explain: bool = True) -> DecayInfo:
    """DecayInfo of a section or archive entry; `explain` adds the arithmetic in words."""
    native = memory.native
    if memory.archived:
        info = _archived_decay(memory)
        return info if explain else replace(info, why="")
    base = _float(native.get("base_importance"), UNTAGGED_IMPORTANCE)
    ttl = native.get("ttl") if isinstance(native.get("ttl"), int) else None
    n = _decay_numbers(memory, as_of)
    if n is None:
        return DecayInfo(
            status="undated",
            health=STATUS_HEALTH["undated"],
            strength=0.5,
            weight=1.0,
            current_importance=base,
            importance_band=importance_band(base),
            ttl_days=ttl,
            why=(
                "No <!-- dc:... --> comment: Phase 1 backward compatibility gives "
                f"type={memory.kind}, ttl_days={ttl}, importance={base}. There is no "
                "dc:importance/dc:date, so the decay function skips it: importance stays "
                f"{base} and no age or TTL expiry can be computed."
                if explain
                else ""
            ),
        )
    current, days, expired = n.current, n.days, n.expired
    band = importance_band(current)
    reasons: list[str] = []
    if expired:
        reasons.append(f"{memory.kind} TTL expired ({ttl} days)")
    if current < ARCHIVE_THRESHOLD:
        reasons.append(f"importance below {ARCHIVE_THRESHOLD} (now {current})")
    numbers = DecayInfo(
        status=n.status,
        health=n.health,
        strength=clamp01(current / 10.0),
        weight=n.weight,
        current_importance=current,
        importance_band=band,
        days_elapsed=days,
        expires_on=_plus_days(n.start, ttl + 1) if ttl is not None else None,
        ttl_days=ttl,
        archive_reasons=tuple(reasons),
    )
    if not explain:
        return numbers
    return replace(numbers, why=_decay_why(memory, as_of, n, base, ttl))


def _decay_why(memory: Memory, as_of: date, n: _Numbers, base: float, ttl: int | None) -> str:
    """The arithmetic of a dated section's decay, in the words of expected.json's `why`."""
    native = memory.native
    declared = native.get("declared_type")
    start, rate, raw_days, days = n.start, n.rate, n.raw_days, n.days
    decayed, charged, current, expired = n.decayed, n.charged, n.current, n.expired
    raw_value = round(base - rate * charged, 2)
    band = importance_band(current)
    head = f"dc:type={declared}"
    if effective_type(declared) == FALLBACK_TYPE and str(declared).strip().lower() != "fact":
        if native.get("ttl_explicit"):
            head += (
                f" (unknown type: falls back to the fact rate {DECAY_RATE[FALLBACK_TYPE]}"
                f"/day; dc:ttl given)"
            )
        else:
            head += (
                f" (unknown type: falls back to the fact rate {DECAY_RATE[FALLBACK_TYPE]}"
                f"/day and fact TTL {TYPE_TTL[FALLBACK_TYPE]} days)"
            )
    age = f"days_elapsed = {as_of.isoformat()} − {start.isoformat()} = {raw_days}"
    if raw_days < 0:
        age += " → future date, clamped to 0 (no decay before the observation date)"
    if decayed is not None:
        age += (
            f"; dc:importance is as of dc:decayed={decayed.isoformat()}, "
            f"so {charged} days are charged"
        )
    formula = (
        f"importance = max(0, {base!r} − {rate!r} × {charged}) = max(0, {raw_value!r}) "
        f"= {current!r} (band {band})"
    )
    if ttl is None:
        tail = "ttl=never → never expires by age."
    elif expired:
        tail = f"ttl={ttl} days; {days} > {ttl} → TTL expired (archive candidate)."
    else:
        tail = f"ttl={ttl} days; {days} ≤ {ttl} → within TTL."
    if current < ARCHIVE_THRESHOLD:
        tail += f" Importance {current!r} < {ARCHIVE_THRESHOLD} → archive candidate."
    return f"{head}; {age}; {formula}; {tail}"
