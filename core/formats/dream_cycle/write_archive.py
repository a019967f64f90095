"""Archiving sections: removed from observations.md, one archive.jsonl entry each."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import date
from typing import Any

from ...decay import importance_band
from ...errors import RefusedError
from ...model import Memory, ScanResult
from ...text.dates import parse_date
from ...write.journal import FileChange
from .files import ARCHIVE_JSONL, OBSERVATIONS
from .sections import Section
from .write_fields import DEFAULT_IMPORTANCE, DEFAULT_TYPE
from .write_files import TextFile, VaultState, _find, check_no_new_problems, scan_candidate, splice

_ARCHIVE_ID = re.compile(r"^OBS-(\d{8})-(\d+)$")


def section_text(lines: list[str], sec: Section) -> list[str]:
    """The section's lines, heading to last non-empty line."""
    block = lines[sec.start_line - 1 : sec.end_line]
    while len(block) > 1 and block[-1] == "":
        block.pop()
    return block


def next_archive_id(day: date, used: Iterable[str]) -> str:
    """`OBS-YYYYMMDD-NNN`, one past the highest NNN of that day among `used`, never in `used`.

    The date is formatted by hand: `strftime("%Y")` drops the zero padding of
    years before 1000 on some platforms, so two year-1 sections would get
    the same id and block the whole decay run.
    """
    stamp = f"{day.year:04d}{day.month:02d}{day.day:02d}"
    taken = set(used)
    top = 0
    for u in taken:
        m = _ARCHIVE_ID.match(u)
        if m and m.group(1) == stamp:
            top = max(top, int(m.group(2)))
    n = top + 1
    while f"OBS-{stamp}-{n:03d}" in taken:
        n += 1
    return f"OBS-{stamp}-{n:03d}"


def archive_entry(
    state: VaultState,
    memory: Memory,
    sec: Section,
    after: str | None,
    reason: str,
    current: float | None,
    as_of: date,
    used: set[str],
) -> dict[str, Any]:
    """The spec-shaped archive.jsonl entry for one section (id added to `used`)."""
    native = memory.native
    tagged = bool(native.get("tagged"))
    original = parse_date(native.get("date")) or as_of
    base = native.get("base_importance")
    base_f = float(base) if isinstance(base, int | float) else float(DEFAULT_IMPORTANCE)
    ttl = native.get("ttl")
    eid = next_archive_id(original, used)
    used.add(eid)
    return {
        "id": eid,
        "original_date": original.isoformat(),
        "impact": importance_band(base_f).lower(),
        "type": (native.get("declared_type") or DEFAULT_TYPE) if tagged else DEFAULT_TYPE,
        "ttl_days": ttl if isinstance(ttl, int) else "never",
        "importance": float(current) if current is not None else base_f,
        "archived_reason": reason,
        "full_text": "\n".join(section_text(state.obs.lines, sec)),
        "section_id": memory.id,
        "after_section": after,
        "archived_on": as_of.isoformat(),
    }


def append_lines(f: TextFile, objects: list[dict[str, Any]]) -> bytes:
    """archive.jsonl's bytes with one JSON line per object appended."""
    data = f.data
    nl = f.newline if f.raw else b"\n"
    if data and not data.endswith(b"\n"):
        data += nl
    for obj in objects:
        data += json.dumps(obj, ensure_ascii=False).encode("utf-8") + nl
    return data


def archive_change(f: TextFile, data: bytes) -> FileChange:
    if f.exists:
        return FileChange("write", f.path, f.snap, data=data, append_only=True)
    return FileChange("create", f.path, f.snap, data=data)


def remove_sections(state: VaultState, raw: list[bytes], positions: Iterable[int]) -> list[bytes]:
    """`raw` without the given sections' lines (heading through trailing blanks)."""
    out = list(raw)
    for pos in sorted(set(positions), reverse=True):
        sec = state.sections[pos]
        out = splice(state.obs, out, sec.start_line - 1, sec.end_line, [])
    return out


def after_of(state: VaultState, pos: int, leaving: set[int]) -> str | None:
    """Id of the nearest section before `pos` that stays (None: it would be first)."""
    for p in range(pos - 1, -1, -1):
        if p not in leaving:
            return state.ids[p]
    return None


def check_archived(
    state: VaultState,
    new_obs: bytes,
    new_arc: bytes | None,
    entries: dict[str, dict[str, Any]],
) -> ScanResult:
    """The archived sections are gone, their entries read back; nothing else broke."""
    after = scan_candidate(state, obs=new_obs, archive=new_arc)
    for sid, entry in entries.items():
        got = _find(after, entry["id"], ARCHIVE_JSONL)
        if got is None or not got.archived or got.body != entry["full_text"]:
            bad = next((p for p in after.problems if p.id == entry["id"]), None)
            why = f" ({bad.detail})" if bad is not None else ""
            raise RefusedError(f"{sid}: the archive entry would not read back{why}; not written")
    before = sum(1 for m in state.scan.memories if m.path == OBSERVATIONS)
    now = sum(1 for m in after.memories if m.path == OBSERVATIONS)
    if now != before - len(entries):
        raise RefusedError("archiving would change other sections; not written")
    check_no_new_problems(state.scan, after)
    return after
