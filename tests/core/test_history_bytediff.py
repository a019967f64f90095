"""Versions kept as edits (core/history/bytediff.py) rebuild exactly, and titles end at whitespace.

The history cache keeps each version of a shared file as the edits that
turn the version after it into it; a later memory of the file is read from
versions rebuilt with them, so `apply(new, diff(new, old))` must be `old`,
byte for byte, whatever the edit: insertions, deletions, both ends at
once, repeated text the shared-block search may match in the wrong place.
"""

from __future__ import annotations

import random

import pytest

from memlens.core.formats import history_parts
from memlens.core.formats.history_parts import section_bytes
from memlens.core.history.bytediff import (
    apply,
    common_prefix,
    common_suffix,
    decode,
    diff,
    encode,
)

LINES = [b"## Note %d\n", b"filler words %d\n", b"\n", b"## Same\n", b"text\r\n"]


def _version(rng: random.Random, size: int) -> list[bytes]:
    return [rng.choice(LINES).replace(b"%d", b"%d" % rng.randrange(50)) for _ in range(size)]


def _edited(rng: random.Random, lines: list[bytes]) -> list[bytes]:
    out = list(lines)
    for _ in range(rng.randint(1, 4)):
        roll = rng.random()
        at = rng.randint(0, len(out))
        if roll < 0.3:
            out[at:at] = _version(rng, rng.randint(1, 30))
        elif roll < 0.6:
            del out[at : at + rng.randint(1, 30)]
        elif roll < 0.8 and out:
            out = out[rng.randint(0, 5) :] + _version(rng, rng.randint(0, 5))  # a decay run
        elif out:
            out[min(at, len(out) - 1)] = b"changed %d\n" % rng.randrange(10**6)
    return out


@pytest.mark.parametrize("seed", range(400))
def test_diff_then_apply_rebuilds_the_old_version(seed: int) -> None:
    rng = random.Random(seed)
    lines = _version(rng, rng.choice([0, 5, 200, 1500]))
    newer = b"".join(lines)
    for _ in range(5):
        lines = _edited(rng, lines)
        older = b"".join(lines)
        edits = diff(newer, older)
        assert apply(newer, edits) == older
        assert decode(encode(edits)) == edits
        if newer == older:
            assert edits == []
        newer = older


def test_a_decay_run_and_an_append_keep_only_what_they_touched() -> None:
    """The oldest section dropped and one appended: two small edits, not the file between."""
    notes = [b"## Note %d\nfiller words %d\n" % (i, i * 7919) * 3 for i in range(400)]
    newer = b"# Observations\n\n" + b"".join(notes[1:]) + b"## Note new\nbody\n"
    older = b"# Observations\n\n" + b"".join(notes)
    edits = diff(newer, older)
    assert apply(newer, edits) == older
    assert len(encode(edits)) < 2 * len(notes[0]) + 64


def test_damaged_edits_are_refused() -> None:
    edits = encode(diff(b"abcdef" * 100, b"abcXef" * 100))
    with pytest.raises(ValueError):
        decode(edits[:-1] + b"\x00\x00")
    with pytest.raises(ValueError):
        apply(b"short", [(3, 99, b"x")])


@pytest.mark.parametrize("seed", range(200))
def test_common_prefix_and_suffix(seed: int) -> None:
    rng = random.Random(seed)
    base = bytes(rng.randrange(3) for _ in range(rng.randint(0, 20000)))
    cut = rng.randint(0, len(base))
    other = base[:cut] + bytes(rng.randrange(3) for _ in range(rng.randint(0, 50)))
    other += base[cut + rng.randint(0, 50) :]
    p = common_prefix(base, other)
    assert base[:p] == other[:p]
    assert p == min(len(base), len(other)) or base[p] != other[p]
    limit = min(len(base), len(other)) - p
    s = common_suffix(base, other, limit)
    assert s <= limit and base[len(base) - s :] == other[len(other) - s :]
    assert s == limit or base[len(base) - s - 1] != other[len(other) - s - 1]


def test_a_title_is_ended_by_any_whitespace_strip_removes() -> None:
    """`title_sections` skips a hit followed by a byte no whitespace starts with: none is missed."""
    missed = [
        c
        for c in range(0x110000)
        if chr(c).strip() == ""
        and chr(c).encode("utf-8", "surrogatepass")[:1] not in history_parts._SPACE_LEADS
    ]
    assert missed == []
    data = "## Note 10\nten\n## Note 1\u00a0\none\n".encode()
    assert section_bytes(data, "Note 1") == "## Note 1\u00a0\none\n".encode()
    assert section_bytes(data, "Note 10") == b"## Note 10\nten\n"


def test_a_title_that_starts_like_the_heading_marker_is_found() -> None:
    assert section_bytes(b"## # hash\nbody\n## Next\n", "# hash") == b"## # hash\nbody\n"
