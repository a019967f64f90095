"""Where two versions of a file differ, and one version rebuilt from the other.

Why: a Dream Cycle section or a JSON Lines record has no history of its
own in git, so its first read inflates every version of its file (3,000
versions of a 50 KB file on the 10,000-commit benchmark): most of that
read's cost.  Consecutive versions share almost all their bytes, so that
read also keeps, per version, only what differs from the version after it
(`diff`: a few hundred bytes where a section was appended or edited) and
the newest version whole.  Every other memory of the file is then read by
rebuilding each version from the newer one (`apply`: slices joined in C)
and extracting the memory from it with its format's `history_extract`, as
from git: no blob is read again, and the result is the same bytes.

`diff(new, old)` finds the shared prefix and suffix (memcmp through
`startswith` on a view: no copy), then cuts what is left in two at a block
both sides hold, a few times: a decay run that drops the first section
while another is appended at the end differs at both ends, and one window
would copy the whole file.
"""

from __future__ import annotations

import struct

#: Bytes compared at once when looking for the first differing byte.
_BLOCK = 4096
#: A differing stretch at least this long on both sides is searched for a shared block.
_ANCHOR_MIN = 512
#: The bytes taken from the stretch of `old` as that block's probe.
_PROBE = 48
#: How many times a differing stretch is cut in two at a shared block.
_DEPTH = 8
#: One edit's header: where in `new` (start, end) and how long its replacement.
_EDIT = struct.Struct("<III")

#: One edit: replace new[start:end] by these bytes.
Edit = tuple[int, int, bytes]


def common_prefix(a: bytes, b: bytes) -> int:
    """How many leading bytes `a` and `b` share."""
    return _prefix(a, b, 0, 0, min(len(a), len(b)))


def common_suffix(a: bytes, b: bytes, limit: int) -> int:
    """How many trailing bytes `a` and `b` share, at most `limit`."""
    return _suffix(a, b, len(a), len(b), min(len(a), len(b), limit))


def _prefix(a: bytes, b: bytes, ao: int, bo: int, n: int) -> int:
    """The shared prefix of a[ao:ao+n] and b[bo:bo+n]: galloping, then halving."""
    view = memoryview(b)
    lo, step = 0, _BLOCK
    while lo < n:
        hi = min(n, lo + step)
        if not a.startswith(view[bo + lo : bo + hi], ao + lo):
            break
        lo, step = hi, step * 2
    else:
        return n
    while hi - lo > 1:  # the first lo bytes are shared, the first hi are not
        mid = (lo + hi) // 2
        if a.startswith(view[bo + lo : bo + mid], ao + lo):
            lo = mid
        else:
            hi = mid
    return lo


def _suffix(a: bytes, b: bytes, ae: int, be: int, n: int) -> int:
    """The shared suffix of a[:ae] and b[:be], at most `n` bytes."""
    view = memoryview(b)
    lo, step = 0, _BLOCK
    while lo < n:
        hi = min(n, lo + step)
        if not a.startswith(view[be - hi : be - lo], ae - hi):
            break
        lo, step = hi, step * 2
    else:
        return n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a.startswith(view[be - mid : be - lo], ae - mid):
            lo = mid
        else:
            hi = mid
    return lo


def diff(new: bytes, old: bytes) -> list[Edit]:
    """Edits that turn `new` into `old`, in order and apart: `apply(new, diff(new, old)) == old`."""
    edits: list[Edit] = []
    if new != old:
        _split(new, old, 0, len(new), 0, len(old), edits, _DEPTH)
    return edits


def _split(
    a: bytes, b: bytes, alo: int, ahi: int, blo: int, bhi: int, out: list[Edit], depth: int
) -> None:
    """Edits turning a[alo:ahi] into b[blo:bhi]: shared ends kept, the rest cut at shared blocks."""
    n = min(ahi - alo, bhi - blo)
    p = _prefix(a, b, alo, blo, n)
    s = _suffix(a, b, ahi, bhi, n - p)
    alo, ahi, blo, bhi = alo + p, ahi - s, blo + p, bhi - s
    if alo == ahi and blo == bhi:
        return
    if depth > 0 and ahi - alo >= _ANCHOR_MIN and bhi - blo >= _ANCHOR_MIN:
        for eighth in (4, 2, 6, 1, 7):  # the middle first; a probe may fall in an edit
            mid = blo + (bhi - blo) * eighth // 8
            at = a.find(b[mid : mid + _PROBE], alo, ahi)
            if at >= 0:
                _split(a, b, alo, at, blo, mid, out, depth - 1)
                _split(a, b, at, ahi, mid, bhi, out, depth - 1)
                return
    out.append((alo, ahi, b[blo:bhi]))


def apply(new: bytes, edits: list[Edit]) -> bytes:
    """`new` with each edit's stretch replaced (ValueError when the edits do not fit it)."""
    pieces: list[bytes | memoryview] = []
    at = 0
    view = memoryview(new)
    for start, end, text in edits:
        if not at <= start <= end <= len(new):
            raise ValueError("an edit outside the version it applies to")
        pieces.append(view[at:start])
        pieces.append(text)
        at = end
    pieces.append(view[at:])
    return b"".join(pieces)


def encode(edits: list[Edit]) -> bytes:
    """Edits as bytes: per edit, start, end and length (little-endian u32), then the bytes."""
    return b"".join(_EDIT.pack(s, e, len(t)) + t for s, e, t in edits)


def decode(data: bytes) -> list[Edit]:
    """`encode` read back; ValueError when it is damaged."""
    edits: list[Edit] = []
    at = 0
    while at < len(data):
        if at + _EDIT.size > len(data):
            raise ValueError("a truncated edit")
        start, end, size = _EDIT.unpack_from(data, at)
        at += _EDIT.size
        if at + size > len(data):
            raise ValueError("a truncated edit")
        edits.append((start, end, data[at : at + size]))
        at += size
    return edits


__all__ = ["Edit", "apply", "common_prefix", "common_suffix", "decode", "diff", "encode"]
