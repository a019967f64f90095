"""PLACEHOLDER: the dream-cycle adapter is being written."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import ClassVar

from ..model import DecayInfo, Memory, ScanResult


class DreamCycleAdapter:
    format_id: ClassVar[str] = "dream-cycle"
    label: ClassVar[str] = r"Dream\ Cycle"

    def detect(self, root: Path) -> bool:
        return False

    def scan(self, root: Path) -> ScanResult:
        return ScanResult()

    def decay(self, memory: Memory, as_of: date) -> DecayInfo:
        raise NotImplementedError
