"""Promote: Phase 3 tagging of an untagged section, or a longer-TTL type or higher
importance for a tagged one.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

from ...decay import decay_of
from ...errors import RefusedError
from ...model import Memory
from ...text.dates import parse_date
from ...write.journal import Plan
from .classify import TYPE_TTL, effective_type
from .files import OBSERVATIONS
from .sections import Section
from .write_fields import (
    DEFAULT_IMPORTANCE,
    DEFAULT_TYPE,
    _as_date,
    _show_fields,
    field_value,
    meta_plan,
)
from .write_files import VaultState, _load, _section, _short


def _ttl_text(ttl: int | None) -> str:
    return "TTL never" if ttl is None else f"TTL {ttl} days"


def _longer(new: int | None, old: int | None) -> bool:
    if old is None:
        return False
    return new is None or new > old


def _current_importance(memory: Memory, when: date) -> float:
    value = decay_of(memory, when).current_importance
    return float(value) if value is not None else 0.0


def promote_plan(memory: Memory, options: dict[str, Any], clock: Callable[[], date]) -> Plan:
    """Phase 3 tagging of an untagged section, or a longer-TTL type or higher importance."""
    state, fresh = _load(memory)
    _pos, sec = _section(state, fresh)
    title = _short(sec.title)
    when = _as_date(options.get("as_of"), "as_of") or clock()
    chosen = options.get("type")
    if chosen is not None:
        if not isinstance(chosen, str) or chosen.strip().lower() not in TYPE_TTL:
            raise RefusedError(
                f"type: {chosen!r} is not one of the seven types ({', '.join(TYPE_TTL)})"
            )
        chosen = chosen.strip().lower()
    importance = options.get("importance")
    imp_text = field_value("dc:importance", importance) if importance is not None else None
    if not sec.tagged:
        return _tag_untagged(state, fresh, sec, chosen, imp_text, when)
    changes: dict[str, str | None] = {}
    parts: list[str] = []
    current_kind = effective_type(sec.fields.get("dc:type"))
    if chosen is not None and chosen != current_kind:
        new_ttl, old_ttl = TYPE_TTL[chosen], TYPE_TTL[current_kind]
        if not _longer(new_ttl, old_ttl):
            raise RefusedError(
                f"type: {chosen} ({_ttl_text(new_ttl)}) does not live longer than"
                f" {current_kind} ({_ttl_text(old_ttl)}); promote only raises the TTL"
            )
        changes["dc:type"] = chosen
        parts.append(f"dc:type={chosen} ({_ttl_text(new_ttl)})")
        explicit = sec.fields.get("dc:ttl")
        if explicit is not None and explicit.strip().lower() != "never":
            try:
                days: int | None = int(explicit)
            except ValueError:
                days = None
            if days is None or _longer(new_ttl, days):
                changes["dc:ttl"] = "never" if new_ttl is None else str(new_ttl)
                parts.append(f"dc:ttl={changes['dc:ttl']}")
    if imp_text is not None:
        now = _current_importance(fresh, when)
        if float(imp_text) < now:
            raise RefusedError(
                f"importance: {imp_text} is below the current importance {now};"
                " promote only raises it (use set to lower it)"
            )
        if imp_text != sec.fields.get("dc:importance") or sec.fields.get("dc:decayed"):
            changes["dc:importance"] = imp_text
            start = parse_date(sec.fields.get("dc:date"))
            if start is not None and when > start:
                changes["dc:decayed"] = when.isoformat()
                parts.append(f"dc:importance={imp_text} as of {when.isoformat()}")
            else:
                parts.append(f"dc:importance={imp_text}")
    if not changes:
        raise RefusedError(
            f"{OBSERVATIONS}: '{title}' is already tagged"
            f" (dc:type={sec.fields.get('dc:type')}); choose a longer-TTL type"
            " or a higher importance to promote it"
        )
    return meta_plan(
        "promote",
        state,
        fresh,
        sec,
        changes,
        f"promote: {', '.join(parts)} in section '{title}'",
    )


def _tag_untagged(
    state: VaultState,
    fresh: Memory,
    sec: Section,
    chosen: str | None,
    imp_text: str | None,
    when: date,
) -> Plan:
    """Promote an untagged section: a new comment with its type, importance and date."""
    title = _short(sec.title)
    classified = fresh.native.get("classified_type")
    typ = chosen or (classified if isinstance(classified, str) else DEFAULT_TYPE)
    basis = (
        "chosen" if chosen else f"classified: {fresh.native.get('classification_basis', 'default')}"
    )
    fields = {
        "dc:type": typ,
        "dc:importance": imp_text or DEFAULT_IMPORTANCE,
        "dc:date": when.isoformat(),
    }
    ttl = TYPE_TTL[typ]
    ttl_text = "never expires" if ttl is None else f"TTL {ttl} days"
    return meta_plan(
        "promote",
        state,
        fresh,
        sec,
        {},
        f"promote: tag section '{title}' with {_show_fields(fields)} ({typ} {basis}; {ttl_text})",
        create=fields,
    )
