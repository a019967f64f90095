"""Meaning vectors of a catalog's memories, for callers other than search.

The review queue (`memlens.core.curation`) finds paraphrase duplicates with
the vectors search computes.  They come from the persisted search index
(`persisted.open_index`), whose kept vectors mean only memories new since
the last semantic search are embedded; `use_cache=False` builds an index
in memory instead.  Both the `memlens review` command and the app's review
pane call this, so they find the same candidates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date
from typing import TYPE_CHECKING

from .embeddings import Embedder, Vectors, semantic_available
from .index import SearchIndex
from .persisted import open_index

if TYPE_CHECKING:
    from ..model import Memory
    from ..scan.vault import Catalog

#: Unit vectors of the memories given (zero rows for memories not indexed).
MeaningVectors = Callable[[Sequence["Memory"]], Vectors | None]


def meaning_of(
    catalog: Catalog,
    as_of: date,
    *,
    use_cache: bool = True,
    embedder: Embedder | None = None,
    on_embed: Callable[[int], None] | None = None,
) -> MeaningVectors | None:
    """The catalog's meaning vectors; None when the semantic extra is off or missing.

    `embedder` stands in for the model (tests); given one, the extra is not
    required.  `on_embed` hears how many memories are embedded first, when
    the kept vectors lack some (minutes at 100k on a first run).
    """
    if embedder is None and not semantic_available():
        return None
    index = open_index(catalog, as_of)[0] if use_cache else None
    if index is None:
        index = SearchIndex.from_catalog(catalog, as_of)
    index.enable_semantic(embedder, on_embed=on_embed)
    # The vectors are in memory now: let go of the file (its WAL folded back).
    index.close()
    return index.meaning_vectors
