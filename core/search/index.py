"""One search index over every vault: ranked full text, fuzzy titles, filters, explain.

Ranking
-------
Every hit gets, in this order::

    cosine     = Σ_t q_t · d_t                       (TF-IDF, sublinear tf, l2 rows)
    fuzzy      = mean over query words of the best title/tag word match (0..100)
    relevance  = cosine + FUZZY_WEIGHT · fuzzy / 100  (1.0 for a filter-only query)
    score      = relevance × confidence × decay_weight

(the ``recall`` ranking, ``rank="recall"``, the default of `run`) which is the
Project Ocean reference ranking (cosine × confidence × decay
weight) with a small additive title/tag bonus.  ``confidence`` is the numeric
confidence, or high=0.9/medium=0.6/low=0.3/unknown=0.5, or 1.0 when missing
(as the reference does); ``decay_weight`` is the memory's own format's weight
(`decay_of(memory, as_of).weight`).  `Hit.explain` carries every part, and the
score is recomputed from exactly those parts, so they always multiply out.

``rank="relevance"`` (what the CLI and the app default to) ranks by BM25F
over every text field instead, with stems, stopwords and typos
(`relevance`, `bm25`), fused with meaning when the optional extra is there
(`embeddings`); decay, confidence and importance are then only shown, and
no health is left out unless the query asks.

Documents are ``title title tags tags body`` (title and tags twice: a mild boost
under sublinear tf).  Multi-word queries are OR, ranked; use phrases or filters
to require things.  The fuzzy score counts exact title/tag words (100) always;
near words (rapidfuzz ratio >= FUZZY_CUTOFF) only for words the vocabulary
does not know, or for queries of one or two words with few TF-IDF hits; and,
with ``as_you_type``, completions of the word being typed (which also expand
into TF-IDF terms).  The query language is in `memlens.core.search.query`.

Phrases must appear in the title or body at word boundaries.  Rows that can
hold a phrase come from the postings (its whole words; an open phrase's last
word as a prefix); the text itself is checked for all of them when there are
at most VERIFY_ALL_MAX, else in score order only until the page is full, and
`SearchResults.total` is then an upper bound (`total_exact` False).  With
``as_you_type`` the bound is VERIFY_TYPED_MAX, and the rows are checked in
full hit order, so the page is the same (see `core.search.phrases`).

Order
-----
Hits come best first by ``score``, then ``relevance``, then the memory's
place: vault root, path, line (JSON Lines) or index (dream-cycle section),
id.  That is a total order, so a page is always a prefix of any longer page
(``limit=5`` is the start of ``limit=6``), whatever the ties.  The top-k
selection keeps it cheap: a partition finds the k-th best score, every row
scoring at least that much (all ties at the boundary) is kept, and only
those are sorted by the full key.

Default exclusions
------------------
Memories whose unified health is ``expired``, ``archived`` or ``tombstoned`` are
left out, as the reference search skips expired and archived files, unless the
query itself has a positive ``health:`` or ``status:`` filter (``health:all``
includes everything).  Pass ``include_inactive=True`` to lift it from code.

Speed and incremental updates of the TF-IDF part: see `fit`.

An index is not thread-safe: run searches and updates from one worker.
"""

from __future__ import annotations

import gc
import itertools
from collections.abc import Callable, Iterable, Sequence
from datetime import date
from typing import TYPE_CHECKING

import numpy as np

from ..decay import decay_of
from ..errors import NotFoundError
from ..model import Memory
from .aliases import Brief, DecayFn, FloatArray, IntArray, Key, RowSegment
from .analysis import TOKEN_RE, analyze, index_text, title_words
from .bm25 import LexicalIndex, LexView
from .briefs import decay_brief_fn
from .candidates import query_mask, tfidf_candidates
from .duplicates import DuplicateGroup
from .embeddings import SemanticIndex, VectorSource
from .filters import DEFAULT_EXCLUDED_HEALTH
from .fit import count_terms, fit, split_fit
from .fuzzy import FUZZY_CUTOFF, FUZZY_WEIGHT
from .index_meaning import MeaningRows
from .index_similar import SimilarRows
from .phrases import Phrase, check_phrases, lower_text, phrase_mask, query_phrases
from .query import Filter, Query, QueryError, parse_query
from .ranking import (
    Hit,
    PlaceKey,
    Prepared,
    SearchResults,
    make_hit,
    ordered,
    place_key,
    place_ranks,
    prepare,
)
from .relevance import (
    RANKS,
    RelevanceQuery,
    prepare_relevance,
    relevance_candidates,
    relevance_hit,
)
from .similar import StoredVectors, load_stored_vectors
from .state import IndexState

if TYPE_CHECKING:
    from ..scan.vault import Catalog, Vault

__all__ = [
    "DEFAULT_EXCLUDED_HEALTH",
    "FUZZY_CUTOFF",
    "FUZZY_WEIGHT",
    "TOKEN_RE",
    "DuplicateGroup",
    "Hit",
    "IndexState",
    "QueryError",
    "SearchIndex",
    "SearchResults",
    "analyze",
    "count_terms",
    "index_text",
    "load_stored_vectors",
]


class SearchIndex(SimilarRows, MeaningRows):
    """TF-IDF + fuzzy index over memories of any format.  Build with `build`.

    The index's data is one `IndexState` (`state`); the memories are bound
    to its rows here (`_memories`, and the key -> row table), beside caches
    that are only ever rebuilt, never saved.  More like this (`similar`,
    `near_duplicates`) is inherited from `SimilarRows` (`index_similar`).
    """

    def __init__(self, as_of: date, decay: DecayFn = decay_of) -> None:
        self._decay = decay
        #: Terms, postings and per-row columns: what a saved index holds.
        self.state = IndexState(as_of)
        #: Row -> memory (a removed row keeps its memory, masked dead).
        self._memories: list[Memory] = []
        #: Key -> row of the live rows; None while pending (`_defer_rows`).
        self._row_keys: dict[Key, int] | None = {}
        self._row_segments: list[RowSegment] = []
        #: Lower-cased texts for phrase checks (bounded: see `lower_text`).
        self._lower: dict[int, str] = {}
        self._vectors: dict[str, StoredVectors | None] = {}
        #: Row -> rank by place (vault, path, line/index, id); see `_place_rank`.
        self._place_ranks: IntArray | None = None
        #: The relevance ranking's BM25F index over the same rows (`lexical`).
        self._lexical: LexicalIndex | None = None
        #: Meaning-based vectors of the rows, fused into relevance (`enable_semantic`).
        self.semantic: SemanticIndex | None = None
        #: Where a persisted index keeps its rows' vectors (None: built in memory only).
        self.vector_file: VectorSource | None = None

    # ------------------------------------------------------------------ build

    @classmethod
    def build(
        cls,
        memories: Iterable[Memory],
        as_of: date,
        *,
        vaults: Iterable[Vault] = (),
        decay: DecayFn = decay_of,
    ) -> SearchIndex:
        """Index these memories, judging decay as of `as_of`.

        `vaults` (from a Catalog) supplies the names the ``vault:`` filter
        knows; without it a vault answers to its folder name.  `decay` is
        replaceable for tests.  Later memories with an already indexed key
        (vault root, id) replace earlier ones.
        """
        # The build allocates millions of small objects and no cycles; the
        # cyclic GC would rescan the whole heap many times over (seconds at 100k).
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            return cls._build(memories, as_of, vaults, decay)
        finally:
            if gc_was_enabled:
                gc.enable()

    @classmethod
    def _build(
        cls,
        memories: Iterable[Memory],
        as_of: date,
        vaults: Iterable[Vault],
        decay: DecayFn,
    ) -> SearchIndex:
        index = cls(as_of, decay)
        names = index.state.columns.vault_names
        for v in vaults:
            known = {v.rel.lower(), v.name.lower(), v.root.name.lower()}
            names[str(v.root)] = tuple(sorted(n for n in known if n and n != "."))
        mems: dict[Key, Memory] = {}
        for m in memories:
            mems[m.key] = m
        docs = list(mems.values())
        # A parse worker may count the later documents' terms meanwhile
        # (started first: it works while this process fills the columns).
        split = split_fit(docs)
        try:
            index._append_rows(docs)
        except BaseException:
            if split is not None:
                split.wait()  # the worker goes back to the pool
            raise
        fitted = fit(docs, split)
        index.state.terms, index.state.words, index.state.tags = (
            fitted.terms,
            fitted.words,
            fitted.tags,
        )
        return index

    @classmethod
    def from_catalog(cls, catalog: Catalog, as_of: date) -> SearchIndex:
        """Index every valid memory of every vault in the catalog."""
        return cls.build(catalog.memories(), as_of, vaults=catalog.vaults)

    def _decay_fn(self) -> Callable[[Memory], Brief]:
        return decay_brief_fn(self.state.as_of, self._decay)

    def _append_rows(self, memories: Sequence[Memory]) -> None:
        """Metadata columns of a build's rows (columns made once; no terms or words)."""
        decay = self._decay_fn()
        row_of = self._row_of
        briefs: list[Brief] = []
        for row, m in enumerate(memories, start=len(self._memories)):
            row_of[m.key] = row
            briefs.append(decay(m))
        self._memories.extend(memories)
        if briefs:  # an empty catalog: the columns stay empty
            self.state.columns.fill(memories, briefs)

    def _append_row(self, m: Memory) -> int:
        """Metadata columns, title words and tags for a new row (no terms)."""
        row = len(self._memories)
        self._memories.append(m)
        self._row_of[m.key] = row
        self.state.columns.append(m, self._decay_fn()(m))
        for w in title_words(m):
            self.state.words.add(w, row)
        for t in {t.lower() for t in m.tags}:
            self.state.tags.append(t, row)
        return row

    # ------------------------------------------------------------ rows

    @property
    def _row_of(self) -> dict[Key, int]:
        """Key -> row of the live rows, built from pending segments on first use."""
        if self._row_keys is None:
            row_of: dict[Key, int] = {}
            for root, ids, start in self._row_segments:
                keys = zip(itertools.repeat(root), ids)
                row_of.update(zip(keys, range(start, start + len(ids)), strict=True))
            self._row_keys, self._row_segments = row_of, []
        return self._row_keys

    @_row_of.setter
    def _row_of(self, row_of: dict[Key, int]) -> None:
        self._row_keys, self._row_segments = row_of, []

    def _defer_rows(self, segments: list[RowSegment]) -> None:
        """Key -> row for rows ``start + i`` of ``(root, ids[i])``, built on first use.

        A search never needs it (only updates and lookups do; `len` counts
        the segments): an index loaded from its cache is searchable, and its
        size shown, without building 100k keys.
        """
        self._row_keys, self._row_segments = None, segments

    @property
    def as_of(self) -> date:
        return self.state.as_of

    def __len__(self) -> int:
        if self._row_keys is None:
            # Pending segments hold distinct keys (`_defer_rows`): counting
            # them does not build the 100k-key table (14 MB) a count needs not.
            return sum(len(ids) for _root, ids, _start in self._row_segments)
        return len(self._row_keys)

    def __contains__(self, key: object) -> bool:
        return key in self._row_of

    @property
    def needs_rebuild(self) -> bool:
        """True once incremental changes touch a tenth of the rows."""
        return self.state.needs_rebuild

    def memories(self) -> list[Memory]:
        return [self._memories[r] for r in self._row_of.values()]

    def get(self, key: Key) -> Memory:
        try:
            return self._memories[self._row_of[key]]
        except KeyError:
            raise NotFoundError(f"no indexed memory {key[1]!r} in {key[0]}") from None

    def set_as_of(self, as_of: date) -> None:
        """Recompute decay columns for a new date (O(n) adapter calls)."""
        if as_of == self.state.as_of:
            return
        self.state.as_of = as_of
        decay = self._decay_fn()
        columns = self.state.columns
        for row in self._row_of.values():
            columns.set_decay(row, decay(self._memories[row]))

    # ----------------------------------------------------------- incremental

    def add(self, memory: Memory) -> None:
        """Index one new memory (or replace the one with its key)."""
        if memory.key in self._row_of:
            self.remove(memory.key)
        row = self._append_row(memory)
        self.state.terms.add_row(row, self.state.terms.vector(index_text(memory), extend=True))
        if self._lexical is not None:
            self._lexical.add(row, memory)
        if self.semantic is not None:
            self.semantic.add(row, memory)

    def update(self, memory: Memory) -> None:
        """Re-index a changed memory (same key)."""
        self.add(memory)

    def remove(self, key: Key) -> None:
        """Drop a memory by (vault root, id); NotFoundError if absent."""
        row = self._row_of.pop(key, None)
        if row is None:
            raise NotFoundError(f"no indexed memory {key[1]!r} in {key[0]}")
        self.state.columns.alive.view[row] = False
        self.state.dead += 1
        self._lower.pop(row, None)
        self.state.terms.drop_row(row)

    # -------------------------------------------------------------- search

    def lexical(self) -> LexicalIndex:
        """The relevance ranking's index of these rows, built on first use (`bm25`)."""
        if self._lexical is None:
            alive = self.state.columns.alive.view.tolist()
            self._lexical = LexicalIndex.build(self._memories, alive)
        return self._lexical

    def has_lexical(self) -> bool:
        """The relevance index exists already (built, or kept with the index)."""
        return self._lexical is not None

    def run(
        self,
        query: str | Query,
        limit: int = 20,
        *,
        offset: int = 0,
        as_of: date | None = None,
        as_you_type: bool = False,
        include_inactive: bool = False,
        extra_filters: Sequence[Filter] = (),
        rank: str = "recall",
    ) -> SearchResults:
        """Rank memories for a query; see the module docstring for the score.

        `as_you_type` treats a trailing unfinished word as a prefix (for a
        search box).  `extra_filters` are ANDed with the query's own (front
        ends map their flags to filters).  `rank` is ``recall`` (the score
        above, as the agents' own tools rank) or ``relevance`` (BM25F over
        every text field, `relevance`; what a person searching wants, and
        what the fronts default to).
        """
        if rank not in RANKS:
            raise ValueError(f"unknown ranking {rank!r} (relevance or recall)")
        q = parse_query(query) if isinstance(query, str) else query
        if extra_filters:
            q = q.with_filters(*extra_filters)
        if as_of is not None:
            self.set_as_of(as_of)
        if q.is_empty or not self._memories:
            return SearchResults([], 0, q)
        pos, neg = query_phrases(q)
        if q.phrases and not pos and not q.words:
            return SearchResults([], 0, q)
        prep = prepare(self.state.terms, q, as_you_type)
        rq: RelevanceQuery | None = None
        lex: LexView | None = None
        if rank == "relevance":
            alive = self.state.columns.alive.view
            lex = self.lexical().view(alive)
            rq = prepare_relevance(lex, q, as_you_type)
            n = len(self._memories)
            masks = [phrase_mask(self.state.terms, n, ph) for ph in pos]
            rel, cand = relevance_candidates(lex, self.semantic, rq, q, alive, masks)
        else:
            state = self.state
            alive = state.columns.alive.view
            rel, cand = tfidf_candidates(state.terms, state.words, alive, prep, pos, as_you_type)
        # A person looks for archived and expired memories too: relevance
        # leaves nothing out by health unless the query says so (-health:x).
        inactive_too = include_inactive or rq is not None
        mask = query_mask(
            self.state.columns, self.state.tags, self.state.terms, q, cand, inactive_too
        )
        cand = cand[mask]
        if len(cand) == 0 or limit <= 0:
            return SearchResults([], len(cand), q)
        return self._page(prep, cand, rel, (pos, neg), offset, limit, as_you_type, rq, lex)

    def _page(
        self,
        prep: Prepared,
        cand: IntArray,
        rel: FloatArray,
        phrases: tuple[list[Phrase], list[Phrase]],
        offset: int,
        limit: int,
        as_you_type: bool = False,
        rq: RelevanceQuery | None = None,
        lex: LexView | None = None,
    ) -> SearchResults:
        """Phrase checks on the text, then rank and explain the page exactly.

        With `rq` (the relevance ranking) the score is the relevance alone.
        """
        columns, n = self.state.columns, len(self._memories)
        pos, neg = phrases
        scores = rel[cand].copy()
        if rq is None:
            scores *= columns.conf.view[cand] * columns.weight.view[cand]
        need = np.full(len(cand), bool(pos))
        neg_masks = [(ph, phrase_mask(self.state.terms, n, ph)) for ph in neg]
        for _, m in neg_masks:
            need |= m[cand]

        def has(row: int, ph: Phrase) -> bool:
            return ph.found_in(lower_text(self._lower, self._memories, row))

        def passes(row: int) -> bool:
            return all(has(row, ph) for ph in pos) and not any(
                m[row] and has(row, ph) for ph, m in neg_masks
            )

        def full_order() -> IntArray:
            # `ordered`'s key (score, relevance, place) over every candidate.
            return np.lexsort((self._place_rank()[cand], -rel[cand], -scores))

        want = offset + limit
        # NaN would compare false both ways and break the total order.
        scores = np.nan_to_num(scores, nan=-np.inf)
        cand, scores, top, total, exact = check_phrases(
            cand,
            scores,
            need,
            passes,
            want,
            full_order if as_you_type else None,
        )
        page = ordered(cand[top], scores[top], rel, self._place_key, self._place_rank)[:want]
        if rq is not None and lex is not None:
            q = prep.query
            found = [relevance_hit(self._memories[r], r, columns, lex, rq, q) for r in page]
            return SearchResults(found[offset : offset + limit], total, q, exact)
        weights = self.state.terms.page_weights(page, prep.term_ids)
        hits = [
            make_hit(self._memories[r], r, columns, self.state.terms, prep, weights[r])
            for r in page
        ]
        return SearchResults(hits[offset : offset + limit], total, prep.query, exact)

    def _place_key(self, row: int) -> PlaceKey:
        return place_key(self._memories, self.state.columns, row)

    def prepare_order(self) -> None:
        """Compute now what a first phrase query as-you-type would (every row's place rank).

        ~0.1-0.3 s at 100k rows; a front end calls it in its worker right
        after loading the index instead of on the first keystroke.
        """
        self._place_rank()

    def _place_rank(self) -> IntArray:
        """Every row's rank by place (cached until the rows change)."""
        ranks = self._place_ranks
        if ranks is None or len(ranks) != len(self._memories):
            # The same key as `ordered`'s small path, so both give one
            # order (a page may take either path).
            ranks = self._place_ranks = place_ranks(len(self._memories), self._place_key)
        return ranks

    def search(
        self,
        query: str | Query,
        limit: int = 20,
        *,
        as_of: date | None = None,
        as_you_type: bool = False,
        include_inactive: bool = False,
        extra_filters: Sequence[Filter] = (),
    ) -> list[Hit]:
        """The best `limit` hits for a query, best first (see `run`)."""
        return self.run(
            query,
            limit,
            as_of=as_of,
            as_you_type=as_you_type,
            include_inactive=include_inactive,
            extra_filters=extra_filters,
        ).hits
