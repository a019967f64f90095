"""Which file holds the persisted index of a set of vaults, and which code wrote it.

Apart from `persisted` (numpy, the index code) so that `fresh_check` can
find and check the file without importing them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..store.db import cache_dir
from .keys import search_code_fingerprint, vault_set_key

if TYPE_CHECKING:
    from ..scan.vault import Vault

#: The layout of the file; another version is rebuilt.
VERSION = 10


def index_path(vaults: list[Vault]) -> Path:
    """The persisted index of exactly this set of vaults."""
    return cache_dir() / f"search-{vault_set_key(vaults)}.sqlite"


def persisted_code(vaults: list[Vault]) -> str:
    """A fingerprint of the code whose output the file holds (another code: rebuilt)."""
    return search_code_fingerprint(vaults, f"persisted-index-v{VERSION}")


__all__ = ["VERSION", "index_path", "persisted_code"]
