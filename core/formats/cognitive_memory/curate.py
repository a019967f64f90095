"""Merge and supersede for cognitive memories (the review queue's actions).

- merge KEEP OTHER: KEEP gets OTHER's tags it lacks, OTHER's relations it
  lacks (same target and type; relations between the two are dropped) and
  `merged_from: [<OTHER id>]` (extended on a later merge); `updated` is
  bumped as every edit does.  Relations are written on both ends in this
  format, so each folded relation's target gets the twin (the opposite
  direction, same type, strength and context) pointing at KEEP.  Then OTHER
  moves to `archive/<type-dir>/`.
- supersede NEW OLD: the spec's relation types have no "supersedes"; the
  newer memory `BUILDS_ON` the older one (strength 1.0, context
  "supersedes <OLD id>"), written on both ends; then OLD moves to
  `archive/<type-dir>/` unless kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...errors import ConflictError
from ...model import Memory
from ...write.journal import Plan
from ..curating import CurationOptions, Step, as_list, refreshed, union
from .adapter import CognitiveMemoryAdapter

if TYPE_CHECKING:
    from .writer import CognitiveMemoryWriter

SUPERSEDE_TYPE = "BUILDS_ON"
_OPPOSITE = {"outgoing": "incoming", "incoming": "outgoing"}


def _relations(m: Memory) -> list[dict[str, Any]]:
    return [r for r in as_list(m.fields.get("relations")) if isinstance(r, dict)]


def _twin(rel: dict[str, Any], target: str) -> dict[str, Any]:
    twin = dict(rel)
    twin["target"] = target
    twin["direction"] = _OPPOSITE.get(str(rel.get("direction")), "incoming")
    return twin


def _relation_step(
    w: CognitiveMemoryWriter,
    options: CurationOptions,
    root: Any,
    target_id: str,
    rel: dict[str, Any],
    *,
    archived: bool = False,
) -> Step:
    """Add `rel` to the memory `target_id` as it is on disk when the step runs."""
    adapter = CognitiveMemoryAdapter()

    def plan() -> Plan:
        found = [
            m for m in adapter.scan(root).memories if m.id == target_id and m.archived == archived
        ]
        if len(found) != 1:
            raise ConflictError(f"{target_id}: not found once in the vault; relation not written")
        m = found[0]
        return w.plan_set(m, {"relations": [*_relations(m), rel]}, now=options.now)

    return (f"relation {rel.get('type')} on {target_id}", plan)


def merge_steps(
    w: CognitiveMemoryWriter, keep: Memory, other: Memory, options: CurationOptions
) -> list[Step]:
    changes: dict[str, Any] = {}
    tags = union(as_list(keep.fields.get("tags")), as_list(other.fields.get("tags")))
    if tags != as_list(keep.fields.get("tags")):
        changes["tags"] = tags
    have = {(r.get("target"), r.get("type")) for r in _relations(keep)}
    folded = [
        r
        for r in _relations(other)
        if r.get("target") not in (keep.id, other.id)
        and (r.get("target"), r.get("type")) not in have
    ]
    if folded:
        changes["relations"] = [*_relations(keep), *folded]
    changes["merged_from"] = union(as_list(keep.fields.get("merged_from")), [other.id])
    adapter = CognitiveMemoryAdapter()
    steps: list[Step] = [
        (f"fold {other.id} into {keep.id}", _set(w, keep, changes, options)),
    ]
    steps += [
        _relation_step(w, options, keep.vault_root, str(r["target"]), _twin(r, keep.id))
        for r in folded
    ]
    steps.append(
        (
            f"archive {other.id}",
            lambda: w.plan_archive(refreshed(adapter, other), f"merged into {keep.id}"),
        )
    )
    return steps


def _set(
    w: CognitiveMemoryWriter, m: Memory, changes: dict[str, Any], options: CurationOptions
) -> Callable[[], Plan]:
    return lambda: w.plan_set(m, changes, now=options.now)


def supersede_steps(
    w: CognitiveMemoryWriter, new: Memory, old: Memory, options: CurationOptions
) -> list[Step]:
    rel = {
        "target": old.id,
        "type": SUPERSEDE_TYPE,
        "direction": "outgoing",
        "strength": 1.0,
        "context": f"supersedes {old.id}",
    }
    adapter = CognitiveMemoryAdapter()
    steps: list[Step] = [
        (
            f"{new.id} {SUPERSEDE_TYPE} {old.id}",
            _set(w, new, {"relations": [*_relations(new), rel]}, options),
        ),
    ]
    if not options.keep_old:
        # Archive (a move) before writing the twin into the moved file: undo and
        # rollback revert ops last first, and a file written then moved in one
        # transaction could not be put back in that order.
        steps.append(
            (
                f"archive {old.id}",
                lambda: w.plan_archive(refreshed(adapter, old), f"superseded by {new.id}"),
            )
        )
    twin = _twin(rel, new.id)
    steps.append(
        _relation_step(w, options, old.vault_root, old.id, twin, archived=not options.keep_old)
    )
    return steps
