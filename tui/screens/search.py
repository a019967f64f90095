"""The search pane: ranked search as you type, why each hit ranked, more like this.

The index (`core.search.SearchIndex`) is built in a thread worker the first
time the pane is shown, or once loading finishes if it is shown earlier, and
again after a reload.  Each keystroke restarts a short timer; when it fires
the query runs in a thread worker (at 10k memories a keystroke is a few ms at
p50 but can take over 100 ms for a broad prefix, too long for the UI thread).
An index is not thread-safe, so every use of it holds `_index_lock`, and an
answer older than the latest keystroke is dropped.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Sequence

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.timer import Timer
from textual.widgets import Input, Static
from textual.worker import Worker, WorkerState, get_current_worker

from memlens.core.model import Memory
from memlens.core.scan.changes import Change, apply_to_search
from memlens.core.scan.vault import Catalog, Vault
from memlens.core.search.embeddings import Vectors, semantic_available
from memlens.core.search.index import Hit, SearchIndex, SearchResults
from memlens.core.search.index_cache import load_index, save_index
from memlens.core.search.query import QueryError
from memlens.core.search.relevance import add_field_counts

from ..messages import OpenMemory
from ..safe_text import safe
from ..widgets.key_footer import KeyFooter
from ..widgets.search_results import SearchResults as ResultList
from ..widgets.search_results import explain_content
from .base import MemlensScreen
from .search_hits import SORTS, Listing, health_of, sorted_hits
from .search_messages import Answered, IndexBuilt, MeaningReady, SimilarFound

#: Seconds without a keystroke before the query runs.
SEARCH_DELAY = 0.06
#: Hits shown per query (and per "more like this").
PAGE = 50
#: More memories than this with no kept meaning vector (a first start) are
#: embedded after the index is offered, queries running by words meanwhile.
EMBED_AT_ONCE = 2000

#: The query language in one line (the full table is in `memlens.core.search.query`).
FILTER_HINT = (
    '"phrase" -not tag: type: format: vault: agent: source: health: status: before: after: '
    "importance>0.5 confidence>=.8"
)


class SearchScreen(MemlensScreen):
    """Search every vault; the highlighted hit's explanation on the right."""

    CSS_PATH = "search.tcss"

    BINDINGS = [
        Binding("slash", "focus_input", "Search", tooltip="Type a query", id="search.focus"),
        Binding(
            "down",
            "focus_results",
            "Results",
            show=False,
            tooltip="From the query: go to the results",
            id="search.results",
        ),
        Binding(
            "m",
            "more_like_this('tfidf')",
            "More like this",
            tooltip="Memories nearest to the highlighted hit (TF-IDF)",
            id="search.similar",
        ),
        Binding(
            "M",
            "more_like_this('vectors')",
            "Like (vectors)",
            show=False,
            tooltip="Nearest by the vectors a vault ships (_embeddings.json)",
            id="search.similar_vectors",
        ),
        Binding(
            "o",
            "toggle_rank",
            "Rank",
            tooltip="Rank by relevance (BM25F, what you look for) or by recall (each "
            "format's formula, as the agent would: × confidence × decay weight)",
            id="search.rank",
        ),
        Binding(
            "s",
            "sort_next",
            "Sort",
            tooltip="Order the shown hits by rank, confidence, decay weight or importance",
            id="search.sort",
        ),
        Binding(
            "l",
            "graph",
            "Links",
            tooltip="The highlighted hit's links, in the graph pane",
            id="search.graph",
        ),
        Binding(
            "escape,backspace",
            "back",
            "Back",
            tooltip="In the query: leave it (1-6 switch panes again); in the results: "
            "back from 'more like this', else to the query",
            id="search.back",
        ),
    ]

    def __init__(self) -> None:
        super().__init__()
        #: The index of every loaded vault (None until built).
        self.index: SearchIndex | None = None
        #: The latest query's results (None before the first query).
        self.results: SearchResults | None = None
        #: The query text the shown results answer.
        self.answered: str = ""
        #: The query's own error, if the text does not parse.
        self.error: str | None = None
        #: Seconds the last query (or similarity) took in the worker.
        self.query_seconds: float | None = None
        #: Seconds the last index build took.
        self.build_seconds: float | None = None
        #: "More like this" lists over the query's results (escape pops one).
        self.stack: list[Listing] = []
        self._query_listing = Listing([], "")
        self._index_lock = threading.Lock()
        self._signature: tuple[int, ...] | None = None
        self._building: tuple[int, ...] | None = None
        self._seq = 0
        self._timer: Timer | None = None
        #: Live changes applied to the index (`apply_changes`), under the index lock.
        self._applied = 0
        #: Memories being embedded after the index was offered (0: none; `MeaningReady`).
        self.meaning_pending = 0
        #: The ranking queries use: "relevance" (default) or "recall" (`o` toggles).
        self.rank: str = "relevance"
        #: How the shown hits are ordered: by rank, or by one of `SORTS`' columns.
        self.sort: str = SORTS[0]

    def compose(self) -> ComposeResult:
        yield Static(id="search-bar")
        yield Input(placeholder='search: words, "phrases", tag:x health:x …', id="search-input")
        yield Static(Content.styled(FILTER_HINT, "$text-muted"), id="search-hint")
        with Horizontal(id="search-body"):
            yield ResultList(id="search-results")
            with VerticalScroll(id="search-explain-pane"):
                yield Static(id="search-explain")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(ResultList).loading = True
        self.watch(self.memlens, "catalog_version", self._catalog_changed, init=True)
        self.query_one("#search-input", Input).focus()

    # ------------------------------------------------------------------ the index
    def _catalog_changed(self, _version: int) -> None:
        app = self.memlens
        if app.loading:
            self._update_bar()
            return
        signature = tuple(id(v) for v, _ in app.loaded)
        if signature in (self._signature, self._building):
            return
        self._building = signature
        self.query_one(ResultList).loading = True
        self._update_bar()
        self.build_index([v for v, _ in app.loaded], signature)

    @property
    def index_ready(self) -> bool:
        """An index is there and no newer one is being built."""
        return self.index is not None and self._building is None

    @property
    def has_meaning(self) -> bool:
        """The index is there with meaning vectors (the review pane reuses them)."""
        index = self.index
        return self.index_ready and index is not None and index.semantic is not None

    def meaning_vectors(self, memories: Sequence[Memory]) -> Vectors | None:
        """`SearchIndex.meaning_vectors` under the index lock (safe from a worker thread)."""
        with self._index_lock:
            index = self.index
            return None if index is None else index.meaning_vectors(memories)

    def apply_changes(self, changes: list[Change]) -> bool:
        """Bring the index in step with live changes; True if it should be rebuilt.

        Safe from a worker thread: it holds the index lock, as queries do.
        """
        index = self.index
        if index is None:
            return False
        with self._index_lock:
            apply_to_search(index, changes)
            self._applied += 1
            return bool(index.needs_rebuild)

    def changes_applied(self, rebuild: bool) -> None:
        """After `apply_changes`: rebuild the index, or just run the query again."""
        if rebuild:
            self._signature = None
            self._catalog_changed(self.memlens.catalog_version)
        else:
            self._schedule(now=True)

    # description: without it Textual describes the worker by the repr of its
    # arguments, every memory of every vault (each body read from its file).
    @work(
        thread=True,
        exclusive=True,
        group="search-index",
        exit_on_error=False,
        name="search index",
        description="build the search index",
    )
    def build_index(self, vaults: list[Vault], signature: tuple[int, ...]) -> None:
        """Index every memory of `vaults` at the app's date (TF-IDF fit: seconds at 100k)."""
        worker = get_current_worker()
        started = time.perf_counter()
        memories = [m for v in vaults for m in v.memories]
        as_of = self.memlens.as_of
        kept_in: Catalog | None = None
        stale = False
        # Why not build([]): core's build raises on an empty list; an unbuilt
        # index is a valid empty one.
        if not memories:
            index = SearchIndex(as_of)
        elif self.memlens.config.cache:
            # The index kept in the cache folder when no file (or few) changed:
            # memories from the store read their bodies from the files, so a
            # build would read every file again.
            kept_in = Catalog(list(vaults))
            index, stats = load_index(kept_in, as_of, save=False)
            stale = stats.stale
        else:
            index = SearchIndex.build(memories, as_of, vaults=vaults)
        if worker.is_cancelled:
            return
        # The relevance ranking's own index, here rather than at the first keystroke,
        # and the meaning-based vectors when the optional extra is installed: both
        # kept in the index cache, so only a build or a change computes them.
        stale = stale or not index.has_lexical()
        index.lexical()
        later = 0
        if semantic_available() and not worker.is_cancelled:
            pending = index.meaning_pending()
            if pending <= EMBED_AT_ONCE:
                stale = index.enable_semantic() > 0 or stale
            else:
                later = pending  # a first start: searchable by words first
        if worker.is_cancelled:
            return
        if kept_in is not None and stale:
            with contextlib.suppress(Exception):  # a cache not written is only slower
                save_index(index, kept_in)
        seconds = time.perf_counter() - started
        self.post_message(IndexBuilt(index, signature, seconds, meaning_pending=later))
        # After the index is offered: a first query waits for this (the lock)
        # no longer than it would compute it itself.
        with self._index_lock:
            if not worker.is_cancelled:
                index.prepare_order()
        if later and not worker.is_cancelled:
            self._add_meaning(index, kept_in, worker)

    def _add_meaning(
        self, index: SearchIndex, kept_in: Catalog | None, worker: Worker[None]
    ) -> None:
        """Embed the memories while queries run by words, then fuse meaning in (worker thread).

        Minutes at 100k on a first start.  The index is kept again with its
        vectors when no live change came meanwhile (under the lock: once).
        """
        changes = self._applied
        aside = index.build_semantic(stop=lambda: worker.is_cancelled)
        with self._index_lock:
            if worker.is_cancelled:
                return
            index.attach_semantic(aside)
            if kept_in is not None and self._applied == changes:
                with contextlib.suppress(Exception):  # a cache not written is only slower
                    save_index(index, kept_in)
        self.post_message(MeaningReady(index))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # The base class reports the error; here the pane stops waiting for it.
        if event.state == WorkerState.ERROR and event.worker.group == "search-index":
            self._building = None
            self.query_one(ResultList).loading = False
            self.query_one(ResultList).set_hits([], "the index could not be built (ctrl+r reloads)")
            self._update_bar()

    @on(IndexBuilt)
    def _index_built(self, event: IndexBuilt) -> None:
        if event.signature != self._building:
            return  # built for vaults that have since been reloaded
        self._building = None
        self._signature = event.signature
        self.index = event.index
        self.build_seconds = event.seconds
        self.meaning_pending = event.meaning_pending
        self.query_one(ResultList).loading = False
        self.stack = []
        self._schedule(now=True)

    @on(MeaningReady)
    def _meaning_ready(self, event: MeaningReady) -> None:
        if event.index is not self.index:
            return  # an index since replaced
        self.meaning_pending = 0
        self._schedule(now=True)  # the same query, with meaning now

    # ------------------------------------------------------------------ querying
    @on(Input.Changed, "#search-input")
    def _query_changed(self, _event: Input.Changed) -> None:
        self._schedule()

    def _schedule(self, now: bool = False) -> None:
        """Run the query after SEARCH_DELAY (restarted by each keystroke)."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if now:
            self._start_query()
        else:
            self._timer = self.set_timer(SEARCH_DELAY, self._start_query)

    def _start_query(self) -> None:
        self._timer = None
        index = self.index
        if index is None:
            self._update_bar()
            return
        text = self.query_one("#search-input", Input).value
        self._seq += 1
        self.run_query(index, self._seq, text)

    @work(thread=True, exclusive=True, group="search-query", exit_on_error=False, name="search")
    def run_query(self, index: SearchIndex, seq: int, text: str) -> None:
        """Rank `text`; a newer keystroke cancels this one (its answer is dropped)."""
        worker = get_current_worker()
        with self._index_lock:
            if worker.is_cancelled:
                return
            started = time.perf_counter()
            results: SearchResults | None = None
            error: str | None = None
            try:
                results = index.run(text, PAGE, as_you_type=True, rank=self.rank)
            except QueryError as exc:
                error = str(exc)
            seconds = time.perf_counter() - started
        if not worker.is_cancelled:
            self.post_message(Answered(seq, text, results, error, seconds))

    @on(Answered)
    def _answered(self, event: Answered) -> None:
        if event.seq != self._seq:
            return
        self.query_seconds = event.seconds
        self.error = event.error
        if event.results is not None:
            # Why keep old hits on an error: a half-typed filter ("importance>")
            # would otherwise blank the list at every keystroke.
            self.results = event.results
            self.answered = event.text
            self._query_listing = Listing(sorted_hits(event.results.hits, self.sort), "")
            self.stack = []
            self._show(self._query_listing)
        self._update_bar()

    def _empty_text(self) -> str:
        if self.index is None:
            return "loading…"
        if not self.answered.strip():
            return "type to search"
        return "no memory matches"

    def _show(self, listing: Listing) -> None:
        results = self.query_one(ResultList)
        results.set_hits(listing.hits, self._empty_text(), listing.cursor)
        if not listing.hits:
            self.query_one("#search-explain", Static).update(self._help_content())

    def _remember_cursor(self) -> None:
        cursor = self.query_one(ResultList).cursor
        (self.stack[-1] if self.stack else self._query_listing).cursor = cursor

    # ------------------------------------------------------------------ bar and explanation
    def _vault_name(self, hit: Hit) -> str:
        root = str(hit.memory.vault_root)
        for v, _ in self.memlens.loaded:
            if str(v.root) == root:
                return str(v.name)
        return str(hit.memory.vault_root.name)

    def _update_bar(self) -> None:
        app = self.memlens
        parts: list[Content | str | tuple[str, str]] = [("Search", "bold $accent")]
        if self.index is not None:
            parts.append(f"  {len(self.index)} memories indexed")
        if app.loading:
            parts.append((" · loading vaults…", "$warning"))
        elif self._building is not None:
            parts.append((" · building the index…", "$warning"))
        elif self.meaning_pending:
            parts.append((f" · by words until {self.meaning_pending} are embedded…", "$warning"))
        if self.stack:
            parts += [" · ", safe(self.stack[-1].label, "italic"), f" ({len(self.stack[-1].hits)})"]
        elif self.results is not None and self.answered.strip():
            total = self.results.total
            more = "" if self.results.total_exact else "≤"
            parts.append(f" · {more}{total} match{'es' if total != 1 else ''}")
            if total > len(self.results.hits):
                parts.append(f", best {len(self.results.hits)} shown")
        parts.append((f" · ranked by {self.rank}", "$text-muted"))
        if self.sort != SORTS[0]:
            parts.append((f", shown by {self.sort}", "$text-muted"))
        if self.error:
            parts += [" · ", safe(self.error, "$error")]
        self.query_one("#search-bar", Static).update(Content.assemble(*parts))

    def _help_content(self) -> Content:
        return Content.styled(
            f"Ranked by {self.rank}. The explanation of the highlighted hit shows here: "
            "matched terms and each one's part of the score, then confidence, decay "
            "weight and importance (multiplied in only when ranked by recall).\n\n"
            "enter opens the memory · o relevance/recall · s order the shown hits · "
            "m more like this · l its links (graph)",
            "$text-muted",
        )

    def action_toggle_rank(self) -> None:
        """Switch between relevance and recall, and run the query again."""
        self.rank = "recall" if self.rank == "relevance" else "relevance"
        self.notify(f"ranked by {self.rank}", timeout=2)
        self._schedule(now=True)
        self._update_bar()

    def action_sort_next(self) -> None:
        """Order the query's shown hits by the next column (rank order first)."""
        self.sort = SORTS[(SORTS.index(self.sort) + 1) % len(SORTS)]
        if self.results is not None:
            self._query_listing = Listing(sorted_hits(self.results.hits, self.sort), "")
            if not self.stack:
                self._show(self._query_listing)
        self._update_bar()

    @on(ResultList.Highlighted)
    def _highlighted(self, event: ResultList.Highlighted) -> None:
        label = self.stack[-1].label if self.stack else ""
        hit = add_field_counts(event.hit)  # per field counts: only for the hit explained
        self.query_one("#search-explain", Static).update(
            explain_content(hit, self._vault_name(hit), label=label)
        )

    # ------------------------------------------------------------------ keys
    @on(Input.Submitted, "#search-input")
    def _submitted(self, _event: Input.Submitted) -> None:
        self.action_focus_results()

    def action_focus_input(self) -> None:
        self.query_one("#search-input", Input).focus()

    def action_focus_results(self) -> None:
        if self.focused is self.query_one("#search-input", Input):
            self.query_one(ResultList).focus()

    def current_memory(self) -> Memory | None:
        """The highlighted hit's memory (y / Y copy its id or path)."""
        hit = self.query_one(ResultList).current()
        return hit.memory if hit is not None else None

    @on(ResultList.Selected)
    def _open(self, event: ResultList.Selected) -> None:
        m = event.hit.memory
        self.post_message(OpenMemory(m.vault_root, m.id))

    def action_more_like_this(self, by: str) -> None:
        hit = self.query_one(ResultList).current()
        index = self.index
        if hit is None or index is None:
            return
        if by == "vectors" and not index.has_vectors(hit.memory):
            self.notify("This memory's vault ships no stored vector for it.", severity="warning")
            return
        if by == "tfidf" and index.semantic is not None:
            by = "semantic"  # the meaning-based vectors, when the extra made them
        self._remember_cursor()
        title = hit.memory.title or hit.memory.id
        how = {"vectors": "stored vectors", "semantic": "meaning"}.get(by, "TF-IDF")
        self.find_similar(index, hit, by, f"more like “{title}” ({how})")

    @work(thread=True, exclusive=True, group="search-query", exit_on_error=False, name="similar")
    def find_similar(self, index: SearchIndex, hit: Hit, by: str, label: str) -> None:
        worker = get_current_worker()
        with self._index_lock:
            started = time.perf_counter()
            hits = index.similar(hit.memory, PAGE, by=by)
            seconds = time.perf_counter() - started
        # Similarity explains carry no health; the result list shows one per hit.
        as_of = self.memlens.as_of
        hits = [Hit(h.memory, h.score, {**h.explain, "health": health_of(h, as_of)}) for h in hits]
        if not worker.is_cancelled:
            self.post_message(SimilarFound(label, hits, seconds))

    @on(SimilarFound)
    def _similar_found(self, event: SimilarFound) -> None:
        self.query_seconds = event.seconds
        listing = Listing(event.hits, event.label)
        self.stack.append(listing)
        self._show(listing)
        self.query_one(ResultList).focus()
        if not event.hits:
            self.notify("No similar memory found.")
        self._update_bar()

    def action_back(self) -> None:
        focused = self.focused
        search_input = self.query_one("#search-input", Input)
        if focused is search_input:
            # Leave the box, keeping the query and its hits: while it has the
            # focus, digits are part of the query, so 1-6 could not switch panes.
            self.query_one(ResultList).focus()
            return
        if self.stack:
            self.stack.pop()
            self._show(self.stack[-1] if self.stack else self._query_listing)
            self._update_bar()
            return
        search_input.focus()

    async def action_graph(self) -> None:
        hit = self.query_one(ResultList).current()
        if hit is None:
            return
        from .graph import GraphScreen

        key = hit.memory.key
        await self.app.switch_mode("graph")
        screen = self.app.screen
        if isinstance(screen, GraphScreen):
            screen.request_centre(key)
