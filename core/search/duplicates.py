"""Near duplicates: groups of memories whose TF-IDF cosine reaches a threshold.

Candidate pairs come from each document's rare terms (a pair that shares
none of them cannot reach the threshold: the common terms of a unit vector
carry less than `threshold` of its norm), then every candidate pair's
cosine is computed exactly.  The cost grows with the candidate pairs:
~0.3 s at 10k synthetic memories, about a minute at 100k, so front ends run
it on demand, in a worker.  scipy is imported on first use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..model import Memory
from .aliases import FloatArray, IntArray
from .postings import TermPostings

Pair = tuple[int, int, float]


@dataclass(frozen=True, slots=True)
class DuplicateGroup:
    """Memories whose texts are near-identical (TF-IDF cosine >= threshold)."""

    memories: tuple[Memory, ...]
    #: (i, j, cosine) pairs over `memories` that met the threshold.
    pairs: tuple[Pair, ...]

    @property
    def cross_vault(self) -> bool:
        return len({str(m.vault_root) for m in self.memories}) > 1


def doc_matrix(terms: TermPostings, rows: Sequence[int]) -> Any:
    """The l2 rows of these documents as a CSR matrix (docs x terms).

    `rows` must be sorted (base rows come before delta rows).
    """
    import scipy.sparse as sp

    width = max(1, len(terms.idf))
    parts = []
    base = [r for r in rows if r < terms.n_base_rows]
    if base:
        x = sp.csr_matrix(
            (terms.base_weights(), terms.xt_indices, terms.xt_indptr),
            shape=(terms.n_base_terms, terms.n_base_rows),
        ).T.tocsr()
        x = sp.csr_matrix((x.data, x.indices, x.indptr), shape=(terms.n_base_rows, width))
        parts.append(x[np.asarray(base, dtype=np.int64)])
    delta = [r for r in rows if r >= terms.n_base_rows]
    if delta:
        indptr = [0]
        indices: list[int] = []
        data: list[float] = []
        for r in delta:
            ids, ws = terms.delta_vec[r]
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
    memories: list[Memory],
    terms: TermPostings,
    rows: list[int],
    threshold: float,
    cross_vault_only: bool,
) -> list[DuplicateGroup]:
    """Groups of the memories at `rows` (sorted) with TF-IDF cosine >= threshold."""
    if len(rows) < 2:
        return []
    x = doc_matrix(terms, rows)
    pi, pj = _candidate_pairs(x, threshold)
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
    found: list[Pair] = [
        (int(a), int(b), float(s)) for a, b, s in zip(pi[keep], pj[keep], sims[keep], strict=True)
    ]
    out: list[DuplicateGroup] = []
    for members in _connected(len(rows), found):
        members.sort(key=lambda i: (str(memories[rows[i]].vault_root), memories[rows[i]].id))
        pos = {i: p for p, i in enumerate(members)}
        mems = tuple(memories[rows[i]] for i in members)
        pairs = tuple(
            (min(pos[a], pos[b]), max(pos[a], pos[b]), s) for a, b, s in found if a in pos
        )
        group = DuplicateGroup(mems, tuple(sorted(pairs)))
        if group.cross_vault or not cross_vault_only:
            out.append(group)
    out.sort(key=lambda g: (-len(g.memories), str(g.memories[0].vault_root), g.memories[0].id))
    return out


def _candidate_pairs(x: Any, threshold: float) -> tuple[IntArray, IntArray]:
    """(i, j) with i < j of the rows of `x` sharing a signature term."""
    import scipy.sparse as sp

    # Each row's terms from most to least common; the common prefix whose
    # norm stays under the threshold is dropped, the rest is its signature.
    df = np.bincount(x.indices, minlength=x.shape[1])
    row_of_entry = np.repeat(np.arange(x.shape[0]), np.diff(x.indptr))
    perm = np.lexsort((-df[x.indices], row_of_entry))
    cs: FloatArray = np.cumsum(x.data[perm] ** 2)
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
    return pairs_m.row, pairs_m.col


def _connected(n: int, found: list[Pair]) -> list[list[int]]:
    """The groups the pairs join (union-find), members in first-met order."""
    parent = list(range(n))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for a, b, _ in found:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[int, list[int]] = {}
    for a, b, _ in found:
        for i in (a, b):
            members = groups.setdefault(find(i), [])
            if i not in members:
                members.append(i)
    return list(groups.values())
