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
from .decay2 import parse_max_age
from .locations import _Location, locate
from .schema import _KNOWN, FORMAT_ID, GEN1_FIELDS, GEN2_FIELDS


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


def _generation(f: _Fields) -> int:
    """1 (`confidence`/`decay`) or 2 (`importance`/`max_age`); ParseError when mixed."""
    first = [k for k in GEN1_FIELDS if k in f.data]
    second = [k for k in GEN2_FIELDS if k in f.data]
    if first and second:
        raise f.fail(
            Reason.WRONG_TYPE,
            f"mixes the first generation's {' and '.join(first)} with the second's "
            f"{' and '.join(second)}; a file is one or the other",
            second[0],
        )
    if second:
        return 2
    return 1


def _gen1(f: _Fields) -> tuple[float | int, dict[str, Any]]:
    """confidence and decay (the first generation); (confidence, native fields)."""
    confidence = f.required("confidence")
    if not _is_number(confidence):
        raise f.wrong("confidence", confidence, "a number between 0.0 and 1.0")
    if not (0.0 <= confidence <= 1.0):  # NaN fails this test too
        raise f.fail(Reason.OUT_OF_RANGE, f"confidence {confidence} outside 0.0-1.0", "confidence")
    decay_raw = f.data.get("decay")
    spec: DecaySpec | None = None
    if decay_raw is not None:
        spec = _decay_spec(decay_raw)
        if spec is None:
            raise f.wrong("decay", decay_raw, "linear-Nd or exponential-Nd")
    return confidence, {
        "generation": 1,
        "decay": decay_raw.strip() if isinstance(decay_raw, str) else None,
        "decay_kind": spec.kind if spec else None,
        "lifespan_days": spec.days if spec else None,
    }


def _number01(f: _Fields, key: str, value: Any) -> float | int:
    if not _is_number(value):
        raise f.wrong(key, value, "a number between 0.0 and 1.0")
    if not (0.0 <= value <= 1.0):
        raise f.fail(Reason.OUT_OF_RANGE, f"{key} {value} outside 0.0-1.0", key)
    return value  # type: ignore[no-any-return]


def _gen2(f: _Fields) -> tuple[float | int, dict[str, Any]]:
    """importance, max_age, refs, ref_by, promoted (the second generation)."""
    importance = _number01(f, "importance", f.required("importance"))
    max_age = f.required("max_age")
    try:
        days = parse_max_age(max_age)
    except ValueError:
        raise f.wrong("max_age", max_age, "Nd (a whole number of days) or permanent") from None
    refs = f.data.get("refs")
    if refs is not None:
        if not isinstance(refs, int) or isinstance(refs, bool):
            raise f.wrong("refs", refs, "a whole number")
        if refs < 0:
            raise f.fail(Reason.OUT_OF_RANGE, f"refs {refs} is negative", "refs")
    ref_by_raw = f.data.get("ref_by")
    ref_by = () if ref_by_raw is None else f.str_list("ref_by", ref_by_raw)
    penalty = f.data.get("neglect_penalty")
    if penalty is not None:
        penalty = _number01(f, "neglect_penalty", penalty)
    return importance, {
        "generation": 2,
        "max_age": str(max_age).strip(),
        "max_age_days": days,
        "refs": refs if refs is not None else 0,
        "ref_by": list(ref_by),
        "promoted": f.optional_bool("promoted") is True,
        "neglect_penalty": penalty,
    }


def _common(f: _Fields, generation: int) -> tuple[tuple[str, ...], Any, str | None]:
    """tags, created and source: required in the first generation, optional in the second.

    The second generation's scripts default them (no tags, no created date:
    freshness 1.0, source "unknown"), so a file without them still works.
    """
    get = f.required if generation == 1 else f.data.get
    tags_raw = get("tags")
    tags = () if tags_raw is None else f.str_list("tags", tags_raw)
    created_raw = get("created")
    created = None if created_raw is None else parse_date(created_raw)
    if created_raw is not None and created is None:
        raise f.wrong("created", created_raw, "a YYYY-MM-DD date")
    source = get("source")
    if source is not None and not isinstance(source, str):
        raise f.wrong("source", source, "a string")
    return tags, created, source


def _relations(f: _Fields) -> tuple[Relation, ...]:
    """Backlinks, and (second generation) who cites this observation (`ref_by`)."""
    out: list[Relation] = []
    for key, kind in (("backlinks", "backlink"), ("ref_by", "ref_by")):
        raw = f.data.get(key)
        values = () if raw is None else f.str_list(key, raw)
        # Resolved once every file is read (see _resolve_backlinks).
        out.extend(Relation(target=b, type=kind, field=key) for b in values)
    return tuple(out)


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
    generation = _generation(f)
    tags, created, source = _common(f, generation)
    if generation == 1:
        confidence: float | int | None
        confidence, gen_native = _gen1(f)
        importance = None
    else:
        importance, gen_native = _gen2(f)
        confidence = None
    relations = _relations(f)
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
        importance=importance,
        confidence=confidence,
        created=created,
        source=source,
        relations=relations,
        fields=data,  # a fresh mapping per read: nothing else holds it
        extra={k: v for k, v in data.items() if k not in _KNOWN},
        pinned=pinned is True,
        archived=loc.archived,
        native={
            "agent": loc.agent,
            "area": loc.area,
            "shared": loc.shared,
            "stem": stem,
            **gen_native,
            "verified": verified is True,
            "promoted_from": promoted_from if isinstance(promoted_from, str) else None,
            "promoted_at": promoted_at.isoformat() if promoted_at else None,
        },
    )
