"""Tables keyed by object identity that survive a pickle round trip.

Adapters' `link_state` keeps reverse-reference tables of memories keyed by
``id(memory)`` (two memories may be equal, never identical).  An ``id`` is
only meaningful inside one process, so a plain dict of them cannot be
cached; `ByIdentity` pickles its values alone and keys them again by their
new identities when loaded.
"""

from __future__ import annotations

from typing import Any


class ByIdentity(dict[int, Any]):
    """``{id(value): value}``; pickles as its values and is re-keyed on load."""

    __slots__ = ()

    def __reduce__(self) -> tuple[Any, ...]:
        return (by_identity, (list(self.values()),))


def by_identity(values: list[Any]) -> ByIdentity:
    """A `ByIdentity` holding `values` (what unpickling calls)."""
    out = ByIdentity()
    for value in values:
        out[id(value)] = value
    return out


__all__ = ["ByIdentity", "by_identity"]
