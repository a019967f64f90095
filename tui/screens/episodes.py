"""Episodes: the daily session logs of cognitive-memory vaults as one timeline.

Days newest first, each day's entries newest first; enter opens the memory
an entry links to in the memories screen, and says so when the link does
not resolve.  `v` shows the episode file at the entry's heading.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.widgets import Static

from memlens.core.episodes import DANGLING, LINKED, EpisodeEntry, episode_entries
from memlens.core.model import Memory

from ..messages import OpenMemory, OpenRaw
from ..safe_text import safe, visible
from ..widgets.episode_list import EpisodeList, timeline_lines, weekday
from ..widgets.key_footer import KeyFooter
from .base import MemlensScreen

#: How often the timeline checks whether a vault's scan result was replaced.
RESULT_CHECK_SECONDS = 0.5


class EpisodesScreen(MemlensScreen):
    """Every episode entry of every loaded vault, day by day."""

    CSS_PATH = "episodes.tcss"

    BINDINGS = [
        Binding(
            "v", "raw", "Raw text", tooltip="The episode file at this entry", id="episodes.raw"
        ),
    ]

    def __init__(self) -> None:
        super().__init__()
        #: (vault root, memory id) -> memory, for the vaults that have episodes.
        self._memories: dict[tuple[str, str], Memory] = {}
        #: Identity of each loaded vault's scan result when last shown.
        self._seen: tuple[int, ...] = ()

    def compose(self) -> ComposeResult:
        yield Static(id="episodes-bar")
        yield EpisodeList(id="episode-list")
        yield Static(id="episode-detail")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.watch(self.memlens, "catalog_version", self._catalog_changed, init=True)
        # An appended episode changes no memory, so live reload announces
        # nothing; the watcher still swaps in the vault's new scan result.
        self.set_interval(RESULT_CHECK_SECONDS, self._check_results)
        self.query_one(EpisodeList).focus()

    def _results(self) -> tuple[int, ...]:
        return tuple(id(v.result) for v, _ in self.memlens.loaded)

    def _check_results(self) -> None:
        if self.is_current and self._results() != self._seen:
            self._catalog_changed(self.memlens.catalog_version)

    def _catalog_changed(self, _version: int) -> None:
        app = self.memlens
        self._seen = self._results()
        vaults = [v for v, _ in app.loaded if v.result.records.get("episodes")]
        entries = episode_entries(vaults)
        self._memories = {(str(v.root), m.id): m for v in vaults for m in v.memories}
        titles = {key: m.title for key, m in self._memories.items()}
        timeline = self.query_one(EpisodeList)
        current = timeline.current()
        timeline.set_lines(timeline_lines(entries, titles), current.key if current else None)
        days = len({e.date for e in entries})
        broken = sum(1 for e in entries if e.link_state == DANGLING)
        parts: list[Content | str | tuple[str, str]] = [
            ("Episodes", "bold $accent"),
            f"  {len(entries)} entries · {days} days · {len(vaults)} vaults",
        ]
        if broken:
            parts.append((f" · {broken} links not found", "$error"))
        if app.loading:
            parts.append((" · loading…", "$warning"))
        parts.append(("   enter: open the memory · v: raw text", "$text-muted"))
        self.query_one("#episodes-bar", Static).update(Content.assemble(*parts), layout=False)
        if not entries:
            self.query_one("#episode-detail", Static).update(Content(""))

    # ------------------------------------------------------------------ the highlighted entry
    def current_memory(self) -> Memory | None:
        """The memory the highlighted entry links to, if it resolves (for y / Y)."""
        entry = self.query_one(EpisodeList).current()
        if entry is None or entry.memory_id is None:
            return None
        return self._memories.get((str(entry.vault_root), entry.memory_id))

    @on(EpisodeList.Highlighted)
    def _highlighted(self, event: EpisodeList.Highlighted) -> None:
        e = event.entry
        day = weekday(e.date)
        parts: list[Content | str | tuple[str, str]] = [
            safe(e.title, "bold"),
            "\n",
            safe(e.date, "$accent"),
            (f" {day}" if day else "", "$accent"),
            (f" {e.time}" if e.time else "", "$accent"),
        ]
        if e.type:
            parts += [" · ", safe(e.type)]
        if e.tags:
            parts += [" · ", safe(", ".join(e.tags), "$text-muted")]
        parts += ["\n", safe(f"{e.vault}/{e.file}:{e.line}", "$text-muted")]
        memory = self._memories.get((str(e.vault_root), e.memory_id)) if e.memory_id else None
        if e.link_state == LINKED:
            parts += ["\n", ("→ ", "$success"), safe(memory.title if memory else e.memory_id or "")]
            if e.memory_path:
                parts += ["  ", safe(e.memory_path, "$text-muted")]
        elif e.link_state == DANGLING:
            link = e.memory_link or e.memory_text or ""
            parts += ["\n", ("✗ the memory link does not resolve: ", "$error"), safe(link)]
        else:
            parts += ["\n", ("no memory linked", "$text-muted")]
        if e.summary:
            parts += ["\n", safe(e.summary)]
        self.query_one("#episode-detail", Static).update(Content.assemble(*parts))

    @on(EpisodeList.Selected)
    def _selected(self, event: EpisodeList.Selected) -> None:
        self.open_entry(event.entry)

    def open_entry(self, entry: EpisodeEntry) -> None:
        """Show the linked memory in the memories screen, or say why not."""
        if entry.memory_id is not None:
            self.post_message(OpenMemory(entry.vault_root, entry.memory_id))
            return
        if entry.link_state == DANGLING:
            link = visible(entry.memory_link or entry.memory_text or "")
            self.notify(
                f"The memory link of this entry does not resolve: {link}",
                severity="warning",
                markup=False,
            )
        else:
            self.notify("This entry links to no memory.", markup=False)

    def action_raw(self) -> None:
        entry = self.query_one(EpisodeList).current()
        if entry is None:
            return
        self.post_message(
            OpenRaw(entry.vault_root / entry.file, entry.line, f"{entry.vault}/{entry.file}")
        )
