"""Meaning vectors packed for scoring: int16 codes with one float32 scale per row.

Why: every relevance query (each keystroke in the app, each `memlens
search`) takes the cosine of the query with every row.  The index kept
float16 rows, and numpy converts float16 to float32 with no SIMD: at 100k
rows x 256 dimensions that conversion alone took ~68 ms a query, against
~14 ms for int16 codes (measured on the 2-core machine).  Row ``i`` is
``codes[i] * scales[i]`` with ``scales[i] = max|v_i| / 32767``: the same
two bytes a value as float16, and a finer grid (cosines move by under
1e-5, against 6e-5 for float16 on random unit vectors).

Every vector is packed from its float16 rounding (the precision the
per-text `embeddings.VectorStore` keeps), so a row packed from a vector
just computed equals one packed from the same vector read back.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

DIM = 256
_LEVELS = 32767
#: Rows converted at once when scoring (bounds the float32 block a query makes).
_SCORE_BLOCK = 8192

Codes = npt.NDArray[np.int16]
Scales = npt.NDArray[np.float32]
Floats = npt.NDArray[np.float32]


@dataclass(slots=True)
class PackedVectors:
    """Rows of unit vectors (zero rows for rows with none), packed as int16 codes and scales."""

    codes: Codes
    scales: Scales

    @classmethod
    def zeros(cls, n: int) -> PackedVectors:
        return cls(np.zeros((n, DIM), dtype=np.int16), np.zeros(n, dtype=np.float32))

    @classmethod
    def pack(cls, vectors: npt.ArrayLike) -> PackedVectors:
        """Pack float rows (rounded to float16 first: see the module docstring)."""
        rows = np.asarray(vectors, dtype=np.float32).reshape(-1, DIM)
        rows = rows.astype(np.float16).astype(np.float32)
        peak = np.abs(rows).max(axis=1) if len(rows) else np.zeros(0, dtype=np.float32)
        scales = (peak / np.float32(_LEVELS)).astype(np.float32)
        safe = np.where(scales > 0, scales, np.float32(1))
        codes = np.rint(rows / safe[:, None])
        return cls(np.clip(codes, -_LEVELS, _LEVELS).astype(np.int16), scales)

    def __len__(self) -> int:
        return len(self.scales)

    def rows(self, which: npt.ArrayLike) -> Floats:
        """The float32 vectors of these rows (an index array or a slice's rows)."""
        idx = np.asarray(which, dtype=np.int64)
        out: Floats = self.codes[idx].astype(np.float32)
        np.multiply(out, self.scales[idx, None], out=out)
        return out

    def row(self, i: int) -> Floats:
        out: Floats = self.codes[i].astype(np.float32)
        np.multiply(out, self.scales[i], out=out)
        return out

    def put(self, which: npt.ArrayLike, vectors: npt.ArrayLike) -> None:
        """Set these rows to the packing of `vectors`."""
        idx = np.asarray(which, dtype=np.int64)
        packed = PackedVectors.pack(vectors)
        self.codes[idx] = packed.codes
        self.scales[idx] = packed.scales

    def resized(self, n: int) -> PackedVectors:
        """A copy with `n` rows: cut, or grown with zero rows."""
        out = PackedVectors.zeros(n)
        keep = min(n, len(self))
        out.codes[:keep] = self.codes[:keep]
        out.scales[:keep] = self.scales[:keep]
        return out

    def scores(self, vector: npt.ArrayLike, n: int) -> npt.NDArray[np.float64]:
        """The dot product of every row (first `n`; zero past the kept rows) with `vector`."""
        q = np.asarray(vector, dtype=np.float32).reshape(DIM)
        sims = np.zeros(n, dtype=np.float64)
        top = min(n, len(self))
        block = np.empty((min(_SCORE_BLOCK, max(top, 1)), DIM), dtype=np.float32)
        for lo in range(0, top, _SCORE_BLOCK):
            hi = min(top, lo + _SCORE_BLOCK)
            buf = block[: hi - lo]
            buf[...] = self.codes[lo:hi]
            sims[lo:hi] = (buf @ q) * self.scales[lo:hi]
        return sims

    def to_bytes(self, lo: int, hi: int) -> bytes:
        """Rows ``lo..hi-1`` as one blob: their codes, then their scales."""
        return (
            np.ascontiguousarray(self.codes[lo:hi]).tobytes()
            + np.ascontiguousarray(self.scales[lo:hi]).tobytes()
        )

    @staticmethod
    def from_bytes(blob: bytes) -> PackedVectors | None:
        """A `to_bytes` blob read back; None if its length fits no number of rows."""
        per_row = DIM * 2 + 4
        if len(blob) % per_row:
            return None
        n = len(blob) // per_row
        codes = np.frombuffer(blob, dtype=np.int16, count=n * DIM).reshape(n, DIM)
        scales = np.frombuffer(blob, dtype=np.float32, offset=n * DIM * 2, count=n)
        return PackedVectors(codes, scales)


__all__ = ["DIM", "PackedVectors"]
