"""The cognitive-memory format: typed markdown memories in a graph, with decay.

Layout of a vault root (specs/cognitive-memory.md, DESIGN.md)::

    graph/<type-dir>/<slug>-<6hex>.md   memories, one folder per type
    vault/*.md                          pinned memories (decay score 999.0)
    archive/<type-dir>/*.md             memories memlens archived (outside graph/)
    episodes/YYYY-MM-DD.md              daily session logs linking to memories
    _state.json                         access counts and last access per id
    _index.json                         derived index (rebuilt by `reindex`)

The markdown files are the source of truth.  `_state.json` only feeds decay;
its stored `decay_score` values are stale and always recomputed here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from datetime import date, timedelta
from pathlib import Path
from typing import Any, ClassVar

from ...health import STATUS_HEALTH, clamp01
from ...identity import ByIdentity
from ...model import DecayInfo, FileScan, Health, Memory, Problem, RefIssue, ScanResult
from ...refs import PointerField
from ..adapter import FormatAdapter, FormatInfo, PromoteOption
from ..files import (
    Listing,
    SkippedEntry,
    list_files,
    list_md,
    rel_posix,
    some_md,
    unlistable,
)
from ..linking import Changes, split_duplicates
from ..preview_model import PreviewRequest, PreviewSection
from ..privacy_model import TextField, frontmatter_text_fields
from . import detection
from .decay import (
    _THRESHOLDS_TEXT,
    DORMANT_THRESHOLD,
    VAULT_SCORE,
    _arithmetic,
    _decay_numbers,
    days_until_below,
    status_for_score,
)
from .episodes import _EPISODE_NAME_RE, _read_episode, _relink_episode
from .linking import (
    _EPISODE,
    _MEMORY,
    _STATE,
    _apply_state,
    _CognitiveLinkState,
    _link_relations,
    _order,
    _place,
    relink_files,
)
from .memories import _RawRelation, _read_memory
from .preview import core_preview
from .schema import (
    ARCHIVE_DIR,
    CORE_FILE,
    EPISODES_DIR,
    FORMAT_ID,
    GRAPH_DIR,
    INDEX_FILE,
    POINTER_FIELDS,
    REFLECTION_FILE,
    STATE_FILE,
    TYPE_DIRS,
    VAULT_DIR,
)
from .state import StateEntry, _EntryProblem, _parse_index, _parse_state


class CognitiveMemoryAdapter(FormatAdapter):
    """Reads cognitive-memory vaults and computes their decay score."""

    info: ClassVar[FormatInfo] = FormatInfo(
        id=FORMAT_ID,
        label="Cognitive memory",
        short_label="cognitive",
        # Every relation is expected on both ends (see core.graph.relations).
        two_way_relations=True,
        promote_note="retypes to insight and/or raises importance; the file stays where it is",
        promote_options=(
            PromoteOption("type", "insight", "insight, or blank to keep the type"),
            PromoteOption("importance", "", "0-1, only raises it", number=True),
        ),
        has_episodes=True,
        tracks_access=True,
        # The spec's text fields besides title and body (procedures' lists).
        text_fields=("context", "steps", "preconditions", "postconditions"),
    )
    pointer_fields: ClassVar[tuple[PointerField, ...]] = POINTER_FIELDS

    def detect(self, root: Path) -> bool:
        return detection.detect(root)

    # -- per-file scanning (see FormatAdapter) ------------------------------

    def files(self, root: Path) -> list[Path]:
        return [root / rel for rel in self.file_listing(root).names]

    def owns(self, root: Path, rel: str) -> bool:
        return _place(rel) is not None

    def file_rels(self, root: Path) -> list[str]:
        """`files` as vault-relative strings (a cheaper stat walk)."""
        return self.file_listing(root).names

    def first_files(self, root: Path, limit: int) -> list[str]:
        """Memory files of the graph's type folders and `vault/`, as `file_listing` lists them."""
        graph = (
            [] if unlistable(root, GRAPH_DIR) else [f"{GRAPH_DIR}/{d}" for d in TYPE_DIRS.values()]
        )
        return some_md(root, [*graph, VAULT_DIR], limit)

    def file_listing(self, root: Path) -> Listing:
        """Memory files, episodes and the two state files, and the entries
        left out (links out of the vault, pipes, ...)."""
        names: list[str] = []
        skipped: list[SkippedEntry] = []
        for area in (GRAPH_DIR, VAULT_DIR, ARCHIVE_DIR):
            refused = unlistable(root, area) if area != VAULT_DIR else None
            if refused is not None:
                skipped.append(refused)  # one problem for `graph/`, not one per type
                continue
            dirs = [f"{area}/{d}" for d in TYPE_DIRS.values()] if area != VAULT_DIR else [area]
            for folder in dirs:
                listing = list_md(root, folder)
                names.extend(f"{folder}/{n}" for n in listing.names)
                skipped.extend(listing.skipped)
        episodes = list_md(root, EPISODES_DIR)
        names.extend(f"{EPISODES_DIR}/{n}" for n in episodes.names if _EPISODE_NAME_RE.match(n))
        skipped.extend(
            s
            for s in episodes.skipped
            # (`episodes/` itself when it cannot be listed, or one episode file.)
            if s.rel == EPISODES_DIR or _EPISODE_NAME_RE.match(s.rel.rpartition("/")[2])
        )
        state = list_files(root, (STATE_FILE, INDEX_FILE))
        return Listing(names + state.names, skipped + state.skipped)

    def scan_file(self, root: Path, path: Path, data: bytes | None = None) -> FileScan:
        return self.scan_rel(root, rel_posix(root, path), data, path)

    def side_files(self, root: Path) -> list[str]:
        """The daily episode logs, CORE.md (made from memories' titles and lines) and
        REFLECTION.md (the agent's reflections): git-tracked markdown beside the memories."""
        episodes = list_md(root, EPISODES_DIR)
        logs = [f"{EPISODES_DIR}/{n}" for n in episodes.names if _EPISODE_NAME_RE.match(n)]
        return logs + list_files(root, (CORE_FILE, REFLECTION_FILE)).names

    def scan_rel(
        self, root: Path, rel: str, data: bytes | None = None, path: Path | None = None
    ) -> FileScan:
        """`scan_file` by vault-relative path (a Path is built only to read the file)."""
        place = _place(rel)
        if place is None:
            return FileScan(rel)
        kind, area, type_dir = place
        if kind == _MEMORY:
            # A memory file's data holds only its raw relations, when it has
            # some (link() reads the kind and relations with defaults).
            out = FileScan(rel, order=_order(rel, place))
            item = _read_memory(root, rel, area or GRAPH_DIR, type_dir, data, path)
            if isinstance(item, Problem):
                out.problems.append(item)
            else:
                out.memories.append(item.memory)
                if item.raw_relations:
                    out.data["raw_relations"] = item.raw_relations
            return out
        if path is None:
            path = root.joinpath(*rel.split("/"))
        out = FileScan(rel, order=_order(rel, place), data={"kind": kind})
        if kind == _EPISODE:
            # Links are pointed at memories by link(), which knows them all.
            entries, problem = _read_episode(root, path, {}, data)
            out.data["entries"] = entries
            if problem is not None:
                out.problems.append(problem)
        elif kind == _STATE:
            out.vault_wide = True  # access counts feed every memory's decay
            state, problem, entry_problems = _parse_state(root, path, data)
            out.data["state"] = state
            # Reported by link(), which knows which ids are orphans.
            out.data["entry_problems"] = entry_problems
            if problem is not None:
                out.problems.append(problem)
        else:
            index = _parse_index(path, data)
            out.data["index"] = [index] if index is not None else []
        return out

    def link(self, root: Path, scans: Mapping[str, FileScan]) -> ScanResult:
        result = ScanResult()
        state: dict[str, StateEntry] = {}
        state_problems: list[Problem] = []
        entry_problems: list[_EntryProblem] = []
        episode_files: list[FileScan] = []
        index: list[dict[str, Any]] = []
        parsed: list[Memory] = []
        raw_of: dict[int, list[_RawRelation]] = {}
        claimed: list[str] = []  # the id of each memory file, valid or not (counted below)
        for fs in scans.values():
            kind = fs.data.get("kind", _MEMORY)
            if kind == _MEMORY:
                for p in fs.problems:
                    result.problems.append(p)
                    if p.id is not None:
                        claimed.append(p.id)
                raws = fs.data.get("raw_relations", [])
                for m in fs.memories:
                    parsed.append(m)
                    claimed.append(m.id)
                    raw_of[id(m)] = raws
            elif kind == _STATE:
                state = fs.data.get("state", {})
                state_problems.extend(fs.problems)
                entry_problems = fs.data.get("entry_problems", [])
            elif kind == _EPISODE:
                episode_files.append(fs)
            else:
                index = fs.data.get("index", [])

        #: How many memory files claim each id (valid, duplicate or invalid).
        #: Counted at once: `Counter[key] += 1` runs a Python `__missing__` per new id.
        claims: Counter[str] = Counter(claimed)
        del claimed
        valid, dup_problems = split_duplicates(parsed, FORMAT_ID, root)
        result.problems.extend(dup_problems)
        result.problems.extend(state_problems)
        # Bad values of orphan entries are ignored, as the orphans themselves.
        result.problems.extend(p for mem_id, p in entry_problems if mem_id in claims)

        valid_ids = {m.id for m in valid}
        refs: dict[str, dict[int, Memory]] = {}
        issues: dict[str, RefIssue | None] = {}  # per target: many memories name the same
        for memory in valid:
            _apply_state(memory, state.get(memory.id))
            raw_relations = raw_of[id(memory)]
            for raw in raw_relations:
                holders = refs.get(raw.target)
                if holders is None:
                    holders = refs[raw.target] = ByIdentity()
                holders[id(memory)] = memory
            result.ref_problems.extend(
                _link_relations(root, memory, raw_relations, valid_ids, issues)
            )
        result.memories = valid

        valid_paths = {m.path: m.id for m in valid}
        episodes: list[dict[str, Any]] = []
        for fs in episode_files:
            result.problems.extend(fs.problems)
            for entry in fs.data.get("entries", []):
                _relink_episode(entry, valid_paths)
                episodes.append(entry)
        result.records["episodes"] = episodes
        result.records["state_orphans"] = [{"id": i} for i in state if i not in claims]
        # records holds lists; the whole parsed _index.json is its one item.
        result.records["index"] = list(index)
        result.link_state = _CognitiveLinkState(
            valid={m.id: m for m in valid},
            claims=claims,
            refs=refs,
            state=state,
            faulty_state={mem_id for mem_id, _p in entry_problems},
            valid_paths=valid_paths,
            episode_files=[fs.rel for fs in episode_files],
        )
        return result

    def relink(
        self, root: Path, scans: Mapping[str, FileScan], previous: ScanResult, changes: Changes
    ) -> ScanResult | None:
        return relink_files(root, scans, previous, changes)

    def decay_brief(self, memory: Memory, as_of: date) -> tuple[str, Health, float, float | None]:
        """(status, health, weight, score) of `decay`, without its explanation.

        What a search index needs for 100k memories; `decay` computes the
        same numbers through the same `_decay_numbers` (a test holds them equal).
        """
        numbers = _decay_numbers(memory, as_of)
        if numbers is None:
            return "active", Health.STABLE, 1.0, VAULT_SCORE
        _importance, _count, _last, _source, _days, score = numbers
        if memory.archived or memory.native.get("area") == ARCHIVE_DIR:
            return "archived", Health.ARCHIVED, 0.0, round(score, 4)
        status = status_for_score(score)
        health = Health.EXPIRED if status == "archived" else STATUS_HEALTH[status]
        return status, health, clamp01(score), round(score, 4)

    def decay(self, memory: Memory, as_of: date, *, explain: bool = True) -> DecayInfo:
        area = memory.native.get("area")
        numbers = _decay_numbers(memory, as_of)
        if numbers is None:
            return DecayInfo(
                status="active",
                health=Health.STABLE,
                strength=1.0,
                weight=1.0,
                score=VAULT_SCORE,
                why=(
                    "Pinned memory in vault/ → decay score 999.0 by definition "
                    "(effectively infinite) → active."
                    if explain
                    else ""
                ),
            )
        importance, access_count, last_day, origin, days, score = numbers
        status = status_for_score(score)
        arithmetic = (
            _arithmetic(memory, as_of, importance, access_count, last_day, origin, days, score)
            if explain
            else ""
        )

        if memory.archived or area == ARCHIVE_DIR:
            return DecayInfo(
                status="archived",
                health=Health.ARCHIVED,
                strength=clamp01(score),
                weight=0.0,
                score=round(score, 4),
                days_elapsed=days,
                why=f"Moved to archive/ → archived (score would be: {arithmetic})."
                if explain
                else "",
            )

        expires_on: date | None = None
        if status != "archived":
            below = days_until_below(importance, access_count, memory.kind)
            expires_on = last_day + timedelta(days=below)
        health = Health.EXPIRED if status == "archived" else STATUS_HEALTH[status]
        reasons = (
            (f"decay score {round(score, 4)} below {DORMANT_THRESHOLD}",)
            if status == "archived"
            else ()
        )
        return DecayInfo(
            status=status,
            health=health,
            strength=clamp01(score),
            weight=clamp01(score),
            score=round(score, 4),
            days_elapsed=days,
            expires_on=expires_on,
            why=f"{arithmetic} → {status} {_THRESHOLDS_TEXT}." if explain else "",
            archive_reasons=reasons,
        )

    def agent_preview(
        self, root: Path, result: ScanResult, request: PreviewRequest
    ) -> list[PreviewSection]:
        """CORE.md as regenerated at `as_of`, with its diff, budget and cuts (see `preview`)."""
        return core_preview(self, root, result.memories, request)

    def text_fields(self, memory: Memory, raw: str | None) -> list[TextField]:
        """Every frontmatter string (on its key's line) and the body (from its first line)."""
        return frontmatter_text_fields(memory, raw)
