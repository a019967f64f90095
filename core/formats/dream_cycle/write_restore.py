"""Restoring archived sections into observations.md; archive.jsonl gets a restore marker."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from ...errors import RefusedError
from ...model import Memory, ScanResult
from ...text.dates import parse_date
from ...write.journal import FileChange, Plan
from .files import ARCHIVE_JSONL, ARCHIVED_MD, OBSERVATIONS
from .sections import parse_sections
from .write_archive import append_lines, archive_change
from .write_fields import DEFAULT_IMPORTANCE, DEFAULT_TYPE, _new_comment, _num_text
from .write_files import (
    VaultState,
    _find,
    _short,
    check_no_new_problems,
    plan_of,
    read_lines_of,
    scan_candidate,
    section_ids,
    sections_of,
    splice,
)


class _AtEnd:
    """Sentinel: append the restored section at the end of observations.md."""


_AT_END: Any = _AtEnd()


def _heading(title: str) -> str:
    return " ".join(title.split()) or "Restored observation"


def _entry_section(fresh: Memory, when: date) -> list[str]:
    """The section lines to restore from an archive.jsonl entry."""
    entry = fresh.fields
    full = str(entry.get("full_text", "")).replace("\r\n", "\n").replace("\r", "\n")
    lines = full.strip("\n").split("\n")
    if lines and lines[0].startswith("## "):
        secs = parse_sections("\n".join(lines) + "\n")
        if len(secs) == 1 and secs[0].start_line == 1:
            return lines
    # Written by another tool: full_text is plain text.
    for line in lines:
        if line.startswith("## "):
            raise RefusedError(
                f"{fresh.id}: full_text holds a line starting with '## '; restoring it would"
                " split it into several sections"
            )
    out = [f"## {_heading(fresh.title or fresh.id)}"]
    typ = entry.get("type")
    imp = entry.get("importance")
    if typ is not None or imp is not None:
        fields: dict[str, str] = {
            "dc:type": str(typ) if isinstance(typ, str) and typ.strip() else DEFAULT_TYPE,
            "dc:importance": _num_text(imp) if isinstance(imp, int | float) else DEFAULT_IMPORTANCE,
        }
        ttl = entry.get("ttl_days")
        if ttl is not None:
            fields["dc:ttl"] = str(ttl)
        created = fresh.created
        day = created.date() if isinstance(created, datetime) else created
        fields["dc:date"] = day.isoformat() if day is not None else when.isoformat()
        if isinstance(imp, int | float) and day is not None and when > day:
            # The archived importance is the value at archive time: count
            # further decay from the restore, not again from original_date.
            fields["dc:decayed"] = when.isoformat()
        out.append(_new_comment(fields))
    out.extend(lines)
    return out


def _insert_section(state: VaultState, lines: list[str], after: Any) -> tuple[list[bytes], int]:
    """observations.md's raw lines with `lines` inserted; and the heading's 0-based line."""
    obs = state.obs
    raw = obs.raw
    target: int | None = None  # insert before this section position
    if after is None:
        target = 0 if state.sections else None
    elif isinstance(after, str):
        pos = state.position(after)
        if pos is not None and pos + 1 < len(state.sections):
            target = pos + 1
    if target is not None:
        at = state.sections[target].start_line - 1
        return splice(obs, raw, at, at, [*lines, ""]), at
    texts = list(lines)
    if obs.lines and obs.lines[-1] != "":
        texts.insert(0, "")
    at = len(raw) + (1 if texts[0] == "" else 0)
    return splice(obs, raw, len(raw), len(raw), texts), at


def _check_restored(
    state: VaultState, after: ScanResult, fresh: Memory, sid: str, n_sections: int
) -> None:
    got = _find(after, sid, OBSERVATIONS)
    if got is None:
        bad = next((p for p in after.problems if p.id == sid), None)
        detail = f": {bad.detail}" if bad is not None else ""
        raise RefusedError(f"{fresh.id}: the restored section would not be valid{detail}")
    if _find(after, fresh.id, fresh.path) is not None:
        raise RefusedError(f"{fresh.id}: the entry would still be listed as archived")
    if n_sections != len(state.sections) + 1:
        raise RefusedError(f"{fresh.id}: restoring would not add exactly one section")
    check_no_new_problems(state.scan, after)


def restore_jsonl(state: VaultState, fresh: Memory, when: date) -> Plan:
    entry = fresh.fields
    lines = _entry_section(fresh, when)
    after = entry.get("after_section", _AT_END)
    new_raw, at = _insert_section(state, lines, after)
    new_obs = state.obs.render(new_raw)
    new_sections = sections_of(read_lines_of(state.obs, new_raw))
    new_ids = section_ids(new_sections)
    sid = next(
        (i for s, i in zip(new_sections, new_ids, strict=True) if s.start_line == at + 1), None
    )
    if sid is None:
        raise RefusedError(f"{fresh.id}: full_text does not start a section; not restored")
    marker = {
        "id": fresh.id,
        "restored": True,
        "restored_on": when.isoformat(),
        "section_id": sid,
    }
    new_arc = append_lines(state.archive, [marker])
    after_scan = scan_candidate(state, obs=new_obs, archive=new_arc)
    _check_restored(state, after_scan, fresh, sid, len(new_sections))
    if after is None and state.sections:
        where = "before the first section, where it was"
    elif isinstance(after, str) and after in state.ids[:-1]:
        where = f"after section {after}, where it was"
    else:
        where = "at the end"
    return plan_of(
        "restore",
        state,
        [fresh.id, sid],
        f"restore: {fresh.id} back into {OBSERVATIONS} as section '{_short(lines[0][3:])}'"
        f" ({where}); {ARCHIVE_JSONL} keeps the entry and gets a restore marker",
        [
            FileChange("write", state.obs.path, state.obs.snap, data=new_obs, append_only=True),
            archive_change(state.archive, new_arc),
        ],
    )


def restore_md(state: VaultState, fresh: Memory, when: date) -> Plan:
    f = state.archived_md
    start = fresh.native.get("start_line")
    end = fresh.native.get("end_line")
    if not isinstance(start, int) or not isinstance(end, int) or not 1 <= start <= end:
        raise RefusedError(f"{ARCHIVED_MD}: cannot locate {fresh.id}")
    block = f.lines[start - 1 : end]
    while len(block) > 1 and block[-1] == "":
        block.pop()
    if block and block[0].startswith("## "):
        lines = block
    else:
        # An entry under "## Auto-archived by decay (date)": a comment
        # line and its body; it needs a heading of its own.
        lines = [f"## {_heading(fresh.title or fresh.id)}", *block]
        on = parse_date(fresh.native.get("auto_archived_on"))
        comment = block[0] if block else ""
        if on is not None and "dc:decayed=" not in comment and "-->" in comment:
            cut = comment.rfind("-->")
            core = comment[:cut].rstrip()
            lines[1] = f"{core} dc:decayed={on.isoformat()} {comment[cut:]}"
    for line in lines[1:]:
        if line.startswith("## "):
            raise RefusedError(f"{fresh.id}: the archived text holds a '## ' line; not restored")
    new_raw, at = _insert_section(state, lines, _AT_END)
    new_obs = state.obs.render(new_raw)
    new_md = f.render(splice(f, f.raw, start - 1, end, []))
    new_sections = sections_of(read_lines_of(state.obs, new_raw))
    new_ids = section_ids(new_sections)
    sid = next(
        (i for s, i in zip(new_sections, new_ids, strict=True) if s.start_line == at + 1), None
    )
    if sid is None:
        raise RefusedError(f"{fresh.id}: the archived text does not start a section")
    after_scan = scan_candidate(state, obs=new_obs, archived_md=new_md)
    _check_restored(state, after_scan, fresh, sid, len(new_sections))
    return plan_of(
        "restore",
        state,
        [fresh.id, sid],
        f"restore: move '{_short(fresh.title)}' from {ARCHIVED_MD} back into {OBSERVATIONS}",
        [
            FileChange("write", state.obs.path, state.obs.snap, data=new_obs, append_only=True),
            FileChange("write", f.path, f.snap, data=new_md, append_only=True),
        ],
    )
