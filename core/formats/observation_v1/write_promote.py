"""Promote: one new comprehension document citing the observations given."""

from __future__ import annotations

import re
from datetime import UTC, datetime, time
from pathlib import Path
from typing import Any

from ...errors import ParseError, RefusedError
from ...model import Memory, ScanResult
from ...text.dates import parse_datetime
from ...text.paths import has_path_syntax
from ...text.yamledit import render_scalar
from ...write.journal import FileChange, Plan
from ...write.writes import FileSnapshot, snapshot
from .adapter import ObservationV1Adapter
from .documents import parse_document
from .schema import (
    ARCHIVE_DIR,
    COMPREHENSION_DIR,
    COMPREHENSION_SPEC,
    CONFIDENCE_LEVELS,
    FORMAT_ID,
    KIND_COMPREHENSION,
    KIND_OBSERVATION,
)
from .write_fields import _used_ids
from .write_files import _load, _show, _vault_path

_SEQUENCE = re.compile(r"^comp-.*-(\d+)$")
_SLUG_LIMIT = 40
#: Ids memlens gives a new file: safe as a file name on every system.
_FILE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,119}")


def _plan_promote(memories: list[Memory], options: dict[str, Any]) -> Plan:
    root = _promoted_vault(memories)
    sources: list[Memory] = []
    # Every observation the new document is written from, as read now: apply
    # refuses if one of them changed in between (their text and ids are in it).
    reads: list[FileSnapshot] = []
    for m in memories:
        if all(s.id != m.id for s in sources):
            doc = _load(m)
            sources.append(doc.fresh)
            reads.append(doc.snap)

    scan = ObservationV1Adapter().scan(root)
    _add_cited(root, scan, options, sources, reads)
    ids = [s.id for s in sources]
    first = sources[0]

    topic = _text_option(options, "topic", first.title or _event(first))
    domain = _text_option(options, "domain", _project(sources) or "general")
    events = [_event(s) for s in sources]
    statement = _text_option(options, "statement", "; ".join(e for e in events if e) or topic)
    belief = _prior_belief(first)
    prior_statement = _text_option(
        options,
        "prior_statement",
        f"The belief recorded in {belief}."
        if belief
        else f"No belief about this was recorded before {', '.join(ids)}.",
    )
    reasoning = _text_option(options, "reasoning", f"Promoted with memlens from {', '.join(ids)}.")
    confidence = _level(options, "confidence", "medium")
    prior_confidence = _level(options, "prior_confidence", "unknown")
    stamp = _stamp(options)

    used = _used_ids(scan)
    new_id, dst = _new_id(root, options, domain, used)
    rel = f"{COMPREHENSION_DIR}/{dst.name}"

    nl = "\n"
    id_list = "".join(f"  - {render_scalar(i)}{nl}" for i in ids)
    text = (
        f"---{nl}"
        f"spec: {COMPREHENSION_SPEC}{nl}"
        f"id: {render_scalar(new_id)}{nl}"
        f"version: 1{nl}"
        f"topic: {render_scalar(topic)}{nl}"
        f"domain: {render_scalar(domain)}{nl}"
        f"created: {stamp}{nl}"
        f"updated: {stamp}{nl}"
        f"verified: false{nl}"
        f"prior:{nl}"
        f"  statement: {render_scalar(prior_statement)}{nl}"
        f"  confidence: {prior_confidence}{nl}"
        f"  source: {'accumulated' if belief else 'none'}{nl}"
        f"observations:{nl}{id_list}"
        f"posterior:{nl}"
        f"  statement: {render_scalar(statement)}{nl}"
        f"  confidence: {confidence}{nl}"
        f"  update_reasoning: {render_scalar(reasoning)}{nl}"
        f"  observations_used:{nl}{id_list.replace('  - ', '    - ')}"
        f"---{nl}"
        f"{nl}"
        f"# Comprehension: {_one_line(topic)}{nl}"
        f"{nl}"
        f"{statement}{nl}"
        f"{nl}"
        f"## Observations{nl}"
        f"{nl}" + "".join(f"- {s.id}: {_one_line(_event(s))}{nl}" for s in sources)
    )
    _check_promoted(root, rel, text, new_id, topic, domain, ids, statement)
    return Plan(
        action="promote",
        vault_root=root,
        memory_ids=[*ids, new_id],
        summary=f"promote: create {rel} citing {', '.join(ids)}",
        changes=[FileChange("create", dst, snapshot(dst), data=text.encode("utf-8"))],
        reads=reads,
    )


def _promoted_vault(memories: list[Memory]) -> Path:
    """The one vault whose observations are promoted; RefusedError for anything else."""
    if not memories:
        raise RefusedError("promote: no observation given")
    root = memories[0].vault_root
    for m in memories:
        if m.format != FORMAT_ID:
            raise RefusedError(f"{m.id} is a {m.format} memory, not {FORMAT_ID}")
        if m.vault_root != root:
            raise RefusedError(
                f"{m.id} is in another vault; promote cites one vault's observations"
            )
        if m.kind != KIND_OBSERVATION:
            raise RefusedError(f"{m.id} is a {m.kind}; only observations are promoted")
    return root


def _add_cited(
    root: Path,
    scan: ScanResult,
    options: dict[str, Any],
    sources: list[Memory],
    reads: list[FileSnapshot],
) -> None:
    """Add the observations `options["observations"]` names to `sources` (and their reads)."""
    observations = {m.id: m for m in scan.memories if m.kind == KIND_OBSERVATION}
    extra = options.get("observations") or []
    if isinstance(extra, str) or not isinstance(extra, list | tuple):
        raise RefusedError("observations: must be a list of observation ids")
    for ref in extra:
        if not isinstance(ref, str) or not ref:
            raise RefusedError(f"observations: {_show(ref)} is not an observation id")
        if has_path_syntax(ref):
            raise RefusedError(f"observations: {ref!r} has path syntax; not an observation id")
        if any(s.id == ref for s in sources):
            continue
        found = observations.get(ref)
        if found is None:
            raise RefusedError(f"observations: {ref!r} is not a valid observation in this vault")
        sources.append(found)
        reads.append(snapshot(_vault_path(root, found.path)))


def _check_promoted(
    root: Path,
    rel: str,
    text: str,
    new_id: str,
    topic: str,
    domain: str,
    ids: list[str],
    statement: str,
) -> None:
    """The new comprehension must be valid and read back with what was written."""
    try:
        made = parse_document(root, rel, text, KIND_COMPREHENSION, False)
    except ParseError as err:
        raise RefusedError(
            f"promote: the new comprehension would be invalid: {err.detail}"
        ) from None
    fields = made.fields
    posterior = fields.get("posterior") or {}
    if (
        made.id != new_id
        or fields.get("topic") != topic
        or fields.get("domain") != domain
        or fields.get("observations") != ids
        or posterior.get("statement") != statement
        or posterior.get("observations_used") != ids
    ):
        raise RefusedError("promote: the new comprehension would not read back as intended")


def _event(memory: Memory) -> str:
    event = memory.fields.get("event")
    return event if isinstance(event, str) else memory.title


def _project(memories: list[Memory]) -> str | None:
    for m in memories:
        context = m.fields.get("context")
        project = context.get("project") if isinstance(context, dict) else None
        if isinstance(project, str) and project.strip():
            return project.strip()
    return None


def _prior_belief(memory: Memory) -> str | None:
    context = memory.fields.get("context")
    belief = context.get("prior_belief") if isinstance(context, dict) else None
    return belief if isinstance(belief, str) and belief.strip() else None


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _text_option(options: dict[str, Any], name: str, default: str) -> str:
    value = options.get(name)
    if value is None:
        value = default
    if not isinstance(value, str) or not value.strip():
        raise RefusedError(f"{name}: {_show(value)} must be non-empty text")
    return value


def _level(options: dict[str, Any], name: str, default: str) -> str:
    value = options.get(name)
    if value is None:
        return default
    if value not in CONFIDENCE_LEVELS:
        raise RefusedError(f"{name}: {_show(value)} is not one of {'/'.join(CONFIDENCE_LEVELS)}")
    return str(value)


def _stamp(options: dict[str, Any]) -> str:
    """`YYYY-MM-DDTHH:MM:SSZ` for created/updated: the option, else the clock."""
    for name in ("now", "as_of"):
        value = options.get(name)
        if value is None:
            continue
        when = parse_datetime(value) if not isinstance(value, bool) else None
        if when is None:
            raise RefusedError(f"{name}: {_show(value)} is not an ISO date or datetime")
        if not isinstance(when, datetime):
            when = datetime.combine(when, time(0, 0), tzinfo=UTC)
        break
    else:
        when = datetime.now(UTC)  # the one clock read (promote without now/as_of)
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    slug = slug[:_SLUG_LIMIT].rstrip("-")
    return slug or "general"


def _new_id(
    root: Path, options: dict[str, Any], domain: str, used: dict[str, str]
) -> tuple[str, Path]:
    """The new comprehension's id and file; never one in use, never overwriting."""
    taken_files = {
        p.stem
        for folder in (COMPREHENSION_DIR, f"{ARCHIVE_DIR}/{COMPREHENSION_DIR}")
        for p in (root / folder).glob("*.md")
        if (root / folder).is_dir()
    }

    def target(name: str) -> Path:
        return _vault_path(root, f"{COMPREHENSION_DIR}/{name}.md")

    wanted = options.get("id")
    if wanted is not None:
        if not isinstance(wanted, str) or not wanted.strip():
            raise RefusedError(f"id: {_show(wanted)} is not a usable id")
        if has_path_syntax(wanted):
            raise RefusedError(f"id: {wanted!r} has path syntax; an id must be a bare name")
        if not _FILE_ID.fullmatch(wanted):
            raise RefusedError(
                f"id: {wanted!r} must be letters, digits, '.', '_' or '-' (up to 120),"
                " starting with a letter or digit: it names the new file"
            )
        if wanted in used:
            raise RefusedError(f"id: {wanted!r} is already used by {used[wanted]}")
        if wanted in taken_files:
            raise RefusedError(f"id: a file {wanted}.md already exists in {COMPREHENSION_DIR}/")
        return wanted, target(wanted)
    slug_source = options.get("slug")
    slug = _slug(slug_source if isinstance(slug_source, str) else domain)
    numbers = [int(m.group(1)) for i in (*used, *taken_files) if (m := _SEQUENCE.match(i))]
    n = max(numbers, default=0) + 1
    while True:
        name = f"comp-{slug}-{n:03d}"
        if name not in used and name not in taken_files:
            return name, target(name)
        n += 1
