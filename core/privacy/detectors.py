"""The detectors: one regular expression per kind of secret, each with a check of its own.

Every detector finds candidates with a pattern and keeps only those that
pass a check that a random string or a piece of documentation fails: the
Luhn sum for card numbers, mod-97 for IBANs, a header that decodes to JSON
for JWTs, a key body for private keys, a password in a connection string,
a real-looking domain for e-mail, and for every token a test that it is not
a placeholder (`sk-...`, `<your-token>`, `xxxx`, `YOUR_API_KEY`, `${ENV}`,
`EXAMPLE`).  Commit hashes, UUIDs, checksums, versions, dates and ISBNs
match none of the patterns of the kinds that have fixed shapes, and the
generic detector only looks at a value written right after a credential
name (`api_key = ...`, `client_secret: ...`, `Authorization: Bearer ...`).

Why our own patterns rather than detect-secrets' plugins: see README
("Dependencies"); the kinds here are the ones the issue lists, each with
its false-positive rules written down next to it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .checks import (
    PLACEHOLDER_WORDS,
    fictional_phone,
    iban_ok,
    is_placeholder,
    jwt_ok,
    luhn_ok,
    reserved_domain,
    shannon_entropy,
)

#: Every kind a finding can have, in report order.
KINDS: tuple[str, ...] = (
    "private-key",
    "aws-key",
    "github-token",
    "slack-token",
    "stripe-key",
    "openai-key",
    "anthropic-key",
    "jwt",
    "connection-string",
    "generic-secret",
    "password",
    "iban",
    "card-number",
    "email",
    "phone",
)

#: Kinds that are personal data rather than credentials.
PERSONAL_KINDS = frozenset({"card-number", "iban", "email", "phone"})


@dataclass(frozen=True, slots=True)
class Hit:
    """One secret in a text: its kind and where it is (`text[start:end]` is the secret)."""

    kind: str
    start: int
    end: int
    secret: str


# -- the detectors --------------------------------------------------------------

_WORD_END = r"(?![A-Za-z0-9_])"
_WORD_START = r"(?<![A-Za-z0-9_])"

_PRIVATE_KEY = re.compile(
    r"-----BEGIN ((?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?)-----"
    r"(?P<body>.*?)(?:-----END \1-----|\Z)",
    re.DOTALL,
)
_AWS = re.compile(_WORD_START + r"(?:AKIA|ASIA|ABIA|ACCA|AROA|AIDA)[0-9A-Z]{16}" + _WORD_END)
_GITHUB = re.compile(
    _WORD_START
    + r"(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59})"
    + _WORD_END
)
_SLACK = re.compile(
    _WORD_START + r"(?:xox[abposr]-[0-9A-Za-z-]{10,}|xapp-\d-[0-9A-Za-z-]{10,})"
    r"|https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]+"
)
_STRIPE = re.compile(_WORD_START + r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}" + _WORD_END)
_ANTHROPIC = re.compile(_WORD_START + r"sk-ant-(?:api|admin)\d\d-[A-Za-z0-9_-]{20,}")
_OPENAI = re.compile(
    _WORD_START + r"sk-(?!ant-)(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}" + _WORD_END
)
_JWT = re.compile(
    _WORD_START + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}" + _WORD_END
)
_CONN = re.compile(
    r"(?i)\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|redis|rediss|amqps?|mssql|"
    r"sqlserver|oracle|ftps?|sftp|smtp|smtps|imaps?|ldaps?|couchdb|neo4j|clickhouse|"
    r"snowflake|cockroachdb|jdbc:[a-z]+)://"
    r"(?P<user>[^\s:/@'\"]*):(?P<password>[^\s@/'\"]+)@(?P<host>[^\s/:'\"?#]+)"
)
_ODBC_PASSWORD = re.compile(r"(?i)(?:^|;)\s*(?:password|pwd)\s*=\s*(?P<password>[^;\s'\"]+)")
_CARD = re.compile(r"(?<![\w.,/-])(?:\d[ -]?){12,18}\d(?![\d/-]|[.,]\d)")
_IBAN = re.compile(
    r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])"
)
_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@"
    r"(?P<domain>(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24})"
    r"(?![A-Za-z0-9-])"
)
_PHONE_INTL = re.compile(r"(?<![\w+])\+\d{1,3}(?:[ .-]?\(?\d{1,5}\)?){2,6}(?![\w])")
_PHONE_NANP = re.compile(r"(?<![\w+-])(?:\(\d{3}\) ?|\d{3}[-. ])\d{3}[-. ]\d{4}(?![\w-])")
_PHONE_WORD = re.compile(
    r"(?i)\b(?:phone|tel|telephone|mobile|cell|mob|whatsapp|signal|fax|call|ring|sms|text)"
    r"\b[^\n\d+]{0,12}(?P<number>\+?\(?\d[\d ().-]{5,18}\d)(?![\w-])"
)
_PASSWORD = re.compile(
    r"(?i)\b(?P<kw>password|passwd|passphrase|passcode|pwd|pw|kennwort|mot de passe|contraseña)"
    r"(?:\s+(?:for|of|on|to)(?:\s+[\w.@-]+){1,3}?)?"
    r"(?P<sep>\s*(?:is|was|=|:|->|=>|set to|changed to|is now|now)\s*)"
    r"(?:\"(?P<dq>[^\"\n]{3,128})\"|'(?P<sq>[^'\n]{3,128})'|“(?P<cq>[^”\n]{3,128})”"
    r"|`?(?P<value>[^\s\"'`”’]{3,128}))"
)
#: Field names whose whole value is a password.
_PASSWORD_FIELD = re.compile(r"(?i)^(?:[a-z0-9]+[_.-])*(?:password|passwd|passphrase|pwd|pw)$")
_PIN = re.compile(r"\bPIN(?: code)?\s*(?:is|:|=)\s*(?P<value>\d{4,8})\b")
_CREDENTIAL_NAME = (
    r"(?:[A-Za-z0-9]+[_.-])*(?:api[_-]?key|apikey|secret(?:[_-]?key)?|client[_-]?secret|"
    r"access[_-]?key(?:[_-]?id)?|secret[_-]?access[_-]?key|auth[_-]?token|access[_-]?token|"
    r"refresh[_-]?token|bearer[_-]?token|token|private[_-]?key|signing[_-]?key|"
    r"session[_-]?key|credentials?|app[_-]?key|webhook[_-]?secret)"
)
_ASSIGNMENT = re.compile(
    r"(?i)(?<![A-Za-z0-9])" + _CREDENTIAL_NAME + r"[\"']?\s*(?:=|:|=>|is)\s*[\"'`]?"
    r"(?P<value>[A-Za-z0-9+/=_.~-]{16,256})"
)
_BEARER = re.compile(r"(?i)\b(?:bearer|token)\s+(?P<value>[A-Za-z0-9+/=_.~-]{20,256})")
_CREDENTIAL_FIELD = re.compile(r"(?i)^" + _CREDENTIAL_NAME + r"$")

#: Words a password in prose is never: "the password is stored in 1Password".
_NOT_PASSWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "in",
        "on",
        "at",
        "of",
        "for",
        "to",
        "from",
        "by",
        "with",
        "without",
        "and",
        "or",
        "not",
        "no",
        "none",
        "null",
        "nil",
        "true",
        "false",
        "is",
        "was",
        "be",
        "been",
        "being",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "same",
        "set",
        "unset",
        "empty",
        "blank",
        "required",
        "needed",
        "missing",
        "wrong",
        "incorrect",
        "invalid",
        "correct",
        "right",
        "expired",
        "stale",
        "old",
        "new",
        "reset",
        "rotated",
        "changed",
        "updated",
        "stored",
        "saved",
        "kept",
        "managed",
        "hidden",
        "masked",
        "redacted",
        "unknown",
        "known",
        "shared",
        "sent",
        "given",
        "written",
        "encrypted",
        "hashed",
        "protected",
        "secret",
        "secure",
        "strong",
        "weak",
        "long",
        "short",
        "ok",
        "okay",
        "still",
        "also",
        "only",
        "just",
        "now",
        "then",
        "never",
        "always",
        "please",
        "see",
        "check",
        "use",
        "used",
        "using",
        "ask",
        "asked",
        "policy",
        "field",
        "prompt",
        "manager",
        "rules",
        "rule",
        "length",
        "change",
        "changes",
        "requirement",
        "requirements",
    ]
)


def _hits(kind: str, pattern: re.Pattern[str], text: str, group: int | str = 0) -> Iterator[Hit]:
    for m in pattern.finditer(text):
        yield Hit(kind, m.start(group), m.end(group), m.group(group))


def _tokens(kind: str, pattern: re.Pattern[str], text: str) -> Iterator[Hit]:
    """Fixed-prefix tokens that are not placeholders."""
    for hit in _hits(kind, pattern, text):
        if not is_placeholder(hit.secret):
            yield hit


def _private_keys(text: str) -> Iterator[Hit]:
    for m in _PRIVATE_KEY.finditer(text):
        body = re.sub(r"[^A-Za-z0-9+/=]", "", m.group("body"))
        # A key body is long base64; "-----BEGIN PRIVATE KEY----- ... -----END" in
        # documentation has none.
        if len(body) >= 40 and not is_placeholder(body):
            yield Hit("private-key", m.start(), m.end(), m.group(0))


def _jwts(text: str) -> Iterator[Hit]:
    for hit in _hits("jwt", _JWT, text):
        if jwt_ok(hit.secret):
            yield hit


def _placeholder_password(value: str) -> bool:
    v = value.strip(".,;:!?)]}").lower()
    return (
        len(v) < 3
        or v in _NOT_PASSWORDS
        or is_placeholder_text(v)
        or v.startswith(("$", "%", "env:", "vault:", "op://", "[redacted"))
    )


def is_placeholder_text(value: str) -> bool:
    """A placeholder in words: `<password>`, `${DB_PASS}`, `****`, `xxxx`, `your-password`."""
    return bool(PLACEHOLDER_WORDS.search(value)) or len(set(value)) <= 2


def _connection_strings(text: str) -> Iterator[Hit]:
    for m in _CONN.finditer(text):
        pw = m.group("password")
        if _placeholder_password(pw) or pw.lower() in {"pass", "pwd", "user", "root", "admin"}:
            continue
        if reserved_domain(m.group("host")):
            continue
        yield Hit("connection-string", m.start("password"), m.end("password"), pw)
    for m in _ODBC_PASSWORD.finditer(text):
        pw = m.group("password")
        if ("server=" in text.lower() or "host=" in text.lower()) and not _placeholder_password(pw):
            yield Hit("connection-string", m.start("password"), m.end("password"), pw)


def _cards(text: str) -> Iterator[Hit]:
    for m in _CARD.finditer(text):
        raw = m.group(0)
        seps = set(re.findall(r"[ -]", raw))
        if len(seps) > 1:
            continue  # mixed separators: a phone number or a list of numbers
        digits = re.sub(r"\D", "", raw)
        groups = [len(g) for g in re.split(r"[ -]", raw)]
        if seps and not _card_grouping(groups):
            continue  # grouped unlike a card (an account number, a list of figures)
        if re.search(r"[A-Z]{2}\d{2} ?$", text[max(0, m.start() - 5) : m.start()]):
            continue  # the tail of an IBAN
        if not 13 <= len(digits) <= 19 or digits[0] not in "23456" or not luhn_ok(digits):
            continue
        before = text[max(0, m.start() - 12) : m.start()].lower()
        if "isbn" in before or (len(digits) == 13 and digits.startswith(("978", "979"))):
            continue  # an ISBN-13
        yield Hit("card-number", m.start(), m.end(), raw)


def _card_grouping(groups: list[int]) -> bool:
    """Card numbers print as 4-4-4-4(-1..3), or 4-6-5 / 4-6-4 (Amex, Diners)."""
    if groups in ([4, 6, 5], [4, 6, 4]):
        return True
    return (
        len(groups) >= 4
        and all(g == 4 for g in groups[:4])
        and all(1 <= g <= 4 for g in groups[4:])
        and len(groups) <= 5
        and (len(groups) == 4 or groups[4] == 3)
    )


def _ibans(text: str) -> Iterator[Hit]:
    for m in _IBAN.finditer(text):
        raw = m.group(0)
        if iban_ok(raw.replace(" ", "")):
            yield Hit("iban", m.start(), m.end(), raw)


#: Local parts that name a service, not a person (`git@github.com:org/repo`).
_SERVICE_LOCAL = re.compile(r"(?i)^(?:git|noreply|no-reply|donotreply|do-not-reply|mailer-daemon)$")


def _emails(text: str) -> Iterator[Hit]:
    for m in _EMAIL.finditer(text):
        local = m.group(0).split("@", 1)[0]
        domain = m.group("domain")
        if reserved_domain(domain) or _SERVICE_LOCAL.match(local):
            continue
        if domain.lower().endswith("users.noreply.github.com"):
            continue
        if text[max(0, m.start() - 3) : m.start()].endswith("://") or (
            m.start() > 0 and text[m.start() - 1] == ":"
        ):
            continue  # the user:password@host of a URL, reported as a connection string
        if is_placeholder(local) and len(local) > 3 and "your" in local.lower():
            continue
        yield Hit("email", m.start(), m.end(), m.group(0))


def _phone_ok(raw: str) -> bool:
    digits = re.sub(r"\D", "", raw)
    if not 7 <= len(digits) <= 15 or fictional_phone(digits):
        return False
    if re.search(r"\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}", raw) or re.fullmatch(r"[\d.]+", raw.strip()):
        return False  # a date or a version / IP address
    return len(set(digits)) > 2


def _phones(text: str) -> Iterator[Hit]:
    seen: list[tuple[int, int]] = []
    for pattern, group in ((_PHONE_INTL, 0), (_PHONE_NANP, 0), (_PHONE_WORD, "number")):
        for m in pattern.finditer(text):
            start, end = m.start(group), m.end(group)
            raw = text[start:end].rstrip(" .-(")
            end = start + len(raw)
            if any(s < end and start < e for s, e in seen) or not _phone_ok(raw):
                continue
            seen.append((start, end))
            yield Hit("phone", start, end, raw)


def _passwords(text: str, field: str) -> Iterator[Hit]:
    for pattern in (_PASSWORD, _PIN):
        for m in pattern.finditer(text):
            groups = m.groupdict()
            if (groups.get("kw") or "").lower() in ("pw", "pwd") and groups.get("sep") == ":":
                continue  # `pw:api` is a log prefix (Playwright); `pw: x` is a password
            group = next(g for g in ("dq", "sq", "cq", "value") if groups.get(g))
            value = m.group(group)
            # Sentence punctuation is not part of the password; `!` and `?` often are.
            trimmed = value if group != "value" else value.rstrip(".,;:)]}")
            if _placeholder_password(trimmed):
                continue
            start = m.start(group)
            yield Hit("password", start, start + len(trimmed), trimmed)
    name = re.sub(r"\[\d+\]$", "", field.rsplit(".", 1)[-1])
    value = text.strip()
    if (
        _PASSWORD_FIELD.match(name)
        and value
        and "\n" not in value
        and not _placeholder_password(value)
    ):
        start = text.index(value)
        yield Hit("password", start, start + len(value), value)


def credential_value_ok(value: str) -> bool:
    """A value written after a credential name looks random enough to be a real one."""
    v = value.strip(".,;:")
    if len(v) < 16 or is_placeholder(v) or _placeholder_password(v):
        return False
    if re.fullmatch(r"\d+|[\d.]+", v) or re.fullmatch(r"[a-z]+(?:[_-][a-z]+)*", v):
        return False  # a number, a version, or words (`token: refresh-on-expiry`)
    hexish = re.fullmatch(r"[0-9a-fA-F]+", v) is not None
    return shannon_entropy(v) >= (3.0 if hexish else 3.5)


def _generic(text: str, field: str) -> Iterator[Hit]:
    for pattern in (_ASSIGNMENT, _BEARER):
        for m in pattern.finditer(text):
            value = m.group("value").rstrip(".,;:")
            if credential_value_ok(value):
                start = m.start("value")
                yield Hit("generic-secret", start, start + len(value), value)
    name = field.rsplit(".", 1)[-1]
    name = re.sub(r"\[\d+\]$", "", name)
    # A field named like a credential whose whole value is one random-looking token.
    value = text.strip()
    if _CREDENTIAL_FIELD.match(name) and credential_value_ok(value) and " " not in value:
        start = text.index(value)
        yield Hit("generic-secret", start, start + len(value), value)


#: Each detector with a cheap test of the lowercased text that it needs to run at
#: all (a substring every match contains): a 100 KB body without `@` never runs
#: the e-mail pattern.  None: always run.
_DETECTORS: tuple[tuple[Callable[[str], Iterator[Hit]], tuple[str, ...] | None], ...] = (
    (_private_keys, ("private key",)),
    (lambda t: _tokens("aws-key", _AWS, t), ("akia", "asia", "abia", "acca", "aroa", "aida")),
    (lambda t: _tokens("github-token", _GITHUB, t), ("gh", "github_pat_")),
    (lambda t: _tokens("slack-token", _SLACK, t), ("xox", "xapp-", "hooks.slack.com")),
    (lambda t: _tokens("stripe-key", _STRIPE, t), ("_live_", "_test_")),
    (lambda t: _tokens("anthropic-key", _ANTHROPIC, t), ("sk-ant-",)),
    (lambda t: _tokens("openai-key", _OPENAI, t), ("sk-",)),
    (_jwts, ("eyj",)),
    (_connection_strings, ("://", "password", "pwd")),
    (_cards, None),
    (_ibans, None),
    (_emails, ("@",)),
    (_phones, None),
)
_PASSWORD_WORDS = ("pass", "pw", "kennwort", "contraseña", "pin")
_CREDENTIAL_WORDS = ("key", "secret", "token", "credential", "bearer")


def detect(text: str, field: str = "") -> list[Hit]:
    """Every secret in `text` (field `field` of a memory), without overlaps, in text order.

    Where two detectors claim the same characters the earlier kind in
    `KINDS` wins (a key inside a private-key block is part of that block; a
    password inside a connection string is the connection string's).
    """
    found: list[Hit] = []
    low = text.lower()
    for detector, needs in _DETECTORS:
        if needs is None or any(n in low for n in needs):
            found.extend(detector(text))
    name = field.lower()
    if any(w in low or w in name for w in _CREDENTIAL_WORDS):
        found.extend(_generic(text, field))
    if any(w in low or w in name for w in _PASSWORD_WORDS):
        found.extend(_passwords(text, field))
    rank = {k: i for i, k in enumerate(KINDS)}
    kept: list[Hit] = []
    for hit in sorted(found, key=lambda h: (rank[h.kind], h.start)):
        if hit.end > hit.start and all(hit.end <= k.start or k.end <= hit.start for k in kept):
            kept.append(hit)
    return sorted(kept, key=lambda h: (h.start, h.end))


__all__ = [
    "KINDS",
    "PERSONAL_KINDS",
    "Hit",
    "credential_value_ok",
    "detect",
    "fictional_phone",
    "iban_ok",
    "is_placeholder",
    "jwt_ok",
    "luhn_ok",
    "reserved_domain",
    "shannon_entropy",
]
