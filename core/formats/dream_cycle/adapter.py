"""Dream Cycle (Total Recall) vaults: `observations.md` sections with dc comments.

Layout: `observations.md` is split on lines starting with `## `; each section
may carry one `<!-- dc:key=value ... -->` metadata comment as its first
non-blank line.  Archived observations live in `archive.jsonl` (one JSON
object per line) and, when Total Recall's own decay run archived them, in
`archived-observations.md`.

Decisions a reader would question (see DESIGN.md and expected.json `rules`):

* Ids derive from the heading text, never the position, so an unrelated edit
  does not renumber anything: `<slug>-<first 6 hex of sha1(title)>`, and a
  repeated title gets `-2`, `-3`, ... in file order.
* Decay is computed on the fly from `dc:date` and never compounds.  If a
  `dc:decayed=YYYY-MM-DD` field exists, `dc:importance` is the value as of that
  date and only the days since then are charged.
* Files are decoded line by line, strictly: a bad byte spoils only the section
  (or archive line) it sits in, and that item is reported, not guessed.
* `archive.jsonl` is append-only: restoring an entry never deletes its line.
  The restore appends a marker line `{"id": <entry id>, "restored": true, ...}`
  instead; a marker is not an entry, and it hides every earlier entry with
  that id (an entry appended after the marker is archived again).
* Rescans (live reload) keep the file's bytes and a table of its sections:
  only the sections a change touches are parsed again (`rescan_file`) and
  spliced into the previous result (`relink`); both equal a full scan.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import ClassVar

from ...health import STATUS_HEALTH
from ...model import DecayInfo, FileScan, Health, Memory, Problem, Reason, ScanResult
from ...refs import PointerField
from ..adapter import FormatAdapter, FormatInfo, HistoryScope, PromoteOption
from ..files import Listing, list_files
from ..linking import Changes, split_duplicates
from ..preview_model import PreviewRequest, PreviewSection
from ..privacy_model import TextField
from . import detection
from .archive import scan_archive
from .bodies import section_bodies
from .decay import _decay_numbers, section_decay
from .files import (
    _FILE_ORDER,
    ARCHIVE_JSONL,
    ARCHIVED_MD,
    FORMAT_ID,
    OBSERVATIONS,
    _read,
    _where,
    problem,
)
from .history import history_extract, history_scope
from .ids import IdAllocator, _RecordingIds, _ReplayMismatch
from .linking import _DreamLinkState, _Splice, _splice_plan
from .preview import observations_preview
from .privacy import problem_section_texts, section_text_fields
from .reading import parse_window
from .rescan import _Table, rescan


class DreamCycleAdapter(FormatAdapter):
    info: ClassVar[FormatInfo] = FormatInfo(
        id=FORMAT_ID,
        label="Dream Cycle",
        short_label="dream",
        promote_note="writes explicit dc: tags; a type only to one that lives longer",
        promote_options=(
            PromoteOption(
                "type", "", "a longer-lived type: fact preference goal habit event rule context"
            ),
            PromoteOption("importance", "", "0-10, only raises it", number=True),
        ),
        has_decay_run=True,
    )
    #: The spec defines no field that points at another observation.
    pointer_fields: ClassVar[tuple[PointerField, ...]] = ()

    def detect(self, root: Path) -> bool:
        return detection.detect(root)

    # -- per-file scanning (see FormatAdapter) ------------------------------

    def files(self, root: Path) -> list[Path]:
        return [root / rel for rel in self.file_listing(root).names]

    def file_listing(self, root: Path) -> Listing:
        """The store files, leaving out (and reporting) links out of the vault."""
        return list_files(root, _FILE_ORDER)

    def owns(self, root: Path, rel: str) -> bool:
        return rel in _FILE_ORDER

    def bodies_of(
        self, root: Path, rel: str, data: bytes, memories: Sequence[Memory]
    ) -> dict[str, str] | None:
        return section_bodies(rel, data, memories)

    def scan_file(self, root: Path, path: Path, data: bytes | None = None) -> FileScan:
        rel = path.relative_to(root).as_posix()
        if rel not in _FILE_ORDER:
            return FileScan(rel)
        out = FileScan(rel, order=(_FILE_ORDER.index(rel),))
        if rel == ARCHIVE_JSONL:
            scan_archive(root, out.memories, out.problems, raw=data)
            return out
        raw = _read(root / rel) if data is None else data
        if raw is None:
            return out
        if isinstance(raw, OSError):
            out.problems.append(
                problem(
                    root, rel, Reason.UNREADABLE, f"cannot read the file: {raw.strerror or raw}"
                )
            )
            return out
        # Ids are allocated per file here; link() re-allocates across the
        # markdown files in order (a title repeated in both gets `-2`).
        ids = _RecordingIds()
        win = parse_window(root, rel, raw, 0, len(raw), 0, 0, ids, at_start=True, at_end=True)
        out.memories = win.memories
        out.problems = win.problems
        out.data["table"] = _Table(
            raw=raw,
            token=os.urandom(8),
            heads=win.heads,
            lines=win.lines,
            nmem=win.nmem,
            nprob=win.nprob,
            takes=win.takes,
            npre=win.npre,
            counts=dict(ids.seen),
        )
        return out

    def rescan_file(
        self, root: Path, path: Path, data: bytes, previous: FileScan
    ) -> FileScan | None:
        """`scan_file` again after a change, parsing only the sections it touched.

        The previous read keeps the file's bytes and a table of its sections
        (byte offset, line, what each became, the ids it took).  The changed
        byte span (common prefix and suffix of the old and new bytes) picks
        the sections to parse again; the others keep their objects, moved to
        their new lines and places when lines or sections were added or
        removed before them, renumbered when a repeated title changed count.
        The result equals `scan_file` of the new bytes.  None (read it whole)
        when the previous read has no table.
        """
        rel = path.relative_to(root).as_posix()
        tab = previous.data.get("table")
        if rel not in (OBSERVATIONS, ARCHIVED_MD) or previous.rel != rel:
            return None
        if not isinstance(tab, _Table):
            return None
        try:
            return rescan(root, rel, data, previous, tab)
        except _ReplayMismatch:
            return None

    def link(self, root: Path, scans: Mapping[str, FileScan]) -> ScanResult:
        result = ScanResult()
        ids = IdAllocator()
        found: list[Memory] = []
        for fs in scans.values():
            tab = fs.data.get("table")
            renamed: dict[str, str] = {}
            if isinstance(tab, _Table):
                if not ids.seen:
                    # Nothing taken before this file: its ids stand as read.
                    ids.seen.update(tab.counts)
                else:
                    for t in tab.takes:
                        for base, given in t:
                            final = ids.take(base)
                            if final != given:
                                renamed[given] = final
            if not renamed:
                found.extend(fs.memories)
                result.problems.extend(fs.problems)
                continue
            # Copies, not edits: the FileScan keeps its own per-file ids.
            found.extend(
                replace(m, id=renamed[m.id]) if m.id in renamed else m for m in fs.memories
            )
            result.problems.extend(
                replace(p, id=renamed[p.id]) if p.id is not None and p.id in renamed else p
                for p in fs.problems
            )
        keep, dups = split_duplicates(found, self.format_id, root, where=_where)
        result.memories = keep
        result.problems.extend(dups)
        # For relink: every id once (a duplicate anywhere means a full link).
        result.link_state = _DreamLinkState(
            None if dups else dict.fromkeys((m.id for m in keep), 1)
        )
        return result

    def relink(
        self,
        root: Path,
        scans: Mapping[str, FileScan],
        previous: ScanResult,
        changes: Changes,
    ) -> ScanResult | None:
        """`link` after `changes`, splicing only what changed into `previous`.

        Holds when no id is used twice before or after, at most one markdown
        file changed, and the titles it added or dropped are not in the
        other markdown file (whose ids would be renumbered).  None: link in
        full.  `previous` gives up its link state either way.
        """
        state = previous.link_state
        previous.link_state = None
        if not isinstance(state, _DreamLinkState) or state.ids is None:
            return None
        if sum(1 for rel in changes if rel != ARCHIVE_JSONL) > 1:
            return None
        plans: dict[str, _Splice] = {}
        for rel, (before, after) in changes.items():
            plan = _splice_plan(rel, before, after)
            if rel != ARCHIVE_JSONL:
                mine = _FILE_ORDER.index(rel)
                for other_rel, other in scans.items():
                    tab = other.data.get("table")
                    if other_rel == rel or not isinstance(tab, _Table):
                        continue
                    # An earlier file renames this window's ids if it shares a
                    # title; a later one is renamed if a title changed count.
                    names = plan.bases if _FILE_ORDER.index(other_rel) < mine else plan.changed
                    if any(b in tab.counts for b in names):
                        return None
            plans[rel] = plan
        seen = state.ids
        for plan in plans.values():
            for m in plan.gone:
                left = seen.get(m.id, 0) - 1
                if left > 0:
                    seen[m.id] = left
                else:
                    seen.pop(m.id, None)
        for plan in plans.values():
            for m in plan.new:
                seen[m.id] = seen.get(m.id, 0) + 1
        if any(seen[m.id] != 1 for plan in plans.values() for m in plan.new):
            return None
        memories: list[Memory] = []
        problems: list[Problem] = []
        m_at = p_at = 0
        old_memories, old_problems = previous.memories, previous.problems
        for rel in _FILE_ORDER:
            cut = plans.get(rel)
            if cut is None:
                fs = scans.get(rel)
                if fs is not None:
                    memories += old_memories[m_at : m_at + len(fs.memories)]
                    problems += old_problems[p_at : p_at + len(fs.problems)]
                    m_at += len(fs.memories)
                    p_at += len(fs.problems)
                continue
            memories += old_memories[m_at : m_at + cut.m_lo]
            memories += cut.new
            memories += old_memories[m_at + cut.m_old - cut.m_tail : m_at + cut.m_old]
            problems += old_problems[p_at : p_at + cut.p_lo]
            problems += cut.new_problems
            problems += old_problems[p_at + cut.p_old - cut.p_tail : p_at + cut.p_old]
            m_at += cut.m_old
            p_at += cut.p_old
        if m_at != len(old_memories) or p_at != len(old_problems):
            return None  # the previous result was not linked from these scans
        result = ScanResult(memories=memories, problems=problems)
        result.link_state = state
        return result

    # -- decay --------------------------------------------------------------

    def decay_brief(self, memory: Memory, as_of: date) -> tuple[str, Health, float, float | None]:
        """(status, health, weight, score) of `decay`, without its explanation.

        What a search index needs for every section; `decay` takes the same
        numbers from the same `_decay_numbers` (a test holds them equal).
        """
        if memory.archived:
            return "archived", Health.ARCHIVED, 0.0, None
        n = _decay_numbers(memory, as_of)
        if n is None:
            return "undated", STATUS_HEALTH["undated"], 1.0, None
        return n.status, n.health, n.weight, None

    def decay(self, memory: Memory, as_of: date, *, explain: bool = True) -> DecayInfo:
        return section_decay(memory, as_of, explain=explain)

    def agent_preview(
        self, root: Path, result: ScanResult, request: PreviewRequest
    ) -> list[PreviewSection]:
        """observations.md as loaded, and what decays out within 7 and 30 days (see `preview`)."""
        return observations_preview(self, root, result.memories, request)

    def text_fields(self, memory: Memory, raw: str | None) -> list[TextField]:
        """The heading, the comment's dc: values and the body, each on its own file line.

        An archived entry (a line of archive.jsonl) holds its text in one JSON
        line: every text is on that line.
        """
        return section_text_fields(memory)

    def problem_texts(self, problem: Problem, raw: str) -> list[TextField]:
        """An invalid section's lines; an archive line or the whole file as by default."""
        section = problem_section_texts(problem, raw)
        return section if section is not None else super().problem_texts(problem, raw)

    def history_scope(self, memory: Memory) -> HistoryScope:
        """A section by its heading, an archive entry by its id (see dream_cycle.history)."""
        return history_scope(memory)

    def history_extract(self, scope: HistoryScope, data: bytes) -> bytes | None:
        """The section's bytes or the entry's line in one version of its file."""
        return history_extract(scope, data)


__all__ = ["DreamCycleAdapter"]
