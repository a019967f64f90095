"""User text is data: control characters become visible, markup stays text."""

from __future__ import annotations

from memlens.tui.safe_text import (
    has_controls,
    safe,
    safe_block,
    safe_markdown,
    safe_rich,
    visible,
    visible_block,
)


def test_escape_and_c0_controls_become_control_pictures() -> None:
    assert visible("\x1b[31mred\x1b[0m") == "␛[31mred␛[0m"
    assert visible("a\x00b\x07c") == "a␀b␇c"
    assert visible("line\r") == "line␍"
    assert visible("a\nb\tc") == "a␊b␉c"
    assert visible("\x7f") == "␡"


def test_c1_controls_and_bidi_overrides_are_spelled_out() -> None:
    assert visible("\x9b2J") == "\\x9b2J"
    assert visible("abc\u202edef") == "abc\\u202edef"
    assert visible("\u2066x\u2069") == "\\u2066x\\u2069"
    # Ordinary right-to-left text is left alone.
    assert visible("שלום") == "שלום"


def test_blocks_keep_newlines_and_tabs() -> None:
    text = "one\n\ttwo\x1b]8;;file:///etc/passwd\x1b\\click\x1b]8;;\x1b\\\r\n"
    out = visible_block(text)
    assert "\n" in out and "\t" in out
    assert "\x1b" not in out and "\r" not in out
    assert "␛]8;;file:///etc/passwd␛\\click" in out
    assert has_controls(text) and not has_controls("plain\ntext\t")


def test_markup_is_never_parsed() -> None:
    markup = "[bold red]x[/] [link=file:///etc/passwd]click[/link] [@click=app.quit]q[/]"
    content = safe(markup)
    assert content.plain == markup
    assert not content.spans
    assert safe_block(markup).plain == markup
    text = safe_rich(markup)
    assert text.plain == markup and not text.spans
    assert safe_markdown(markup) == markup


def test_non_strings_are_shown_as_text() -> None:
    assert safe(3.5).plain == "3.5"
    assert safe(None).plain == "None"
