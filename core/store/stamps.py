"""What a file looked like when it was read: the key that says a stored row is still current."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(slots=True)
class FileStamp:
    """What a file looked like when it was read (treat as immutable).

    Not a frozen dataclass on purpose: frozen slotted dataclasses unpickle
    through a Python-level `__setstate__`, which doubled the time to load
    100k cache entries.
    """

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    #: sha256 of the bytes read (for reporting and conflict checks).
    sha256: str
    #: Timestamps were within RACY_WINDOW_NS of the read: verify by content.
    racy: bool = False

    def matches(self, st: os.stat_result) -> bool:
        return (
            st.st_size == self.size
            and st.st_mtime_ns == self.mtime_ns
            and st.st_ctime_ns == self.ctime_ns
            and st.st_ino == self.inode
        )

    @property
    def key(self) -> tuple[int, int, int, int]:
        """(size, mtime_ns, ctime_ns, inode), as a stat walk compares it."""
        return (self.size, self.mtime_ns, self.ctime_ns, self.inode)


__all__ = ["FileStamp"]
