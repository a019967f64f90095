"""Possible contradictions between two memories, found without a language model.

A memory's text (title and body) is cut into clauses (`wording.clauses`).
Each clause gets a *signature*: its words in order with negations, stop
words (auxiliaries, articles) and assertion fillers dropped, antonyms
folded to one form (``disabled`` -> ``enabled``) and every value (number,
date, month, weekday) replaced by ``<v>``; beside it the clause's
*polarity* (odd number of negations or antonyms: negative) and its
*values*.  Two clauses of different memories with the same signature say
something about the same subject in the same words, so:

- different polarity: a flipped negation ("X is enabled" / "X is not
  enabled", never / always, can / cannot);
- same polarity, different values: a different number or date for the
  same quantity ("pool size is 20" / "pool size is 50");
- same polarity and values: agreement, nothing to review.

Why whole signatures: a qualifier ("the timeout for payments" / "for
search") is part of the signature, so two different subjects never meet;
a negation in another clause of the memory is in another signature.  A
signature needs at least two content words, so "it is 5" never matches
"it is 7".

Time.  A different number is a contradiction only for the same quantity
of the same subject *at the same time*.  A standing fact ("the pool size
is 20", "the deploy window is Tuesday") holds until changed, so two
memories giving two values disagree whenever written.  A *timed* claim
(`wording.is_timed`: past tense, "after that" / "since then", or a
reading of a measured quantity such as usage, latency, a percentage or a
rate) is an observation of one moment: it conflicts only with one of the
same moment, the ISO dates or times the clause names, else the day its
memory was written; and one dated only by its memory must also be about
the same subject (`same_subject`), as must a clause whose subject is
named only by its memory ("the fix is in 1.2").  Questions, headings
that ask ("How to ...") and labels ("(517)") state nothing.

Named settings (``timeout = 30s``, ``pool_size: 20`` at the start of a
line, ``key = value`` inside prose, or a code name alone as the subject:
``max_connections is 100``) are compared by key.  A key alone
does not say whose setting it is, so a setting conflict also needs the two
memories to be alike (content-word Jaccard >= SETTING_MIN_SIMILARITY) and
no title word of one may be missing from the other memory (a title "Search
API client" against "Payments API client" names two subjects), update
words excepted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from .wording import (
    ANTONYM,
    CONTEXT_HEADS,
    NEGATION,
    POLAR_WORDS,
    VALUE,
    VALUE_FORM,
    clause_tokens,
    clauses,
    is_content,
    is_identifier,
    is_timed,
    is_timestamp,
    stem,
    token_jaccard,
    token_role,
    word_set,
    words,
)

#: Content words a clause signature needs to stand for a subject.
MIN_SUBJECT_WORDS = 2
#: Memory similarity (content-word Jaccard) a setting conflict needs.
SETTING_MIN_SIMILARITY = 0.5
#: Title words that mark a revision, not a different subject.
_UPDATE_WORDS = word_set(
    "update updated new old change changed revised revision current latest now "
    "correction corrected actually fix fixed note "
)
_SETTING_LINE = re.compile(
    r"^\s*(?:[-*]\s+)?`?(?P<key>[A-Za-z_][\w.\-]*)`?\s*(?:=|:)\s*`?(?P<value>[^`\n]+?)`?\s*$"
)
_SETTING_INLINE = re.compile(r"`?\b(?P<key>[A-Za-z_][\w.\-]*)`?\s*=\s*`?(?P<value>[^\s,;`]+)")
#: Values longer than this many words are prose after a colon, not a setting.
_MAX_SETTING_WORDS = 4


@dataclass(frozen=True, slots=True)
class Claim:
    """One clause (or setting) of a memory, reduced for comparison."""

    signature: tuple[str, ...]
    positive: bool
    values: tuple[str, ...]
    #: The clause as written (for the reason line).
    text: str
    #: Content words of the signature (how specific the subject is).
    subject_words: int
    setting: bool = False
    #: An observation or event rather than a standing fact: past tense, anchored
    #: to a happening ("after that", "since"), or a measured quantity that varies
    #: (usage, latency, a percentage, a rate).  Such claims conflict only when
    #: they are about the same time (`when`).
    timed: bool = False
    #: When a timed claim holds: the dates and times it names, else its
    #: memory's date; None when unknown (then it conflicts with nothing).
    when: str | None = None
    #: The subject or time is named only by the memory around it ("the fix is
    #: in 1.2", "the issue ...", an undated observation): it conflicts only
    #: between memories on one subject.
    contextual: bool = False


@dataclass(frozen=True, slots=True)
class Conflict:
    """Why two memories may contradict each other."""

    #: "negation", "value" or "setting".
    how: str
    a: Claim
    b: Claim

    @property
    def reason(self) -> str:
        if self.how == "negation":
            return f"flipped negation: {self.a.text!r} vs {self.b.text!r}"
        if self.how == "setting":
            key = self.a.signature[-1]
            return (
                f"setting {key} has different values: {' '.join(self.a.values)!r} vs "
                f"{' '.join(self.b.values)!r}"
            )
        return f"different value for the same quantity: {self.a.text!r} vs {self.b.text!r}"


def _roles(toks: list[str]) -> tuple[list[str], list[str], bool]:
    """(signature, values, positive) of a clause's tokens (see the module doc).

    Negations and antonyms flip the polarity; auxiliaries and articles say
    nothing of the subject ("X is enabled" and "X has been disabled" share
    the signature (x, enabled)); words are stemmed ("prefers" and "does not
    prefer" name one claim); values stand as ``<v>``.
    """
    roles = [token_role(w) for w in toks]
    signature = [form for role, form in roles if role >= ANTONYM]
    values = (
        [w for w, (role, _form) in zip(toks, roles, strict=True) if role == VALUE]
        if VALUE_FORM in signature
        else []
    )
    if POLAR_WORDS.isdisjoint(toks):  # most clauses: no negation, no antonym
        return signature, values, True
    flips = sum(1 for role, _form in roles if role in (NEGATION, ANTONYM))
    return signature, values, flips % 2 == 0


def clause_claim(text: str, memory_date: str | None = None) -> Claim | None:
    """The claim of one clause, or None when it names no subject (see module doc).

    `memory_date` is when the memory was written: the time of an
    observation that names none itself.
    """
    if text.rstrip().endswith("?"):
        return None  # a question asserts nothing
    return _claim_of(words(text), text.strip(), memory_date)


def _claim_of(
    toks: list[str],
    text: str,
    memory_date: str | None,
    roles: tuple[list[str], list[str], bool] | None = None,
) -> Claim | None:
    signature, values, positive = roles if roles is not None else _roles(toks)
    content = [w for w in signature if w != VALUE_FORM and is_content(w)]
    if len(content) == 1 and values:
        names = [w for w in toks if is_identifier(w)]
        if len(names) == 1:
            # "max_connections is 100": a named setting written as prose.
            return Claim(("<setting>", names[0]), True, tuple(values), text, 1, True)
    if len(content) < MIN_SUBJECT_WORDS:
        return None
    timed = is_timed(toks, content, values)
    when = memory_date
    stamps: list[str] = []
    if timed:
        stamps = [v for v in values if is_timestamp(v)]
        if stamps:
            when = " ".join(stamps)
        values = [v for v in values if not is_timestamp(v)]
    return Claim(
        tuple(signature),
        positive,
        tuple(values),
        text,
        len(content),
        timed=timed,
        when=when,
        # An observation dated only by its memory ("after that restores take 8
        # minutes") is about that memory's incident: two memories of one day
        # conflict only when they are about one subject.
        contextual=content[0] in CONTEXT_HEADS or (timed and not stamps),
    )


def setting_claims(text: str) -> list[Claim]:
    """Named settings of `text`: `key: value` / `key = value` lines and inline `key = value`."""
    out: list[Claim] = []
    for line in text.splitlines():
        if "=" not in line and ":" not in line:
            continue
        m = _SETTING_LINE.match(line)
        found = [m] if m else list(_SETTING_INLINE.finditer(line)) if "=" in line else []
        for match in found:
            key = match.group("key").lower().strip(".-")
            value = " ".join(words(match.group("value")))
            if not key or not value or len(value.split()) > _MAX_SETTING_WORDS:
                continue
            out.append(Claim(("<setting>", key), True, tuple(value.split()), line.strip(), 1, True))
    return out


#: One clause before it becomes a claim: (signature, words, values, positive).
Sketch = tuple[tuple[str, ...], list[str], list[str], bool]


def claims(title: str, body: str, memory_date: str | None = None) -> list[Claim]:
    """Every claim of a memory: its title's and body's clauses, and its settings."""
    sketches, _words = sketch(title, body)
    out = [c for c in (claim_of(s, memory_date) for s in sketches) if c is not None]
    return out + body_settings(body)


def sketch(title: str, body: str) -> tuple[list[Sketch], list[str]]:
    """The clause sketches of a memory (questions left out) and all its words; one pass.

    Why sketches: a vault's clauses are grouped by signature first, and only
    those another memory shares become claims (`claim_of`); most clauses
    of a vault are said once.
    """
    out: list[Sketch] = []
    every: list[str] = []
    for part in (title, body):
        for toks, question in clause_tokens(part):
            every += toks
            if question:
                continue  # a question asserts nothing
            signature, values, positive = _roles(toks)
            if signature:
                out.append((tuple(signature), toks, values, positive))
    return out, every


def claim_of(s: Sketch, memory_date: str | None) -> Claim | None:
    """The claim of a sketched clause (None: it names no subject); its text is its words."""
    signature, toks, values, positive = s
    return _claim_of(toks, " ".join(toks), memory_date, (list(signature), values, positive))


def body_settings(body: str) -> list[Claim]:
    """The `key: value` / `key = value` settings of a body (none without = or :)."""
    return setting_claims(body) if "=" in body or ":" in body else []


def as_written(claim: Claim, title: str, body: str) -> Claim:
    """The claim with its clause's text as written in the memory (found again by its words)."""
    if claim.setting:
        return claim
    for part in (title, body):
        for text in clauses(part):
            if " ".join(words(text)) == claim.text:
                return replace(claim, text=text)
    return claim


def compare(a: Claim, b: Claim) -> Conflict | None:
    """The conflict between two claims of the same signature, if they disagree."""
    if a.signature != b.signature:
        return None
    if (a.timed or b.timed) and (a.when is None or a.when != b.when):
        return None  # two observations of different times: things change
    if a.setting:
        return Conflict("setting", a, b) if a.values != b.values else None
    if a.positive != b.positive:
        return Conflict("negation", a, b)
    if a.values != b.values:
        return Conflict("value", a, b)
    return None


def same_subject(
    title_a: str, stems_a: set[str], title_b: str, stems_b: set[str]
) -> tuple[bool, float]:
    """Whether two memories are about one subject (for setting conflicts), and their Jaccard.

    `stems_a` / `stems_b`: the `content_stems` of each memory's text (kept
    per memory by the caller: one memory meets many others).
    """
    sa, sb = stems_a, stems_b
    sim = token_jaccard(sa, sb)
    if sim < SETTING_MIN_SIMILARITY:
        return False, sim
    for title, other in ((title_a, sb), (title_b, sa)):
        for w in words(title):
            if is_content(w) and w not in _UPDATE_WORDS and stem(w) not in other:
                return False, sim
    return True, sim


def best_conflict(found: Iterable[Conflict]) -> Conflict | None:
    """The most telling conflict: prose before settings, then the most specific subject."""
    ranked = sorted(
        found, key=lambda c: (c.how == "setting", -c.a.subject_words, c.a.text, c.b.text)
    )
    return ranked[0] if ranked else None
