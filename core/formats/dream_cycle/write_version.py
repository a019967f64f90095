"""Putting back an earlier version of one section (history's restore).

The section's lines (heading, comment, body, the blank lines up to the next
heading) are replaced by their bytes at an earlier commit; every other line
of observations.md stays byte for byte.  Archived entries are not rewritten
(archive.jsonl is append-only): restore the entry first, then its section.
"""

from __future__ import annotations

from ...errors import ConflictError, RefusedError
from ...model import Memory
from ...write.journal import FileChange, Plan
from .files import OBSERVATIONS
from .write_files import _find, _load, _section, _short, scan_candidate


def version_plan(memory: Memory, data: bytes, expected: bytes | None) -> Plan:
    """Replace the section's lines with `data`; `expected` is the section as the user saw it."""
    if memory.path != OBSERVATIONS:
        raise RefusedError(
            f"{memory.id} is archived in {memory.path}, which is append-only: restore it"
            " into observations.md first, then put back an earlier version of its section"
        )
    state, fresh = _load(memory)
    _pos, sec = _section(state, fresh)
    raw = state.obs.raw
    start, stop = sec.start_line - 1, sec.end_line
    current = b"".join(raw[start:stop])
    if expected is not None and current != expected:
        raise ConflictError(
            f"{OBSERVATIONS}: {memory.id} changed on disk since its history was read"
        )
    if current == data:
        raise RefusedError(
            f"{OBSERVATIONS}: that version is the section as it is now; nothing to restore"
        )
    piece = data
    if stop < len(raw) and not piece.endswith(b"\n"):
        piece += state.obs.newline  # the next heading must stay on its own line
    new = state.obs.render([*raw[:start], piece, *raw[stop:]])
    after = scan_candidate(state, obs=new)
    if _find(after, fresh.id, OBSERVATIONS) is None:
        bad = next((p.detail for p in after.problems if p.id == fresh.id), "it reads differently")
        raise RefusedError(
            f"{OBSERVATIONS}: that version would not read as {fresh.id} ({bad}); not written"
        )
    return Plan(
        "restore_version",
        state.root,
        [fresh.id],
        f"restore an earlier version of section '{_short(sec.title)}'"
        f" ({len(data.splitlines())} lines)",
        [FileChange("write", state.obs.path, state.obs.snap, data=new, append_only=True)],
    )


__all__ = ["version_plan"]
