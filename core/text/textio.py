"""Reading files as text the same way in every adapter.

Decoding is strict UTF-8: a latin-1 file is reported, never guessed, so it is
never rewritten with the wrong bytes.  A BOM and CRLF endings are accepted
transparently; `DecodedText` remembers both so writers can put them back.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import ParseError
from ..model import Reason
from ..safe_io import read_regular

BOM = "\ufeff"


@dataclass(frozen=True, slots=True)
class DecodedText:
    """File text with a BOM removed and line endings normalised to `\\n`."""

    text: str
    had_bom: bool
    newline: str  # "\r\n" when the file used CRLF, else "\n"


def decode_bytes(data: bytes, path: Path | str) -> DecodedText:
    """Decode strictly; raise ParseError(empty_file | encoding) on bad input."""
    if not data:
        raise ParseError(path, Reason.EMPTY_FILE, "zero-byte file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = data[exc.start]
        line = data.count(b"\n", 0, exc.start) + 1
        raise ParseError(
            path,
            Reason.ENCODING,
            f"not valid UTF-8 (byte 0x{bad:02x} at offset {exc.start})",
            at_line=line,
        ) from None
    had_bom = text.startswith(BOM)
    if had_bom:
        text = text[1:]
    newline = "\r\n" if "\r\n" in text else "\n"
    if newline == "\r\n":
        text = text.replace("\r\n", "\n")
    return DecodedText(text, had_bom, newline)


def read_text(path: Path) -> DecodedText:
    """Read and decode one file (see decode_bytes); a FIFO & co. is an OSError, never a hang."""
    return decode_bytes(read_regular(path), path)
