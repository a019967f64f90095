"""The experience-record format: JSON Lines raw and view stores.

Layout (fixtures/experience-records/FORMAT.md): a vault root holds
`experiences.jsonl` (the raw store of `experience` records, append-only),
`wal.jsonl` (`wal_entry` records: `{"wal_id", "ops": [...]}`), and the view
store `views.jsonl` and `stances.jsonl`.  Only experiences are memories; views,
stances and WAL entries are kept as plain records in `ScanResult.records`.

Reading
    One JSON object per line, UTF-8 decoded strictly line by line (a bad line
    is an `encoding` problem for that line only).  A BOM at the start of a
    file and CRLF endings are accepted; blank lines are ignored; a line that
    is not one JSON object is `malformed_json` ("JSON error: <msg> (col N)").
    A JSON string with an unpaired surrogate escape (`"\\ud800"`) is valid
    JSON but not text: it is reported as `encoding` so no front end has to
    print it.

Experiences
    Need `id`, `type` (the lattice occurrence ⊑ observation ⊑ inference ⊑
    reconciliation), `created_at` (ISO 8601) and `content.text`; when present,
    `confidence.p` must be a number in [0, 1], `affect.vad` v and d in
    [-1, 1] and a in [0, 1], `parents` / `evidence_ptrs` lists of strings.
    One problem per line (the first rule it breaks).  Ids used by more than
    one valid line are `duplicate_id` on every copy.  A record whose `parents`
    name a valid experience of a higher lattice rank is a `lattice_violation`
    (lineage only derives upward); it is checked once against the valid set,
    so a violator's children are not themselves re-checked.

WAL (applied in file order, ops in list order)
    * `{"op": "tombstone", "target": "exp", "id": X, "reason": R}` with
      R == "archived" archives X (memlens's archive action appends this):
      status `archived`, content still shown.
    * The same op with any other reason (e.g. `gdpr_erasure`) or no reason
      erases X: status `tombstoned`; the Memory keeps only id, type,
      created_at and the tombstone info (title `[tombstoned: R]`, empty body,
      no fields, tags, relations, confidence or source).  Erasure is final.
    * `{"op": "restore", "target": "exp", "id": X}` (memlens's restore action
      appends this, see `restore_op`) reverses an earlier *archived*
      tombstone of X.  It never undoes an erasure: that content is gone.
    * Other ops (`append`, ...) do not change state.
    Well-formed ops are applied even from a WAL entry that is itself reported
    invalid (say, one op is not an object): an erasure must never be skipped
    because a neighbouring op is broken.

Views and pins
    A view with lens `pin` pins every id in its `applied_to`; a later view (in
    file order) with lens `unpin` applied to the same id supersedes it, and a
    still later `pin` pins it again.  Raw records are never rewritten.

Metadata edits (memlens's `set` action)
    A view with lens `edit_v1` carries `delta_from_raw.fields`, a mapping of
    edited metadata (`EDITABLE_FIELDS`: `tags`, `confidence.p`, `note`) to the
    new values; `null` drops the override so the raw value shows again.  Edit
    views apply in file order, later ones winning per field, to every id in
    `applied_to`.  The Memory shows the edited `tags` and `confidence`, keeps
    the raw record untouched in `fields`, and lists the active overrides in
    `native["edits"]` (`native["note"]` for a note) and the edit views in
    `native["edited_by"]`.  An edit view whose `fields` is not an object, or
    holds a bad value for an editable field, is an invalid view (unknown
    field names are kept but not applied).  Erased experiences ignore edits.

References
    `POINTER_FIELDS` lists them; `core.refs` decides each value.
    Experiences: `parents` (type `derived_from`) and `evidence_ptrs` (type
    `evidence`; URIs such as `uri:...`, `urn:...` or any `scheme://...` are
    not ids and are never resolved, but a `file:` URI is a path and unsafe).
    Views: `applied_to`, `provenance_braid`, `delta_from_raw.reweighted[].exp`;
    stances: `candidates[].exp`, `decision.support`.  Path syntax ->
    `unsafe_reference` (never resolved); an id erased by the WAL ->
    `references_tombstoned`; an id not among valid experiences ->
    `dangling_reference`.  An experience's `trace_ref` (not in the spec, but
    observation/v1's trace pointer) is only checked for path syntax.  WAL
    ops name the raw lines they append or erase: they are the store's own
    bookkeeping, not links, and are not checked.  `provenance_braid` and
    `decision.support` may also name views and stances.  A provenance braid is
    lineage history, which by design outlives an erasure, so a braid entry
    naming an erased id is not flagged (its `applied_to` twin is).  Links of
    an erased experience are erased with it and not checked.  The links of
    views and stances are also listed in `records["edges"]` as
    `{source, target, type, field, issue}` for the graph module.

Decay
    None: raw experiences are immutable and stay `live` until the WAL names
    them; status `live` / `archived` / `tombstoned`, strength and weight 1.0
    for live and 0.0 otherwise.

Rescans
    Lines appended to `experiences.jsonl` are parsed alone (`scan_appended`)
    and checked against the previous link's tables (`relink`); anything else
    links in full.

An empty (zero-byte) JSON Lines file is an empty store, not a problem.  A
file that exists but cannot be read at all is reported as `encoding` on line 1.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, ClassVar

from ...health import STATUS_HEALTH
from ...model import DecayInfo, FileScan, Health, Memory, ScanResult
from ...refs import PointerField
from ...safe_io import read_regular
from ...text.dates import days_between
from ..adapter import FormatAdapter, FormatInfo, HistoryScope, PromoteOption
from ..files import Listing, list_files
from ..history_parts import record_line, record_scope
from ..linking import Changes, split_duplicates
from ..preview_model import PreviewRequest, PreviewSection
from ..privacy_model import TextField, default_text_fields
from . import detection
from .bodies import record_bodies
from .jsonl import JsonLine, LineError, parse_json_lines
from .linking import (
    _check_memory_refs,
    _check_record_refs,
    _ExperienceLinkState,
    _lattice_split,
    relink_appended,
)
from .preview import retrieval_preview
from .privacy import raw_line_text_fields
from .records import _build_memory, _read_experiences, _Scan, _status_of
from .schema import (
    _FILE_ORDER,
    EXPERIENCES,
    FORMAT_ID,
    POINTER_FIELDS,
    STANCES,
    TYPE_RANK,
    VIEWS,
    WAL,
)
from .validation import _is_str_list, _validate_stance, _validate_view, _validate_wal


class ExperienceRecordAdapter(FormatAdapter):
    """Reads an experience-record vault (JSON Lines raw + view stores)."""

    info: ClassVar[FormatInfo] = FormatInfo(
        id=FORMAT_ID,
        label="Experience records",
        short_label="exp-rec",
        # `parents` form a lattice: a cycle through them is a problem.
        acyclic_fields=frozenset({"parents"}),
        promote_note="derives a new record one type up (the raw line never changes)",
        promote_options=(
            PromoteOption("text", "", "blank: the body with Observed:/Inferred: in front"),
            PromoteOption("type", "", "blank: the next type up"),
        ),
        # The body is `content.text`; structured content and affect labels
        # are text the spec defines too.
        text_fields=("content.structured", "affect.labels"),
    )
    pointer_fields: ClassVar[tuple[PointerField, ...]] = POINTER_FIELDS

    def detect(self, root: Path) -> bool:
        return detection.detect(root)

    # -- per-file scanning (see FormatAdapter) ------------------------------

    def files(self, root: Path) -> list[Path]:
        return [root / rel for rel in self.file_listing(root).names]

    def file_listing(self, root: Path) -> Listing:
        """The store files, leaving out (and reporting) links out of the vault."""
        return list_files(root, _FILE_ORDER)

    def owns(self, root: Path, rel: str) -> bool:
        return rel in _FILE_ORDER

    def side_files(self, root: Path) -> list[str]:
        """The WAL, the views and the stances: records that hold text but are no experience."""
        return list_files(root, (WAL, VIEWS, STANCES)).names

    def bodies_of(
        self, root: Path, rel: str, data: bytes, memories: Sequence[Memory]
    ) -> dict[str, str] | None:
        return record_bodies(rel, data, memories)

    def scan_file(self, root: Path, path: Path, data: bytes | None = None) -> FileScan:
        rel = path.relative_to(root).as_posix()
        if rel not in _FILE_ORDER:
            return FileScan(rel)
        # The WAL and the views change experiences (erasure, archive, pins, edits).
        out = FileScan(rel, order=(_FILE_ORDER.index(rel),), vault_wide=rel in (WAL, VIEWS))
        scan = _Scan(root=root)
        if rel == WAL:
            # Which experiences are erased decides what of them may be kept.
            wal = scan.load_records(
                WAL, "wal", _validate_wal, id_key="wal_id", unique_ids=False, data=data
            )
            out.data.update(records=wal, states=scan.states)
        elif rel == VIEWS:
            views = scan.load_records(VIEWS, "views", _validate_view, data=data)
            scan.apply_pins(views)
            scan.apply_edits(views)
            out.data.update(
                records=views,
                pinned_by=scan.pinned_by,
                edits=scan.edits,
                edited_by=scan.edited_by,
            )
        elif rel == STANCES:
            stances = scan.load_records(STANCES, "stances", _validate_stance, data=data)
            out.data.update(records=stances)
        else:
            if data is None and path.is_file():
                with contextlib.suppress(OSError):  # `scan.read` reports it
                    data = read_regular(path)
            _read_experiences(scan, scan.read(EXPERIENCES, data), out.memories)
            if data is not None:
                # Where appended lines start next time (see `scan_appended`).
                out.data["newlines"] = data.count(b"\n")
        out.problems = scan.result.problems
        return out

    def scan_appended(
        self, root: Path, path: Path, previous: FileScan, tail: bytes, first_line: int
    ) -> FileScan | None:
        """`previous` plus the lines appended to `experiences.jsonl` (None for other files).

        The raw store is append-only and each line is read on its own, so the
        lines already read stay exactly as they were: only the tail is parsed.
        The WAL and view stores are not extended this way (their lines
        interact: duplicates, pins superseded by later views).
        """
        if previous.rel != EXPERIENCES or path.name != EXPERIENCES:
            return None
        scan = _Scan(root=root)
        memories: list[Memory] = []
        try:
            items = parse_json_lines(tail, first_line)
        except ValueError:
            return None
        good: list[JsonLine] = []
        for item in items:
            if isinstance(item, LineError):
                scan.problem(EXPERIENCES, item.line, item.reason, item.detail)
            else:
                good.append(item)
        _read_experiences(scan, good, memories)
        # `appended` tells relink how much was there before (the objects are kept).
        data = dict(previous.data)
        data["appended"] = (len(previous.memories), len(previous.problems))
        if isinstance(previous.data.get("newlines"), int):
            data["newlines"] = previous.data["newlines"] + tail.count(b"\n")
        return FileScan(
            previous.rel,
            order=previous.order,
            memories=[*previous.memories, *memories],
            problems=[*previous.problems, *scan.result.problems],
            data=data,
            # Every memory read before is the very object it was: nothing to match up.
            kept_objects=True,
        )

    def link(self, root: Path, scans: Mapping[str, FileScan]) -> ScanResult:
        empty = FileScan("")
        wal = scans.get(WAL, empty)
        views_fs = scans.get(VIEWS, empty)
        stances_fs = scans.get(STANCES, empty)
        experiences = scans.get(EXPERIENCES, empty)

        scan = _Scan(root=root)
        scan.states = wal.data.get("states", {})
        scan.pinned_by = views_fs.data.get("pinned_by", {})
        scan.edits = views_fs.data.get("edits", {})
        scan.edited_by = views_fs.data.get("edited_by", {})
        views: list[dict[str, Any]] = views_fs.data.get("records", [])
        stances: list[dict[str, Any]] = stances_fs.data.get("records", [])
        scan.result.records["wal"] = wal.data.get("records", [])
        scan.result.records["views"] = views
        scan.result.records["stances"] = stances
        record_problems = [*wal.problems, *views_fs.problems, *stances_fs.problems]

        for problem in experiences.problems:
            if problem.title is not None and problem.id is not None and scan.erased(problem.id):
                # An erased record's content must not show, not even as a title.
                problem = replace(problem, title=None)
            scan.result.problems.append(problem)

        candidates: list[Memory] = []
        touched = scan.states.keys() | scan.pinned_by.keys() | scan.edited_by.keys()
        for pre in experiences.memories:
            if pre.id not in touched:
                candidates.append(pre)
                continue
            memory = _build_memory(scan, pre.fields, pre.line or 0)
            if memory.tombstoned:
                # Kept out of the Memory; needed only for the lattice check.
                parents = pre.fields.get("parents")
                memory.native["_parents"] = list(parents) if _is_str_list(parents) else []
            candidates.append(memory)

        unique, dups = split_duplicates(candidates, FORMAT_ID, root)
        scan.result.problems.extend(dups)
        rank = {m.id: TYPE_RANK[m.kind] for m in unique}
        memories = _lattice_split(scan, unique, rank)
        for m in memories:
            if m.tombstoned:
                m.native.pop("_parents", None)
        exp_ids = {m.id for m in memories}
        scan.result.memories = _check_memory_refs(scan, memories, exp_ids)
        n_refs = len(scan.result.ref_problems)

        any_ids = exp_ids | {v["id"] for v in views} | {s["id"] for s in stances}
        scan.result.records["edges"] = []
        _check_record_refs(scan, "views", views, exp_ids, any_ids)
        _check_record_refs(scan, "stances", stances, exp_ids, any_ids)

        scan.result.problems.sort(key=lambda p: p.line or 0)
        n_exp = len(scan.result.problems)
        scan.result.problems.extend(record_problems)
        # For relink (appended experiences): see `_ExperienceLinkState`.
        scan.result.link_state = _ExperienceLinkState(
            rank=rank,
            valid=exp_ids,
            dup_ids={p.id for p in dups if p.id is not None},
            n_exp=n_exp,
            n_refs=n_refs,
        )
        return scan.result

    def relink(
        self,
        root: Path,
        scans: Mapping[str, FileScan],
        previous: ScanResult,
        changes: Changes,
    ) -> ScanResult | None:
        return relink_appended(root, scans, previous, changes)

    def decay_brief(self, memory: Memory, as_of: date) -> tuple[str, Health, float, float | None]:
        """(status, health, weight, score) of `decay`, without its explanation."""
        status = _status_of(memory)
        return status, STATUS_HEALTH[status], 1.0 if status == "live" else 0.0, None

    def decay(self, memory: Memory, as_of: date, *, explain: bool = True) -> DecayInfo:
        created = memory.created
        if isinstance(created, datetime) and created.tzinfo is not None:
            # created_at is a UTC capture time: count days from its UTC date.
            created = created.astimezone(UTC)
        age = days_between(created, as_of) if created is not None else None
        status = _status_of(memory)
        live = status == "live"
        if not explain:
            return DecayInfo(
                status=status,
                health=STATUS_HEALTH[status],
                strength=1.0 if live else 0.0,
                weight=1.0 if live else 0.0,
                age_days=max(0, age) if age is not None else None,
            )
        age_text = "unknown" if age is None else f"{age} day{'s' if age != 1 else ''}"
        if status == "tombstoned":
            info = memory.native.get("tombstone") or {}
            why = (
                "No decay model in the experience-record format; the record is excluded from "
                f"the live set only because {info.get('wal_id') or 'the WAL'} carries a tombstone "
                f"op for it (reason {info.get('reason') or 'unstated'}, "
                f"ts {info.get('ts') or '?'}). "
                "Content must not be shown; the raw line stays on disk (append-only store)."
            )
        elif status == "archived":
            info = memory.native.get("archive") or {}
            why = (
                "No decay model in the experience-record format; archived by a tombstone op "
                f"with reason 'archived' in {info.get('wal_id') or 'the WAL'} "
                f"(ts {info.get('ts') or '?'}). Content stays readable; a later WAL restore op "
                f"brings it back. Age {age_text}."
            )
        else:
            why = (
                "The experience-record format defines no decay or TTL: raw experiences are "
                "immutable and stay live until a WAL tombstone names them. "
                f"Age {age_text} and confidence.p do not change status."
            )
            if memory.pinned:
                why += f" Pinned by view {memory.native.get('pinned_by', '?')}."
        return DecayInfo(
            status=status,
            health=STATUS_HEALTH[status],
            strength=1.0 if live else 0.0,
            weight=1.0 if live else 0.0,
            age_days=max(0, age) if age is not None else None,
            why=why,
        )

    def agent_preview(
        self, root: Path, result: ScanResult, request: PreviewRequest
    ) -> list[PreviewSection]:
        """The spec's hybrid retrieval for the prompt, with lenses and stances (see `preview`)."""
        return retrieval_preview(self, root, result, request)

    def text_fields(self, memory: Memory, raw: str | None) -> list[TextField]:
        """Every string of the record, all on the record's line.

        A tombstoned record's Memory holds no text any more, but its raw
        line is immutable and still in experiences.jsonl: its strings are
        read from that line, so a scan says what the file still holds.
        """
        if memory.tombstoned:
            return raw_line_text_fields(memory, raw)
        return [TextField(f.name, f.text, memory.line) for f in default_text_fields(memory)]

    def history_scope(self, memory: Memory) -> HistoryScope:
        """A record is the one line of experiences.jsonl holding its id."""
        return record_scope(memory.path, memory.id)

    def history_extract(self, scope: HistoryScope, data: bytes) -> bytes | None:
        """The record's line in one version of experiences.jsonl."""
        return record_line(data, scope.key)


__all__ = ["ExperienceRecordAdapter"]
