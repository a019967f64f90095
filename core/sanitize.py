"""Making memory text safe to show: control characters become visible glyphs.

Memory text is data.  Agents copy terminal output, web pages and logs into
memories, so titles and bodies can hold ESC sequences (colours, OSC 8 links,
OSC 52 clipboard writes, screen clears), carriage returns that overwrite a
line, and bidi overrides that reorder what is shown.  Every front end passes
user text through `visible()` before it reaches a terminal.
"""

from __future__ import annotations

import re

# C0 controls except TAB and LF, DEL, C1 controls, bidi embeddings/overrides/
# isolates, and a few invisible formatting characters that can hide text.
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f\x80-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]"
)

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
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")


def json_text(text: str) -> str:
    """JSON text with C1 controls, bidi and separator characters as \\uXXXX escapes.

    `json.dumps(..., ensure_ascii=False)` already escapes C0 controls.
    """
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)
