"""The one typed base every format adapter subclasses, and the facts it declares.

Every member the rest of memlens calls is declared here and checked by mypy:
the six a format must write are abstract; the optional ones (cheaper
listings, incremental rescans, a fast relink, a cheap decay) have defaults
that give the plain behaviour, so a new format works with the six alone and
adds speed later.  Facts the fronts need (labels, relation rules, promote
options, capabilities) sit in one `FormatInfo` record per format, so nothing
outside `core/formats/` has to name a format.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, ClassVar

from ..model import DecayInfo, FileScan, Health, Memory, Problem, ScanResult, unkept_fields
from ..refs import PointerField
from .files import Listing, rel_posix, skipped_scan
from .linking import Changes
from .preview_model import PreviewRequest, PreviewSection
from .privacy_model import TextField, default_text_fields, line_text_field
from .recall_model import RecallHit, RecallRequest

#: (status, health, weight, score) of a decay, without its explanation.
DecayBrief = tuple[str, Health, float, float | None]


@dataclass(frozen=True, slots=True)
class PromoteOption:
    """One option a format's promote takes (the promote form shows one input each)."""

    key: str
    default: str = ""
    placeholder: str = ""
    #: Read the text as a number.
    number: bool = False


@dataclass(frozen=True, slots=True)
class FieldWrite:
    """Fields a format's decay run writes back into one memory (applied as a `set`).

    `why` says what the run decided, for the run's report.
    """

    memory: Memory
    changes: dict[str, Any]
    why: str


@dataclass(frozen=True, slots=True)
class FormatInfo:
    """What the fronts, search and graph need to know about a format, by name.

    Callers ask these fields instead of comparing format ids, so adding a
    format never means editing code outside its package and the registry.
    """

    #: The format id (DESIGN.md), as in every record's `format`.
    id: str
    #: Human label for the UI.
    label: str
    #: A few letters for narrow columns (search results).
    short_label: str = ""
    #: Every relation is expected on both ends (a missing back link is a problem).
    two_way_relations: bool = False
    #: Relation fields whose links must not form a cycle.
    acyclic_fields: frozenset[str] = frozenset()
    #: What promote does, in one line (shown above its options).
    promote_note: str = ""
    #: Promote options, in form order.
    promote_options: tuple[PromoteOption, ...] = ()
    #: Memory kinds of which several of one vault promote into one new record.
    promotes_together: frozenset[str] = frozenset()
    #: The vault keeps daily episode logs (the episodes timeline).
    has_episodes: bool = False
    #: The format has its own decay run that rewrites the vault (`memlens dream`).
    has_decay_run: bool = False
    #: Reading a memory is recorded as an access that feeds its decay, and the
    #: vault has derived files memlens can rebuild (index, core, reflection).
    tracks_access: bool = False
    #: The vault holds several agents' memories (a preview is per agent).
    has_agents: bool = False
    #: Metadata fields the spec defines as text, searched beside title, tags
    #: and body (relevance ranking): dotted paths into `Memory.fields`
    #: (``"posterior.statement"``); a list or mapping gives every string in it.
    text_fields: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class HistoryScope:
    """Where one memory's past versions are found in its vault's git history.

    `core.history` lists the commits that changed `path` (following renames
    when `whole_file`) and asks the adapter's `history_extract` for the
    memory's own bytes in each version, so a Dream Cycle section or a JSON
    Lines record gets the commits where it changed, not every commit that
    touched its file.
    """

    #: Vault-relative POSIX path of the file that holds the memory now.
    path: str
    #: The file is the memory: follow it across renames (archive moves).
    whole_file: bool = True
    #: What `history_extract` looks for (a heading, a record id).
    key: str = ""
    #: The n-th match of `key` (a repeated heading's `-2` id is the second).
    occurrence: int = 1


class FormatAdapter(ABC):
    """Detect a vault root of one format, scan it, and compute its decay.

    Adapters are stateless: `scan` reads everything under `root` and returns
    memories, problems and reference problems; `decay` is a pure function of
    a memory and an explicit `as_of`.

    Scanning is split per file so that a changed file can be re-read alone
    (live reload) and unchanged files can come from the persistent cache:
    `scan(root)` is exactly ``link(root, {rel: scan_file(root, p) for p in
    files(root)})``.  `scan_file` reads one file on its own; `link` does what
    needs the whole vault (duplicate ids, reference resolution, state files,
    WAL effects, incorporated flags, ...).
    """

    #: The format's facts; `format_id` and `label` mirror it.
    info: ClassVar[FormatInfo]
    #: `info.id`, at class level (read on hot paths and by the registry).
    format_id: ClassVar[str]
    #: `info.label`, at class level.
    label: ClassVar[str]
    #: Every field the format's spec defines as pointing at another record or
    #: a trace; `link` checks each with the shared rule in `core.refs`.
    pointer_fields: ClassVar[tuple[PointerField, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # The id and label are declared once, in `info`; the class attributes
        # keep the short spelling every caller (and the registry) uses.
        super().__init_subclass__(**kwargs)
        info = cls.__dict__.get("info")
        if isinstance(info, FormatInfo):
            cls.format_id = info.id
            cls.label = info.label

    # -- what every format writes ----------------------------------------

    @abstractmethod
    def detect(self, root: Path) -> bool:
        """True if `root` itself is a vault root of this format."""

    @abstractmethod
    def files(self, root: Path) -> list[Path]:
        """Every file that makes up the vault, in scan order (for a stat walk)."""

    @abstractmethod
    def owns(self, root: Path, rel: str) -> bool:
        """True if vault-relative POSIX `rel` is a file `files` lists when it exists.

        A test on the path alone (no I/O): the watcher and `rescan_paths` use
        it to ignore editor swap files, temp files and anything else.
        """

    @abstractmethod
    def scan_file(self, root: Path, path: Path, data: bytes | None = None) -> FileScan:
        """Read one file of the vault on its own (never raises for bad content).

        `data` is the file's bytes when the caller already read them (the
        cache reads once to hash and parse); None reads `path`.
        """

    @abstractmethod
    def link(self, root: Path, scans: Mapping[str, FileScan]) -> ScanResult:
        """Combine per-file scans (keyed by rel path, in scan order) into a result.

        `link` may update the derived parts of the memories it is given
        (resolved relations, values taken from state files) in place; it
        recomputes them from scratch on every call, so linking again after
        replacing some FileScans gives what a full scan would.
        """

    @abstractmethod
    def decay(self, memory: Memory, as_of: date, *, explain: bool = True) -> DecayInfo:
        """Native status, the format's numbers and the unified health.

        With `explain` False, `why` stays empty and everything else is the
        same: the cheap form for building 100k list rows.
        """

    # -- optional: defaults give the plain behaviour ----------------------

    def scan(self, root: Path) -> ScanResult:
        """Read the whole vault; never raises for bad content (it reports it).

        `link` over `scan_file` of every listed file, plus one FileScan
        holding a Problem for every entry the listing left out (a link out
        of the vault, a loop, a pipe, a folder named `x.md`).
        """
        listing = self.file_listing(root)
        base = str(root) + os.sep
        # Skipped entries first: their FileScans have the empty order, which
        # sorts before every file's, so the dict is in scan order as `link` expects.
        scans = {s.rel: skipped_scan(self.format_id, root, s) for s in listing.skipped}
        for rel in listing.names:
            scans[rel] = self.scan_file(root, Path(base + rel))
        return self.link(root, scans)

    def file_rels(self, root: Path) -> list[str]:
        """`files` as vault-relative POSIX paths, in the same order.

        Override to list names without building Paths: the stat walk of a
        100k-file warm start spent more time building Paths than calling stat.
        """
        return [rel_posix(root, p) for p in self.files(root)]

    def file_listing(self, root: Path) -> Listing:
        """`file_rels`, plus the entries the listing left out and why.

        The default leaves nothing out it could report; formats that list
        folders with `core.formats.files` override it to report links out of
        the vault, pipes and unreadable entries.
        """
        return Listing(self.file_rels(root), [])

    def first_files(self, root: Path, limit: int) -> list[str]:
        """Up to `limit` of the vault's files, found without listing it whole.

        A cold start parses these first, so its first rows come before the
        full listing.  Each must be a file `file_listing` holds.  The default
        finds none (a format with a few big files gains nothing here).
        """
        return []

    def bodies_of(
        self, root: Path, rel: str, data: bytes, memories: Sequence[Memory]
    ) -> dict[str, str] | None:
        """The bodies of some memories of one file, from its bytes, without parsing the rest.

        `data` is the file exactly as it was when these memories were read
        (the caller checked its sha256), so positions the scan recorded
        still hold.  None (the default): the caller parses the whole file.
        Formats that keep many memories in one big file answer from the
        memories' own lines: a search's hit or a selected row in a file of
        thousands of sections reads one section, not all of them.
        """
        return None

    def scan_rel(self, root: Path, rel: str, data: bytes | None = None) -> FileScan:
        """`scan_file` by vault-relative path (a cold scan reads every file this way)."""
        return self.scan_file(root, Path(f"{root}{os.sep}{rel}"), data)

    def scan_appended(
        self, root: Path, path: Path, previous: FileScan, tail: bytes, first_line: int
    ) -> FileScan | None:
        """`previous` extended by `tail`, bytes appended to an append-only file.

        `first_line` is the 1-based line `tail` starts on.  None (the
        default): read the whole file again.
        """
        return None

    def rescan_file(
        self, root: Path, path: Path, data: bytes, previous: FileScan
    ) -> FileScan | None:
        """`scan_file` of the new `data`, reusing what `previous` made of unchanged parts.

        Must equal `scan_file(root, path, data)`.  None (the default): read
        it whole.
        """
        return None

    def relink(
        self, root: Path, scans: Mapping[str, FileScan], previous: ScanResult, changes: Changes
    ) -> ScanResult | None:
        """`link` after `changes`, touching only what they affect.

        `previous` is the vault's newest linked result (its `link_state` was
        left by this adapter); the result must equal `link(root, scans)`.
        None (the default): link in full.
        """
        return None

    def decay_brief(self, memory: Memory, as_of: date) -> DecayBrief:
        """(status, health, weight, score) of `decay`, without its explanation.

        What a search index needs for 100k memories; override with a cheaper
        computation of the same numbers.
        """
        info = self.decay(memory, as_of, explain=False)
        return info.status, info.health, info.weight, info.score

    def search_texts(self, memory: Memory) -> tuple[str, ...]:
        """The memory's text fields besides title, tags and body, for the relevance index.

        The default reads `info.text_fields` out of `memory.fields`, so a format
        only declares which fields its spec defines as text; override when a
        field needs more than that (a value computed from several).
        """
        if not self.info.text_fields:
            return ()
        out: list[str] = []
        fields = unkept_fields(memory)  # every memory's, for an index: not kept unpacked
        for dotted in self.info.text_fields:
            value: Any = fields
            for part in dotted.split("."):
                value = value.get(part) if isinstance(value, Mapping) else None
            _collect_strings(value, out)
        return tuple(out)

    def deliberate_copies(self, a: Memory, b: Memory) -> bool:
        """Whether the format keeps `a` and `b` as copies of one memory on purpose.

        The review queue skips such pairs: they are not duplicates a person
        should merge (a promoted copy and its source, say).  The default: the
        format makes no copies.
        """
        return False

    def agent_preview(
        self, root: Path, result: ScanResult, request: PreviewRequest
    ) -> list[PreviewSection]:
        """What this format's agent loads at start and recalls for a prompt, by its rules.

        `result` is the vault's scan (valid memories, archived included, and
        the format's other records); nothing is written.  The default: the format defines no
        load or recall step, so there is nothing to preview.
        """
        return []

    def text_fields(self, memory: Memory, raw: str | None) -> list[TextField]:
        """Every text `memory` holds, for the privacy scan, with the file line of each.

        `raw` is the memory's file decoded (None when unreadable).  The
        default: every string of the native fields, plus title and body when
        they hold other text, without lines; formats override it to say
        where each text sits in the file.
        """
        return default_text_fields(memory)

    def side_files(self, root: Path) -> list[str]:
        """Vault files an agent writes text into that hold no memory, for the privacy scan.

        Session logs, derived summaries, view and stance stores: a secret
        there is loaded into prompts as one in a memory is.  Vault-relative,
        each a regular file inside the vault.  Their findings are listed and
        never redacted (memlens edits memories, not these files).  The
        default: none.
        """
        return []

    def problem_texts(self, problem: Problem, raw: str) -> list[TextField]:
        """The text an invalid item holds, for the privacy scan, with its file lines.

        A secret in a file memlens could not read as a memory is still in the
        vault (and in every prompt that loads the file).  `raw` is the file
        decoded.  The default: a problem on one line (a JSON Lines record) is
        that line; any other is the whole file.
        """
        if problem.line is not None:
            return line_text_field(raw, problem.line)
        return [TextField("file", raw, 1, multiline=True)]

    def decay_writebacks(self, memories: Sequence[Memory], as_of: date) -> list[FieldWrite]:
        """What the format's decay run writes back besides archiving, as of `as_of`.

        `memlens decay --apply` applies each as a `set`, in the same
        transaction as the archives.  The default: nothing (the run only archives).
        """
        return []

    def recall(self, memories: Sequence[Memory], request: RecallRequest) -> list[RecallHit] | None:
        """The format's own recall ranking of one vault's `memories`, best first.

        `search --rank recall` uses it.  None (the default): the format has
        no recall formula of its own, and memlens's relevance ranking stands.
        """
        return None

    def history_scope(self, memory: Memory) -> HistoryScope:
        """Where `memory`'s versions live in git history.

        The default: the memory is its whole file (one memory per file), so
        every commit that changed the file, renames followed, is a version.
        """
        return HistoryScope(memory.path)

    def history_extract(self, scope: HistoryScope, data: bytes) -> bytes | None:
        """The memory's own bytes in one version `data` of its file; None if absent there.

        Called once per version, so it must be cheap (no full parse).  The
        default: the file is the memory.
        """
        return data


def _collect_strings(value: Any, out: list[str], depth: int = 0) -> None:
    """Every string (and number) inside a field's value, in document order.

    Bounded depth: the fields are the format's own YAML/JSON values, and a
    pathological nesting should cost nothing.
    """
    if depth > 8 or value is None or isinstance(value, bool):
        return
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, int | float):
        out.append(str(value))
    elif isinstance(value, Mapping):
        for item in value.values():
            _collect_strings(item, out, depth + 1)
    elif isinstance(value, list | tuple):
        for item in value:
            _collect_strings(item, out, depth + 1)


__all__ = [
    "DecayBrief",
    "FieldWrite",
    "FormatAdapter",
    "FormatInfo",
    "HistoryScope",
    "PromoteOption",
]
