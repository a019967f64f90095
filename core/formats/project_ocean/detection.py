"""Detection: a Project Ocean vault has agents' memory folders (the registry asks here
before it imports the format)."""

from __future__ import annotations

from pathlib import Path

from ..files import dir_state
from .locations import _has_agent_memory


def detect(root: Path) -> bool:
    """An `agents/<name>/memory/` with a `vault/` or `archive/` folder.

    An agent folder that cannot be read counts when `shared/observations/`
    is there too: one unreadable agent must not hide the whole vault (the
    scan reports that agent as one problem).
    """
    found = _has_agent_memory(root)
    if found is None:
        return dir_state(root / "shared" / "observations") is True
    return found
