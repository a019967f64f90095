"""Project Ocean: per-agent observation vaults with linear/exponential decay.

Layout (specs/project-ocean.md)::

    agents/<agent>/memory/vault/obs-YYYY-MM-DD-NNN.md     active observations
    agents/<agent>/memory/archive/obs-...md               moved there by memory-decay.py
    shared/observations/obs-...md                         promoted copies (memory-promote.py)
    shared/observations/archive/obs-...md                 expired shared copies

Each file is YAML frontmatter + a markdown body.  The memory id comes from
the path, never from the content: ``<agent>/<file stem>`` or
``shared/<file stem>``.  A vault and an archive copy of the same stem
therefore share an id and are both reported as duplicates.

Decay follows the first-generation reference scripts (DESIGN.md): the age is
counted from ``created`` (never the file name), a file expires only once
``age > N``, linear weight ``max(0, 1 - age/N)``, exponential
``e^(-3*age/N)``, and no ``decay`` field means permanent.
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any, ClassVar

from ...decay import STATUS_HEALTH, clamp01
from ...errors import ParseError
from ...identity import ByIdentity
from ...model import (
    DecayInfo,
    FileScan,
    Health,
    LinkState,
    Memory,
    Problem,
    Reason,
    ReferenceProblem,
    RefIssue,
    Relation,
    ScanResult,
)
from ...refs import PointerField, is_unsafe_reference
from ...text.dates import day_of, parse_date
from ...text.frontmatter import load_frontmatter
from ...text.textio import decode_bytes, read_text
from ..adapter import FormatAdapter, FormatInfo
from ..files import Listing, SkippedEntry, dir_state, list_dirs, list_md, rel_posix, unlistable
from ..linking import Changes, one_memory_files, relinked, split_duplicates
from ..reading import problem_from

FORMAT_ID = "project-ocean"

#: Agent-independent id prefix for shared/observations/.
SHARED = "shared"

#: Frontmatter keys the format (or memlens's own actions on it) defines;
#: everything else is an extra field, kept as written.
KNOWN_FIELDS: tuple[str, ...] = (
    "tags",
    "confidence",
    "created",
    "decay",
    "source",
    "backlinks",
    "verified",
    "pinned",
    "promoted_from",
    "promoted_at",
)

_KNOWN = frozenset(KNOWN_FIELDS)

#: `linear-Nd` / `exponential-Nd` with N a positive whole number of days.
DECAY_RE = re.compile(r"^(linear|exponential)-(\d+)d$")

#: Every field the spec defines as pointing at another observation.
POINTER_FIELDS: tuple[PointerField, ...] = (
    PointerField("backlinks", "observation", "related observations by file name"),
)

#: A backlink must be a bare observation file name (the `.md` suffix is
#: tolerated); anything else could be a path and is never resolved.
BACKLINK_RE = re.compile(r"^(obs-\d{4}-\d{2}-\d{2}-\d{3})(?:\.md)?$")


@dataclass(frozen=True, slots=True)
class DecaySpec:
    """A parsed `decay` value."""

    kind: str  # "linear" | "exponential"
    days: int  # lifespan N


def parse_decay_spec(value: object) -> DecaySpec | None:
    """`linear-30d` -> DecaySpec('linear', 30); None if the value is not one."""
    if not isinstance(value, str):
        return None
    m = DECAY_RE.match(value.strip())
    if m is None:
        return None
    days = int(m.group(2))
    if days <= 0:
        return None
    return DecaySpec(sys.intern(m.group(1)), days)


_specs: dict[str, DecaySpec | None] = {}


def _decay_spec(value: object) -> DecaySpec | None:
    """`parse_decay_spec`, remembered per text (a vault uses a handful of specs)."""
    if not isinstance(value, str):
        return None
    if value not in _specs:
        if len(_specs) >= 1024:
            _specs.clear()
        _specs[value] = parse_decay_spec(value)
    return _specs[value]


def backlink_name(ref: str) -> str | None:
    """The observation stem a safe backlink names, or None if it is unsafe.

    Stricter than the shared rule (`core.refs`): the format names files
    `obs-YYYY-MM-DD-NNN`, so anything else may be a path and is unsafe.
    """
    m = BACKLINK_RE.match(ref)
    return m.group(1) if m and not is_unsafe_reference(ref) else None


@dataclass(frozen=True, slots=True)
class _Location:
    """Where a file sits in the layout, derived from its path alone.

    No Path is built unless asked for (`path`): a cold scan locates every
    file, and pathlib's parsing was a good part of the per-file cost.
    """

    root: Path
    rel: str
    agent: str  # agent name, or "shared"
    area: str  # "vault" | "archive" | "shared"
    archived: bool

    @property
    def path(self) -> Path:
        return self.root.joinpath(*self.rel.split("/"))

    @property
    def name(self) -> str:
        return self.rel.rpartition("/")[2]

    @property
    def stem(self) -> str:
        return self.name[:-3]  # every located name ends with ".md"

    @property
    def shared(self) -> bool:
        return self.agent == SHARED and not self.rel.startswith("agents/")

    @property
    def id(self) -> str:
        return f"{self.agent}/{self.stem}"


def _has_agent_memory(root: Path) -> bool | None:
    """True if some `agents/<name>/memory/` holds a `vault/` or `archive/`;
    None if not but an agent folder (or `agents/` itself) could not be read."""
    agents = root / "agents"
    try:
        names = sorted(n for n in os.listdir(agents) if not n.startswith("."))
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:
        return None
    refused = False
    for name in names:
        memory = agents / name / "memory"
        states = (dir_state(memory / "vault"), dir_state(memory / "archive"))
        if True in states:
            return True
        refused = refused or None in states
    return None if refused else False


def locate(root: Path, rel: str) -> _Location | None:
    """Where a vault-relative POSIX path sits in the layout; None if it is no observation path.

    Used by the writer to re-read one file exactly as scan() reads it.
    """
    parts = rel.split("/")
    if not parts[-1].endswith(".md") or any(p in ("", ".", "..") for p in parts):
        return None
    in_agent = len(parts) == 5 and parts[0] == "agents" and parts[2] == "memory"
    if in_agent and parts[3] in ("vault", "archive"):
        # Interned: every memory of an agent repeats its name and area.
        area = _AREAS[parts[3]]
        return _Location(root, rel, sys.intern(parts[1]), area, area == "archive")
    if parts[0] == "shared" and len(parts) > 2 and parts[1] == "observations":
        if len(parts) == 3:
            return _Location(root, rel, SHARED, "shared", False)
        if len(parts) == 4 and parts[2] == "archive":
            return _Location(root, rel, SHARED, "archive", True)
    return None


def _owned(rel: str) -> _Location | None:
    """The location of `rel` if scan() would read it (hidden names are skipped)."""
    parts = rel.split("/")
    if any(p.startswith(".") for p in parts):
        return None
    return locate(Path(), rel)


_AREA_RANK = {"vault": 0, "archive": 1, "shared": 0}
_AREAS = {"vault": "vault", "archive": "archive"}


def _order(loc: _Location) -> tuple[int, str, int, str]:
    """Scan order: agents by name (vault, then archive), then shared/, then its archive/.

    Within one folder the relative path orders exactly as the file name
    does (same prefix), and it is the string the scan already holds.
    """
    if loc.rel.startswith("agents/"):
        return (0, loc.agent, _AREA_RANK[loc.area], loc.rel)
    return (1, "", _AREA_RANK[loc.area], loc.rel)


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


def _resolution_order(memory: Memory, agents: list[str]) -> list[str]:
    """Id prefixes a bare backlink is looked up under, in order.

    An agent reads its own vault and shared/ (memory-search.py --agent), so
    its backlinks resolve there: its own vault/archive first, then shared/.
    A shared observation was promoted from some agent and is read by all, so
    its backlinks resolve in shared/ first, then the agent it was promoted
    from (`promoted_from`, else `source` when it names an agent), then any
    agent in name order.
    """
    agent = str(memory.native.get("agent"))
    if not memory.native.get("shared"):
        return [agent, SHARED]
    order = [SHARED]
    for hint in (memory.native.get("promoted_from"), memory.source):
        if isinstance(hint, str) and hint in agents and hint not in order:
            order.append(hint)
    order.extend(a for a in agents if a not in order)
    return order


def _resolve_backlinks(
    memories: list[Memory],
    root: Path,
    *,
    ids: set[str] | None = None,
    agents: list[str] | None = None,
    names: dict[str, dict[int, Memory]] | None = None,
) -> tuple[list[Memory], list[ReferenceProblem]]:
    """Fill each backlink's `resolved` (in place, recomputed every time) and flag broken ones.

    `ids` and `agents` default to those of `memories` (a full link); a
    relink passes the vault's.  `names`, when given, is filled with which
    memories name which observation stem (for the next relink).
    """
    if ids is None:
        ids = {m.id for m in memories}
    if agents is None:
        agents = sorted({str(m.native["agent"]) for m in memories if not m.native.get("shared")})
    problems: list[ReferenceProblem] = []
    for m in memories:
        if not m.relations:
            continue
        order: list[str] | None = None
        changed = False
        resolved_all: list[str | None] = []
        for rel in m.relations:
            name = backlink_name(rel.target)
            resolved: str | None = None
            if name is None:
                issue: RefIssue | None = RefIssue.UNSAFE
            else:
                if names is not None:
                    names.setdefault(name, ByIdentity())[id(m)] = m
                if order is None:
                    order = _resolution_order(m, agents)
                resolved = next((f"{p}/{name}" for p in order if f"{p}/{name}" in ids), None)
                issue = None if resolved else RefIssue.DANGLING
            if issue is not None:
                problems.append(
                    ReferenceProblem(
                        format=FORMAT_ID,
                        vault_root=root,
                        path=m.path,
                        id=m.id,
                        field=rel.field,
                        ref=rel.target,
                        reason=issue,
                    )
                )
            resolved_all.append(resolved)
            changed = changed or rel.resolved != resolved
        if changed:
            # Only a changed resolution builds new objects: relinking a
            # 100k-memory vault after one edit stays cheap.
            m.relations = tuple(
                replace(rel, resolved=r) for rel, r in zip(m.relations, resolved_all, strict=True)
            )
    return memories, problems


def _twin(rel: str) -> str | None:
    """The other place a file with the same id could be (vault <-> archive)."""
    parts = rel.split("/")
    if len(parts) == 5 and parts[0] == "agents":
        other = "archive" if parts[3] == "vault" else "vault"
        return "/".join([*parts[:3], other, parts[4]])
    if parts[:2] == ["shared", "observations"]:
        if len(parts) == 3:
            return f"shared/observations/archive/{parts[2]}"
        if len(parts) == 4:
            return f"shared/observations/{parts[3]}"
    return None


def _stems(memory: Memory) -> set[str]:
    return {n for r in memory.relations if (n := backlink_name(r.target)) is not None}


def _agent_of(memory: Memory) -> str | None:
    return None if memory.native.get("shared") else str(memory.native["agent"])


def _lifespan(
    memory: Memory, as_of: date
) -> tuple[date, int, int, float, float, float, float] | None:
    """(created, age, lifespan, fraction, linear, exponential, strength); None: no decay.

    None when the memory has no created date or no valid decay spec.
    """
    kind = memory.native.get("decay_kind")
    n = memory.native.get("lifespan_days")
    if memory.created is None or not isinstance(n, int) or kind not in ("linear", "exponential"):
        return None
    created = day_of(memory.created)
    age = (as_of - created).days
    fraction = age / n
    # A future `created` (negative age) would give a weight above 1 (and
    # overflow e^x for exponential decay): it counts as brand new.
    linear = clamp01(1 - fraction)
    exponential = math.exp(-3 * max(0.0, fraction))
    strength = linear if kind == "linear" else exponential
    return created, age, n, fraction, linear, exponential, strength


def _status(memory: Memory, age: int, n: int) -> str:
    """Native status of a memory with a decay spec, `age` days old, lifespan `n`."""
    # Integer comparisons: 0.8 * N in floats is not exact (0.8 * 14).
    if memory.archived:
        return "archived"
    if memory.pinned:
        return "permanent"
    if age > n:
        return "expired"
    if 5 * age >= 4 * n:
        return "near_expiry"
    return "active"


def _fmt(x: float) -> str:
    return str(round(x, 4))


@dataclass(slots=True)
class _OceanLinkState(LinkState):
    """What `link` leaves for `relink` (valid only for the newest result).

    `ids`: the kept memory ids; `agents`: kept memories per agent; `names`:
    who names each observation stem in a backlink.
    """

    ids: set[str]
    agents: Counter[str]
    names: dict[str, dict[int, Memory]]


class ProjectOceanAdapter(FormatAdapter):
    """Reads `agents/*/memory/{vault,archive}/` and `shared/observations/`."""

    info: ClassVar[FormatInfo] = FormatInfo(
        id=FORMAT_ID,
        label="Project Ocean",
        short_label="ocean",
        promote_note="copies the file to shared/observations/ with promoted_from and promoted_at",
    )
    pointer_fields: ClassVar[tuple[PointerField, ...]] = POINTER_FIELDS
    #: The linked result (link_state included) pickles faithfully: the scan
    #: cache keeps it and an unchanged vault is not linked again.
    cache_linked: ClassVar[bool] = True

    def detect(self, root: Path) -> bool:
        """An `agents/<name>/memory/` with a `vault/` or `archive/` folder.

        An agent folder that cannot be read counts when `shared/observations/`
        is there too: one unreadable agent must not hide the whole vault (the
        scan reports that agent as one problem).
        """
        found = _has_agent_memory(root)
        if found is None:
            return dir_state(root / "shared" / "observations") is True
        return found

    # -- per-file scanning (see FormatAdapter) ------------------------------

    def files(self, root: Path) -> list[Path]:
        return [root / rel for rel in self.file_listing(root).names]

    def owns(self, root: Path, rel: str) -> bool:
        return _owned(rel) is not None

    def file_rels(self, root: Path) -> list[str]:
        """`files` as vault-relative strings (a cheaper stat walk)."""
        return self.file_listing(root).names

    def file_listing(self, root: Path) -> Listing:
        """Every agent's vault/archive and the shared folders, and the entries
        left out (links out of the vault, pipes, ...)."""
        names: list[str] = []
        skipped: list[SkippedEntry] = []
        folders: list[str] = []
        agents = list_dirs(root, "agents")
        skipped.extend(agents.skipped)
        for agent in agents.names:
            memory = f"agents/{agent}/memory"
            refused = unlistable(root, f"agents/{agent}") or unlistable(root, memory)
            if refused is not None:
                skipped.append(refused)  # one problem for the agent, not one per folder
            elif os.path.isdir(f"{root}/{memory}"):
                folders += [f"{memory}/vault", f"{memory}/archive"]
        shared = unlistable(root, "shared/observations")
        if shared is not None:
            skipped.append(shared)  # one problem, not one more for its archive/
        else:
            folders += ["shared/observations", "shared/observations/archive"]
        for folder in folders:
            listing = list_md(root, folder)
            names.extend(f"{folder}/{n}" for n in listing.names)
            skipped.extend(listing.skipped)
        return Listing(names, skipped)

    def scan_file(self, root: Path, path: Path, data: bytes | None = None) -> FileScan:
        return self.scan_rel(root, rel_posix(root, path), data)

    def scan_rel(self, root: Path, rel: str, data: bytes | None = None) -> FileScan:
        """`scan_file` by vault-relative path (no Path objects: the cold scan's way in)."""
        loc = locate(root, rel)
        if loc is None:
            return FileScan(rel)
        out = FileScan(rel, order=_order(loc))
        problem: Problem | None = None
        try:
            out.memories.append(_parse(loc, root, data))
        except ParseError as err:
            problem = problem_from(err, FORMAT_ID, root, loc.rel)
            if "\n" in problem.detail:
                # Some YAML errors (e.g. a NUL byte) carry a multi-line
                # message; a problem's detail is one line.
                problem = replace(problem, detail=" ".join(problem.detail.split()))
        except OSError as exc:
            # Unreadable file (permissions, vanished mid-scan): show it,
            # never crash the scan.
            problem = Problem(
                format=FORMAT_ID,
                vault_root=root,
                path=loc.rel,
                reason=Reason.UNREADABLE,
                detail=f"cannot read file: {exc.strerror or exc}",
                id=loc.id,
            )
        except RecursionError:
            problem = Problem(
                format=FORMAT_ID,
                vault_root=root,
                path=loc.rel,
                reason=Reason.MALFORMED_FRONTMATTER,
                detail="YAML error: nested too deeply",
                id=loc.id,
            )
        if problem is not None:
            out.problems.append(problem)
            # The id comes from the path, so a file that failed still claims it.
            out.data["failed_id"] = loc.id
        return out

    def link(self, root: Path, scans: Mapping[str, FileScan]) -> ScanResult:
        parsed: list[Memory] = []
        problems: list[Problem] = []
        failed_ids: dict[str, list[str]] = {}
        for fs in scans.values():
            parsed.extend(fs.memories)
            problems.extend(fs.problems)
            failed = fs.data.get("failed_id")
            if failed is not None:
                failed_ids.setdefault(failed, []).append(fs.rel)

        memories, dups = split_duplicates(parsed, FORMAT_ID, root)
        problems.extend(dups)
        # The id comes from the path, so a copy that failed to parse still
        # claims it: the readable copy is a duplicate too (never loaded).
        # The unreadable copy keeps its own parse problem.
        kept: list[Memory] = []
        if failed_ids:
            for m in memories:
                others = failed_ids.get(m.id)
                if others:
                    problems.append(
                        Problem(
                            format=FORMAT_ID,
                            vault_root=root,
                            path=m.path,
                            reason=Reason.DUPLICATE_ID,
                            detail=f"id {m.id!r} also used by {', '.join(others)}",
                            id=m.id,
                            title=m.title,
                        )
                    )
                else:
                    kept.append(m)
        else:
            kept = memories

        ids = {m.id for m in kept}
        agents = Counter(a for m in kept if (a := _agent_of(m)) is not None)
        names: dict[str, dict[int, Memory]] = {}
        kept, ref_problems = _resolve_backlinks(
            kept, root, ids=ids, agents=sorted(agents), names=names
        )
        return ScanResult(
            memories=kept,
            problems=problems,
            ref_problems=ref_problems,
            link_state=_OceanLinkState(ids, agents, names),
        )

    def relink(
        self, root: Path, scans: Mapping[str, FileScan], previous: ScanResult, changes: Changes
    ) -> ScanResult | None:
        """`link` after a few files changed, touching only what they affect.

        Handles files that hold one valid memory before and after (edits,
        additions, removals) when no duplicate is involved and the set of
        agents stays the same; anything else returns None (full link).
        Backlinks of other memories are re-resolved only when they name an
        observation stem that appeared or disappeared.
        """
        state = previous.link_state
        split = one_memory_files(changes)
        if not isinstance(state, _OceanLinkState) or split is None:
            return None
        ids, agents, names = state.ids, state.agents, state.names
        gone, new = split
        for m in (*gone, *new):
            twin = _twin(m.path)
            # A vault/archive pair, now or before this batch (both files of
            # a pair may go at once): duplicates may change.
            if twin is not None and (twin in scans or twin in changes):
                return None
        delta: Counter[str] = Counter()
        for m in gone:
            if (a := _agent_of(m)) is not None:
                delta[a] -= 1
        for m in new:
            if (a := _agent_of(m)) is not None:
                delta[a] += 1
        if any((agents[a] > 0) != (agents[a] + d > 0) for a, d in delta.items()):
            return None  # the agent list orders shared backlinks: relink all

        # From here on the tables move to the new result.
        for a, d in delta.items():
            agents[a] += d
        gone_ids = {m.id for m in gone}
        new_ids = {m.id for m in new}
        ids.difference_update(gone_ids - new_ids)
        ids.update(new_ids)
        for m in gone:
            for stem in _stems(m):
                holders = names.get(stem)
                if holders is not None:
                    holders.pop(id(m), None)
                    if not holders:
                        del names[stem]

        def order(x: Memory | ReferenceProblem) -> tuple[Any, ...]:
            return scans[x.path].order

        affected: dict[int, Memory] = {id(m): m for m in new}
        for changed_id in gone_ids ^ new_ids:
            affected.update(names.get(changed_id.partition("/")[2], {}))
        owners = sorted(affected.values(), key=order)
        _, ref_problems = _resolve_backlinks(
            owners, root, ids=ids, agents=sorted(a for a, n in agents.items() if n > 0), names=names
        )
        dropped = {id(m) for m in gone}
        owner_ids = {m.id for m in owners} | gone_ids
        return relinked(previous, dropped, new, owner_ids, ref_problems, order, state)

    def decay_brief(self, memory: Memory, as_of: date) -> tuple[str, Health, float, float | None]:
        """(status, health, weight, score) of `decay`, without its explanation.

        What a search index needs for 100k memories; both go through
        `_lifespan` and `_status` (a test holds them equal).
        """
        life = _lifespan(memory, as_of)
        if life is None:
            status = "archived" if memory.archived else "permanent"
            return status, STATUS_HEALTH[status], 0.0 if memory.archived else 1.0, None
        _created, age, n, _fraction, _linear, _exponential, strength = life
        status = _status(memory, age, n)
        weight = 0.0 if status == "archived" else 1.0 if status == "permanent" else strength
        return status, STATUS_HEALTH[status], weight, None

    def decay(self, memory: Memory, as_of: date, *, explain: bool = True) -> DecayInfo:
        """Status and weight as memory-decay.py / memory-search.py would see them."""
        kind = memory.native.get("decay_kind")
        n = memory.native.get("lifespan_days")
        spec = memory.native.get("decay")
        archived_or_permanent = "archived" if memory.archived else "permanent"

        if memory.created is None:  # not produced by scan(); be defensive, never crash
            return DecayInfo(
                status=archived_or_permanent,
                health=STATUS_HEALTH[archived_or_permanent],
                strength=1.0,
                weight=0.0 if memory.archived else 1.0,
                why="No created date; cannot decay." if explain else "",
            )
        created = day_of(memory.created)
        age = (as_of - created).days

        if not isinstance(n, int) or kind not in ("linear", "exponential"):
            why = (
                "No decay field \u2192 permanent (the spec's 'Permanent | (no decay)' row); "
                f"created {created.isoformat()}, age {age} days, never expires."
            )
            if memory.archived:
                why += " File is in archive/ \u2192 status archived."
            return DecayInfo(
                status=archived_or_permanent,
                health=STATUS_HEALTH[archived_or_permanent],
                strength=1.0,
                weight=0.0 if memory.archived else 1.0,
                age_days=age,
                why=why if explain else "",
            )

        life = _lifespan(memory, as_of)
        assert life is not None  # created and a valid decay were checked above
        _created, _age, _n, fraction, linear, exponential, strength = life
        try:
            expires_on: date | None = created + timedelta(days=n + 1)
        except OverflowError:  # a lifespan that ends after year 9999: never, in practice
            expires_on = None

        status = _status(memory, age, n)
        permanent = status == "permanent"
        numbers = DecayInfo(
            status=status,
            health=STATUS_HEALTH[status],
            strength=1.0 if permanent else strength,
            weight=0.0 if status == "archived" else 1.0 if permanent else strength,
            linear_weight=round(linear, 4) if kind == "linear" else None,
            age_days=age,
            lifespan_days=n,
            expires_on=None if permanent else expires_on,
            archive_reasons=(f"expired (age {age} > {n} days)",) if status == "expired" else (),
        )
        if not explain:
            return numbers

        parts = [
            f"decay {spec}: lifespan {n} days",
            f"age = {as_of.isoformat()} \u2212 created {created.isoformat()} = {age} days",
            f"fraction = {age}/{n} = {_fmt(fraction)}",
        ]
        if kind == "linear":
            parts.append(f"linear weight = max(0, 1 \u2212 {age}/{n}) = {_fmt(linear)}")
        else:
            parts.append(f"exponential weight = e^(\u22123\u00b7{age}/{n}) = {_fmt(exponential)}")

        if status == "archived":
            verdict = "file is already in archive/ \u2192 status archived regardless of age."
        elif status == "permanent":
            verdict = "pinned: true \u2192 permanent (decay left as written, never expires)."
        elif status == "expired":
            where = "shared/observations/archive/" if memory.native.get("shared") else "archive/"
            verdict = (
                f"{age} > {n} \u2192 expired (still in {memory.native.get('area')}/: "
                f"the decay script would move it to {where})."
            )
        elif status == "near_expiry":
            upper = "< 1" if age < n else "= 1 (age equals the lifespan; expired only past it)"
            verdict = f"0.8 \u2264 {_fmt(fraction)} {upper} \u2192 near_expiry."
        else:
            verdict = f"{_fmt(fraction)} < 0.8 \u2192 active."
        parts.append(verdict)
        why = "; ".join(parts)
        m = re.match(r"^obs-(\d{4}-\d{2}-\d{2})", str(memory.native.get("stem", "")))
        if m and m.group(1) != created.isoformat():
            why += (
                f" Note: filename date {m.group(1)} differs from created "
                f"{created.isoformat()}; decay uses the created field."
            )
        return replace(numbers, why=why)


__all__ = [
    "BACKLINK_RE",
    "DECAY_RE",
    "FORMAT_ID",
    "KNOWN_FIELDS",
    "DecaySpec",
    "ProjectOceanAdapter",
    "backlink_name",
    "locate",
    "parse_decay_spec",
    "parse_observation",
]
