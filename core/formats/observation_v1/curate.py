"""Merge and supersede for observation/v1 documents (the review queue's actions).

The spec allows extra fields and keeps them, so provenance is written as
extra frontmatter fields (changed lines only):

- merge KEEP OTHER: KEEP gets `merged_from: [<OTHER id>]` (extended on a
  later merge) and, when either has a `tags` or `labels` list, the union;
  `context` keys KEEP lacks are added from OTHER (`context.<key>`, one level,
  as `memlens set` does); then OTHER moves to `archive/observations/`.
- supersede NEW OLD: NEW gets `supersedes: [<OLD id>]`; OLD moves to
  `archive/observations/` unless kept.  (The spec has no supersede field;
  an observation is an event, so "which holds now" is recorded on the newer
  one, and the older stays readable in the archive.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...model import Memory
from ..curating import CurationOptions, Step, as_list, refreshed, union
from .adapter import ObservationV1Adapter

if TYPE_CHECKING:
    from .writer import ObservationV1Writer


def merge_steps(
    w: ObservationV1Writer, keep: Memory, other: Memory, options: CurationOptions
) -> list[Step]:
    changes: dict[str, Any] = {}
    for name in ("tags", "labels"):
        mine, theirs = keep.fields.get(name), other.fields.get(name)
        if isinstance(theirs, list) and (mine is None or isinstance(mine, list)):
            merged = union(as_list(mine), theirs)
            if merged != as_list(mine):
                changes[name] = merged
    ctx_keep, ctx_other = keep.fields.get("context"), other.fields.get("context")
    if isinstance(ctx_other, dict) and (ctx_keep is None or isinstance(ctx_keep, dict)):
        for key, value in ctx_other.items():
            if isinstance(key, str) and key not in (ctx_keep or {}) and "." not in key:
                changes[f"context.{key}"] = value
    changes["merged_from"] = union(as_list(keep.fields.get("merged_from")), [other.id])
    adapter = ObservationV1Adapter()
    return [
        (f"fold {other.id} into {keep.id}", lambda: w.plan_set(keep, changes)),
        (
            f"archive {other.id}",
            lambda: w.plan_archive(refreshed(adapter, other), f"merged into {keep.id}"),
        ),
    ]


def supersede_steps(
    w: ObservationV1Writer, new: Memory, old: Memory, options: CurationOptions
) -> list[Step]:
    marks = union(as_list(new.fields.get("supersedes")), [old.id])
    steps: list[Step] = []
    if marks != as_list(new.fields.get("supersedes")):
        steps.append(
            (f"{new.id} supersedes {old.id}", lambda: w.plan_set(new, {"supersedes": marks}))
        )
    if not options.keep_old:
        adapter = ObservationV1Adapter()
        steps.append(
            (
                f"archive {old.id}",
                lambda: w.plan_archive(refreshed(adapter, old), f"superseded by {new.id}"),
            )
        )
    return steps
