"""Meaning vectors of a `SearchIndex`: turned on at once, or made aside and turned on after.

A mixin `SearchIndex` inherits, apart so the facade stays readable.  With
the optional extra (`embeddings`), relevance fuses meaning into the
lexical ranking once `semantic` is set.  A front end that must not wait for
every memory to be embedded (a first start at 100k: a minute or more) makes
the vectors with `build_semantic` while queries run by words, then turns
them on with `attach_semantic` under the lock its queries hold: building
only reads the rows, and rows added meanwhile are embedded by the attach.
"""

from __future__ import annotations

from collections.abc import Callable

from ..model import Memory
from .embeddings import Embedder, SemanticIndex, VectorSource
from .packed_vectors import PackedVectors
from .state import IndexState


class MeaningRows:
    """`enable_semantic` and its two halves, `build_semantic` and `attach_semantic`."""

    state: IndexState
    semantic: SemanticIndex | None
    vector_file: VectorSource | None
    _memories: list[Memory]

    def close(self) -> None:
        """Let go of the file a persisted index reads (the last reader folds its WAL back)."""
        if self.vector_file is not None:
            self.vector_file.close()

    def meaning_pending(self) -> int:
        """Live rows with no kept vector: what turning meaning on would embed (or look up)."""
        if self.semantic is not None:
            return 0
        alive = self.state.columns.alive.view.tolist()
        known = None if self.vector_file is None else self.vector_file.load()
        return sum(alive[self._kept_rows(known) :])

    def enable_semantic(
        self,
        embedder: Embedder | None = None,
        on_embed: Callable[[int], None] | None = None,
    ) -> int:
        """Embed every row (the optional extra: `embeddings`) and fuse meaning into relevance.

        Rows whose vectors were kept (`vector_file`: the persisted index, the
        app's index cache) are read back; only the others are embedded, and
        then kept.  Returns how many rows had no kept vector; `on_embed` hears
        how many live ones had none, once, when the model is about to embed
        some of them (a front end says why the first search of a kept index
        is slow; vectors found in the per-text cache need no model).
        """
        if self.semantic is not None:
            return 0
        return self.attach_semantic(self.build_semantic(embedder, on_embed))

    def build_semantic(
        self,
        embedder: Embedder | None = None,
        on_embed: Callable[[int], None] | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> SemanticIndex:
        """The vectors of the rows there now, not turned on (see the module docstring).

        `stop` is asked between slices of memories: once it says yes, the
        rest are not embedded and the result must not be attached.
        """
        alive = self.state.columns.alive.view.tolist()
        source = self.vector_file
        known = None if source is None else source.load()
        announce = None
        if on_embed is not None and source is not None:
            missing = sum(alive[self._kept_rows(known) :])
            told: list[int] = []

            def announce() -> None:
                """Once, when the model is about to run (not for vectors the cache kept)."""
                if not told:
                    told.append(missing)
                    on_embed(missing)

        return SemanticIndex.extend(
            known, self._memories, alive, embedder, stop=stop, on_model=announce
        )

    def attach_semantic(self, semantic: SemanticIndex) -> int:
        """Turn on vectors from `build_semantic`; rows added since are embedded here.

        Hold the lock queries hold.  Returns how many rows had no kept vector.
        """
        n = len(self._memories)
        alive = self.state.columns.alive.view
        for row in range(semantic.rows, n):
            if alive[row]:
                semantic.add(row, self._memories[row])
        semantic.rows = n
        self.semantic = semantic
        if self.vector_file is not None:
            # Only the rows there (`add` grows the vectors ahead): a slot saved
            # as zeros would later be read back as a kept vector.
            vectors = semantic.vectors
            exact = vectors if len(vectors) == n else vectors.resized(n)
            self.vector_file.save(exact, semantic.kept)
        return n - semantic.kept

    def _kept_rows(self, known: PackedVectors | None) -> int:
        return 0 if known is None else min(len(known), len(self._memories))
