"""What every format's decay shares: the unified health of a native status, and score bands.

It sits at the bottom of core (it needs only the model) so the format
packages can use it while `core/decay.py`, which dispatches to the formats'
adapters, stays above them.
"""

from __future__ import annotations

from .model import Health

#: Native status -> unified health (DESIGN.md "Native status per format").
STATUS_HEALTH: dict[str, Health] = {
    "permanent": Health.STABLE,
    "pinned": Health.STABLE,
    "undated": Health.STABLE,
    "retained": Health.STABLE,
    "live": Health.STABLE,
    "active": Health.ACTIVE,
    "near_expiry": Health.FADING,
    # Project Ocean's second generation: past its max age, flagged for a
    # person to look at (fading); or valuable enough that the decay run
    # extends it (it stays active).
    "review": Health.FADING,
    "extend": Health.ACTIVE,
    "fading": Health.FADING,
    "dormant": Health.FADING,
    "ttl_expired": Health.EXPIRED,
    "expired": Health.EXPIRED,
    "archived": Health.ARCHIVED,
    "tombstoned": Health.TOMBSTONED,
}


def importance_band(importance: float) -> str:
    """The dream-cycle spec's importance category for a 0-10 score."""
    if importance >= 9.0:
        return "Critical"
    if importance >= 7.0:
        return "High"
    if importance >= 5.0:
        return "Medium"
    if importance >= 3.0:
        return "Low"
    return "Minimal"


def clamp01(x: float) -> float:
    return 0.0 if x < 0 else 1.0 if x > 1 else x
