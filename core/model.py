"""The one model every format adapter produces and every front end consumes.

A `Memory` is format-neutral: adapters fill the common fields and keep the
native metadata in `fields` (every key, in file order, unknown ones included)
so nothing a format stores is lost or hidden.  Decay is not stored on the
memory: it depends on `as_of`, so it is computed on demand as a `DecayInfo`.
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol


class Health(StrEnum):
    """Unified health used to triage memories across formats (DESIGN.md)."""

    STABLE = "stable"
    ACTIVE = "active"
    FADING = "fading"
    EXPIRED = "expired"
    ARCHIVED = "archived"
    TOMBSTONED = "tombstoned"


#: Display order for triage: most urgent first after the stable ones.
HEALTH_ORDER: tuple[Health, ...] = (
    Health.EXPIRED,
    Health.FADING,
    Health.ACTIVE,
    Health.STABLE,
    Health.ARCHIVED,
    Health.TOMBSTONED,
)


class Reason(StrEnum):
    """Reason categories for invalid input (fixtures/expected.json `rules`)."""

    EMPTY_FILE = "empty_file"
    ENCODING = "encoding"
    NO_FRONTMATTER = "no_frontmatter"
    MALFORMED_FRONTMATTER = "malformed_frontmatter"
    MALFORMED_METADATA = "malformed_metadata"
    MALFORMED_JSON = "malformed_json"
    MISSING_REQUIRED_FIELD = "missing_required_field"
    WRONG_TYPE = "wrong_type"
    OUT_OF_RANGE = "out_of_range"
    DUPLICATE_ID = "duplicate_id"
    LATTICE_VIOLATION = "lattice_violation"
    #: Not one of expected.json's categories: the OS refused to read the file
    #: or folder (no permission, an I/O error), so its content is unknown.
    UNREADABLE = "unreadable"


class RefIssue(StrEnum):
    """Why a reference is flagged (it never makes its owner invalid)."""

    DANGLING = "dangling_reference"
    UNSAFE = "unsafe_reference"
    TOMBSTONED = "references_tombstoned"


@dataclass(frozen=True, slots=True)
class Relation:
    """One outgoing link as the format wrote it.

    `field` names where the link came from (`relations`, `backlinks`,
    `parents`, `observations`, `posterior.observations_used`, ...), `target`
    is the raw reference exactly as written; `resolved` is the id of the
    memory it points at once the adapter resolved it, or None.
    """

    target: str
    type: str
    field: str
    resolved: str | None = None
    direction: str | None = None
    strength: float | None = None
    context: str | None = None


class BodySource(Protocol):
    """Reads the bodies of one file's memories again when first asked (`core.store.bodies`)."""

    def fill(self, memory: Memory) -> None:
        """Set `memory`'s body (and those of its file's other memories)."""


class _LazyBody:
    """The slot a memory's `BodySource` lives in (not a dataclass field).

    A base class rather than a field so constructors, `fields(Memory)`,
    equality and pickling stay exactly what they were.
    """

    __slots__ = ("body_source",)


@dataclass(slots=True)
class Memory(_LazyBody):
    """One memory of any format.

    `path` is relative to the vault root (POSIX separators); `line` is the
    1-based JSON Lines line, `index` the 1-based dream-cycle `## ` section.
    `fields` holds the native metadata mapping in its original key order,
    `extra` the subset of keys the format does not define.
    """

    format: str
    vault_root: Path
    id: str
    kind: str
    title: str
    body: str
    path: str
    tags: tuple[str, ...] = ()
    importance: float | None = None
    confidence: float | str | None = None
    created: date | datetime | None = None
    updated: date | datetime | None = None
    source: str | None = None
    relations: tuple[Relation, ...] = ()
    line: int | None = None
    index: int | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    pinned: bool = False
    archived: bool = False
    tombstoned: bool = False
    #: Format-specific inputs for decay and display (e.g. access counts,
    #: dream-cycle ttl, ocean decay spec).  Plain JSON-able values only.
    native: dict[str, Any] = field(default_factory=dict)

    @property
    def abs_path(self) -> Path:
        return self.vault_root / self.path

    @property
    def key(self) -> tuple[str, str]:
        """Identity across vaults: (vault root, id)."""
        return (str(self.vault_root), self.id)


def _lazy_body_property() -> property:
    """`Memory.body`: the stored text, or, when a store left it out (None), read on first use.

    A memory loaded from the persistent store (`core.store`) has no body in
    memory: its `body_source` re-reads its file when the body is first
    asked for.  Every other memory holds its body as before; the property
    costs one extra Python call per read.
    """
    stored = Memory.__dict__["body"]  # the slot itself, kept as the raw accessor
    get_source = _LazyBody.__dict__["body_source"].__get__

    def get(self: Memory) -> str:
        value: str | None = stored.__get__(self, Memory)
        if value is None:
            try:
                source: BodySource = get_source(self, Memory)
            except AttributeError:
                source = None  # type: ignore[assignment]
            if source is not None:
                source.fill(self)
                value = stored.__get__(self, Memory)
            if value is None:
                value = ""
                stored.__set__(self, value)
        return value

    def put(self: Memory, value: str | None) -> None:
        stored.__set__(self, value)

    return property(get, put, doc="The memory's text (read from its file when left out).")


#: Raw access to a memory's body slot, without loading: None means "not loaded".
RAW_BODY = Memory.__dict__["body"]
#: Raw access to a memory's `body_source` slot (AttributeError: a memory never stored).
BODY_SOURCE = _LazyBody.__dict__["body_source"]
setattr(Memory, "body", _lazy_body_property())  # noqa: B010 - replaces the slot accessor


def _packed_fields_property() -> property:
    """`Memory.fields`: the mapping, or, as a store row left it (pickled bytes), unpacked on use.

    Why: a memory's native metadata is a dict of a dozen keys and values, a
    fifth of a decoded row's memory and much of what unpickling it costs,
    and a warm start reads none of them (the list, decay and links use the
    typed fields and `native`).  The store keeps them as one pickled bytes
    value (`core.store.codec`), turned back into the dict the first time
    `fields` is read; a row written again from a memory never read keeps
    the bytes as they are.
    """
    stored = Memory.__dict__["fields"]

    def get(self: Memory) -> dict[str, Any]:
        value = stored.__get__(self, Memory)
        if type(value) is bytes:
            value = pickle.loads(value)  # our own row: see core.store.codec
            stored.__set__(self, value)
        return value  # type: ignore[no-any-return]

    def put(self: Memory, value: dict[str, Any] | bytes) -> None:
        stored.__set__(self, value)

    return property(get, put, doc="The native metadata mapping, in its key order.")


#: Raw access to a memory's fields slot: a dict, or a store row's pickled bytes.
RAW_FIELDS = Memory.__dict__["fields"]
setattr(Memory, "fields", _packed_fields_property())  # noqa: B010 - replaces the slot accessor


def unkept_fields(m: Memory) -> dict[str, Any]:
    """`m.fields`, unpacked if a store row left them packed, but not kept unpacked.

    For a pass over every memory (the relevance index, embedding): each
    mapping kept would hold ~1.3 KB a memory for the rest of the run.  The
    caller must not change the mapping (it may be the memory's own).
    """
    value = RAW_FIELDS.__get__(m, Memory)
    if type(value) is bytes:
        return pickle.loads(value)  # type: ignore[no-any-return]  # our own row: core.store.codec
    return value  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True)
class Problem:
    """An invalid file, section or line.  Shown, never loaded, never rewritten."""

    format: str
    vault_root: Path
    path: str
    reason: Reason
    detail: str
    id: str | None = None
    line: int | None = None
    index: int | None = None
    title: str | None = None
    #: 1-based line in the file where the fault is (for jumping to raw text).
    at_line: int | None = None


@dataclass(frozen=True, slots=True)
class ReferenceProblem:
    """A link that points nowhere, at an erased record, or uses path syntax."""

    format: str
    vault_root: Path
    path: str
    id: str
    field: str
    ref: str
    reason: RefIssue
    line: int | None = None


@dataclass(slots=True)
class DecayInfo:
    """Decay of one memory at one `as_of`, in the format's own numbers.

    Only the numbers a format defines are set; the rest stay None.
    `strength` (0..1) and `weight` (search multiplier) are the unified
    figures the app and search use across formats.
    """

    status: str
    health: Health
    strength: float
    weight: float
    score: float | None = None
    current_importance: float | None = None
    importance_band: str | None = None
    linear_weight: float | None = None
    days_elapsed: int | None = None
    age_days: int | None = None
    expires_on: date | None = None
    ttl_days: int | None = None
    lifespan_days: int | None = None
    #: Human-readable arithmetic, like expected.json's `why`.
    why: str = ""
    #: Labelled reasons this memory would be archived by the format's run.
    archive_reasons: tuple[str, ...] = ()
    #: A format's own further figures (Project Ocean's second generation:
    #: freshness, max ages, refs, ...), added to `list --json` records under
    #: their own names; never one of the contract's fields.
    numbers: Mapping[str, object] = field(default_factory=dict)


class LinkState:
    """Base of the tables an adapter's `link` leaves for its own `relink`.

    Each format subclasses it with the tables it needs (ids, reverse
    references); `relink` accepts only its own subclass.  Instances must
    pickle (the scan cache keeps linked results): tables keyed by `id()`
    use `core.identity.ByIdentity`.
    """

    __slots__ = ()


@dataclass(slots=True)
class ScanResult:
    """What one adapter found in one vault root."""

    memories: list[Memory] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    ref_problems: list[ReferenceProblem] = field(default_factory=list)
    #: Non-memory records a format keeps (views, stances, WAL entries, ...).
    records: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: Lookup tables an adapter's `link` leaves for a cheaper relink after a
    #: few files change (ids, reverse references).  Private to the adapter,
    #: valid only for the newest result of a vault; not part of equality.
    link_state: LinkState | None = field(default=None, compare=False, repr=False)


@dataclass(slots=True)
class FileScan:
    """What one file of a vault yields on its own, before cross-file checks.

    An adapter's `scan_file` produces one per file and its `link` combines
    them into a `ScanResult` (duplicates, reference resolution, state files,
    WAL effects).  Keeping these per file is what lets a changed file be
    re-read alone and what the persistent cache stores, so everything here
    must be plain picklable data.

    `order` places the file in the adapter's scan order (`files()` lists
    files sorted by it); `data` holds format-private intermediate results
    that `link` needs (raw relations, WAL state, id bases, ...).
    """

    rel: str
    order: tuple[Any, ...] = ()
    memories: list[Memory] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    #: The file changes memories of other files (a state file, a WAL, a view
    #: store): after it changes, every memory of the vault may differ.
    vault_wide: bool = False
    #: Made by an incremental rescan that kept every unchanged memory's
    #: object from the previous FileScan (nothing to match up again).
    kept_objects: bool = field(default=False, compare=False)
