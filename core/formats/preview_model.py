"""What an agent sees: the typed result every format's `agent_preview` returns.

A format's preview answers two questions by its own rules, as of a date:
what its agent loads when a session starts (CORE.md, observations.md, the
comprehension documents) and what it would recall for a prompt (Project
Ocean's HEARTBEAT search, experience records' hybrid retrieval).  The types
live beside the adapter base (not in `core.preview`) because the formats
build them and the formats sit below every cross-format layer.

Token counts are an estimate, never a tokenizer: ``ceil(characters / 4)``,
the usual rule of thumb for English text with BPE tokenizers (the
cognitive-memory spec itself equates ~3K tokens with ~12,000 characters).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from ..model import Memory

#: Characters per token of the estimate (see the module docstring).
CHARS_PER_TOKEN = 4

#: Section stages: loaded at session start, recalled for a prompt, what the
#: format's own decay will take out of the load soon, and what qualified but
#: was cut (a budget, a cap).
STAGE_LOAD = "load"
STAGE_RECALL = "recall"
STAGE_LEAVING = "leaving"
STAGE_CUT = "cut"

#: Rank `memories` for `prompt`, best first, at most `limit`: (memory, score).
#: Supplied by `core.preview` (which may use the search index); a format
#: that recalls by its own formula does not need it.
Recall = Callable[[Sequence[Memory], str, int], list[tuple[Memory, float]]]


def approx_tokens(text: str) -> int:
    """Estimated tokens of `text`: ceil(characters / 4); 0 for empty text."""
    return -(-len(text) // CHARS_PER_TOKEN)


@dataclass(frozen=True, slots=True)
class PreviewRequest:
    """What to preview: the date, and optionally one agent and a prompt."""

    as_of: date
    #: Only this agent's view (formats with several agents); None: every agent.
    agent: str | None = None
    #: The prompt to recall for; None or blank: nothing is recalled.
    prompt: str | None = None
    #: Text ranking for formats whose recall step is a search.
    recall: Recall | None = None

    @property
    def has_prompt(self) -> bool:
        return bool(self.prompt and self.prompt.strip())


@dataclass(frozen=True, slots=True)
class PreviewEntry:
    """One memory (or one line of a generated file) in a preview section."""

    id: str
    title: str
    #: Vault-relative path of the memory's file.
    path: str
    #: The text the agent gets for this entry (a CORE.md line, a section, a body).
    text: str
    #: The format's number for the entry (decay score, recall score), if any.
    score: float | None = None
    #: Why it is here or where it goes, in words ("shared/", "TTL expired", ...).
    note: str = ""
    #: Format-specific JSON-able details (score parts, citations, lenses).
    details: dict[str, Any] = field(default_factory=dict)
    #: The memory itself (not in JSON): the app opens it.
    memory: Memory | None = field(default=None, compare=False)

    @property
    def tokens(self) -> int:
        return approx_tokens(self.text)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "path": self.path,
            "tokens": self.tokens,
            "chars": len(self.text),
            "score": None if self.score is None else round(self.score, 6),
            "note": self.note,
        }
        out.update(self.details)
        return out


@dataclass(frozen=True, slots=True)
class Budget:
    """A size limit the format sets on what it loads (CORE.md's characters)."""

    limit_chars: int
    used_chars: int

    @property
    def over(self) -> bool:
        return self.used_chars > self.limit_chars

    def to_dict(self) -> dict[str, Any]:
        return {
            "limit_chars": self.limit_chars,
            "used_chars": self.used_chars,
            "limit_tokens": -(-self.limit_chars // CHARS_PER_TOKEN),
            "used_tokens": -(-self.used_chars // CHARS_PER_TOKEN),
            "fraction": round(self.used_chars / self.limit_chars, 4) if self.limit_chars else 0.0,
        }


@dataclass(frozen=True, slots=True)
class PreviewSection:
    """One block of a preview: a loaded file, a recall, what leaves soon."""

    #: Stable machine name ("core", "over_budget", "recall", "decays_7", ...).
    key: str
    title: str
    #: STAGE_LOAD, STAGE_RECALL, STAGE_LEAVING or STAGE_CUT.
    stage: str
    entries: tuple[PreviewEntry, ...] = ()
    #: The agent this section belongs to (formats with several agents).
    agent: str | None = None
    #: The whole text as loaded, when the format loads one generated file.
    text: str | None = None
    budget: Budget | None = None
    #: Unified diff lines of `text` against the file on disk (None: no file compared).
    diff: tuple[str, ...] | None = None
    #: One line on the rule applied (and on anything left out).
    note: str = ""
    #: Format-specific JSON-able facts about the section.
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        """The section's estimated tokens: its whole text, else its entries'."""
        if self.text is not None:
            return approx_tokens(self.text)
        return sum(e.tokens for e in self.entries)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "key": self.key,
            "title": self.title,
            "stage": self.stage,
            "agent": self.agent,
            "tokens": self.tokens,
            "count": len(self.entries),
            "note": self.note,
            "entries": [e.to_dict() for e in self.entries],
        }
        if self.budget is not None:
            out["budget"] = self.budget.to_dict()
        if self.text is not None:
            out["text"] = self.text
        if self.diff is not None:
            out["diff"] = list(self.diff)
        out.update(self.details)
        return out


__all__ = [
    "CHARS_PER_TOKEN",
    "STAGE_CUT",
    "STAGE_LEAVING",
    "STAGE_LOAD",
    "STAGE_RECALL",
    "Budget",
    "PreviewEntry",
    "PreviewRequest",
    "PreviewSection",
    "Recall",
    "approx_tokens",
]
