"""Detection: an experience-record vault holds `experiences.jsonl` (the registry asks
here before it imports the format)."""

from __future__ import annotations

from pathlib import Path

from .schema import EXPERIENCES


def detect(root: Path) -> bool:
    return (root / EXPERIENCES).is_file()
