"""PLACEHOLDER: the experience-records adapter is being written."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import ClassVar

from ..model import DecayInfo, Memory, ScanResult


class ExperienceRecordAdapter:
    format_id: ClassVar[str] = "experience-records"
    label: ClassVar[str] = r"Experience\ records"

    def detect(self, root: Path) -> bool:
        return False

    def scan(self, root: Path) -> ScanResult:
        return ScanResult()

    def decay(self, memory: Memory, as_of: date) -> DecayInfo:
        raise NotImplementedError
