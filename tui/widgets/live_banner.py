"""A one-line notice at the top of the detail pane: the shown memory changed on disk."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

#: Banner kinds and the theme colour each is drawn in.
BANNER_STYLES = {
    "changed": "$warning",
    "removed": "$error",
    "unknown": "$warning",
    "editing": "$error",
}


class LiveBanner(Static):
    """Docked at the top of its container, so it stays visible while the body scrolls.

    It belongs to one memory (`key`); the app hides it when another row is shown.
    """

    DEFAULT_CSS = """
    LiveBanner {
        dock: top;
        height: auto;
        padding: 0 1;
        display: none;
        text-style: bold;
        background: $warning 25%;
    }
    LiveBanner.-removed { background: $error 30%; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        #: (vault root, id) of the memory the banner is about; None when hidden.
        self.key: tuple[str, str] | None = None
        #: changed | removed | unknown | editing.
        self.kind: str | None = None
        #: What the banner says (empty when hidden).
        self.message: str = ""

    def show_notice(self, key: tuple[str, str], kind: str, text: str) -> None:
        self.key = key
        self.kind = kind
        self.message = text
        self.set_class(kind == "removed", "-removed")
        self.update(Content.styled(text, BANNER_STYLES.get(kind, "")))
        self.display = True

    def hide(self) -> None:
        self.key = None
        self.kind = None
        self.message = ""
        self.display = False
