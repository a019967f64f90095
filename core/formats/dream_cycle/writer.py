"""Dream Cycle actions: what pin, edit, promote, archive and restore mean here.

DESIGN.md, dream-cycle column.  Every change is made on the file's byte lines,
so only the lines that must change change; the BOM, each line's CRLF/LF and
every other byte stay as they were (invalid sections are never touched).

- pin: set `dc:ttl=never` in the section's comment and remember the value it
  replaced in `dc:ttl_before_pin=<old>` (`none` when there was no dc:ttl).  An
  untagged section gets a new comment line right after its heading with the
  explicit Phase 3 defaults, so it stays valid:
  `<!-- dc:type=fact dc:importance=5.0 dc:ttl=never dc:date=<today>
  dc:ttl_before_pin=untagged -->`.
- unpin: put back the `dc:ttl` recorded in `dc:ttl_before_pin` (or remove
  `dc:ttl` when none was recorded, so the type's default applies); a comment
  that pin created and nobody changed since is removed again.
- set: rewrite only the comment line(s).  Names: `type`, `importance`, `ttl`,
  `confidence`, `source`, `date`, `decayed` or any `dc:*` (the `dc:` prefix is
  optional); a value of None (or yamledit.REMOVE) removes an optional field.
  Setting a field of an untagged section writes a new comment with the Phase 3
  defaults (type fact, importance 5.0, date today) plus the change.
- edit body: replace the section's body; heading and comment are untouched.
  A body line starting with `## ` would split the section and is refused.
- promote: Phase 3 tagging.  An untagged section gets explicit `dc:type` (the
  classification, or `options["type"]`), `dc:importance` (5.0 or
  `options["importance"]`) and `dc:date` (`options["as_of"]` or today).  A
  tagged section is retyped only to a longer-TTL type the user chooses; a new
  importance given there counts from the promote date (`dc:decayed`).
- archive: remove the section's lines from observations.md and append one
  archive.jsonl entry in the spec's shape (`id`, `original_date`, `impact`,
  `type`, `ttl_days`, `importance`, `archived_reason`, `full_text`) plus
  `section_id`, `after_section` and `archived_on`; one plan, both files.
  The id is `OBS-<original date>-<NNN>`, unique among archive ids; `impact`
  is the band of the recorded importance; `importance` the current one;
  `full_text` is the section's exact text (heading, comment, body).
- restore: put the section back into observations.md after the section it
  followed (`after_section`), or at the end when that one is gone or unknown,
  and append a restore marker `{"id": ..., "restored": true, "restored_on":
  ..., "section_id": ...}` to archive.jsonl.  archive.jsonl is append-only:
  the entry's line is never deleted; the adapter hides entries that a later
  marker restored.  Entries written by other tools (full_text is not a
  section) get a heading from their first sentence and a comment from the
  entry's type/importance/ttl/original_date; their importance is the value at
  archive time, so `dc:decayed` is set to the restore date.  Sections in
  archived-observations.md move back into observations.md.

Every planner re-reads the files, re-scans the vault with the adapter, and
refuses (ConflictError) when the memory no longer matches what the user saw;
the new bytes are scanned again with the adapter (in a private temporary
folder) before a plan is returned.

The clock is read only when no date is given: `DreamCycleWriter.clock`
(default `date.today`) dates pin/set/promote tags, `archived_on` and
`restored_on`; decay runs pass `as_of`.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any, ClassVar

from ...decay import decay_of, importance_band
from ...errors import ConflictError, RefusedError, UnsafePathError
from ...model import Memory, ScanResult
from ...safe_io import read_regular
from ...text.dates import parse_date, parse_datetime
from ...text.paths import has_path_syntax, safe_join
from ...text.yamledit import REMOVE
from ...write.actions import register_writer
from ...write.journal import FileChange, Plan
from ...write.writes import FileSnapshot, check_unchanged, snapshot
from .adapter import (
    ARCHIVE_JSONL,
    ARCHIVED_MD,
    OBSERVATIONS,
    TYPE_TTL,
    DreamCycleAdapter,
    IdAllocator,
    Section,
    effective_type,
    parse_sections,
    section_base_id,
)

FORMAT_ID = "dream-cycle"
#: Where pin remembers the dc:ttl it replaced.
PIN_MARKER = "dc:ttl_before_pin"
PIN_NO_TTL = "none"
PIN_UNTAGGED = "untagged"
#: Phase 3 defaults written when a tag must be created.
DEFAULT_TYPE = "fact"
DEFAULT_IMPORTANCE = "5.0"
REQUIRED = ("dc:type", "dc:importance", "dc:date")

_BOM = b"\xef\xbb\xbf"
_TOKEN = re.compile(r"(?:^|(?<=\s))dc:([^\s=]+)=(\S*)")
_KEY = re.compile(r"dc:[A-Za-z0-9_.\-]+")
_NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$")
_INTEGER = re.compile(r"^\+?\d+$")
_ARCHIVE_ID = re.compile(r"^OBS-(\d{8})-(\d+)$")
_ALIASES = {"ttl_days": "dc:ttl", "kind": "dc:type"}


# ---------------------------------------------------------------------------
# Files as byte lines
# ---------------------------------------------------------------------------


@dataclass(slots=True)
class TextFile:
    """One vault file as read: its bytes, snapshot and lines.

    `raw` holds the lines with their own endings (BOM excluded); `lines` the
    same lines decoded (undecodable bytes replaced) without endings, 1:1.
    """

    path: Path
    rel: str
    data: bytes
    snap: FileSnapshot
    bom: bytes
    raw: list[bytes]
    lines: list[str]
    newline: bytes

    @property
    def exists(self) -> bool:
        return self.snap.exists

    def render(self, raw: list[bytes]) -> bytes:
        return self.bom + b"".join(raw)


def read_file(root: Path, rel: str) -> TextFile:
    """Read `rel` under `root` (it may be absent); never through a link."""
    path = safe_join(root, rel)
    if path.is_symlink():
        raise UnsafePathError(f"{rel} is a symbolic link; memlens does not write through links")
    try:
        data = read_regular(path)
    except FileNotFoundError:
        data = b""
        snap = snapshot(path)
    else:
        snap = snapshot(path, data)
    bom = _BOM if data.startswith(_BOM) else b""
    body = data[len(bom) :]
    parts = body.split(b"\n")
    raw = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        raw.append(parts[-1])
    lines = [_strip_ending(r).decode("utf-8", "replace") for r in raw]
    crlf = sum(1 for r in raw if r.endswith(b"\r\n"))
    lf = sum(1 for r in raw if r.endswith(b"\n")) - crlf
    return TextFile(path, rel, data, snap, bom, raw, lines, b"\r\n" if crlf > lf else b"\n")


def _strip_ending(line: bytes) -> bytes:
    if line.endswith(b"\r\n"):
        return line[:-2]
    if line.endswith(b"\n"):
        return line[:-1]
    return line


def _ending(line: bytes) -> bytes:
    return line[len(_strip_ending(line)) :]


def splice(f: TextFile, raw: list[bytes], start: int, stop: int, texts: list[str]) -> list[bytes]:
    """`raw` with lines [start, stop) replaced by `texts` (each ended with the file's newline)."""
    head = list(raw[:start])
    if texts and start == len(raw) and head and not head[-1].endswith(b"\n"):
        head[-1] += f.newline
    return head + [t.encode("utf-8") + f.newline for t in texts] + list(raw[stop:])


def section_ids(sections: list[Section]) -> list[str]:
    """Ids of observations.md sections exactly as the adapter allocates them."""
    alloc = IdAllocator()
    return [alloc.take(section_base_id(s.title)) for s in sections]


def sections_of(lines: list[str]) -> list[Section]:
    return parse_sections("".join(f"{ln}\n" for ln in lines))


# ---------------------------------------------------------------------------
# The vault as read at plan time
# ---------------------------------------------------------------------------


@dataclass(slots=True)
class VaultState:
    """observations.md, archive.jsonl and archived-observations.md as read now,
    the adapter's scan of exactly those bytes, and observations.md's sections."""

    root: Path
    obs: TextFile
    archive: TextFile
    archived_md: TextFile
    scan: ScanResult
    sections: list[Section]
    ids: list[str]

    def position(self, sid: str) -> int | None:
        try:
            return self.ids.index(sid)
        except ValueError:
            return None

    def archive_ids(self) -> set[str]:
        out: set[str] = set()
        for text in self.archive.lines:
            try:
                obj = json.loads(text.lstrip("\ufeff"))
            except (ValueError, RecursionError):
                continue
            if isinstance(obj, dict) and isinstance(obj.get("id"), str):
                out.add(obj["id"])
        return out


def read_state(root: Path) -> VaultState:
    """Read the vault's files, scan them, and make sure the scan saw those bytes."""
    root = Path(root)
    obs = read_file(root, OBSERVATIONS)
    if not obs.exists:
        raise RefusedError(f"{root}: no {OBSERVATIONS}; not a Dream Cycle vault")
    archive = read_file(root, ARCHIVE_JSONL)
    archived_md = read_file(root, ARCHIVED_MD)
    scan = DreamCycleAdapter().scan(root)
    for f in (obs, archive, archived_md):
        check_unchanged(f.snap)  # the scan must have seen the bytes we hold
    sections = sections_of(obs.lines)
    return VaultState(root, obs, archive, archived_md, scan, sections, section_ids(sections))


def scan_candidate(
    state: VaultState,
    *,
    obs: bytes | None = None,
    archive: bytes | None = None,
    archived_md: bytes | None = None,
) -> ScanResult:
    """The adapter's scan of the vault as it would be with these new bytes.

    The files are written to a private temporary folder (never the vault) and
    scanned there, so the check uses exactly the adapter's rules.
    """
    with tempfile.TemporaryDirectory(prefix="memlens-dc-check-") as tmp:
        folder = Path(tmp)
        for f, new in (
            (state.obs, obs),
            (state.archive, archive),
            (state.archived_md, archived_md),
        ):
            data = new if new is not None else (f.data if f.exists else None)
            if data is not None:
                (folder / f.rel).write_bytes(data)
        return DreamCycleAdapter().scan(folder)


def check_no_new_problems(before: ScanResult, after: ScanResult) -> None:
    """Refuse if the change would make anything else invalid."""
    old = Counter((p.path, p.reason) for p in before.problems)
    for p in after.problems:
        key = (p.path, p.reason)
        if old[key] > 0:
            old[key] -= 1
            continue
        where = f"section {p.index}" if p.index else f"line {p.line}" if p.line else p.path
        raise RefusedError(
            f"the change would leave {p.path} {where} invalid ({p.reason.value}: {p.detail});"
            " not written"
        )


def _find(result: ScanResult, sid: str, rel: str) -> Memory | None:
    return next((m for m in result.memories if m.id == sid and m.path == rel), None)


def _load(memory: Memory) -> tuple[VaultState, Memory]:
    """The vault now, and the memory as it is now; ConflictError if it changed."""
    if memory.format != FORMAT_ID:
        raise RefusedError(f"{memory.id} is a {memory.format} memory, not {FORMAT_ID}")
    if has_path_syntax(memory.id):
        raise RefusedError(f"id: {memory.id!r} has path syntax; refusing it")
    state = read_state(memory.vault_root)
    fresh = _find(state.scan, memory.id, memory.path)
    if fresh is None:
        bad = next(
            (p for p in state.scan.problems if p.id == memory.id and p.path == memory.path), None
        )
        if bad is not None:
            raise ConflictError(
                f"{memory.path}: {memory.id} changed on disk since it was read"
                f" and is now invalid ({bad.detail})"
            )
        raise ConflictError(
            f"{memory.path}: {memory.id} changed on disk since it was read (it is no longer there)"
        )
    if (fresh.fields, fresh.body, fresh.title, fresh.archived) != (
        memory.fields,
        memory.body,
        memory.title,
        memory.archived,
    ):
        raise ConflictError(f"{memory.path}: {memory.id} changed on disk since it was read")
    return state, fresh


def _section(state: VaultState, fresh: Memory) -> tuple[int, Section]:
    """The fresh memory's section in observations.md, located by id."""
    if fresh.path != OBSERVATIONS or fresh.archived:
        raise RefusedError(f"{fresh.id} is archived ({fresh.path}); restore it first")
    pos = state.position(fresh.id)
    if pos is None:
        raise ConflictError(f"{OBSERVATIONS}: {fresh.id} changed on disk since it was read")
    sec = state.sections[pos]
    if sec.title != fresh.title or sec.start_line != fresh.native.get("start_line"):
        raise ConflictError(f"{OBSERVATIONS}: {fresh.id} changed on disk since it was read")
    return pos, sec


# ---------------------------------------------------------------------------
# dc comments
# ---------------------------------------------------------------------------


def _comment_span(lines: list[str], sec: Section) -> tuple[int, int, str, int, int]:
    """(first, last) 0-based comment lines, their joined text, `<!--` and `-->` offsets."""
    assert sec.comment_line is not None and sec.comment_end_line is not None
    first, last = sec.comment_line - 1, sec.comment_end_line - 1
    region = "\n".join(lines[first : last + 1])
    open_at = region.find("<!--")
    close_at = region.find("-->", open_at + 4)
    if open_at < 0 or close_at < 0:
        raise ConflictError(f"{OBSERVATIONS}: the metadata comment of '{sec.title}' moved")
    return first, last, region, open_at, close_at


def edit_inner(inner: str, changes: dict[str, str | None]) -> str:
    """Edit `dc:key=value` tokens in a comment's inner text, touching nothing else.

    A changed value is replaced in place (first occurrence, as the adapter
    reads it); a None value removes the token and one run of spaces; a new key
    is added before the closing `-->`.
    """
    for key, value in changes.items():
        name = key[3:]
        m = next((t for t in _TOKEN.finditer(inner) if t.group(1) == name), None)
        if value is None:
            if m is None:
                continue
            s, e = m.start(), m.end()
            j = s
            while j > 0 and inner[j - 1] in " \t":
                j -= 1
            if j > 0 and inner[j - 1] != "\n":
                s = j
            else:
                while e < len(inner) and inner[e] in " \t":
                    e += 1
            inner = inner[:s] + inner[e:]
        elif m is not None:
            inner = inner[: m.start(2)] + value + inner[m.end(2) :]
        else:
            core = inner.rstrip()
            trail = inner[len(core) :]
            sep = " " if core and not core[-1].isspace() else ""
            inner = f"{core}{sep}{key}={value}{trail}"
    return inner


def rewrite_comment(
    f: TextFile, raw: list[bytes], sec: Section, changes: dict[str, str | None]
) -> list[bytes]:
    """`raw` with only the section's comment line(s) rewritten (line endings kept)."""
    first, last, region, open_at, close_at = _comment_span(f.lines, sec)
    inner = edit_inner(region[open_at + 4 : close_at], changes)
    new_lines = (region[: open_at + 4] + inner + region[close_at:]).split("\n")
    if len(new_lines) != last - first + 1:
        raise RefusedError("the metadata edit would change the comment's line count; not written")
    out = list(raw)
    for k, text in enumerate(new_lines):
        old = f.lines[first + k]
        if text != old:
            out[first + k] = text.encode("utf-8") + _ending(raw[first + k])
    return out


def _show_fields(fields: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in fields.items())


def _new_comment(fields: dict[str, str]) -> str:
    return f"<!-- {_show_fields(fields)} -->"


def _apply_changes(fields: dict[str, str], changes: dict[str, str | None]) -> dict[str, str]:
    out = dict(fields)
    for k, v in changes.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = v
    return out


# ---------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------


def _label(key: str) -> str:
    return key[3:] if key.startswith("dc:") else key


def field_key(name: object) -> str:
    """The dc key for a `set` field name (`importance`, `dc:importance`, ...)."""
    if not isinstance(name, str) or not name.strip():
        raise RefusedError(f"{name!r}: not a field name")
    key = name.strip()
    key = _ALIASES.get(key, key)
    if key in ("title", "heading"):
        raise RefusedError(
            f"{key}: the heading is not metadata (the section id derives from it);"
            " edit it in the file"
        )
    if key in ("body", "text"):
        raise RefusedError(f"{key}: use edit body to change the section's text")
    if not key.startswith("dc:"):
        key = f"dc:{key}"
    if not _KEY.fullmatch(key):
        raise RefusedError(f"{_label(key)}: not a usable dc field name (letters, digits, _ . -)")
    return key


def _num_text(x: float | int) -> str:
    if isinstance(x, int):
        return str(x)
    text = repr(x)
    if "e" in text or "E" in text:
        text = f"{x:.10f}".rstrip("0")
        text = text + "0" if text.endswith(".") else text
    return text


def field_value(key: str, value: Any) -> str | None:
    """The text to write for `key`, validated; None means remove the field."""
    label = _label(key)
    if value is None or value is REMOVE:
        return None
    if isinstance(value, bool):
        raise RefusedError(f"{label}: {value!r} is not a valid value (true/false)")
    if isinstance(value, list | tuple | dict | set):
        raise RefusedError(f"{label}: must be a single value, not {type(value).__name__}")
    if key in ("dc:importance", "dc:confidence"):
        high = 10.0 if key == "dc:importance" else 1.0
        if isinstance(value, int | float):
            if value != value or value in (float("inf"), float("-inf")):
                raise RefusedError(f"{label}: {value!r} is not a number")
            text = _num_text(value)
            number = float(value)
        elif isinstance(value, str) and _NUMBER.match(value.strip()):
            text = value.strip()
            number = float(text)
        else:
            raise RefusedError(f"{label}: {value!r} is not a number")
        if not 0.0 <= number <= high:
            raise RefusedError(f"{label}: {text} is outside 0.0-{high:.1f}")
        return text
    if key in ("dc:date", "dc:decayed"):
        if isinstance(value, datetime):
            raise RefusedError(f"{label}: {value.isoformat()} is not a YYYY-MM-DD date")
        when = value if isinstance(value, date) else parse_date(str(value))
        if when is None:
            raise RefusedError(f"{label}: {value!r} is not a YYYY-MM-DD date")
        return when.isoformat()
    if key == "dc:ttl":
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        text = str(value).strip()
        if text.lower() == "never":
            return "never"
        if not _INTEGER.match(text):
            raise RefusedError(f"ttl: {value!r} is not a whole number of days or 'never'")
        return str(int(text))
    if isinstance(value, date):
        text = value.isoformat()
    elif isinstance(value, int | float):
        text = _num_text(value)
    else:
        text = str(value).strip()
    if not text:
        raise RefusedError(f"{label}: empty value (use null to remove the field)")
    if any(c.isspace() for c in text):
        raise RefusedError(f"{label}: {text!r} contains spaces; a dc value is one word")
    if "-->" in text or "<!--" in text:
        raise RefusedError(f"{label}: {text!r} would break the metadata comment")
    return text


def _as_date(value: Any, name: str) -> date | None:
    if value is None:
        return None
    when = parse_datetime(value) if not isinstance(value, bool) else None
    if when is None:
        raise RefusedError(f"{name}: {value!r} is not an ISO date")
    return when.date() if isinstance(when, datetime) else when


def _short(text: str, limit: int = 60) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


# ---------------------------------------------------------------------------
# Archive entries
# ---------------------------------------------------------------------------


def section_text(lines: list[str], sec: Section) -> list[str]:
    """The section's lines, heading to last non-empty line."""
    block = lines[sec.start_line - 1 : sec.end_line]
    while len(block) > 1 and block[-1] == "":
        block.pop()
    return block


def next_archive_id(day: date, used: Iterable[str]) -> str:
    """`OBS-YYYYMMDD-NNN`, one past the highest NNN of that day among `used`, never in `used`.

    The date is formatted by hand: `strftime("%Y")` drops the zero padding of
    years before 1000 on some platforms, so two year-1 sections would get
    the same id and block the whole decay run.
    """
    stamp = f"{day.year:04d}{day.month:02d}{day.day:02d}"
    taken = set(used)
    top = 0
    for u in taken:
        m = _ARCHIVE_ID.match(u)
        if m and m.group(1) == stamp:
            top = max(top, int(m.group(2)))
    n = top + 1
    while f"OBS-{stamp}-{n:03d}" in taken:
        n += 1
    return f"OBS-{stamp}-{n:03d}"


def archive_entry(
    state: VaultState,
    memory: Memory,
    sec: Section,
    after: str | None,
    reason: str,
    current: float | None,
    as_of: date,
    used: set[str],
) -> dict[str, Any]:
    """The spec-shaped archive.jsonl entry for one section (id added to `used`)."""
    native = memory.native
    tagged = bool(native.get("tagged"))
    original = parse_date(native.get("date")) or as_of
    base = native.get("base_importance")
    base_f = float(base) if isinstance(base, int | float) else float(DEFAULT_IMPORTANCE)
    ttl = native.get("ttl")
    eid = next_archive_id(original, used)
    used.add(eid)
    return {
        "id": eid,
        "original_date": original.isoformat(),
        "impact": importance_band(base_f).lower(),
        "type": (native.get("declared_type") or DEFAULT_TYPE) if tagged else DEFAULT_TYPE,
        "ttl_days": ttl if isinstance(ttl, int) else "never",
        "importance": float(current) if current is not None else base_f,
        "archived_reason": reason,
        "full_text": "\n".join(section_text(state.obs.lines, sec)),
        "section_id": memory.id,
        "after_section": after,
        "archived_on": as_of.isoformat(),
    }


def append_lines(f: TextFile, objects: list[dict[str, Any]]) -> bytes:
    """archive.jsonl's bytes with one JSON line per object appended."""
    data = f.data
    nl = f.newline if f.raw else b"\n"
    if data and not data.endswith(b"\n"):
        data += nl
    for obj in objects:
        data += json.dumps(obj, ensure_ascii=False).encode("utf-8") + nl
    return data


def archive_change(f: TextFile, data: bytes) -> FileChange:
    if f.exists:
        return FileChange("write", f.path, f.snap, data=data, append_only=True)
    return FileChange("create", f.path, f.snap, data=data)


def remove_sections(state: VaultState, raw: list[bytes], positions: Iterable[int]) -> list[bytes]:
    """`raw` without the given sections' lines (heading through trailing blanks)."""
    out = list(raw)
    for pos in sorted(set(positions), reverse=True):
        sec = state.sections[pos]
        out = splice(state.obs, out, sec.start_line - 1, sec.end_line, [])
    return out


def after_of(state: VaultState, pos: int, leaving: set[int]) -> str | None:
    """Id of the nearest section before `pos` that stays (None: it would be first)."""
    for p in range(pos - 1, -1, -1):
        if p not in leaving:
            return state.ids[p]
    return None


# ---------------------------------------------------------------------------
# The writer
# ---------------------------------------------------------------------------


class DreamCycleWriter:
    """Plans actions on Dream Cycle sections and archive entries."""

    format_id: ClassVar[str] = FORMAT_ID

    def __init__(self, clock: Callable[[], date] = date.today) -> None:
        #: The one clock read: dates for new tags and archive stamps.
        self.clock = clock

    # -- helpers -------------------------------------------------------------

    def _plan(
        self,
        action: str,
        state: VaultState,
        ids: list[str],
        summary: str,
        changes: list[FileChange],
    ) -> Plan:
        return Plan(action, state.root, ids, summary, changes)

    def _meta_plan(
        self,
        action: str,
        state: VaultState,
        fresh: Memory,
        sec: Section,
        changes: dict[str, str | None],
        summary: str,
        *,
        create: dict[str, str] | None = None,
        drop_comment: bool = False,
    ) -> Plan:
        """Rewrite (or create, or drop) one section's comment; validate; plan."""
        raw = state.obs.raw
        if drop_comment:
            first, last, region, open_at, close_at = _comment_span(state.obs.lines, sec)
            if region[:open_at].strip() or region[close_at + 3 :].strip():
                raise RefusedError("the comment shares its line with other text; not removed")
            new_raw = splice(state.obs, raw, first, last + 1, [])
            expected: dict[str, str] = {}
        elif create is not None:
            fields = _apply_changes(create, changes)
            new_raw = splice(state.obs, raw, sec.start_line, sec.start_line, [_new_comment(fields)])
            expected = fields
        else:
            new_raw = rewrite_comment(state.obs, raw, sec, changes)
            expected = _apply_changes(dict(sec.fields), changes)
        new = state.obs.render(new_raw)
        if new == state.obs.data:
            raise RefusedError(f"{OBSERVATIONS}: nothing to change (the values are already set)")
        after = scan_candidate(state, obs=new)
        self._check_section(state, after, fresh, expected_fields=expected)
        return self._plan(
            action,
            state,
            [fresh.id],
            summary,
            [FileChange("write", state.obs.path, state.obs.snap, data=new, append_only=True)],
        )

    @staticmethod
    def _check_section(
        state: VaultState,
        after: ScanResult,
        fresh: Memory,
        *,
        expected_fields: dict[str, str] | None = None,
        expected_body: str | None = None,
    ) -> Memory:
        """The edited section must read back valid, with exactly the expected content."""
        got = _find(after, fresh.id, OBSERVATIONS)
        if got is None:
            bad = next((p for p in after.problems if p.id == fresh.id), None)
            if bad is not None:
                raise RefusedError(f"{bad.detail}; not written")
            raise RefusedError(f"the edit would lose section '{fresh.title}'; not written")
        if expected_fields is not None and list(got.fields.items()) != list(
            expected_fields.items()
        ):
            raise RefusedError("the edit would change more than the fields asked for; not written")
        body = fresh.body if expected_body is None else expected_body
        if got.body != body or got.title != fresh.title:
            raise RefusedError("the section would not read back as intended; not written")
        check_no_new_problems(state.scan, after)
        return got

    # -- pin / unpin -------------------------------------------------------

    def plan_pin(self, memory: Memory) -> Plan:
        state, fresh = _load(memory)
        _pos, sec = _section(state, fresh)
        title = _short(sec.title)
        if not sec.tagged:
            today = self.clock().isoformat()
            fields = {
                "dc:type": DEFAULT_TYPE,
                "dc:importance": DEFAULT_IMPORTANCE,
                "dc:ttl": "never",
                "dc:date": today,
                PIN_MARKER: PIN_UNTAGGED,
            }
            return self._meta_plan(
                "pin",
                state,
                fresh,
                sec,
                {},
                f"pin: write a dc comment with dc:ttl=never in untagged section '{title}'"
                f" (Phase 3 defaults: dc:type=fact dc:importance=5.0 dc:date={today})",
                create=fields,
            )
        old = sec.fields.get("dc:ttl")
        if old is not None and old.strip().lower() == "never":
            raise RefusedError(f"{OBSERVATIONS}: '{title}' is already pinned (dc:ttl=never)")
        changes: dict[str, str | None] = {
            "dc:ttl": "never",
            PIN_MARKER: old if old is not None else PIN_NO_TTL,
        }
        was = f"dc:ttl={old}" if old is not None else "no dc:ttl"
        return self._meta_plan(
            "pin",
            state,
            fresh,
            sec,
            changes,
            f"pin: set dc:ttl=never in section '{title}' (was {was})",
        )

    def plan_unpin(self, memory: Memory) -> Plan:
        state, fresh = _load(memory)
        _pos, sec = _section(state, fresh)
        title = _short(sec.title)
        ttl = sec.fields.get("dc:ttl")
        if not sec.tagged or ttl is None or ttl.strip().lower() != "never":
            raise RefusedError(f"{OBSERVATIONS}: '{title}' is not pinned (no dc:ttl=never)")
        marker = sec.fields.get(PIN_MARKER)
        kind = effective_type(sec.fields.get("dc:type"))
        default = TYPE_TTL[kind]
        default_text = "never" if default is None else f"{default} days"
        if marker == PIN_UNTAGGED:
            pristine = (
                set(sec.fields) == {"dc:type", "dc:importance", "dc:ttl", "dc:date", PIN_MARKER}
                and sec.fields.get("dc:type") == DEFAULT_TYPE
                and sec.fields.get("dc:importance") == DEFAULT_IMPORTANCE
                and sec.comment_line == sec.comment_end_line
            )
            if pristine:
                return self._meta_plan(
                    "unpin",
                    state,
                    fresh,
                    sec,
                    {},
                    f"unpin: remove the dc comment pin wrote in section '{title}' (untagged again)",
                    drop_comment=True,
                )
            changes: dict[str, str | None] = {"dc:ttl": None, PIN_MARKER: None}
            what = f"remove dc:ttl=never (the type's TTL applies: {default_text})"
        elif marker is None or marker == PIN_NO_TTL:
            changes = {"dc:ttl": None, PIN_MARKER: None}
            what = f"remove dc:ttl=never (the type's TTL applies: {default_text})"
            if marker is None:
                what += "; no earlier dc:ttl was recorded"
        else:
            old = field_value("dc:ttl", marker) if marker.strip() else None
            if old is None or old == "never":
                raise RefusedError(
                    f"{_label(PIN_MARKER)}: {marker!r} is not a TTL to restore; set ttl by hand"
                )
            changes = {"dc:ttl": old, PIN_MARKER: None}
            what = f"restore dc:ttl={old}"
        return self._meta_plan(
            "unpin", state, fresh, sec, changes, f"unpin: {what} in section '{title}'"
        )

    # -- edit metadata -----------------------------------------------------

    def plan_set(self, memory: Memory, changes: dict[str, Any]) -> Plan:
        if not changes:
            raise RefusedError("no field to set")
        state, fresh = _load(memory)
        _pos, sec = _section(state, fresh)
        title = _short(sec.title)
        wanted: dict[str, str | None] = {}
        for name, value in changes.items():
            key = field_key(name)
            wanted[key] = field_value(key, value)
        base = dict(sec.fields) if sec.tagged else {}
        for key, value in wanted.items():
            if value is None and key in REQUIRED and (sec.tagged or key in base):
                raise RefusedError(
                    f"{_label(key)}: required in a tagged section (dc:type, dc:importance,"
                    " dc:date); it cannot be removed"
                )
        effective = {
            k: v
            for k, v in wanted.items()
            if not (v is None and k not in base) and not (v is not None and base.get(k) == v)
        }
        if not effective:
            raise RefusedError(f"{OBSERVATIONS}: nothing to change (the values are already set)")
        shown = ", ".join(
            f"{_label(k)}={v}" if v is not None else f"remove {_label(k)}"
            for k, v in effective.items()
        )
        if sec.tagged:
            return self._meta_plan(
                "set", state, fresh, sec, effective, f"set: {shown} in section '{title}'"
            )
        today = self.clock().isoformat()
        defaults = {
            "dc:type": DEFAULT_TYPE,
            "dc:importance": DEFAULT_IMPORTANCE,
            "dc:date": today,
        }
        filled = [f"{k}={v}" for k, v in defaults.items() if k not in effective]
        note = f" (untagged: new dc comment with Phase 3 defaults {' '.join(filled)})"
        return self._meta_plan(
            "set",
            state,
            fresh,
            sec,
            effective,
            f"set: {shown} in section '{title}'" + (note if filled else " (new dc comment)"),
            create=defaults,
        )

    # -- edit body ---------------------------------------------------------

    def plan_edit_body(self, memory: Memory, body: str) -> Plan:
        if not isinstance(body, str):
            raise RefusedError("body: must be text")
        text = body.replace("\r\n", "\n").replace("\r", "\n").strip("\n")
        new_lines = text.split("\n") if text else []
        for n, line in enumerate(new_lines, 1):
            if line.startswith("## "):
                raise RefusedError(
                    f"body: line {n} starts with '## ', which would split the section in two;"
                    " use '### ' for a sub-heading"
                )
        state, fresh = _load(memory)
        _pos, sec = _section(state, fresh)
        if not sec.tagged:
            first = next((ln for ln in new_lines if ln), "")
            if first.lstrip().startswith("<!--"):
                raise RefusedError(
                    "body: an untagged section's body cannot start with '<!--': it would be"
                    " read as a metadata comment"
                )
        raw = list(state.obs.raw)
        lines = list(state.obs.lines)
        begin = sec.start_line  # 0-based index of the line after the heading
        if sec.tagged and sec.comment_end_line is not None:
            _first, last_c, region, _open, close_at = _comment_span(lines, sec)
            begin = last_c + 1
            tail = region[close_at + 3 :]
            if tail.strip():
                # Body text after `-->` on the comment's line: cut it; the new
                # body below replaces it.
                keep = lines[last_c][: len(lines[last_c]) - len(tail)]
                raw[last_c] = keep.encode("utf-8") + _ending(raw[last_c])
                lines[last_c] = keep
        stop = sec.end_line
        region_lines = lines[begin:stop]
        lead = 0
        while lead < len(region_lines) and region_lines[lead] == "":
            lead += 1
        trail = 0
        while (
            trail < len(region_lines) - lead and region_lines[len(region_lines) - 1 - trail] == ""
        ):
            trail += 1
        if lead == len(region_lines):
            lead, trail = 0, len(region_lines)
        replacement = list(new_lines)
        if replacement and trail == 0 and not sec.last:
            replacement.append("")  # keep a blank line before the next heading
        new_raw = splice(state.obs, raw, begin + lead, stop - trail, replacement)
        new = state.obs.render(new_raw)
        if new == state.obs.data:
            raise RefusedError(f"{OBSERVATIONS}: the body is unchanged")
        after = scan_candidate(state, obs=new)
        self._check_section(
            state, after, fresh, expected_fields=dict(fresh.fields), expected_body=text
        )
        return self._plan(
            "edit_body",
            state,
            [fresh.id],
            f"edit body: replace the body of section '{_short(sec.title)}'"
            f" ({len(new_lines)} lines)",
            [FileChange("write", state.obs.path, state.obs.snap, data=new, append_only=True)],
        )

    # -- promote -----------------------------------------------------------

    def plan_promote(self, memory: Memory, options: dict[str, Any]) -> Plan:
        state, fresh = _load(memory)
        _pos, sec = _section(state, fresh)
        title = _short(sec.title)
        when = _as_date(options.get("as_of"), "as_of") or self.clock()
        chosen = options.get("type")
        if chosen is not None:
            if not isinstance(chosen, str) or chosen.strip().lower() not in TYPE_TTL:
                raise RefusedError(
                    f"type: {chosen!r} is not one of the seven types ({', '.join(TYPE_TTL)})"
                )
            chosen = chosen.strip().lower()
        importance = options.get("importance")
        imp_text = field_value("dc:importance", importance) if importance is not None else None
        if not sec.tagged:
            classified = fresh.native.get("classified_type")
            typ = chosen or (classified if isinstance(classified, str) else DEFAULT_TYPE)
            basis = (
                "chosen"
                if chosen
                else f"classified: {fresh.native.get('classification_basis', 'default')}"
            )
            fields = {
                "dc:type": typ,
                "dc:importance": imp_text or DEFAULT_IMPORTANCE,
                "dc:date": when.isoformat(),
            }
            ttl = TYPE_TTL[typ]
            ttl_text = "never expires" if ttl is None else f"TTL {ttl} days"
            return self._meta_plan(
                "promote",
                state,
                fresh,
                sec,
                {},
                f"promote: tag section '{title}' with {_show_fields(fields)}"
                f" ({typ} {basis}; {ttl_text})",
                create=fields,
            )
        changes: dict[str, str | None] = {}
        parts: list[str] = []
        current_kind = effective_type(sec.fields.get("dc:type"))
        if chosen is not None and chosen != current_kind:
            new_ttl, old_ttl = TYPE_TTL[chosen], TYPE_TTL[current_kind]
            if not _longer(new_ttl, old_ttl):
                raise RefusedError(
                    f"type: {chosen} ({_ttl_text(new_ttl)}) does not live longer than"
                    f" {current_kind} ({_ttl_text(old_ttl)}); promote only raises the TTL"
                )
            changes["dc:type"] = chosen
            parts.append(f"dc:type={chosen} ({_ttl_text(new_ttl)})")
            explicit = sec.fields.get("dc:ttl")
            if explicit is not None and explicit.strip().lower() != "never":
                try:
                    days: int | None = int(explicit)
                except ValueError:
                    days = None
                if days is None or _longer(new_ttl, days):
                    changes["dc:ttl"] = "never" if new_ttl is None else str(new_ttl)
                    parts.append(f"dc:ttl={changes['dc:ttl']}")
        if imp_text is not None:
            now = _current_importance(fresh, when)
            if float(imp_text) < now:
                raise RefusedError(
                    f"importance: {imp_text} is below the current importance {now};"
                    " promote only raises it (use set to lower it)"
                )
            if imp_text != sec.fields.get("dc:importance") or sec.fields.get("dc:decayed"):
                changes["dc:importance"] = imp_text
                start = parse_date(sec.fields.get("dc:date"))
                if start is not None and when > start:
                    changes["dc:decayed"] = when.isoformat()
                    parts.append(f"dc:importance={imp_text} as of {when.isoformat()}")
                else:
                    parts.append(f"dc:importance={imp_text}")
        if not changes:
            raise RefusedError(
                f"{OBSERVATIONS}: '{title}' is already tagged"
                f" (dc:type={sec.fields.get('dc:type')}); choose a longer-TTL type"
                " or a higher importance to promote it"
            )
        return self._meta_plan(
            "promote",
            state,
            fresh,
            sec,
            changes,
            f"promote: {', '.join(parts)} in section '{title}'",
        )

    # -- archive -----------------------------------------------------------

    def plan_archive(
        self, memory: Memory, reason: str | None = None, *, as_of: date | None = None
    ) -> Plan:
        state, fresh = _load(memory)
        pos, sec = _section(state, fresh)
        when = as_of or self.clock()
        current = decay_of(fresh, when).current_importance
        label = reason.strip() if isinstance(reason, str) and reason.strip() else "manual"
        used = state.archive_ids() | {m.id for m in state.scan.memories}
        entry = archive_entry(
            state, fresh, sec, after_of(state, pos, {pos}), label, current, when, used
        )
        new_obs = state.obs.render(remove_sections(state, state.obs.raw, [pos]))
        new_arc = append_lines(state.archive, [entry])
        check_archived(state, new_obs, new_arc, {fresh.id: entry})
        return self._plan(
            "archive",
            state,
            [fresh.id, entry["id"]],
            f"archive: move section '{_short(sec.title)}' to {ARCHIVE_JSONL} as {entry['id']}"
            f" ({label})",
            [
                FileChange("write", state.obs.path, state.obs.snap, data=new_obs, append_only=True),
                archive_change(state.archive, new_arc),
            ],
        )

    # -- restore -----------------------------------------------------------

    def plan_restore(self, memory: Memory) -> Plan:
        state, fresh = _load(memory)
        if not fresh.archived:
            raise RefusedError(f"{fresh.id} is not archived")
        when = self.clock()
        if fresh.path == ARCHIVE_JSONL:
            return self._restore_jsonl(state, fresh, when)
        if fresh.path == ARCHIVED_MD:
            return self._restore_md(state, fresh, when)
        raise RefusedError(f"{fresh.path}: not an archive memlens knows how to restore from")

    def _restore_jsonl(self, state: VaultState, fresh: Memory, when: date) -> Plan:
        entry = fresh.fields
        lines = _entry_section(fresh, when)
        after = entry.get("after_section", _AT_END)
        new_raw, at = _insert_section(state, lines, after)
        new_obs = state.obs.render(new_raw)
        new_sections = sections_of(read_lines_of(state.obs, new_raw))
        new_ids = section_ids(new_sections)
        sid = next(
            (i for s, i in zip(new_sections, new_ids, strict=True) if s.start_line == at + 1), None
        )
        if sid is None:
            raise RefusedError(f"{fresh.id}: full_text does not start a section; not restored")
        marker = {
            "id": fresh.id,
            "restored": True,
            "restored_on": when.isoformat(),
            "section_id": sid,
        }
        new_arc = append_lines(state.archive, [marker])
        after_scan = scan_candidate(state, obs=new_obs, archive=new_arc)
        _check_restored(state, after_scan, fresh, sid, len(new_sections))
        if after is None and state.sections:
            where = "before the first section, where it was"
        elif isinstance(after, str) and after in state.ids[:-1]:
            where = f"after section {after}, where it was"
        else:
            where = "at the end"
        return self._plan(
            "restore",
            state,
            [fresh.id, sid],
            f"restore: {fresh.id} back into {OBSERVATIONS} as section '{_short(lines[0][3:])}'"
            f" ({where}); {ARCHIVE_JSONL} keeps the entry and gets a restore marker",
            [
                FileChange("write", state.obs.path, state.obs.snap, data=new_obs, append_only=True),
                archive_change(state.archive, new_arc),
            ],
        )

    def _restore_md(self, state: VaultState, fresh: Memory, when: date) -> Plan:
        f = state.archived_md
        start = fresh.native.get("start_line")
        end = fresh.native.get("end_line")
        if not isinstance(start, int) or not isinstance(end, int) or not 1 <= start <= end:
            raise RefusedError(f"{ARCHIVED_MD}: cannot locate {fresh.id}")
        block = f.lines[start - 1 : end]
        while len(block) > 1 and block[-1] == "":
            block.pop()
        if block and block[0].startswith("## "):
            lines = block
        else:
            # An entry under "## Auto-archived by decay (date)": a comment
            # line and its body; it needs a heading of its own.
            lines = [f"## {_heading(fresh.title or fresh.id)}", *block]
            on = parse_date(fresh.native.get("auto_archived_on"))
            comment = block[0] if block else ""
            if on is not None and "dc:decayed=" not in comment and "-->" in comment:
                cut = comment.rfind("-->")
                core = comment[:cut].rstrip()
                lines[1] = f"{core} dc:decayed={on.isoformat()} {comment[cut:]}"
        for line in lines[1:]:
            if line.startswith("## "):
                raise RefusedError(
                    f"{fresh.id}: the archived text holds a '## ' line; not restored"
                )
        new_raw, at = _insert_section(state, lines, _AT_END)
        new_obs = state.obs.render(new_raw)
        new_md = f.render(splice(f, f.raw, start - 1, end, []))
        new_sections = sections_of(read_lines_of(state.obs, new_raw))
        new_ids = section_ids(new_sections)
        sid = next(
            (i for s, i in zip(new_sections, new_ids, strict=True) if s.start_line == at + 1), None
        )
        if sid is None:
            raise RefusedError(f"{fresh.id}: the archived text does not start a section")
        after_scan = scan_candidate(state, obs=new_obs, archived_md=new_md)
        _check_restored(state, after_scan, fresh, sid, len(new_sections))
        return self._plan(
            "restore",
            state,
            [fresh.id, sid],
            f"restore: move '{_short(fresh.title)}' from {ARCHIVED_MD} back into {OBSERVATIONS}",
            [
                FileChange("write", state.obs.path, state.obs.snap, data=new_obs, append_only=True),
                FileChange("write", f.path, f.snap, data=new_md, append_only=True),
            ],
        )


class _AtEnd:
    """Sentinel: append the restored section at the end of observations.md."""


_AT_END: Any = _AtEnd()


def read_lines_of(f: TextFile, raw: list[bytes]) -> list[str]:
    return [_strip_ending(r).decode("utf-8", "replace") for r in raw]


def _heading(title: str) -> str:
    return " ".join(title.split()) or "Restored observation"


def _ttl_text(ttl: int | None) -> str:
    return "TTL never" if ttl is None else f"TTL {ttl} days"


def _longer(new: int | None, old: int | None) -> bool:
    if old is None:
        return False
    return new is None or new > old


def _current_importance(memory: Memory, when: date) -> float:
    value = decay_of(memory, when).current_importance
    return float(value) if value is not None else 0.0


def _entry_section(fresh: Memory, when: date) -> list[str]:
    """The section lines to restore from an archive.jsonl entry."""
    entry = fresh.fields
    full = str(entry.get("full_text", "")).replace("\r\n", "\n").replace("\r", "\n")
    lines = full.strip("\n").split("\n")
    if lines and lines[0].startswith("## "):
        secs = parse_sections("\n".join(lines) + "\n")
        if len(secs) == 1 and secs[0].start_line == 1:
            return lines
    # Written by another tool: full_text is plain text.
    for line in lines:
        if line.startswith("## "):
            raise RefusedError(
                f"{fresh.id}: full_text holds a line starting with '## '; restoring it would"
                " split it into several sections"
            )
    out = [f"## {_heading(fresh.title or fresh.id)}"]
    typ = entry.get("type")
    imp = entry.get("importance")
    if typ is not None or imp is not None:
        fields: dict[str, str] = {
            "dc:type": str(typ) if isinstance(typ, str) and typ.strip() else DEFAULT_TYPE,
            "dc:importance": _num_text(imp) if isinstance(imp, int | float) else DEFAULT_IMPORTANCE,
        }
        ttl = entry.get("ttl_days")
        if ttl is not None:
            fields["dc:ttl"] = str(ttl)
        created = fresh.created
        day = created.date() if isinstance(created, datetime) else created
        fields["dc:date"] = day.isoformat() if day is not None else when.isoformat()
        if isinstance(imp, int | float) and day is not None and when > day:
            # The archived importance is the value at archive time: count
            # further decay from the restore, not again from original_date.
            fields["dc:decayed"] = when.isoformat()
        out.append(_new_comment(fields))
    out.extend(lines)
    return out


def _insert_section(state: VaultState, lines: list[str], after: Any) -> tuple[list[bytes], int]:
    """observations.md's raw lines with `lines` inserted; and the heading's 0-based line."""
    obs = state.obs
    raw = obs.raw
    target: int | None = None  # insert before this section position
    if after is None:
        target = 0 if state.sections else None
    elif isinstance(after, str):
        pos = state.position(after)
        if pos is not None and pos + 1 < len(state.sections):
            target = pos + 1
    if target is not None:
        at = state.sections[target].start_line - 1
        return splice(obs, raw, at, at, [*lines, ""]), at
    texts = list(lines)
    if obs.lines and obs.lines[-1] != "":
        texts.insert(0, "")
    at = len(raw) + (1 if texts[0] == "" else 0)
    return splice(obs, raw, len(raw), len(raw), texts), at


def _check_restored(
    state: VaultState, after: ScanResult, fresh: Memory, sid: str, n_sections: int
) -> None:
    got = _find(after, sid, OBSERVATIONS)
    if got is None:
        bad = next((p for p in after.problems if p.id == sid), None)
        detail = f": {bad.detail}" if bad is not None else ""
        raise RefusedError(f"{fresh.id}: the restored section would not be valid{detail}")
    if _find(after, fresh.id, fresh.path) is not None:
        raise RefusedError(f"{fresh.id}: the entry would still be listed as archived")
    if n_sections != len(state.sections) + 1:
        raise RefusedError(f"{fresh.id}: restoring would not add exactly one section")
    check_no_new_problems(state.scan, after)


def check_archived(
    state: VaultState,
    new_obs: bytes,
    new_arc: bytes | None,
    entries: dict[str, dict[str, Any]],
) -> ScanResult:
    """The archived sections are gone, their entries read back; nothing else broke."""
    after = scan_candidate(state, obs=new_obs, archive=new_arc)
    for sid, entry in entries.items():
        got = _find(after, entry["id"], ARCHIVE_JSONL)
        if got is None or not got.archived or got.body != entry["full_text"]:
            bad = next((p for p in after.problems if p.id == entry["id"]), None)
            why = f" ({bad.detail})" if bad is not None else ""
            raise RefusedError(f"{sid}: the archive entry would not read back{why}; not written")
    before = sum(1 for m in state.scan.memories if m.path == OBSERVATIONS)
    now = sum(1 for m in after.memories if m.path == OBSERVATIONS)
    if now != before - len(entries):
        raise RefusedError("archiving would change other sections; not written")
    check_no_new_problems(state.scan, after)
    return after


WRITER = DreamCycleWriter()
register_writer(WRITER)

__all__ = [
    "PIN_MARKER",
    "WRITER",
    "DreamCycleWriter",
    "TextFile",
    "VaultState",
    "after_of",
    "append_lines",
    "archive_change",
    "archive_entry",
    "check_archived",
    "edit_inner",
    "field_key",
    "field_value",
    "next_archive_id",
    "read_file",
    "read_state",
    "remove_sections",
    "rewrite_comment",
    "scan_candidate",
    "section_ids",
    "section_text",
    "sections_of",
    "splice",
]
