"""The vault as the writer sees it: files as byte lines, the state a plan starts from,
and the checks that the new bytes read back as intended.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ...errors import ConflictError, RefusedError, UnsafePathError
from ...model import Memory, ScanResult
from ...safe_io import read_regular
from ...text.paths import has_path_syntax, safe_join
from ...write.journal import FileChange, Plan
from ...write.writes import FileSnapshot, check_unchanged, snapshot
from .adapter import DreamCycleAdapter
from .files import ARCHIVE_JSONL, ARCHIVED_MD, FORMAT_ID, OBSERVATIONS
from .ids import IdAllocator, section_base_id
from .sections import Section, parse_sections

_BOM = b"\xef\xbb\xbf"


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


def _short(text: str, limit: int = 60) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def read_lines_of(f: TextFile, raw: list[bytes]) -> list[str]:
    return [_strip_ending(r).decode("utf-8", "replace") for r in raw]


def check_section(
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
    if expected_fields is not None and list(got.fields.items()) != list(expected_fields.items()):
        raise RefusedError("the edit would change more than the fields asked for; not written")
    body = fresh.body if expected_body is None else expected_body
    if got.body != body or got.title != fresh.title:
        raise RefusedError("the section would not read back as intended; not written")
    check_no_new_problems(state.scan, after)
    return got


def plan_of(
    action: str, state: VaultState, ids: list[str], summary: str, changes: list[FileChange]
) -> Plan:
    """The plan of `changes` to the vault of `state`."""
    return Plan(action, state.root, ids, summary, changes)
