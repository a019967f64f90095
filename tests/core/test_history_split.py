"""Splitters (core/formats/history_split.py) agree with the formats' `history_extract`.

The history cache keeps, per version of a shared file, only the memories
`changed` names, and every memory of a version `parts` found: each must
give exactly the bytes `history_extract` gives, or a cached history would
differ from git's.  Random edits of a Dream Cycle file and of JSON Lines
files (insertions, deletions, repeated headings, CRLF, BOM, headings that
are not UTF-8, lines that are not JSON) check it.
"""

from __future__ import annotations

import json
import random

import pytest

from memlens.core.formats import adapter_for, history_parts
from memlens.core.formats.adapter import HistoryScope
from memlens.core.formats.history_parts import section_bytes
from memlens.core.formats.history_split import (
    HistorySplitter,
    RecordSplitter,
    SectionSplitter,
    common_prefix,
    common_suffix,
    section_key,
)

DREAM = "dream-cycle"
EXP = "experience-records"

TITLES = ["Alpha", "Beta", "Same", "Same", "Ünïcode title", "  Padded  ", "# hash", "Alpha beta"]


def _section(rng: random.Random) -> bytes:
    title = rng.choice(TITLES)
    eol = b"\r\n" if rng.random() < 0.1 else b"\n"
    head = b"## " + title.encode() + (b" " if rng.random() < 0.1 else b"") + eol
    if rng.random() < 0.05:
        head = b"## Bad \xff title" + eol
    body = rng.choice([b"", b"text about Same\n", b"Alpha\n\n", b"## \n", b"more words\n"])
    return head + body * rng.randint(0, 3)


def _markdown(rng: random.Random) -> list[bytes]:
    return [_section(rng) for _ in range(rng.randint(0, 8))]


def _record(rng: random.Random) -> bytes:
    rid = rng.choice(["a", "b", "c", "exp_1", "\u00e9t\u00e9"])
    kind = rng.random()
    if kind < 0.1:
        return b"not json " + rid.encode()
    if kind < 0.2:
        return json.dumps({"other": rid}).encode()
    obj: dict[str, object] = {"id": rid, "v": rng.randint(0, 3)}
    if rng.random() < 0.2:
        obj["restored"] = True
    line = json.dumps(obj, ensure_ascii=rng.random() < 0.5).encode()
    return line + (b"\r" if rng.random() < 0.1 else b"")


def _jsonl(rng: random.Random) -> list[bytes]:
    return [_record(rng) + b"\n" for _ in range(rng.randint(0, 8))]


def _edit(rng: random.Random, units: list[bytes], make: object) -> list[bytes]:
    out = list(units)
    for _ in range(rng.randint(1, 3)):
        roll = rng.random()
        if roll < 0.4 or not out:
            out.insert(rng.randint(0, len(out)), make(rng))  # type: ignore[operator]
        elif roll < 0.7:
            out.pop(rng.randrange(len(out)))
        else:
            out[rng.randrange(len(out))] = make(rng)  # type: ignore[operator]
    return out


def _joined(rng: random.Random, units: list[bytes], prefix: bytes) -> bytes:
    bom = b"\xef\xbb\xbf" if rng.random() < 0.1 else b""
    return bom + prefix + b"".join(units)


def _check(
    splitter: HistorySplitter, extract: object, scopes: list[HistoryScope], old: bytes, new: bytes
) -> None:
    delta = splitter.delta(old, new)
    changed = set(delta)
    for key, part in delta.items():
        assert part == splitter.part(new, key)
    for data in (old, new):
        parts = splitter.parts(data)
        for scope in scopes:
            key = splitter.key(scope)
            want = extract(scope, data)  # type: ignore[operator]
            assert splitter.part(data, key) == want
            assert parts.get(key) == want, (key, data)
    for scope in scopes:
        key = splitter.key(scope)
        if extract(scope, old) != extract(scope, new):  # type: ignore[operator]
            assert key in changed, (key, old, new)


def _section_scopes() -> list[HistoryScope]:
    titles = {t.strip() for t in TITLES} | {"Bad \ufffd title"}
    return [
        HistoryScope("observations.md", whole_file=False, key=t, occurrence=n)
        for t in sorted(titles)
        for n in (1, 2, 3)
    ]


@pytest.mark.parametrize("seed", range(300))
def test_sections_split_as_history_extract(seed: int) -> None:
    rng = random.Random(seed)
    adapter = adapter_for(DREAM)
    scopes = _section_scopes()
    splitter = adapter.history_splitter(scopes[0])
    assert isinstance(splitter, SectionSplitter)
    units = _markdown(rng)
    prefix = rng.choice([b"", b"# Observations\n\n", b"intro ## not a heading\n"])
    old = _joined(rng, units, prefix)
    for _ in range(4):
        units = _edit(rng, units, _section)
        new = _joined(rng, units, prefix) if rng.random() < 0.9 else old
        _check(splitter, adapter.history_extract, scopes, old, new)
        old = new


@pytest.mark.parametrize("seed", range(60))
def test_long_files_edited_at_both_ends_and_inside(seed: int) -> None:
    """Files long enough for the windows to be cut at shared blocks (several windows)."""
    rng = random.Random(seed)
    adapter = adapter_for(DREAM)
    scopes = _section_scopes()
    splitter = adapter.history_splitter(scopes[0])
    assert splitter is not None
    units = [
        b"## Note %d\n" % i + b"filler words %d\n" % rng.randrange(10**6) * 4 for i in range(60)
    ]
    old = b"# Observations\n\n" + b"".join(units)
    for _ in range(4):
        units = units[rng.randint(0, 2) :]  # the oldest dropped (a decay run)
        for _ in range(rng.randint(0, 3)):  # others edited, added, removed inside
            units = _edit(rng, units, _section)
        units.append(_section(rng))  # one appended
        new = b"# Observations\n\n" + b"".join(units)
        _check(splitter, adapter.history_extract, scopes, old, new)
        old = new


@pytest.mark.parametrize("seed", range(300))
@pytest.mark.parametrize("fmt, path", [(EXP, "experiences.jsonl"), (DREAM, "archive.jsonl")])
def test_records_split_as_history_extract(seed: int, fmt: str, path: str) -> None:
    rng = random.Random(seed)
    adapter = adapter_for(fmt)
    ids = ["a", "b", "c", "exp_1", "\u00e9t\u00e9", "zz"]
    scopes = [HistoryScope(path, whole_file=False, key=i) for i in ids]
    splitter = adapter.history_splitter(scopes[0])
    assert isinstance(splitter, RecordSplitter)
    units = _jsonl(rng)
    old = _joined(rng, units, b"")
    for _ in range(4):
        units = _edit(rng, units, _record_line)
        new = _joined(rng, units, b"")
        if rng.random() < 0.2 and new.endswith(b"\n"):
            new = new[:-1]  # no final newline
        _check(splitter, adapter.history_extract, scopes, old, new)
        old = new


def _record_line(rng: random.Random) -> bytes:
    return _record(rng) + b"\n"


def test_whole_file_scopes_have_no_splitter() -> None:
    assert adapter_for(DREAM).history_splitter(HistoryScope("archived-observations.md")) is None
    assert adapter_for("project-ocean").history_splitter(HistoryScope("a.md")) is None


def test_a_decay_run_and_an_append_name_only_their_sections() -> None:
    """The oldest section dropped and one appended: two windows, not the whole file between."""
    notes = [b"## Note %d\n" % i + b"filler words %d\n" % (i * 7919) * 4 for i in range(80)]
    old = b"# Observations\n\n" + b"".join(notes)
    new = b"# Observations\n\n" + b"".join(notes[1:]) + b"## Note new\nbody\n"
    edited = new.replace(b"filler words %d\n" % (40 * 7919), b"edited\n", 1)
    splitter = SectionSplitter()
    named = splitter.changed(old, new)
    assert {section_key("Note 0", 1), section_key("Note new", 1)} <= named
    assert len(named) <= 3  # and at most the heading the alignment put in the window ("## Note ")
    assert splitter.changed(new, edited) == {section_key("Note 40", 1)}


def test_repeated_heading_inserted_first_renumbers_the_later_ones() -> None:
    splitter = SectionSplitter()
    old = b"## Same\none\n## Other\nx\n## Same\ntwo\n"
    new = b"## Same\nzero\n" + old
    assert {section_key("Same", 1), section_key("Same", 2), section_key("Same", 3)} <= (
        splitter.changed(old, new)
    )
    assert splitter.parts(new)[section_key("Same", 3)] == b"## Same\ntwo\n"


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
