"""Values vendors and standards publish in their documentation, and how a text marks one.

A card number Stripe publishes for testing, the IBAN of the standard's
example, Stripe's documented test key or jwt.io's sample token are known to
everyone: quoted as documentation they are no secret.  People also plant
and paste them as real ones, though, so each is a finding unless the text
around it says it is a test or an example (`documented_sample`).
"""

from __future__ import annotations

import re

from .checks import jwt_claims

#: Numbers card networks and payment providers publish for testing (Stripe's 4242...,
#: Visa's 4111..., the Amex and Discover samples).
TEST_CARDS = frozenset(
    (
        "4242424242424242", "4111111111111111", "4000056655665556", "4012888888881881",
        "4000000000000002", "4000000000009995", "4000000000000077", "4000000000003220",
        "4222222222222", "5555555555554444", "5105105105105100", "5200828282828210",
        "2223003122003222", "378282246310005", "371449635398431", "378734493671000",
        "6011111111111117", "6011000990139424", "3056930009020004", "36227206271667",
        "3566002020360505", "6200000000000005", "30569309025904", "38520000023237",
    )
)  # fmt: skip
#: The IBANs of the standard's and the banks' documentation.
EXAMPLE_IBANS = frozenset(
    (
        "GB82WEST12345698765432", "GB29NWBK60161331926819", "GB33BUKB20201555555555",
        "DE89370400440532013000", "FR1420041010050500013M02606", "NL91ABNA0417164300",
        "ES9121000418450200051332", "IT60X0542811101000000123456", "CH9300762011623852957",
        "BE68539007547034", "AT611904300234573201",
    )
)  # fmt: skip
#: API keys printed in vendors' documentation (Stripe's test-mode samples).
PUBLISHED_TOKENS = frozenset(
    (
        "sk_test_4eC39HqLyjWDarjtT1zdp7dc", "pk_test_TYooMQauvdEDq54NiTphI7jx",
        "sk_test_BQokikJOvBiI2HlWgH4olfQ2",
    )
)  # fmt: skip
#: The claims of jwt.io's sample token (whatever key the debugger signed it with).
_JWT_IO_CLAIMS = {"sub": "1234567890", "name": "John Doe", "iat": 1516239022}
#: Words that make a published value a test or an example here, on its line.
_SAMPLE_WORDS = re.compile(
    r"(?i)\b(?:test(?:ing|s)?|sandbox|sample|example|e\.g|dummy|fake|documentation|docs?|"
    r"spec(?:ification)?|standard|decline[sd]?|stripe|braintree|adyen|checkout|jwt\.io)\b"
)


def documented_sample(text: str, start: int, end: int) -> bool:
    """The line around a published test or example value says it is one."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    before = text[max(line_start, start - 80) : start]
    after = text[end : (len(text) if line_end < 0 else line_end)][:40]
    return _SAMPLE_WORDS.search(before) is not None or _SAMPLE_WORDS.search(after) is not None


def published_token(token: str) -> bool:
    """A key or token printed in a vendor's documentation (jwt.io's sample claims included)."""
    if token in PUBLISHED_TOKENS:
        return True
    claims = jwt_claims(token) if token.startswith("eyJ") else None
    return claims is not None and all(claims.get(k) == v for k, v in _JWT_IO_CLAIMS.items())


__all__ = [
    "EXAMPLE_IBANS",
    "PUBLISHED_TOKENS",
    "TEST_CARDS",
    "documented_sample",
    "published_token",
]
