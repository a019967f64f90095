"""Merge and supersede for experience records (the review queue's actions).

Raw records never change (specs/experience-record.md); every step appends:

- merge KEEP OTHER: OTHER's tags KEEP lacks go on KEEP as an `edit_v1` view
  (as `memlens set tags=...`); then one view with lens `merge_v1` applied
  to KEEP whose `provenance_braid` (a view's lineage) names KEEP and OTHER
  and whose `delta_from_raw.merged_from` lists OTHER; then OTHER is archived
  by a WAL tombstone op of reason `archived` (reversible, never an erasure).
- supersede NEW OLD: a `stance` (the spec's record for resolving
  conflicting claims) in stances.jsonl: candidates NEW (p 1.0) and OLD
  (p 0.0), method `manual_review`, decision claim = NEW's text, support
  [NEW], `supersedes` [OLD], residual uncertainty 0.0; then OLD is archived
  unless kept.

Times: the stance and view stamp `options.now` when given, else the
writer's clock; the archive op stamps the writer's clock as `memlens
archive` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...model import Memory
from ...write.journal import Plan
from ..curating import CurationOptions, Step, refreshed, union
from .adapter import ExperienceRecordAdapter
from .schema import STANCES, VIEWS
from .validation import stance_problem

if TYPE_CHECKING:
    from .writer import ExperienceRecordWriter

LENS_MERGE = "merge_v1"
STANCE_METHOD = "manual_review"


def merge_steps(
    w: ExperienceRecordWriter, keep: Memory, other: Memory, options: CurationOptions
) -> list[Step]:
    adapter = ExperienceRecordAdapter()
    tags = union(keep.tags, other.tags)
    steps: list[Step] = []
    had_tags = tags != list(keep.tags)
    if had_tags:
        steps.append((f"tags of {other.id} on {keep.id}", lambda: w.plan_set(keep, {"tags": tags})))

    def merge_view() -> Plan:
        state = w._current(refreshed(adapter, keep, check=not had_tags))
        ts = w._stamp(options.now)

        def build(vid: str) -> dict[str, Any]:
            return {
                "id": vid,
                "lens": LENS_MERGE,
                "applied_to": [keep.id],
                "delta_from_raw": {
                    "added": f"merged_from: {other.id}",
                    "removed": "",
                    "reweighted": [],
                    "merged_from": [other.id],
                },
                "provenance_braid": [keep.id, other.id],
            }

        view_id, change = w._view(state, "merge", ts, build)
        return Plan(
            "merge",
            keep.vault_root,
            [keep.id, other.id],
            f"merge: append view {view_id} (lens {LENS_MERGE}, braid {keep.id} + {other.id}) "
            f"to {VIEWS}",
            [change],
            reads=w._reads(state, [change]),
        )

    steps.append((f"merge view on {keep.id} naming {other.id}", merge_view))
    steps.append(
        (
            f"archive {other.id}",
            lambda: w.plan_archive(refreshed(adapter, other), f"merged into {keep.id}"),
        )
    )
    return steps


def supersede_steps(
    w: ExperienceRecordWriter, new: Memory, old: Memory, options: CurationOptions
) -> list[Step]:
    adapter = ExperienceRecordAdapter()

    def stance() -> Plan:
        state = w._current(new)
        w._current(old)  # the older one too must still be what the user saw
        store = w._read(new.vault_root, STANCES)
        ts = w._stamp(options.now)
        sid = w._new_id("stance", ts[:10], new.id, "supersede", store.ids())
        record = {
            "id": sid,
            "question": f"Which holds now: {new.id} or {old.id}?",
            "candidates": [
                {"exp": new.id, "claim": new.body, "p": 1.0},
                {"exp": old.id, "claim": old.body, "p": 0.0},
            ],
            "method": STANCE_METHOD,
            "decision": {
                "claim": new.body,
                "support": [new.id],
                "supersedes": [old.id],
                "residual_uncertainty": 0.0,
            },
            "created_at": ts,
        }
        change = w._append(store, record, stance_problem)
        return Plan(
            "supersede",
            new.vault_root,
            [new.id, old.id],
            f"supersede: append stance {sid} ({new.id} holds over {old.id}) to {STANCES}",
            [change],
            reads=w._reads(state, [change]),
        )

    steps: list[Step] = [(f"stance: {new.id} over {old.id}", stance)]
    if not options.keep_old:
        steps.append(
            (
                f"archive {old.id}",
                lambda: w.plan_archive(refreshed(adapter, old), f"superseded by {new.id}"),
            )
        )
    return steps
