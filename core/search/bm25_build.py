"""The relevance index of many memories built in bulk, half of it in a worker.

`bm25.build_source` gives the same postings as summing `bm25.doc_terms` row
by row, without a Python step per word of every memory: per row and field
only the distinct words and their counts are collected (in C: `Counter`,
`map`) into flat arrays (`Collected`), each distinct word of the vault is
stemmed once, and the weighted sums per (term, row) are one sort (`finish`).

Collecting is most of the time (8.4 s of a 100k-memory build, single
process), so above `PARALLEL_MIN` rows, with a second CPU idle, a parse
worker collects the later half of the rows (`collect_terms`) while this
process collects the first; its words are merged in its first-seen order
after this process's own, so word and term ids (and so term order) are
what one process collecting every row in order gives.
"""

from __future__ import annotations

import os
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import workers
from .aliases import IntArray
from .analysis import words
from .stemming import term_of

#: Below this many live rows a worker costs more than it saves.
PARALLEL_MIN = 20_000

#: Bits of a capped count packed below its (term, row) key for one sort.
_VALUE_BITS = 16

#: One row's text per field (title, tags, format fields, body).
FieldTexts = tuple[str, ...]


class _WordIds(dict[str, int]):
    """Word -> id, a new word getting the next id (ids in first-seen order)."""

    def __missing__(self, word: str) -> int:
        n = self[word] = len(self)
        return n


class Collected:
    """Distinct words per (row, field) with their counts, as flat arrays."""

    def __init__(self, weights2: Sequence[int]) -> None:
        self.weights2 = tuple(weights2)
        self.ids = _WordIds()
        self.word_of_entry: array[int] = array("i")  # per (row, field, distinct word): word id
        self.count_of_entry: array[int] = array("i")  # ... and its count there
        self.seg_row: array[int] = array("i")  # per (row, field) with words: the row
        self.seg_weight: array[int] = array("i")  # ... the field's doubled weight
        self.seg_len: array[int] = array("q")  # ... how many distinct words

    def collect(self, rows: Iterable[int], texts: Iterable[FieldTexts]) -> None:
        """Add each row's field texts, rows in the order given."""
        lookup = self.ids.__getitem__
        for row, fields in zip(rows, texts, strict=True):
            for text, weight2 in zip(fields, self.weights2, strict=True):
                if not text:
                    continue
                counts = Counter(words(text.lower()))
                if not counts:
                    continue
                self.word_of_entry.extend(map(lookup, counts))
                self.count_of_entry.extend(counts.values())
                self.seg_row.append(row)
                self.seg_weight.append(weight2)
                self.seg_len.append(len(counts))

    def export(self) -> tuple[Any, ...]:
        """What `merge` takes (what a worker answers): words in id order and the arrays."""
        return (
            list(self.ids),
            self.word_of_entry,
            self.count_of_entry,
            self.seg_row,
            self.seg_weight,
            self.seg_len,
        )

    def merge(self, got: tuple[Any, ...]) -> None:
        """Append rows collected elsewhere (after every row collected here)."""
        names, word_of_entry, count_of_entry, seg_row, seg_weight, seg_len = got
        # Their word id -> id here, in their first-seen order: new words get
        # the ids collecting their rows here would have given.
        remap = np.fromiter(map(self.ids.__getitem__, names), dtype=np.int32, count=len(names))
        local = np.frombuffer(word_of_entry, dtype=np.int32)
        self.word_of_entry.frombytes(remap.take(local).astype(np.int32).tobytes())
        self.count_of_entry.extend(count_of_entry)
        self.seg_row.extend(seg_row)
        self.seg_weight.extend(seg_weight)
        self.seg_len.extend(seg_len)


@dataclass(slots=True)
class Built:
    """Terms in first-seen order, CSR postings by term (rows ascending), words, lengths."""

    terms: list[str]
    indptr: IntArray
    rows: IntArray
    tf2: IntArray
    surface: dict[str, str]
    dl2: IntArray


def finish(c: Collected, n: int, tf2_max: int) -> Built:
    """Stem each distinct word once and sum the weighted counts per (term, row).

    Consumes `c`'s per-entry arrays (they are emptied as they are used).

    Kept lean: int32 per entry wherever the values fit and one int64 key
    array sorted in place (12M entries at 100k memories: each int64 array
    is 96 MB, and the first version of this peaked ~700 MB higher).
    """
    terms, surface, word_term = _terms(c)
    ids = np.frombuffer(c.word_of_entry, dtype=np.int32) if c.word_of_entry else _none()
    entry_term = word_term.take(ids)
    del ids
    c.word_of_entry = array("i")  # consumed: its 4 bytes an entry are free again
    seg_len = np.frombuffer(c.seg_len, dtype=np.int64) if c.seg_len else np.zeros(0, np.int64)
    seg_row = np.frombuffer(c.seg_row, dtype=np.int32) if c.seg_row else _none()
    seg_weight = np.frombuffer(c.seg_weight, dtype=np.int32) if c.seg_weight else _none()
    counts = np.frombuffer(c.count_of_entry, dtype=np.int32) if c.count_of_entry else _none()
    counted = entry_term >= 0  # stopwords and single characters count for nothing
    dl2 = _lengths(np.where(counted, counts, 0), seg_len, seg_row, seg_weight, n)
    # Each count capped before it is weighted and summed: the capped sum is
    # the same once capped again, and every value fits in int32 (and 16 bits).
    value = np.minimum(counts, tf2_max)
    del counts
    c.count_of_entry = array("i")  # consumed too
    value *= np.repeat(seg_weight, seg_len)
    value = np.minimum(value[counted], tf2_max)
    width = max(n, 1)
    key = entry_term[counted].astype(np.int64)
    del entry_term
    key *= width
    key += np.repeat(seg_row, seg_len)[counted]  # term-major, rows ascending within a term
    del counted
    if tf2_max < 1 << _VALUE_BITS and len(terms) * width < 1 << (63 - _VALUE_BITS):
        # Value and key in one int64, sorted in place: 0.2 s for 12M pairs
        # where a stable argsort and two gathers took 1.7 s.
        key <<= _VALUE_BITS
        key |= value
        del value
        key.sort()
        summed = np.empty(len(key), dtype=np.int32)
        np.bitwise_and(key, (1 << _VALUE_BITS) - 1, out=summed, casting="unsafe")
        key >>= _VALUE_BITS
    else:
        order = np.argsort(key, kind="stable")
        key, summed = key[order], value[order]
    starts = np.flatnonzero(np.diff(key, prepend=-1))
    tf2 = (
        np.minimum(np.add.reduceat(summed, starts, dtype=np.int64), tf2_max)
        if len(key)
        else summed.astype(np.int64)
    )
    first = key[starts]
    indptr = np.zeros(len(terms) + 1, dtype=np.int64)
    np.cumsum(np.bincount(first // width, minlength=len(terms)), out=indptr[1:])
    rows = (first % width).astype(np.int32)
    return Built(terms, indptr, rows, tf2, surface, dl2)


def _terms(c: Collected) -> tuple[list[str], dict[str, str], IntArray]:
    """Terms in first-seen order, word -> term, and each word id's term id (-1: none)."""
    terms: list[str] = []
    term_ids: dict[str, int] = {}
    surface: dict[str, str] = {}
    word_term = np.empty(len(c.ids), dtype=np.int32)
    for word, wid in c.ids.items():  # ids in first-seen order: so are the terms
        t = term_of(word)
        if t is None:
            word_term[wid] = -1
            continue
        tid = term_ids.get(t)
        if tid is None:
            tid = term_ids[t] = len(terms)
            terms.append(t)
        word_term[wid] = tid
        surface[word] = t
    return terms, surface, word_term


def _lengths(
    counts: IntArray, seg_len: IntArray, seg_row: IntArray, seg_weight: IntArray, n: int
) -> IntArray:
    """Each row's doubled weighted length: its counted words, summed per field and weighed."""
    if not len(seg_len):
        return np.zeros(n, dtype=np.int64)
    starts = np.zeros(len(seg_len), dtype=np.int64)
    np.cumsum(seg_len[:-1], out=starts[1:])
    per_field = np.add.reduceat(counts, starts, dtype=np.int64)  # no field is empty
    weighed = (per_field * seg_weight).astype(np.float64)  # exact: far below 2**53
    return np.bincount(seg_row, weights=weighed, minlength=n).astype(np.int64)


def _none() -> IntArray:
    return np.zeros(0, dtype=np.int32)


def collect_terms(weights2: Sequence[int], rows: list[int], texts: list[FieldTexts]) -> Any:
    """`Collected.collect` of these rows from scratch, exported (what a parse worker runs)."""
    c = Collected(weights2)
    c.collect(rows, texts)
    return c.export()


def collect_split(
    weights2: Sequence[int],
    live: Sequence[int],
    texts_of: Callable[[int], FieldTexts],
) -> Collected:
    """Collect the `live` rows, the later half in a worker when that pays."""
    c = Collected(weights2)
    wait = None
    half = len(live)
    if (
        len(live) >= PARALLEL_MIN
        and os.environ.get(workers.PARALLEL_ENV, "1") != "0"
        and workers.spare_cpu()
    ):
        half = len(live) // 2
        rest = list(live[half:])
        wait = workers.run_in_worker(
            ("collect_terms", tuple(weights2), rest, [texts_of(r) for r in rest])
        )
        if wait is None:
            half = len(live)
    try:
        c.collect(live[:half], map(texts_of, live[:half]))
    finally:
        got = wait() if wait is not None else None
    if half < len(live):
        if got is None:  # the worker failed: collect them here
            c.collect(live[half:], map(texts_of, live[half:]))
        else:
            c.merge(got)
    return c


__all__ = ["PARALLEL_MIN", "Built", "Collected", "collect_split", "collect_terms", "finish"]
