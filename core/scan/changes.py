"""Domain changes between two scans of one vault.

`diff_results(old, new, ...)` says what happened to the memories and problems
of a vault between two `ScanResult`s, in the terms a reader cares about:

- `added` / `removed`: an id appeared / disappeared;
- `moved`: the same id now lives at another path (a rename, an archive move);
- `changed`: same id and path, different content (fields, body, relations,
  flags, native decay inputs);
- `problem` / `problem_cleared`: an invalid item or a flagged reference
  appeared (or its detail changed) / went away, keyed by where it is
  (path, line/index, reason).

`unknown` is never produced here: the watcher uses it for a file that cannot
be read for a moment (it is neither changed nor removed yet).

A memory's position (JSON Lines line, dream-cycle section number) is not
content: inserting a line above it does not report it as changed.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import NotFoundError
from ..model import Memory, Problem, ReferenceProblem, ScanResult

if TYPE_CHECKING:  # only for the annotation: search sits above scan (import contracts)
    from ..search.index import SearchIndex


class ChangeKind(StrEnum):
    ADDED = "added"
    CHANGED = "changed"
    MOVED = "moved"
    REMOVED = "removed"
    PROBLEM = "problem"
    PROBLEM_CLEARED = "problem_cleared"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Change:
    """One domain change in one vault.

    `path` is vault-relative (POSIX); `old_path` is set for `moved`.  `id` is
    the memory id (for problems: the id the invalid item claims, if any).
    `own` is True when the change is memlens's own write coming back from
    the file system (the app updates silently instead of announcing it).
    `memory` is the memory as it is now (added/changed/moved) or was
    (removed/unknown); `reason`/`detail` describe a problem.
    """

    kind: ChangeKind
    vault_root: Path
    format: str
    id: str | None
    path: str
    old_path: str | None = None
    own: bool = False
    reason: str | None = None
    detail: str | None = None
    line: int | None = None
    index: int | None = None
    memory: Memory | None = field(default=None, compare=False, repr=False)

    @property
    def key(self) -> tuple[str, str] | None:
        """(vault root, id) like `Memory.key`, for memory changes."""
        return None if self.id is None else (str(self.vault_root), self.id)

    @property
    def is_memory(self) -> bool:
        return self.kind in _MEMORY_KINDS


_MEMORY_KINDS = {
    ChangeKind.ADDED,
    ChangeKind.CHANGED,
    ChangeKind.MOVED,
    ChangeKind.REMOVED,
    ChangeKind.UNKNOWN,
}


def content_of(m: Memory) -> tuple[Any, ...]:
    """Everything that makes up what a memory says (not where it sits)."""
    return (
        m.kind,
        m.title,
        m.body,
        m.tags,
        m.importance,
        m.confidence,
        m.created,
        m.updated,
        m.source,
        m.relations,
        m.fields,
        m.extra,
        m.pinned,
        m.archived,
        m.tombstoned,
        m.native,
    )


def same_content(a: Memory, b: Memory) -> bool:
    if a is b:
        return True
    ca, cb = content_of(a), content_of(b)
    if ca == cb:
        return True
    # NaN never equals itself: fall back to the text form before calling it
    # a change, so a `.nan` in a file is not reported on every rescan.
    return repr(ca) == repr(cb)


def _by_id(memories: Iterable[Memory]) -> dict[str, list[Memory]]:
    out: dict[str, list[Memory]] = {}
    for m in memories:
        bucket = out.get(m.id)
        if bucket is None:
            out[m.id] = [m]
        else:
            bucket.append(m)
    return out


def _memory_change(kind: ChangeKind, m: Memory, old_path: str | None = None) -> Change:
    return Change(
        kind=kind,
        vault_root=m.vault_root,
        format=m.format,
        id=m.id,
        path=m.path,
        old_path=old_path,
        line=m.line,
        index=m.index,
        memory=m,
    )


def _pair(old: Memory, new: Memory) -> Change | None:
    if old is new:
        return None
    if old.path != new.path:
        return _memory_change(ChangeKind.MOVED, new, old_path=old.path)
    if same_content(old, new):
        return None
    return _memory_change(ChangeKind.CHANGED, new)


def diff_memories(old: Iterable[Memory], new: Iterable[Memory]) -> list[Change]:
    """Added, changed, moved and removed memories (ids matched within one vault).

    Only memories that are not the very same object in both lists need a
    look: a rescan keeps the objects of what it did not re-read, so for
    100k memories this costs a few C-level passes plus work on what changed.
    Normally an id occurs once per vault; where it occurs several times (an
    archived copy beside a live one), copies are matched by path first, then
    in order.
    """
    old_list = old if isinstance(old, list) else list(old)
    new_list = new if isinstance(new, list) else list(new)
    # Keyed by object identity: map/zip/dict run in C and never touch the
    # memories themselves (no attribute loads over 100k scattered objects).
    old_objs = dict(zip(map(id, old_list), old_list, strict=True))
    new_objs = dict(zip(map(id, new_list), new_list, strict=True))
    stale = [old_objs[k] for k in old_objs.keys() - new_objs.keys()]
    fresh = [new_objs[k] for k in new_objs.keys() - old_objs.keys()]
    if not stale and not fresh:
        return []
    stale.sort(key=_position)
    fresh.sort(key=_position)
    return _diff_repeated(_by_id(stale), _by_id(fresh))


def _position(m: Memory) -> tuple[str, int, int, str]:
    return (m.path, m.line or 0, m.index or 0, m.id)


def _diff_repeated(
    old_by: dict[str, list[Memory]], new_by: dict[str, list[Memory]]
) -> list[Change]:
    changes: list[Change] = []
    removed: list[Change] = []
    for mid, news in new_by.items():
        olds = old_by.get(mid)
        if olds is None:
            changes.extend(_memory_change(ChangeKind.ADDED, n) for n in news)
            continue
        if len(olds) == 1 and len(news) == 1:
            c = _pair(olds[0], news[0])
            if c is not None:
                changes.append(c)
            continue
        left = list(olds)
        unmatched: list[Memory] = []
        for n in news:
            hit = next((o for o in left if o.path == n.path), None)
            if hit is None:
                unmatched.append(n)
                continue
            left.remove(hit)
            c = _pair(hit, n)
            if c is not None:
                changes.append(c)
        for n in unmatched:
            if left:
                c = _pair(left.pop(0), n)
                if c is not None:
                    changes.append(c)
            else:
                changes.append(_memory_change(ChangeKind.ADDED, n))
        removed.extend(_memory_change(ChangeKind.REMOVED, o) for o in left)
    for mid, olds in old_by.items():
        if mid not in new_by:
            removed.extend(_memory_change(ChangeKind.REMOVED, o) for o in olds)
    return changes + removed


ProblemKey = tuple[Any, ...]


def problem_key(p: Problem | ReferenceProblem) -> ProblemKey:
    """Where a problem is: what identifies it across rescans."""
    if isinstance(p, Problem):
        return ("invalid", p.path, p.line, p.index, p.reason.value)
    return ("reference", p.path, p.id, p.field, p.ref, p.reason.value)


def _problem_change(kind: ChangeKind, p: Problem | ReferenceProblem) -> Change:
    if isinstance(p, Problem):
        return Change(
            kind=kind,
            vault_root=p.vault_root,
            format=p.format,
            id=p.id,
            path=p.path,
            reason=p.reason.value,
            detail=p.detail,
            line=p.line,
            index=p.index,
        )
    return Change(
        kind=kind,
        vault_root=p.vault_root,
        format=p.format,
        id=p.id,
        path=p.path,
        reason=p.reason.value,
        detail=f"{p.field} -> {p.ref}",
        line=p.line,
    )


def _group_problems(
    items: Iterable[Problem | ReferenceProblem],
) -> dict[ProblemKey, list[Problem | ReferenceProblem]]:
    out: dict[ProblemKey, list[Problem | ReferenceProblem]] = {}
    for p in items:
        out.setdefault(problem_key(p), []).append(p)
    return out


def _all_problems(result: ScanResult) -> Iterator[Problem | ReferenceProblem]:
    yield from result.problems
    yield from result.ref_problems


def diff_problems(old: ScanResult, new: ScanResult) -> list[Change]:
    """Problems that appeared (or whose detail changed) and problems cleared."""
    old_by = _group_problems(_all_problems(old))
    new_by = _group_problems(_all_problems(new))
    changes: list[Change] = []
    for key, news in new_by.items():
        olds = old_by.get(key)
        if olds is None:
            changes.extend(_problem_change(ChangeKind.PROBLEM, p) for p in news)
        elif olds != news:
            # Same place, different detail (or count): report what is there now.
            fresh = [p for p in news if p not in olds]
            changes.extend(_problem_change(ChangeKind.PROBLEM, p) for p in fresh or news)
    for key, olds in old_by.items():
        if key not in new_by:
            changes.extend(_problem_change(ChangeKind.PROBLEM_CLEARED, p) for p in olds)
    return changes


def diff_results(old: ScanResult, new: ScanResult, *, everything: bool = False) -> list[Change]:
    """Every domain change of one vault between two of its scans.

    A rescan keeps the objects of memories it did not re-read and updates
    their link-derived values (resolved references, state-file numbers) in
    place, so those updates cannot be seen by comparing.  After a vault-wide
    file changed (`Vault.last_rescan_vault_wide`), pass `everything=True`:
    every memory still there is then reported `changed`.
    """
    changes = diff_memories(old.memories, new.memories)
    if everything:
        told = {c.id for c in changes}
        before = {m.id for m in old.memories}
        changes += [
            _memory_change(ChangeKind.CHANGED, m)
            for m in new.memories
            if m.id in before and m.id not in told
        ]
    return changes + diff_problems(old, new)


def added_all(result: ScanResult) -> list[Change]:
    """A vault that just appeared: every memory added, every problem new."""
    return diff_results(ScanResult(), result)


def removed_all(result: ScanResult) -> list[Change]:
    """A vault that went away: every memory removed, every problem cleared."""
    return diff_results(result, ScanResult())


def apply_to_search(index: SearchIndex, changes: Iterable[Change]) -> int:
    """Bring a search index in step with changes, without a rebuild.

    Removed memories leave the index; added, changed and moved ones are
    (re)indexed from `change.memory`.  Problems and `unknown` notices do not
    touch it.  Returns how many memories were touched; check
    `index.needs_rebuild()` afterwards as after any incremental update.
    """
    changes = list(changes)
    touched = 0
    # Removals first: a batch that drops one copy of an id and adds another
    # must end with the id indexed.
    for c in changes:
        if c.kind is ChangeKind.REMOVED and c.key is not None:
            with contextlib.suppress(NotFoundError):
                index.remove(c.key)
            touched += 1
    for c in changes:
        if c.kind in _INDEXED and c.memory is not None:
            index.add(c.memory)  # replaces the memory with the same key
            touched += 1
    return touched


_INDEXED = {ChangeKind.ADDED, ChangeKind.CHANGED, ChangeKind.MOVED}


def vault_label(vault_root: Path, base: Path) -> str:
    """Vault root relative to `base` (`.` if it is `base`), as `list --json` has it."""
    try:
        rel = os.path.relpath(os.path.realpath(vault_root), os.path.realpath(base))
    except ValueError:
        return str(vault_root)
    if rel == ".." or rel.startswith(".." + os.sep):
        return str(vault_root)
    return Path(rel).as_posix()


def change_record(change: Change, base: Path) -> dict[str, Any]:
    """The `watch --json` record of one change.

    `change` is one of added|changed|moved|removed|problem (the CLI
    contract) or unknown; a problem that went away is a `problem` with
    `cleared: true`.
    """
    kind = change.kind
    rec: dict[str, Any] = {
        "change": ChangeKind.PROBLEM.value if kind is ChangeKind.PROBLEM_CLEARED else kind.value,
        "vault": vault_label(change.vault_root, base),
        "format": change.format,
        "id": change.id,
        "path": change.path,
    }
    if change.old_path is not None:
        rec["old_path"] = change.old_path
    if change.line is not None:
        rec["line"] = change.line
    if change.index is not None:
        rec["index"] = change.index
    if kind in (ChangeKind.PROBLEM, ChangeKind.PROBLEM_CLEARED):
        rec["reason"] = change.reason
        rec["detail"] = change.detail
        rec["cleared"] = kind is ChangeKind.PROBLEM_CLEARED
    if change.own:
        rec["own"] = True
    return rec
