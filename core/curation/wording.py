"""Words, clauses and cheap similarity for the review queue (no model, no network).

Why our own tokenizer rather than the search index's analyzer: contradiction
finding needs the words the search index throws away (``not``, ``no``,
numbers with their units, dates) and the order of words in a clause, and
duplicate finding wants a similarity that does not hinge on IDF (in a
small vault every shared word is "rare").

- `words`: lower-cased word tokens, contractions opened (``can't`` ->
  ``can not``, ``isn't`` -> ``is not``) so a flipped negation is one
  inserted ``not``; numbers keep their unit (``30s``, ``512mb``) and dates
  stay one token (``2026-11-22``).
- `clauses`: sentences split further at commas, semicolons and the
  conjunctions that join independent statements (but, and, while, ...), so
  a negation in an unrelated clause is compared with nothing.
- `token_jaccard` (light suffix stemming, stop words out) and
  `char_ngram_cosine` (3-grams of the normalized text): the "meaning-ish"
  similarities used beside TF-IDF and stored vectors.
- `word_diff`: the word-level difference of two texts, for the JSON and for
  highlighting in the app.
"""

from __future__ import annotations

import difflib
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

from ..text.sanitize import visible


def word_set(text: str) -> frozenset[str]:
    """The words of `text` (space-separated) as a set: long word lists stay readable."""
    return frozenset(text.split())


_CONTRACTIONS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), r)
    for p, r in (
        (r"\bcan[’']t\b", "can not"),
        (r"\bcannot\b", "can not"),
        (r"\bwon[’']t\b", "will not"),
        (r"\bshan[’']t\b", "shall not"),
        (r"\b(\w+)n[’']t\b", r"\1 not"),
    )
)
#: A word: letters/digits, inner dots, underscores, dashes, colons or slashes (1.5,
#: 2026-11-22, v2.3.1, 10:30, a/b, retry_limit, llama--23), an optional trailing
#: percent sign.
_WORD = re.compile(r"[^\W_]+(?:[._\-:/]+[^\W_]+)*%?|%")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+|;\s*")
_CLAUSE = re.compile(
    r",\s*|\s+(?:but|and|while|whereas|although|though|because|however|so|yet)\s+", re.I
)

#: Words too common to say what a memory is about.
STOP_WORDS: frozenset[str] = word_set(
    "a an the is are was were be been being am of to in at by for with from as it "
    "its this that these those there here we our you your they their he she i me my "
    "do does did has have had will would shall should may might must can could and or "
    "but if then than so such also just only very too into onto over under about "
    "after before again all any each few more most other some same own what which who "
    "whom when where why how up down out "
)
#: Words that open a condition the rest of the sentence depends on.
CONDITIONS: frozenset[str] = word_set(
    "if when whenever unless once while during until after before"
)
#: Words that negate the statement they are in.
NEGATIONS: frozenset[str] = frozenset({"not", "no", "never", "none", "nothing", "nobody", "nor"})
#: Words that assert without changing the claim (dropped from signatures).
FILLERS: frozenset[str] = frozenset({"always", "definitely", "indeed", "still", "really"})
#: Antonyms that flip a claim: word -> its positive form.
ANTONYMS: dict[str, str] = {
    "disabled": "enabled",
    "disable": "enable",
    "disables": "enables",
    "forbidden": "allowed",
    "disallowed": "allowed",
    "unsupported": "supported",
    "invalid": "valid",
    "unsafe": "safe",
    "fails": "succeeds",
    "failed": "succeeded",
    "optional": "required",
    "inactive": "active",
    "unavailable": "available",
}
_MONTHS = word_set(
    "january february march april june july august september october november "
    "december jan feb mar apr jun jul aug sep sept oct nov dec "
)
_WEEKDAYS = word_set(
    "monday tuesday wednesday thursday friday saturday sunday mondays tuesdays "
    "wednesdays thursdays fridays saturdays sundays "
)
#: A number (dates, times, versions, decimals) with an optional short unit.
_VALUE = re.compile(r"^v?\d[\d.,:/\-]*(?:[a-z]{1,3}|%)?$")
#: Words that are a value rather than a name: booleans of a setting.
_VALUE_WORDS = frozenset({"true", "false", "yes"})


#: Words whose -ed or irregular past form after them is a state, not an event
#: ("is enabled", "have been disabled", "the shared document").
_STATE_BEFORE = word_set(
    "is are be been being am get gets got remains remain stays stay seems not never "
    "always the a an this that these those its their our your his her my fully now still "
    "currently by"
)
#: Always the past tense: an event, not a standing fact.
_PAST_WORDS = word_set("was were had did went")
#: Irregular past forms (past only when no state word precedes them).
_IRREGULAR_PAST = word_set(
    "took ran saw came fell rose grew became began broke found gave lost made met paid "
    "said sent spent stood told thought wrote rewrote hung showed shown drove chose froze "
    "forgot hid held knew led left rode rang sold shook slept spoke stole struck threw "
    "woke won undid redid overrode rebuilt built bought brought caught dug drew fed felt "
    "fought flew taught"
)
#: Past and present alike (set, split): past after a person ("we split it to 500").
_SAME_PAST = word_set("set reset put cut split hit let shut quit spread read upset")
_PEOPLE = word_set("we i they he she someone somebody nobody everyone")
#: Words that tie a clause to a happening ("after that ...", "since then").
_ANCHOR_WORDS = word_set("yesterday today tonight ago recently lately")
_ANCHOR_BIGRAMS: frozenset[tuple[str, str]] = frozenset(
    (first, second)
    for first, second in (
        p.split()
        for p in (
            "after that",
            "after this",
            "after upgrade",
            "after upgrading",
            "since then",
            "since upgrade",
            "since upgrading",
            "last night",
            "last week",
            "this morning",
            "this week",
            "back to",
            "so far",
        )
    )
)
#: What is measured and varies over time (a reading, not a setting).
_METRIC_WORDS = word_set(
    "usage load latency throughput lag utilization utilisation cpu traffic error errors "
    "backlog depth count p50 p90 p95 p99 uptime temperature hits misses requests rps "
    "qps occupancy consumption spend visitors signups reading readings free used"
)
#: What is set or decided and holds until changed (a setting, not a reading).
_SETTING_WORDS = word_set(
    "size limit limits timeout ttl max min maximum minimum port window interval "
    "retention threshold quota version default replicas pool policy deadline cap "
    "budget target slo schedule setting config capacity ceiling"
)
#: Both, as the stems a clause signature holds (plurals folded).
METRIC_STEMS = _METRIC_WORDS | {w[:-1] for w in _METRIC_WORDS if w.endswith("s")}
SETTING_STEMS = _SETTING_WORDS | {w[:-1] for w in _SETTING_WORDS if w.endswith("s")}
#: Subject words that name their thing only through the memory around them.
CONTEXT_HEADS = word_set("fix issue problem bug cause culprit workaround solution change it")
#: Token roles in a clause signature (`token_role`).
#: Ordered: roles from ANTONYM up are part of the signature.
NEGATION, SKIP, ANTONYM, VALUE, WORD = 0, 1, 2, 3, 4
#: How a value stands in a signature.
VALUE_FORM = "<v>"
#: A year or an ISO date (a calendar value, unlike a time of day or a weekday).
_CALENDAR = re.compile(r"^(?:1[89]\d\d|20\d\d|\d{4}-\d{2}-\d{2})$")
_TIMESTAMP = re.compile(r"^(?:\d{4}-\d{2}-\d{2}(?:t[\d:]+z?)?|\d{1,2}:\d{2}(?::\d{2})?)$")


def normalize(text: str) -> str:
    """Lower case, contractions opened, control characters made visible."""
    out = visible(text).lower().replace("’", "'")
    if "'" in out or "cannot" in out:  # most text has no contraction: skip the regexes
        for pattern, repl in _CONTRACTIONS:
            out = pattern.sub(repl, out)
    return out


def words(text: str) -> list[str]:
    """The word tokens of `text` (see the module docstring)."""
    return _WORD.findall(normalize(text))


@lru_cache(maxsize=1 << 16)
def is_value(word: str) -> bool:
    """A number, a date or time, a version, a month or weekday: what a quantity says.

    A number may carry a short unit (30s, 512mb, 20ms, 5%, v18); a name with
    digits in it (kafka-21, gw-02, sha256) is a name, not a value, so two
    hosts are two subjects.
    """
    return bool(_VALUE.match(word)) or word in _MONTHS or word in _WEEKDAYS or word in _VALUE_WORDS


@lru_cache(maxsize=1 << 16)
def is_content(word: str) -> bool:
    """A word that says what a statement is about (not a stop word, negation or value)."""
    return (
        word not in STOP_WORDS
        and word not in NEGATIONS
        and word not in FILLERS
        and not is_value(word)
        and len(word) > 1
    )


#: A word (as `_WORD`) or a separator: a sentence end (. ! ? before a space,
#: a line break, a semicolon) or a comma.
_TOKEN = re.compile(r"[^\W_]+(?:[._\-:/]+[^\W_]+)*%?|%|[.!?]+(?=\s|$)|[,;\n]")
_SENTENCE_ENDS = frozenset(".!?;\n")
#: A number in parentheses, as titles disambiguate ("Pool limits (517)"): a label.
_LABEL = re.compile(r"\(#?\d+\)")
#: Words opening a question or a heading that asks ("How to ...", "Why the ...").
_ASKING = word_set("how why what which who")
#: The conjunctions `_CLAUSE` splits at, as words.
_CONJUNCTIONS = word_set("but and while whereas although though because however so yet")


def clause_tokens(text: str) -> list[tuple[list[str], bool]]:
    """The words of each clause of `text` (as `clauses` then `words`), and whether it asks.

    One pass over the whole text: a memory is normalized and tokenized
    once, not once per clause (the review queue reads every memory of a
    vault).  The second item is True for the clauses of a question.
    """
    out: list[tuple[list[str], bool]] = []
    sentence: list[list[str]] = []
    clause: list[str] = []
    ends, conjunctions = _SENTENCE_ENDS, _CONJUNCTIONS
    for tok in [*_TOKEN.findall(_LABEL.sub("", normalize(text))), "\n"]:
        first = tok[0]
        if first in ends:
            if clause:
                sentence.append(clause)
                clause = []
            if sentence:
                question = "?" in tok or sentence[0][0] in _ASKING
                if len(sentence) > 1 and sentence[0][0] in CONDITIONS:
                    sentence = [sentence[0] + p for p in sentence[1:]]
                out += [(p, question) for p in sentence]
                sentence = []
        elif first == "," or tok in conjunctions:
            if clause:
                sentence.append(clause)
                clause = []
        else:
            clause.append(tok)
    return out


def clauses(text: str) -> list[str]:
    """Sentences and their independent clauses, in order, stripped, non-empty.

    A sentence that opens with a condition ("if ...", "when ...") keeps it in
    front of each of its clauses: "when the flag is on, X is enabled" and
    "when the flag is off, X is not enabled" are two conditions, not a flip.
    """
    out: list[str] = []
    for sentence in _SENTENCE.split(text):
        parts = [p.strip(" \t-*>#") for p in _CLAUSE.split(sentence)]
        parts = [p for p in parts if p]
        if len(parts) > 1 and parts[0].split(maxsplit=1)[0].lower() in CONDITIONS:
            out += [f"{parts[0]} {p}" for p in parts[1:]]
        else:
            out += parts
    return out


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A light suffix stem, enough for plural and tense variants of one word."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def content_stems(text: str) -> set[str]:
    """The stems of the content words of `text`."""
    return {stem(w) for w in words(text) if is_content(w)}


def token_jaccard(a: set[str], b: set[str]) -> float:
    """|a ∩ b| / |a ∪ b|; 0.0 when both are empty."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def char_ngrams(text: str, n: int = 3) -> Counter[str]:
    """Character n-grams of the normalized words, joined by single spaces."""
    joined = " ".join(words(text))
    return Counter(joined[i : i + n] for i in range(max(0, len(joined) - n + 1)))


def cosine(a: Counter[str], b: Counter[str]) -> float:
    """Cosine of two count vectors."""
    if not a or not b:
        return 0.0
    dot = sum(v * b[k] for k, v in a.items() if k in b)
    na = math.sqrt(sum(v * v for v in a.values()))
    nb = math.sqrt(sum(v * v for v in b.values()))
    return dot / (na * nb) if na and nb else 0.0


@dataclass(frozen=True, slots=True)
class DiffOp:
    """One difference between two word sequences (`a` and `b` words, either may be empty)."""

    op: str
    a: tuple[str, ...]
    b: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return {"op": self.op, "a": " ".join(self.a), "b": " ".join(self.b)}


def word_diff(a: Sequence[str], b: Sequence[str]) -> list[DiffOp]:
    """The non-equal opcodes of a word-level diff of `a` and `b`."""
    matcher = difflib.SequenceMatcher(None, list(a), list(b), autojunk=False)
    return [
        DiffOp(tag, tuple(a[i1:i2]), tuple(b[j1:j2]))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def differing_flags(a: Sequence[str], b: Sequence[str]) -> tuple[list[bool], list[bool]]:
    """For each word of `a` and of `b`: whether it is outside the common subsequence."""
    matcher = difflib.SequenceMatcher(
        None, [w.lower() for w in a], [w.lower() for w in b], autojunk=False
    )
    fa = [True] * len(a)
    fb = [True] * len(b)
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            fa[block.a + k] = False
            fb[block.b + k] = False
    return fa, fb


def display_words(text: str) -> list[str]:
    """`text` split at whitespace (what the app highlights word by word)."""
    return text.split()


def joined(parts: Iterable[str]) -> str:
    return " ".join(p for p in parts if p)


@lru_cache(maxsize=1 << 16)
def token_role(word: str) -> tuple[int, str]:
    """(role, signature form) of one word of a clause; cached (a vault repeats its words)."""
    if word in NEGATIONS:
        return NEGATION, word
    if word in FILLERS or word in STOP_WORDS:
        return SKIP, word
    if word in ANTONYMS:
        return ANTONYM, stem(ANTONYMS[word])
    if is_value(word):
        return VALUE, VALUE_FORM
    return WORD, stem(word)


#: The words that flip a clause's polarity (`token_role` NEGATION or ANTONYM).
POLAR_WORDS: frozenset[str] = NEGATIONS | frozenset(ANTONYMS)


@lru_cache(maxsize=1 << 16)
def content_stem(word: str) -> str:
    """The stem of a content word, "" for any other word (one cached call a word)."""
    return stem(word) if is_content(word) else ""


def is_identifier(word: str) -> bool:
    """A name as code writes it (max_connections, vm.swappiness): a subject on its own."""
    return ("_" in word or "." in word) and not is_value(word) and word[0].isalpha()


def is_timestamp(word: str) -> bool:
    """An ISO date or a time of day: when an observation was made, not what it measured."""
    return bool(_TIMESTAMP.match(word))


def _past(toks: Sequence[str]) -> bool:
    prev = ""
    for w in toks:
        if w in _PAST_WORDS:
            return True
        if prev not in _STATE_BEFORE and (
            w in _IRREGULAR_PAST or (len(w) > 4 and w.endswith("ed") and not w.endswith("eed"))
        ):
            return True
        if prev in _PEOPLE and w in _SAME_PAST:
            return True
        prev = w
    return False


def is_timed(toks: Sequence[str], content: Sequence[str], values: Sequence[str]) -> bool:
    """Whether a clause reports an observation or event rather than a standing fact.

    Past tense ("we raised it to 20", "logs showed ..."), anchored to a
    happening ("after that", "since then", "yesterday"), or a reading of
    a measured quantity (usage, latency, a percentage, a rate "per ...")
    that names no setting (size, limit, timeout, ...).  Two such clauses
    with different numbers describe two moments, not a disagreement.  A
    clause whose only values are years, months or ISO dates says when a
    one-off thing happened: a fact, not timed.
    """
    if values and all(_CALENDAR.match(v) or v in _MONTHS for v in values):
        # "Alice joined in 2023", "the release shipped on 2026-03-01": the value
        # is when a one-off thing happened, a fact two memories can disagree on.
        return False
    if _past(toks):
        return True
    if any(w in _ANCHOR_WORDS for w in toks) or any(
        pair in _ANCHOR_BIGRAMS for pair in pairwise(toks)
    ):
        return True
    if not values or any(c in SETTING_STEMS for c in content):
        return False
    return (
        any(c in METRIC_STEMS for c in content)
        or any(v.endswith("%") for v in values)
        or "percent" in toks
        or "per" in toks
    )
