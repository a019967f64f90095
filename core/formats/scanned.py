"""What a format's runs read from a scan, as protocols: the scanner sits above the formats.

`scan.vault.Vault` and `scan.vault.Catalog` satisfy these structurally, so a
run (Project Ocean's promote and decay selections) takes the catalog the
caller already has without the format package importing the scanner.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from ..model import Memory, Problem


class ScannedVault(Protocol):
    """One scanned vault: its root, its format, what loaded and what did not."""

    @property
    def root(self) -> Path: ...

    @property
    def format(self) -> str: ...

    @property
    def memories(self) -> Sequence[Memory]: ...

    @property
    def problems(self) -> Sequence[Problem]: ...


class ScannedVaults(Protocol):
    """The scanned vaults of a catalog, in scan order."""

    @property
    def vaults(self) -> Sequence[ScannedVault]: ...
