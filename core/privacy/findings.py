"""A finding: one secret in one text field of one memory, and how it is shown (masked).

The secret itself stays in memory only: it is left out of `repr`, of every
dict `to_dict` builds and of every message, and shown as `mask(secret)`
(at most four leading characters, never more than a quarter of it, and the
length: `AKIA…(20)`, `h…(7)`), so no output, log or error can print it.
Nor can the memory's id or file name print it, where a format derives them
from a title holding the secret: they are shown with it masked.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from pathlib import Path
from typing import Any

from ..formats.privacy_model import Redaction
from ..text.masking import mask, scrub
from .detectors import PERSONAL_KINDS

#: The shortest start of a secret's slug that counts as the secret in a name.
_SLUG_PREFIX = 6


def hide_in_name(name: str, secrets: Iterable[str]) -> str:
    """An id or a file path shown beside findings, with the secrets it holds masked.

    Some formats derive ids and file names from titles: a Dream Cycle
    heading `NAS password is tulip699x` has the id
    `nas-password-is-tulip699x-3f2a1c`.  A secret in a title is then in the
    name, in any case, or as its slug (lowercase, `-` for other
    characters, cut short when the name is).
    """
    for secret in sorted(set(secrets), key=len, reverse=True):
        low = name.lower()
        at = low.find(secret.lower()) if secret else -1
        if at >= 0:
            name = name[:at] + mask(secret) + name[at + len(secret) :]
            continue
        slug = re.sub(r"[^a-z0-9]+", "-", secret.lower()).strip("-")
        for k in range(min(len(slug), len(name)), min(len(slug), _SLUG_PREFIX) - 1, -1):
            at = low.find(slug[:k]) if k else -1
            if at >= 0:
                name = name[:at] + mask(secret) + name[at + k :]
                break
    return name


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret in one field of one memory (the secret is never printed)."""

    vault_root: Path
    vault: str
    format: str
    #: The memory's id and file, to find it again; shown as `shown_id`, `shown_path`.
    id: str = dc_field(repr=False)
    path: str = dc_field(repr=False)
    field: str
    line: int | None
    kind: str
    secret: str = dc_field(repr=False, compare=False)
    #: Unified health of the memory (as of the scan's date): live, archived, ...
    health: str = ""
    #: `memory.line` / `memory.index` of JSON Lines records and dream-cycle sections.
    record_line: int | None = None
    index: int | None = None
    #: `id` and `path` with the memory's secrets masked (`hide_in_name`): what is printed.
    shown_id: str = dc_field(default="", compare=False)
    shown_path: str = dc_field(default="", compare=False)
    #: Found in an invalid item (a file, section or line memlens could not read as
    #: a memory): listed so nothing is missed, never redacted (never rewritten).
    invalid: bool = False
    #: Found in a file that holds no memory (an episode log, CORE.md, a view or
    #: stance store: `FormatAdapter.side_files`): listed, never redacted.
    side: bool = False

    @property
    def memoryless(self) -> bool:
        """Not in a memory (an invalid item, a side file): listed, never redacted."""
        return self.invalid or self.side

    @property
    def masked(self) -> str:
        return mask(self.secret)

    @property
    def category(self) -> str:
        """`personal` (cards, IBANs, e-mail, phones) or `credential` (everything else)."""
        return "personal" if self.kind in PERSONAL_KINDS else "credential"

    @property
    def memory_key(self) -> tuple[str, str]:
        """The memory's identity across vaults, as `Memory.key`."""
        return (str(self.vault_root), self.id)

    def redaction(self) -> Redaction:
        return Redaction(self.field, self.secret, self.kind)

    def to_dict(self) -> dict[str, Any]:
        """The JSON record of `memlens secrets --json` (no secret, only its mask)."""
        out: dict[str, Any] = {
            "vault": self.vault,
            "format": self.format,
            "id": self.shown_id or self.id,
            "path": self.shown_path or self.path,
            "field": self.field,
            "line": self.line,
            "kind": self.kind,
            "category": self.category,
            "masked": self.masked,
            "length": len(self.secret),
            "health": self.health,
        }
        if self.index is not None:
            out["index"] = self.index
        if self.invalid:
            out["invalid"] = True
        if self.side:
            out["side_file"] = True
        return out

    def __str__(self) -> str:
        path, id_ = self.shown_path or self.path, self.shown_id or self.id
        where = f"{path}:{self.line}" if self.line is not None else path
        return f"{where} {id_} {self.field} {self.kind} {self.masked}"


def places(findings: Sequence[Finding]) -> tuple[int, int, int]:
    """How many memories, invalid items and side files the findings are in (for the counts)."""
    memories = {f.memory_key for f in findings if not f.memoryless}
    invalid = {(f.memory_key, f.record_line, f.index) for f in findings if f.invalid}
    side = {f.memory_key for f in findings if f.side}
    return len(memories), len(invalid), len(side)


__all__ = ["Finding", "hide_in_name", "mask", "places", "scrub"]
