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

from collections import Counter
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import ClassVar

from ...errors import ParseError
from ...health import STATUS_HEALTH
from ...model import DecayInfo, FileScan, Health, Memory, Problem, Reason, ScanResult
from ...refs import PointerField
from ...text.dates import day_of, days_between
from ...text.textio import decode_bytes, read_text
from ..adapter import FormatAdapter, FormatInfo, PromoteOption
from ..files import Listing, SkippedEntry, list_md, rel_posix, some_md
from ..linking import Changes, split_duplicates
from ..preview_model import PreviewRequest, PreviewSection
from ..privacy_model import TextField, frontmatter_text_fields
from ..reading import problem_from
from . import detection
from .documents import parse_document
from .linking import _index_refs, _link, _ObservationLinkState, relink_documents
from .preview import comprehension_preview
from .schema import (
    _FOLDERS,
    COMPREHENSION_SPEC,
    FORMAT_ID,
    KIND_COMPREHENSION,
    KIND_OBSERVATION,
    OBSERVATION_SPEC,
    POINTER_FIELDS,
    _folder_rank,
    folder_of,
)
from .validation import _str_items


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
        # observation/v1's required `event` and its `context` mapping; a
        # comprehension's topic and its prior/posterior beliefs and reasoning.
        text_fields=(
            "event",
            "context",
            "topic",
            "domain",
            "prior.statement",
            "posterior.statement",
            "posterior.update_reasoning",
        ),
    )
    pointer_fields: ClassVar[tuple[PointerField, ...]] = POINTER_FIELDS

    # -- detection ---------------------------------------------------------

    def detect(self, root: Path) -> bool:
        return detection.detect(root)

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

    def first_files(self, root: Path, limit: int) -> list[str]:
        """Documents of the folders `file_listing` lists, the first ones first."""
        return some_md(root, [folder.rel for folder in _FOLDERS], limit)

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
        return relink_documents(scans, previous, changes)

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

    def agent_preview(
        self, root: Path, result: ScanResult, request: PreviewRequest
    ) -> list[PreviewSection]:
        """The comprehension documents and what they incorporate (see `preview`)."""
        return comprehension_preview(self, root, result.memories, request)

    def text_fields(self, memory: Memory, raw: str | None) -> list[TextField]:
        """Every frontmatter string (on its key's line) and the body (from its first line)."""
        return frontmatter_text_fields(memory, raw)
