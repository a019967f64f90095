"""memlens core: read, validate, decay, search, graph and safely write agent-memory vaults.

This package never imports Textual; the app and the CLI are thin fronts over it.

The names below load on first use (PEP 562): importing a light submodule such
as `memlens.core.config` must not pull in scanning, numpy and every format,
or `memlens --version` would pay for the whole engine.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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

#: Each public name and the submodule that defines it.
_HOMES: dict[str, str] = {
    **dict.fromkeys(("decay_of", "forecast"), ".decay"),
    **dict.fromkeys(
        (
            "ConflictError",
            "MemlensError",
            "NotFoundError",
            "ParseError",
            "RefusedError",
            "UnsafePathError",
        ),
        ".errors",
    ),
    **dict.fromkeys(
        (
            "DecayInfo",
            "Health",
            "Memory",
            "Problem",
            "Reason",
            "ReferenceProblem",
            "RefIssue",
            "Relation",
            "ScanResult",
        ),
        ".model",
    ),
    **dict.fromkeys(
        ("Catalog", "Vault", "discover", "open_catalog", "scan_vault", "survey"), ".scan.vault"
    ),
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(home, __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})


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
