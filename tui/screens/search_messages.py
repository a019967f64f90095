"""The search pane's messages: what its workers post back to it (and the app listens to).

Module-level so the pane's module holds its behaviour only; each keeps the
pane's namespace, so handlers stay `on_search_screen_index_built` and the like.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from memlens.core.search.index import Hit, SearchIndex, SearchResults


class IndexBuilt(Message, namespace="search_screen"):
    """The worker finished an index for one set of loaded vaults.

    `meaning_pending`: memories still to embed before meaning is fused in
    (`MeaningReady` follows; queries run by words until then).
    """

    def __init__(
        self,
        index: SearchIndex,
        signature: tuple[int, ...],
        seconds: float,
        meaning_pending: int = 0,
    ) -> None:
        super().__init__()
        self.index = index
        self.signature = signature
        self.seconds = seconds
        self.meaning_pending = meaning_pending


class MeaningReady(Message, namespace="search_screen"):
    """The index's meaning vectors were made after it was offered, and are on."""

    def __init__(self, index: SearchIndex) -> None:
        super().__init__()
        self.index = index


class Answered(Message, namespace="search_screen"):
    """One query's results (or the query's error)."""

    def __init__(
        self,
        seq: int,
        text: str,
        results: SearchResults | None,
        error: str | None,
        seconds: float,
    ) -> None:
        super().__init__()
        self.seq = seq
        self.text = text
        self.results = results
        self.error = error
        self.seconds = seconds


class SimilarFound(Message, namespace="search_screen"):
    """Memories like one memory."""

    def __init__(self, label: str, hits: list[Hit], seconds: float) -> None:
        super().__init__()
        self.label = label
        self.hits = hits
        self.seconds = seconds


__all__ = ["Answered", "IndexBuilt", "MeaningReady", "SimilarFound"]
