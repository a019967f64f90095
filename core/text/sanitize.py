"""Making memory text safe to show: control characters become visible glyphs.

Memory text is data.  Agents copy terminal output, web pages and logs into
memories, so titles and bodies can hold ESC sequences (colours, OSC 8 links,
OSC 52 clipboard writes, screen clears), carriage returns that overwrite a
line, and bidi overrides that reorder what is shown.  Every front end passes
user text through `visible()` before it reaches a terminal.
"""

from __future__ import annotations

import re

#: Invisible characters that reorder or hide text, the one list every front
#: end shows as a visible marker: the Arabic letter mark, zero-width
#: space/non-joiner/joiner, the LTR/RTL marks, the line/paragraph
#: separators, bidi embeddings and overrides, the word joiner, the bidi
#: isolates, and the BOM (zero-width no-break space) anywhere in the text.
INVISIBLE: tuple[int, ...] = (
    0x061C,
    *range(0x200B, 0x2010),
    0x2028,
    0x2029,
    *range(0x202A, 0x202F),
    0x2060,
    *range(0x2066, 0x206A),
    0xFEFF,
)
_INVISIBLE_CLASS = "".join(chr(code) for code in INVISIBLE)

# C0 controls except TAB and LF, DEL, C1 controls, the invisible ones, and
# lone surrogates (see `undecodable`).
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f{_INVISIBLE_CLASS}\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _byte_text(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    if 0xDC80 <= code <= 0xDCFF:  # a byte `os.fsdecode` could not decode
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}"  # any other lone surrogate (from JSON text)


def undecodable(text: str) -> str:
    """`text` with each byte of a file name that is not UTF-8 as `\\xNN` text.

    On Linux a file name is bytes; Python decodes a name such as
    b"obs-\\xff.md" to "obs-\\udcff.md" (a lone surrogate), which no UTF-8
    output can carry.  memlens shows it, in JSON and on the terminal, as the
    text `obs-\\xff.md` (Python's `backslashreplace` spelling); other lone
    surrogates show as `\\udXXX` text.
    """
    return _SURROGATE.sub(_byte_text, text) if _SURROGATE.search(text) else text


_NAMES = {
    "\x1b": "␛",
    "\r": "␍",
    "\x00": "␀",
    "\x07": "␇",
    "\x08": "␈",
    "\x0b": "␋",
    "\x0c": "␌",
    "\x7f": "␡",
}


def _show(match: re.Match[str]) -> str:
    ch = match.group(0)
    if ch in _NAMES:
        return _NAMES[ch]
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code)  # Unicode "control pictures" block
    if 0xD800 <= code <= 0xDFFF:
        return _byte_text(match)
    return f"<U+{code:04X}>"


def visible(text: str, *, keep_newlines: bool = True) -> str:
    """`text` with every control/bidi character replaced by a visible stand-in.

    Tabs are kept; newlines are kept unless `keep_newlines` is False (then
    they show as '␤', for one-line cells).
    """
    out = _UNSAFE.sub(_show, text)
    if not keep_newlines:
        out = out.replace("\n", "␤")
    return out


def has_unsafe(text: str) -> bool:
    """True if `visible()` would change `text` (newlines aside)."""
    return _UNSAFE.search(text) is not None


def one_line(text: str, width: int | None = None) -> str:
    """A visible single line, cut to `width` characters with an ellipsis."""
    line = visible(text, keep_newlines=False)
    if width is not None and len(line) > width:
        return line[: max(0, width - 1)] + "…"
    return line


# In JSON text these can only occur inside strings, so escaping them keeps
# the document identical in meaning while no raw C1 control, bidi override or
# line separator reaches a terminal that shows the output.
_JSON_UNSAFE = re.compile(f"[\x7f-\x9f{_INVISIBLE_CLASS}]")


def json_text(text: str) -> str:
    """JSON text with C1 controls, bidi and separator characters as \\uXXXX escapes.

    `json.dumps(..., ensure_ascii=False)` already escapes C0 controls.
    """
    if text.isascii():
        # Why: DEL is the one such character in ASCII, and `isascii` is a flag
        # the string already holds; the two passes below took ~2 s of a
        # 100k-memory `list --json` (110 MB of text, nearly all ASCII).
        return text.replace("\x7f", "\\u007f") if "\x7f" in text else text
    out = _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)
    # A lone surrogate (a file name that is not UTF-8) cannot be written as
    # UTF-8: it becomes the `undecodable` text, its backslash escaped for JSON.
    return _SURROGATE.sub(lambda m: _byte_text(m).replace("\\", "\\\\"), out)
