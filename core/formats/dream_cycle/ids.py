"""Ids and titles of observations: derived from the heading text, never its position."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable

_ASCII_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")

TITLE_MAX = 100

SLUG_MAX = 48


def slugify(title: str, max_len: int = SLUG_MAX) -> str:
    """Lowercase letters and digits (any script) joined by `-`; never path syntax."""
    if title.isascii():
        return _ASCII_NON_ALNUM.sub("-", title.lower()).strip("-")[:max_len].strip("-")
    out: list[str] = []
    dash = False
    for ch in unicodedata.normalize("NFC", title).lower():
        if unicodedata.category(ch)[0] in "LN":
            out.append(ch)
            dash = False
        elif out and not dash:
            out.append("-")
            dash = True
    return "".join(out)[:max_len].strip("-")


def section_base_id(title: str) -> str:
    """Stable id for a heading: `<slug>-<first 6 hex of sha1(title)>`."""
    digest = hashlib.sha1(title.encode("utf-8", "surrogatepass")).hexdigest()[:6]
    slug = slugify(title)
    return f"{slug}-{digest}" if slug else f"section-{digest}"


class IdAllocator:
    """Hands out `base`, `base-2`, `base-3`, ... in call order."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    @property
    def seen(self) -> dict[str, int]:
        """How often each base was taken so far (the allocator's own mapping)."""
        return self._seen

    def take(self, base: str) -> str:
        n = self._seen.get(base, 0) + 1
        self._seen[base] = n
        return base if n == 1 else f"{base}-{n}"


class _RecordingIds(IdAllocator):
    """An IdAllocator that remembers each (base, id given), for link()."""

    def __init__(self) -> None:
        super().__init__()
        self.taken: list[tuple[str, str]] = []

    def take(self, base: str) -> str:
        given = super().take(base)
        self.taken.append((base, given))
        return given


class _WindowIds(_RecordingIds):
    """Ids for sections read again mid-file, numbered as a full read numbers them.

    `before(base)` says how often a base was taken before the first section
    read (asked once per base, on its first take).
    """

    def __init__(self, before: Callable[[str], int]) -> None:
        super().__init__()
        self._before = before

    def take(self, base: str) -> str:
        if base not in self._seen:
            self._seen[base] = self._before(base)
        return super().take(base)


class _ReplayMismatch(Exception):
    """A section read again asked for other ids than it took before."""


class _Replay(_RecordingIds):
    """Gives a section read again (only moved) the ids it was given before."""

    def __init__(self, takes: tuple[tuple[str, str], ...]) -> None:
        super().__init__()
        self._plan = takes

    def take(self, base: str) -> str:
        n = len(self.taken)
        if n >= len(self._plan) or self._plan[n][0] != base:
            raise _ReplayMismatch(base)
        self.taken.append(self._plan[n])
        return self._plan[n][1]


def _id_number(base: str, given: str) -> int:
    """1 for `base`, n for `base-n`."""
    return 1 if given == base else int(given[len(base) + 1 :])


def short_title(text: str, limit: int = TITLE_MAX) -> str:
    """First line, then first sentence, of `text`, trimmed to `limit` characters."""
    first = next((ln.strip() for ln in text.split("\n") if ln.strip()), "")
    parts = _SENTENCE_END.split(first, maxsplit=1)
    first = parts[0] if parts else first
    if len(first) > limit:
        first = first[: limit - 1].rstrip() + "…"
    return first
