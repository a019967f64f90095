"""Reading observation files: bytes decoded strictly a section at a time, sections made memories.

A window of sections is what both a full read and a rescan parse.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...model import Memory, Problem, Reason
from .classify import (
    _ISO_DATE_IN_TEXT,
    FALLBACK_TYPE,
    TYPE_TTL,
    UNTAGGED_IMPORTANCE,
    _explicit_basis,
    classify,
    effective_type,
)
from .files import ARCHIVED_MD, FORMAT_ID, problem
from .ids import IdAllocator, _RecordingIds, section_base_id, short_title, slugify
from .sections import _DC_TOKEN, Section, _dc_fields, _parse_section
from .validation import KNOWN_KEYS, _check_fields, _Invalid

_AUTO_ARCHIVE_TITLE = re.compile(r"^auto-archived\b", re.IGNORECASE)
_WHOLE_LINE_DC_COMMENT = re.compile(r"^\s*<!--(.*?)-->\s*$")

#: A heading line's start is the byte after this (or the file's first byte).
_HEADING_BYTES = re.compile(rb"\n## ")
_BOM = b"\xef\xbb\xbf"


def _bad_detail(n: int, piece: bytes, at: int) -> str:
    return f"line {n} is not valid UTF-8 (byte 0x{piece[at]:02x})"


def _section_lines(chunk: bytes, base: int) -> tuple[list[str], tuple[int, str] | None]:
    """Lines of one section's bytes as `_decode_lines` reads them, and its first bad line.

    `base` is the file line index of the chunk's first line.  The chunk is
    decoded at once; only a chunk with a bad byte is decoded line by line.
    """
    try:
        text = chunk.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        lines = text.split("\n")
        if text.endswith("\n"):
            lines.pop()
        if "\r" in text:
            lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
        return lines, None
    raw = chunk.split(b"\n")
    if chunk.endswith(b"\n"):
        raw.pop()
    out: list[str] = []
    bad: tuple[int, str] | None = None
    for i, piece in enumerate(raw):
        if piece.endswith(b"\r"):
            piece = piece[:-1]
        try:
            out.append(piece.decode("utf-8"))
        except UnicodeDecodeError as exc:
            if bad is None:
                bad = (base + i + 1, _bad_detail(base + i + 1, piece, exc.start))
            out.append(piece.decode("utf-8", "replace"))
    return out, bad


def _bad_lines(chunk: bytes) -> list[tuple[int, str]]:
    """(1-based line, detail) of every undecodable line of a chunk starting the file."""
    try:
        chunk.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return []
    raw = chunk.split(b"\n")
    if chunk.endswith(b"\n"):
        raw.pop()
    out: list[tuple[int, str]] = []
    for n, piece in enumerate(raw, 1):
        if piece.endswith(b"\r"):
            piece = piece[:-1]
        try:
            piece.decode("utf-8")
        except UnicodeDecodeError as exc:
            out.append((n, _bad_detail(n, piece, exc.start)))
    return out


@dataclass(slots=True)
class _Window:
    """Sections read from part of a file (see `_parse_window`)."""

    heads: list[int] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    nmem: list[int] = field(default_factory=list)
    nprob: list[int] = field(default_factory=list)
    takes: list[tuple[tuple[str, str], ...]] = field(default_factory=list)
    memories: list[Memory] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    npre: int = 0


def parse_window(
    root: Path,
    rel: str,
    data: bytes,
    start: int,
    end: int,
    line0: int,
    k0: int,
    ids: _RecordingIds,
    *,
    at_start: bool,
    at_end: bool,
) -> _Window:
    """Sections whose headings start in `data[start:end]` (whole lines).

    `start` is a heading line (file line index `line0`, section number
    `k0` counting from 0), or the start of the file (`at_start`: the
    preamble is read too).  `at_end`: the window runs to the end of the
    file.  Lines are decoded strictly, a section at a time (line by line
    only when a section holds a bad byte).
    """
    archived = rel == ARCHIVED_MD
    win = _Window()
    line = line0
    if at_start:
        pos = 3 if data.startswith(_BOM) else 0
        starts = [pos] if pos < end and data.startswith(b"## ", pos) else []
        starts.extend(m.start() + 1 for m in _HEADING_BYTES.finditer(data, pos, end))
        pre_end = starts[0] if starts else end
        if pre_end > pos:
            chunk = data[pos:pre_end]
            for n, detail in _bad_lines(chunk):
                win.problems.append(
                    problem(root, rel, Reason.ENCODING, f"preamble {detail}", at_line=n)
                )
            line = chunk.count(b"\n")
        win.npre = len(win.problems)
    else:
        starts = [start]
        starts.extend(m.start() + 1 for m in _HEADING_BYTES.finditer(data, start, end))
    out, problems = win.memories, win.problems
    count = len(starts)
    for idx, head in enumerate(starts):
        stop = starts[idx + 1] if idx + 1 < count else end
        sec_lines, bad = _section_lines(data[head:stop], line)
        taken, got, failed = len(ids.taken), len(out), len(problems)
        parse_one(
            root,
            rel,
            sec_lines,
            bad,
            k0 + idx,
            line,
            at_end and idx + 1 == count,
            archived,
            ids,
            out,
            problems,
        )
        win.heads.append(head)
        win.lines.append(line)
        win.nmem.append(len(out) - got)
        win.nprob.append(len(problems) - failed)
        win.takes.append(tuple(ids.taken[taken:]))
        line += len(sec_lines)
    return win


def parse_one(
    root: Path,
    rel: str,
    lines: list[str],
    bad: tuple[int, str] | None,
    k: int,
    base: int,
    last: bool,
    archived: bool,
    ids: IdAllocator,
    out: list[Memory],
    problems: list[Problem],
) -> None:
    """One section (`lines`, its heading first, at file line index `base`)."""
    title = lines[0][3:].strip()
    if archived and _AUTO_ARCHIVE_TITLE.match(title):
        sec = _parse_section(lines, k + 1, 0, len(lines), base)
        sec.last = last
        auto_archived(root, rel, sec, lines, ids, out, problems, base=base)
        return
    sid = ids.take(section_base_id(title))
    if bad is not None:
        problems.append(
            problem(
                root,
                rel,
                Reason.ENCODING,
                bad[1],
                id=sid,
                index=k + 1,
                title=title,
                at_line=bad[0],
            )
        )
        return
    sec = _parse_section(lines, k + 1, 0, len(lines), base)
    sec.last = last
    try:
        out.append(section_memory(root, rel, sec, sid, archived=archived))
    except _Invalid as inv:
        problems.append(
            problem(
                root,
                rel,
                inv.reason,
                inv.detail,
                id=sid,
                index=sec.index,
                title=sec.title,
                at_line=sec.comment_line or sec.start_line,
            )
        )


def section_memory(root: Path, rel: str, sec: Section, sid: str, *, archived: bool) -> Memory:
    if sec.unclosed:
        where = "the end of the file" if sec.last else "the next section"
        raise _Invalid(
            Reason.MALFORMED_METADATA,
            f"'<!--' metadata comment is never closed with '-->' before {where}",
        )
    native: dict[str, Any] = {
        "start_line": sec.start_line,
        "end_line": sec.end_line,
        "comment_line": sec.comment_line,
        "comment_end_line": sec.comment_end_line,
        "body_start_line": sec.body_start_line,
        "tagged": sec.tagged,
    }
    if sec.tagged:
        # Archived sections no longer decay, so the decay fields are not
        # required there (the reference archives on dc:importance alone).
        meta = _check_fields(sec.fields, require=not archived)
        kind = effective_type(meta.declared_type)
        content = classify(sec.title, sec.body)
        native.update(
            declared_type=meta.declared_type,
            base_importance=meta.importance,
            ttl=meta.ttl,
            ttl_explicit=meta.ttl_explicit,
            date=meta.when.isoformat() if meta.when else None,
            decayed=meta.decayed.isoformat() if meta.decayed else None,
            classified_type=None,
            classification_basis=_explicit_basis(kind, content),
            classification_signals=list(content.signals) if content.type != kind else [],
        )
        if sec.duplicate_keys:
            native["duplicate_keys"] = list(sec.duplicate_keys)
        fields: dict[str, Any] = dict(sec.fields)
        extra = {k: v for k, v in sec.fields.items() if k not in KNOWN_KEYS}
        importance = meta.importance
        confidence = meta.confidence
        created = meta.when
        source = sec.fields.get("dc:source")
        pinned = meta.ttl_explicit and meta.ttl is None
    else:
        content = classify(sec.title, sec.body)
        kind = FALLBACK_TYPE
        native.update(
            declared_type=None,
            base_importance=UNTAGGED_IMPORTANCE,
            ttl=TYPE_TTL[FALLBACK_TYPE],
            ttl_explicit=False,
            date=None,
            decayed=None,
            classified_type=content.type,
            classification_basis=content.basis,
            classification_signals=list(content.signals),
        )
        fields, extra = {}, {}
        importance, confidence, created, source = UNTAGGED_IMPORTANCE, None, None, None
        pinned = False
    native["type"] = kind
    return Memory(
        format=FORMAT_ID,
        vault_root=root,
        id=sid,
        kind=kind,
        title=sec.title,
        body=sec.body,
        path=rel,
        importance=importance,
        confidence=confidence,
        created=created,
        source=source,
        index=sec.index,
        fields=fields,
        extra=extra,
        pinned=pinned,
        archived=archived,
        native=native,
    )


def auto_archived(
    root: Path,
    rel: str,
    sec: Section,
    lines: list[str],
    ids: IdAllocator,
    out: list[Memory],
    problems: list[Problem],
    *,
    base: int = 0,
) -> None:
    """A `## Auto-archived by decay (date)` block: one entry per comment line.

    The reference decay run appends only the metadata comment lines it
    archived under such a heading; each becomes one archived memory whose
    body is whatever plain lines follow it.
    """
    entries: list[tuple[int, str, list[str]]] = []
    for n in range(sec.start_line + 1, sec.end_line + 1):
        text = lines[n - 1 - base]
        m = _WHOLE_LINE_DC_COMMENT.match(text)
        if m and _DC_TOKEN.search(m.group(1)):
            entries.append((n, text.strip(), []))
        elif entries:
            entries[-1][2].append(text)
    when = _ISO_DATE_IN_TEXT.search(sec.title)
    for n, comment, body_lines in entries:
        fields, dups = _dc_fields(comment[4:-3])
        body = "\n".join(body_lines).strip("\n")
        typ = fields.get("dc:type") or "observation"
        title = short_title(body) or (
            f"{typ} observation of {fields.get('dc:date', 'unknown date')}"
        )
        digest = hashlib.sha1(comment.encode("utf-8", "surrogatepass")).hexdigest()[:6]
        sid = ids.take(f"{slugify(f'auto-archived-{typ}')}-{digest}")
        sub = Section(
            index=sec.index,
            title=title,
            start_line=n,
            end_line=n + len(body_lines),
            comment_line=n,
            comment_end_line=n,
            comment=comment,
            fields=fields,
            duplicate_keys=dups,
            body=body,
            body_start_line=n + 1,
        )
        try:
            memory = section_memory(root, rel, sub, sid, archived=True)
        except _Invalid as inv:
            problems.append(
                problem(
                    root,
                    rel,
                    inv.reason,
                    inv.detail,
                    id=sid,
                    index=sec.index,
                    title=title,
                    at_line=n,
                )
            )
            continue
        memory.native["auto_archived_on"] = when.group(0) if when else None
        memory.native["archive_heading_line"] = sec.start_line
        out.append(memory)
