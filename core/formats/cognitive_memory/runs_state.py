"""`_state.json` runs: stored decay scores recomputed and one access counted, edited
in place so every other byte (raw numbers included) stays as written.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from ...errors import ParseError, RefusedError
from ...model import Memory
from ...safe_io import read_regular
from ...text.textio import decode_bytes
from ...write.journal import ChangeKind, FileChange, Plan
from ...write.writes import snapshot
from .runs import _ADAPTER, _live, _stamp, _target
from .schema import STATE_FILE


class _RawNumber:
    """A JSON number kept as its text, so untouched values are written back unchanged."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _load_state_text(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text, parse_float=_RawNumber, parse_int=_RawNumber)
    except (ValueError, RecursionError) as exc:
        raise RefusedError(f"{STATE_FILE}: not valid JSON ({exc}); not touching it") from None
    if not isinstance(data, dict):
        raise RefusedError(f"{STATE_FILE}: top level is not an object; not touching it")
    return data


def _indent_of(text: str) -> str | None:
    """The indent unit of a pretty-printed JSON file; None for a one-line file."""
    for line in text.split("\n")[1:]:
        stripped = line.lstrip(" \t")
        if stripped:
            return line[: len(line) - len(stripped)] or None
    return None


def _dump(value: Any, indent: str | None, ascii_only: bool, level: int = 0) -> str:
    """json.dumps(indent=...) output, writing _RawNumber values as their original text."""
    if isinstance(value, _RawNumber):
        return value.text
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [
            f"{json.dumps(str(k), ensure_ascii=ascii_only)}: "
            f"{_dump(v, indent, ascii_only, level + 1)}"
            for k, v in value.items()
        ]
        return _join(items, "{", "}", indent, level)
    if isinstance(value, list):
        if not value:
            return "[]"
        items = [_dump(v, indent, ascii_only, level + 1) for v in value]
        return _join(items, "[", "]", indent, level)
    return json.dumps(value, ensure_ascii=ascii_only)


def _join(items: list[str], open_: str, close: str, indent: str | None, level: int) -> str:
    if indent is None:
        return open_ + ", ".join(items) + close
    inner = "\n" + indent * (level + 1)
    return open_ + inner + ("," + inner).join(items) + "\n" + indent * level + close


def _render_state(data: dict[str, Any], like: str) -> str:
    indent = _indent_of(like) if like else "  "
    out = _dump(data, indent, "\\u" in like)
    return out + ("\n" if not like or like.endswith("\n") else "")


def _read_state_file(root: Path) -> tuple[Path, bytes, str, dict[str, Any] | None]:
    """(path, bytes, text, parsed) of `_state.json`, read once; bytes b"" if it is missing."""
    path = _target(root, STATE_FILE)
    try:
        raw = read_regular(path)
    except FileNotFoundError:
        return path, b"", "", None
    except OSError as exc:
        raise RefusedError(f"{STATE_FILE}: unreadable ({exc}); not touching it") from None
    try:
        text = decode_bytes(raw, STATE_FILE).text
    except ParseError as exc:
        raise RefusedError(f"{STATE_FILE}: {exc}; not touching it") from None
    return path, raw, text, _load_state_text(text)


def _state_plan(
    root: Path,
    action: str,
    summary: str,
    memory_ids: list[str],
    edit: Callable[[dict[str, Any]], None],
) -> Plan:
    path, raw, text, data = _read_state_file(root)
    if data is None:
        data = {"version": 1, "updated": None, "entries": {}}
    edit(data)
    new = _render_state(data, text).encode("utf-8")
    if raw.startswith(b"\xef\xbb\xbf"):
        new = b"\xef\xbb\xbf" + new
    if b"\r\n" in raw:
        new = new.replace(b"\n", b"\r\n")
    plan = Plan(action=action, vault_root=root, memory_ids=memory_ids, summary=summary)
    if new != raw:
        kind: ChangeKind = "write" if raw else "create"
        plan.changes.append(FileChange(kind, path, snapshot(path, raw if raw else None), data=new))
    return plan


def _entries(data: dict[str, Any]) -> dict[str, Any]:
    entries = data.get("entries")
    if entries is None:
        entries = data["entries"] = {}
    if not isinstance(entries, dict):
        raise RefusedError(f"{STATE_FILE}: 'entries' is not an object; not touching it")
    return entries


def plan_decay_scores(root: Path, as_of: date, now: datetime | None = None) -> Plan:
    """Recompute the stored `decay_score` of every `_state.json` entry of a live memory.

    Only `decay_score` values change (rounded to 4 places, vault/ = 999.0);
    other keys, key order, number texts and orphan entries stay as they are.
    `updated` is set to `now` when given.
    """
    if not (root / STATE_FILE).exists():
        return Plan("decay_scores", root, [], f"decay: no {STATE_FILE}; nothing to recompute")
    result = _ADAPTER.scan(root)
    scores = {m.id: _ADAPTER.decay(m, as_of).score for m in _live(result.memories)}
    changed: list[str] = []

    def edit(data: dict[str, Any]) -> None:
        for mem_id, entry in _entries(data).items():
            score = scores.get(mem_id)
            if score is None or not isinstance(entry, dict):
                continue
            old = entry.get("decay_score")
            old_value = float(old.text) if isinstance(old, _RawNumber) else old
            if old_value != score or "decay_score" not in entry:
                entry["decay_score"] = score
                changed.append(mem_id)
        if now is not None and changed:
            data["updated"] = _stamp(now)

    plan = _state_plan(root, "decay_scores", "", [], edit)
    plan.memory_ids = changed
    plan.summary = (
        f"decay: {len(changed)} decay_score values in {STATE_FILE} recomputed "
        f"as of {as_of.isoformat()}"
    )
    return plan


def plan_record_access(memory: Memory, when: datetime) -> Plan:
    """Count one access of `memory` in `_state.json` (the system's `get`).

    access_count + 1, last_accessed = `when`, decay_score recomputed for that
    moment; the entry is created if missing, the file too.  The app calls this
    only when the user turned access tracking on (off by default, so browsing
    never changes what agents see).
    """
    root = memory.vault_root
    stamp = _stamp(when)

    def edit(data: dict[str, Any]) -> None:
        entries = _entries(data)
        entry = entries.get(memory.id)
        if not isinstance(entry, dict):
            entry = entries[memory.id] = {}
        count = entry.get("access_count")
        old = int(count.text) if isinstance(count, _RawNumber) and count.text.isdigit() else 0
        entry["access_count"] = old + 1
        entry["last_accessed"] = stamp
        native = dict(memory.native, access_count=old + 1, last_accessed=stamp)
        probe = Memory(
            format=memory.format,
            vault_root=root,
            id=memory.id,
            kind=memory.kind,
            title=memory.title,
            body="",
            path=memory.path,
            importance=memory.importance,
            created=memory.created,
            pinned=memory.pinned,
            archived=memory.archived,
            native=native,
        )
        day = (when if when.tzinfo is not None else when.replace(tzinfo=UTC)).astimezone(UTC)
        entry["decay_score"] = _ADAPTER.decay(probe, day.date()).score
        data["updated"] = stamp

    return _state_plan(
        root,
        "access",
        f"access: {memory.title!r} counted in {STATE_FILE}",
        [memory.id],
        edit,
    )


def record_access(memory: Memory, when: datetime) -> Plan:
    """Alias of plan_record_access (the name the app uses)."""
    return plan_record_access(memory, when)
