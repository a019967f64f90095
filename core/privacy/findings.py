"""A finding: one secret in one text field of one memory, and how it is shown (masked).

The secret itself stays in memory only: it is left out of `repr`, of every
dict `to_dict` builds and of every message, and shown as `mask(secret)`
(at most four leading characters, never more than a quarter of it, and the
length: `AKIA…(20)`, `h…(7)`), so no output, log or error can print it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field as dc_field
from pathlib import Path
from typing import Any

from ..formats.privacy_model import Redaction
from ..text.sanitize import one_line
from .detectors import PERSONAL_KINDS


def mask(secret: str) -> str:
    """`AKIA…(20)`: a short prefix (≤ 4 characters, ≤ a quarter) and the length."""
    keep = min(4, len(secret) // 4)
    return f"{one_line(secret[:keep])}…({len(secret)})"


def scrub(text: str, secrets: Iterable[str]) -> str:
    """`text` with every secret in it replaced by its mask (for messages and errors)."""
    for secret in sorted(set(secrets), key=len, reverse=True):
        if secret:
            text = text.replace(secret, mask(secret))
    return text


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret in one field of one memory (the secret is never printed)."""

    vault_root: Path
    vault: str
    format: str
    id: str
    path: str
    field: str
    line: int | None
    kind: str
    secret: str = dc_field(repr=False, compare=False)
    #: Unified health of the memory (as of the scan's date): live, archived, ...
    health: str = ""
    #: `memory.line` / `memory.index` of JSON Lines records and dream-cycle sections.
    record_line: int | None = None
    index: int | None = None

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
            "id": self.id,
            "path": self.path,
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
        return out

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{where} {self.id} {self.field} {self.kind} {self.masked}"


__all__ = ["Finding", "mask", "scrub"]
