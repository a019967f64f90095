"""Memory files: frontmatter validated, relations read, one memory (or one problem) a file."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from ...errors import ParseError
from ...model import Memory, Problem, Reason
from ...text.dates import parse_datetime
from ...text.frontmatter import load_frontmatter
from ...text.textio import decode_bytes, read_text
from ..files import iter_md
from ..reading import as_str_list, problem_from
from .schema import (
    _KNOWN,
    ARCHIVE_DIR,
    DEFAULT_CONFIDENCE,
    DIRECTIONS,
    FORMAT_ID,
    GRAPH_DIR,
    RELATION_TYPES,
    TYPE_DIRS,
    VAULT_DIR,
    _problem,
)

_UUID_RE = re.compile(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
)


class _Invalid(Exception):
    """One validation failure of a memory file (the first one found is reported)."""

    def __init__(self, reason: Reason, detail: str, key: str | None = None) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail
        self.key = key


def _number(value: Any) -> float | None:
    """A real number (bool is not one), finite; else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    f = float(value)
    return f if math.isfinite(f) else None


def _show(value: Any) -> str:
    """A value as quoted in a one-line detail, cut to a readable length."""
    text = repr(value) if isinstance(value, str) else str(value)
    text = text.replace("\n", " ")
    return text if len(text) <= 60 else text[:57] + "..."


def _require(data: Mapping[Any, Any], key: str) -> Any:
    if key not in data:
        raise _Invalid(Reason.MISSING_REQUIRED_FIELD, f"lacks {key}", key)
    return data[key]


def _fraction(value: Any, name: str, key: str) -> float:
    """A number in 0.0-1.0 (integers fine, bool not)."""
    number = _number(value)
    if number is None:
        if isinstance(value, float):  # nan / inf
            raise _Invalid(Reason.OUT_OF_RANGE, f"{name} {_show(value)} outside 0.0-1.0", key)
        raise _Invalid(Reason.WRONG_TYPE, f"{name} {_show(value)} is not a number", key)
    if not 0.0 <= number <= 1.0:
        raise _Invalid(Reason.OUT_OF_RANGE, f"{name} {_show(value)} outside 0.0-1.0", key)
    return number


def _timestamp(value: Any, key: str) -> datetime | date:
    parsed = parse_datetime(value)
    if parsed is None:
        raise _Invalid(Reason.WRONG_TYPE, f"{key} {_show(value)} is not an ISO 8601 timestamp", key)
    return parsed


def _str_list(data: Mapping[Any, Any], key: str) -> list[str]:
    items = as_str_list(data.get(key))
    if items is None:
        raise _Invalid(Reason.WRONG_TYPE, f"{key} must be a list of strings", key)
    return items


def _raw_scalar(header: str, key: str) -> str | None:
    """The text after `key:` on its header line (for a title YAML typed as non-text)."""
    m = re.search(rf"^{re.escape(key)}:[ \t]*(.*?)[ \t]*$", header, re.MULTILINE)
    if m is None:
        return None
    text = re.sub(r"\s+#.*$", "", m.group(1))
    return text or None


def _key_line(header: str, key: str | None) -> int | None:
    """1-based file line of a top-level frontmatter key (line 1 is the '---')."""
    if key is None:
        return None
    prefix = f"{key}:"
    for i, line in enumerate(header.split("\n")):
        if line.startswith(prefix):
            return i + 2
    return None


@dataclass(frozen=True, slots=True)
class _RawRelation:
    target: str
    type: str
    direction: str
    strength: float | None
    context: str | None

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Why: kept in every stored row; a frozen dataclass otherwise comes
        # back through a Python __setstate__ that asks for its fields each
        # time (~0.3 s of a 100k warm load, twice what the constructor takes).
        return (_RawRelation, (self.target, self.type, self.direction, self.strength, self.context))


def _relations(value: Any) -> list[_RawRelation]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Invalid(Reason.WRONG_TYPE, "relations must be a list of mappings", "relations")
    out: list[_RawRelation] = []
    for i, item in enumerate(value):
        where = f"relations[{i}]"
        if not isinstance(item, Mapping):
            raise _Invalid(Reason.WRONG_TYPE, f"{where} is not a mapping", "relations")
        for key in ("target", "type", "direction"):
            if key not in item:
                raise _Invalid(Reason.MISSING_REQUIRED_FIELD, f"{where} lacks {key}", "relations")
            if not isinstance(item[key], str):
                raise _Invalid(
                    Reason.WRONG_TYPE,
                    f"{where}.{key} {_show(item[key])} is not a string",
                    "relations",
                )
        direction = item["direction"]
        if direction not in DIRECTIONS:
            raise _Invalid(
                Reason.WRONG_TYPE,
                f"{where}.direction {_show(direction)} is not outgoing or incoming",
                "relations",
            )
        strength_raw = item.get("strength")
        strength = (
            None
            if strength_raw is None
            else _fraction(strength_raw, f"{where}.strength", "relations")
        )
        context = item.get("context")
        if context is not None and not isinstance(context, str):
            raise _Invalid(
                Reason.WRONG_TYPE, f"{where}.context {_show(context)} is not a string", "relations"
            )
        out.append(_RawRelation(item["target"], item["type"], direction, strength, context))
    return out


@dataclass(slots=True)
class _Parsed:
    """A memory file that passed validation, before state and links are applied."""

    memory: Memory
    raw_relations: list[_RawRelation]


def _validate(
    data: dict[Any, Any], header: str, root: Path, rel: str, area: str, type_dir: str | None
) -> _Parsed:
    raw_id = _require(data, "id")
    if not isinstance(raw_id, str):
        raise _Invalid(Reason.WRONG_TYPE, f"id {_show(raw_id)} is not a string", "id")
    if not _UUID_RE.match(raw_id):
        raise _Invalid(Reason.WRONG_TYPE, f"id {_show(raw_id)} is not a UUID", "id")

    kind = _require(data, "type")
    if not isinstance(kind, str) or kind not in TYPE_DIRS:
        hint = ""
        if isinstance(kind, str) and kind in RELATION_TYPES:
            # The spec's transcription lost indentation; a column-0 `type:` under
            # `- target:` silently overrides the memory's own type in YAML.
            hint = " (a relation 'type' at column 0? indent it under '- target:')"
        raise _Invalid(
            Reason.WRONG_TYPE,
            f"type {_show(kind)} is not one of {', '.join(TYPE_DIRS)}{hint}",
            "type",
        )

    title = _require(data, "title")
    if not isinstance(title, str):
        # An unquoted title YAML read as a number, bool or date: keep its text.
        raw = _raw_scalar(header, "title")
        if raw is None or isinstance(title, list | dict) or title is None:
            raise _Invalid(Reason.WRONG_TYPE, f"title {_show(title)} is not a string", "title")
        title = raw

    importance = _fraction(_require(data, "importance"), "importance", "importance")
    created = _timestamp(_require(data, "created"), "created")
    updated = _timestamp(_require(data, "updated"), "updated")

    confidence_explicit = data.get("confidence") is not None
    confidence = (
        _fraction(data["confidence"], "confidence", "confidence")
        if confidence_explicit
        else DEFAULT_CONFIDENCE
    )
    tags = _str_list(data, "tags")
    for key in ("steps", "preconditions", "postconditions"):
        _str_list(data, key)
    raw_relations = _relations(data.get("relations"))

    source = data.get("source")
    extra = {k: v for k, v in data.items() if k not in _KNOWN}
    memory = Memory(
        format=FORMAT_ID,
        vault_root=root,
        id=raw_id,
        kind=kind,
        title=title,
        body="",
        path=rel,
        tags=tuple(tags),
        importance=importance,
        confidence=confidence,
        created=created,
        updated=updated,
        source=source if isinstance(source, str) else None,
        fields=data,  # a fresh mapping per read: nothing else holds it
        extra=extra,
        pinned=area == VAULT_DIR,
        archived=area == ARCHIVE_DIR,
        native={
            "area": area,
            "type_dir": type_dir if type_dir is not None else TYPE_DIRS[kind],
            "confidence_explicit": confidence_explicit,
            "access_count": 0,
            "last_accessed": None,
            "has_state": False,
            "stored_decay_score": None,
        },
    )
    return _Parsed(memory, raw_relations)


def _read_memory(
    root: Path,
    rel: str,
    area: str,
    type_dir: str | None,
    raw: bytes | None = None,
    path: Path | None = None,
) -> _Parsed | Problem:
    """One memory file -> a validated memory, or the Problem that stops it loading.

    `raw` holds the file's bytes when the caller read them; otherwise the
    file is read from `path` (default: `rel` below `root`).
    """
    try:
        if raw is None:
            decoded = read_text(path if path is not None else root.joinpath(*rel.split("/")))
        else:
            decoded = decode_bytes(raw, rel)
        data, doc = load_frontmatter(decoded.text, rel)
    except ParseError as err:
        return problem_from(err, FORMAT_ID, root, rel)
    except OSError as exc:
        return _problem(root, rel, Reason.UNREADABLE, f"could not read file: {exc.strerror or exc}")
    raw_id = data.get("id")
    mem_id = raw_id if isinstance(raw_id, str) else None
    raw_title = data.get("title")
    title = raw_title if isinstance(raw_title, str) else None
    try:
        parsed = _validate(data, doc.header, root, rel, area, type_dir)
    except _Invalid as bad:
        return _problem(
            root,
            rel,
            bad.reason,
            bad.detail,
            id=mem_id,
            title=title,
            at_line=_key_line(doc.header, bad.key),
        )
    parsed.memory.body = doc.body
    return parsed


def _memory_files(root: Path) -> Iterable[tuple[Path, str, str | None]]:
    """(file, area, type dir) for every memory file, in a stable order."""
    for type_dir in TYPE_DIRS.values():
        for path in iter_md(root / GRAPH_DIR / type_dir, root):
            yield path, GRAPH_DIR, type_dir
    for path in iter_md(root / VAULT_DIR, root):
        yield path, VAULT_DIR, None
    for type_dir in TYPE_DIRS.values():
        for path in iter_md(root / ARCHIVE_DIR / type_dir, root):
            yield path, ARCHIVE_DIR, type_dir
