"""Where an observation file sits: whose memory (an agent's or shared), which area, and
the id its path gives; the scan order follows from it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from ..files import dir_state
from .schema import SHARED


@dataclass(frozen=True, slots=True)
class _Location:
    """Where a file sits in the layout, derived from its path alone.

    No Path is built unless asked for (`path`): a cold scan locates every
    file, and pathlib's parsing was a good part of the per-file cost.
    """

    root: Path
    rel: str
    agent: str  # agent name, or "shared"
    area: str  # "vault" | "archive" | "shared"
    archived: bool

    @property
    def path(self) -> Path:
        return self.root.joinpath(*self.rel.split("/"))

    @property
    def name(self) -> str:
        return self.rel.rpartition("/")[2]

    @property
    def stem(self) -> str:
        return self.name[:-3]  # every located name ends with ".md"

    @property
    def shared(self) -> bool:
        return self.agent == SHARED and not self.rel.startswith("agents/")

    @property
    def id(self) -> str:
        return f"{self.agent}/{self.stem}"


def _has_agent_memory(root: Path) -> bool | None:
    """True if some `agents/<name>/memory/` holds a `vault/` or `archive/`;
    None if not but an agent folder (or `agents/` itself) could not be read."""
    agents = root / "agents"
    try:
        names = sorted(n for n in os.listdir(agents) if not n.startswith("."))
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:
        return None
    refused = False
    for name in names:
        memory = agents / name / "memory"
        states = (dir_state(memory / "vault"), dir_state(memory / "archive"))
        if True in states:
            return True
        refused = refused or None in states
    return None if refused else False


def locate(root: Path, rel: str) -> _Location | None:
    """Where a vault-relative POSIX path sits in the layout; None if it is no observation path.

    Used by the writer to re-read one file exactly as scan() reads it.
    """
    parts = rel.split("/")
    if not parts[-1].endswith(".md") or any(p in ("", ".", "..") for p in parts):
        return None
    in_agent = len(parts) == 5 and parts[0] == "agents" and parts[2] == "memory"
    if in_agent and parts[3] in ("vault", "archive"):
        # Interned: every memory of an agent repeats its name and area.
        area = _AREAS[parts[3]]
        return _Location(root, rel, sys.intern(parts[1]), area, area == "archive")
    if parts[0] == "shared" and len(parts) > 2 and parts[1] == "observations":
        if len(parts) == 3:
            return _Location(root, rel, SHARED, "shared", False)
        if len(parts) == 4 and parts[2] == "archive":
            return _Location(root, rel, SHARED, "archive", True)
    return None


def _owned(rel: str) -> _Location | None:
    """The location of `rel` if scan() would read it (hidden names are skipped)."""
    parts = rel.split("/")
    if any(p.startswith(".") for p in parts):
        return None
    return locate(Path(), rel)


_AREA_RANK = {"vault": 0, "archive": 1, "shared": 0}
_AREAS = {"vault": "vault", "archive": "archive"}


def _order(loc: _Location) -> tuple[int, str, int, str]:
    """Scan order: agents by name (vault, then archive), then shared/, then its archive/.

    Within one folder the relative path orders exactly as the file name
    does (same prefix), and it is the string the scan already holds.
    """
    if loc.rel.startswith("agents/"):
        return (0, loc.agent, _AREA_RANK[loc.area], loc.rel)
    return (1, "", _AREA_RANK[loc.area], loc.rel)
