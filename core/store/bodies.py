"""Memory bodies read from their files on first use, for memories loaded from the store.

Why not keep bodies in the store: they are most of a vault's bytes (the old
pickle cache was 1.3x the content because of them) and most runs never look
at them: `list`, `validate`, `graph` and a search's ranking use metadata and
the persisted index; only a detail pane, a snippet, a diff or a writer reads
a body, and then only a few.

How: every memory of one stored file shares one `FileBodies`, set as its
`body_source` (see `model.Memory.body`).  The first body asked for re-reads
that file, checks it still has the sha256 the row was stored with, parses
it with the format's adapter and fills the bodies of all the file's stored
memories, by position (the parse of the same bytes is the same; ids are
checked, and matched by id otherwise).  Measured at 100k one-memory files:
a read and parse is ~0.1 ms, so a search's 20 hits cost ~2 ms; a full
`list --json` at 100k never asks.

A file that changed since its row was stored no longer holds those bodies:
they read as "" (a stale memory whose text is gone, not another memory's
text), and the next scan replaces the memory anyway.  Memories whose file is
then only re-read (the app's rescans, `scan/changes.py` diffs) see "" as the
old text.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..formats import adapter_for
from ..model import BODY_SOURCE, RAW_BODY, Memory
from ..safe_io import read_regular

#: Bodies of one file read alone before the whole file is parsed at once (a
#: search's page reads a few; a full-text pass reads them all).
SINGLE_READS = 16


class FileBodies:
    """The bodies of one stored file's memories, read when the first is asked for."""

    __slots__ = ("data", "format_id", "memories", "rel", "root", "sha256", "singles")

    def __init__(
        self, root: Path, rel: str, format_id: str, sha256: str, memories: list[Memory]
    ) -> None:
        self.root = root
        self.rel = rel
        self.format_id = format_id
        self.sha256 = sha256
        #: The stored FileScan's memories, in its order (filled in place).
        self.memories = memories
        #: Bodies read alone so far, and the checked bytes they were read from.
        self.singles = 0
        self.data: bytes | None = None

    def fill(self, memory: Memory) -> None:
        """Give every stored memory of the file its body ("" where the file no longer has it).

        In a file of many memories whose format reads one body alone
        (`FormatAdapter.bodies_of`), only this memory's is read.
        """
        data = self.data if self.data is not None else self._data()
        if data is not None and len(self.memories) > 1 and self.singles < SINGLE_READS:
            adapter = adapter_for(self.format_id)
            one = adapter.bodies_of(self.root, self.rel, data, [memory])
            if one is not None and memory.id in one:
                RAW_BODY.__set__(memory, one[memory.id])
                self.singles += 1
                self.data = data  # kept for the next few (dropped once all are filled)
                return
        self.data = None
        bodies = self._read(data)
        targets = self.memories if any(m is memory for m in self.memories) else [memory]
        by_id: dict[str, str] | None = None
        for i, m in enumerate(targets):
            if RAW_BODY.__get__(m, Memory) is not None:
                continue
            text: str | None = None
            if bodies is not None:
                if targets is self.memories and i < len(bodies) and bodies[i][0] == m.id:
                    text = bodies[i][1]
                else:
                    if by_id is None:
                        by_id = dict(bodies)
                    text = by_id.get(m.id)
            RAW_BODY.__set__(m, "" if text is None else text)
        self.memories = []  # filled: nothing more to do, nothing kept alive

    def peek(self, memory: Memory) -> str | None:
        """The body of the file's only memory, read now and not kept (None: not that case).

        For a pass over every memory's text (embedding): filled, each body
        would stay in memory for the rest of the run (~300 MB at 100k).
        """
        if len(self.memories) != 1 or self.memories[0] is not memory:
            return None
        bodies = self._read(self._data())
        if bodies is None:
            return ""
        return next((text for ident, text in bodies if ident == memory.id), "")

    def _data(self) -> bytes | None:
        """The file's bytes if it is the file that was stored."""
        try:
            data = read_regular(self.root / self.rel)
        except OSError:
            return None
        return data if hashlib.sha256(data).hexdigest() == self.sha256 else None

    def _read(self, data: bytes | None) -> list[tuple[str, str]] | None:
        """(id, body) of each memory the file holds now, if it is the file that was stored."""
        if data is None:
            return None
        fs = adapter_for(self.format_id).scan_file(self.root, self.root / self.rel, data)
        return [(m.id, m.body) for m in fs.memories]


def unkept_body(m: Memory) -> str:
    """`m.body`, but read from its file and not kept when it is its file's only memory.

    A memory of a file of many (a Dream Cycle section) is filled as usual:
    reading that file again for each of its memories would cost more than
    keeping their bodies.
    """
    loaded = RAW_BODY.__get__(m, Memory)
    if loaded is not None:
        return str(loaded)
    try:
        source = BODY_SOURCE.__get__(m, Memory)
    except AttributeError:
        source = None
    if isinstance(source, FileBodies):
        text = source.peek(m)
        if text is not None:
            return text
    return m.body


def attach(root: Path, rel: str, format_id: str, sha256: str, memories: list[Memory]) -> None:
    """Make the bodies of a stored file's memories load from the file on first use."""
    if not memories:
        return
    source = FileBodies(root, rel, format_id, sha256, memories)
    for m in memories:
        m.body_source = source  # type: ignore[attr-defined]  # the slot of model._LazyBody


__all__ = ["FileBodies", "attach", "unkept_body"]
