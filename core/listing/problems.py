"""Invalid items and flagged references flattened into one problems list."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..model import Problem, ReferenceProblem
from ..scan.vault import Vault


@dataclass(frozen=True, slots=True)
class ProblemEntry:
    """One invalid item or flagged reference, flattened for a problems list."""

    vault: str
    vault_root: Path
    format: str
    path: str
    #: `invalid` or `reference`.
    kind: str
    reason: str
    detail: str
    id: str | None
    line: int | None
    index: int | None
    #: 1-based line of the fault in the file, where known.
    at_line: int | None
    #: The problem itself; None for entries built elsewhere (privacy findings).
    source: Problem | ReferenceProblem | None

    @property
    def where(self) -> str:
        if self.line is not None:
            return f"{self.path}:{self.line}"
        if self.index is not None:
            return f"{self.path} §{self.index}"
        if self.at_line is not None:
            return f"{self.path}:{self.at_line}"
        return self.path


def problem_entries(vaults: Iterable[Vault]) -> list[ProblemEntry]:
    """Every problem of every vault: invalid items first, then references, in file order."""
    out: list[ProblemEntry] = []
    for v in vaults:
        for p in v.problems:
            out.append(
                ProblemEntry(
                    vault=v.name,
                    vault_root=v.root,
                    format=p.format,
                    path=p.path,
                    kind="invalid",
                    reason=p.reason.value,
                    detail=p.detail,
                    id=p.id,
                    line=p.line,
                    index=p.index,
                    at_line=p.at_line if p.at_line is not None else p.line,
                    source=p,
                )
            )
        for rp in v.ref_problems:
            out.append(
                ProblemEntry(
                    vault=v.name,
                    vault_root=v.root,
                    format=rp.format,
                    path=rp.path,
                    kind="reference",
                    reason=rp.reason.value,
                    detail=f"{rp.field}: {rp.ref}",
                    id=rp.id,
                    line=rp.line,
                    index=None,
                    at_line=rp.line,
                    source=rp,
                )
            )
    return out
