"""Redaction of a Dream Cycle section: only the secrets' characters in its lines change.

The section's lines (heading, dc comment, body) are rewritten with each
secret replaced by `[REDACTED:<kind>]`; every other line of observations.md
keeps its bytes.  The vault is scanned again with the new bytes (in a
private folder): the section must read back with every text exactly as
before but for the markers, and nothing else may become invalid.  A secret
in the heading changes the section's id (ids come from titles), so the
section is found again by its place.  Archived entries are refused:
archive.jsonl is append-only and memlens never rewrites its lines.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...errors import RefusedError
from ...model import Memory
from ...write.journal import FileChange, Plan
from ..privacy_model import (
    Redaction,
    check_redacted,
    check_redactions,
    redacted,
    redaction_summary,
)
from .adapter import DreamCycleAdapter
from .files import OBSERVATIONS
from .write_files import _load, _section, _short, check_no_new_problems, plan_of, scan_candidate


def plan_redact_section(memory: Memory, redactions: Sequence[Redaction]) -> Plan:
    """The plan replacing the secrets in the section's own lines."""
    state, fresh = _load(memory)
    if fresh.archived:
        raise RefusedError(
            f"{fresh.id} is archived in {fresh.path}, which is append-only: restore it,"
            " redact it, then archive it again (the old archive line keeps its bytes)"
        )
    _pos, sec = _section(state, fresh)
    adapter = DreamCycleAdapter()
    before = adapter.text_fields(fresh, None)
    check_redactions(before, redactions)
    raw = list(state.obs.raw)
    first, stop = sec.start_line - 1, sec.end_line
    # The section's lines as one text: a secret may span lines (a private key).
    region = b"".join(raw[first:stop]).decode("utf-8")
    new = state.obs.render(
        [*raw[:first], redacted(region, redactions).encode("utf-8"), *raw[stop:]]
    )
    if new == state.obs.data:
        raise RefusedError("nothing to redact: the secrets are not in the section's lines")
    after = scan_candidate(state, obs=new)
    got = next(
        (m for m in after.memories if m.path == OBSERVATIONS and m.index == fresh.index), None
    )
    if got is None:
        raise RefusedError(f"the redaction would make section '{_short(sec.title)}' invalid")
    bad = check_redacted(before, adapter.text_fields(got, None), redactions)
    if bad:
        raise RefusedError(
            f"{', '.join(bad)}: the redaction would not read back as intended; not written"
        )
    check_no_new_problems(state.scan, after)
    ids = [fresh.id] if got.id == fresh.id else [fresh.id, got.id]
    return plan_of(
        "redact",
        state,
        ids,
        f"redact: {redaction_summary(redactions)} in section '{_short(got.title)}' of"
        f" {OBSERVATIONS}",
        [FileChange("write", state.obs.path, state.obs.snap, data=new, append_only=True)],
    )
