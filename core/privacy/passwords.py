"""Passwords written as values: in prose, in fields, in tables and on command lines.

Split out of `detectors`: a password has no shape of its own, so these
rules read what is around it (a word naming it and a separator, a field or
a column named for it, a command's password option), and drop values that
are words of prose, placeholders, or say where the password is instead
(`see 1Password`, `${DB_PASSWORD}`, `os.environ[...]`, `/home/mara`).
`credential_value_ok` is the test of a value written after a credential
name, shared with the generic detector.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

from .checks import PLACEHOLDER_WORDS, is_code_reference, is_placeholder, shannon_entropy
from .matching import Hit, anchored, field_name, starts, table_cells, unwrap_cell
from .words import (
    COPULAS,
    FOR_WORDS,
    NOT_PASSWORDS,
    PASSWORD_WORD_PASS,
    PASSWORD_WORDS_CJK,
    PASSWORD_WORDS_LONG,
    PASSWORD_WORDS_SHORT,
    PROSE_WORDS,
)

#: Markdown emphasis around the word or after the separator: `**Password:** x`.
_EMPHASIS = r"(?:\*\*?|__?)?"
_PW_SEP = (
    # `password: x`, `password = x`, `password is: x`, `password -> x`
    # (after `=` on its line; after `:` on the next at the latest: `Password:\n    x`, but
    # not past a blank line: `password=` with nothing, then another paragraph)
    r"(?P<sep>(?:\s+(?:is|was))?\s*(?:=[^\S\r\n]*|(?:[:：]|->|=>|→)[^\S\r\n]*(?:\r?\n[ \t]*)?)"
    + _EMPHASIS
    + r"[^\S\r\n]*(?:now\s+)?"
    # `the password is x`, `is now x`, `was changed to x`, `ist x`, `es x`
    # (on the word's line: `... password to x for now` then a paragraph is not `now: y`)
    r"|[^\S\r\n]+(?:" + COPULAS + r")[^\S\r\n]+(?:(?:now|still|currently)[^\S\r\n]+)?"
    # `was changed to x`, `was changed from x to y`
    r"(?:(?:set|changed|reset|updated|rotated)\s+(?:to|from)\s+)?"
    r"|[^\S\r\n]+(?:(?:set|changed|reset|updated|rotated)\s+(?:to|from)|now)[^\S\r\n]+"
    # `I set the password to x`: a value with a digit or a symbol (not `to the VPN`)
    r"|\s+to\s+(?=[^\s]*[\d!#$%&*?@])"
    # `*password* - x` in a list, on its line
    r"|[ \t]+[-–—][ \t]+"
    # CJK: `密码是x`, `パスワードはx`, without spaces
    r"|\s*(?:是|为|為|は)\s*"
    # a quoted value right after the word: `passphrase 'correct horse battery staple'`
    r"|[ \t]+(?=[\"'“‘`«「])"
    # nothing at all: `root password hunter2` (`_bare_value_ok` decides)
    r"|(?P<bare>[ \t]+)(?=[^\s\"'`]*\d))"
)
#: The value, quoted or to the next space (or CJK script: `パスワードはx です` has none);
#: no upper bound (a generated password may be long; a redaction takes all of it).
_PW_VALUE = (
    r"(?:\"(?P<dq>[^\"\n]{3,})\"|'(?P<sq>[^'\n]{3,})'|“(?P<cq>[^”\n]{3,})”"
    # French guillemets and Japanese corner brackets: `« Calanque_73! »`, `「Momiji_2026」`
    r"|«[ \t\u00a0]?(?P<gq>[^»\n]{3,}?)[ \t\u00a0]?»|「(?P<jq>[^」\n]{3,})」"
    r"|‘(?P<csq>[^’\n]{3,})’|`?(?P<value>[^\s\"'`”’\u3000-\u30ff\u4e00-\u9fff\uff00-\uffef]{3,}))"
)
#: Starts at the word; the long words also end compounds (`Zugangspasswort`), not `1Password`.
_PASSWORD = re.compile(
    r"(?i)(?P<kw>(?<![0-9])(?:" + PASSWORD_WORDS_LONG + r")"
    r"|(?<![A-Za-z0-9])(?:" + PASSWORD_WORDS_SHORT + "|" + PASSWORD_WORD_PASS + r")(?![\w-])"
    r"|" + PASSWORD_WORDS_CJK + r")"
    # what it is for, on the same line: `password for the NAS: x`, `... for the export GPG key: x`
    r"(?:[ \t]+(?:" + FOR_WORDS + r")(?:[ \t]+[\w.@-]+){1,4}?)?"
    # a remark (`password (temporary): x`), then the closing quote of a JSON or Python
    # key (`"password": "x"`)
    r"(?P<remark>[ \t]+\([^()\n]{1,30}\))?[\"']?" + _EMPHASIS + _PW_SEP + _PW_VALUE
)
_PASSWORD_STARTS = starts(
    PASSWORD_WORDS_LONG, PASSWORD_WORDS_SHORT, PASSWORD_WORD_PASS, PASSWORD_WORDS_CJK
)
#: Field names whose whole value is a password.
_PASSWORD_FIELD = re.compile(
    r"(?i)^(?:[a-z0-9]+[_.-])*(?:password|passwd|passphrase|passwort|kennwort|senha|"
    r"contrasena|pwd|pw|pass|mdp)$"
)
#: A PIN: 4-8 digits after `PIN is`, `pin:`, `PIN code =` (not a version: `pin: 1.2.3`).
_PIN = re.compile(
    r"(?:(?i:\bPIN(?: code)?)\s*(?:\bis\b|:|=)|\bPIN(?: code)?)[ \t]*(?P<value>\d{4,8})\b(?![.,]\d)"
)
#: Commands given a password: `curl -u user:x`, `mysql -px`, `sshpass -p x`.
_COMMAND_PASSWORD = re.compile(
    r"\bcurl\b[^\n]*?\s(?:-u|--user)[ =]?['\"]?[^\s:'\"]+:(?P<curl>[^\s'\"]+)"
    r"|\bmysql(?:dump|admin)?\b[^\n]*?\s-p['\"]?(?P<mysql>[^\s'\"]+)"
    r"|\bsshpass\s+-p\s*['\"]?(?P<sshpass>[^\s'\"]+)"
    # registries' logins (`docker login -u mara -p x`), and any `--password x`
    r"|\b(?:docker|podman|nerdctl|buildah|skopeo|oras|helm registry)\s+login\b[^\n]*?"
    r"\s(?:-p|--password)[ =]['\"]?(?P<login>[^\s'\"]+)"
    r"|(?<![\w-])--password[ =]['\"]?(?P<option>[^\s'\"]+)"
    # a literal piped to a login reading stdin: `echo 'x' | docker login --password-stdin`
    # (not a variable: `echo $PW | ...`)
    r"|\becho(?:[ \t]+-[neE]+)*[ \t]+['\"]?(?P<stdin>[^\s'\"|$`]+)['\"]?[ \t]*\|[^\n]*?"
    r"--password-stdin"
)
#: A passphrase or a wallet's seed phrase written as words after a colon, to the line's end.
_PASSPHRASE = re.compile(
    # (a remark, and the words on the next line: `recovery phrase (24 words):\n...`)
    r"(?im)\b(?:pass ?phrase|seed phrase|recovery phrase|mnemonic)(?:[ \t]+\([^()\n]{1,30}\))?"
    r"[ \t]*[:=][ \t]*(?:\r?\n[ \t]*)?"
    r"(?P<value>[a-z]+(?:[ \t]+[a-z]+){2,23})[ \t]*(?=$|[.,;)|*`])"
)
#: Words that make the words after `passphrase:` a sentence, not the phrase.
_SENTENCE_WORDS = frozenset(
    (
        "a", "an", "the", "in", "on", "at", "of", "for", "to", "from", "by", "with", "is",
        "are", "was", "be", "it", "this", "that", "see", "ask", "use", "stored", "kept",
        "saved", "and", "or", "not", "no", "none", "our", "my", "your",
    )
)  # fmt: skip
#: A login written as its pair: `the staging login is mara / Fj0rd-88`, `creds: ci:Winter26!`.
#: The password is the part after the user; it must look like one (a digit or a
#: symbol, `_login_pair_ok`): `login is via SSO/LDAP` names no password.
_LOGIN_PAIR = re.compile(
    r"(?i)\b(?:log[- ]?in|sign[- ]?in|credentials?|creds)"
    # what it is for: `login for the old Jira: mara / x`
    r"(?:[ \t]+(?:" + FOR_WORDS + r")(?:[ \t]+[\w.@-]+){1,4}?)?"
    # `login: mara / x`, and `log in to the router with admin / x`
    r"(?:[ \t]*(?:is|are|was|were|:|=)|[ \t][^\n]{0,60}?\bwith)[ \t]*"
    r"[`\"']?(?P<user>[\w.@+-]{1,64})(?:[ \t]*/[ \t]*|:)(?P<value>[^\s\"'`]{6,})"
)
#: `user svc_export pass Ex9-Port-44qZ`: a user and a password each after its word.
_USER_PASS = re.compile(
    r"(?i)\buser(?:name)?[ \t]*[:=]?[ \t]*[`\"']?[\w.@+-]{1,64}[`\"']?[,;]?[ \t]+"
    r"(?:pass(?:word)?|pwd|pw)[ \t]*[:=]?[ \t]*(?P<value>[^\s\"'`]{6,})"
)
#: `username/password: admin/x`, `login / pw = root/x`: the value is the pair.
_USER_SLASH = re.compile(r"(?i)\b(?:user(?:name)?|login)\s*/\s*\Z")
#: How far before a password keyword `_USER_SLASH` is looked for.  Why a bound:
#: searched from the text's start it made every keyword cost the length of
#: the text before it (a 64 KB line of `password set to …` took 2.7 s).
_USER_SLASH_REACH = 256

#: Values that say where a password is rather than being one: a variable, a
#: vault reference; also a YAML tag (`!vault |`), a file path (`pwd: /home/mara`).
#: `{token}` is a template's field.
_NOT_A_VALUE_START = ("$", "{", "env:", "vault:", "op://", "[redacted")
#: `%DB_PASS%` (Windows), `%(password)s` and `%s` (Python): where a value goes. Not any
#: `%`: a Django key may start with one.
_PERCENT_REFERENCE = re.compile(r"%(?:\w+%|\(\w+\)[sd]|[sd](?!\w))")
#: A file path: segments of lowercase words (one capital at most: `/Users/mara`);
#: base64 starting with `/` has capitals and digits throughout.
_PATH = re.compile(r"(?:~|\.{1,2})?(?:/[A-Z]?[a-z0-9._-]*)+/?")
#: Names, not values: what the word itself is called (`"password": "pwd"`), a
#: snake_case variable (`key_password`, `user_pass`), a private name (`_PasswordType`;
#: letters only: a token may start with `_` too, `_gQMt2Li2y52j...`).
_NAME = re.compile(
    r"(?i)password|passwd|passphrase|passcode|pwd|pw|pass|secret|token"
    r"|[a-z]+(?:_[a-z]+)+|_[a-z][a-z_]*"
)
#: A letters-only word holding the word password: `mypassword`, `secretpassword`.
_PASSWORD_WORD = re.compile(r"(?i)[a-z]*(?:password|passwd|passwort)[a-z]*")
#: Passwords in documentation's examples (`user:password@`, `-u admin:admin`);
#: anonymous FTP's `anonymous:guest` is a convention, not a credential.
PLACEHOLDER_PASSWORDS = frozenset(
    {"pass", "pwd", "user", "root", "admin", "password", "passwd", "secret", "guest", "anonymous"}
)


def placeholder_password(value: str, literal: bool = False) -> bool:
    """A value that is no password: a word of prose, a placeholder, where it is kept.

    `literal`: a quoted string's whole text, where code-like characters are characters.
    """
    raw = value.strip(".,;:!?)]}")
    bare = raw.lstrip("([{")
    v = bare.lower()
    return (
        len(v) < 3
        or v in NOT_PASSWORDS
        or is_placeholder_text(v)
        or value.lower().startswith(_NOT_A_VALUE_START)
        or _PERCENT_REFERENCE.match(value) is not None
        or re.match(r"![A-Za-z]", value) is not None  # a YAML tag
        or _PATH.fullmatch(raw) is not None
        or (not literal and (is_code_reference(raw) or is_code_reference(bare)))
        or _NAME.fullmatch(bare) is not None
        or _PASSWORD_WORD.fullmatch(bare) is not None
    )


def is_placeholder_text(value: str) -> bool:
    """A placeholder in words: `<password>`, `${DB_PASS}`, `****`, `xxxx`, `your-password`."""
    # `****`, `xxxx`, `-`; but a PIN may repeat a digit (`9939`).
    return bool(PLACEHOLDER_WORDS.search(value)) or len(set(value)) <= (1 if value.isdigit() else 2)


def _quoted_pass_value(value: str) -> bool:
    """After the verb-like `pass`, a quoted value is a password only when it reads as one:
    letters and digits with mixed case or a symbol (`pass `Kj8#vQ2!mZ``), not an option
    (`pass `--no-cache``), an encoding (`utf-8`) or a platform (`x86_64`)."""
    if value.startswith("-") or not re.search(r"\d", value) or not re.search(r"[^\W\d]", value):
        return False
    mixed = re.search(r"[a-z]", value) is not None and re.search(r"[A-Z]", value) is not None
    return mixed or re.search(r"[^\w\s./-]", value) is not None


def _password_like(value: str) -> bool:
    """Letters with digits or symbols (`maple99?`): not a word, not a count (`pass: 140`)."""
    return re.search(r"[^\W\d]", value) is not None and re.search(r"\d|[^\w\s]", value) is not None


#: Participles that do not end in -ed ("the password is read from the environment").
_IRREGULAR_PARTICIPLES = frozenset(
    (
        "read", "built", "held", "found", "shown", "taken", "put", "got", "gotten", "made",
        "done", "seen", "chosen", "stolen", "broken", "frozen", "sold", "told", "bought", "left",
        "spent", "sent", "kept", "cut", "shut", "drawn", "grown", "thrown", "worn", "torn",
    )
)  # fmt: skip
#: Words that continue a sentence after a verb or a comparative ("is longer than",
#: "is pulled through"), never after a password.
_CONTINUATION = re.compile(
    r"[ \t]+(?:from|than|to|into|by|via|through|until|because|before|after)\b", re.IGNORECASE
)


def _prose_not_password(value: str, sep: str, after: str) -> bool:
    """After "is"/"was" an English word is prose: "is expiring", "was leaked", "is probably".

    Only lowercase words ending like a participle or an adverb, irregular
    participles ("is read"), and lowercase words a sentence goes on from ("is
    longer than", `after`: the text that follows): a password written after
    "is" ("is hunter2", "is Falcon577%") has digits, capitals or symbols, or
    is no such word.
    """
    if re.search(r"[:=：>→]", sep):
        return False
    if re.fullmatch(r"[a-z]+(?:-[a-z]+)*(?:ing|ed|ly)", value) or value in _IRREGULAR_PARTICIPLES:
        return True
    return re.fullmatch(r"[a-z]+", value) is not None and _CONTINUATION.match(after) is not None


#: A technical word with digits after "password" (`password sha256 hashes`), not one.
_TECH_WORD = re.compile(
    r"(?i)(?:sha|md|argon|pbkdf|blake|crc|utf|base|rfc|iso|oauth|ntlm|aes|des|rsa|ecdsa|"
    r"ed|hmac|tls|ssl|http|ssh|wpa|wep|v|x|s|ec|p|n)[-_]?\d+[a-z0-9]*"
)
#: Lowercase words to the end of the line or sentence: a passphrase after "is" or ":".
_PHRASE = re.compile(r"[a-z]+(?:[ \t]+[a-z]+){2,7}(?=[ \t]*(?:$|[.!;,)|]))", re.MULTILINE)


def _bare_value_ok(kw: str, value: str) -> bool:
    """`root password hunter2`: after the long word alone, letters with digits, not a term."""
    return (
        re.fullmatch(PASSWORD_WORDS_LONG, kw) is not None
        and len(value) >= 5
        and re.search(r"[^\W\d_]", value) is not None
        and re.search(r"\d", value) is not None
        and _TECH_WORD.fullmatch(value) is None
        # a Markdown link's text running into its target: "... passphrase lives](vault/x-8b6276.md)"
        and "](" not in value
    )


def _phrase(text: str, start: int) -> str:
    """The passphrase starting at `start` (`correct horse battery staple`), or ``."""
    m = _PHRASE.match(text, start)
    if not m:
        return ""
    words = m.group(0).split()
    if words[0] in PROSE_WORDS or any(w in PROSE_WORDS or w in NOT_PASSWORDS for w in words[1:]):
        return ""
    if any(re.search(r"(?:ing|ed|ly)$", w) for w in words):
        return ""  # "is never logged anywhere": participles and adverbs make a sentence
    return m.group(0)


def _second_value(text: str, end: int) -> Iterator[Hit]:
    """`changed from x to y`: `y` too."""
    m = re.compile(r"[ \t]+to[ \t]+(?P<v>[^\s\"'`]{3,})").match(text, end)
    if m:
        value = m.group("v").rstrip(".,;:)]}")
        if _password_like(value) and not placeholder_password(value):
            yield Hit("password", m.start("v"), m.start("v") + len(value), value)


def _in_prose(text: str) -> Iterator[Hit]:
    for matches in (anchored(_PASSWORD, _PASSWORD_STARTS, text), _PIN.finditer(text)):
        for m in matches:
            groups = m.groupdict()
            kw = (groups.get("kw") or "").lower()
            sep = (groups.get("sep") or "").strip(" \t\n*_")
            if kw in ("pw", "pwd") and groups.get("sep") == ":":
                continue  # `pw:api` is a log prefix (Playwright); `pw: x` is a password
            group = next(g for g in ("dq", "sq", "cq", "csq", "gq", "jq", "value") if groups.get(g))
            value = m.group(group)
            # Sentence punctuation is not part of the password; `!` and `?` often are.
            trimmed = value if group != "value" else value.rstrip(".,;:)]}")
            start = m.start(group)
            quoted = group != "value" or (
                text[start - 1 : start] == "`" and text.startswith("`", start + len(value))
            )
            if kw == PASSWORD_WORD_PASS and not (
                "\n" not in m.group("sep")
                and (
                    (sep in (":", "=") and _password_like(trimmed))
                    or (quoted and _quoted_pass_value(trimmed))
                )
            ):
                continue  # `pass` is a verb, a test count, a step (`second pass: analyze`)
            if groups.get("bare") is not None and not _bare_value_ok(kw, trimmed):
                continue
            if groups.get("remark") and not _password_like(trimmed):
                continue  # a docstring's `password (bool, optional): Enable ...`
            if re.fullmatch(r"\s+to\s+", groups.get("sep") or "") and not _password_like(trimmed):
                continue  # `password to 128 bits`
            if group == "value" and (phrase := _phrase(text, start)):
                yield Hit("password", start, start + len(phrase), phrase)
                continue
            before = max(0, m.start() - _USER_SLASH_REACH)
            if _USER_SLASH.search(text, before, m.start()) and trimmed.count("/") == 1:
                user, _, trimmed = trimmed.partition("/")  # `user/password: admin/x`
                start += len(user) + 1
            after = text[start + len(trimmed) : start + len(trimmed) + 24]
            if placeholder_password(trimmed) or (
                group == "value" and _prose_not_password(trimmed, sep, after)
            ):
                continue
            yield Hit("password", start, start + len(trimmed), trimmed)
            if re.search(r"\bfrom\s*$", groups.get("sep") or ""):
                yield from _second_value(text, start + len(trimmed))


def _on_command_lines(text: str) -> Iterator[Hit]:
    for m in _COMMAND_PASSWORD.finditer(text):
        groups = ("curl", "mysql", "sshpass", "login", "option", "stdin")
        group = next(g for g in groups if m.group(g))
        value = m.group(group)
        if group in ("option", "stdin") and not _password_like(value):
            continue  # "the --username and --password options"
        if not placeholder_password(value) and value.lower() not in PLACEHOLDER_PASSWORDS:
            yield Hit("password", m.start(group), m.end(group), value)


def _in_field(text: str, field: str) -> Iterator[Hit]:
    """A field named for a password (`db_password: x`): its whole one-line value."""
    name = field_name(field)
    value = text.strip()
    if not _PASSWORD_FIELD.match(name) or not value or "\n" in value:
        return
    if name.lower().endswith("pass") and not _password_like(value):
        return  # `pass: 140` counts passed tests
    if not placeholder_password(value):
        start = text.index(value)
        yield Hit("password", start, start + len(value), value)


def _passphrases(text: str) -> Iterator[Hit]:
    for m in _PASSPHRASE.finditer(text):
        if not _SENTENCE_WORDS.intersection(m.group("value").lower().split()):
            yield Hit("password", m.start("value"), m.end("value"), m.group("value"))


#: What a text holds for `_LOGIN_PAIR` to be looked for at all (`log` alone is in
#: "logs" and "catalog": three texts in four).
_LOGIN_WORDS = ("login", "log-in", "log in", "signin", "sign-in", "sign in", "cred")


def _login_pair_ok(value: str) -> bool:
    """A password, not a word: letters with a digit, or with a symbol beyond `-._`."""
    if re.search(r"[^\W\d]", value) is None or placeholder_password(value):
        return False
    return (
        re.search(r"\d|[^\w\s.-]", value) is not None and value.lower() not in PLACEHOLDER_PASSWORDS
    )


def _login_pairs(text: str) -> Iterator[Hit]:
    low = text.lower()
    pairs = _USER_PASS.finditer(text) if "user" in low else iter(())
    logins = _LOGIN_PAIR.finditer(text) if any(w in low for w in _LOGIN_WORDS) else iter(())
    for m in itertools.chain(logins, pairs):
        value = m.group("value").rstrip(".,;:)]}")
        if value.startswith("/"):
            continue  # a URL (`login: https://sso.corp.io/`), a path (`creds: s3:/bucket`)
        if _login_pair_ok(value):
            yield Hit("password", m.start("value"), m.start("value") + len(value), value)


def passwords(text: str, field: str) -> Iterator[Hit]:
    """Passwords in prose, on command lines, and as a password field's value."""
    yield from _passphrases(text)  # first: the whole phrase, where prose would take a word
    yield from _in_prose(text)
    yield from _login_pairs(text)
    if any(c in text for c in ("curl", "mysql", "sshpass", "login", "--password")):
        yield from _on_command_lines(text)
    yield from _in_field(text, field)


# -- tables ------------------------------------------------------------------

_PASSWORD_COLUMN = re.compile(
    r"(?i)^(?:" + PASSWORD_WORDS_LONG + "|" + PASSWORD_WORDS_SHORT + r"|pass|pin)$"
)
_CREDENTIAL_COLUMN = re.compile(
    r"(?i)^(?:api[ _-]?key|token|secret|client[ _-]?secret|access[ _-]?token|auth[ _-]?token|"
    r"secret[ _-]?key)$"
)


def _column_kind(header: str) -> str | None:
    if _PASSWORD_COLUMN.match(header):
        return "password"
    return "generic-secret" if _CREDENTIAL_COLUMN.match(header) else None


def tables(text: str) -> Iterator[Hit]:
    """Markdown tables with a column named for passwords or credentials: each cell below it."""
    for kind, cell, start in table_cells(text, _column_kind):
        yield from _cell(kind, cell, start)


def _cell(kind: str, cell: str, start: int) -> Iterator[Hit]:
    value = unwrap_cell(cell)
    start += cell.index(value) if value else 0
    ok = (
        credential_value_ok(value)
        if kind == "generic-secret"
        else bool(value) and " " not in value and not placeholder_password(value)
    )
    if ok:
        yield Hit(kind, start, start + len(value), value)


def _named_words(value: str) -> bool:
    """Lowercase words and short numbers joined by `-`, `_` or `.`, mostly words.

    A region, a host or a release (`eu-west-1-production-cluster`,
    `build_2026_11_nightly`) reads so; an issued token never does.
    """
    parts = re.split(r"[-_.]", value)
    if not all(re.fullmatch(r"[a-z]+|\d{1,4}", p) for p in parts):
        return False
    words = sum(1 for p in parts if len(p) >= 3 and p.isalpha())
    return words >= 2 and words * 2 >= len(parts)


def credential_value_ok(value: str, quoted: bool = False) -> bool:
    """A value written after a credential name looks random enough to be a real one.

    `quoted`: the value was a string literal (`SECRET_KEY = 'k2(m...'`), so what
    looks like code in it (`k2(m...`) is characters, not a call.
    """
    v = value if quoted else value.strip(".,;:")
    if len(v) < 16 or is_placeholder(v) or placeholder_password(v, quoted):
        return False
    if not quoted and is_code_reference(v):
        return False
    if re.fullmatch(r"\d+|[\d.]+", v) or re.fullmatch(r"[a-z]+(?:[_-][a-z]+)*", v):
        return False  # a number, a version, or words (`token: refresh-on-expiry`)
    if _named_words(v):
        return False  # a name with numbers in it (`eu-west-1-production-cluster`)
    hexish = re.fullmatch(r"[0-9a-fA-F]+", v) is not None
    return shannon_entropy(v) >= (3.0 if hexish else 3.5)


__all__ = [
    "PLACEHOLDER_PASSWORDS",
    "credential_value_ok",
    "is_placeholder_text",
    "passwords",
    "placeholder_password",
    "tables",
]
