"""PLACEHOLDER: the observation-v1 adapter is being written."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import ClassVar

from ..model import DecayInfo, Memory, ScanResult


class ObservationV1Adapter:
    format_id: ClassVar[str] = "observation-v1"
    label: ClassVar[str] = "observation/v1"

    def detect(self, root: Path) -> bool:
        return False

    def scan(self, root: Path) -> ScanResult:
        return ScanResult()

    def decay(self, memory: Memory, as_of: date) -> DecayInfo:
        raise NotImplementedError
