"""Linking: scan order, relations resolved against the valid memories, access state
applied, and `relink` of a few changed memory files.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Container, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...identity import ByIdentity
from ...model import (
    FileScan,
    LinkState,
    Memory,
    ReferenceProblem,
    RefIssue,
    Relation,
    ScanResult,
)
from ...refs import reference_issue
from ...text.dates import iso
from ..linking import Changes, one_memory_files, relinked
from .episodes import _EPISODE_NAME_RE, _relink_episode
from .memories import _RawRelation
from .schema import (
    ARCHIVE_DIR,
    DIR_TYPES,
    EPISODES_DIR,
    FORMAT_ID,
    GRAPH_DIR,
    INDEX_FILE,
    STATE_FILE,
    TYPE_DIRS,
    VAULT_DIR,
)
from .state import StateEntry

#: FileScan.data["kind"] values, which also order the files in a scan.
_MEMORY, _EPISODE, _STATE, _INDEX = 0, 1, 2, 3
_TYPE_DIR_RANK: dict[str, int] = {d: i for i, d in enumerate(TYPE_DIRS.values())}
_AREA_RANK: dict[str, int] = {GRAPH_DIR: 0, VAULT_DIR: 1, ARCHIVE_DIR: 2}


@dataclass(slots=True)
class _CognitiveLinkState(LinkState):
    """What `link` leaves for `relink` (valid only for the newest result).

    `valid`: the kept memories by id; `claims`: how many memory files claim
    each id; `refs`: who points at each target id; `state`: the parsed
    `_state.json`; `faulty_state`: ids with a bad state entry;
    `valid_paths`: path -> id of the kept memories; `episode_files`: rels.
    """

    valid: dict[str, Memory]
    claims: Counter[str]
    refs: dict[str, dict[int, Memory]]
    state: dict[str, StateEntry]
    faulty_state: set[str]
    valid_paths: dict[str, str]
    episode_files: list[str]


def _place(rel: str) -> tuple[int, str | None, str | None] | None:
    """(kind, area, type dir) of a vault file scan() reads, from its path alone."""
    parts = rel.split("/")
    if any(p.startswith(".") for p in parts):
        return None
    if len(parts) == 1:
        if rel == STATE_FILE:
            return _STATE, None, None
        if rel == INDEX_FILE:
            return _INDEX, None, None
        return None
    if not parts[-1].endswith(".md"):
        return None
    if len(parts) == 2:
        if parts[0] == VAULT_DIR:
            return _MEMORY, VAULT_DIR, None
        if parts[0] == EPISODES_DIR and _EPISODE_NAME_RE.match(parts[1]):
            return _EPISODE, None, None
        return None
    if len(parts) == 3 and parts[0] in (GRAPH_DIR, ARCHIVE_DIR) and parts[1] in DIR_TYPES:
        # The shared constants, not the path's copies (every memory keeps them).
        area = GRAPH_DIR if parts[0] == GRAPH_DIR else ARCHIVE_DIR
        return _MEMORY, area, TYPE_DIRS[DIR_TYPES[parts[1]]]
    return None


def _order(rel: str, place: tuple[int, str | None, str | None]) -> tuple[int, int, int, str]:
    kind, area, type_dir = place
    if kind != _MEMORY:
        return (kind, 0, 0, rel)
    area_rank = _AREA_RANK[area or GRAPH_DIR]
    dir_rank = _TYPE_DIR_RANK[type_dir] if type_dir is not None else 0
    # Within one folder the relative path orders as the file name does.
    return (kind, area_rank, dir_rank, rel)


def _raw_of(scans: Mapping[str, FileScan], changes: Changes, memory: Memory) -> list[_RawRelation]:
    """The raw relations read with `memory` (from its file's scan, old or new)."""
    for fs in (*changes.get(memory.path, (None, None)), scans.get(memory.path)):
        if fs is not None and fs.memories and fs.memories[0] is memory:
            raw: list[_RawRelation] = fs.data.get("raw_relations", [])
            return raw
    return []


def _link_relations(
    root: Path,
    memory: Memory,
    raw_relations: list[_RawRelation],
    valid: Container[str],
    issues: dict[str, RefIssue | None],
) -> list[ReferenceProblem]:
    """Resolve a memory's relations in place against the valid ids; its broken ones.

    `issues`: each target's issue as found so far against the same `valid`.
    """
    problems: list[ReferenceProblem] = []
    resolved_all: list[str | None] = []
    for raw in raw_relations:
        target = raw.target
        if target in issues:
            issue = issues[target]
        else:
            issue = issues[target] = reference_issue(target, valid)
        resolved = raw.target if issue is None else None
        resolved_all.append(resolved)
        if issue is not None:
            problems.append(
                ReferenceProblem(
                    format=FORMAT_ID,
                    vault_root=root,
                    path=memory.path,
                    id=memory.id,
                    field="relations.target",
                    ref=raw.target,
                    reason=issue,
                )
            )
    current = memory.relations
    if len(current) == len(raw_relations) and all(
        r.resolved == res for r, res in zip(current, resolved_all, strict=True)
    ):
        return problems  # linked before with the same outcome: keep the objects
    memory.relations = tuple(
        Relation(
            target=raw.target,
            type=raw.type,
            field="relations",
            resolved=resolved,
            direction=raw.direction,
            strength=raw.strength,
            context=raw.context,
        )
        for raw, resolved in zip(raw_relations, resolved_all, strict=True)
    )
    return problems


def _apply_state(memory: Memory, entry: StateEntry | None) -> None:
    """Access counts from `_state.json` (or the defaults of a memory it does not list)."""
    native = memory.native
    if entry is None:
        if native.get("has_state"):
            native.update(
                access_count=0, last_accessed=None, has_state=False, stored_decay_score=None
            )
        return
    native.update(
        access_count=entry.access_count,
        last_accessed=iso(entry.last_accessed),
        has_state=True,
        stored_decay_score=entry.decay_score,
    )


def relink_files(
    root: Path, scans: Mapping[str, FileScan], previous: ScanResult, changes: Changes
) -> ScanResult | None:
    """`link` after a few memory files changed, touching only what they affect.

    Handles memory files holding one valid memory before and after
    (edits, additions, removals, moves) whose ids no other file claims;
    state, episode and index files, problems and duplicates fall back to
    a full link (None).  Relations of other memories are re-resolved only
    when they point at an id that appeared or disappeared.
    """
    st = previous.link_state
    split = one_memory_files(changes)
    if not isinstance(st, _CognitiveLinkState) or split is None:
        return None
    valid, claims, refs = st.valid, st.claims, st.refs
    gone, new = split
    delta = _claims_delta(st, changes, gone, new, valid, claims)
    if delta is None:
        return None

    # From here on the tables move to the new result.
    state, valid_paths = st.state, st.valid_paths
    for mem_id, d in delta.items():
        claims[mem_id] += d
        if claims[mem_id] <= 0:
            del claims[mem_id]
    for m in gone:
        del valid[m.id]
        valid_paths.pop(m.path, None)
        for raw in _raw_of(scans, changes, m):
            holders = refs.get(raw.target)
            if holders is not None:
                holders.pop(id(m), None)
                if not holders:
                    del refs[raw.target]
    for m in new:
        valid[m.id] = m
        valid_paths[m.path] = m.id
    appeared_or_gone = {k for k, d in delta.items() if d != 0}

    def order(x: Memory | ReferenceProblem) -> tuple[Any, ...]:
        return scans[x.path].order

    owners: dict[int, Memory] = {id(m): m for m in new}
    for mem_id in appeared_or_gone:
        owners.update(refs.get(mem_id, {}))
    ref_problems: list[ReferenceProblem] = []
    issues: dict[str, RefIssue | None] = {}
    fresh = {id(m) for m in new}
    for memory in sorted(owners.values(), key=order):
        raw_relations = _raw_of(scans, changes, memory)
        if id(memory) in fresh:
            _apply_state(memory, state.get(memory.id))
            for raw in raw_relations:
                refs.setdefault(raw.target, ByIdentity())[id(memory)] = memory
        ref_problems.extend(_link_relations(root, memory, raw_relations, valid, issues))
    dropped = {id(m) for m in gone}
    owner_ids = {m.id for m in owners.values()} | {m.id for m in gone}
    records = dict(previous.records)
    paths_changed = {m.path for m in gone} != {m.path for m in new} or bool(appeared_or_gone)
    if paths_changed:
        for rel in st.episode_files:
            fs = scans.get(rel)
            for entry in fs.data.get("entries", []) if fs is not None else []:
                _relink_episode(entry, valid_paths)
    if appeared_or_gone:
        records["state_orphans"] = [{"id": i} for i in state if i not in claims]
    return relinked(previous, dropped, new, owner_ids, ref_problems, order, st, records)


def _claims_delta(
    st: _CognitiveLinkState,
    changes: Changes,
    gone: list[Memory],
    new: list[Memory],
    valid: dict[str, Memory],
    claims: Counter[str],
) -> Counter[str] | None:
    """How many more files claim each id after `changes`; None when a relink cannot hold."""
    for before, after in changes.values():
        for fs in (before, after):
            if fs is not None and fs.data.get("kind", _MEMORY) != _MEMORY:
                return None  # state, episodes, index: relink in full
    delta: Counter[str] = Counter()
    for m in gone:
        delta[m.id] -= 1
    for m in new:
        delta[m.id] += 1
    for mem_id, d in delta.items():
        before_n = claims[mem_id]
        gone_n = sum(1 for m in gone if m.id == mem_id)
        if before_n != gone_n or before_n + d > 1:
            return None  # another file claims this id: duplicates may change
    for m in gone:
        if valid.get(m.id) is not m:
            return None
    if any(d and mem_id in st.faulty_state for mem_id, d in delta.items()):
        return None  # an id with a bad _state.json entry (dis)appeared: its problem too
    return delta
