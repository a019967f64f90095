"""Merge and supersede for Dream Cycle sections (the review queue's actions).

Sections have no tags or links; what the format has is the `dc:` comment,
whose unknown fields are kept (specs/dream-cycle.md), so provenance is a
`dc:` note there (only that comment line is rewritten):

- merge KEEP OTHER: KEEP's comment gets `dc:merged_from=<OTHER id>` (ids
  joined by commas on a later merge); then OTHER's section moves to
  archive.jsonl with `archived_reason: merged into <KEEP id>`.
- supersede NEW OLD: NEW gets `dc:supersedes=<OLD id>`; OLD is archived with
  `archived_reason: superseded by <NEW id>` unless kept.  (The spec: a rule
  "can only be archived manually or when explicitly superseded".)

Both sections live in observations.md, so the archive step re-reads the
vault after the first step wrote it (`refreshed`, which also checks OTHER is
what the user saw).  An untagged KEEP gets a comment with the Phase 3
defaults, as `memlens set` gives it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...model import Memory
from ..curating import CurationOptions, Step, refreshed
from .adapter import DreamCycleAdapter

if TYPE_CHECKING:
    from .writer import DreamCycleWriter


def _joined(existing: object, new_id: str) -> str:
    ids = [i for i in str(existing).split(",") if i] if existing else []
    return ",".join([*ids, new_id] if new_id not in ids else ids)


def _note(m: Memory, key: str) -> object:
    return m.fields.get(key) or m.fields.get(key.removeprefix("dc:"))


def merge_steps(
    w: DreamCycleWriter, keep: Memory, other: Memory, options: CurationOptions
) -> list[Step]:
    value = _joined(_note(keep, "dc:merged_from"), other.id)
    adapter = DreamCycleAdapter()
    return [
        (
            f"dc:merged_from={other.id} on {keep.id}",
            lambda: w.plan_set(keep, {"dc:merged_from": value}),
        ),
        (
            f"archive {other.id}",
            lambda: w.plan_archive(
                refreshed(adapter, other), f"merged into {keep.id}", as_of=options.as_of
            ),
        ),
    ]


def supersede_steps(
    w: DreamCycleWriter, new: Memory, old: Memory, options: CurationOptions
) -> list[Step]:
    value = _joined(_note(new, "dc:supersedes"), old.id)
    adapter = DreamCycleAdapter()
    steps: list[Step] = [
        (f"dc:supersedes={old.id} on {new.id}", lambda: w.plan_set(new, {"dc:supersedes": value}))
    ]
    if not options.keep_old:
        steps.append(
            (
                f"archive {old.id}",
                lambda: w.plan_archive(
                    refreshed(adapter, old), f"superseded by {new.id}", as_of=options.as_of
                ),
            )
        )
    return steps
