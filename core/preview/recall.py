"""Text recall through the search index, for formats whose recall step is a search.

The index is built from the pool alone (the documents the format's own
search would load), so idf and scores are what a search over just those
files gives: cosine × confidence × decay weight (`core.search.index`).  The
prompt is taken as plain words, never as the query language (a prompt
saying ``before:`` is text, not a filter).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from ..formats.preview_model import Recall
from ..model import Memory
from ..search.index import SearchIndex
from ..search.query import Query


def search_recall(as_of: date) -> Recall:
    """A `Recall` ranking with the search index at `as_of`."""

    def recall(pool: Sequence[Memory], prompt: str, limit: int) -> list[tuple[Memory, float]]:
        words = tuple(prompt.split())
        if not pool or not words:
            return []
        index = SearchIndex.build(pool, as_of)
        hits = index.run(Query(text=prompt, words=words), limit)
        return [(h.memory, h.score) for h in hits.hits]

    return recall


__all__ = ["search_recall"]
