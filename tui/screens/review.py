"""The review queue: near-duplicates and possible contradictions, side by side, and their fixes.

Candidates come from `memlens.core.curation` (as of the app's date), found in
a thread worker whenever the catalog changes (at once when the pane is
showing, else when it is shown next).  The ranked list is on the left; the
selected candidate's two memories are on the right, side by side, each word
the other lacks highlighted.  With the semantic extra, paraphrases are
found by meaning too (the search pane's vectors, or the persisted search
index's: `memlens.core.search.meaning`), after the lexical candidates are
shown.  Memory text is data: every word goes through
`safe` (literal Content, control characters made visible).

Keys: `m` merge (keep the left one, fold in the right one, archive it), `s`
supersede (the left one holds now; the right one is archived), `S`
supersede keeping the right one, `d` keep both (dismiss), `x` swap the
sides, `u` undo the last action in that vault.  Each is one journaled
transaction (`memlens undo VAULT` reverts it too).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from memlens.core.actions import undo
from memlens.core.curation import ReviewItem, ReviewRun, apply_curation, dismiss, review_run
from memlens.core.curation.candidates import text_of
from memlens.core.curation.wording import differing_flags
from memlens.core.errors import MemlensError
from memlens.core.model import Memory
from memlens.core.scan.vault import Catalog, Vault
from memlens.core.search import meaning as meanings
from memlens.core.write.journal import STATE_DIR

from ..action_common import entry_paths, refresh_after_write, tell, wall_clock
from ..safe_text import safe
from ..widgets.key_footer import KeyFooter
from .base import MemlensScreen

#: Characters of a title in the ranked list.
LIST_TITLE = 36
#: Candidates listed (best first); `memlens review --json` has them all.
MAX_SHOWN = 1000
_SPLIT = re.compile(r"(\s+)")
Part = Content | str | tuple[str, str]


def highlighted(text: str, other: str, style: str = "bold $warning on $warning 20%") -> Content:
    """`text` with every word `other` lacks in `style` (words compared in order, as a diff)."""
    pieces = _SPLIT.split(text)
    words = [p for p in pieces if p and not p.isspace()]
    flags, _ = differing_flags(words, [p for p in _SPLIT.split(other) if p and not p.isspace()])
    parts: list[Content] = []
    n = 0
    for piece in pieces:
        if not piece:
            continue
        if piece.isspace():
            parts.append(Content(piece))
            continue
        parts.append(safe(piece, style if flags[n] else ""))
        n += 1
    return Content.assemble(*parts)


def option_label(item: ReviewItem) -> Content:
    """One ranked-list line: kind, confidence, the first member's title."""
    c = item.candidate
    mark = ("≠ ", "$error") if c.kind == "contradiction" else ("≈ ", "$accent")
    title = " ".join(c.members[0].title.split())[:LIST_TITLE]
    return Content.assemble(mark, (f"{c.confidence:.2f} ", "$text-muted"), safe(title))


def member_block(m: Memory, other: Memory, role: str) -> Content:
    """A member's heading (role, id, path) and its text with the differing words marked."""
    return Content.assemble(
        (f"{role}\n", "bold $accent"),
        safe(m.title, "bold"),
        "\n",
        safe(f"{m.id} · {m.path}", "$text-muted"),
        "\n\n",
        highlighted(text_of(m), text_of(other)),
    )


class ReviewScreen(MemlensScreen):
    """Ranked candidates on the left, the selected pair side by side on the right."""

    CSS_PATH = "review.tcss"

    BINDINGS = [
        Binding(
            "m",
            "merge",
            "Merge",
            tooltip="Keep the left one, fold in the right one",
            id="review.merge",
        ),
        Binding(
            "s",
            "supersede",
            "Supersede",
            tooltip="The left one holds now; archive the right one",
            id="review.supersede",
        ),
        Binding("S", "supersede_keep", "Supersede, keep old", id="review.supersede_keep"),
        Binding(
            "d",
            "keep_both",
            "Keep both",
            tooltip="Hide the pair until either changes",
            id="review.dismiss",
        ),
        Binding("x", "swap", "Swap sides", id="review.swap"),
        Binding("u", "undo", "Undo", id="review.undo"),
    ]

    class Found(Message):
        """A worker finished the candidates for request `seq` (`meaning`: see `_meaning`)."""

        def __init__(self, seq: int, run: ReviewRun, meaning: str) -> None:
            super().__init__()
            self.seq = seq
            self.items = run.items
            self.meaning = meaning

    def __init__(self) -> None:
        super().__init__()
        #: The candidates shown, best first (tests read them).
        self.items: list[ReviewItem] = []
        #: Candidates found (the list shows at most MAX_SHOWN of them).
        self.total = 0
        #: Show the selected candidate's members in reverse order.
        self.swapped = False
        self._stale = True
        self._seq = 0
        self._busy = False
        #: The vault of this pane's last action (what `u` undoes).
        self._last_root: Path | None = None
        #: Meaning-based duplicates: "used", "computing" (the lexical
        #: candidates are shown meanwhile), "off" (no semantic extra) or why not.
        self._meaning = "off"

    def compose(self) -> ComposeResult:
        yield Static(id="review-bar")
        with Horizontal(id="review-main"):
            yield OptionList(id="review-list")
            with VerticalScroll(id="review-detail"):
                yield Static(id="review-reason")
                with Horizontal(id="review-sides"):
                    yield Static(id="review-left")
                    yield Static(id="review-right")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.watch(self.memlens, "catalog_version", self._catalog_changed, init=True)
        self.query_one("#review-list", OptionList).focus()

    def on_screen_resume(self) -> None:
        if self._stale:
            self.refresh_queue()

    def _catalog_changed(self, _version: int) -> None:
        self._stale = True
        if self.is_current and not self.memlens.loading:
            self.refresh_queue()
        else:
            self._update_bar()

    def meaning_ready(self) -> None:
        """The search pane's meaning vectors came: find again with them (now, or when shown)."""
        self._catalog_changed(self.memlens.catalog_version)

    # ------------------------------------------------------------ finding
    def refresh_queue(self) -> None:
        """Find every vault's candidates in a worker (a newer request wins)."""
        self._stale = False
        self._seq += 1
        self._update_bar(computing=True)
        self.find([v for v, _ in self.memlens.loaded], self._seq)

    @work(thread=True, exclusive=True, group="review", exit_on_error=False, name="review")
    def find(self, vaults: list[Vault], seq: int) -> None:
        """Candidates, then (with the semantic extra) again with meaning vectors.

        The search pane's vectors when it has them; else the persisted
        search index's (`meaning_of`), whose first run at 100k embeds for
        minutes: the lexical candidates are shown meanwhile.
        """
        worker = get_current_worker()
        as_of = self.memlens.as_of

        def stop() -> bool:
            return worker.is_cancelled

        meaning = self.memlens.search_meaning()
        if meaning is None:
            wanted = meanings.semantic_available()
            run = review_run(vaults, as_of, should_stop=stop)
            if worker.is_cancelled:
                return
            self.post_message(self.Found(seq, run, "computing" if wanted else "off"))
            if not wanted or self.memlens.search_meaning_pending():
                return  # the search pane is embedding them: `meaning_ready` comes, not twice
            try:
                catalog = Catalog(list(vaults))
                meaning = meanings.meaning_of(catalog, as_of, use_cache=self.memlens.config.cache)
            except Exception as exc:  # the lexical queue stands; say why meaning is missing
                self.post_message(self.Found(seq, run, f"failed: {type(exc).__name__}: {exc}"))
                return
            if meaning is None or worker.is_cancelled:
                return
        run = review_run(vaults, as_of, should_stop=stop, meaning=meaning)
        if not worker.is_cancelled:
            self.post_message(self.Found(seq, run, "used"))

    @on(Found)
    def _found(self, event: Found) -> None:
        if event.seq != self._seq:
            return
        listing = self.query_one("#review-list", OptionList)
        keep = self.current.candidate.id if self.current is not None else None
        self.total = len(event.items)
        self._meaning = event.meaning
        self.items = event.items[:MAX_SHOWN]
        listing.clear_options()
        listing.add_options([Option(option_label(i), id=i.candidate.id) for i in self.items])
        ids = [i.candidate.id for i in self.items]
        if self.items:
            listing.highlighted = ids.index(keep) if keep in ids else 0
        self._show()
        self._update_bar()

    @property
    def current(self) -> ReviewItem | None:
        """The highlighted candidate, if any."""
        if not self.is_mounted:
            return None
        index = self.query_one("#review-list", OptionList).highlighted
        if index is None or not 0 <= index < len(self.items):
            return None
        return self.items[index]

    def pair(self) -> tuple[Memory, Memory] | None:
        """The shown pair as (left, right): left is kept / holds now."""
        item = self.current
        if item is None:
            return None
        a, b = item.candidate.members[0], item.candidate.members[1]
        return (b, a) if self.swapped else (a, b)

    @on(OptionList.OptionHighlighted)
    def _highlighted(self, _event: OptionList.OptionHighlighted) -> None:
        self.swapped = False
        self._show()

    def _show(self) -> None:
        item, pair = self.current, self.pair()
        reason = self.query_one("#review-reason", Static)
        left = self.query_one("#review-left", Static)
        right = self.query_one("#review-right", Static)
        if item is None or pair is None:
            reason.update(Content.styled("No candidates to review.", "$text-muted"))
            left.update("")
            right.update("")
            return
        c = item.candidate
        more = f" (+{len(c.members) - 2} more in the group)" if len(c.members) > 2 else ""
        reason.update(
            Content.assemble(
                (f"{c.kind} · confidence {c.confidence:.2f} · {c.id}{more}\n", "bold"),
                safe(c.reason, "$text-muted"),
            )
        )
        a, b = pair
        left.update(member_block(a, b, "keep / holds now"))
        right.update(member_block(b, a, "fold in / older"))

    def _update_bar(self, computing: bool = False) -> None:
        counts = {
            k: sum(i.candidate.kind == k for i in self.items)
            for k in ("duplicate", "contradiction")
        }
        parts: list[Part] = [
            ("Review", "bold $accent"),
            f"  as of {self.memlens.as_of.isoformat()} · {counts['duplicate']} duplicates"
            f" · {counts['contradiction']} contradictions",
        ]
        if self.total > len(self.items):
            parts.append((f" (best {len(self.items)} of {self.total})", "$warning"))
        if computing or self.memlens.loading:
            parts.append((" · looking…", "$warning"))
        elif self._meaning == "computing":
            parts.append((" · meaning: computing…", "$warning"))
        elif self._meaning == "used":
            parts.append(" · meaning used")
        elif self._meaning != "off":
            parts.append(safe(f" · meaning {self._meaning}", "$error"))
        if self._busy:
            parts.append((" · writing…", "$warning"))
        parts.append(
            ("   m merge · s supersede · S keep old · d keep both · x swap · u undo", "$text-muted")
        )
        self.query_one("#review-bar", Static).update(Content.assemble(*parts), layout=False)

    # ------------------------------------------------------------ actions
    def action_swap(self) -> None:
        self.swapped = not self.swapped
        self._show()

    def action_merge(self) -> None:
        self._curate("merge", keep_old=False)

    def action_supersede(self) -> None:
        self._curate("supersede", keep_old=False)

    def action_supersede_keep(self) -> None:
        self._curate("supersede", keep_old=True)

    def _curate(self, name: str, *, keep_old: bool) -> None:
        pair = self.pair()
        if pair is None or self._busy:
            return
        first, second = pair
        as_of, now = self.memlens.as_of, wall_clock()
        self._run(
            lambda: apply_curation(name, first, second, as_of, keep_old=keep_old, now=now),
            first.vault_root,
            name,
        )

    def action_keep_both(self) -> None:
        item = self.current
        if item is None or self._busy:
            return
        as_of = self.memlens.as_of
        self._run(lambda: dismiss(item.candidate, as_of), item.candidate.vault_root, "dismiss")

    def action_undo(self) -> None:
        """Undo the last action of this pane's vault (else the highlighted candidate's)."""
        item = self.current
        root = self._last_root or (item.candidate.vault_root if item is not None else None)
        if root is None or self._busy:
            return
        self._last_root = None
        self._run(lambda: undo(root), root, "undo")

    def _run(self, call: Callable[[], dict[str, Any]], root: Path, name: str) -> None:
        self._busy = True
        self._update_bar()

        async def go() -> None:
            try:
                entry = await asyncio.to_thread(call)
            except (MemlensError, OSError) as exc:
                tell(self.memlens, f"{name} refused: {exc}", "error")
                return
            finally:
                self._busy = False
                self._update_bar()
            if name != "undo":
                self._last_root = root
            what = entry.get("summary") or name
            tell(self.memlens, f"{what}" + ("" if name == "undo" else " · u undoes it"))
            paths = [p for p in entry_paths(root, entry) if STATE_DIR not in p.parts]
            if paths:
                refresh_after_write(self.memlens, paths)
            # A dismiss writes only under .memlens/ (no memory changed, the queue
            # did); after any action the queue is found again.
            self.refresh_queue()

        self.run_worker(go(), group="review-write", exit_on_error=False, name=f"review {name}")
