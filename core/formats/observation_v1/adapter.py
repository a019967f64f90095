"""observation/v1 vaults (comprehension-as-code): observations and comprehension.

Layout: `observations/*.md` (spec observation/v1) and `comprehension/*.md`
(comprehension/v1), each Markdown with a YAML header.  memlens's archive
action moves files to `archive/observations/` and `archive/comprehension/`;
those are read too, as archived memories.

Validation follows the reference implementation's Pydantic models (DESIGN.md,
expected.json `rules`): a required key that is absent is
`missing_required_field`; one that is present but null (`source:`), or of the
wrong type, is `wrong_type` (Pydantic rejects None for a `str`, `dict` or
`datetime` field); a required text that is empty or blank is `out_of_range`:
its type is right but its value is outside what the field may hold (an
observation with no event, an unnamed source).  The reference model has no
`min_length`, so this is memlens's one deliberate strictness: an empty `id`
cannot be cited and an empty `event` records nothing.

References (`POINTER_FIELDS`, decided by `core.refs`): a comprehension
cites observations by id in `observations` and `posterior.observations_used`;
an observation may point back at the belief it tested with
`context.prior_belief: <comp-id>/v<N>`.  That `/v<N>` suffix is the format's
own syntax, stripped before the id is checked; any other path syntax makes
the reference unsafe and it is never resolved or joined.  An observation's
`trace_ref` names an execution trace kept outside the vault: it is never
resolved, only flagged when it has path syntax.

The format defines no decay ("observations persist indefinitely"): every
memory is `retained`, or `archived` once moved to `archive/`.  The only
lifecycle fact is that an observation cited by a comprehension has been
incorporated and may be pruned; memlens shows that and never prunes.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Container, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any, ClassVar, NoReturn

from ...decay import STATUS_HEALTH
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
from ...refs import PointerField, PointerKind, reference_issue
from ...safe_io import open_regular
from ...text.dates import day_of, days_between, iso, parse_datetime
from ...text.frontmatter import SplitDocument, load_frontmatter
from ...text.paths import has_path_syntax
from ...text.textio import decode_bytes, read_text
from ..adapter import FormatAdapter, FormatInfo, PromoteOption
from ..files import Listing, SkippedEntry, list_md, rel_posix
from ..linking import Changes, one_memory_files, relinked, split_duplicates
from ..reading import as_str_list, problem_from

FORMAT_ID = "observation-v1"
OBSERVATION_SPEC = "observation/v1"
COMPREHENSION_SPEC = "comprehension/v1"

OBSERVATIONS_DIR = "observations"
COMPREHENSION_DIR = "comprehension"
ARCHIVE_DIR = "archive"

KIND_OBSERVATION = "observation"
KIND_COMPREHENSION = "comprehension"

#: The comprehension/v1 confidence levels (reference `ConfidenceLevel`).
CONFIDENCE_LEVELS: tuple[str, ...] = ("high", "medium", "low", "unknown")

#: Keys the observation/v1 spec defines; everything else is an extra field.
#: `type: observation` appears in the spec's example but not in its field
#: tables, so it is kept as an extra (expected.json extra_fields_preserved).
OBSERVATION_FIELDS: frozenset[str] = frozenset(
    {"spec", "id", "timestamp", "source", "event", "context", "trace_ref"}
)
OBSERVATION_REQUIRED: tuple[str, ...] = ("spec", "id", "timestamp", "source", "event")

COMPREHENSION_FIELDS: frozenset[str] = frozenset(
    {
        "spec",
        "id",
        "topic",
        "domain",
        "version",
        "prior",
        "observations",
        "posterior",
        "created",
        "updated",
        "verified",
    }
)
COMPREHENSION_REQUIRED: tuple[str, ...] = (
    "id",
    "topic",
    "domain",
    "prior",
    "observations",
    "posterior",
    "created",
    "updated",
)
PRIOR_REQUIRED: tuple[str, ...] = ("statement", "confidence", "source")
POSTERIOR_REQUIRED: tuple[str, ...] = (
    "statement",
    "confidence",
    "update_reasoning",
    "observations_used",
)

#: Every field the model defines as pointing at a record or a trace.
POINTER_FIELDS: tuple[PointerField, ...] = (
    PointerField("observations", "comprehension", "the observations it incorporates"),
    PointerField(
        "posterior.observations_used", "comprehension", "the observations behind the update"
    ),
    PointerField("context.prior_belief", "observation", "the comprehension (<id>/v<N>) tested"),
    PointerField("trace_ref", "observation", "an execution trace", PointerKind.EXTERNAL),
)

#: `context.prior_belief` form: `<comp-id>/v<N>`.
_PRIOR_BELIEF = re.compile(r"^(?P<id>.+)/v(?P<version>\d+)$")

#: Detection reads at most this many bytes of at most this many files per folder.
_DETECT_BYTES = 1024
_DETECT_FILES = 8
_OBSERVATION_MARKER = re.compile(rb"(?m)^spec:[ \t]*[\"']?observation/v1[\"']?[ \t]*\r?$")
_COMPREHENSION_MARKER = re.compile(rb"(?m)^spec:[ \t]*[\"']?comprehension/v1[\"']?[ \t]*\r?$")

_H1 = re.compile(r"^ {0,3}# +(?P<text>.*?)(?:\s+#+)?\s*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_OBSERVATION_PREFIX = re.compile(r"^Observation:\s*")


@dataclass(frozen=True, slots=True)
class _Folder:
    """One folder of documents and how to read it."""

    rel: str
    kind: str
    archived: bool


_FOLDERS: tuple[_Folder, ...] = (
    _Folder(OBSERVATIONS_DIR, KIND_OBSERVATION, False),
    _Folder(COMPREHENSION_DIR, KIND_COMPREHENSION, False),
    _Folder(f"{ARCHIVE_DIR}/{OBSERVATIONS_DIR}", KIND_OBSERVATION, True),
    _Folder(f"{ARCHIVE_DIR}/{COMPREHENSION_DIR}", KIND_COMPREHENSION, True),
)


@dataclass(slots=True)
class _ObservationLinkState(LinkState):
    """What `link` leaves for `relink` (valid only for the newest result).

    `claims`: how many documents claim each id; `obs` / `comps`: the kept
    observations and comprehensions by id; `cited_by` / `believers`: who
    cites each observation / holds each comprehension as a prior belief.
    """

    claims: Counter[str]
    obs: dict[str, Memory]
    comps: dict[str, Memory]
    cited_by: dict[str, dict[int, Memory]]
    believers: dict[str, dict[int, Memory]]


class ObservationV1Adapter(FormatAdapter):
    """Reads observation/v1 + comprehension/v1 vaults."""

    info: ClassVar[FormatInfo] = FormatInfo(
        id=FORMAT_ID,
        label="observation/v1",
        short_label="obs-v1",
        promote_note="creates one comprehension document citing the observations",
        promote_options=(
            PromoteOption("topic", "", "blank: the first observation's title"),
            PromoteOption("domain", "", "blank: the project, else general"),
            PromoteOption("statement", "", "blank: the observed events"),
        ),
        # Several observations of one vault make one comprehension.
        promotes_together=frozenset({KIND_OBSERVATION}),
    )
    pointer_fields: ClassVar[tuple[PointerField, ...]] = POINTER_FIELDS
    #: The linked result (link_state included) pickles faithfully: the scan
    #: cache keeps it and an unchanged vault is not linked again.
    cache_linked: ClassVar[bool] = True

    # -- detection ---------------------------------------------------------

    def detect(self, root: Path) -> bool:
        """A folder of observation/v1 (or comprehension/v1) documents below `root`.

        Cheap: looks at the first KB of a few files per folder.  The archive
        folders count too, so a vault whose documents were all archived is
        still recognised.
        """
        for folder in _FOLDERS:
            marker = (
                _OBSERVATION_MARKER if folder.kind == KIND_OBSERVATION else _COMPREHENSION_MARKER
            )
            if _folder_has_marker(root / folder.rel, marker):
                return True
        return False

    # -- scanning ----------------------------------------------------------

    # -- per-file scanning (see FormatAdapter) ------------------------------

    def files(self, root: Path) -> list[Path]:
        return [root / rel for rel in self.file_listing(root).names]

    def owns(self, root: Path, rel: str) -> bool:
        name = rel.rpartition("/")[2]
        return name.endswith(".md") and not name.startswith(".") and folder_of(rel) is not None

    def file_rels(self, root: Path) -> list[str]:
        """`files` as vault-relative strings (a cheaper stat walk)."""
        return self.file_listing(root).names

    def file_listing(self, root: Path) -> Listing:
        """Documents of every folder, and entries left out (links out of the vault, ...)."""
        names: list[str] = []
        skipped: list[SkippedEntry] = []
        for folder in _FOLDERS:
            listing = list_md(root, folder.rel)
            names.extend(f"{folder.rel}/{n}" for n in listing.names)
            skipped.extend(listing.skipped)
        return Listing(names, skipped)

    def scan_file(self, root: Path, path: Path, data: bytes | None = None) -> FileScan:
        return self.scan_rel(root, rel_posix(root, path), data, path)

    def scan_rel(
        self, root: Path, rel: str, data: bytes | None = None, path: Path | None = None
    ) -> FileScan:
        """`scan_file` by vault-relative path (a Path is built only to read the file)."""
        place = _folder_rank(rel)
        if place is None:
            return FileScan(rel)
        rank, folder = place
        # Within one folder the relative path orders as the file name does.
        out = FileScan(rel, order=(rank, rel))
        try:
            if data is None:
                text = read_text(path or root.joinpath(*rel.split("/"))).text
            else:
                text = decode_bytes(data, rel).text
            out.memories.append(parse_document(root, rel, text, folder.kind, folder.archived))
        except ParseError as err:
            out.problems.append(problem_from(err, FORMAT_ID, root, rel))
        except FileNotFoundError:
            pass  # removed while scanning: nothing left to report
        except OSError as exc:
            out.problems.append(
                Problem(
                    format=FORMAT_ID,
                    vault_root=root,
                    path=rel,
                    reason=Reason.UNREADABLE,
                    detail=f"could not read the file: {exc.strerror or exc}",
                )
            )
        return out

    def link(self, root: Path, scans: Mapping[str, FileScan]) -> ScanResult:
        result = ScanResult()
        loaded: list[Memory] = []
        for fs in scans.values():
            loaded.extend(fs.memories)
            result.problems.extend(fs.problems)
        # Ids are unique across both kinds: a comprehension and an observation
        # sharing an id would make every citation ambiguous.
        memories, duplicates = split_duplicates(loaded, FORMAT_ID, root)
        result.problems.extend(duplicates)
        result.ref_problems.extend(_link(memories))
        result.memories = memories
        cited_by: dict[str, dict[int, Memory]] = {}
        believers: dict[str, dict[int, Memory]] = {}
        for m in memories:
            _index_refs(m, cited_by, believers)
        result.link_state = _ObservationLinkState(
            claims=Counter(m.id for m in loaded),
            obs={m.id: m for m in memories if m.kind == KIND_OBSERVATION},
            comps={m.id: m for m in memories if m.kind == KIND_COMPREHENSION},
            cited_by=cited_by,
            believers=believers,
        )
        return result

    def relink(
        self, root: Path, scans: Mapping[str, FileScan], previous: ScanResult, changes: Changes
    ) -> ScanResult | None:
        """`link` after a few documents changed, touching only what they affect.

        Handles documents holding one valid memory before and after whose
        ids no other document claims; anything else returns None (full
        link).  Citations and prior beliefs of other documents are
        re-resolved when they name an id that appeared or disappeared, and
        `incorporated_by` is recomputed for the observations whose citing
        comprehensions changed.
        """
        st = previous.link_state
        split = one_memory_files(changes)
        if split is None or not isinstance(st, _ObservationLinkState):
            return None
        claims, obs, comps = st.claims, st.obs, st.comps
        cited_by, believers = st.cited_by, st.believers
        gone, new = split
        delta: Counter[str] = Counter()
        for m in gone:
            delta[m.id] -= 1
        for m in new:
            delta[m.id] += 1
        for mem_id, d in delta.items():
            gone_n = sum(1 for m in gone if m.id == mem_id)
            if claims[mem_id] != gone_n or claims[mem_id] + d > 1:
                return None  # another document claims this id: duplicates may change
        for m in gone:
            if (obs if m.kind == KIND_OBSERVATION else comps).get(m.id) is not m:
                return None

        # From here on the tables move to the new result.
        touched = {m.id for m in (*gone, *new)}
        was_obs = {i for i in touched if i in obs}
        was_comp = {i for i in touched if i in comps}
        for mem_id, d in delta.items():
            claims[mem_id] += d
            if claims[mem_id] <= 0:
                del claims[mem_id]
        recount: set[str] = set()  # observations whose incorporated_by may change
        for m in gone:
            (obs if m.kind == KIND_OBSERVATION else comps).pop(m.id, None)
            _index_refs(m, cited_by, believers, remove=True)
            if m.kind == KIND_COMPREHENSION:
                recount.update(m.native.get("cites", []))
        for m in new:
            (obs if m.kind == KIND_OBSERVATION else comps)[m.id] = m
            _index_refs(m, cited_by, believers)
        changed_obs = was_obs ^ {i for i in touched if i in obs}
        changed_comps = was_comp ^ {i for i in touched if i in comps}

        def order(x: Memory | ReferenceProblem) -> tuple[Any, ...]:
            return scans[x.path].order

        owners: dict[int, Memory] = {id(m): m for m in new}
        for mem_id in changed_obs:
            owners.update(cited_by.get(mem_id, {}))
        for mem_id in changed_comps:
            owners.update(believers.get(mem_id, {}))
        ref_problems: list[ReferenceProblem] = []
        for memory in sorted(owners.values(), key=order):
            ref_problems.extend(_link_one(memory, obs, comps))
            if memory.kind == KIND_COMPREHENSION:
                recount.update(memory.native["cites"])
        recount.update(m.id for m in new if m.kind == KIND_OBSERVATION)
        for obs_id in recount:
            target = obs.get(obs_id)
            if target is None:
                continue
            citing = sorted(cited_by.get(obs_id, {}).values(), key=order)
            incorporated = [c.id for c in citing if obs_id in c.native.get("cites", ())]
            if incorporated != target.native.get("incorporated_by"):
                target.native["incorporated_by"] = incorporated

        dropped = {id(m) for m in gone}
        owner_ids = {m.id for m in owners.values()} | {m.id for m in gone}
        return relinked(previous, dropped, new, owner_ids, ref_problems, order, st)

    # -- decay -------------------------------------------------------------

    def decay_brief(self, memory: Memory, as_of: date) -> tuple[str, Health, float, float | None]:
        """(status, health, weight, score) of `decay`, without its explanation."""
        status = "archived" if memory.archived else "retained"
        return status, STATUS_HEALTH[status], 0.0 if memory.archived else 1.0, None

    def decay(self, memory: Memory, as_of: date, *, explain: bool = True) -> DecayInfo:
        status = "archived" if memory.archived else "retained"
        start = memory.created
        age = days_between(start, as_of) if start is not None else None
        if not explain:
            return DecayInfo(
                status=status,
                health=STATUS_HEALTH[status],
                strength=1.0,
                weight=0.0 if memory.archived else 1.0,
                age_days=age,
            )
        spec = COMPREHENSION_SPEC if memory.kind == KIND_COMPREHENSION else OBSERVATION_SPEC
        if memory.kind == KIND_COMPREHENSION:
            since = "created"
            quote = "a comprehension is revised by new versions, not aged"
        else:
            since = "timestamp"
            quote = "'For now, observations persist indefinitely'"
        if start is not None:
            age_text = f"age {age} days since {day_of(start).isoformat()}"
        else:
            age_text = f"no {since}"
        why = (
            f"{spec} defines no decay ({quote}); {age_text} does not change anything: "
            "no score, no expiry, never archived automatically."
        )
        incorporated = _str_items(memory.native.get("incorporated_by"))
        if incorporated:
            why += (
                f" Incorporated into {', '.join(incorporated)}: the format allows pruning"
                " an incorporated observation; memlens never prunes automatically."
            )
        if memory.archived:
            why += " Archived: moved to archive/ by a user action; restore moves it back."
        return DecayInfo(
            status=status,
            health=STATUS_HEALTH[status],
            strength=1.0,
            weight=0.0 if memory.archived else 1.0,
            age_days=age,
            why=why,
        )


# -- detection helpers -----------------------------------------------------


def _folder_has_marker(folder: Path, marker: re.Pattern[bytes]) -> bool:
    """True if one of the first few `.md` files in `folder` carries `marker`."""
    if not folder.is_dir():
        return False
    checked = 0
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if not entry.name.endswith(".md") or entry.name.startswith("."):
                    continue
                try:
                    if not entry.is_file():
                        continue
                    with os.fdopen(open_regular(entry.path), "rb") as fh:
                        head = fh.read(_DETECT_BYTES)
                except OSError:
                    continue
                if marker.search(head):
                    return True
                checked += 1
                if checked >= _DETECT_FILES:
                    return False
    except OSError:
        return False
    return False


# -- reading ---------------------------------------------------------------


def parse_document(root: Path, rel: str, text: str, kind: str, archived: bool) -> Memory:
    """One decoded document (BOM removed, `\\n` endings) as a Memory.

    `kind` is KIND_OBSERVATION or KIND_COMPREHENSION.  Raises ParseError for
    anything invalid, exactly as a scan reports it.  Writers use this to
    re-read a file and to validate the bytes they are about to write.
    References are not resolved (that needs the whole vault).
    """
    data, doc = load_frontmatter(text, rel)
    if kind == KIND_OBSERVATION:
        return _observation(root, rel, data, doc, archived)
    return _comprehension(root, rel, data, doc, archived)


def _folder_rank(rel: str) -> tuple[int, _Folder] | None:
    parent = rel.rpartition("/")[0]
    for rank, folder in enumerate(_FOLDERS):
        if parent == folder.rel:
            return rank, folder
    return None


def folder_of(rel: str) -> tuple[str, bool] | None:
    """(kind, archived) of a vault-relative document path, None outside the folders."""
    parent = rel.rpartition("/")[0]
    for folder in _FOLDERS:
        if parent == folder.rel:
            return folder.kind, folder.archived
    return None


def _observation(
    root: Path, rel: str, data: dict[str, Any], doc: SplitDocument, archived: bool
) -> Memory:
    check = _Checker(rel, data, doc)
    # A wrong spec first: a foreign document lacks our fields for that reason.
    check.spec(OBSERVATION_SPEC)
    check.required(OBSERVATION_REQUIRED)
    memory_id = check.identifier()
    timestamp = check.timestamp("timestamp")
    source = check.string("source")
    event = check.string("event")
    context = data.get("context")
    # `context:` written with no value is null, which the model's `dict`
    # field rejects: only an absent key takes the default.
    if "context" in data and not isinstance(context, dict):
        check.fail(
            Reason.WRONG_TYPE,
            f"context must be a mapping, not {_type_name(context)}",
            "context",
        )
    trace_ref = data.get("trace_ref")
    if trace_ref is not None and not isinstance(trace_ref, str):
        check.fail(
            Reason.WRONG_TYPE,
            f"trace_ref must be a string, not {_type_name(trace_ref)}",
            "trace_ref",
        )

    title = _body_title(doc.body) or event
    return Memory(
        format=FORMAT_ID,
        vault_root=root,
        id=memory_id,
        kind=KIND_OBSERVATION,
        title=title,
        body=doc.body,
        path=rel,
        tags=_tags(data),
        confidence=None,
        created=timestamp,
        source=source,
        fields=data,
        extra={k: v for k, v in data.items() if k not in OBSERVATION_FIELDS},
        pinned=data.get("pinned") is True,
        archived=archived,
        native={
            "timestamp": iso(timestamp),
            "trace_ref": trace_ref,
            "incorporated_by": [],
        },
    )


def _comprehension(
    root: Path, rel: str, data: dict[str, Any], doc: SplitDocument, archived: bool
) -> Memory:
    check = _Checker(rel, data, doc)
    # The reference model defaults `spec` to comprehension/v1; a different
    # value in comprehension/ is a misplaced or foreign document.
    check.spec(COMPREHENSION_SPEC)
    # Nested required keys are reported with the top-level ones when the
    # parent is a mapping; a parent of the wrong type is reported below.
    missing = [k for k in COMPREHENSION_REQUIRED if k not in data]
    for parent, keys in (("prior", PRIOR_REQUIRED), ("posterior", POSTERIOR_REQUIRED)):
        block = data.get(parent)
        if isinstance(block, dict):
            missing.extend(f"{parent}.{k}" for k in keys if k not in block)
    if missing:
        check.fail(Reason.MISSING_REQUIRED_FIELD, f"lacks {', '.join(missing)}", None)

    memory_id = check.identifier()
    topic = check.string("topic")
    domain = check.string("domain")

    prior = check.mapping("prior")
    check.nested_string(prior, "prior", "statement")
    check.confidence(prior, "prior")
    check.nested_string(prior, "prior", "source")
    if prior.get("reasoning") is not None:
        check.nested_string(prior, "prior", "reasoning")

    observations = check.id_list(data.get("observations"), "observations")

    posterior = check.mapping("posterior")
    check.nested_string(posterior, "posterior", "statement")
    confidence = check.confidence(posterior, "posterior")
    check.nested_string(posterior, "posterior", "update_reasoning")
    used = check.id_list(posterior.get("observations_used"), "posterior.observations_used")

    created = check.timestamp("created")
    updated = check.timestamp("updated")

    version = data.get("version", 1)
    if version is None:
        version = 1
    if isinstance(version, bool) or not isinstance(version, int):
        check.fail(
            Reason.WRONG_TYPE, f"version must be an integer, not {_show(version)}", "version"
        )
    verified = data.get("verified", False)
    if verified is None:
        verified = False
    if not isinstance(verified, bool):
        check.fail(
            Reason.WRONG_TYPE, f"verified must be true or false, not {_show(verified)}", "verified"
        )

    source = data.get("source")
    tags = [domain, *(t for t in _tags(data) if t != domain)]
    return Memory(
        format=FORMAT_ID,
        vault_root=root,
        id=memory_id,
        kind=KIND_COMPREHENSION,
        title=topic,
        body=doc.body,
        path=rel,
        tags=tuple(tags),
        confidence=confidence,
        created=created,
        updated=updated,
        source=source if isinstance(source, str) else None,
        fields=data,
        extra={k: v for k, v in data.items() if k not in COMPREHENSION_FIELDS},
        pinned=data.get("pinned") is True,
        archived=archived,
        native={
            "timestamp": iso(created),
            "created": iso(created),
            "updated": iso(updated),
            "version": version,
            "verified": verified,
            "prior_confidence": prior.get("confidence"),
            "observations": list(observations),
            "observations_used": list(used),
            "cites": [],
        },
    )


class _Checker:
    """Field checks that raise ParseError with the file, id and header line."""

    def __init__(self, rel: str, data: dict[str, Any], doc: SplitDocument) -> None:
        self.rel = rel
        self.data = data
        self.doc = doc
        raw_id = data.get("id")
        self.id = raw_id if isinstance(raw_id, str) and raw_id.strip() else None

    def fail(self, reason: Reason, detail: str, key: str | None) -> NoReturn:
        # Without a key (a field is missing) point at the header's first line.
        at_line = self._line_of(key) if key else 1
        raise ParseError(self.rel, reason, detail, at_line=at_line, id=self.id)

    def _line_of(self, key: str) -> int | None:
        """1-based file line of a top-level `key:` in the header, if found."""
        top = key.split(".", 1)[0]
        for i, line in enumerate(self.doc.header.split("\n")):
            if line.startswith((f"{top}:", f'"{top}":', f"'{top}':")):
                return 2 + i
        return None

    def required(self, keys: Iterable[str]) -> None:
        """Absent keys only: a null or empty value is checked by the field's type."""
        missing = [k for k in keys if k not in self.data]
        if missing:
            self.fail(Reason.MISSING_REQUIRED_FIELD, f"lacks {', '.join(missing)}", None)

    def spec(self, expected: str) -> None:
        """A spec, when given, must be `expected` (absence is checked separately)."""
        value = self.data.get("spec", expected)
        if value != expected:
            self.fail(Reason.WRONG_TYPE, f"spec {_show(value)} is not {expected!r}", "spec")

    def identifier(self) -> str:
        value = self.data.get("id")
        if not isinstance(value, str):
            self.fail(Reason.WRONG_TYPE, f"id must be a string, not {_show(value)}", "id")
        self._not_blank(value, "id", "id")
        # Why: ids name files in actions (promote writes `<id>.md`) and are
        # matched against references; path syntax in one is never safe.
        if has_path_syntax(value):
            self.fail(Reason.WRONG_TYPE, f"id {_show(value)} must be a bare name, not a path", "id")
        return value

    def string(self, key: str) -> str:
        value = self.data.get(key)
        if not isinstance(value, str):
            self.fail(Reason.WRONG_TYPE, f"{key} must be a string, not {_type_name(value)}", key)
        self._not_blank(value, key, key)
        return value

    def _not_blank(self, value: str, name: str, key: str) -> None:
        # Right type, value outside the field's range: see the module docstring.
        if not value.strip():
            self.fail(Reason.OUT_OF_RANGE, f"{name} is empty", key)

    def timestamp(self, key: str) -> datetime | date:
        value = self.data.get(key)
        parsed = None if isinstance(value, bool) else parse_datetime(value)
        if parsed is None:
            self.fail(Reason.WRONG_TYPE, f"{key} {_show(value)} is not an ISO datetime", key)
        return parsed

    def mapping(self, key: str) -> dict[Any, Any]:
        value = self.data.get(key)
        if not isinstance(value, dict):
            self.fail(Reason.WRONG_TYPE, f"{key} must be a mapping, not {_type_name(value)}", key)
        return value

    def nested_string(self, block: dict[Any, Any], parent: str, key: str) -> str:
        value = block.get(key)
        if not isinstance(value, str):
            self.fail(
                Reason.WRONG_TYPE,
                f"{parent}.{key} must be a string, not {_type_name(value)}",
                parent,
            )
        self._not_blank(value, f"{parent}.{key}", parent)
        return value

    def confidence(self, block: dict[Any, Any], parent: str) -> str:
        value = block.get("confidence")
        levels = "/".join(CONFIDENCE_LEVELS)
        if not isinstance(value, str):
            self.fail(
                Reason.WRONG_TYPE,
                f"{parent}.confidence {_show(value)} is not one of {levels}",
                parent,
            )
        if value not in CONFIDENCE_LEVELS:
            self.fail(
                Reason.OUT_OF_RANGE,
                f"{parent}.confidence {_show(value)} is not one of {levels}",
                parent,
            )
        return value

    def id_list(self, value: Any, name: str) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.fail(
                Reason.WRONG_TYPE,
                f"{name} must be a list of observation ids, not {_show(value)}",
                name,
            )
        return value


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _show(value: Any, limit: int = 60) -> str:
    """A short one-line rendering of a bad value for a problem detail."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _str_items(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _tags(data: dict[str, Any]) -> tuple[str, ...]:
    """Tags from `labels` and `tags` when they are strings or string lists."""
    out: list[str] = []
    for key in ("labels", "tags"):
        for tag in as_str_list(data.get(key)) or []:
            if tag not in out:
                out.append(tag)
    return tuple(out)


def _lines(text: str) -> Iterator[str]:
    """The lines of `text`, one at a time (a title is usually near the top)."""
    start = 0
    while True:
        end = text.find("\n", start)
        if end < 0:
            yield text[start:]
            return
        yield text[start:end]
        start = end + 1


def _body_title(body: str) -> str:
    """The first H1 outside code fences, without '# ' and 'Observation: '."""
    fence: str | None = None
    for line in _lines(body):
        opener = _FENCE.match(line)
        if opener:
            if fence is None:
                fence = opener.group(1)
            elif opener.group(1) == fence:
                fence = None
            continue
        if fence is not None:
            continue
        h1 = _H1.match(line)
        if h1:
            text = _OBSERVATION_PREFIX.sub("", h1.group("text").strip())
            if text:
                return text
    return ""


# -- references ------------------------------------------------------------


def _link(memories: list[Memory]) -> list[ReferenceProblem]:
    """Resolve citations and prior beliefs; fill relations and incorporated_by."""
    observations = {m.id: m for m in memories if m.kind == KIND_OBSERVATION}
    comprehension = {m.id for m in memories if m.kind == KIND_COMPREHENSION}
    problems: list[ReferenceProblem] = []
    # Linking runs again after a file changes (live reload, cache): derived
    # values are recomputed from scratch, never accumulated.
    for obs in observations.values():
        if obs.native.get("incorporated_by"):
            obs.native["incorporated_by"] = []
    for memory in memories:
        problems.extend(_link_one(memory, observations, comprehension))
        if memory.kind == KIND_COMPREHENSION:
            for obs_id in memory.native["cites"]:
                incorporated = observations[obs_id].native["incorporated_by"]
                if memory.id not in incorporated:
                    incorporated.append(memory.id)
    return problems


def _belief(memory: Memory) -> tuple[str, str] | None:
    """(prior_belief as written, the comprehension id it names) of an observation."""
    context = memory.fields.get("context")
    belief = context.get("prior_belief") if isinstance(context, dict) else None
    if not isinstance(belief, str):
        return None
    # `<comp-id>/v<N>` is the format's own syntax, not a path: strip the
    # version, then the bare id must be free of path syntax.
    versioned = _PRIOR_BELIEF.match(belief)
    return belief, versioned.group("id") if versioned else belief


def _citations(memory: Memory) -> list[tuple[str, str]]:
    """(field name, ref) of every observation a comprehension cites, in order."""
    out: list[tuple[str, str]] = []
    for field in ("observations", "observations_used"):
        name = field if field == "observations" else f"posterior.{field}"
        out.extend((name, ref) for ref in _str_items(memory.native.get(field)))
    return out


def _link_one(
    memory: Memory, observations: Container[str], comprehension: Container[str]
) -> list[ReferenceProblem]:
    """Resolve one memory's references in place (and a comprehension's `cites`)."""
    problems: list[ReferenceProblem] = []

    def flag(field: str, ref: str, issue: RefIssue) -> None:
        problems.append(
            ReferenceProblem(
                format=FORMAT_ID,
                vault_root=memory.vault_root,
                path=memory.path,
                id=memory.id,
                field=field,
                ref=ref,
                reason=issue,
            )
        )

    relations: list[Relation] = []
    if memory.kind == KIND_COMPREHENSION:
        cites: list[str] = []
        for name, ref in _citations(memory):
            issue = reference_issue(ref, observations)
            resolved = ref if issue is None else None
            if issue is not None:
                flag(name, ref, issue)
            elif ref not in cites:
                cites.append(ref)
            relations.append(Relation(target=ref, type="cites", field=name, resolved=resolved))
        memory.native["cites"] = cites
    else:
        belief = _belief(memory)
        if belief is not None:
            written, target = belief
            field = "context.prior_belief"
            issue = reference_issue(target, comprehension)
            if issue is not None:
                flag(field, written, issue)
            found = target if issue is None else None
            relations.append(
                Relation(target=written, type="prior_belief", field=field, resolved=found)
            )
        trace = memory.native.get("trace_ref")
        if isinstance(trace, str):
            issue = reference_issue(trace, (), kind=PointerKind.EXTERNAL)
            if issue is not None:
                flag("trace_ref", trace, issue)
    if memory.relations != tuple(relations):
        memory.relations = tuple(relations)
    return problems


def _index_refs(
    memory: Memory,
    cited_by: dict[str, dict[int, Memory]],
    believers: dict[str, dict[int, Memory]],
    *,
    remove: bool = False,
) -> None:
    """Add (or remove) a memory in the reverse reference tables."""
    if memory.kind == KIND_COMPREHENSION:
        keys = [(cited_by, ref) for _name, ref in _citations(memory)]
    else:
        belief = _belief(memory)
        keys = [(believers, belief[1])] if belief is not None else []
    for table, key in keys:
        if remove:
            holders = table.get(key)
            if holders is not None:
                holders.pop(id(memory), None)
                if not holders:
                    del table[key]
        else:
            table.setdefault(key, ByIdentity())[id(memory)] = memory
