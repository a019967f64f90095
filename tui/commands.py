"""Command palette provider: every app command, each screen, sort columns, vaults."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Matcher, Provider
from textual.content import Content

from .safe_text import visible

if TYPE_CHECKING:
    from .app import MemlensApp


@dataclass(frozen=True, slots=True)
class PaletteCommand:
    """One entry of the palette."""

    #: What the palette shows and matches (may hold a vault name: made visible).
    name: str
    #: Called when chosen.
    run: Callable[[], object]
    help: str = ""


def literal_highlight(matcher: Matcher, text: str) -> Content:
    """`Matcher.highlight` parses its text as markup; vault names must stay literal."""
    content = Content(text)
    _score, offsets = matcher.fuzzy_search.match(matcher.query, text)
    for offset in offsets:
        if not text[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content


class MemlensCommands(Provider):
    """Commands from `MemlensApp.palette_commands()` (built fresh on each search)."""

    def _commands(self) -> list[PaletteCommand]:
        app = cast("MemlensApp", self.app)
        # The screen the palette was opened over: its keys are commands too.
        commands = app.palette_commands(self.screen)
        return [PaletteCommand(visible(c.name), c.run, visible(c.help)) for c in commands]

    async def discover(self) -> Hits:
        for c in self._commands():
            yield DiscoveryHit(Content(c.name), c.run, text=c.name, help=c.help or None)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for c in self._commands():
            score = matcher.match(c.name)
            if score > 0:
                yield Hit(
                    score,
                    literal_highlight(matcher, c.name),
                    c.run,
                    text=c.name,
                    help=c.help or None,
                )
