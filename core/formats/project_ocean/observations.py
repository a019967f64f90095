"""Observation files read into memories: frontmatter checked field by field, title from
the body.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import ParseError
from ...model import Memory, Reason, Relation
from ...text.dates import parse_date
from ...text.frontmatter import load_frontmatter
from ...text.textio import decode_bytes, read_text
from .decay import DecaySpec, _decay_spec
from .locations import _Location, locate
from .schema import _KNOWN, FORMAT_ID


def parse_observation(root: Path, rel: str, data: bytes | None = None) -> Memory:
    """Read one observation as scan() does (backlinks left unresolved).

    `data` parses bytes meant for `rel` instead of the file's current bytes
    (how the writer validates what it is about to write).  Raises ParseError
    for invalid content, ValueError if `rel` is not an observation path.
    """
    loc = locate(root, rel)
    if loc is None:
        raise ValueError(f"{rel!r} is not a Project Ocean observation path")
    return _parse(loc, root, data)


def _key_line(header: str, key: str) -> int | None:
    """1-based file line of a top-level `key:` in the header (header starts on line 2)."""
    prefix = f"{key}:"
    for i, line in enumerate(header.split("\n")):
        if line.startswith(prefix):
            return 2 + i
    return None


def _title_of(body: str, fallback: str) -> str:
    """First non-empty body line, leading '#'s stripped, kept whole."""
    start = 0
    while True:  # line by line without splitting the whole body
        end = body.find("\n", start)
        text = (body[start:] if end < 0 else body[start:end]).strip()
        if text:
            return text.lstrip("#").strip() or text
        if end < 0:
            return fallback
        start = end + 1


def _is_number(value: object) -> bool:
    # YAML booleans are ints in Python; `confidence: true` is not a number.
    return isinstance(value, int | float) and not isinstance(value, bool)


class _Fields:
    """Validates one frontmatter mapping; raises ParseError on the first fault."""

    def __init__(self, data: dict[Any, Any], header: str, rel: str, mem_id: str) -> None:
        self.data = data
        self.header = header
        self.rel = rel
        self.id = mem_id

    def fail(self, reason: Reason, detail: str, key: str | None) -> ParseError:
        at = _key_line(self.header, key) if key is not None else None
        return ParseError(self.rel, reason, detail, at_line=at or 1, id=self.id)

    def required(self, key: str) -> Any:
        # A key written with no value (`confidence:`) is as good as absent.
        value = self.data.get(key)
        if value is None:
            raise self.fail(Reason.MISSING_REQUIRED_FIELD, f"lacks {key}", key)
        return value

    def wrong(self, key: str, value: Any, expected: str) -> ParseError:
        shown = repr(value)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        return self.fail(Reason.WRONG_TYPE, f"{key} {shown} is not {expected}", key)

    def str_list(self, key: str, value: Any) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.wrong(key, value, "a list of strings")
        return tuple(value)

    def optional_bool(self, key: str) -> bool | None:
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, bool):
            raise self.wrong(key, value, "true or false")
        return value


def _parse(loc: _Location, root: Path, raw: bytes | None = None) -> Memory:
    """One file (or `raw`, bytes meant for it) -> Memory, or ParseError with the path id."""
    try:
        decoded = read_text(loc.path) if raw is None else decode_bytes(raw, loc.rel)
        data, doc = load_frontmatter(decoded.text, loc.rel)
    except ParseError as err:
        err.id = loc.id
        raise
    stem = loc.stem
    mem_id = f"{loc.agent}/{stem}"
    f = _Fields(data, doc.header, loc.rel, mem_id)

    tags = f.str_list("tags", f.required("tags"))

    confidence = f.required("confidence")
    if not _is_number(confidence):
        raise f.wrong("confidence", confidence, "a number between 0.0 and 1.0")
    if not (0.0 <= confidence <= 1.0):  # NaN fails this test too
        raise f.fail(Reason.OUT_OF_RANGE, f"confidence {confidence} outside 0.0-1.0", "confidence")

    created_raw = f.required("created")
    created = parse_date(created_raw)
    if created is None:
        raise f.wrong("created", created_raw, "a YYYY-MM-DD date")

    source = f.required("source")
    if not isinstance(source, str):
        raise f.wrong("source", source, "a string")

    decay_raw = data.get("decay")
    spec: DecaySpec | None = None
    if decay_raw is not None:
        spec = _decay_spec(decay_raw)
        if spec is None:
            raise f.wrong("decay", decay_raw, "linear-Nd or exponential-Nd")

    backlinks_raw = data.get("backlinks")
    backlinks = () if backlinks_raw is None else f.str_list("backlinks", backlinks_raw)
    verified = f.optional_bool("verified")
    pinned = f.optional_bool("pinned")

    promoted_from = data.get("promoted_from")
    promoted_at = parse_date(data.get("promoted_at"))
    body = doc.body
    return Memory(
        format=FORMAT_ID,
        vault_root=root,
        id=mem_id,
        kind="observation",
        title=_title_of(body, stem),
        body=body,
        path=loc.rel,
        tags=tags,
        confidence=confidence,
        created=created,
        source=source,
        # Resolved once every file is read (see _resolve_backlinks).
        relations=tuple(Relation(target=b, type="backlink", field="backlinks") for b in backlinks),
        fields=data,  # a fresh mapping per read: nothing else holds it
        extra={k: v for k, v in data.items() if k not in _KNOWN},
        pinned=pinned is True,
        archived=loc.archived,
        native={
            "agent": loc.agent,
            "area": loc.area,
            "shared": loc.shared,
            "stem": stem,
            "decay": decay_raw.strip() if isinstance(decay_raw, str) else None,
            "decay_kind": spec.kind if spec else None,
            "lifespan_days": spec.days if spec else None,
            "verified": verified is True,
            "promoted_from": promoted_from if isinstance(promoted_from, str) else None,
            "promoted_at": promoted_at.isoformat() if promoted_at else None,
        },
    )
