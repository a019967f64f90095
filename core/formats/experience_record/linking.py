"""Linking: the lattice check, references resolved and flagged, and `relink` of
experiences appended to `experiences.jsonl`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ...model import (
    FileScan,
    LinkState,
    Memory,
    Problem,
    Reason,
    ReferenceProblem,
    RefIssue,
    Relation,
    ScanResult,
)
from ...refs import PointerKind, pointer_values, reference_issue
from ..linking import Changes
from .records import _build_memory, _Scan
from .schema import (
    _RAW_ONLY,
    _STANCE_LINKS,
    _VIEW_LINKS,
    EXPERIENCES,
    FORMAT_ID,
    LATTICE,
    STANCES,
    TYPE_RANK,
    VIEWS,
    WAL,
)
from .validation import _is_str_list


def _parents_of(m: Memory) -> list[str]:
    """The parents the lattice check reads (an erased record keeps them aside)."""
    parents = m.fields.get("parents") if not m.tombstoned else m.native.get("_parents")
    return parents or []


def _lattice_split(
    scan: _Scan, memories: list[Memory], rank: dict[str, int] | None = None
) -> list[Memory]:
    """Drop (and report) records derived from a higher-lattice parent.

    `rank` (id -> lattice rank of every unique experience) defaults to the
    ranks of `memories`; a relink passes the vault's, new records included.
    """
    if rank is None:
        rank = {m.id: TYPE_RANK[m.kind] for m in memories}
    keep: list[Memory] = []
    for m in memories:
        parents = m.fields.get("parents") if not m.tombstoned else m.native.get("_parents")
        if not parents:
            keep.append(m)
            continue
        own = rank[m.id]
        higher: list[str] = []
        for ref in parents:
            if ref in rank and rank[ref] > own and ref not in higher:
                higher.append(ref)
        if not higher:
            keep.append(m)
            continue
        names = ", ".join(f"{ref} ({LATTICE[rank[ref]]})" for ref in higher)
        scan.problem(
            EXPERIENCES,
            m.line or 0,
            Reason.LATTICE_VIOLATION,
            f"{m.kind} derives from higher-lattice parent(s) {names}",
            id=m.id,
            title=m.title,
        )
    return keep


class _Erased:
    """The ids the WAL erased, as a container for `reference_issue`."""

    def __init__(self, scan: _Scan) -> None:
        self.scan = scan

    def __contains__(self, ref: object) -> bool:
        return isinstance(ref, str) and self.scan.erased(ref)


def _ref_issue(
    scan: _Scan, ref: str, valid: set[str], *, flag_erased: bool = True
) -> RefIssue | None:
    issue = reference_issue(ref, valid, erased=_Erased(scan))
    if issue is RefIssue.TOMBSTONED and not flag_erased:
        return None  # lineage outlives an erasure (see References above)
    return issue


def _flag(
    scan: _Scan, rel: str, owner: str, line: int | None, fld: str, ref: str, issue: RefIssue
) -> None:
    scan.result.ref_problems.append(
        ReferenceProblem(
            format=FORMAT_ID,
            vault_root=scan.root,
            path=rel,
            id=owner,
            field=fld,
            ref=ref,
            reason=issue,
            line=line,
        )
    )


def _check_memory_refs(
    scan: _Scan, memories: list[Memory], valid: set[str] | None = None
) -> list[Memory]:
    """Flag broken links and fill each Relation's `resolved`.

    `valid` (the ids of every valid experience) defaults to those of `memories`.
    """
    if valid is None:
        valid = {m.id for m in memories}
    out: list[Memory] = []
    for m in memories:
        seen: set[tuple[str, str]] = set()
        rels: list[Relation] = []
        changed = False
        for r in m.relations:
            issue = _ref_issue(scan, r.target, valid)
            if issue is not None and (r.field, r.target) not in seen:
                seen.add((r.field, r.target))
                _flag(scan, EXPERIENCES, m.id, m.line, r.field, r.target, issue)
            resolved = r.target if issue is None or issue is RefIssue.TOMBSTONED else None
            if r.resolved != resolved:
                changed = True
                r = Relation(target=r.target, type=r.type, field=r.field, resolved=resolved)
            rels.append(r)
        if changed:
            # Relinking after one file changed rebuilds only what changed.
            m.relations = tuple(rels)
        trace = None if m.tombstoned else m.fields.get("trace_ref")
        if isinstance(trace, str):
            issue = reference_issue(trace, (), kind=PointerKind.EXTERNAL)
            if issue is not None:
                _flag(scan, EXPERIENCES, m.id, m.line, "trace_ref", trace, issue)
        out.append(m)
    return out


def _record_links(record: dict[str, Any], kind: str) -> list[tuple[str, str, str]]:
    """(field, edge type, target) for every id a view or stance names."""
    fields = _VIEW_LINKS if kind == "views" else _STANCE_LINKS
    return [(fld, etype, t) for fld, etype in fields for t in pointer_values(record, fld)]


def _check_record_refs(
    scan: _Scan, kind: str, records: list[dict[str, Any]], exp_ids: set[str], any_ids: set[str]
) -> None:
    rel = VIEWS if kind == "views" else STANCES
    edges = scan.result.records.setdefault("edges", [])
    for record in records:
        seen: set[tuple[str, str]] = set()
        for fld, etype, target in _record_links(record, kind):
            # Raw-only fields must name an experience; lineage/support may
            # also name views and stances.
            valid = exp_ids if fld in _RAW_ONLY else any_ids
            issue = _ref_issue(scan, target, valid, flag_erased=fld != "provenance_braid")
            edges.append(
                {
                    "source": record["id"],
                    "target": target,
                    "type": etype,
                    "field": fld,
                    "issue": issue.value if issue is not None else None,
                }
            )
            if issue is not None and (fld, target) not in seen:
                seen.add((fld, target))
                _flag(scan, rel, record["id"], record["_line"], fld, target, issue)


@dataclass(slots=True)
class _ExperienceLinkState(LinkState):
    """What `link` leaves for `relink` (valid only for the newest result).

    `rank`: lattice rank of every unique experience id; `valid`: ids of the
    experiences kept; `dup_ids`: ids used more than once; `n_exp` /
    `n_refs`: how many problems / reference problems belong to experiences
    (the view-store ones follow); `named`: every id anything names (filled
    on the first relink).
    """

    rank: dict[str, int]
    valid: set[str]
    dup_ids: set[str]
    n_exp: int
    n_refs: int
    named: set[str] | None = None


def _named_ids(
    memories: list[Memory], views: list[dict[str, Any]], stances: list[dict[str, Any]]
) -> set[str]:
    """Every id the experiences (parents, evidence), views and stances name.

    `memories` are the records as read (before the WAL erased any of them),
    so their relations list every parent and evidence pointer.
    """
    named = {r.target for m in memories for r in m.relations}
    for kind, records in (("views", views), ("stances", stances)):
        for record in records:
            named.update(target for _f, _t, target in _record_links(record, kind))
    return named


def relink_appended(
    root: Path, scans: Mapping[str, FileScan], previous: ScanResult, changes: Changes
) -> ScanResult | None:
    """`link` after lines were appended to `experiences.jsonl`, in O(lines appended).

    The records read before keep their place and objects; the new ones
    are checked against the vault's tables (ids, lattice ranks, valid
    ids), their references resolved, and their problems put where a full
    link sorts them.  A new id that is already used, or that anything
    already names (a parent, an evidence pointer, a view or a stance),
    would change records read before: None, link in full.  So does any
    other change.  `previous` gives up its link state either way.
    """
    state = previous.link_state
    previous.link_state = None
    if not isinstance(state, _ExperienceLinkState) or set(changes) != {EXPERIENCES}:
        return None
    before, after = changes[EXPERIENCES]
    if before is None or after is None:
        return None
    n_mem, n_prob = len(before.memories), len(before.problems)
    if after.data.get("appended") != (n_mem, n_prob) or (
        n_mem and after.memories[n_mem - 1] is not before.memories[n_mem - 1]
    ):
        return None
    if len(previous.problems) < state.n_exp or len(previous.ref_problems) < state.n_refs:
        return None
    empty = FileScan("")
    wal = scans.get(WAL, empty)
    views_fs = scans.get(VIEWS, empty)
    stances_fs = scans.get(STANCES, empty)
    scan = _Scan(root=root)
    scan.states = wal.data.get("states", {})
    scan.pinned_by = views_fs.data.get("pinned_by", {})
    scan.edits = views_fs.data.get("edits", {})
    scan.edited_by = views_fs.data.get("edited_by", {})

    fresh = after.memories[n_mem:]
    ids = [m.id for m in fresh]
    if len(set(ids)) != len(ids):
        return None
    if any(i in state.rank or i in state.dup_ids for i in ids):
        return None
    named = _named_before(state, before, views_fs, stances_fs)
    if any(i in named for i in ids):
        return None
    added = _link_appended(scan, state, fresh, named)
    return _appended_result(previous, state, scan, added, after.problems[n_prob:])


def _named_before(
    state: _ExperienceLinkState, before: FileScan, views_fs: FileScan, stances_fs: FileScan
) -> set[str]:
    """Every id named before the append (computed on the first relink, then kept up)."""
    if state.named is None:
        state.named = _named_ids(
            before.memories,
            views_fs.data.get("records", []),
            stances_fs.data.get("records", []),
        )
    return state.named


def _link_appended(
    scan: _Scan, state: _ExperienceLinkState, fresh: list[Memory], named: set[str]
) -> list[Memory]:
    """The appended experiences linked against the vault's tables (which they join)."""
    touched = scan.states.keys() | scan.pinned_by.keys() | scan.edited_by.keys()
    candidates: list[Memory] = []
    for pre in fresh:
        memory = pre
        if pre.id in touched:
            memory = _build_memory(scan, pre.fields, pre.line or 0)
            if memory.tombstoned:
                parents = pre.fields.get("parents")
                memory.native["_parents"] = list(parents) if _is_str_list(parents) else []
        candidates.append(memory)
        state.rank[memory.id] = TYPE_RANK[memory.kind]
        named.update(_parents_of(memory))
        named.update(r.target for r in pre.relations)
    kept = _lattice_split(scan, candidates, state.rank)
    for m in kept:
        if m.tombstoned:
            m.native.pop("_parents", None)
    state.valid.update(m.id for m in kept)
    return _check_memory_refs(scan, kept, state.valid)


def _appended_result(
    previous: ScanResult,
    state: _ExperienceLinkState,
    scan: _Scan,
    added: list[Memory],
    new_problems: list[Problem],
) -> ScanResult:
    """`previous` with the appended memories, problems and reference problems put in place."""
    problems: list[Problem] = list(scan.result.problems)  # lattice violations
    for problem in new_problems:
        if problem.title is not None and problem.id is not None and scan.erased(problem.id):
            problem = replace(problem, title=None)
        problems.append(problem)
    # Appended lines come after every line read before: only they need sorting.
    problems.sort(key=lambda p: p.line or 0)
    refs = scan.result.ref_problems

    result = ScanResult(
        memories=[*previous.memories, *added],
        problems=[
            *previous.problems[: state.n_exp],
            *problems,
            *previous.problems[state.n_exp :],
        ],
        ref_problems=[
            *previous.ref_problems[: state.n_refs],
            *refs,
            *previous.ref_problems[state.n_refs :],
        ],
        records=dict(previous.records),
    )
    state.n_exp += len(problems)
    state.n_refs += len(refs)
    result.link_state = state
    return result
