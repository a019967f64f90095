"""The key footer of every screen, recomposed once per burst of binding changes.

Textual's `Footer` recomposes (every key widget built and styled again,
40-65 ms) after each `refresh_bindings`, and a screen's start publishes
several in a row (each focus change does): five recomposes before the first
rows of a warm start.  This one queues a single recompose for all the
changes made before the next refresh; what it shows is the same.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer


class KeyFooter(Footer):
    """`Footer`, with the recomposes a burst of binding changes asks for merged into one."""

    def __init__(self) -> None:
        super().__init__()
        self._recompose_queued = False

    def bindings_changed(self, screen: Screen[object]) -> None:
        # Textual 8.2's `Footer.bindings_changed`, with the recompose queued once.
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._recompose_queued:
            self._recompose_queued = True
            self.call_after_refresh(self._recompose_once)

    async def _recompose_once(self) -> None:
        self._recompose_queued = False
        await self.recompose()
