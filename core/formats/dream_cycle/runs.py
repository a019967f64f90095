"""Dream Cycle runs: the decay run (`dream-cycle.sh decay`) and the dream-log type report.

`decay_run(vault, as_of)` does in one plan (one journal entry, one undo) what
the spec's decay function does, without its compounding bug:

- Only tagged sections decay (`dc:type`, `dc:importance`, `dc:date`);
  untagged ones are Phase 1 observations and are left alone.
- Current importance is computed on the fly by the adapter.  When the run
  writes it back to `dc:importance` it also writes `dc:decayed=<as_of>`, the
  date that value refers to, so the next run charges only the days since
  then; `dc:date` stays the first-recorded date.  Nothing is written for a
  section whose importance does not change (rate 0, no days to charge, or a
  date after `as_of`), so a second run with the same `as_of` changes nothing.
- Sections whose TTL expired, or whose current importance fell below 3.0,
  move to archive.jsonl in the spec's JSON shape (reasons labelled like
  "event TTL expired (14 days)" and "importance below 3.0 (now 2.5)").
  Sections with `ttl=never` (explicit, or a `rule`) are never archived by the
  run; they are listed as kept.
- Invalid sections are never touched.

`type_distribution(vault, as_of)` counts sections per type for the dream log:
tagged sections by their effective type, untagged ones by the type the spec's
classification rules suggest (their effective type stays `fact`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Any

from ...errors import RefusedError
from ...model import Memory, ScanResult
from ...text.dates import parse_date
from ...write.journal import FileChange, Plan
from .adapter import DreamCycleAdapter
from .classify import DECAY_RATE, TYPE_TTL
from .files import OBSERVATIONS
from .write_archive import (
    after_of,
    append_lines,
    archive_change,
    archive_entry,
    check_archived,
    remove_sections,
)
from .write_fields import rewrite_comment
from .write_files import VaultState, read_state

#: The spec's type table order, for reports.
TYPE_ORDER: tuple[str, ...] = ("fact", "preference", "goal", "habit", "event", "rule", "context")


@dataclass(frozen=True, slots=True)
class DecayItem:
    """One section the run archives, writes back, or keeps."""

    id: str
    title: str
    index: int | None
    type: str
    importance: float | None
    current_importance: float | None
    reasons: tuple[str, ...] = ()
    archive_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "index": self.index,
            "type": self.type,
            "importance": self.importance,
            "current_importance": self.current_importance,
            "reasons": list(self.reasons),
            "archive_id": self.archive_id,
        }


@dataclass(slots=True)
class DecayReport:
    """What a decay run does (or would do, before the plan is applied)."""

    vault: Path
    as_of: date
    archived: list[DecayItem] = field(default_factory=list)
    decayed: list[DecayItem] = field(default_factory=list)
    #: Archive candidates kept because their TTL is `never`.
    kept: list[DecayItem] = field(default_factory=list)
    unchanged: int = 0
    undated: int = 0
    invalid: int = 0

    @property
    def changes_anything(self) -> bool:
        return bool(self.archived or self.decayed)

    def summary(self) -> str:
        parts = [
            f"archive {len(self.archived)} section{'s' if len(self.archived) != 1 else ''}",
            f"write back the decayed importance of {len(self.decayed)}",
        ]
        if self.kept:
            parts.append(f"keep {len(self.kept)} with ttl=never")
        return f"decay as of {self.as_of.isoformat()}: " + ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "vault": str(self.vault),
            "as_of": self.as_of.isoformat(),
            "archived": [i.to_dict() for i in self.archived],
            "decayed": [i.to_dict() for i in self.decayed],
            "kept": [i.to_dict() for i in self.kept],
            "unchanged": self.unchanged,
            "undated": self.undated,
            "invalid": self.invalid,
        }


def _item(m: Memory, current: float | None, reasons: tuple[str, ...] = ()) -> DecayItem:
    base = m.native.get("base_importance")
    return DecayItem(
        id=m.id,
        title=m.title,
        index=m.index,
        type=m.kind,
        importance=float(base) if isinstance(base, int | float) else None,
        current_importance=current,
        reasons=reasons,
    )


def _writeback(m: Memory, current: float | None, as_of: date) -> dict[str, str | None] | None:
    """The comment changes that record `current` as of `as_of`, or None if nothing changes."""
    base = m.native.get("base_importance")
    if current is None or not isinstance(base, int | float):
        return None
    if DECAY_RATE.get(m.kind, DECAY_RATE["fact"]) == 0:
        return None
    since = parse_date(m.native.get("decayed")) or parse_date(m.native.get("date"))
    if since is None or as_of <= since:
        return None  # nothing to charge (or a date after as_of)
    if float(current) == float(base):
        return None
    return {"dc:importance": repr(float(current)), "dc:decayed": as_of.isoformat()}


def decay_run(
    vault: Path | str, as_of: date, *, write_back: bool = True
) -> tuple[Plan, DecayReport]:
    """Plan the Dream Cycle decay run over one vault as of `as_of`.

    Returns the plan (apply it with core.journal.apply_plan; an empty plan
    means there is nothing to do) and a report of what it does.  Planning
    never writes.
    """
    root = Path(vault)
    adapter = DreamCycleAdapter()
    if not adapter.detect(root):
        raise RefusedError(f"{root}: not a Dream Cycle vault")
    state = read_state(root)
    report = DecayReport(vault=root, as_of=as_of)
    by_id = {m.id: m for m in state.scan.memories if m.path == OBSERVATIONS}
    leaving: dict[int, tuple[Memory, float | None, tuple[str, ...]]] = {}
    edits: dict[int, tuple[Memory, dict[str, str | None]]] = {}
    for pos, sid in enumerate(state.ids):
        m = by_id.get(sid)
        if m is None:
            report.invalid += 1
            continue
        if not m.native.get("tagged") or m.native.get("date") is None:
            report.undated += 1
            continue
        d = adapter.decay(m, as_of)
        reasons = tuple(d.archive_reasons)
        never = m.native.get("ttl") is None
        if reasons and not never:
            leaving[pos] = (m, d.current_importance, reasons)
            continue
        if reasons:
            report.kept.append(_item(m, d.current_importance, reasons))
        change = _writeback(m, d.current_importance, as_of) if write_back else None
        if change is None:
            report.unchanged += 1
            continue
        edits[pos] = (m, change)
        report.decayed.append(_item(m, d.current_importance))

    raw = state.obs.raw
    for pos, (_m, change) in sorted(edits.items()):
        raw = rewrite_comment(state.obs, raw, state.sections[pos], change)
    raw = remove_sections(state, raw, leaving)
    used = state.archive_ids() | {m.id for m in state.scan.memories}
    entries: dict[str, dict[str, Any]] = {}
    gone = set(leaving)
    for pos, (m, current, reasons) in sorted(leaving.items()):
        entry = archive_entry(
            state,
            m,
            state.sections[pos],
            after_of(state, pos, gone),
            "; ".join(reasons),
            current,
            as_of,
            used,
        )
        entries[m.id] = entry
        report.archived.append(replace(_item(m, current, reasons), archive_id=entry["id"]))

    changes: list[FileChange] = []
    new_obs = state.obs.render(raw)
    new_arc = append_lines(state.archive, list(entries.values())) if entries else None
    if new_obs != state.obs.data:
        after = check_archived(state, new_obs, new_arc, entries)
        _check_writebacks(state, after, leaving, edits)
        changes.append(
            FileChange("write", state.obs.path, state.obs.snap, data=new_obs, append_only=True)
        )
    if new_arc is not None:
        changes.append(archive_change(state.archive, new_arc))
    ids = [i.id for i in report.archived] + [i.id for i in report.decayed]
    summary = report.summary() if changes else f"decay as of {as_of.isoformat()}: nothing to do"
    return Plan("decay", root, ids, summary, changes), report


def _check_writebacks(
    state: VaultState,
    after: ScanResult,
    leaving: dict[int, Any],
    edits: dict[int, tuple[Memory, dict[str, str | None]]],
) -> None:
    """Every remaining section reads back with the same text and only the asked changes."""
    before = [
        (pos, m)
        for pos, sid in enumerate(state.ids)
        if pos not in leaving
        for m in state.scan.memories
        if m.id == sid and m.path == OBSERVATIONS
    ]
    now = sorted((m for m in after.memories if m.path == OBSERVATIONS), key=lambda m: m.index or 0)
    if len(before) != len(now):
        raise RefusedError("the decay run would change other sections; not written")
    for (pos, old), new in zip(before, now, strict=True):
        fields = dict(old.fields)
        for k, v in edits.get(pos, (old, {}))[1].items():
            if v is None:
                fields.pop(k, None)
            else:
                fields[k] = v
        if (new.title, new.body) != (old.title, old.body) or list(new.fields.items()) != list(
            fields.items()
        ):
            raise RefusedError(
                f"section '{old.title}' would not read back as intended; nothing written"
            )


# ---------------------------------------------------------------------------
# Dream log: type distribution
# ---------------------------------------------------------------------------


@dataclass(slots=True)
class TypeCount:
    """Sections of one type: tagged (effective type) and untagged (classified)."""

    type: str
    ttl_days: int | None
    tagged: int = 0
    untagged: int = 0
    active: int = 0
    ttl_expired: int = 0
    fading: int = 0
    undated: int = 0

    @property
    def total(self) -> int:
        return self.tagged + self.untagged

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "ttl_days": self.ttl_days if self.ttl_days is not None else "never",
            "tagged": self.tagged,
            "untagged": self.untagged,
            "total": self.total,
            "active": self.active,
            "ttl_expired": self.ttl_expired,
            "fading": self.fading,
            "undated": self.undated,
        }


@dataclass(slots=True)
class TypeDistribution:
    """The dream log's type distribution of one vault as of a date."""

    vault: Path
    as_of: date
    types: dict[str, TypeCount]
    #: Declared dc:type values that are not one of the seven (counted as fact).
    unknown_declared: dict[str, int] = field(default_factory=dict)
    tagged: int = 0
    untagged: int = 0
    invalid: int = 0
    archived: int = 0
    archive_candidates: int = 0

    @property
    def sections(self) -> int:
        return self.tagged + self.untagged

    def to_dict(self) -> dict[str, Any]:
        return {
            "vault": str(self.vault),
            "as_of": self.as_of.isoformat(),
            "sections": self.sections,
            "tagged": self.tagged,
            "untagged": self.untagged,
            "invalid": self.invalid,
            "archived": self.archived,
            "archive_candidates": self.archive_candidates,
            "types": [t.to_dict() for t in self.types.values()],
            "unknown_declared": dict(self.unknown_declared),
        }

    def to_markdown(self) -> str:
        """The distribution as a dream-log section (markdown)."""
        lines = [
            f"### Type distribution — {self.as_of.isoformat()}",
            "",
            f"{self.sections} observations ({self.tagged} tagged, {self.untagged} untagged),"
            f" {self.invalid} invalid, {self.archived} archived;"
            f" {self.archive_candidates} due for archiving.",
            "",
            "| type | TTL | tagged | untagged (classified) | total | expired | fading |",
            "|---|---|---|---|---|---|---|",
        ]
        for t in self.types.values():
            ttl = "never" if t.ttl_days is None else f"{t.ttl_days} d"
            lines.append(
                f"| {t.type} | {ttl} | {t.tagged} | {t.untagged} | {t.total}"
                f" | {t.ttl_expired} | {t.fading} |"
            )
        lines += [
            "",
            "Untagged observations count as `fact` (Phase 1 compatibility); their column shows"
            " the type the classification rules suggest.",
        ]
        if self.unknown_declared:
            unknown = ", ".join(f"`{k}` ×{v}" for k, v in sorted(self.unknown_declared.items()))
            lines.append(f"Unknown dc:type values (decayed as fact): {unknown}.")
        return "\n".join(lines) + "\n"


def type_distribution(vault: Path | str, as_of: date) -> TypeDistribution:
    """Count the vault's observations per type as of `as_of` (reads only)."""
    root = Path(vault)
    adapter = DreamCycleAdapter()
    if not adapter.detect(root):
        raise RefusedError(f"{root}: not a Dream Cycle vault")
    result = adapter.scan(root)
    dist = TypeDistribution(
        vault=root, as_of=as_of, types={t: TypeCount(t, TYPE_TTL[t]) for t in TYPE_ORDER}
    )
    dist.invalid = sum(1 for p in result.problems if p.path == OBSERVATIONS)
    for m in result.memories:
        if m.archived:
            dist.archived += 1
            continue
        if m.path != OBSERVATIONS:
            continue
        native = m.native
        if native.get("tagged"):
            kind = m.kind
            declared = native.get("declared_type")
            if isinstance(declared, str) and declared.strip().lower() not in TYPE_TTL:
                dist.unknown_declared[declared] = dist.unknown_declared.get(declared, 0) + 1
            row = dist.types.setdefault(kind, TypeCount(kind, TYPE_TTL.get(kind)))
            row.tagged += 1
            dist.tagged += 1
        else:
            classified = native.get("classified_type")
            kind = classified if isinstance(classified, str) else "fact"
            row = dist.types.setdefault(kind, TypeCount(kind, TYPE_TTL.get(kind)))
            row.untagged += 1
            dist.untagged += 1
        d = adapter.decay(m, as_of)
        if d.status == "undated":
            row.undated += 1
        elif d.status == "ttl_expired":
            row.ttl_expired += 1
        else:
            row.active += 1
            cur = d.current_importance
            if cur is not None and cur < 3.0:
                row.fading += 1
        if d.archive_reasons and native.get("ttl") is not None:
            dist.archive_candidates += 1
    return dist


__all__ = [
    "TYPE_ORDER",
    "DecayItem",
    "DecayReport",
    "TypeCount",
    "TypeDistribution",
    "decay_run",
    "type_distribution",
]
