"""Typed errors raised by core.  Core never prints; front ends decide how to show these."""

from __future__ import annotations

from pathlib import Path

from .model import Reason


class MemlensError(Exception):
    """Base class for every error core raises on purpose."""


class ParseError(MemlensError):
    """A file, section or line could not be read as its format requires."""

    def __init__(
        self,
        path: Path | str,
        reason: Reason,
        detail: str,
        *,
        line: int | None = None,
        at_line: int | None = None,
        id: str | None = None,
    ) -> None:
        self.path = str(path)
        self.reason = reason
        self.detail = detail
        self.line = line
        self.at_line = at_line
        self.id = id
        where = f":{line}" if line else ""
        super().__init__(f"{self.path}{where}: {reason.value}: {detail}")


class UnsafePathError(MemlensError):
    """A reference, id or destination would leave the vault root."""


class NotFoundError(MemlensError):
    """No memory or vault matches what was asked for."""


class ConflictError(MemlensError):
    """The file changed on disk since it was read; the write was refused."""


class RefusedError(MemlensError):
    """An action is not allowed (validation failed, immutable record, ...)."""
