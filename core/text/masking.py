"""A secret shown masked (`AKIA…(20)`), and text with the secrets it holds masked.

Here rather than in `core.privacy`, whose detectors compile ~100 patterns
at import: the list and the detail pane mask what the scan found from the
app's first frame, and need only these two functions for it.
"""

from __future__ import annotations

from collections.abc import Iterable

from .sanitize import one_line


def mask(secret: str) -> str:
    """`AKIA…(20)`: a short prefix (≤ 4 characters, ≤ a quarter) and the length."""
    keep = min(4, len(secret) // 4)
    return f"{one_line(secret[:keep])}…({len(secret)})"


def scrub(text: str, secrets: Iterable[str]) -> str:
    """`text` with every secret in it replaced by its mask (for messages and errors)."""
    for secret in sorted(set(secrets), key=len, reverse=True):
        if secret:
            text = text.replace(secret, mask(secret))
    return text


__all__ = ["mask", "scrub"]
