"""Project Ocean: per-agent observation vaults with linear/exponential decay.

Layout (specs/project-ocean.md)::

    agents/<agent>/memory/vault/obs-YYYY-MM-DD-NNN.md     active observations
    agents/<agent>/memory/archive/obs-...md               moved there by memory-decay.py
    shared/observations/obs-...md                         promoted copies (memory-promote.py)
    shared/observations/archive/obs-...md                 expired shared copies

Each file is YAML frontmatter + a markdown body.  The memory id comes from
the path, never from the content: ``<agent>/<file stem>`` or
``shared/<file stem>``.  A vault and an archive copy of the same stem
therefore share an id and are both reported as duplicates.

Decay follows the first-generation reference scripts (DESIGN.md): the age is
counted from ``created`` (never the file name), a file expires only once
``age > N``, linear weight ``max(0, 1 - age/N)``, exponential
``e^(-3*age/N)``, and no ``decay`` field means permanent.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any, ClassVar

from ...errors import ParseError
from ...health import STATUS_HEALTH
from ...model import (
    DecayInfo,
    FileScan,
    Health,
    Memory,
    Problem,
    Reason,
    ReferenceProblem,
    ScanResult,
)
from ...refs import PointerField
from ..adapter import FieldWrite, FormatAdapter, FormatInfo
from ..files import Listing, SkippedEntry, list_dirs, list_md, rel_posix, some_md, unlistable
from ..linking import Changes, one_memory_files, relinked, split_duplicates
from ..preview_model import PreviewRequest, PreviewSection
from ..privacy_model import TextField, frontmatter_text_fields
from ..reading import problem_from
from ..recall_model import RecallHit, RecallRequest
from . import detection
from .decay import _lifespan, _status, observation_decay
from .decay2 import observation2_decay, recall_weight, verdict, writeback
from .linking import _agent_of, _OceanLinkState, _resolve_backlinks, _stems, _twin
from .locations import _order, _owned, locate
from .observations import _parse
from .preview import recall_preview
from .recall import recall
from .schema import FORMAT_ID, POINTER_FIELDS


class ProjectOceanAdapter(FormatAdapter):
    """Reads `agents/*/memory/{vault,archive}/` and `shared/observations/`."""

    info: ClassVar[FormatInfo] = FormatInfo(
        id=FORMAT_ID,
        label="Project Ocean",
        short_label="ocean",
        promote_note="copies the file to shared/observations/ with promoted_from and promoted_at",
        has_agents=True,
    )
    pointer_fields: ClassVar[tuple[PointerField, ...]] = POINTER_FIELDS

    def detect(self, root: Path) -> bool:
        return detection.detect(root)

    # -- per-file scanning (see FormatAdapter) ------------------------------

    def files(self, root: Path) -> list[Path]:
        return [root / rel for rel in self.file_listing(root).names]

    def owns(self, root: Path, rel: str) -> bool:
        return _owned(rel) is not None

    def file_rels(self, root: Path) -> list[str]:
        """`files` as vault-relative strings (a cheaper stat walk)."""
        return self.file_listing(root).names

    def first_files(self, root: Path, limit: int) -> list[str]:
        """Notes of the agents' vaults and the shared folder, as `file_listing` lists them."""
        folders: list[str] = []
        for agent in list_dirs(root, "agents").names:
            memory = f"agents/{agent}/memory"
            if not (unlistable(root, f"agents/{agent}") or unlistable(root, memory)):
                folders.append(f"{memory}/vault")
        if unlistable(root, "shared/observations") is None:
            folders.append("shared/observations")
        return some_md(root, folders, limit)

    def file_listing(self, root: Path) -> Listing:
        """Every agent's vault/archive and the shared folders, and the entries
        left out (links out of the vault, pipes, ...)."""
        names: list[str] = []
        skipped: list[SkippedEntry] = []
        folders: list[str] = []
        agents = list_dirs(root, "agents")
        skipped.extend(agents.skipped)
        for agent in agents.names:
            memory = f"agents/{agent}/memory"
            refused = unlistable(root, f"agents/{agent}") or unlistable(root, memory)
            if refused is not None:
                skipped.append(refused)  # one problem for the agent, not one per folder
            elif os.path.isdir(f"{root}/{memory}"):
                folders += [f"{memory}/vault", f"{memory}/archive"]
        shared = unlistable(root, "shared/observations")
        if shared is not None:
            skipped.append(shared)  # one problem, not one more for its archive/
        else:
            folders += ["shared/observations", "shared/observations/archive"]
        for folder in folders:
            listing = list_md(root, folder)
            names.extend(f"{folder}/{n}" for n in listing.names)
            skipped.extend(listing.skipped)
        return Listing(names, skipped)

    def scan_file(self, root: Path, path: Path, data: bytes | None = None) -> FileScan:
        return self.scan_rel(root, rel_posix(root, path), data)

    def scan_rel(self, root: Path, rel: str, data: bytes | None = None) -> FileScan:
        """`scan_file` by vault-relative path (no Path objects: the cold scan's way in)."""
        loc = locate(root, rel)
        if loc is None:
            return FileScan(rel)
        out = FileScan(rel, order=_order(loc))
        problem: Problem | None = None
        try:
            out.memories.append(_parse(loc, root, data))
        except ParseError as err:
            problem = problem_from(err, FORMAT_ID, root, loc.rel)
            if "\n" in problem.detail:
                # Some YAML errors (e.g. a NUL byte) carry a multi-line
                # message; a problem's detail is one line.
                problem = replace(problem, detail=" ".join(problem.detail.split()))
        except OSError as exc:
            # Unreadable file (permissions, vanished mid-scan): show it,
            # never crash the scan.
            problem = Problem(
                format=FORMAT_ID,
                vault_root=root,
                path=loc.rel,
                reason=Reason.UNREADABLE,
                detail=f"cannot read file: {exc.strerror or exc}",
                id=loc.id,
            )
        except RecursionError:
            problem = Problem(
                format=FORMAT_ID,
                vault_root=root,
                path=loc.rel,
                reason=Reason.MALFORMED_FRONTMATTER,
                detail="YAML error: nested too deeply",
                id=loc.id,
            )
        if problem is not None:
            out.problems.append(problem)
            # The id comes from the path, so a file that failed still claims it.
            out.data["failed_id"] = loc.id
        return out

    def link(self, root: Path, scans: Mapping[str, FileScan]) -> ScanResult:
        parsed: list[Memory] = []
        problems: list[Problem] = []
        failed_ids: dict[str, list[str]] = {}
        for fs in scans.values():
            parsed.extend(fs.memories)
            problems.extend(fs.problems)
            failed = fs.data.get("failed_id")
            if failed is not None:
                failed_ids.setdefault(failed, []).append(fs.rel)

        memories, dups = split_duplicates(parsed, FORMAT_ID, root)
        problems.extend(dups)
        # The id comes from the path, so a copy that failed to parse still
        # claims it: the readable copy is a duplicate too (never loaded).
        # The unreadable copy keeps its own parse problem.
        kept: list[Memory] = []
        if failed_ids:
            for m in memories:
                others = failed_ids.get(m.id)
                if others:
                    problems.append(
                        Problem(
                            format=FORMAT_ID,
                            vault_root=root,
                            path=m.path,
                            reason=Reason.DUPLICATE_ID,
                            detail=f"id {m.id!r} also used by {', '.join(others)}",
                            id=m.id,
                            title=m.title,
                        )
                    )
                else:
                    kept.append(m)
        else:
            kept = memories

        ids = {m.id for m in kept}
        agents = Counter(a for m in kept if (a := _agent_of(m)) is not None)
        names: dict[str, dict[int, Memory]] = {}
        kept, ref_problems = _resolve_backlinks(
            kept, root, ids=ids, agents=sorted(agents), names=names
        )
        return ScanResult(
            memories=kept,
            problems=problems,
            ref_problems=ref_problems,
            link_state=_OceanLinkState(ids, agents, names),
        )

    def relink(
        self, root: Path, scans: Mapping[str, FileScan], previous: ScanResult, changes: Changes
    ) -> ScanResult | None:
        """`link` after a few files changed, touching only what they affect.

        Handles files that hold one valid memory before and after (edits,
        additions, removals) when no duplicate is involved and the set of
        agents stays the same; anything else returns None (full link).
        Backlinks of other memories are re-resolved only when they name an
        observation stem that appeared or disappeared.
        """
        state = previous.link_state
        split = one_memory_files(changes)
        if not isinstance(state, _OceanLinkState) or split is None:
            return None
        ids, agents, names = state.ids, state.agents, state.names
        gone, new = split
        for m in (*gone, *new):
            twin = _twin(m.path)
            # A vault/archive pair, now or before this batch (both files of
            # a pair may go at once): duplicates may change.
            if twin is not None and (twin in scans or twin in changes):
                return None
        delta: Counter[str] = Counter()
        for m in gone:
            if (a := _agent_of(m)) is not None:
                delta[a] -= 1
        for m in new:
            if (a := _agent_of(m)) is not None:
                delta[a] += 1
        if any((agents[a] > 0) != (agents[a] + d > 0) for a, d in delta.items()):
            return None  # the agent list orders shared backlinks: relink all

        # From here on the tables move to the new result.
        for a, d in delta.items():
            agents[a] += d
        gone_ids = {m.id for m in gone}
        new_ids = {m.id for m in new}
        ids.difference_update(gone_ids - new_ids)
        ids.update(new_ids)
        for m in gone:
            for stem in _stems(m):
                holders = names.get(stem)
                if holders is not None:
                    holders.pop(id(m), None)
                    if not holders:
                        del names[stem]

        def order(x: Memory | ReferenceProblem) -> tuple[Any, ...]:
            return scans[x.path].order

        affected: dict[int, Memory] = {id(m): m for m in new}
        for changed_id in gone_ids ^ new_ids:
            affected.update(names.get(changed_id.partition("/")[2], {}))
        owners = sorted(affected.values(), key=order)
        _, ref_problems = _resolve_backlinks(
            owners, root, ids=ids, agents=sorted(a for a, n in agents.items() if n > 0), names=names
        )
        dropped = {id(m) for m in gone}
        owner_ids = {m.id for m in owners} | gone_ids
        return relinked(previous, dropped, new, owner_ids, ref_problems, order, state)

    def decay_brief(self, memory: Memory, as_of: date) -> tuple[str, Health, float, float | None]:
        """(status, health, weight, score) of `decay`, without its explanation.

        What a search index needs for 100k memories; both go through
        `_lifespan` and `_status` (a test holds them equal).
        """
        if memory.native.get("generation") == 2:
            v = verdict(memory, as_of)
            return v.status, STATUS_HEALTH[v.status], recall_weight(memory, as_of), None
        life = _lifespan(memory, as_of)
        if life is None:
            status = "archived" if memory.archived else "permanent"
            return status, STATUS_HEALTH[status], 0.0 if memory.archived else 1.0, None
        _created, age, n, _fraction, _linear, _exponential, strength = life
        status = _status(memory, age, n)
        weight = 0.0 if status == "archived" else 1.0 if status == "permanent" else strength
        return status, STATUS_HEALTH[status], weight, None

    def decay(self, memory: Memory, as_of: date, *, explain: bool = True) -> DecayInfo:
        """Status and weight as memory-decay.py / memory-search.py would see them.

        Each file by its own generation: `decay` (first) or `decay2` (second;
        its weight is memory-search.py's importance × freshness).
        """
        if memory.native.get("generation") == 2:
            return observation2_decay(memory, as_of, explain=explain)
        return observation_decay(memory, as_of, explain=explain)

    def decay_writebacks(self, memories: Sequence[Memory], as_of: date) -> list[FieldWrite]:
        """The second generation's neglect penalty (never compounded) and max-age extensions."""
        out: list[FieldWrite] = []
        for m in sorted(memories, key=lambda m: m.path):
            if m.native.get("generation") != 2:
                continue
            found = writeback(m, as_of)
            if found is not None:
                out.append(FieldWrite(m, dict(found[0]), found[1]))
        return out

    def recall(self, memories: Sequence[Memory], request: RecallRequest) -> list[RecallHit]:
        """memory-search.py's ranking (`recall`): cosine × importance × freshness."""
        return recall(memories, request)

    def deliberate_copies(self, a: Memory, b: Memory) -> bool:
        """A promoted copy in shared/observations/ and its source (same file name)."""
        if a.path.rpartition("/")[2] != b.path.rpartition("/")[2]:
            return False
        return any(m.native.get("area") == "shared" or "promoted_from" in m.fields for m in (a, b))

    def agent_preview(
        self, root: Path, result: ScanResult, request: PreviewRequest
    ) -> list[PreviewSection]:
        """The HEARTBEAT recall step per agent and what shared/ adds (see `preview`)."""
        return recall_preview(self, root, result.memories, request)

    def text_fields(self, memory: Memory, raw: str | None) -> list[TextField]:
        """Every frontmatter string (on its key's line) and the body (from its first line)."""
        return frontmatter_text_fields(memory, raw)


__all__ = ["ProjectOceanAdapter"]
