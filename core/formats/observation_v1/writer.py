"""observation-v1 actions: what pin, edit, promote, archive and restore mean here.

DESIGN.md, observation-v1 column:

- pin / unpin: add `pinned: true` as the last header line (kept as an extra
  field) / remove the `pinned` line.
- set: rewrite only the header lines of the fields that change.  Native names
  are accepted, plus `parent.child` for one level inside a mapping
  (`context.project`, `posterior.confidence`); for a comprehension,
  `confidence`, `statement` and `title` mean `posterior.confidence`,
  `posterior.statement` and `topic` unless the document has such a top-level
  key.  `spec` never changes; a new `id` must be a bare name not used in the
  vault (the file keeps its name; citations of the old id are not rewritten).
- edit body: replace the text after the closing fence; the header bytes, the
  BOM and the line-ending style stay as they were.
- promote: create `comprehension/<id>.md` (comprehension/v1) citing one or
  more observations; the observations are not touched.
- archive / restore: move the file to `archive/observations/` or
  `archive/comprehension/` and back; never over an existing file.

Every planner re-reads the file, re-parses it with the adapter and refuses
(ConflictError) if it no longer matches the Memory the user saw; the new
bytes are parsed again with the adapter's rules before a Plan is returned.

The one clock read: promote stamps `created`/`updated` with
`options["now"]` or `options["as_of"]` when given, else `datetime.now(UTC)`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Any, ClassVar

from ...errors import ConflictError, ParseError, RefusedError, UnsafePathError
from ...model import Memory, ScanResult
from ...safe_io import read_regular
from ...text.dates import parse_datetime
from ...text.frontmatter import load_frontmatter
from ...text.paths import has_path_syntax, is_inside, safe_join
from ...text.textio import BOM, decode_bytes
from ...text.yamledit import REMOVE, edit_frontmatter, render_scalar
from ...write.actions import register_writer
from ...write.journal import FileChange, Plan
from ...write.writes import FileSnapshot, snapshot
from .adapter import (
    ARCHIVE_DIR,
    COMPREHENSION_DIR,
    COMPREHENSION_SPEC,
    CONFIDENCE_LEVELS,
    FORMAT_ID,
    KIND_COMPREHENSION,
    KIND_OBSERVATION,
    OBSERVATIONS_DIR,
    ObservationV1Adapter,
    folder_of,
    parse_document,
)

#: Comprehension shorthands for `set`, used only when the document has no
#: top-level key of that name.
_COMPREHENSION_ALIASES: dict[str, str] = {
    "confidence": "posterior.confidence",
    "statement": "posterior.statement",
    "title": "topic",
}

_SEQUENCE = re.compile(r"^comp-.*-(\d+)$")
_SLUG_LIMIT = 40
#: Ids memlens gives a new file: safe as a file name on every system.
_FILE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,119}")


@dataclass(frozen=True, slots=True)
class _Loaded:
    """A document as it is on disk now, re-parsed and checked against the Memory."""

    root: Path
    rel: str
    path: Path
    data: bytes
    raw: str  # decoded text with the BOM and the original line endings
    newline: str
    snap: FileSnapshot
    kind: str
    archived: bool
    fresh: Memory


class ObservationV1Writer:
    """Plans actions on observation/v1 and comprehension/v1 documents."""

    format_id: ClassVar[str] = FORMAT_ID

    # -- pin / unpin -------------------------------------------------------

    def plan_pin(self, memory: Memory) -> Plan:
        doc = _load(memory)
        if doc.fresh.pinned:
            raise RefusedError(f"{doc.rel}: {memory.id} is already pinned")
        new = edit_frontmatter(doc.raw, {"pinned": True})
        after = _validate(doc, new, ["pinned"])
        if not after.pinned:
            raise RefusedError("pinned: the edit did not pin the memory; not written")
        verb = "set" if "pinned" in doc.fresh.fields else "add"
        return _write_plan("pin", doc, new, f"pin: {verb} 'pinned: true' in {doc.rel}")

    def plan_unpin(self, memory: Memory) -> Plan:
        doc = _load(memory)
        if "pinned" not in doc.fresh.fields:
            raise RefusedError(f"{doc.rel}: {memory.id} is not pinned")
        new = edit_frontmatter(doc.raw, {"pinned": REMOVE})
        _validate(doc, new, ["pinned"])
        return _write_plan("unpin", doc, new, f"unpin: remove 'pinned' from {doc.rel}")

    # -- edit metadata -----------------------------------------------------

    def plan_set(self, memory: Memory, changes: dict[str, Any]) -> Plan:
        if not changes:
            raise RefusedError("no field to set")
        doc = _load(memory)
        fields = doc.fresh.fields
        top: dict[str, Any] = {}
        nested: dict[tuple[str, str], Any] = {}
        for name, value in changes.items():
            key = _native_name(doc, str(name))
            if key == "spec":
                if value is not REMOVE and value == fields.get("spec"):
                    continue
                raise RefusedError(
                    f"spec: a document's spec ({fields.get('spec')!r}) cannot be changed"
                )
            if key == "id" and value is not REMOVE:
                _check_new_id(doc, value)
            if key in fields or "." not in key:
                if value is not REMOVE and key in fields and _same(fields[key], value):
                    continue
                if value is REMOVE and key not in fields:
                    continue
                top[key] = value
                continue
            parent, _, child = key.partition(".")
            if not parent or not child or "." in child:
                raise RefusedError(f"{key}: only one level inside a mapping can be set")
            block = fields.get(parent)
            if block is not None and not isinstance(block, dict):
                raise RefusedError(f"{key}: {parent} is not a mapping")
            current = block or {}
            if value is REMOVE and child not in current:
                continue
            if value is not REMOVE and child in current and _same(current[child], value):
                continue
            nested[(parent, child)] = value
        clash = {p for p, _ in nested} & set(top)
        if clash:
            name = sorted(clash)[0]
            raise RefusedError(f"{name}: set either the whole field or its parts, not both")
        if not top and not nested:
            raise RefusedError(f"{doc.rel}: nothing to change (the values are already set)")

        new = edit_frontmatter(doc.raw, top) if top else doc.raw
        for (parent, child), value in nested.items():
            new = _edit_nested(new, parent, child, value)
        changed = [*top, *(f"{p}.{c}" for p, c in nested)]
        _check_only(doc, new, top, nested)
        _validate(doc, new, changed)

        parts = [f"{k}={_show(v)}" for k, v in top.items()]
        parts += [f"{p}.{c}={_show(v)}" for (p, c), v in nested.items()]
        summary = f"set: {', '.join(parts)} in {doc.rel}"
        new_id = top.get("id")
        if isinstance(new_id, str):
            cited = [c for c in _strs(memory.native.get("incorporated_by")) if c]
            if cited:
                summary += f" (cited by {', '.join(cited)} under the old id; not rewritten)"
        return _write_plan("set", doc, new, summary)

    # -- edit body ---------------------------------------------------------

    def plan_edit_body(self, memory: Memory, body: str) -> Plan:
        doc = _load(memory)
        lines = doc.raw.splitlines(keepends=True)
        close = _closing_fence(lines)
        head = "".join(lines[: close + 1])
        text = body.replace("\r\n", "\n")
        if not head.endswith(("\n", "\r")) and text:
            head += doc.newline
        if doc.newline != "\n":
            text = text.replace("\n", doc.newline)
        new = head + text
        if new == doc.raw:
            raise RefusedError(f"{doc.rel}: the body is unchanged")
        after = _validate(doc, new, ["body"])
        if after.body != body.replace("\r\n", "\n"):
            raise RefusedError("body: the new body would not read back as written; not written")
        count = len(body.splitlines())
        return _write_plan(
            "edit_body", doc, new, f"edit body: replace the body of {doc.rel} ({count} lines)"
        )

    # -- promote -----------------------------------------------------------

    def plan_promote(self, memory: Memory, options: dict[str, Any]) -> Plan:
        return self.plan_promote_many([memory], options)

    def plan_promote_many(
        self, memories: Sequence[Memory], options: dict[str, Any] | None = None
    ) -> Plan:
        """One comprehension document citing every observation given.

        `options["observations"]` may name more observation ids of the same
        vault (they are cited too).  Other options: `topic`, `domain`,
        `statement` (posterior), `prior_statement`, `confidence` (posterior,
        default medium), `prior_confidence` (default unknown), `reasoning`,
        `id` (else `comp-<slug of domain>-<NNN>`), `slug`, `now` / `as_of`.
        """
        return _plan_promote(list(memories), dict(options or {}))

    # -- archive / restore -------------------------------------------------

    def plan_archive(
        self, memory: Memory, reason: str | None = None, *, as_of: date | None = None
    ) -> Plan:
        """Move to `archive/observations/` or `archive/comprehension/`.

        `as_of` is accepted for the writer protocol (decay runs pass it) and
        not used: observation-v1 has no decay and an archive records no date.
        """
        doc = _load(memory)
        if doc.archived:
            raise RefusedError(f"{doc.rel}: {memory.id} is already archived")
        folder = OBSERVATIONS_DIR if doc.kind == KIND_OBSERVATION else COMPREHENSION_DIR
        dst_rel = f"{ARCHIVE_DIR}/{folder}/{doc.path.name}"
        why = f" ({reason})" if reason else ""
        return _move_plan("archive", doc, dst_rel, f"archive: move {doc.rel} -> {dst_rel}{why}")

    def plan_restore(self, memory: Memory) -> Plan:
        doc = _load(memory)
        if not doc.archived:
            raise RefusedError(f"{doc.rel}: {memory.id} is not archived")
        folder = OBSERVATIONS_DIR if doc.kind == KIND_OBSERVATION else COMPREHENSION_DIR
        dst_rel = f"{folder}/{doc.path.name}"
        return _move_plan("restore", doc, dst_rel, f"restore: move {doc.rel} -> {dst_rel}")


WRITER = register_writer(ObservationV1Writer())


def plan_promote_many(memories: Iterable[Memory], options: dict[str, Any] | None = None) -> Plan:
    """Bulk promote: one comprehension document citing all `memories` (observations).

    See ObservationV1Writer.plan_promote_many for the options.  Apply the plan
    with core.journal.apply_plan; it is one undoable step.
    """
    return _plan_promote(list(memories), dict(options or {}))


# -- reading and checking ---------------------------------------------------


def _vault_path(root: Path, rel: str) -> Path:
    """`rel` inside `root` (realpath containment), never through a link."""
    try:
        path = safe_join(root, *rel.split("/"))
    except UnsafePathError as exc:
        raise RefusedError(f"{rel}: unsafe path: {exc}") from None
    if path.is_symlink():
        raise RefusedError(f"{rel} is a symbolic link; memlens does not write through links")
    return path


def _load(memory: Memory) -> _Loaded:
    """Re-read and re-parse `memory`'s file; ConflictError if it changed."""
    if memory.format != FORMAT_ID:
        raise RefusedError(f"{memory.id} is a {memory.format} memory, not {FORMAT_ID}")
    root = memory.vault_root
    rel = memory.path
    where = folder_of(rel)
    if where is None:
        raise RefusedError(f"{rel} is not in an observation-v1 folder")
    kind, archived = where
    path = _vault_path(root, rel)
    changed = f"{rel}: {memory.id} changed on disk since it was read"
    try:
        data = read_regular(path)
    except FileNotFoundError:
        raise ConflictError(f"{changed} (the file is gone)") from None
    snap = snapshot(path, data)
    try:
        decoded = decode_bytes(data, rel)
        fresh = parse_document(root, rel, decoded.text, kind, archived)
    except ParseError as err:
        raise ConflictError(f"{changed} (it is now invalid: {err.detail})") from None
    if fresh.id != memory.id or fresh.body != memory.body or not _same(fresh.fields, memory.fields):
        raise ConflictError(changed)
    return _Loaded(
        root=root,
        rel=rel,
        path=path,
        data=data,
        raw=data.decode("utf-8"),
        newline=decoded.newline,
        snap=snap,
        kind=kind,
        archived=archived,
        fresh=fresh,
    )


def _validate(doc: _Loaded, new_text: str, changed: list[str]) -> Memory:
    """Parse the new text with the adapter's rules; RefusedError naming the field."""
    try:
        decoded = decode_bytes(new_text.encode("utf-8"), doc.rel)
        return parse_document(doc.root, doc.rel, decoded.text, doc.kind, doc.archived)
    except ParseError as err:
        raise RefusedError(_field_message(changed, err.detail)) from None


def _field_message(changed: list[str], detail: str) -> str:
    for name in changed:
        if detail.startswith((name, name.split(".", 1)[0])):
            return detail
    if detail.startswith("lacks "):
        return f"{detail.removeprefix('lacks ')}: required, cannot be removed or left empty"
    return f"{', '.join(changed)}: {detail}"


def _same(a: Any, b: Any) -> bool:
    """Equal values (NaN-safe: a value read twice compares equal to itself)."""
    return bool(a == b) or (type(a) is type(b) and repr(a) == repr(b))


def _strs(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _show(value: Any, limit: int = 40) -> str:
    if value is REMOVE:
        return "(removed)"
    try:
        text = render_scalar(value)
    except RefusedError:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _write_plan(action: str, doc: _Loaded, new_text: str, summary: str) -> Plan:
    return Plan(
        action=action,
        vault_root=doc.root,
        memory_ids=[doc.fresh.id],
        summary=summary,
        changes=[FileChange("write", doc.path, doc.snap, data=new_text.encode("utf-8"))],
    )


def _move_plan(action: str, doc: _Loaded, dst_rel: str, summary: str) -> Plan:
    dst = _vault_path(doc.root, dst_rel)
    if dst.exists() or dst.is_symlink():
        raise RefusedError(
            f"{dst_rel} already exists; memlens never overwrites it (move or rename it first)"
        )
    if not is_inside(doc.root, dst.parent):
        raise RefusedError(f"{dst_rel} would leave the vault")
    return Plan(
        action=action,
        vault_root=doc.root,
        memory_ids=[doc.fresh.id],
        summary=summary,
        changes=[FileChange("move", doc.path, doc.snap, dst=dst)],
    )


# -- set helpers -------------------------------------------------------------


def _native_name(doc: _Loaded, name: str) -> str:
    name = name.strip()
    if doc.kind == KIND_COMPREHENSION and name not in doc.fresh.fields:
        return _COMPREHENSION_ALIASES.get(name, name)
    return name


def _used_ids(result: ScanResult, skip_path: str | None = None) -> dict[str, str]:
    """Every id in a scanned vault (valid or not) -> the file that holds it."""
    used: dict[str, str] = {}
    for m in result.memories:
        if m.path != skip_path:
            used.setdefault(m.id, m.path)
    for p in result.problems:
        if p.id is not None and p.path != skip_path:
            used.setdefault(p.id, p.path)
    return used


def _check_new_id(doc: _Loaded, value: Any) -> None:
    if not isinstance(value, str) or not value.strip():
        raise RefusedError(f"id: {_show(value)} is not a usable id (a non-empty string)")
    if has_path_syntax(value) or value != value.strip():
        raise RefusedError(f"id: {value!r} has path syntax or spaces; an id must be a bare name")
    if value == doc.fresh.id:
        return
    owner = _used_ids(ObservationV1Adapter().scan(doc.root), skip_path=doc.rel).get(value)
    if owner is not None:
        raise RefusedError(f"id: {value!r} is already used by {owner}")


def _header_lines(text: str) -> tuple[list[str], int]:
    lines = text.splitlines(keepends=True)
    return lines, _closing_fence(lines)


def _closing_fence(lines: list[str]) -> int:
    """Index of the closing `---`/`...` line (the file was parsed, so it exists)."""
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r\n").rstrip() in ("---", "..."):
            return i
    raise RefusedError("the frontmatter block is never closed")


def _ending(line: str, default: str) -> str:
    if line.endswith("\r\n"):
        return "\r\n"
    if line.endswith("\n"):
        return "\n"
    return default


def _edit_nested(text: str, parent: str, child: str, value: Any) -> str:
    """Set (or REMOVE) `parent.child`, rewriting only that line when possible.

    The child lines of a block mapping are dedented into a small document,
    edited with edit_frontmatter (which keeps comments, quoting and order),
    and indented back.  A flow mapping (`context: {a: 1}`) or a missing
    parent is rewritten as one line.
    """
    lines, close = _header_lines(text)
    pattern = re.compile(
        rf"^(?:{re.escape(parent)}|'{re.escape(parent)}'|\"{re.escape(parent)}\"):"
    )
    start = next((i for i in range(1, close) if pattern.match(lines[i])), None)
    data, _ = load_frontmatter(text.lstrip(BOM).replace("\r\n", "\n"), "header")
    current = data.get(parent)
    if start is None or lines[start].partition(":")[2].split("#", 1)[0].strip():
        merged = dict(current) if isinstance(current, dict) else {}
        if value is REMOVE:
            merged.pop(child, None)
        else:
            merged[child] = value
        return edit_frontmatter(text, {parent: merged})
    end = start + 1
    while end < close and (not lines[end].strip() or lines[end][0] in " \t"):
        end += 1
    while end - 1 > start and not lines[end - 1].strip():
        end -= 1
    block = lines[start + 1 : end]
    body = [ln for ln in block if ln.strip()]
    newline = _ending(lines[0], "\n")
    if not body:
        if value is REMOVE:
            return text
        return edit_frontmatter(text, {parent: {child: value}})
    indent = body[0][: len(body[0]) - len(body[0].lstrip(" \t"))]
    if any(not ln.startswith(indent) for ln in body):
        raise RefusedError(
            f"{parent}.{child}: the {parent} block is indented unevenly; edit the whole field"
        )
    inner = "".join(ln[len(indent) :] if ln.strip() else ln for ln in block)
    edited = edit_frontmatter(f"---{newline}{inner}---{newline}", {child: value})
    new_lines, new_close = _header_lines(edited)
    new_block = [indent + ln if ln.strip() else ln for ln in new_lines[1:new_close]]
    head = lines[start]
    if not any(ln.strip() for ln in new_block):
        # The last child went: `parent:` alone would be null, which the model
        # rejects for a mapping, so the emptied block is written as `{}`.
        key, _, rest = head.partition(":")
        head = f"{key}: {{}}{rest}"
    return "".join([*lines[:start], head, *new_block, *lines[end:]])


def _check_only(
    doc: _Loaded, new_text: str, top: dict[str, Any], nested: dict[tuple[str, str], Any]
) -> None:
    """The new header must equal the old one with exactly the asked changes."""
    try:
        after, _ = load_frontmatter(new_text.lstrip(BOM).replace("\r\n", "\n"), doc.rel)
    except ParseError as err:
        raise RefusedError(f"the edit would make the header invalid: {err.detail}") from None
    expected: dict[str, Any] = dict(doc.fresh.fields)
    for key, value in top.items():
        if value is REMOVE:
            expected.pop(key, None)
        else:
            expected[key] = value
    for (parent, child), value in nested.items():
        block = dict(expected.get(parent) or {})
        if value is REMOVE:
            block.pop(child, None)
        else:
            block[child] = value
        expected[parent] = block
    if not _same(_plain(after), _plain(expected)):
        raise RefusedError("the edit would change more than the fields asked for; not written")


def _plain(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


# -- promote -----------------------------------------------------------------


def _plan_promote(memories: list[Memory], options: dict[str, Any]) -> Plan:
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
    return Plan(
        action="promote",
        vault_root=root,
        memory_ids=[*ids, new_id],
        summary=f"promote: create {rel} citing {', '.join(ids)}",
        changes=[FileChange("create", dst, snapshot(dst), data=text.encode("utf-8"))],
        reads=reads,
    )


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
