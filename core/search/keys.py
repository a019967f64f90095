"""What names a saved search index: the set of vaults it covers and the code that made it.

Shared by the persisted index (`persisted`) and the app's index cache
(`index_cache`), so both key and invalidate their files the same way.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..safe_io import read_regular
from ..scan.cache import code_fingerprint

if TYPE_CHECKING:
    from ..scan.vault import Vault


def vault_set_key(vaults: list[Vault]) -> str:
    """A short hash of exactly this set of vaults (real root, name from the paths, format)."""
    ident = "\n".join(sorted(f"{os.path.realpath(v.root)}\0{v.rel}\0{v.format}" for v in vaults))
    return hashlib.sha256(ident.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def search_code_fingerprint(vaults: list[Vault], tag: str) -> str:
    """sha256 over `tag`, the formats' scan fingerprints, every search module and decay."""
    here = Path(__file__).parent
    digest = hashlib.sha256(tag.encode())
    for fmt in sorted({v.format for v in vaults}):
        digest.update(code_fingerprint(fmt).encode())
    for path in [*sorted(here.glob("*.py")), here.parent / "decay.py"]:
        with contextlib.suppress(OSError):
            digest.update(path.name.encode() + b"\0" + read_regular(path))
    return digest.hexdigest()
