"""Personal data: payment card numbers, IBANs, people's e-mail addresses and phone numbers.

Split out of `detectors` (the credentials): each pattern here finds
candidates and a check drops what is not a person's data: the Luhn sum and
a card's grouping, mod-97 and the country's length, documentation domains
and machines' addresses, fictional phone ranges, dates, versions and ranges.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

from .checks import card_iin_ok, fictional_phone, iban_ok, is_placeholder, luhn_ok, reserved_domain
from .matching import Hit, anchored, field_name, starts, table_cells, unwrap_cell
from .samples import EXAMPLE_IBANS, TEST_CARDS, documented_sample
from .words import PHONE_WORDS

#: A card: 13-19 digits; not the tail of a longer run of groups, not after `+` (a phone).
_CARD = re.compile(
    r"(?<![\w.,/+-])(?<!\d[ -])(?:\d[ -]?){12,18}\d(?![\d/-]|[.,]\d|[ -]\d{4}(?!\d))"
)
_IBAN = re.compile(
    r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])"
)
#: An IBAN written in lower case, which only the word before it marks as one.
_IBAN_NAMED = re.compile(
    r"(?i)\biban\b[^\S\n]*(?:[:#=]|\bis\b)?[^\S\n]*"
    r"(?P<iban>(?<![A-Za-z0-9])[a-z]{2}\d{2}(?: ?[a-z0-9]{4}){2,7}(?: ?[a-z0-9]{1,3})?"
    r"(?![A-Za-z0-9]))"
)
_IBAN_WORD = re.compile(r"(?i)iban")
_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@"
    r"(?P<domain>(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24})"
    r"(?![A-Za-z0-9-])"
)
#: An address written against harvesters: `mara [at] fernmail [dot] hr`.
_EMAIL_SPELLED = re.compile(
    r"(?i)(?<![\w.+-])[a-z0-9][a-z0-9._%+-]{0,63}\s*[\[({]\s*at\s*[\])}]\s*"
    r"(?P<domain>[a-z0-9-]+(?:\s*(?:[\[({]\s*dot\s*[\])}]|\.)\s*[a-z0-9-]+)+)"
)
#: The same without brackets, every dot spelled: `lucas.moreau at navettes-azur dot fr`,
#: `agnieszka dot wrobel at gmail dot com` (an address, not "look at it dot by dot").
_EMAIL_WORDS = re.compile(
    r"(?i)(?<![\w.+-])(?P<local>[a-z0-9][a-z0-9._%+-]{0,63}(?:[ \t]+dot[ \t]+[a-z0-9_%+-]+)*)"
    r"[ \t]+at[ \t]+(?P<domain>[a-z0-9-]{2,63}(?:[ \t]+dot[ \t]+[a-z0-9-]{2,63})+)(?![\w-])"
)
_PHONE_INTL = re.compile(r"(?<![\w+])\+\d{1,3}(?:[ .-]?\(?\d{1,5}\)?){2,6}(?![\w])")
#: `0049 151 23948172`: the international prefix dialled as `00`, a space after the
#: country code (a zero-padded id `00123456789` and an ISSN `0020-0190` are none).
_PHONE_IDD = re.compile(
    r"(?<![\w+.-])(?<![A-Za-z0-9][ .-])00[1-9]\d{0,2} \(?\d{1,5}\)?(?:[ .-]?\d{2,5}){1,5}(?!\w)"
)
_PHONE_NANP = re.compile(r"(?<![\w+-])(?:\(\d{3}\) ?|\d{3}[-. ])\d{3}[-. ]\d{4}(?![\w-])")
#: National numbers in the grouping only phones are written in, with no phone word:
#: a UK mobile (`07911 654321`, `07834 561 209`), a UK number in London or a
#: city (`020 7183 4402`, `0161 496 0123`), a French one (`06 47 82 19 53`).
_PHONE_NATIONAL = re.compile(
    r"(?<![\w+.-])(?<!\d[ .])(?:07\d{3} \d{6}|07\d{3} \d{3} \d{3}|02\d \d{4} \d{4}"
    r"|01\d{2,3} \d{3} \d{4}|0[1-9](?:[ .]\d\d){4})(?![\w-]|[ .]\d)"
)
_PHONE_WORD = re.compile(
    r"(?i)\b(?:" + PHONE_WORDS + r")\b"
    r"[^\n\d+]{0,12}?(?P<number>\+?\(?\d[\d ().-]{5,18}\d)(?![\w-])"
)
_PHONE_STARTS = starts(PHONE_WORDS)
#: A person's number named as theirs, no phone word: `my personal number 07834 561 209`,
#: `her direct number is 030 4417 8823` (not "order number", "the number 12").
_PERSON_NUMBER_WORDS = "my|his|her|their|personal|private|direct|'s|’s"
_PERSON_NUMBER = re.compile(
    r"(?i)(?:\b(?:my|his|her|their|personal|private|direct)|(?<=\w)['’]s)[ \t]+"
    r"(?:(?:personal|private|direct|home|work|contact|new|mobile|cell)[ \t]+)?"
    r"number\b[^\n\d+]{0,20}?(?P<number>\+?\(?\d[\d ().-]{5,18}\d)(?![\w-])"
)
_PERSON_NUMBER_STARTS = starts(_PERSON_NUMBER_WORDS)
#: Field names whose whole value is a phone number (`phone`, `mobile_number`, `tel`).
_PHONE_FIELD = re.compile(
    r"(?i)^(?:[a-z0-9]+[_.-])*(?:phone|mobile|cell|tel|telephone|fax|whatsapp|handy|telefon)"
    r"(?:[_.-]?(?:number|no|nr))?$"
)


def cards(text: str) -> Iterator[Hit]:
    """Card numbers: Luhn, a card's first digit and grouping; not ISBNs, not an IBAN's tail."""
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
        if not 13 <= len(digits) <= 19 or not card_iin_ok(digits) or not luhn_ok(digits):
            continue
        before = text[max(0, m.start() - 12) : m.start()].lower()
        if "isbn" in before or (len(digits) == 13 and digits.startswith(("978", "979"))):
            continue  # an ISBN-13
        if digits in TEST_CARDS and documented_sample(text, m.start(), m.end()):
            continue  # "Stripe's test card 4242 ...", "declines with 4000 ... 0002"
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


def ibans(text: str) -> Iterator[Hit]:
    """IBANs: the country's length and the mod-97 check."""
    for m in _IBAN.finditer(text):
        raw = m.group(0)
        compact = raw.replace(" ", "")
        if not iban_ok(compact):
            continue
        if compact in EXAMPLE_IBANS and documented_sample(text, m.start(), m.end()):
            continue  # "sample IBAN GB82 WEST ... from the spec"
        yield Hit("iban", m.start(), m.end(), raw)
    if _IBAN_WORD.search(text):  # no lowered copy of every text scanned
        for m in _IBAN_NAMED.finditer(text):
            raw = m.group("iban")
            compact = raw.replace(" ", "").upper()
            if not raw.isupper() and iban_ok(compact) and compact not in EXAMPLE_IBANS:
                yield Hit("iban", m.start("iban"), m.end("iban"), raw)


#: Local parts that name a service, not a person (`git@github.com:org/repo`).
_SERVICE_LOCAL = re.compile(r"(?i)^(?:git|noreply|no-reply|donotreply|do-not-reply|mailer-daemon)$")
#: Role mailboxes (RFC 2142 and their common kin): a team's inbox, not a person's
#: (`security@vendor.se`, `support@`); only the whole local part counts.
_ROLE_LOCAL = re.compile(
    r"(?i)^(?:abuse|accounts|admin|alerts|billing|careers|contact|devops|enquiries|feedback|"
    r"hello|help|helpdesk|hostmaster|hr|info|inquiries|it|jobs|legal|marketing|newsletter|"
    r"noc|notifications|office|ops|postmaster|press|privacy|sales|security|service|support|"
    r"team|webmaster)$"
)
#: A domain's first label that asks the reader for theirs: `yourcompany`, `your-domain`.
_YOUR_LABEL = re.compile(
    r"^your[-_]?(?:company|domain|org|organi[sz]ation|site|server|host|"
    r"business|team|corp|email|mail|name|app|website)s?$"
)
#: Local parts that stand for anyone in documentation (`user@...`, `foo@bar.com`).
_PLACEHOLDER_LOCAL = re.compile(
    r"(?i)^(?:user|username|someone|somebody|anyone|foo|foobar|name|email|"
    r"first\.?last|firstname\.?lastname|name\.surname)$"
)
#: Domains whose addresses are machines' identities: GitHub's commit e-mails,
#: Google Cloud service accounts (`deployer@proj.iam.gserviceaccount.com`).
_MACHINE_DOMAINS = ("users.noreply.github.com", "gserviceaccount.com")
#: `ssh deploy@bastion`, `scp -P 2222 app@host:`: a login on a host, not a mailbox.
_LOGIN_COMMAND = re.compile(
    r"(?:^|\s)(?:ssh|scp|sftp|mosh|rsync)(?:\s+-{1,2}[\w-]+(?:[ =](?!-)[^\s@]+)?)*\s+$"
)


def _not_a_mailbox(text: str, start: int, end: int) -> bool:
    """An address-shaped login: a URL's `user:password@host`, `ssh user@host`, `user@host:/path`."""
    before = text[max(0, start - 200) : start]
    word = re.split(r"[\s(<\[\"'`]", before)[-1]
    if re.search(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#@]*$", word):
        # A URL's user:password@host (reported as a connection string), a Sentry DSN's
        # key (`SENTRY_DSN=https://<key>@o1.ingest.sentry.io/2`).
        return True
    return bool(_LOGIN_COMMAND.search(before)) or text.startswith((":/", ":~"), end)


def _documentation_domain(domain: str) -> bool:
    """Reserved names (`example.com`, `.test`), any `example` label (`example.co.uk`),
    and a domain named for the reader to fill in (`yourcompany.com`, `your-domain.org`)."""
    labels = domain.lower().split(".")
    return (
        reserved_domain(domain) or "example" in labels or _YOUR_LABEL.match(labels[0]) is not None
    )


def emails(text: str) -> Iterator[Hit]:
    """People's addresses: not documentation's, services', machines' or logins."""
    for m in _EMAIL.finditer(text):
        local = m.group(0).split("@", 1)[0]
        domain = m.group("domain")
        if _documentation_domain(domain) or _SERVICE_LOCAL.match(local) or _ROLE_LOCAL.match(local):
            continue
        if _PLACEHOLDER_LOCAL.match(local) or domain.lower().endswith(_MACHINE_DOMAINS):
            continue
        if _not_a_mailbox(text, m.start(), m.end()):
            continue
        if is_placeholder(local) and len(local) > 3 and "your" in local.lower():
            continue
        yield Hit("email", m.start(), m.end(), m.group(0))
    for m in _EMAIL_SPELLED.finditer(text):
        domain = re.sub(r"\s*(?:[\[({]\s*dot\s*[\])}]|\.)\s*", ".", m.group("domain").lower())
        if re.search(r"\.[a-z]{2,24}$", domain) and not _documentation_domain(domain):
            yield Hit("email", m.start(), m.end(), m.group(0))
    if " dot " in text.lower():
        yield from _emails_in_words(text)


#: Mailbox providers: `anna at gmail dot com` is an address whatever its local part.
_MAIL_PROVIDERS = frozenset(
    (
        "gmail", "googlemail", "outlook", "hotmail", "live", "yahoo", "icloud", "me", "aol",
        "proton", "protonmail", "gmx", "web", "yandex", "mail", "zoho", "fastmail", "tutanota",
        "wp", "onet", "interia", "orange", "free", "laposte", "libero", "virgilio", "t-online",
    )
)  # fmt: skip


def _emails_in_words(text: str) -> Iterator[Hit]:
    """`_EMAIL_WORDS`: the address as its dotted form says, judged as a written one is."""
    for m in _EMAIL_WORDS.finditer(text):
        dots = r"[ \t]+dot[ \t]+"
        local = re.sub(dots, ".", m.group("local"), flags=re.I)
        domain = re.sub(dots, ".", m.group("domain"), flags=re.I).lower()
        if not re.search(r"\.[a-z]{2,24}$", domain) or _documentation_domain(domain):
            continue
        if _SERVICE_LOCAL.match(local) or _ROLE_LOCAL.match(local):
            continue
        # Prose has "meet at home dot com": a person's local part is a name with a
        # dot, a digit or a dash in it, or the provider is a mailbox provider.
        provider = domain.split(".")[-2]
        if not re.search(r"[._\d-]", local) and provider not in _MAIL_PROVIDERS:
            continue
        yield Hit("email", m.start(), m.end(), m.group(0))


def _phone_digits_ok(digits: str) -> bool:
    """A dialable length, not a fictional range, not a filler (`0000000`)."""
    return 7 <= len(digits) <= 15 and not fictional_phone(digits) and len(set(digits)) > 2


#: A North American number in area code 555, which is not assigned: `(555) 123-4567`.
_NANP_555 = re.compile(r"(?:\+?1[ .-]?)?\(?555\)?[ .-]?\d{3}[ .-]?\d{4}")


def _phone_ok(raw: str, cued: bool = False) -> bool:
    """`cued`: a phone word is right before it (`cell: 415.867.5309`, dotted as in the US)."""
    if not _phone_digits_ok(re.sub(r"\D", "", raw)) or _NANP_555.fullmatch(raw.strip()):
        return False
    if cued and re.fullmatch(r"\d{3}\.\d{3}\.\d{4}", raw):
        return True
    if re.search(r"\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}", raw) or re.fullmatch(r"[\d.]+", raw.strip()):
        return False  # a date or a version / IP address
    if re.fullmatch(r"(?:19|20)\d\d[ ./-]\d\d[ ./-]\d\d", raw.strip()):
        return False  # a date written with spaces or slashes: `2026 07 01`
    if re.fullmatch(r"\+\d{1,3}\.\d+", raw):
        return False  # a signed decimal (`+52.520008`, a latitude): one dot, no groups
    # A range of times or figures (`10.30-11.45`), not a dialled number.
    return not ("." in raw and "-" in raw and "+" not in raw)


def _counted(raw: str) -> bool:
    """Groups of two digits that step evenly (`01 02 03 04 05`, `10 20 30 40 50`)."""
    pairs = [int(p) for p in re.findall(r"\d\d", raw)]
    steps = {b - a for a, b in itertools.pairwise(pairs)}
    return len(pairs) >= 4 and len(steps) == 1


def phones(text: str) -> Iterator[Hit]:
    """International (`+...`) and North American numbers, and any number after a phone word."""
    seen: list[tuple[int, int]] = []
    national = _PHONE_NATIONAL.finditer(text)
    for matches, group in (
        (_PHONE_INTL.finditer(text), 0),
        (_PHONE_IDD.finditer(text), 0),
        (_PHONE_NANP.finditer(text), 0),
        (national, 0),
        (anchored(_PHONE_WORD, _PHONE_STARTS, text), "number"),
        (anchored(_PERSON_NUMBER, _PERSON_NUMBER_STARTS, text), "number"),
    ):
        for m in matches:
            start, end = m.start(group), m.end(group)
            raw = text[start:end].rstrip(" .-(")
            if raw.endswith(")") and raw.count(")") > raw.count("("):
                raw = raw[:-1]  # the link's or the sentence's bracket: `(tel:+44...)`
            end = start + len(raw)
            seen_here = any(s < end and start < e for s, e in seen)
            if seen_here or not _phone_ok(raw, cued=group == "number"):
                continue
            if matches is national and _counted(raw):
                continue  # `01 02 03 04 05`: a count, not a number anyone dials
            seen.append((start, end))
            yield Hit("phone", start, end, raw)


def phone_field(text: str, field: str) -> Iterator[Hit]:
    """A field named for a phone (`phone: 015123948172`) whose whole value is a number.

    The name says what the digits are, so a number without `+` or the
    separators the patterns above need is one too.
    """
    value = text.strip()
    if _PHONE_FIELD.match(field_name(field)) and re.fullmatch(r"\+?[\d ().-]{7,24}", value):
        digits = re.sub(r"\D", "", value)
        # Digits alone are a number too here: `015123948172`, `4158675309`.
        bare = value.isdigit() and (value[0] == "0" or len(digits) >= 10)
        if _phone_ok(value) or (bare and _phone_digits_ok(digits)):
            start = text.index(value)
            yield Hit("phone", start, start + len(value), value)


def _phone_column(header: str) -> str | None:
    return "phone" if _PHONE_FIELD.match(header.replace(" ", "_")) else None


def phone_tables(text: str) -> Iterator[Hit]:
    """Markdown tables with a column named for phones: each cell below it that is a number."""
    for _kind, cell, start in table_cells(text, _phone_column):
        value = unwrap_cell(cell)
        at = start + (cell.index(value) if value else 0)
        for hit in phone_field(value, "phone"):
            yield Hit("phone", at + hit.start, at + hit.end, hit.secret)


__all__ = ["cards", "emails", "ibans", "phone_field", "phone_tables", "phones"]
