"""The detectors: one regular expression per kind of secret, each with a check of its own.

Every detector finds candidates with a pattern and keeps only those that
pass a check that a random string or a piece of documentation fails: the
Luhn sum for card numbers, mod-97 for IBANs, a header that decodes to JSON
for JWTs, a key body for private keys, a password in a connection string,
a real-looking domain for e-mail, and for every token a test that it is not
a placeholder (`sk-...`, `<your-token>`, `xxxx`, `YOUR_API_KEY`, `${ENV}`,
`EXAMPLE`, `1234567890`).  Commit hashes, UUIDs, checksums, versions, dates
and ISBNs match none of the patterns of the kinds that have fixed shapes
(`vendors`: each vendor's prefix and body), and the generic detector only
looks at a value written right after a credential name (`api_key = ...`,
`client_secret: ...`, `Authorization: Bearer ...`).

Why our own patterns rather than detect-secrets' plugins: see README
("Dependencies"); the kinds here are the ones the issue lists, each with
its false-positive rules written down next to it.  This module holds the
credentials and `detect`, which runs them all; passwords (`passwords`) and
personal data (`personal`) have modules of their own, as do the vendors'
token shapes (`vendors`) and the word lists (`words`).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator

from .checks import (
    documentation_domain,
    fictional_phone,
    has_sequence_run,
    iban_ok,
    is_placeholder,
    jwt_ok,
    luhn_ok,
    reserved_domain,
    shannon_entropy,
    wif_ok,
)
from .matching import Hit, anchored, field_name, hits, starts
from .passwords import (
    PLACEHOLDER_PASSWORDS,
    credential_value_ok,
    is_placeholder_text,
    passwords,
    placeholder_password,
    tables,
)
from .personal import cards, emails, ibans, phone_field, phone_tables, phones
from .samples import documented_sample, published_token
from .vendors import AWS_KEY_ID, KEYWORD_SHAPES, TOKEN_GATE, TOKEN_SHAPES, WORD_END, WORD_START
from .words import FOR_WORDS

#: Every kind a finding can have, in report order.
KINDS: tuple[str, ...] = (
    "private-key",
    "aws-key",
    "github-token",
    "slack-token",
    "stripe-key",
    "openai-key",
    "anthropic-key",
    "api-token",
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


# -- the detectors --------------------------------------------------------------

_PRIVATE_KEY = re.compile(
    r"-----BEGIN ((?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?)-----"
    r"(?P<body>.*?)(?:-----END \1-----|\Z)",
    re.DOTALL,
)
#: PuTTY's key file: its private part is the base64 after `Private-Lines: N`, and the
#: file ends with the MAC over it (kept with the key: one block to redact).
_PUTTY_KEY = re.compile(
    r"PuTTY-User-Key-File-\d: [^\n]*\n(?:[^\n]*\n){0,40}?Private-Lines: \d+\n"
    r"(?:[A-Za-z0-9+/=]{16,}\n?)+(?:Private-MAC: [0-9a-f]{40,64})?"
)
#: A PEM block's first line is base64 or an RFC 1421 header (`Proc-Type: 4,ENCRYPTED`,
#: PGP's `Comment: ...`); in prose ("files starting with -----BEGIN ... KEY----- must
#: be ...") it is words.  `\n` written as two characters: the JSON of a GCP key; none:
#: a key pasted on one line; `> ` before each line: a key quoted in Markdown.
_KEY_BODY_START = re.compile(
    r"[ \t]*(?:\r?\n|\\n)?[ \t]*(?:>[ \t]?)*(?:[A-Za-z0-9+/=]{16}|[A-Za-z-]+: |\r?\n|\\n)"
)
#: A PEM private key written in base64 as a whole (Kubernetes secrets' `tls.key:`):
#: `LS0tLS1CRUdJTi` is `-----BEGIN` encoded.
_B64_PEM = re.compile(r"(?<![A-Za-z0-9+/])LS0tLS1CRUdJTi[A-Za-z0-9+/]{40,}={0,2}")
#: An AWS secret access key: 40 characters of base64, after its key id.
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_JWT = re.compile(
    WORD_START + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}" + WORD_END
)
#: An encrypted JWT (JWE, RFC 7516): five parts, the key empty for `alg: dir`
#: (NextAuth's session cookie).
_JWE = re.compile(
    WORD_START + r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
    r"\.[A-Za-z0-9_-]{8,}" + WORD_END
)
_CONN = re.compile(
    r"(?i)\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|redis|rediss|amqps?|mssql|"
    r"sqlserver|oracle|ftps?|sftp|smtp|smtps|imaps?|ldaps?|couchdb|neo4j|clickhouse|"
    r"snowflake|cockroachdb|jdbc:[a-z]+|https?|wss?|ssh|git|svn|mqtts?|nats|kafka|rtsps?|"
    r"smb|webdavs?)(?:\+[a-z0-9]+)?://"  # SQLAlchemy's `postgresql+psycopg2://`
    r"(?P<user>[^\s:/@'\"]*):(?P<password>[^\s@/'\"]+)@(?P<host>[^\s/:'\"?#]+)"
)
#: `password=` in a URL's query (`jdbc:postgresql://db/app?user=app&password=...`).
_URL_PASSWORD = re.compile(
    r"(?i)://[^\s'\"]*?[?&;](?:password|passwd|pwd|pass)=(?P<password>[^&\s;'\"#]+)"
)
#: ADO.NET / ODBC / JDBC key=value strings, and Azure's account keys.
_ODBC_PASSWORD = re.compile(
    r"(?im)(?:^|;)[ \t]*(?:password|pwd|accountkey|sharedaccesskey)[ \t]*=[ \t]*"
    r"(?P<password>[^;\s'\"]+)"
)
_ODBC_CONTEXT = re.compile(
    r"(?i)(?:^|;|\s)(?:server|host|data source|user id|uid|username|database|initial catalog|"
    r"dsn|accountname|accountendpoint|endpoint|defaultendpointsprotocol)\s*="
)
#: An Azure shared access signature: the `sig` of a URL that has a `sv` (version).
_SAS = re.compile(r"(?i)https://[^\s'\"]*?[?&]sig=(?P<password>[A-Za-z0-9%+/=]{20,})")
_CREDENTIAL_NAME = (
    r"(?:[A-Za-z0-9]+[_.-])*(?:api[_ -]?key|apikey|secret(?:[_ -]?key)?|client[_ -]?secret|"
    r"access[_ -]?key(?:[_ -]?id)?|secret[_ -]?access[_ -]?key|auth[_ -]?token|"
    r"access[_ -]?token|refresh[_ -]?token|bearer[_ -]?token|token|private[_ -]?key|"
    r"signing[_ -]?(?:key|secret)|session[_ -]?key|credentials?|app[_ -]?key|"
    r"webhook[_ -]?secret|account[_ -]?key|master[_ -]?key|encryption[_ -]?key|_auth(?:Token)?|"
    r"session[_ -]?token|security[_ -]?token|sas[_ -]?token|auth[_ -]?key)"
)
#: Where a credential name may begin: after no letter or digit, or where a
#: camel-cased name turns to it (`SessionToken`, `githubToken`).
_NAME_START = r"(?:(?<![A-Za-z0-9])|(?-i:(?<=[a-z0-9])(?=[A-Z])))"
_ASSIGNMENT = re.compile(
    r"(?i)"
    + _NAME_START
    + _CREDENTIAL_NAME
    # what it is for, on the same line: "the auth token for the SMS relay is ..."
    + r"(?P<purpose>[ \t]+(?:"
    + FOR_WORDS
    + r")(?:[ \t]+[\w.@-]+){1,4}?)?"
    # which one, and a remark: `Storage account key 2 (backup): ...`
    + r"(?:[ \t]+\d)?(?:[ \t]+\([^()\n]{1,30}\))?"
    # (after it, a line break only before an indented value: `NAME=` with nothing,
    # then the next `OTHER=...` line, is no value)
    + r"[\"']?\s*(?:=|:|=>|\bis\b|\bwas\b|[\u2013\u2014])[ \t]*(?:\r?\n[ \t]+)?"
    # quoted, any printable characters (Django's `SECRET_KEY = '...&x=(b)@...'`); bare,
    # those of tokens and base64, after Laravel's `base64:` (`APP_KEY=base64:...`).
    # No upper bound: an STS session token or a SAS is 300-1,000 characters, and
    # a redaction must take all of them.
    r"(?:(?P<q>[\"'`])(?P<quoted>[^\s\"'`\\]{16,})(?P=q)"
    r"|[\"'`]?(?:base64:)?(?P<value>[A-Za-z0-9+/=_.~-]{16,}))"
)
_BEARER = re.compile(r"(?i)\b(?:bearer|token|ssws)[ \t]+(?P<value>[A-Za-z0-9+/=_.~-]{20,})")
#: A credential name and its value with nothing between: "the webhook secret Zq7L... rotated".
#: Only a value drawn at random passes (`_random_run`): prose follows names too.
_BARE = re.compile(
    r"(?i)" + _NAME_START + _CREDENTIAL_NAME + r"[ \t]+(?P<value>[A-Za-z0-9+/=_~-]{20,})"
    # its end: not inside a longer token (a dot ending the sentence is fine)
    r"(?![\w-]|\.\w)"
)
#: HTTP basic authentication: base64 of `user:password`.
_BASIC = re.compile(r"\bBasic\s+(?P<value>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])")
#: A key in a URL's query under a name APIs give it (`?appid=...`, `&key=...`,
#: `X-Amz-Signature=...`); names `_ASSIGNMENT` already reads (`api_key=`) come too.
_URL_KEY = re.compile(
    r"(?i)://[^\s'\"]*?[?&;](?:appid|app_id|key|apikey|api[_-]?key|access[_-]?token|token|"
    r"auth|auth[_-]?token|client[_-]?secret|secret|x-amz-signature|signature)="
    r"(?P<value>[A-Za-z0-9_\-.~%+/]{16,})"
)
#: Tokens that are positions, not credentials: a page or a sync cursor, a request's
#: or an idempotency key's id (`page_token=CiAK...`, `nextToken`, `continuation_token`).
_POSITION_NAME = (
    r"(?i)(?:page|next|next[_-]?page|continuation|pagination|cursor|resume|sync|delta|"
    r"idempotency|request|trace|correlation|change|etag)[_. -]?token"
)
_POSITION_TOKEN = re.compile(_POSITION_NAME + r"[\"']?\s*(?:=|:|=>)\s*[\"'`]?$")
_POSITION_FIELD = re.compile(_POSITION_NAME + "$")
#: What a token "for ..." is for when it is a position: "the token for the next page".
_POSITION_PURPOSE = re.compile(
    r"(?i)\b(?:page|pages|cursor|next|continuation|pagination|resume|sync|batch|chunk|"
    r"request|trace|idempotency|offset)\b"
)
_CREDENTIAL_FIELD = re.compile(r"(?i)^" + _CREDENTIAL_NAME + r"$")
_AWS_SECRET_NAME = re.compile(r"(?i)secret[_ -]?access[_ -]?key")


#: The first word of every credential name (`_CREDENTIAL_NAME`), and `_BEARER`'s.
_CREDENTIAL_STARTS = starts(
    "api|apikey|secret|client|access|auth|refresh|bearer|token|private|signing|session|"
    "credential|app|webhook|account|master|encryption|_authtoken|_auth|security|sas"
)
_BEARER_STARTS = starts("bearer|token|ssws")


#: A run of 20 or more characters a token is written in: every vendor's token is one.
_TOKENISH = re.compile(r"[A-Za-z0-9_\-.+/=~:$]{20,}")


def _tokens(text: str) -> Iterator[Hit]:
    """Vendors' tokens (fixed prefix and body) that are not placeholders nor words.

    The vendors' prefixes are looked for only in the text's long runs of
    token characters (a fraction of prose), each shape's pattern only in a
    text holding one of its prefixes.  A body of lowercase words joined by
    `-` (`sk-learn-compatible-estimators`) is a name: every issued token
    has digits or capitals.
    """
    runs = " ".join(_TOKENISH.findall(text))
    if not runs:
        return
    low = text.lower()
    keyed = [s for s in KEYWORD_SHAPES if any(n in low for n in s.needles)]
    if not keyed and not TOKEN_GATE.search(runs):
        return
    for shape in (*TOKEN_SHAPES, *keyed):
        if shape in keyed or any(n in runs for n in shape.needles):
            for hit in hits(shape.kind, shape.pattern, text):
                words = re.fullmatch(r"[a-z]+(?:[-_][a-z]+)+", hit.secret)
                if not words and not is_placeholder(hit.secret):
                    yield hit


def _aws_secrets(text: str) -> Iterator[Hit]:
    """A secret access key written after its key id, on its line or the next.

    `key AKIA... / secret wJalr...`: the pair is how AWS hands out and people
    paste credentials; 40 base64 characters right after a key id are its secret.
    """
    for key in AWS_KEY_ID.pattern.finditer(text):
        window = "\n".join(text[key.end() : key.end() + 160].split("\n")[:2])
        for m in _AWS_SECRET.finditer(window):
            value = m.group(0)
            mixed = re.search(r"[a-z]", value) and re.search(r"[A-Z]", value)
            if mixed and re.search(r"\d", value) and not is_placeholder(value):
                yield Hit("aws-key", key.end() + m.start(), key.end() + m.end(), value)


#: Markdown's quote marks at the start of a line (`> `, `>> `).
_QUOTE_MARKS = re.compile(r"(?m)^[ \t]*(?:>[ \t]?)+")
#: A stand-in for a key's body in documentation: `...`, `<your key>`, `XXXX`,
#: `EXAMPLE`, or a placeholder word standing apart.  Not `is_placeholder`'s
#: test of any word in any case: 1,600 random characters hold `yoUR` too often.
_KEY_PLACEHOLDER = re.compile(
    r"\.\.\.|…|<|>|\*\*\*|xxxx|XXXX|EXAMPLE|example|SAMPLE|sample|PLACEHOLDER|placeholder"
    r"|(?i:(?<![a-z])(?:your|fake|dummy|redacted|changeme)(?![a-z]))"
)


def _private_keys(text: str) -> Iterator[Hit]:
    pos = 0
    while m := _PRIVATE_KEY.search(text, pos):
        raw = m.group("body")
        if not _KEY_BODY_START.match(raw):
            pos = m.start() + 11  # a mention in prose: the next BEGIN may be a key
            continue
        pos = m.end()
        body = re.sub(r"[^A-Za-z0-9+/=]", "", raw)
        # A key body is long base64; "-----BEGIN PRIVATE KEY----- ... -----END" in
        # documentation has none.
        unquoted = _QUOTE_MARKS.sub("", raw)  # `> ` before each line: not a placeholder's `>`
        if len(body) >= 40 and not _KEY_PLACEHOLDER.search(unquoted) and not has_sequence_run(body):
            yield Hit("private-key", m.start(), m.end(), m.group(0))
    for m in _PUTTY_KEY.finditer(text):
        yield Hit("private-key", m.start(), m.end(), m.group(0))
    if "LS0tLS1CRUdJTi" in text:
        for m in _B64_PEM.finditer(text):
            try:
                pem = base64.b64decode(m.group(0) + "=" * (-len(m.group(0)) % 4)).decode("ascii")
            except (binascii.Error, ValueError):
                continue
            if any(True for _ in _private_keys(pem)):
                yield Hit("private-key", m.start(), m.end(), m.group(0))


#: A Bitcoin key in wallet import format (`wif_ok` checks its checksum): 51 characters
#: from `5` (mainnet) or `9` (testnet), 52 from `K`, `L` or `c` (compressed).
_WIF = re.compile(
    r"(?<![1-9A-HJ-NP-Za-km-z])(?:[59][1-9A-HJ-NP-Za-km-z]{50}|[KLc][1-9A-HJ-NP-Za-km-z]{51})"
    r"(?![1-9A-HJ-NP-Za-km-z])"
)


def _wif_keys(text: str) -> Iterator[Hit]:
    # A key is one run of 51+ characters without a space: most texts have none
    # (splitting is C; the pattern steps through every character).
    if max(map(len, text.split()), default=0) < 51:
        return
    for m in _WIF.finditer(text):
        if wif_ok(m.group(0)):
            yield Hit("private-key", m.start(), m.end(), m.group(0))


def _jwts(text: str) -> Iterator[Hit]:
    for hit in (*hits("jwt", _JWT, text), *hits("jwt", _JWE, text)):
        if jwt_ok(hit.secret):
            yield hit


def _sample(text: str, hit: Hit) -> bool:
    """A vendor's published sample quoted as one (`Stripe's test key sk_test_4eC3...`)."""
    return published_token(hit.secret) and documented_sample(text, hit.start, hit.end)


def _line_of(text: str, m: re.Match[str]) -> str:
    """The line holding the match: a key=value string is one line."""
    return text[text.rfind("\n", 0, m.start()) + 1 : text.find("\n", m.end()) % (len(text) + 1)]


def _connection_strings(text: str) -> Iterator[Hit]:
    for m in _CONN.finditer(text):
        pw = m.group("password")
        if placeholder_password(pw) or pw.lower() in PLACEHOLDER_PASSWORDS:
            continue
        if "[" in pw or "]" in pw:
            continue  # URL syntax in documentation (`git://[path[:]][ref@]`): `[]` are escaped
        if documentation_domain(m.group("host")):
            continue
        yield Hit("connection-string", m.start("password"), m.end("password"), pw)
    # key=value strings: only where another key says it is one (`Server=`, `Host=`).
    odbc = (m for m in _ODBC_PASSWORD.finditer(text) if _ODBC_CONTEXT.search(_line_of(text, m)))
    sas = _SAS.finditer(text) if re.search(r"(?i)[?&]sv=", text) else iter(())
    for pattern_matches in (_URL_PASSWORD.finditer(text), odbc, sas):
        for m in pattern_matches:
            pw = m.group("password")
            if not placeholder_password(pw) and pw.lower() not in PLACEHOLDER_PASSWORDS:
                yield Hit("connection-string", m.start("password"), m.end("password"), pw)


def _basic_auth_ok(value: str) -> bool:
    """`Basic <base64>` that decodes to `user:password` (not to a placeholder)."""
    try:
        plain = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("ascii")
    except (binascii.Error, ValueError):
        return False
    user, colon, password = plain.partition(":")
    return bool(colon and user and plain.isprintable()) and not placeholder_password(password)


def _url_keys(text: str) -> Iterator[Hit]:
    for m in _URL_KEY.finditer(text):
        value = m.group("value")
        if credential_value_ok(value, False):
            yield Hit("generic-secret", m.start("value"), m.end("value"), value)


def _random_run(value: str) -> bool:
    """Drawn at random: upper and lower case letters and digits at 4 bits a character,
    or one case with digits as API secrets are issued (32 hex characters: Mixpanel,
    Amplitude, Algolia; 30 lowercase: Twitch).  Not a SHA-1 or SHA-256 (40, 64 hex)."""
    digits = re.search(r"\d", value) is not None
    cased = re.search(r"[a-z]", value) and re.search(r"[A-Z]", value)
    if cased:
        return digits and shannon_entropy(value) >= 4.0
    if re.fullmatch(r"[0-9a-f]+", value):
        return len(value) == 32 and shannon_entropy(value) >= 3.5
    return digits and value.islower() and len(value) >= 24 and shannon_entropy(value) >= 4.0


#: A key said to be public: "the search-only API key ... is public", a publishable key.
_PUBLIC_KEY = re.compile(r"(?i)\b(?:public|publishable|search-only)\b")


def _bare_values(text: str) -> Iterator[Hit]:
    for m in anchored(_BARE, _CREDENTIAL_STARTS, text):
        value = m.group("value")
        around = text[max(0, m.start() - 24) : m.start()] + text[m.end() : m.end() + 16]
        if _random_run(value) and credential_value_ok(value) and not _PUBLIC_KEY.search(around):
            yield Hit("generic-secret", m.start("value"), m.end("value"), value)


def _generic(text: str, field: str) -> Iterator[Hit]:
    yield from _bare_values(text)
    basic = _BASIC.finditer(text)
    for matches in (
        anchored(_ASSIGNMENT, _CREDENTIAL_STARTS, text),
        anchored(_BEARER, _BEARER_STARTS, text),
        basic,
    ):
        for m in matches:
            group = "quoted" if matches is not basic and m.groupdict().get("quoted") else "value"
            value = m.group(group) if group == "quoted" else m.group("value").rstrip(".,;:")
            quoted = group == "quoted"
            ok = _basic_auth_ok(value) if matches is basic else credential_value_ok(value, quoted)
            if ok and matches is not basic:
                # `page_token=...`, "the token for the next page is ...": where a
                # listing goes on, not a secret.
                ok = not _POSITION_TOKEN.search(text[max(0, m.start() - 24) : m.start(group)])
                purpose = m.groupdict().get("purpose")
                ok = ok and not (purpose and _POSITION_PURPOSE.search(purpose))
            if ok:
                start = m.start(group)
                # `aws_secret_access_key = ...`, `"SecretAccessKey": ...`, "the AWS
                # secret key is ...": AWS's secret (its own name for it, or AWS named).
                named = text[max(0, m.start() - 24) : start]
                named_aws = "aws" in named.lower() or _AWS_SECRET_NAME.search(named) is not None
                kind = "aws-key" if named_aws and len(value) == 40 else "generic-secret"
                yield Hit(kind, start, start + len(value), value)
    name = field_name(field)
    # A field named like a credential whose whole value is one random-looking token.
    value = text.strip()
    if (
        _CREDENTIAL_FIELD.match(name)
        and not _POSITION_FIELD.match(name)
        and credential_value_ok(value)
        and " " not in value
    ):
        start = text.index(value)
        # `aws: {secret_access_key: ...}`, `aws_secret_access_key: ...`: AWS's secret.
        named_aws = _AWS_SECRET_NAME.search(name) is not None or "aws" in field.lower()
        kind = "aws-key" if named_aws and len(value) == 40 else "generic-secret"
        yield Hit(kind, start, start + len(value), value)


#: Each detector with a cheap test of the lowercased text that it needs to run at
#: all (a substring every match contains): a 100 KB body without `@` never runs
#: the e-mail pattern.  None: always run.  The vendors' tokens test their own.
_DETECTORS: tuple[tuple[Callable[[str], Iterator[Hit]], tuple[str, ...] | None], ...] = (
    (_private_keys, ("private key", "putty-user-key-file", "ls0tls1crudjti")),
    (_aws_secrets, ("akia", "asia", "abia", "acca", "aroa", "aida")),
    (_jwts, ("eyj",)),
    (_wif_keys, None),
    (_connection_strings, ("://", "password", "pwd", "accountkey", "sharedaccesskey")),
    (_url_keys, ("://",)),
    (tables, ("---",)),
    (phone_tables, ("---",)),
    (cards, None),
    (ibans, None),
    (emails, ("@", "at]", "at)", "at}", "at ]", "at )", " dot ")),
    (phones, None),
)
#: Substrings a text (or its field's name) holds for the password rules to run.
_PASSWORD_NEEDLES = (
    "pass", "pw", "kennwort", "contraseña", "contrasena", "pin", "mdp", "clave", "senha",
    "wachtwoord", "lösenord", "salasana", "adgangskode", "hasło", "haslo", "heslo", "jelszó",
    "пароль", "parola", "密码", "密碼", "パスワード", "비밀번호", "암호", "curl", "mysql",
    "phrase", "mnemonic", "şifre", "wpa", "wifi key", "wi-fi key", "wlan", "login", "log-in",
    "log in", "sign-in", "signin", "sign in", "cred",
)  # fmt: skip
_CREDENTIAL_NEEDLES = ("key", "secret", "token", "credential", "bearer", "basic", "ssws", "_auth")
_PHONE_FIELD_NEEDLES = ("phone", "mobile", "cell", "tel", "fax", "whatsapp", "handy")


def detect(text: str, field: str = "") -> list[Hit]:
    """Every secret in `text` (field `field` of a memory), without overlaps, in text order.

    Where two detectors claim the same characters the earlier kind in
    `KINDS` wins (a key inside a private-key block is part of that block; a
    password inside a connection string is the connection string's).
    """
    low = text.lower()
    found: list[Hit] = list(_tokens(text))
    for detector, needs in _DETECTORS:
        if needs is None or any(n in low for n in needs):
            found.extend(detector(text))
    name = field.lower()
    if any(w in low or w in name for w in _CREDENTIAL_NEEDLES):
        found.extend(_generic(text, field))
    if any(w in low or w in name for w in _PASSWORD_NEEDLES):
        found.extend(passwords(text, field))
    if any(w in name for w in _PHONE_FIELD_NEEDLES):
        found.extend(phone_field(text, field))
    rank = {k: i for i, k in enumerate(KINDS)}
    kept: list[Hit] = []
    found = [h for h in found if not _sample(text, h)]
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
    "is_placeholder_text",
    "jwt_ok",
    "luhn_ok",
    "reserved_domain",
    "shannon_entropy",
]
