"""One search index over every vault: ranked full text, fuzzy titles, filters, explain.

Ranking
-------
Every hit gets, in this order::

    cosine     = Σ_t q_t · d_t                       (TF-IDF, sublinear tf, l2 rows)
    fuzzy      = mean over query words of the best title/tag word match (0..100)
    relevance  = cosine + FUZZY_WEIGHT · fuzzy / 100  (1.0 for a filter-only query)
    score      = relevance × confidence × decay_weight

which is the Project Ocean reference ranking (cosine × confidence × decay
weight) with a small additive title/tag bonus.  ``confidence`` is the numeric
confidence, or high=0.9/medium=0.6/low=0.3/unknown=0.5, or 1.0 when missing
(as the reference does); ``decay_weight`` is the memory's own format's weight
(`decay_of(memory, as_of).weight`).  `Hit.explain` carries every part, and the
score is recomputed from exactly those parts, so they always multiply out.

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
`SearchResults.total` is then an upper bound (`total_exact` False).

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

Speed
-----
The term -> documents matrix is kept transposed (CSR, one row per term), so a
query touches only the postings of its own terms.  Filters run as numpy masks
on per-document columns computed once at build time (decay at `as_of`
included).  Fuzzy matching runs rapidfuzz over the *words* of titles and tags
(grouped by length), never over whole titles, and only for words the TF-IDF
vocabulary does not know, or short queries with few TF-IDF hits.
scikit-learn and scipy are imported on first build, not on import.

Incremental updates
-------------------
`add`/`update`/`remove` never refit.  The fitted vocabulary and idf stay
frozen; a changed document is re-analysed into a small delta inverted index;
a removed or replaced row is masked dead.  A term the fitted vocabulary has
never seen gets a new column with the idf of a term seen in one document
(frozen too), so new words are searchable at once.  The trade-off: idf values
drift from what a refit would give as the corpus changes, so scores (not
matches) differ slightly from a rebuild until the next `build`;
`needs_rebuild` turns true once a tenth of the rows are dead or in the delta.
Measured by ``python -m bench search``: one update takes well under a
millisecond at 100k memories.

An index is not thread-safe: run searches and updates from one worker.
"""

from __future__ import annotations

import bisect
import gc
import itertools
import json
import math
import os
import re
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..decay import decay_of
from ..errors import NotFoundError
from ..model import DecayInfo, Health, Memory
from ..safe_io import read_regular
from .query import (
    ANY_HEALTH,
    Filter,
    Query,
    QueryError,
    confidence_value,
    parse_query,
)

if TYPE_CHECKING:
    from ..scan.vault import Catalog, Vault

__all__ = [
    "DEFAULT_EXCLUDED_HEALTH",
    "FUZZY_CUTOFF",
    "FUZZY_WEIGHT",
    "DuplicateGroup",
    "Hit",
    "QueryError",
    "SearchIndex",
    "SearchResults",
    "load_stored_vectors",
]

Key = tuple[str, str]
DecayFn = Callable[[Memory, date], DecayInfo]
#: What the index keeps of a decay: (status, health, weight, score).
Brief = tuple[str, Health, float, float | None]
IntArray = npt.NDArray[np.signedinteger[Any]]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

#: Weight of the title/tag fuzzy score (0..100 -> 0..FUZZY_WEIGHT) added to cosine.
FUZZY_WEIGHT = 0.25
#: rapidfuzz ratio a query word needs to count as matching a title/tag word.
FUZZY_CUTOFF = 80.0
#: Near words kept per query word.
FUZZY_LIMIT = 8
#: Fewer TF-IDF hits than this makes a short query (<= 2 words) fuzzy-match
#: every word, not only the words the vocabulary does not know.
FUZZY_FEW_HITS = 20
#: Completions of a trailing partial word (search-as-you-type).
PREFIX_LIMIT = 12
#: Up to this many rows needing a phrase check are all checked (exact total);
#: beyond it rows are checked in score order until the page is full.
VERIFY_ALL_MAX = 2000
#: Above this many rows to order, equal scores are ordered by a cached
#: rank of every row's place instead of sorting their keys in Python.
_RANKED_SORT_MIN = 4096
#: Healths a search leaves out unless the query asks for them.
DEFAULT_EXCLUDED_HEALTH = frozenset({Health.EXPIRED, Health.ARCHIVED, Health.TOMBSTONED})

_HEALTHS: tuple[Health, ...] = tuple(Health)
_HEALTH_CODE: dict[Health, int] = {h: i for i, h in enumerate(_HEALTHS)}
#: Lower-cased texts kept for phrase checks before the cache starts over.
LOWER_CACHE_MAX = 5_000
_TOKEN_RE = re.compile(r"(?u)\b\w\w+\b")


#: For ASCII text, `\w` is exactly [A-Za-z0-9_]: every other ASCII character
#: becomes a space, and the words are what `str.split` leaves (about twice
#: as fast as the regex, which stays the rule for any other text).
_ASCII_SPACES = [chr(c) if chr(c).isalnum() or chr(c) == "_" else " " for c in range(128)]
#: Tokens of one word character (dropped: a token has two or more).
_SINGLE = [chr(c) for c in range(128) if chr(c).isalnum() or chr(c) == "_"]


def _words(lowered: str) -> list[str]:
    """Maximal runs of word characters in lower-cased text, single characters included."""
    if lowered.isascii():
        return lowered.translate(_ASCII_SPACES).split()
    return _TOKEN_RE.findall(lowered)  # no single-character tokens to begin with


def analyze(text: str) -> list[str]:
    """Lower-cased word tokens of two or more characters (scikit-learn's default)."""
    lowered = text.lower()
    if lowered.isascii():
        return [w for w in lowered.translate(_ASCII_SPACES).split() if len(w) > 1]
    return _TOKEN_RE.findall(lowered)


def _title_words(memory: Memory) -> frozenset[str]:
    """The words of a memory's title and tags (what fuzzy matching looks at)."""
    return frozenset(analyze(memory.title + "\n" + " ".join(memory.tags)))


def _group_rows(
    keys: list[str], ids: array[int], lengths: array[int]
) -> tuple[list[str], IntArray, IntArray]:
    """Rows per key from per-row key ids (`ids`, `lengths[r]` of them for row r).

    Returns (keys, rows of every key one after the other, each ascending,
    the bounds of each key's run): what `_Postings.pack` takes.
    """
    key_ids = np.frombuffer(ids, dtype=np.int32)
    rows = np.repeat(
        np.arange(len(lengths), dtype=np.int32), np.frombuffer(lengths, dtype=np.int32)
    )
    flat = rows[np.argsort(key_ids, kind="stable")]
    bounds = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum(np.bincount(key_ids, minlength=len(keys)), out=bounds[1:])
    return keys, flat, bounds


def index_text(memory: Memory) -> str:
    """The text indexed for a memory: title and tags twice (boost), then the body."""
    tags = " ".join(memory.tags)
    return "\n".join((memory.title, memory.title, tags, tags, memory.body))


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked memory and why it ranked."""

    memory: Memory
    score: float
    explain: dict[str, Any]


@dataclass(frozen=True, slots=True)
class SearchResults:
    """A page of hits plus how many memories matched in all."""

    hits: list[Hit]
    #: Memories matching in all; an upper bound when `total_exact` is False
    #: (phrase checks were done lazily, only as far as the page needed).
    total: int
    query: Query
    total_exact: bool = True


@dataclass(frozen=True, slots=True)
class DuplicateGroup:
    """Memories whose texts are near-identical (TF-IDF cosine >= threshold)."""

    memories: tuple[Memory, ...]
    #: (i, j, cosine) pairs over `memories` that met the threshold.
    pairs: tuple[tuple[int, int, float], ...]

    @property
    def cross_vault(self) -> bool:
        return len({str(m.vault_root) for m in self.memories}) > 1


class _Codes:
    """Interning of small string sets (formats, kinds, statuses) to int codes."""

    __slots__ = ("code", "values")

    def __init__(self) -> None:
        self.values: list[str] = []
        self.code: dict[str, int] = {}

    def of(self, value: str) -> int:
        c = self.code.get(value)
        if c is None:
            c = self.code[value] = len(self.values)
            self.values.append(value)
        return c

    def table(self, pred: Callable[[str], bool]) -> BoolArray:
        """A lookup table: code -> pred(value)."""
        return np.fromiter((pred(v) for v in self.values), dtype=bool, count=len(self.values))


class _Column:
    """A growable numpy column (amortised appends for incremental adds)."""

    __slots__ = ("data", "size")

    def __init__(self, dtype: Any, values: Sequence[Any] = ()) -> None:
        self.data: npt.NDArray[Any] = np.array(values, dtype=dtype)
        self.size = len(values)

    def append(self, value: Any) -> None:
        if self.size == len(self.data):
            grown = np.empty(max(16, 2 * len(self.data)), dtype=self.data.dtype)
            grown[: self.size] = self.data[: self.size]
            self.data = grown
        self.data[self.size] = value
        self.size += 1

    @property
    def view(self) -> npt.NDArray[Any]:
        return self.data[: self.size]


class _Postings:
    """Rows per word (title words, tags), packed in one array, plus rows added since.

    A build packs every key's rows into `flat` (key `k`'s rows are
    ``flat[bounds[pos[k]]:bounds[pos[k] + 1]]``, ascending): no per-key
    array objects until a key is looked up.  `append` collects rows added
    later in `extra`; they are folded into a key's own array (`arr`) the next
    time it is looked up.
    """

    __slots__ = ("arr", "bounds", "extra", "flat", "pos")

    def __init__(self) -> None:
        self.pos: dict[str, int] = {}
        self.flat: IntArray = np.zeros(0, dtype=np.int32)
        self.bounds: IntArray = np.zeros(1, dtype=np.int64)
        self.arr: dict[str, IntArray] = {}
        self.extra: dict[str, list[int]] = {}

    def pack(self, keys: list[str], flat: IntArray, bounds: IntArray) -> None:
        self.pos = dict(zip(keys, range(len(keys)), strict=True))
        self.flat, self.bounds = flat, bounds
        self.arr, self.extra = {}, {}

    def __contains__(self, key: str) -> bool:
        return key in self.pos or key in self.arr or key in self.extra

    def __iter__(self) -> Iterator[str]:
        yield from self.pos
        yield from (k for k in self.arr if k not in self.pos)
        yield from (k for k in self.extra if k not in self.pos and k not in self.arr)

    def append(self, key: str, row: int) -> bool:
        """Add a row; True if the key is new."""
        new = key not in self
        self.extra.setdefault(key, []).append(row)
        return new

    def rows(self, key: str) -> IntArray:
        more = self.extra.pop(key, None)
        arr = self.arr.get(key)
        if arr is None:
            i = self.pos.get(key)
            if i is not None:
                arr = self.flat[int(self.bounds[i]) : int(self.bounds[i + 1])]
        if more is not None:
            tail = np.asarray(more, dtype=np.int32)
            arr = tail if arr is None else np.concatenate([arr, tail])
            self.arr[key] = arr
        return arr if arr is not None else np.zeros(0, dtype=np.int32)

    def __getstate__(self) -> tuple[list[str], IntArray, IntArray]:
        keys = list(self)
        if self.arr or self.extra:  # repack what changed since the build
            parts = [self.rows(k) for k in keys]
            flat = np.concatenate(parts).astype(np.int32) if parts else self.flat[:0]
            bounds = np.zeros(len(parts) + 1, dtype=np.int64)
            np.cumsum([len(p) for p in parts], out=bounds[1:])
            return keys, flat, bounds
        return keys, self.flat, self.bounds

    def __setstate__(self, state: tuple[list[str], IntArray, IntArray]) -> None:
        self.pack(*state)


@dataclass(slots=True)
class _Prepared:
    """A query turned into term weights and fuzzy word lists."""

    query: Query
    term_ids: list[int]
    q_weights: list[float]
    #: Query words for fuzzy matching (analysed), and their matched title words.
    fuzzy_words: list[str]
    fuzzy_matches: list[dict[str, float]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Phrase:
    """A phrase compiled for narrowing (tokens) and checking (regex)."""

    text: str
    pattern: re.Pattern[str]
    #: Tokens a containing row must have exactly.
    exact: tuple[str, ...]
    #: An open phrase's last word: a containing row has a token starting with it.
    prefix: str | None


def compile_phrase(text: str, open_end: bool = False) -> _Phrase | None:
    """The phrase as word-bounded pattern; None without a word of 2+ letters."""
    tokens = list(_TOKEN_RE.finditer(text))
    if not tokens:
        return None
    exact = [t.group() for t in tokens]
    prefix = None
    if open_end and tokens[-1].end() == len(text):
        prefix = exact.pop()
    pattern = re.escape(text)
    if re.match(r"\w", text[0]):
        pattern = r"(?<!\w)" + pattern
    if not open_end and re.match(r"\w", text[-1]):
        pattern += r"(?!\w)"
    return _Phrase(text, re.compile(pattern), tuple(exact), prefix)


def _at_least_kth(scores: FloatArray, k: int) -> IntArray:
    """Indexes of every score >= the k-th highest (all ties at the boundary kept)."""
    if k >= len(scores):
        return np.arange(len(scores))
    kth = np.partition(scores, len(scores) - k)[len(scores) - k]
    return np.flatnonzero(scores >= kth)


def _date_ordinal(value: date | datetime | None) -> int:
    if value is None:
        return 0
    if isinstance(value, datetime):
        return value.date().toordinal()
    return value.toordinal()


def _agent_of(m: Memory) -> str:
    agent = m.native.get("agent")
    return agent.lower() if isinstance(agent, str) else ""


def _importance_of(m: Memory) -> float:
    imp = m.importance
    return float(imp) if isinstance(imp, int | float) and not isinstance(imp, bool) else math.nan


def _coded(codes: _Codes, values: list[str], norm: Callable[[str], str]) -> list[int]:
    """Codes of `values` (after `norm`), normalising each distinct value once."""
    table = {v: codes.of(norm(v)) for v in dict.fromkeys(values)}
    return list(map(table.__getitem__, values))


def _safe_brief(
    brief: Callable[[Memory, date], Brief], fallback: Callable[[Memory], Brief], as_of: date
) -> Callable[[Memory], Brief]:
    """An adapter's `decay_brief`, falling back like `_safe_decay` does."""

    def one(m: Memory) -> Brief:
        try:
            return brief(m, as_of)
        except (KeyError, NotImplementedError):
            return fallback(m)

    return one


def _safe_decay(decay: DecayFn, memory: Memory, as_of: date) -> DecayInfo:
    """Decay for ranking; a format without a decay model ranks at full weight."""
    try:
        return decay(memory, as_of)
    except (KeyError, NotImplementedError):
        # An unknown format id or an adapter still being written: rank it as
        # stable rather than hide it or fail the whole search.
        return DecayInfo(status="unknown", health=Health.STABLE, strength=1.0, weight=1.0)


def load_stored_vectors(root: Path) -> tuple[str, dict[str, list[float]]] | None:
    """Stored embedding vectors a vault ships (cognitive-memory ``_embeddings.json``).

    Returns (model name, {memory id: vector}) or None when there is no such
    file or it is unreadable.  The file is derived data (regenerated by the
    system's own ``embed`` command), so it is only read, never validated as a
    memory, and a bad file simply means "no vectors".
    """
    path = root / "_embeddings.json"
    try:
        data = json.loads(read_regular(path))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("entries"), dict):
        return None
    entries: dict[str, list[float]] = {}
    for key, vec in data["entries"].items():
        if (
            isinstance(key, str)
            and isinstance(vec, list)
            and vec
            and all(isinstance(x, int | float) and not isinstance(x, bool) for x in vec)
        ):
            entries[key] = [float(x) for x in vec]
    model = data.get("model")
    return (str(model) if model is not None else "", entries)


#: Fits of at least this many documents count half of them in a parse worker
#: (when a CPU is free): sending the texts there and the counts back costs
#: about a tenth of counting them.
PARALLEL_FIT_MIN = 20_000
#: The worker's share of such a fit.  Half: this process also fills the
#: columns, but the worker first starts and unpickles the texts (measured
#: at 100k, a 0.6 share left this process waiting 0.3 s, 0.5 about 0.05 s).
WORKER_SHARE = 0.5

Text3 = tuple[str, tuple[str, ...], str]


def _texts(docs: Sequence[Memory]) -> list[Text3]:
    return [(m.title, m.tags, m.body) for m in docs]


class _Counted:
    """Term, title-word and tag counts of documents, with ids in first-seen order.

    `count` adds documents (in order); `merge` adds what another process
    counted with its own ids (`count_terms`), renumbered so every id is
    what counting those documents here would have given.
    """

    def __init__(self) -> None:
        self.term_id: defaultdict[str, int] = defaultdict(itertools.count().__next__)
        self.word_id: defaultdict[str, int] = defaultdict(itertools.count().__next__)
        self.tag_id: defaultdict[str, int] = defaultdict(itertools.count().__next__)
        self.term_of = self.term_id.__getitem__
        self.terms = array("i")
        self.counts = array("i")
        self.doc_len = array("i")
        self.words = array("i")
        self.words_len = array("i")
        self.tags = array("i")
        self.tags_len = array("i")

    def count(self, docs: Iterable[Text3]) -> None:
        term_of, word_of = self.term_of, self.word_id.__getitem__
        tag_of = self.tag_id.__getitem__
        terms, counts, doc_len = self.terms, self.counts, self.doc_len
        words, words_len, tags, tags_len = self.words, self.words_len, self.tags, self.tags_len
        for title, tag_list, body in docs:
            head = analyze(title)
            if tag_list:
                head += analyze(" ".join(tag_list))
                lowered = dict.fromkeys([t.lower() for t in tag_list])
                tags.extend(map(tag_of, lowered))
                tags_len.append(len(lowered))
            else:
                tags_len.append(0)
            # Counted in C over the strings; only each distinct term is
            # looked up in the vocabulary.  Title and tags count twice.
            tf_of = Counter(_words(body.lower()))
            tf_of.update(head)
            tf_of.update(head)
            terms.extend(map(term_of, tf_of))
            counts.extend(tf_of.values())
            doc_len.append(len(tf_of))
            unique = dict.fromkeys(head)
            words.extend(map(word_of, unique))
            words_len.append(len(unique))

    def export(self) -> tuple[Any, ...]:
        """What `merge` takes: the three vocabularies in id order and the arrays."""
        return (
            list(self.term_id),
            list(self.word_id),
            list(self.tag_id),
            self.terms,
            self.counts,
            self.doc_len,
            self.words,
            self.words_len,
            self.tags,
            self.tags_len,
        )

    def merge(self, got: tuple[Any, ...]) -> None:
        vt, vw, vg, terms, counts, doc_len, words, words_len, tags, tags_len = got
        for mine, ids, vocab in (
            (self.terms, terms, (self.term_id, vt)),
            (self.words, words, (self.word_id, vw)),
            (self.tags, tags, (self.tag_id, vg)),
        ):
            table, names = vocab
            # Local id -> id here, in the other side's first-seen order, so
            # new names get the ids counting them here would have given.
            remap = np.fromiter(map(table.__getitem__, names), dtype=np.int32, count=len(names))
            local = np.frombuffer(ids, dtype=np.int32)
            mine.frombytes(remap.take(local).astype(np.int32).tobytes())
        self.counts.extend(counts)
        self.doc_len.extend(doc_len)
        self.words_len.extend(words_len)
        self.tags_len.extend(tags_len)


def count_terms(docs: list[Text3]) -> tuple[Any, ...]:
    """`_Counted.count` of `docs` from scratch, exported (what a parse worker runs)."""
    counted = _Counted()
    counted.count(docs)
    return counted.export()


@dataclass(frozen=True, slots=True)
class _Split:
    """Documents from `start` on are counted by a parse worker; `wait` gives its counts."""

    start: int
    wait: Callable[[], tuple[Any, ...] | None]


def _split_fit(docs: Sequence[Memory]) -> _Split | None:
    """Have a parse worker count the later part of a large fit; None: count here.

    Only with a CPU to spare (`cache.spare_cpu`, `MEMLENS_PARALLEL=0` turns
    it off).  The worker takes WORKER_SHARE of the documents: this process
    also fills the index columns meanwhile.
    """
    n = len(docs)
    if n < PARALLEL_FIT_MIN:
        return None
    from ..scan import cache

    if os.environ.get(cache.PARALLEL_ENV, "1") == "0" or not cache.spare_cpu():
        return None
    start = n - int(n * WORKER_SHARE)
    wait = cache.run_in_worker(("count_terms", _texts(docs[start:])))
    return _Split(start, wait) if wait is not None else None


class SearchIndex:
    """TF-IDF + fuzzy index over memories of any format.  Build with `build`."""

    def __init__(self, as_of: date, decay: DecayFn = decay_of) -> None:
        self._as_of = as_of
        self._decay = decay
        # rows
        self._memories: list[Memory] = []
        self._row_of: dict[Key, int] = {}
        self._alive = _Column(np.bool_)
        self._fmt = _Column(np.int32)
        self._kind = _Column(np.int32)
        self._vault = _Column(np.int32)
        self._agent = _Column(np.int32)
        self._health = _Column(np.int8)
        self._status = _Column(np.int32)
        self._source = _Column(np.int32)
        self._created = _Column(np.int64)
        self._importance = _Column(np.float64)
        self._conf = _Column(np.float64)
        self._weight = _Column(np.float64)
        #: The decay score at `_as_of` per row (NaN when the format has none).
        self._score = _Column(np.float64)
        self._fmt_codes = _Codes()
        self._kind_codes = _Codes()
        self._vault_codes = _Codes()
        self._agent_codes = _Codes()
        self._status_codes = _Codes()
        self._source_codes = _Codes()
        #: vault root -> lower-cased names it answers to (`vault:` filter).
        self._vault_names: dict[str, tuple[str, ...]] = {}
        # terms
        self._vocab: dict[str, int] = {}
        #: term id -> term
        self._terms: list[str] = []
        self._idf: list[float] = []
        self._sorted_terms: list[str] = []
        self._n_fit_docs = 0
        self._xt_indptr: IntArray = np.zeros(1, dtype=np.int64)
        #: Rows per term (int32: 4 bytes a posting instead of 8).
        self._xt_indices: IntArray = np.zeros(0, dtype=np.int32)
        self._xt_data: FloatArray = np.zeros(0, dtype=np.float64)
        self._n_base_terms = 0
        self._n_base_rows = 0
        #: Delta: rows added since the build -> their (term ids, weights).
        self._delta_vec: dict[int, tuple[list[int], list[float]]] = {}
        self._delta_post: dict[int, dict[int, float]] = {}
        self._dead = 0
        # title/tag words and tags
        self._tw = _Postings()
        self._tw_by_len: dict[int, list[str]] = {}
        self._tw_sorted: list[str] = []
        self._tags = _Postings()
        #: Lower-cased texts for phrase checks (bounded: see `_lower_text`).
        self._lower: dict[int, str] = {}
        self._vectors: dict[str, tuple[str, dict[str, list[float]]] | None] = {}
        #: Row -> rank by place (vault, path, line/index, id); see `_place_rank`.
        self._place_ranks: IntArray | None = None

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
        cls, memories: Iterable[Memory], as_of: date, vaults: Iterable[Vault], decay: DecayFn
    ) -> SearchIndex:
        index = cls(as_of, decay)
        for v in vaults:
            names = {v.rel.lower(), v.name.lower(), v.root.name.lower()}
            index._vault_names[str(v.root)] = tuple(sorted(n for n in names if n and n != "."))
        mems: dict[Key, Memory] = {}
        for m in memories:
            mems[m.key] = m
        docs = list(mems.values())
        # A parse worker may count the later documents' terms meanwhile
        # (started first: it works while this process fills the columns).
        split = _split_fit(docs)
        try:
            index._append_rows(docs)
        except BaseException:
            if split is not None:
                split.wait()  # the worker goes back to the pool
            raise
        index._fit(docs, split)
        return index

    def _fit(self, docs: list[Memory], split: _Split | None = None) -> None:
        """TF-IDF of `docs` (rows 0..n-1) and their title-word and tag postings.

        The same numbers as scikit-learn's ``TfidfVectorizer(analyzer=analyze,
        sublinear_tf=True, norm="l2", smooth_idf=True)``: vocabulary in sorted
        order, idf = ln((1 + n) / (1 + df)) + 1, weights (1 + ln tf) * idf,
        rows scaled to unit length; built with numpy straight into the
        transposed (term -> rows) layout the queries use.  Each text is
        tokenized once: a document is ``title title tags tags body``
        (`index_text`), so its counts are twice the title's and tags' plus the
        body's, and the title/tag words come from the same tokens.
        """
        n = len(docs)
        counted = _Counted()
        # Single characters get the first ids and their pairs are dropped
        # below: cheaper than filtering every body's tokens in Python.
        singles = len(list(map(counted.term_of, _SINGLE)))
        # `split`: a parse worker counts the documents from `split.start` on.
        start = split.start if split is not None else n
        try:
            counted.count(_texts(docs[:start]))
        finally:
            got = split.wait() if split is not None else None
        if split is not None:
            if got is None:
                counted.count(_texts(docs[start:]))  # the worker failed: count here
            else:
                counted.merge(got)
        term_id, word_id, tag_id = counted.term_id, counted.word_id, counted.tag_id
        terms, counts, doc_len = counted.terms, counted.counts, counted.doc_len
        words, words_len = counted.words, counted.words_len
        tags, tags_len = counted.tags, counted.tags_len
        del counted

        # Vocabulary ids in sorted term order (as scikit-learn numbers them).
        first_seen = list(term_id)[singles:]
        v = len(first_seen)
        order = sorted(range(v), key=first_seen.__getitem__)
        rank = np.full(singles + v, -1, dtype=np.int32)
        rank[np.asarray(order, dtype=np.int64) + singles] = np.arange(v, dtype=np.int32)
        sorted_terms = [first_seen[i] for i in order]
        del first_seen, order
        # (term, row, tf) per pair, rows ascending: a stable sort by term
        # gives the postings with rows still ascending within each term.
        term = rank.take(np.frombuffer(terms, dtype=np.int32))
        rows = np.repeat(np.arange(n, dtype=np.int32), np.frombuffer(doc_len, dtype=np.int32))
        tf = np.frombuffer(counts, dtype=np.int32)
        real = term >= 0
        if not real.all():
            term, rows, tf = term[real], rows[real], tf[real]
        del terms, counts, rank, real
        by_term = np.argsort(term, kind="stable")
        term = term[by_term]
        rows = rows[by_term]
        tf = tf[by_term]
        del by_term
        df = np.bincount(term, minlength=v)
        indptr = np.zeros(v + 1, dtype=np.int64)
        np.cumsum(df, out=indptr[1:])
        idf = np.log((n + 1) / (df + 1.0)) + 1.0
        weights = np.log(tf, dtype=np.float64)
        weights += 1.0
        weights *= idf[term]
        del tf, term
        norms = np.sqrt(np.bincount(rows, weights=weights * weights, minlength=n))
        weights /= norms[rows]

        self._vocab = dict(zip(sorted_terms, range(v), strict=True))
        self._terms = sorted_terms
        self._sorted_terms = list(sorted_terms)
        self._idf = idf.tolist()
        self._n_fit_docs = n
        self._n_base_terms = v
        self._n_base_rows = n
        self._xt_indptr = indptr
        self._xt_indices = rows
        self._xt_data = weights

        self._tw.pack(*_group_rows(list(word_id), words, words_len))
        self._tags.pack(*_group_rows(list(tag_id), tags, tags_len))
        for w in self._tw.pos:
            self._tw_by_len.setdefault(len(w), []).append(w)
        self._tw_sorted = sorted(self._tw.pos)

    @classmethod
    def from_catalog(cls, catalog: Catalog, as_of: date) -> SearchIndex:
        """Index every valid memory of every vault in the catalog."""
        return cls.build(catalog.memories(), as_of, vaults=catalog.vaults)

    def _vault_code(self, memory: Memory) -> int:
        root = str(memory.vault_root)
        if root not in self._vault_names:
            name = memory.vault_root.name.lower()
            self._vault_names[root] = (name,) if name else ()
        return self._vault_codes.of(root)

    def _columns(self) -> tuple[_Column, ...]:
        return (
            self._alive,
            self._fmt,
            self._kind,
            self._vault,
            self._agent,
            self._health,
            self._status,
            self._source,
            self._created,
            self._importance,
            self._conf,
            self._weight,
            self._score,
        )

    def _row_values(self, m: Memory, decay: Brief) -> tuple[Any, ...]:
        """One row's column values, in `_columns` order."""
        status, health, weight, score = decay
        return (
            True,
            self._fmt_codes.of(m.format),
            self._kind_codes.of(m.kind.lower()),
            self._vault_code(m),
            self._agent_codes.of(_agent_of(m)),
            _HEALTH_CODE[health],
            self._status_codes.of(status),
            self._source_codes.of((m.source or "").lower()),
            _date_ordinal(m.created),
            _importance_of(m),
            confidence_value(m.confidence)[0],
            float(weight),
            math.nan if score is None else float(score),
        )

    def _index_words(self, m: Memory, row: int) -> list[str]:
        """Title/tag words and tags of a new row; returns title words never seen before."""
        new = [w for w in _title_words(m) if self._tw.append(w, row)]
        for t in {t.lower() for t in m.tags}:
            self._tags.append(t, row)
        return new

    def _decay_fn(self) -> Callable[[Memory], Brief]:
        """(status, health, weight, score) at `_as_of` for one memory.

        With the default decay, each format's adapter is looked up once and
        its `decay_brief` (the same numbers without the explanation text) used.
        """
        as_of, decay = self._as_of, self._decay

        def by(fn: DecayFn) -> Callable[[Memory], Brief]:
            def one(m: Memory) -> Brief:
                info = _safe_decay(fn, m, as_of)
                return info.status, info.health, info.weight, info.score

            return one

        if decay is not decay_of:
            return by(decay)
        from ..formats import adapter_for

        by_format: dict[str, Callable[[Memory], Brief]] = {}

        def one(m: Memory) -> Brief:
            fn = by_format.get(m.format)
            if fn is None:
                try:
                    adapter = adapter_for(m.format)
                except (KeyError, NotImplementedError):
                    fn = by(decay)
                else:
                    fn = _safe_brief(adapter.decay_brief, by(decay), as_of)
                by_format[m.format] = fn
            return fn(m)

        return one

    def _append_rows(self, memories: Sequence[Memory]) -> None:
        """Metadata columns of a build's rows (columns made once; no terms or words).

        Values are gathered per column, then each column of strings is
        coded through its distinct values only.
        """
        decay = self._decay_fn()
        row_of = self._row_of
        briefs: list[Brief] = []
        for row, m in enumerate(memories, start=len(self._memories)):
            row_of[m.key] = row
            briefs.append(decay(m))
        self._memories.extend(memories)
        if not briefs:  # an empty catalog: the columns stay empty
            return
        n = len(memories)
        by_root: dict[str, Memory] = {}
        for m in memories:
            by_root.setdefault(str(m.vault_root), m)
        vault_code = {root: self._vault_code(m) for root, m in by_root.items()}
        confidences: dict[tuple[type, Any], float] = {}

        def confidence(value: Any) -> float:
            key = (type(value), value)
            found = confidences.get(key)
            if found is None:
                found = confidences[key] = confidence_value(value)[0]
            return found

        statuses, healths, weights, scores = zip(*briefs, strict=True)
        columns: dict[int, Any] = {
            id(self._alive): np.ones(n, dtype=bool),
            id(self._fmt): _coded(self._fmt_codes, [m.format for m in memories], str),
            id(self._kind): _coded(self._kind_codes, [m.kind for m in memories], str.lower),
            id(self._vault): [vault_code[str(m.vault_root)] for m in memories],
            id(self._agent): _coded(self._agent_codes, list(map(_agent_of, memories)), str),
            id(self._health): [_HEALTH_CODE[h] for h in healths],
            id(self._status): _coded(self._status_codes, list(statuses), str),
            id(self._source): _coded(
                self._source_codes, [m.source or "" for m in memories], str.lower
            ),
            id(self._created): [_date_ordinal(m.created) for m in memories],
            id(self._importance): list(map(_importance_of, memories)),
            id(self._conf): [confidence(m.confidence) for m in memories],
            id(self._weight): list(weights),
            id(self._score): [math.nan if x is None else x for x in scores],
        }
        for col in self._columns():
            col.data = np.array(columns[id(col)], dtype=col.data.dtype)
            col.size = n

    def _append_row(self, m: Memory) -> int:
        """Metadata columns, title words and tags for a new row (no terms)."""
        row = len(self._memories)
        self._memories.append(m)
        self._row_of[m.key] = row
        brief = self._decay_fn()(m)
        for col, value in zip(self._columns(), self._row_values(m, brief), strict=True):
            col.append(value)
        for w in self._index_words(m, row):
            self._tw_by_len.setdefault(len(w), []).append(w)
            bisect.insort(self._tw_sorted, w)
        return row

    # ------------------------------------------------------------ properties

    def __getattr__(self, name: str) -> Any:
        # Only for attributes not set: `_row_of` may be pending (`_defer_rows`).
        if name == "_row_of":
            segments = self.__dict__.pop("_row_segments", None)
            if segments is not None:
                row_of: dict[Key, int] = {}
                for root, ids, start in segments:
                    keys = zip(itertools.repeat(root), ids)
                    row_of.update(zip(keys, range(start, start + len(ids)), strict=True))
                self._row_of = row_of
                return row_of
        raise AttributeError(name)

    def _defer_rows(self, segments: list[tuple[str, list[str], int]]) -> None:
        """Key -> row for rows ``start + i`` of ``(root, ids[i])``, built on first use.

        A search never needs it (only updates, lookups and `len` do): an
        index loaded from its cache is searchable without building 100k keys.
        """
        self.__dict__.pop("_row_of", None)
        self._row_segments = segments

    @property
    def as_of(self) -> date:
        return self._as_of

    def __len__(self) -> int:
        return len(self._row_of)

    def __contains__(self, key: object) -> bool:
        return key in self._row_of

    @property
    def needs_rebuild(self) -> bool:
        """True once incremental changes touch a tenth of the rows."""
        return (self._dead + len(self._delta_vec)) * 10 > max(10, len(self._memories))

    def memories(self) -> list[Memory]:
        return [self._memories[r] for r in self._row_of.values()]

    def get(self, key: Key) -> Memory:
        try:
            return self._memories[self._row_of[key]]
        except KeyError:
            raise NotFoundError(f"no indexed memory {key[1]!r} in {key[0]}") from None

    def set_as_of(self, as_of: date) -> None:
        """Recompute decay columns for a new date (O(n) adapter calls)."""
        if as_of == self._as_of:
            return
        self._as_of = as_of
        weight = self._weight.view
        health = self._health.view
        status = self._status.view
        score = self._score.view
        decay = self._decay_fn()
        for row in self._row_of.values():
            row_status, row_health, row_weight, row_score = decay(self._memories[row])
            weight[row] = row_weight
            health[row] = _HEALTH_CODE[row_health]
            status[row] = self._status_codes.of(row_status)
            score[row] = math.nan if row_score is None else row_score

    # ------------------------------------------------------------- terms

    def _analyzed_vector(self, text: str, *, extend: bool) -> tuple[list[int], list[float]]:
        """Sublinear tf-idf, l2-normalised, as scikit-learn computes it.

        With `extend`, unseen terms get a new column whose idf is that of a
        term found in one document of the fitted corpus (frozen).
        """
        counts = Counter(analyze(text))
        ids: list[int] = []
        weights: list[float] = []
        for term, tf in counts.items():
            tid = self._vocab.get(term)
            if tid is None:
                if not extend:
                    continue
                tid = len(self._idf)
                self._vocab[term] = tid
                self._terms.append(term)
                self._idf.append(math.log((1 + self._n_fit_docs) / 2) + 1.0)
                bisect.insort(self._sorted_terms, term)
            ids.append(tid)
            weights.append((1.0 + math.log(tf)) * self._idf[tid])
        norm = math.sqrt(math.fsum(w * w for w in weights))
        if norm > 0:
            weights = [w / norm for w in weights]
        return ids, weights

    def _doc_vector(self, row: int) -> tuple[list[int], list[float]]:
        if row in self._delta_vec:
            return self._delta_vec[row]
        return self._analyzed_vector(index_text(self._memories[row]), extend=False)

    def _doc_weight(self, row: int, term_id: int) -> float:
        """d_t: the document's tf-idf weight for one term."""
        if row in self._delta_vec:
            return self._delta_post.get(term_id, {}).get(row, 0.0)
        if term_id >= self._n_base_terms or row >= self._n_base_rows:
            return 0.0
        lo, hi = int(self._xt_indptr[term_id]), int(self._xt_indptr[term_id + 1])
        i = int(np.searchsorted(self._xt_indices[lo:hi], row)) + lo
        if i < hi and int(self._xt_indices[i]) == row:
            return float(self._xt_data[i])
        return 0.0

    def _postings(self, term_id: int) -> tuple[IntArray, FloatArray]:
        """Rows containing a term (base and delta) and their weights."""
        if term_id < self._n_base_terms:
            lo, hi = int(self._xt_indptr[term_id]), int(self._xt_indptr[term_id + 1])
            rows, data = self._xt_indices[lo:hi], self._xt_data[lo:hi]
        else:
            rows = np.zeros(0, dtype=np.int64)
            data = np.zeros(0, dtype=np.float64)
        extra = self._delta_post.get(term_id)
        if extra:
            rows = np.concatenate([rows, np.fromiter(extra.keys(), np.int64, len(extra))])
            data = np.concatenate([data, np.fromiter(extra.values(), np.float64, len(extra))])
        return rows, data

    def _term_rows(self, term: str) -> IntArray:
        tid = self._vocab.get(term)
        if tid is None:
            return np.zeros(0, dtype=np.int64)
        return self._postings(tid)[0]

    def _prefix_terms(self, prefix: str, limit: int) -> list[str]:
        """Up to `limit` vocabulary terms starting with `prefix`, shortest first."""
        i = bisect.bisect_left(self._sorted_terms, prefix)
        found: list[str] = []
        while i < len(self._sorted_terms) and self._sorted_terms[i].startswith(prefix):
            found.append(self._sorted_terms[i])
            i += 1
            if len(found) > 50 * limit:
                break
        found.sort(key=lambda t: (len(t), t))
        return found[:limit]

    # ----------------------------------------------------------- incremental

    def add(self, memory: Memory) -> None:
        """Index one new memory (or replace the one with its key)."""
        if memory.key in self._row_of:
            self.remove(memory.key)
        row = self._append_row(memory)
        ids, weights = self._analyzed_vector(index_text(memory), extend=True)
        self._delta_vec[row] = (ids, weights)
        for tid, w in zip(ids, weights, strict=True):
            self._delta_post.setdefault(tid, {})[row] = w

    def update(self, memory: Memory) -> None:
        """Re-index a changed memory (same key)."""
        self.add(memory)

    def remove(self, key: Key) -> None:
        """Drop a memory by (vault root, id); NotFoundError if absent."""
        row = self._row_of.pop(key, None)
        if row is None:
            raise NotFoundError(f"no indexed memory {key[1]!r} in {key[0]}")
        self._alive.view[row] = False
        self._dead += 1
        self._lower.pop(row, None)
        vec = self._delta_vec.pop(row, None)
        if vec is not None:
            for tid in vec[0]:
                post = self._delta_post.get(tid)
                if post is not None:
                    post.pop(row, None)
                    if not post:
                        del self._delta_post[tid]

    # ------------------------------------------------------------- filters

    def _lower_text(self, row: int) -> str:
        text = self._lower.get(row)
        if text is None:
            if len(self._lower) >= LOWER_CACHE_MAX:
                self._lower.clear()  # phrase checks of old queries: cheap to redo
            m = self._memories[row]
            text = self._lower[row] = " ".join((m.title + "\n" + m.body).lower().split())
        return text

    def _rows_mask(self, rows: IntArray) -> BoolArray:
        mark = np.zeros(len(self._memories), dtype=bool)
        mark[rows] = True
        return mark

    def _match_codes(
        self, codes: _Codes, column: _Column, rows: IntArray, pred: Callable[[str], bool]
    ) -> BoolArray:
        table = codes.table(pred)
        if not len(table):
            return np.zeros(len(rows), dtype=bool)
        out: BoolArray = table[column.view[rows]]
        return out

    def _filter_mask(self, f: Filter, rows: IntArray) -> BoolArray:
        """Which of `rows` the (un-negated) filter accepts."""
        vals = f.values

        def match(value: str) -> bool:
            for v in vals:
                if v.endswith("*"):
                    if value.startswith(v[:-1]):
                        return True
                elif value == v:
                    return True
            return False

        def contains(value: str) -> bool:
            return any(v.rstrip("*") in value for v in vals)

        if f.field == "tag":
            parts = [self._tags.rows(tag) for tag in list(self._tags) if match(tag)]
            if not parts:
                return np.zeros(len(rows), dtype=bool)
            return self._rows_mask(np.concatenate(parts))[rows]
        if f.field == "kind":
            return self._match_codes(self._kind_codes, self._kind, rows, match)
        if f.field == "format":
            return self._match_codes(self._fmt_codes, self._fmt, rows, contains)
        if f.field == "source":
            return self._match_codes(
                self._source_codes, self._source, rows, lambda s: bool(s) and contains(s)
            )
        if f.field in ("vault", "agent"):
            by_vault = self._match_codes(
                self._vault_codes,
                self._vault,
                rows,
                lambda root: any(match(n) for n in self._vault_names.get(root, ())),
            )
            if f.field == "vault":
                return by_vault
            by_agent = self._match_codes(
                self._agent_codes, self._agent, rows, lambda a: bool(a) and match(a)
            )
            return by_vault | by_agent
        if f.field == "health":
            if any(v in ANY_HEALTH for v in vals):
                return np.ones(len(rows), dtype=bool)
            table = np.array([h.value in vals for h in _HEALTHS], dtype=bool)
            by_health: BoolArray = table[self._health.view[rows]]
            return by_health
        if f.field == "status":
            if any(v in ANY_HEALTH for v in vals):
                return np.ones(len(rows), dtype=bool)
            by_status = self._match_codes(
                self._status_codes, self._status, rows, lambda s: match(s.lower())
            )
            table = np.array([h.value in vals for h in _HEALTHS], dtype=bool)
            either: BoolArray = by_status | table[self._health.view[rows]]
            return either
        if f.field in ("before", "after"):
            assert f.day is not None
            created = self._created.view[rows]
            day = f.day.toordinal()
            ok = created < day if f.field == "before" else created > day
            return (created > 0) & ok
        if f.field in ("importance", "confidence"):
            assert f.number is not None
            col = (self._importance if f.field == "importance" else self._conf).view[rows]
            x = f.number
            with np.errstate(invalid="ignore"):
                if f.op == ">":
                    return col > x
                if f.op == ">=":
                    return col >= x
                if f.op == "<":
                    return col < x
                if f.op == "<=":
                    return col <= x
                return np.abs(col - x) <= 1e-9
        raise QueryError(f.token, f"unsupported filter {f.field!r}")  # pragma: no cover

    def _prefix_rows(self, prefix: str) -> IntArray:
        """Rows with a token starting with `prefix` (base and delta)."""
        parts: list[IntArray] = []
        base = self._terms[: self._n_base_terms]
        # scikit-learn numbers its vocabulary in sorted order, so a prefix's
        # base terms are one contiguous id range: one slice of postings.
        lo = bisect.bisect_left(base, prefix)
        hi = bisect.bisect_left(base, prefix + "\U0010ffff")
        if hi > lo:
            a, b = int(self._xt_indptr[lo]), int(self._xt_indptr[hi])
            parts.append(self._xt_indices[a:b])
        for tid, post in self._delta_post.items():
            if lo <= tid < hi or (
                tid >= self._n_base_terms and self._terms[tid].startswith(prefix)
            ):
                parts.append(np.fromiter(post.keys(), np.int64, len(post)))
        if not parts:
            return np.zeros(0, dtype=np.int64)
        return np.concatenate(parts)

    def _phrase_mask(self, ph: _Phrase) -> BoolArray:
        """Rows that may contain the phrase (a superset, from the postings)."""
        masks = [self._rows_mask(self._term_rows(t)) for t in ph.exact]
        if ph.prefix is not None:
            masks.append(self._rows_mask(self._prefix_rows(ph.prefix)))
        mark = masks[0]
        for m in masks[1:]:
            mark &= m
        return mark

    def _has_phrase(self, row: int, ph: _Phrase) -> bool:
        return ph.pattern.search(self._lower_text(row)) is not None

    # -------------------------------------------------------------- fuzzy

    def _near_words(self, word: str, run_fuzzy: bool, prefix: bool) -> dict[str, float]:
        """Title/tag words matching a query word, with a 0..100 score."""
        from rapidfuzz import fuzz, process

        found: dict[str, float] = {}
        if word in self._tw:
            found[word] = 100.0
        if run_fuzzy and len(word) >= 3:
            n = len(word)
            # ratio >= 80 needs the shorter word at least 2/3 of the longer.
            pool: list[str] = []
            for length in range(max(2, (2 * n + 2) // 3), (3 * n) // 2 + 1):
                pool.extend(self._tw_by_len.get(length, ()))
            for match, score, _ in process.extract(
                word, pool, scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF, limit=FUZZY_LIMIT
            ):
                found.setdefault(str(match), float(score))
        if prefix and len(word) >= 2:
            i = bisect.bisect_left(self._tw_sorted, word)
            taken = 0
            while i < len(self._tw_sorted) and taken < 4 * PREFIX_LIMIT:
                w = self._tw_sorted[i]
                if not w.startswith(word):
                    break
                found.setdefault(w, 100.0)
                i += 1
                taken += 1
        return found

    def _tag_array(self, tag: str) -> IntArray:
        return self._tags.rows(tag)

    def _tw_array(self, word: str) -> IntArray:
        return self._tw.rows(word)

    # -------------------------------------------------------------- search

    def _prepare(self, query: Query, as_you_type: bool) -> _Prepared:
        words = [t for w in query.words for t in analyze(w)]
        phrase_terms = [t for p in query.phrases for t in analyze(p)]
        counts = Counter(words + phrase_terms)
        if as_you_type and query.trailing_word and words:
            last = words[-1]
            for t in self._prefix_terms(last, PREFIX_LIMIT):
                counts.setdefault(t, 1)
        ids: list[int] = []
        weights: list[float] = []
        for term, tf in counts.items():
            tid = self._vocab.get(term)
            if tid is None:
                continue
            ids.append(tid)
            weights.append((1.0 + math.log(tf)) * self._idf[tid])
        norm = math.sqrt(math.fsum(w * w for w in weights))
        if norm > 0:
            weights = [w / norm for w in weights]
        return _Prepared(query, ids, weights, words)

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
    ) -> SearchResults:
        """Rank memories for a query; see the module docstring for the score.

        `as_you_type` treats a trailing unfinished word as a prefix (for a
        search box).  `extra_filters` are ANDed with the query's own (front
        ends map their flags to filters).
        """
        q = parse_query(query) if isinstance(query, str) else query
        if extra_filters:
            q = q.with_filters(*extra_filters)
        if as_of is not None:
            self.set_as_of(as_of)
        n = len(self._memories)
        if q.is_empty or n == 0:
            return SearchResults([], 0, q)
        # A phrase needs a word of two or more letters ('"f' while typing).
        last = len(q.phrases) - 1
        pos = [
            ph
            for i, p in enumerate(q.phrases)
            if (ph := compile_phrase(p, q.open_phrase and i == last)) is not None
        ]
        if q.phrases and not pos and not q.words:
            return SearchResults([], 0, q)
        neg = [ph for p in q.excluded_phrases if (ph := compile_phrase(p)) is not None]
        # "-debt-relief" (several terms): exclude the written form, as a phrase.
        neg += [
            ph
            for w in q.excluded_words
            if len(analyze(w)) > 1 and (ph := compile_phrase(" ".join(w.lower().split())))
        ]
        prep = self._prepare(q, as_you_type)
        cosine, fuzzy = self._text_scores(prep, as_you_type)

        # candidates: rows with text evidence, or that hold every phrase
        alive = self._alive.view
        if q.has_text:
            rel = np.zeros(n, dtype=np.float64)
            if cosine is not None:
                rel += cosine
            if fuzzy is not None:
                rel += FUZZY_WEIGHT * fuzzy / 100.0
            cand_mask = alive.copy() if pos else rel > 0
            for ph in pos:
                cand_mask &= self._phrase_mask(ph)
            cand = np.flatnonzero(cand_mask)
        else:
            rel = np.ones(n, dtype=np.float64)
            cand = np.flatnonzero(alive)

        # filters, vectorised
        mask = alive[cand].copy()
        health_asked = any(f.field in ("health", "status") and not f.negated for f in q.filters)
        if not (include_inactive or health_asked):
            excluded = np.array([h in DEFAULT_EXCLUDED_HEALTH for h in _HEALTHS], dtype=bool)
            mask &= ~excluded[self._health.view[cand]]
        for f in q.filters:
            fm = self._filter_mask(f, cand)
            mask &= ~fm if f.negated else fm
        for w in q.excluded_words:
            terms = analyze(w)
            if len(terms) == 1:  # none: "-h" while typing; several: a phrase above
                mask &= ~self._rows_mask(self._term_rows(terms[0]))[cand]
        cand = cand[mask]
        if len(cand) == 0 or limit <= 0:
            return SearchResults([], len(cand), q)

        # phrase checks on the text, then rank and explain the page exactly
        scores = rel[cand] * self._conf.view[cand] * self._weight.view[cand]
        need = np.full(len(cand), bool(pos))
        neg_masks = [(ph, self._phrase_mask(ph)) for ph in neg]
        for _, m in neg_masks:
            need |= m[cand]

        def passes(row: int) -> bool:
            return all(self._has_phrase(row, ph) for ph in pos) and not any(
                m[row] and self._has_phrase(row, ph) for ph, m in neg_masks
            )

        want = offset + limit
        exact = True
        # NaN would compare false both ways and break the total order.
        scores = np.nan_to_num(scores, nan=-np.inf)
        if int(need.sum()) <= VERIFY_ALL_MAX:
            if need.any():
                keep = np.ones(len(cand), dtype=bool)
                for i in np.flatnonzero(need).tolist():
                    keep[i] = passes(int(cand[i]))
                cand, scores = cand[keep], scores[keep]
            total = len(cand)
            top = _at_least_kth(scores, want)
        else:
            top, seen = self._checked_top(cand, scores, need, passes, want)
            total = len(top) + (len(cand) - seen)
            exact = seen == len(cand)
        page = self._ordered(cand[top], scores[top], rel)[:want]
        weights = self._page_weights(page, prep.term_ids)
        hits = [self._hit(r, prep, weights[r]) for r in page]
        return SearchResults(hits[offset : offset + limit], total, q, exact)

    def _checked_top(
        self,
        cand: IntArray,
        scores: FloatArray,
        need: BoolArray,
        passes: Callable[[int], bool],
        want: int,
    ) -> tuple[IntArray, int]:
        """Rows passing their phrase checks, in score order until the page is full.

        Rows tied with the last one taken are checked and kept too, so the
        full order (not the scan order) decides among them.  Returns indexes
        into `cand` and how many rows were looked at.
        """
        order = np.argsort(-scores, kind="stable")
        picked: list[int] = []
        seen = 0
        boundary: float | None = None
        for i in order.tolist():
            if boundary is not None and scores[i] < boundary:
                break
            seen += 1
            if not need[i] or passes(int(cand[i])):
                picked.append(i)
                if len(picked) == want:
                    boundary = float(scores[i])
        return np.asarray(picked, dtype=np.int64), seen

    def _ordered(self, rows: IntArray, scores: FloatArray, rel: FloatArray) -> list[int]:
        """`rows` in hit order: score, relevance, then the memory's place (a total order)."""
        if len(rows) > _RANKED_SORT_MIN:
            ranks = self._place_rank()[rows]
            order = np.lexsort((ranks, -rel[rows], -scores))
            return [int(r) for r in rows[order]]
        place_key = self._place_key
        keyed = sorted(
            zip((-scores).tolist(), (-rel[rows]).tolist(), rows.tolist(), strict=True),
            key=lambda t: (t[0], t[1], place_key(t[2])),
        )
        return [t[2] for t in keyed]

    def _place_key(self, row: int) -> tuple[str, str, int, int, str]:
        """Where a row's memory is, for ordering equal scores: vault, path, line/index, id."""
        m = self._memories[row]
        root = self._vault_codes.values[int(self._vault.view[row])]
        return (root, m.path, m.line or 0, m.index or 0, m.id)

    def _place_rank(self) -> IntArray:
        """Every row's rank by `_place` (cached until the rows change)."""
        ranks = self._place_ranks
        if ranks is None or len(ranks) != len(self._memories):
            # One rank array for all rows: the same key as `_ordered`'s small
            # path, so both give one order (a page may take either path).
            n = len(self._memories)
            keys = [self._place_key(r) for r in range(n)]
            order = sorted(range(n), key=keys.__getitem__)
            ranks = np.empty(n, dtype=np.int64)
            ranks[np.asarray(order, dtype=np.int64)] = np.arange(n, dtype=np.int64)
            self._place_ranks = ranks
        return ranks

    def _text_scores(
        self, prep: _Prepared, as_you_type: bool
    ) -> tuple[FloatArray | None, FloatArray | None]:
        """Cosine over the query terms' postings, and the fuzzy title/tag score."""
        n = len(self._memories)
        q = prep.query
        cosine: FloatArray | None = None
        if prep.term_ids:
            parts_r: list[IntArray] = []
            parts_w: list[FloatArray] = []
            for tid, qw in zip(prep.term_ids, prep.q_weights, strict=True):
                rows, data = self._postings(tid)
                parts_r.append(rows)
                parts_w.append(data * qw)
            cosine = np.bincount(
                np.concatenate(parts_r), weights=np.concatenate(parts_w), minlength=n
            ).astype(np.float64)
        n_text_hits = int(np.count_nonzero(cosine)) if cosine is not None else 0
        fuzzy: FloatArray | None = None
        if prep.fuzzy_words:
            short = len(prep.fuzzy_words) <= 2 and n_text_hits < FUZZY_FEW_HITS
            total = np.zeros(n, dtype=np.float64)
            for i, w in enumerate(prep.fuzzy_words):
                run_fuzzy = short or w not in self._vocab
                is_last = as_you_type and q.trailing_word and i == len(prep.fuzzy_words) - 1
                near = self._near_words(w, run_fuzzy, is_last)
                prep.fuzzy_matches.append(near)
                if not near:
                    continue
                best = np.zeros(n, dtype=np.float64)
                for tw, score in near.items():
                    rows = self._tw_array(tw)
                    best[rows] = np.maximum(best[rows], score)
                total += best
            if total.any():
                fuzzy = total / len(prep.fuzzy_words)
        return cosine, fuzzy

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

    def _page_weights(self, rows: list[int], term_ids: list[int]) -> dict[int, list[float]]:
        """d_t for a page of rows and the query terms (one searchsorted per term)."""
        out = {r: [0.0] * len(term_ids) for r in rows}
        base = [r for r in rows if r < self._n_base_rows]
        if base:
            arr = np.asarray(base, dtype=np.int64)
            for j, tid in enumerate(term_ids):
                if tid >= self._n_base_terms:
                    continue
                lo, hi = int(self._xt_indptr[tid]), int(self._xt_indptr[tid + 1])
                if hi == lo:
                    continue
                seg = self._xt_indices[lo:hi]
                pos = np.minimum(np.searchsorted(seg, arr), hi - lo - 1)
                for k in np.flatnonzero(seg[pos] == arr).tolist():
                    out[base[k]][j] = float(self._xt_data[lo + int(pos[k])])
        for r in rows:
            if r in self._delta_vec:
                out[r] = [self._delta_post.get(tid, {}).get(r, 0.0) for tid in term_ids]
        return out

    def _hit(self, row: int, prep: _Prepared, doc_weights: list[float]) -> Hit:
        m = self._memories[row]
        weight = float(self._weight.view[row])
        decay_score = float(self._score.view[row])
        conf, conf_src = confidence_value(m.confidence)
        terms: list[dict[str, Any]] = []
        for tid, qw, dw in zip(prep.term_ids, prep.q_weights, doc_weights, strict=True):
            if dw > 0:
                terms.append(
                    {
                        "term": self._terms[tid],
                        "query_weight": qw,
                        "doc_weight": dw,
                        "contribution": qw * dw,
                    }
                )
        terms.sort(key=lambda t: (-t["contribution"], t["term"]))
        cosine = math.fsum(t["contribution"] for t in terms)
        matches: list[dict[str, Any]] = []
        fuzzy_score = 0.0
        if prep.fuzzy_words:
            words = _title_words(m)
            total = 0.0
            for w, near in zip(prep.fuzzy_words, prep.fuzzy_matches, strict=False):
                best_word, best = "", 0.0
                for tw, s in near.items():
                    if tw in words and (s > best or (s == best and tw < best_word)):
                        best_word, best = tw, s
                if best > 0:
                    matches.append({"word": w, "matched": best_word, "score": best})
                total += best
            fuzzy_score = total / len(prep.fuzzy_words)
        bonus = FUZZY_WEIGHT * fuzzy_score / 100.0
        q = prep.query
        filter_only = not q.has_text
        relevance = 1.0 if filter_only else cosine + bonus
        score = relevance * conf * weight
        explain: dict[str, Any] = {
            "formula": "score = relevance × confidence × decay_weight; "
            "relevance = cosine + fuzzy_weight × fuzzy / 100"
            + ("; a query without words or phrases has relevance 1" if filter_only else ""),
            "terms": terms,
            "cosine": cosine,
            "fuzzy": fuzzy_score,
            "fuzzy_matches": matches,
            "fuzzy_weight": FUZZY_WEIGHT,
            "fuzzy_bonus": bonus,
            "filter_only": filter_only,
            "relevance": relevance,
            "confidence": conf,
            "confidence_from": conf_src,
            "decay_weight": weight,
            "status": self._status_codes.values[int(self._status.view[row])],
            "health": _HEALTHS[int(self._health.view[row])].value,
            "decay_score": None if math.isnan(decay_score) else decay_score,
            "phrases": list(q.phrases),
            "filters": [f.token for f in q.filters],
            "score": score,
        }
        return Hit(m, score, explain)

    # --------------------------------------------------------- more like this

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
        n = len(self._memories)
        if by == "vectors":
            return self._similar_by_vectors(row, k, include_inactive)
        if by != "tfidf":
            raise ValueError(f"unknown similarity {by!r} (tfidf or vectors)")
        ids, weights = self._doc_vector(row)
        if not ids:
            return []
        parts_r: list[IntArray] = []
        parts_w: list[FloatArray] = []
        for tid, w in zip(ids, weights, strict=True):
            rows, data = self._postings(tid)
            parts_r.append(rows)
            parts_w.append(data * w)
        sims: FloatArray = np.bincount(
            np.concatenate(parts_r), weights=np.concatenate(parts_w), minlength=n
        ).astype(np.float64)
        cand = np.flatnonzero(sims > 0)
        hits = self._rank_similar(row, cand, sims[cand], k, include_inactive)
        out: list[Hit] = []
        for other, _ in hits:
            shared: list[tuple[float, str]] = []
            for tid, w in zip(ids, weights, strict=True):
                dw = self._doc_weight(other, tid)
                if dw > 0:
                    shared.append((w * dw, self._terms[tid]))
            shared.sort(key=lambda t: (-t[0], t[1]))
            cos = math.fsum(c for c, _ in shared)
            explain = {
                "method": "tfidf",
                "cosine": cos,
                "terms": [{"term": t, "contribution": c} for c, t in shared[:10]],
                "score": cos,
            }
            out.append(Hit(self._memories[other], cos, explain))
        out.sort(key=lambda h: (-h.score, h.memory.id))
        return out

    def _rank_similar(
        self, row: int, cand: IntArray, sims: FloatArray, k: int, include_inactive: bool
    ) -> list[tuple[int, float]]:
        alive = self._alive.view
        keep = alive[cand] & (cand != row)
        if not include_inactive:
            excluded = np.array([h in DEFAULT_EXCLUDED_HEALTH for h in _HEALTHS], dtype=bool)
            keep &= ~excluded[self._health.view[cand]]
        cand, sims = cand[keep], sims[keep]
        if k < len(cand):
            # the k best, plus everything tied with the k-th (ties break by id)
            kth = np.partition(-sims, k - 1)[k - 1]
            close = -sims <= kth
            cand, sims = cand[close], sims[close]
        order = sorted(range(len(cand)), key=lambda i: (-sims[i], self._memories[cand[i]].id))
        return [(int(cand[i]), float(sims[i])) for i in order[:k]]

    def stored_vectors(self, root: Path) -> tuple[str, dict[str, list[float]]] | None:
        """The vectors a vault root ships, loaded once."""
        key = str(root)
        if key not in self._vectors:
            self._vectors[key] = load_stored_vectors(root)
        return self._vectors[key]

    def has_vectors(self, memory: Memory) -> bool:
        vecs = self.stored_vectors(memory.vault_root)
        return vecs is not None and memory.id in vecs[1]

    def _similar_by_vectors(self, row: int, k: int, include_inactive: bool) -> list[Hit]:
        m = self._memories[row]
        own = self.stored_vectors(m.vault_root)
        if own is None or m.id not in own[1]:
            return []
        model, entries = own
        target = np.asarray(entries[m.id], dtype=np.float64)
        tnorm = float(np.linalg.norm(target))
        if tnorm == 0:
            return []
        rows: list[int] = []
        vecs: list[list[float]] = []
        for root in {str(mm.vault_root) for mm in self._memories}:
            other = self.stored_vectors(Path(root))
            if other is None or other[0] != model:
                continue
            for mid, vec in other[1].items():
                r = self._row_of.get((root, mid))
                if r is not None and len(vec) == len(target):
                    rows.append(r)
                    vecs.append(vec)
        if not rows:
            return []
        mat = np.asarray(vecs, dtype=np.float64)
        norms = np.linalg.norm(mat, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            sims = np.where(norms > 0, mat @ target / (norms * tnorm), 0.0)
        cand = np.asarray(rows, dtype=np.int64)
        out = []
        for other_row, sim in self._rank_similar(row, cand, sims, k, include_inactive):
            explain = {"method": "vectors", "model": model, "cosine": sim, "score": sim}
            out.append(Hit(self._memories[other_row], sim, explain))
        return out

    # --------------------------------------------------------- near duplicates

    def _doc_matrix(self, rows: Sequence[int]) -> Any:
        """The l2 rows of these documents as a CSR matrix (docs x terms).

        `rows` must be sorted (base rows come before delta rows).
        """
        import scipy.sparse as sp

        width = max(1, len(self._idf))
        parts = []
        base = [r for r in rows if r < self._n_base_rows]
        if base:
            x = sp.csr_matrix(
                (self._xt_data, self._xt_indices, self._xt_indptr),
                shape=(self._n_base_terms, self._n_base_rows),
            ).T.tocsr()
            x = sp.csr_matrix((x.data, x.indices, x.indptr), shape=(self._n_base_rows, width))
            parts.append(x[np.asarray(base, dtype=np.int64)])
        delta = [r for r in rows if r >= self._n_base_rows]
        if delta:
            indptr = [0]
            indices: list[int] = []
            data: list[float] = []
            for r in delta:
                ids, ws = self._delta_vec[r]
                indices.extend(ids)
                data.extend(ws)
                indptr.append(len(indices))
            parts.append(
                sp.csr_matrix(
                    (
                        np.asarray(data, dtype=np.float64),
                        np.asarray(indices, dtype=np.int64),
                        indptr,
                    ),
                    shape=(len(delta), width),
                )
            )
        return sp.vstack(parts).tocsr()

    def near_duplicates(
        self, threshold: float = 0.9, *, cross_vault_only: bool = False
    ) -> list[DuplicateGroup]:
        """Groups of memories with TF-IDF cosine >= threshold (any health).

        Candidate pairs come from each document's rare terms (a pair that
        shares none of them cannot reach the threshold: the common terms of
        a unit vector carry less than `threshold` of its norm), then every
        candidate pair's cosine is computed exactly.  The cost grows with the
        candidate pairs: ~0.3 s at 10k synthetic memories, about a minute at
        100k, so front ends run it on demand, in a worker.
        """
        rows = sorted(self._row_of.values())
        if len(rows) < 2:
            return []
        x = self._doc_matrix(rows)
        import scipy.sparse as sp

        # Each row's terms from most to least common; the common prefix whose
        # norm stays under the threshold is dropped, the rest is its signature.
        df = np.bincount(x.indices, minlength=x.shape[1])
        row_of_entry = np.repeat(np.arange(x.shape[0]), np.diff(x.indptr))
        perm = np.lexsort((-df[x.indices], row_of_entry))
        cs = np.cumsum(x.data[perm] ** 2)
        before = np.concatenate(([0.0], cs))[x.indptr[:-1]]
        cum = cs - before[row_of_entry[perm]]
        # a hair below threshold² so float rounding can only add candidates
        in_sig = cum >= threshold * threshold * (1 - 1e-9)
        sig = sp.csr_matrix(
            (
                np.ones(int(in_sig.sum())),
                (row_of_entry[perm][in_sig], x.indices[perm][in_sig]),
            ),
            shape=x.shape,
        )
        binary = x.copy()
        binary.data[:] = 1.0
        pairs_m = sp.triu(sig @ binary.T, k=1).tocoo()
        pi, pj = pairs_m.row, pairs_m.col
        if not len(pi):
            return []
        # exact cosine of every candidate pair, in chunks to bound memory
        chunk = 500_000
        sims = np.concatenate(
            [
                np.asarray(x[pi[a:b]].multiply(x[pj[a:b]]).sum(axis=1)).ravel()
                for a, b in ((a, min(a + chunk, len(pi))) for a in range(0, len(pi), chunk))
            ]
        )
        keep = sims >= threshold - 1e-12
        parent = list(range(len(rows)))

        def find(a: int) -> int:
            while parent[a] != a:
                parent[a] = parent[parent[a]]
                a = parent[a]
            return a

        found: list[tuple[int, int, float]] = []
        for a, b, s in zip(pi[keep], pj[keep], sims[keep], strict=True):
            found.append((int(a), int(b), float(s)))
            ra, rb = find(int(a)), find(int(b))
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
        groups: dict[int, list[int]] = {}
        for a, b, _ in found:
            for i in (a, b):
                members = groups.setdefault(find(i), [])
                if i not in members:
                    members.append(i)
        out: list[DuplicateGroup] = []
        for members in groups.values():
            members.sort(
                key=lambda i: (str(self._memories[rows[i]].vault_root), self._memories[rows[i]].id)
            )
            pos = {i: p for p, i in enumerate(members)}
            mems = tuple(self._memories[rows[i]] for i in members)
            pairs = tuple(
                (min(pos[a], pos[b]), max(pos[a], pos[b]), s) for a, b, s in found if a in pos
            )
            group = DuplicateGroup(mems, tuple(sorted(pairs)))
            if group.cross_vault or not cross_vault_only:
                out.append(group)
        out.sort(key=lambda g: (-len(g.memories), str(g.memories[0].vault_root), g.memories[0].id))
        return out
