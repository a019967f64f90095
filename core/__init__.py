"""memlens core: read, validate, decay, search, graph and safely write agent-memory vaults.

This package never imports Textual; the app and the CLI are thin fronts over it.
"""

from __future__ import annotations

from .decay import decay_of, forecast
from .errors import (
    ConflictError,
    MemlensError,
    NotFoundError,
    ParseError,
    RefusedError,
    UnsafePathError,
)
from .model import (
    DecayInfo,
    Health,
    Memory,
    Problem,
    Reason,
    ReferenceProblem,
    RefIssue,
    Relation,
    ScanResult,
)
from .scan.vault import Catalog, Vault, discover, open_catalog, scan_vault, survey

__all__ = [
    "Catalog",
    "ConflictError",
    "DecayInfo",
    "Health",
    "MemlensError",
    "Memory",
    "NotFoundError",
    "ParseError",
    "Problem",
    "Reason",
    "RefIssue",
    "ReferenceProblem",
    "RefusedError",
    "Relation",
    "ScanResult",
    "UnsafePathError",
    "Vault",
    "decay_of",
    "discover",
    "forecast",
    "open_catalog",
    "scan_vault",
    "survey",
]
