"""Merge and supersede for Project Ocean observations (the review queue's actions).

- merge KEEP OTHER: KEEP gets OTHER's tags and backlinks it lacks (its own
  name left out) and `merged_from: [<OTHER file stem>]` (a list, extended on
  a later merge), as changed frontmatter lines only; then OTHER moves to its
  agent's `archive/` (as `memlens archive` does).
- supersede NEW OLD: NEW gets a backlink to OLD (the format's only link);
  OLD moves to its `archive/` unless the old one is kept (`keep_old`).  A
  backlink resolves in its own agent, then shared/: superseding another
  agent's observation is refused (it would dangle).

Backlinks and `merged_from` name a file stem (`obs-YYYY-MM-DD-NNN`), as
backlinks do; the writer's checks refuse anything else.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from ...errors import RefusedError
from ...model import Memory
from ..curating import CurationOptions, Step, as_list, refreshed, union
from .adapter import ProjectOceanAdapter

if TYPE_CHECKING:
    from .writer import ProjectOceanWriter


def _stem(m: Memory) -> str:
    return PurePosixPath(m.path).stem


def merge_steps(
    w: ProjectOceanWriter, keep: Memory, other: Memory, options: CurationOptions
) -> list[Step]:
    changes: dict[str, Any] = {}
    tags = union(as_list(keep.fields.get("tags")), as_list(other.fields.get("tags")))
    if tags != as_list(keep.fields.get("tags")):
        changes["tags"] = tags
    own = _stem(keep)
    links = union(
        as_list(keep.fields.get("backlinks")),
        [b for b in as_list(other.fields.get("backlinks")) if b != own],
    )
    if links != as_list(keep.fields.get("backlinks")):
        changes["backlinks"] = links
    changes["merged_from"] = union(as_list(keep.fields.get("merged_from")), [_stem(other)])
    adapter = ProjectOceanAdapter()
    return [
        (
            f"fold {other.id} into {keep.id} ({', '.join(changes)})",
            lambda: w.plan_set(keep, changes),
        ),
        (
            f"archive {other.id}",
            lambda: w.plan_archive(refreshed(adapter, other), f"merged into {keep.id}"),
        ),
    ]


def supersede_steps(
    w: ProjectOceanWriter, new: Memory, old: Memory, options: CurationOptions
) -> list[Step]:
    shared = old.native.get("area") == "shared" or old.native.get("shared")
    if not shared and old.native.get("agent") != new.native.get("agent"):
        raise RefusedError(
            f"supersede: {new.id} and {old.id} belong to different agents; a backlink "
            "resolves only in its own agent and shared/ (archive the old one instead)"
        )
    links = union(as_list(new.fields.get("backlinks")), [_stem(old)])
    steps: list[Step] = []
    if links != as_list(new.fields.get("backlinks")):
        steps.append(
            (f"backlink {new.id} -> {old.id}", lambda: w.plan_set(new, {"backlinks": links}))
        )
    if not options.keep_old:
        adapter = ProjectOceanAdapter()
        steps.append(
            (
                f"archive {old.id}",
                lambda: w.plan_archive(refreshed(adapter, old), f"superseded by {new.id}"),
            )
        )
    return steps
