"""More like this: the half of `SearchIndex` that compares rows with one another.

A mixin `SearchIndex` inherits, apart so the facade stays readable; it
only reads the rows the index keeps (declared here for the type checker).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..errors import NotFoundError
from ..model import Memory
from .aliases import Key
from .duplicates import DuplicateGroup, near_duplicates
from .embeddings import DIM, SemanticIndex, Vectors
from .ranking import Hit
from .similar import (
    StoredVectors,
    load_stored_vectors,
    similar_by_semantic,
    similar_by_terms,
    similar_by_vectors,
)
from .state import IndexState


class SimilarRows:
    """Nearest memories, meaning vectors, shipped vectors and near duplicates of a `SearchIndex`."""

    state: IndexState
    semantic: SemanticIndex | None
    _memories: list[Memory]
    _vectors: dict[str, StoredVectors | None]
    _row_of: dict[Key, int]

    def _row_for(self, memory: Memory | Key) -> int:
        key = memory.key if isinstance(memory, Memory) else memory
        row = self._row_of.get(key)
        if row is None:
            raise NotFoundError(f"no indexed memory {key[1]!r} in {key[0]}")
        return row

    def similar(
        self,
        memory: Memory | Key,
        k: int = 10,
        *,
        by: str = "tfidf",
        include_inactive: bool = False,
    ) -> list[Hit]:
        """The `k` memories nearest to one, by TF-IDF cosine or stored vectors.

        ``by="vectors"`` uses the embeddings a vault ships (`load_stored_vectors`)
        and compares only with vaults whose vectors come from the same model
        and dimension; it returns [] when the memory has no stored vector.
        The score is the cosine itself (no confidence or decay).
        """
        row = self._row_for(memory)
        columns = self.state.columns
        if by == "vectors":
            return similar_by_vectors(
                self._memories,
                self._row_of,
                columns,
                self.stored_vectors,
                row,
                k,
                include_inactive,
            )
        if by == "semantic" and self.semantic is not None:
            sims = self.semantic.row_scores(self.semantic.vectors.row(row), len(self._memories))
            return similar_by_semantic(self._memories, columns, sims, row, k, include_inactive)
        if by not in ("tfidf", "semantic"):
            raise ValueError(f"unknown similarity {by!r} (tfidf, vectors or semantic)")
        return similar_by_terms(self._memories, columns, self.state.terms, row, k, include_inactive)

    def meaning_vectors(self, memories: Sequence[Memory]) -> Vectors | None:
        """Unit meaning vectors of these memories (zero rows where not indexed).

        None until `enable_semantic`: the review queue's paraphrase check
        reads the vectors search already computed (and the persisted index kept).
        """
        if self.semantic is None:
            return None
        out = np.zeros((len(memories), DIM), dtype=np.float32)
        vectors = self.semantic.vectors
        where: list[int] = []
        rows: list[int] = []
        for n, m in enumerate(memories):
            row = self._row_of.get(m.key)
            if row is not None and row < len(vectors):
                where.append(n)
                rows.append(row)
        if rows:
            out[where] = vectors.rows(rows)
        return out

    def stored_vectors(self, root: Path) -> StoredVectors | None:
        """The vectors a vault root ships, loaded once."""
        key = str(root)
        if key not in self._vectors:
            self._vectors[key] = load_stored_vectors(root)
        return self._vectors[key]

    def has_vectors(self, memory: Memory) -> bool:
        vecs = self.stored_vectors(memory.vault_root)
        return vecs is not None and memory.id in vecs[1]

    def near_duplicates(
        self, threshold: float = 0.9, *, cross_vault_only: bool = False
    ) -> list[DuplicateGroup]:
        """Groups of memories with TF-IDF cosine >= threshold (any health); see `duplicates`."""
        rows = sorted(self._row_of.values())
        return near_duplicates(self._memories, self.state.terms, rows, threshold, cross_vault_only)
