"""Detection: a vault is observation/v1 when one of its folders holds a document that
says so in its first bytes (the registry asks here before it imports the format).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ...safe_io import open_regular
from .schema import _FOLDERS, KIND_OBSERVATION

#: Detection reads at most this many bytes of at most this many files per folder.
_DETECT_BYTES = 1024
_DETECT_FILES = 8
_OBSERVATION_MARKER = re.compile(rb"(?m)^spec:[ \t]*[\"']?observation/v1[\"']?[ \t]*\r?$")
_COMPREHENSION_MARKER = re.compile(rb"(?m)^spec:[ \t]*[\"']?comprehension/v1[\"']?[ \t]*\r?$")


def _folder_has_marker(folder: Path, marker: re.Pattern[bytes]) -> bool:
    """True if one of the first few `.md` files in `folder` carries `marker`."""
    if not folder.is_dir():
        return False
    checked = 0
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if not entry.name.endswith(".md") or entry.name.startswith("."):
                    continue
                try:
                    if not entry.is_file():
                        continue
                    with os.fdopen(open_regular(entry.path), "rb") as fh:
                        head = fh.read(_DETECT_BYTES)
                except OSError:
                    continue
                if marker.search(head):
                    return True
                checked += 1
                if checked >= _DETECT_FILES:
                    return False
    except OSError:
        return False
    return False


def detect(root: Path) -> bool:
    """A folder of observation/v1 (or comprehension/v1) documents below `root`.

    Cheap: looks at the first KB of a few files per folder.  The archive
    folders count too, so a vault whose documents were all archived is
    still recognised.
    """
    for folder in _FOLDERS:
        marker = _OBSERVATION_MARKER if folder.kind == KIND_OBSERVATION else _COMPREHENSION_MARKER
        if _folder_has_marker(root / folder.rel, marker):
            return True
    return False
