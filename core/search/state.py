"""What a built search index knows, as one plain object: easy to save and load.

Everything here is data (numpy arrays, lists, dicts, ints): no memories, no
callables, no caches.  The memories are bound to rows separately (a saved
index names each row by vault and memory id), so this object plus those
names is the whole index.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from .columns import Columns
from .postings import Postings, TermPostings, TitleWords


@dataclass(slots=True)
class IndexState:
    """The fitted terms, the word/tag postings and the per-row columns of an index.

    Rows are numbered in the order memories were added; a removed or
    replaced row stays, masked dead in ``columns.alive`` (counted in `dead`),
    until the next build.
    """

    #: The date the decay columns (weight, health, status, score) were computed for.
    as_of: date
    columns: Columns = field(default_factory=Columns)
    terms: TermPostings = field(default_factory=TermPostings)
    #: Rows per title/tag word (fuzzy title matching).
    words: TitleWords = field(default_factory=TitleWords)
    #: Rows per lower-cased tag (the `tag:` filter).
    tags: Postings = field(default_factory=Postings)
    #: Rows masked dead since the build.
    dead: int = 0

    @property
    def rows(self) -> int:
        """Rows in all, dead ones included."""
        return self.columns.alive.size

    @property
    def needs_rebuild(self) -> bool:
        """True once incremental changes touch a tenth of the rows."""
        return (self.dead + len(self.terms.delta_vec)) * 10 > max(10, self.rows)
