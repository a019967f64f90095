"""Each row's title words and tags, kept so an update renumbers them without re-analysing.

Fuzzy title matching breaks ties by the order words were first seen in a
fresh build (catalog order, then each title's own order): after a change,
the persisted index must number them as a build would.  Analysing 100k
titles again takes a second; so the persisted index keeps, per row, the ids
of its distinct title words (and lower-cased tags) in a vocabulary that only
grows, and an update only analyses its new rows' titles, then renumbers
every word by first appearance over the rows in catalog order: numpy work
on a few hundred thousand ids.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from ..model import Memory
from .aliases import IntArray
from .analysis import analyze


def heads(m: Memory) -> tuple[list[str], list[str]]:
    """A memory's distinct title (and tag) words and its distinct lower-cased tags, as a fit
    counts them (`fit.Counted.count`), in their order."""
    head = analyze(m.title)
    tags: list[str] = []
    if m.tags:
        head += analyze(" ".join(m.tags))
        tags = list(dict.fromkeys([t.lower() for t in m.tags]))
    return list(dict.fromkeys(head)), tags


@dataclass(slots=True)
class SlotWords:
    """Per row, ids (into `vocab`) of its words; rows one after another."""

    vocab: list[str] = field(default_factory=list)
    ids: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    lens: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))

    def extend(self, rows: Iterable[list[str]]) -> None:
        """Append rows (the next slots, in order)."""
        known = {w: i for i, w in enumerate(self.vocab)}
        ids: list[int] = []
        lens: list[int] = []
        for words in rows:
            for w in words:
                i = known.get(w)
                if i is None:
                    i = known[w] = len(self.vocab)
                    self.vocab.append(w)
                ids.append(i)
            lens.append(len(words))
        self.ids = np.concatenate([self.ids, np.asarray(ids, dtype=np.int32)])
        self.lens = np.concatenate([self.lens, np.asarray(lens, dtype=np.int32)])

    def postings(self, order: IntArray) -> tuple[list[str], IntArray, IntArray]:
        """(words in first-seen order over rows `order`, their rows, bounds): `Postings.pack`'s
        arguments, rows ascending within each word, numbered as a fit over `order` numbers them."""
        starts = np.zeros(len(self.lens) + 1, dtype=np.int64)
        np.cumsum(self.lens, out=starts[1:])
        lens = self.lens[order].astype(np.int64)
        run_start = starts[:-1][order]
        # Position in `ids` of every element of the rows taken in `order`.
        offset = np.cumsum(lens) - lens
        seq = self.ids[np.repeat(run_start - offset, lens) + np.arange(int(lens.sum()))]
        uniq, first = np.unique(seq, return_index=True)
        by_first = uniq[np.argsort(first, kind="stable")]
        remap = np.full(len(self.vocab), -1, dtype=np.int64)
        remap[by_first] = np.arange(len(by_first))
        word = remap[seq]
        position = np.repeat(np.arange(len(order), dtype=np.int64), lens)
        slots = np.asarray(order, dtype=np.int64)[position]
        # By word, then slot (a fit's rows are ascending; slots are sorted too).
        by = np.lexsort((slots, word))
        bounds = np.zeros(len(by_first) + 1, dtype=np.int64)
        np.cumsum(np.bincount(word, minlength=len(by_first)), out=bounds[1:])
        keys = [self.vocab[v] for v in by_first.tolist()]
        return keys, slots[by].astype(np.int32), bounds

    def to_meta(self, name: str) -> dict[str, bytes]:
        return {
            f"{name}:vocab": json.dumps(self.vocab).encode(),
            f"{name}:ids": self.ids.astype(np.int32).tobytes(),
            f"{name}:lens": self.lens.astype(np.int32).tobytes(),
        }

    @classmethod
    def from_meta(cls, meta: dict[str, bytes], name: str) -> SlotWords:
        return cls(
            json.loads(meta[f"{name}:vocab"]),
            np.frombuffer(meta[f"{name}:ids"], dtype=np.int32),
            np.frombuffer(meta[f"{name}:lens"], dtype=np.int32),
        )
