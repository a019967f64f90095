"""Detection: a Dream Cycle vault's `observations.md` (the registry asks here before it
imports the format)."""

from __future__ import annotations

import os
from pathlib import Path

from ...safe_io import open_regular
from .files import ARCHIVE_JSONL, ARCHIVED_MD, OBSERVATIONS


def detect(root: Path) -> bool:
    """`observations.md` beside an archive, or holding a `## ` section."""
    obs = root / OBSERVATIONS
    try:
        if not obs.is_file():
            return False
        if (root / ARCHIVE_JSONL).is_file() or (root / ARCHIVED_MD).is_file():
            return True
        with os.fdopen(open_regular(obs), "rb") as fh:
            for raw in fh:
                if raw.startswith(b"\xef\xbb\xbf"):
                    raw = raw[3:]
                if raw.startswith(b"## "):
                    return True
    except OSError:
        return False
    return False
