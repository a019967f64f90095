"""Reading the stores: the scan's working state (WAL erasures and archives, pins,
edits) and the memories built from valid experiences.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...model import Memory, Problem, Reason, Relation, ScanResult
from ...refs import is_uri
from ...text.dates import parse_datetime
from .jsonl import JsonLine, LineError, parse_json_lines, read_json_lines
from .schema import (
    ARCHIVED_REASON,
    EDITABLE_FIELDS,
    EXPERIENCES,
    FORMAT_ID,
    LENS_EDIT,
    LENS_PIN,
    LENS_UNPIN,
    OP_RESTORE,
    OP_TOMBSTONE,
    SPEC_KEYS,
    WAL,
)
from .validation import _edit_fields, _Invalid, _is_number, _is_str_list, _validate_experience

_TITLE_MAX = 100

_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def title_of(text: str) -> str:
    """First line, then first sentence, of a text; at most ~100 characters."""
    first = next((ln.strip() for ln in text.split("\n") if ln.strip()), "")
    first = _SENTENCE_END.split(first, maxsplit=1)[0].strip()
    if len(first) > _TITLE_MAX:
        first = first[: _TITLE_MAX - 1].rstrip() + "…"
    return first


def is_external_pointer(ref: str) -> bool:
    """`uri:...`, `urn:...`, `https://...`, `vec://...`: pointers, not ids (`file:` is a path)."""
    return is_uri(ref)


@dataclass(slots=True)
class _ExpState:
    """What the WAL says about one experience id."""

    erased: dict[str, Any] | None = None
    archived: dict[str, Any] | None = None


@dataclass(slots=True)
class _Scan:
    """Working state of one scan."""

    root: Path
    result: ScanResult = field(default_factory=ScanResult)
    states: dict[str, _ExpState] = field(default_factory=dict)
    pinned_by: dict[str, str] = field(default_factory=dict)
    edits: dict[str, dict[str, Any]] = field(default_factory=dict)
    edited_by: dict[str, list[str]] = field(default_factory=dict)

    def problem(
        self,
        rel: str,
        line: int,
        reason: Reason,
        detail: str,
        *,
        id: str | None = None,
        title: str | None = None,
    ) -> None:
        self.result.problems.append(
            Problem(
                format=FORMAT_ID,
                vault_root=self.root,
                path=rel,
                reason=reason,
                detail=detail,
                id=id,
                line=line,
                title=title,
                at_line=line,
            )
        )

    def erased(self, exp_id: str) -> bool:
        state = self.states.get(exp_id)
        return state is not None and state.erased is not None

    def read(self, rel: str, data: bytes | None = None) -> list[JsonLine]:
        """Objects of one file (or of `data`, its bytes); unreadable lines become problems."""
        try:
            items = read_json_lines(self.root / rel) if data is None else parse_json_lines(data)
        except OSError as exc:
            # Not a parse failure but still bad input: report, never raise.
            self.problem(rel, 1, Reason.UNREADABLE, f"cannot read file: {exc.strerror or exc}")
            return []
        good: list[JsonLine] = []
        for item in items:
            if isinstance(item, LineError):
                self.problem(rel, item.line, item.reason, item.detail)
            else:
                good.append(item)
        return good

    def load_records(
        self,
        rel: str,
        key: str,
        validate: Callable[[dict[str, Any]], None],
        *,
        id_key: str = "id",
        unique_ids: bool = True,
        data: bytes | None = None,
    ) -> list[dict[str, Any]]:
        """Valid records of a view-store / WAL file, each with `_line`, `_file`.

        WAL entries are applied before validation (see the adapter module's docstring).
        """
        kept: list[dict[str, Any]] = []
        for item in self.read(rel, data):
            obj = item.obj
            if rel == WAL:
                self.apply_wal(obj, item.line)
            try:
                validate(obj)
            except _Invalid as bad:
                rid = obj.get(id_key)
                self.problem(
                    rel, item.line, bad.reason, bad.detail, id=rid if isinstance(rid, str) else None
                )
                continue
            kept.append({**obj, "_line": item.line, "_file": rel})
        if unique_ids:
            kept = self.drop_duplicate_records(rel, kept)
        self.result.records[key] = kept
        return kept

    def drop_duplicate_records(
        self, rel: str, records: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        counts = Counter(r["id"] for r in records)
        keep: list[dict[str, Any]] = []
        for r in records:
            if counts[r["id"]] == 1:
                keep.append(r)
                continue
            others = ", ".join(
                f"{rel}:{o['_line']}" for o in records if o["id"] == r["id"] and o is not r
            )
            self.problem(
                rel,
                r["_line"],
                Reason.DUPLICATE_ID,
                f"id {r['id']!r} also used by {others}",
                id=r["id"],
            )
        return keep

    def apply_wal(self, entry: dict[str, Any], line: int) -> None:
        ops = entry.get("ops")
        if not isinstance(ops, list):
            return
        wal_id = entry.get("wal_id")
        for op in ops:
            if not isinstance(op, dict) or op.get("target") != "exp":
                continue
            exp_id = op.get("id")
            if not isinstance(exp_id, str):
                continue
            state = self.states.setdefault(exp_id, _ExpState())
            ts = op.get("ts")
            info: dict[str, Any] = {
                "wal_id": wal_id if isinstance(wal_id, str) else None,
                "wal_line": line,
                "ts": ts if isinstance(ts, str) else None,
            }
            if op.get("op") == OP_TOMBSTONE:
                reason = op.get("reason")
                info["reason"] = reason if isinstance(reason, str) else None
                if reason == ARCHIVED_REASON:
                    if state.erased is None:
                        state.archived = info
                elif state.erased is None:
                    # Erasure is final and wins over an archive.
                    state.erased = info
                    state.archived = None
            elif op.get("op") == OP_RESTORE:
                # Only an archive is reversible; erased content is gone.
                state.archived = None

    def apply_pins(self, views: list[dict[str, Any]]) -> None:
        for view in views:
            lens = view.get("lens")
            if lens not in (LENS_PIN, LENS_UNPIN):
                continue
            for exp_id in view.get("applied_to") or []:
                if lens == LENS_PIN:
                    self.pinned_by[exp_id] = view["id"]
                else:
                    self.pinned_by.pop(exp_id, None)

    def apply_edits(self, views: list[dict[str, Any]]) -> None:
        """Fold `edit_v1` views (already validated) in file order."""
        for view in views:
            if view.get("lens") != LENS_EDIT:
                continue
            fields = _edit_fields(view) or {}
            for exp_id in view.get("applied_to") or []:
                active = self.edits.setdefault(exp_id, {})
                for name in EDITABLE_FIELDS:
                    if name not in fields:
                        continue
                    if fields[name] is None:
                        active.pop(name, None)
                    else:
                        active[name] = fields[name]
                self.edited_by.setdefault(exp_id, []).append(view["id"])


def _build_memory(scan: _Scan, obj: dict[str, Any], line: int) -> Memory:
    exp_id: str = obj["id"]
    kind: str = obj["type"]
    created = parse_datetime(obj["created_at"])
    state = scan.states.get(exp_id)
    if state is not None and state.erased is not None:
        reason = state.erased.get("reason") or "erased"
        kept = {"id": exp_id, "type": kind, "created_at": obj["created_at"]}
        # Content, provenance, tags, links: all erased; only the shell stays.
        return Memory(
            format=FORMAT_ID,
            vault_root=scan.root,
            id=exp_id,
            kind=kind,
            title=f"[tombstoned: {reason}]",
            body="",
            path=EXPERIENCES,
            created=created,
            line=line,
            fields=dict(kept),
            tombstoned=True,
            native={**kept, "tombstone": dict(state.erased)},
        )
    text: str = obj["content"]["text"]
    confidence = obj.get("confidence")
    p = confidence.get("p") if isinstance(confidence, dict) else None
    provenance = obj.get("provenance")
    actor = provenance.get("actor") if isinstance(provenance, dict) else None
    tags = obj.get("tags")
    relations: list[Relation] = [
        Relation(target=ref, type="derived_from", field="parents")
        for ref in obj.get("parents") or []
    ]
    relations.extend(
        Relation(target=ref, type="evidence", field="evidence_ptrs")
        for ref in obj.get("evidence_ptrs") or []
        if not is_external_pointer(ref)
    )
    native: dict[str, Any] = {}
    archived = state is not None and state.archived is not None
    if state is not None and state.archived is not None:
        native["archive"] = dict(state.archived)
    pinned = exp_id in scan.pinned_by
    if pinned:
        native["pinned_by"] = scan.pinned_by[exp_id]
    shown_tags = tuple(tags) if _is_str_list(tags) else ()
    shown_p = float(p) if _is_number(p) else None
    if exp_id in scan.edited_by:
        edits = scan.edits.get(exp_id, {})
        native["edits"] = dict(edits)
        native["edited_by"] = list(scan.edited_by[exp_id])
        if "tags" in edits:
            shown_tags = tuple(edits["tags"])
        if "confidence.p" in edits:
            shown_p = float(edits["confidence.p"])
        if "note" in edits:
            native["note"] = edits["note"]
    return Memory(
        format=FORMAT_ID,
        vault_root=scan.root,
        id=exp_id,
        kind=kind,
        title=title_of(text) or exp_id,
        body=text,
        path=EXPERIENCES,
        tags=shown_tags,
        confidence=shown_p,
        created=created,
        source=actor if isinstance(actor, str) else None,
        relations=tuple(relations),
        line=line,
        fields=dict(obj),
        extra={k: v for k, v in obj.items() if k not in SPEC_KEYS},
        pinned=pinned,
        archived=archived,
        native=native,
    )


def _read_experiences(scan: _Scan, items: list[JsonLine], out: list[Memory]) -> None:
    """Experiences built as if the WAL and views said nothing about them.

    link() rebuilds the few they do name; invalid lines become problems.
    """
    for item in items:
        obj = item.obj
        try:
            _validate_experience(obj)
        except _Invalid as bad:
            exp_id = obj.get("id") if isinstance(obj.get("id"), str) else None
            title = None
            content = obj.get("content")
            if (
                exp_id is not None
                and isinstance(content, dict)
                and isinstance(content.get("text"), str)
            ):
                title = title_of(content["text"]) or None
            scan.problem(EXPERIENCES, item.line, bad.reason, bad.detail, id=exp_id, title=title)
            continue
        out.append(_build_memory(scan, obj, item.line))


def _status_of(memory: Memory) -> str:
    """A record's decay status: the WAL decides, age never does."""
    if memory.tombstoned:
        return "tombstoned"
    return "archived" if memory.archived else "live"
