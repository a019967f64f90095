"""The checks a detector's candidate must pass: not a placeholder, and a valid fixed shape.

Split out of `detectors` (one concern each): these are pure predicates
over one candidate string (a placeholder test and Shannon entropy; the
Luhn sum, mod-97 for IBANs, a JWT header that decodes to JSON, reserved
documentation domains and fictional phone ranges), testable on their own;
`detectors` holds the patterns that find candidates and decides kinds.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import re
from collections import Counter

# -- placeholders --------------------------------------------------------------

PLACEHOLDER_WORDS = re.compile(
    r"example|sample|dummy|placeholder|your[_-]?|changeme|redacted|fake|xxxx|<|>|\$\{|\{\{|\.\.\.|…|\*\*\*",
    re.IGNORECASE,
)


def shannon_entropy(text: str) -> float:
    """Bits per character of `text` (0 for an empty text)."""
    if not text:
        return 0.0
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def is_placeholder(token: str) -> bool:
    """True for documentation stand-ins: `sk-...`, `<token>`, `xxxx`, `YOUR_KEY`, `${X}`, `EXAMPLE`.

    Also for low-variety fillers (`aaaaaaaa`, `12341234`, `abcabcabc`): a real
    key drawn at random has many distinct characters.
    """
    if has_placeholder_word(token) or has_sequence_run(token):
        return True
    body = re.sub(r"^[A-Za-z]{2,4}[_-]", "", token)  # a vendor prefix carries no randomness
    return len(set(body)) < max(4, min(10, len(body) // 3))


def has_placeholder_word(token: str) -> bool:
    """A placeholder's word or sign in `token`, a word written in one case (`YOUR`, `your`).

    A long random key holds `yOUr` or `FaKe` now and then (a 97-character
    Stripe key: about one in ten thousand); a person writes `YOUR_KEY`.
    """
    for m in PLACEHOLDER_WORDS.finditer(token):
        letters = re.sub(r"[^A-Za-z]", "", m.group(0))
        if letters and letters.islower() and _inside_random(token, m.start(), m.end()):
            continue  # `x9Kfake2Lm...`: letters a random key drew, not a word a person wrote
        if not letters or letters.islower() or letters.isupper() or letters.istitle():
            return True
    return False


#: Bits per character above which a mixed-case key with digits reads as drawn
#: at random (36 random base62 characters: ~4.7; `AbC1fakeTokenForDocs123`: ~4.1).
_RANDOM_BITS = 4.3


def _inside_random(token: str, start: int, end: int) -> bool:
    """The word at token[start:end] sits between letters or digits of a random-looking key.

    Only for lower-case words: `wJalr...CYEXAMPLEKEY`, AWS's documented secret,
    stays a placeholder, as does `ghp_fake...` (a word at the key's start).
    """
    if start == 0 or end >= len(token):
        return False
    if not (token[start - 1].isalnum() and token[end].isalnum()):
        return False
    body = re.sub(r"^[A-Za-z]{2,4}[_-]", "", token)
    mixed = any(c.isupper() for c in body) and any(c.islower() for c in body)
    return mixed and any(c.isdigit() for c in body) and shannon_entropy(body) >= _RANDOM_BITS


def has_sequence_run(token: str) -> bool:
    """True for `AKIA1234567890ABCDEF`, `abcdef1234567890`: typed by a person writing an example.

    Half the token or more in runs of four or more consecutive characters
    (`1234`, `abcd`, `FEDC`, case as written).  A random key has one such
    run now and then (a four-digit run at a given place: one in a
    thousand), never half of it.
    """
    in_runs = 0
    run = 1
    step = 0
    for i in range(1, len(token) + 1):
        a, b = token[i - 1], token[i] if i < len(token) else ""
        now = ord(b) - ord(a) if b and a.isalnum() and b.isalnum() else 0
        if now in (1, -1) and (run == 1 or now == step):
            run, step = run + 1, now
            continue
        if run >= 4:
            in_runs += run
        run, step = (2, now) if now in (1, -1) else (1, 0)
    return len(token) > 0 and in_runs * 2 >= len(token)


#: A value that names where the secret comes from rather than holding it:
#: `os.environ["X"]`, `getpass()`, `SecretStr(...)`, `Optional[str]`,
#: `process.env.DB_PASS`, `settings.SECRET`, and an environment variable's
#: name (`DB_PASSWORD`: two or more words).
_CODE_REFERENCE = re.compile(
    r"(?:[a-z_][a-z0-9_]*|[A-Za-z_][A-Za-z_]*)(?:\.[A-Za-z_][A-Za-z0-9_]*)*\s*[\[(].*"
    r"|[a-z_][a-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+"
    r"|[A-Z][A-Z0-9]*(?:_[A-Z0-9]*[A-Z][A-Z0-9]*)+",
    re.DOTALL,
)


def is_code_reference(value: str) -> bool:
    """True for code or an environment variable's name standing where a secret would be."""
    return _CODE_REFERENCE.fullmatch(value) is not None


# -- checks of fixed-shape values ---------------------------------------------


def luhn_ok(digits: str) -> bool:
    """The Luhn checksum of a card number."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


#: Card issuers' number ranges and the lengths each issues (ISO/IEC 7812 IINs, as
#: Wikipedia's "Payment card number" tabulates them): (first prefix, last prefix, lengths).
_ANY = frozenset(range(12, 20))
_CARD_RANGES: tuple[tuple[str, str, frozenset[int]], ...] = (
    ("4", "4", frozenset({13, 16, 19})),  # Visa
    # Mastercard (51-55, 2221-2720), Mir (2200-2204): the whole 2 and 5 series at
    # their lengths, since issuers' ranges move (and notes hold test numbers).
    ("2", "2", frozenset(range(16, 20))), ("5", "5", frozenset({16})),
    ("34", "34", frozenset({15})), ("37", "37", frozenset({15})),  # American Express
    ("300", "305", frozenset(range(14, 20))), ("3095", "3095", frozenset(range(14, 20))),
    ("36", "36", frozenset(range(14, 20))), ("38", "39", frozenset(range(16, 20))),  # Diners
    ("3528", "3589", frozenset(range(16, 20))),  # JCB
    ("50", "50", _ANY), ("56", "58", _ANY), ("6", "6", _ANY),  # Maestro, Discover, UnionPay
)  # fmt: skip


def card_iin_ok(digits: str) -> bool:
    """A number an issuer could have given: its prefix's range and its length.

    An IMEI (15 digits, `35...`) passes Luhn too, but no card of 15 digits starts with 35.
    """
    return any(
        first <= digits[: len(first)] <= last and len(digits) in lengths
        for first, last, lengths in _CARD_RANGES
    )


#: IBAN length per country (ISO 13616 registry, the common ones).
IBAN_LENGTHS: dict[str, int] = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22,
    "BH": 22, "BR": 29, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18,
    "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22,
    "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22,
    "IL": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LI": 21,
    "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27,
    "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25,
    "QA": 29, "RO": 24, "RS": 22, "SA": 24, "SE": 24, "SI": 19, "SK": 24, "SM": 27,
    "TN": 24, "TR": 26, "UA": 29, "VG": 24, "XK": 20,
}  # fmt: skip


def iban_ok(compact: str) -> bool:
    """Country length and the ISO 7064 mod-97 check of an IBAN without spaces."""
    if IBAN_LENGTHS.get(compact[:2]) != len(compact):
        return False
    moved = compact[4:] + compact[:4]
    number = "".join(str(int(ch, 36)) for ch in moved)
    return int(number) % 97 == 1


_BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def wif_ok(token: str) -> bool:
    """A Bitcoin private key in wallet import format: base58 whose last 4 bytes are the
    double-SHA256 checksum of a 0x80 (mainnet) or 0xef (testnet) key, 32 bytes plus an
    optional 0x01.  A random or mistyped string passes one time in 4 billion."""
    number = 0
    for ch in token:
        at = _BASE58.find(ch)
        if at < 0:
            return False
        number = number * 58 + at
    raw = number.to_bytes((number.bit_length() + 7) // 8, "big")
    payload, check = raw[:-4], raw[-4:]
    if len(payload) not in (33, 34) or payload[0] not in (0x80, 0xEF):
        return False
    if len(payload) == 34 and payload[-1] != 0x01:
        return False
    return hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4] == check


def _b64json(part: str) -> object:
    try:
        raw = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
        return json.loads(raw)
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None


def jwt_ok(token: str) -> bool:
    """A JWT: its header decodes to a JSON object naming an `alg` (a JWS or JWE header)."""
    header = _b64json(token.split(".", 1)[0])
    return isinstance(header, dict) and "alg" in header


def jwt_claims(token: str) -> dict[str, object] | None:
    """A signed JWT's claims (its second part), or None when that is no JSON object."""
    parts = token.split(".")
    claims = _b64json(parts[1]) if len(parts) == 3 else None
    return claims if isinstance(claims, dict) else None


#: RFC 2606 / RFC 6761 names reserved for documentation and tests.
#: `tld` is no top-level domain: documentation writes `user@domain.tld`.
_RESERVED_DOMAINS = ("example.com", "example.org", "example.net", "example.edu")
#: Top-level names only documentation and tests use.
_DOCUMENTATION_TLDS = ("test", "example", "invalid", "tld")
#: Intranet and local names: no documentation, but no person's address either.
_INTRANET_TLDS = ("localhost", "local", "internal", "lan")


def documentation_domain(domain: str) -> bool:
    """True for example.com and the documentation TLDs (not intranet names like *.internal).

    A connection string to `db.internal` or `localhost` with a real password
    is a real credential; one to `db.example.com` is documentation.
    """
    d = domain.lower().rstrip(".")
    if d.rsplit(".", 1)[-1] in _DOCUMENTATION_TLDS:
        return True
    return any(d == r or d.endswith("." + r) for r in _RESERVED_DOMAINS)


def reserved_domain(domain: str) -> bool:
    """True for documentation and test domains (example.com, *.test, ...) and intranet names."""
    tld = domain.lower().rstrip(".").rsplit(".", 1)[-1]
    return tld in _INTRANET_TLDS or documentation_domain(domain)


def fictional_phone(digits: str) -> bool:
    """Numbers set aside for fiction and documentation.

    North America's 555-0100..555-0199 (also when a country's number ends
    in them, as `+385 91 555 0187` does), and Ofcom's drama ranges in the
    UK (020 7946 0xxx, 0113 496 0xxx, 0161 496 0xxx, 01632 960xxx,
    07700 900xxx).
    """
    if re.search(r"55501\d\d$", digits):
        return True
    national = re.sub(r"^44", "0", digits)
    return bool(
        re.match(
            r"^0207946 ?0\d{3}$|^0(113|161|114|115|116|117|118|121|131|141|151|191)4960\d{3}$",
            national,
        )
        or re.match(r"^01632960\d{3}$|^07700900\d{3}$", national)
    )


__all__ = [
    "IBAN_LENGTHS",
    "PLACEHOLDER_WORDS",
    "card_iin_ok",
    "documentation_domain",
    "fictional_phone",
    "has_placeholder_word",
    "has_sequence_run",
    "iban_ok",
    "is_code_reference",
    "is_placeholder",
    "jwt_claims",
    "jwt_ok",
    "luhn_ok",
    "reserved_domain",
    "shannon_entropy",
]
