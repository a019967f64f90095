"""User text as data: the one place memlens turns vault text into something drawable.

Memories hold whatever agents wrote: Rich/Textual markup (`[bold]`,
`[link=...]`, `[@click=app.quit]`), raw terminal escapes (ESC, OSC 8 / 52,
clear-screen), carriage returns and bidi overrides.  None of it may act on the
terminal or the app, and none of it may be hidden either, so every control
character is replaced by a visible stand-in:

* C0 controls become the Unicode control pictures (ESC -> "␛", NUL -> "␀");
* DEL becomes "␡";
* C1 controls, bidi marks/overrides/isolates, zero-width characters and the
  BOM (`memlens.core.text.sanitize.INVISIBLE`) become `\\x9b` / `\\u202e` text.

Text is then wrapped in `Content` / `rich.text.Text` objects, never parsed as
markup.  Every widget that shows vault text goes through this module.
"""

from __future__ import annotations

from rich.text import Text
from textual.content import Content
from textual.style import Style

from memlens.core.text.sanitize import INVISIBLE, undecodable


def _table(keep: str) -> dict[int, str]:
    table: dict[int, str] = {}
    for code in range(0x20):
        if chr(code) not in keep:
            table[code] = chr(0x2400 + code)
    table[0x7F] = "\u2421"  # ␡
    for code in range(0x80, 0xA0):
        table[code] = f"\\x{code:02x}"
    for code in INVISIBLE:  # bidi marks, zero-width characters, BOM (core's one list)
        table[code] = f"\\u{code:04x}"
    for code in range(0xD800, 0xE000):  # lone surrogates: see core.sanitize.undecodable
        table[code] = undecodable(chr(code))
    return table


#: One line of text: even newlines and tabs are shown (␊, ␉).
_LINE_TABLE = _table(keep="")
#: A block of text: newlines and tabs keep their meaning.
_BLOCK_TABLE = _table(keep="\n\t")


def visible(text: str) -> str:
    """One line with every control character replaced by a visible stand-in."""
    return text.translate(_LINE_TABLE)


def visible_block(text: str) -> str:
    """Like `visible`, but newlines and tabs stay (bodies, raw text)."""
    return text.translate(_BLOCK_TABLE)


def has_controls(text: str) -> bool:
    """True if `visible_block` would change `text` (besides newlines and tabs)."""
    return text.translate(_BLOCK_TABLE) != text


def safe(value: object, style: Style | str = "") -> Content:
    """A single line of user text (title, tag, id, field value) as literal Content."""
    text = visible(value if isinstance(value, str) else str(value))
    # Why strip_control_codes=False: nothing is left to strip, and the
    # default would silently drop characters instead of showing them.
    return Content.styled(text, style, strip_control_codes=False)


def safe_block(value: str, style: Style | str = "") -> Content:
    """Multi-line user text as literal Content."""
    return Content.styled(visible_block(value), style, strip_control_codes=False)


def safe_rich(value: object, style: str = "") -> Text:
    """A single line of user text as a literal Rich `Text` (for line-drawn widgets)."""
    text = visible(value if isinstance(value, str) else str(value))
    return Text(text, style=style, no_wrap=True, end="")


def safe_markdown(body: str) -> str:
    """Markdown source with control characters made visible.

    Markdown syntax itself stays (it is rendered by a parser with links,
    images and raw HTML switched off, see `widgets/body.py`); only characters
    that could act on the terminal are replaced.
    """
    return visible_block(body)
