"""More vendors' shapes, encodings, phrasings and decoys: each secret found whole, each decoy not.

Written against a held-out sweep (round 5): every text holds fake values with
the structure of their kind, and each case asserts the kind and the exact span.
"""

from __future__ import annotations

import base64
import json

import pytest

from memlens.core.privacy.detectors import detect

_B64 = "OPzPH4gHEgJuejHW4Re+Mjb9QdmSV/Y4DdcXJk0hj6WFelkchkppDvCJJBO5dUOW"
_PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{_B64}\n{_B64[::-1]}\n-----END RSA PRIVATE KEY-----"
_B64_PEM = base64.b64encode(_PEM.encode()).decode()
_JWE = (
    base64.urlsafe_b64encode(b'{"alg":"dir","enc":"A256GCM"}').decode().rstrip("=")
    + "..eu0Ys-OtA_KFjucaBPwYwf.bn7fDHpyayv79qqA2uE9UuyoH-BdNJiQ1dLRlzWOqt4lUu5qQQMaFJwxnBYGo"
    + "UeXxE_IrOrbQojbzAJnWud-dqAPfLefKY6QDcJ1ubgfVwiya.5A9VPWb-aoJUZtGnACPcYM"
)
_FCM = (
    "AAAAQum5rDO:APA91bgTc7tmYZS1glKlm2_VlGoRUdq6NoSGHp_aOMGfbaMM3evVQTrrtEHd-88xzEn1JspJIEh1rW"
    "BAfpP_LYagMrcATsIKbqjrbrBt_tmgAtoiPAUqO1-FvPyCMBNOu7V3ewrpygRM"
)
_OPENROUTER = "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"
_SENTRY_USER = "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"
_COSMOS = "3+jaDl7oDeU1Mag9a9f6krbz+Z+s9okFfGA3v1aXiZhLxwlXnGnBD2BZVvLMbeDGru874PsGw/L6pLkKnvClCR=="
_PPK = (
    "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: mara@laptop\n"
    f"Public-Lines: 1\n{_B64}\nPrivate-Lines: 1\n{_B64[:44]}\n"
    "Private-MAC: 5f3b1c0e9a7d2b4c6e8f0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f"
)


@pytest.mark.parametrize(
    ("text", "secret", "kind"),
    [
        # Vendors' shapes (gitleaks', secrets-patterns-db's).
        (
            "curl https://api.telegram.org/bot8172805693:AAiWZmfpBWm0gdiyydDY6TdozApFeorVl6J/getMe",
            "8172805693:AAiWZmfpBWm0gdiyydDY6TdozApFeorVl6J",
            "api-token",
        ),
        (
            "Plaid: access-production-e5aeec2d-0a7b-7958-a9b2-48840b4ca790",
            "access-production-e5aeec2d-0a7b-7958-a9b2-48840b4ca790",
            "api-token",
        ),
        (
            "Braintree: access_token$production$60cnnnnj2jq6ag1m$457a84ab4c7e5247da70bbbfa8249edd",
            "access_token$production$60cnnnnj2jq6ag1m$457a84ab4c7e5247da70bbbfa8249edd",
            "api-token",
        ),
        ("Alibaba AccessKey ID LTAIvvhXO9p935Mjq3hvoVjF", "LTAIvvhXO9p935Mjq3hvoVjF", "api-token"),
        (
            "Bitbucket app password ATBBPlSGOeglqw1YNd20a7LhZRLM9vWtoRqM",
            "ATBBPlSGOeglqw1YNd20a7LhZRLM9vWtoRqM",
            "api-token",
        ),
        (f"FCM server key: {_FCM}", _FCM, "api-token"),
        (
            "Mailgun private API key key-46fde3cae43b53a3008299a40e261a4b",
            "key-46fde3cae43b53a3008299a40e261a4b",
            "api-token",
        ),
        (
            "Mailchimp API key: a8633e519346a5d5cf396561d149433d-us12",
            "a8633e519346a5d5cf396561d149433d-us12",
            "api-token",
        ),
        (f"OPENROUTER_API_KEY={_OPENROUTER}", _OPENROUTER, "api-token"),
        (f"sentry-cli login --auth-token {_SENTRY_USER}", _SENTRY_USER, "api-token"),
        (
            "DISCORD_BOT_TOKEN=Mcl6LtSG5mItvEY3sMrHZgJsyM.RO9vLt.i7BlBtpFZRRvDNe4weEZwkW07iwWL6e8oPAMnJ",
            "Mcl6LtSG5mItvEY3sMrHZgJsyM.RO9vLt.i7BlBtpFZRRvDNe4weEZwkW07iwWL6e8oPAMnJ",
            "api-token",
        ),
        # Values after a credential name: any symbol inside quotes, Laravel's `base64:`.
        (
            "SECRET_KEY='e_j6hdh#uaha9kg@ny2l1nd4p75wvbnxxana1&gvi#+ux92#rx'",
            "e_j6hdh#uaha9kg@ny2l1nd4p75wvbnxxana1&gvi#+ux92#rx",
            "generic-secret",
        ),
        (
            "APP_KEY=base64:aHEyak0yejVyQW9IZGdsSVRDelFTWHZpTUtCa0lWMXo=",
            "aHEyak0yejVyQW9IZGdsSVRDelFTWHZpTUtCa0lWMXo=",
            "generic-secret",
        ),
        (
            "CLOUDFLARE_API_TOKEN=_bVFLcEJINejhtltXX7R5qyt319eiJpiwEfP2FW6",
            "_bVFLcEJINejhtltXX7R5qyt319eiJpiwEfP2FW6",
            "generic-secret",
        ),
        # Cosmos DB's connection string; an encrypted JWT (NextAuth's session cookie).
        (
            f"AccountEndpoint=https://fw.documents.azure.com:443/;AccountKey={_COSMOS};",
            _COSMOS,
            "connection-string",
        ),
        (f"Set-Cookie: __Secure-next-auth.session-token={_JWE}; Path=/", _JWE, "jwt"),
        # Private keys: base64 of a PEM (a Kubernetes secret), PuTTY's file with its MAC,
        # a key pasted with CRLF, a key after a mention of the header in prose.
        (f"data:\n  tls.key: {_B64_PEM}\n", _B64_PEM, "private-key"),
        (f"bastion key:\n\n{_PPK}\n", _PPK, "private-key"),
        (f"from Windows:\r\n{_PEM.replace(chr(10), chr(13) + chr(10))}\r\n", None, "private-key"),
        # Phones: a `tel:` link, `00` for `+`, US dots after a phone word.
        ("[call the office](tel:+442071234567)", "+442071234567", "phone"),
        ("Handy aus dem Ausland: 0049 151 23948172", "0049 151 23948172", "phone"),
        ("cell: 415.867.5309", "415.867.5309", "phone"),
        # Passwords in prose.
        (
            "the wifi password is correct horse battery staple",
            "correct horse battery staple",
            "password",
        ),
        ("| note | the wifi password is correct horse battery staple |", None, "password"),
        ("the old root password hunter2 still works on the NAS", "hunter2", "password"),
        ("Jenkins admin password Birch2144? (change it!)", "Birch2144?", "password"),
        ("I set the password to Birch7485& for now", "Birch7485&", "password"),
        ("password (temporary): maple0353*", "maple0353*", "password"),
        ("lösenordet är Falcon4408&", "Falcon4408&", "password"),
        ("şifre: Birch82?", "Birch82?", "password"),
        ("WPA2 key: Birch1618!", "Birch1618!", "password"),
        ("docker login -u mara -p Orbit503% registry.fernway.io", "Orbit503%", "password"),
        ("password:\u00a0Orbit851%", "Orbit851%", "password"),
        # The value is on the word's line, not the next paragraph's first word.
        (
            "I set the password to Orbit391@ for now\n\nMerge pull request #482",
            "Orbit391@",
            "password",
        ),
        # Published test numbers written as real ones are findings.
        ("Company card 4111 1111 1111 1111, exp 09/28.", "4111 1111 1111 1111", "card-number"),
        ("Refunds to DE89 3704 0044 0532 0130 00 (Mara).", "DE89 3704 0044 0532 0130 00", "iban"),
        # Bitcoin keys in wallet import format (their checksum holds).
        (
            "paper wallet: 5J6GYthGRP227goJShej77o8TbaZ6HyGWCZQxU5gLpobhjEaKuS",
            "5J6GYthGRP227goJShej77o8TbaZ6HyGWCZQxU5gLpobhjEaKuS",
            "private-key",
        ),
        (
            "L14R6qheJVTFgSNP9suB3PwyBHNx12poJBcnxbN37kwvH6hDokZa (compressed)",
            "L14R6qheJVTFgSNP9suB3PwyBHNx12poJBcnxbN37kwvH6hDokZa",
            "private-key",
        ),
        # `pass` with its value in backticks, next to its user.
        ("Grafana admin: user `admin`, pass `Kj8#vQ2!mZ` (until SSO).", "Kj8#vQ2!mZ", "password"),
        # A login written as its pair; a key in a URL's query under an API's own name.
        (
            "Staging admin login is mara / Fj0rd-Lantern-88 (set by Ivo).",
            "Fj0rd-Lantern-88",
            "password",
        ),
        ("creds: ci-bot:Winter26!", "Winter26!", "password"),
        (
            "GET https://api.openweathermap.org/data/2.5/weather?q=Oslo&appid=9b1f6c2e7d4a8f3b5c0e1d2a6f7b8c9d",
            "9b1f6c2e7d4a8f3b5c0e1d2a6f7b8c9d",
            "generic-secret",
        ),
        (
            "https://b.s3.amazonaws.com/a?X-Amz-Date=20261120T000000Z&X-Amz-Signature=4f1e8a3b9c2d7e6f5a4b3c2d1e0f9a8b7c6d5e4f",
            "4f1e8a3b9c2d7e6f5a4b3c2d1e0f9a8b7c6d5e4f",
            "generic-secret",
        ),
        # A credential named with what it is for, in prose; a login the same way.
        (
            "Twilio auth token for the SMS relay is f10d3de732212e9283c98e990afec468",
            "f10d3de732212e9283c98e990afec468",
            "generic-secret",
        ),
        (
            "The API key for maps: AbC9xq2LmN8pQr4StUv6WxYz12",
            "AbC9xq2LmN8pQr4StUv6WxYz12",
            "generic-secret",
        ),
        ("Login for the old Jira: mara / Wint3r!Sky", "Wint3r!Sky", "password"),
        # A phone in a table's phone column; an IBAN in lower case after the word.
        (
            "| name | Phone number |\n|---|---|\n| Lena | `0176 4829 1057` |",
            "0176 4829 1057",
            "phone",
        ),
        ("iban de44500105175407324931 for the refund", "de44500105175407324931", "iban"),
        # A mobile number grouped 3-4-4 whose digits run 1555...: not North America's 555.
        ("Call Li Wei on 155 5123 4567", "155 5123 4567", "phone"),
        (
            "SECRET_KEY='%soz9lh#x&p6_7x7)*+8vmgeiwv0-2gani+5q9z9qv5dtpw90k'",
            "%soz9lh#x&p6_7x7)*+8vmgeiwv0-2gani+5q9z9qv5dtpw90k",
            "generic-secret",
        ),
    ],
)
def test_found_whole_with_its_kind(text: str, secret: str | None, kind: str) -> None:
    if secret is None:  # the secret is the text's one key or phrase, as the format reads it
        secret = _PEM if kind == "private-key" else "correct horse battery staple"
        text = text.replace("\r\n", "\n")
    hits = detect(text)
    assert [(h.kind, h.secret) for h in hits] == [(kind, secret)]
    assert text[hits[0].start : hits[0].end] == secret


def test_a_private_key_quoted_in_markdown_is_found_whole() -> None:
    quoted = "\n".join("> " + line for line in _PEM.splitlines())
    text = f"Pasted by the user:\n\n{quoted}\n\nthanks"
    hits = detect(text)
    assert [h.kind for h in hits] == ["private-key"]
    assert hits[0].secret == quoted.removeprefix("> ")
    assert detect("> -----BEGIN RSA PRIVATE KEY-----\n> ...\n> -----END RSA PRIVATE KEY-----") == []


def test_both_passwords_of_a_change() -> None:
    text = "The admin password was changed from Lantern2189$ to Orbit243* on Monday."
    assert [(h.kind, h.secret) for h in detect(text)] == [
        ("password", "Lantern2189$"),
        ("password", "Orbit243*"),
    ]


def test_aws_secret_in_a_nested_field_is_aws() -> None:
    secret = "Rz/1wDqf6IL+7i3/vYNjGDE+kA2TkK57FaS4vYC/"
    hits = detect(secret, "content.structured.aws.secret_access_key")
    assert [(h.kind, h.secret) for h in hits] == [("aws-key", secret)]


@pytest.mark.parametrize(
    "decoy",
    [
        # IAM ids that are not keys; a Sentry DSN's public key; an IMEI (Luhn, 15 digits).
        '"UserId": "AIDAN4KGU5UYLLJRZA6G", "Arn": "arn:aws:iam::123456789012:user/ci-bot"',
        "assumed role AROAEF3KOGOPDUFEYWGC:session-mara",
        "SENTRY_DSN=https://43fea2a23c3a1781ab3f7f3664040025@o450123.ingest.sentry.io/4505123",
        "IMEI 352099001761481 of the test phone",
        # A PEM header mentioned in prose, then other notes.
        "files starting with -----BEGIN OPENSSH PRIVATE KEY----- must be chmod 600\n\n"
        "| note | Change-Id: I46ba16db03bb85076e7a35872bf84054d9ab21f5 |",
        # An empty password, then another paragraph; an ISSN; a docstring.
        "jdbc:postgresql://db:5432/app?user=app&password=\n\nlösenordet är ett lösenord",
        "ISSN 0020-0190, https://doi.org/10.1016/0020-0190(74)90001-5.",
        "password (bool, optional): Enable password input. Defaults to False.",
        "pass the --username and --password options instead of via the URL",
        "password_field: pwd\n\n- tailscale up",
        # Prose about a password, with several words after "is".
        "the wifi password is on the fridge",
        "The password is written on a sticky note under the keyboard.",
        "the password is stored hashed in the users table",
        "the password is never logged anywhere",
        "password hashing: argon2id, memory 64 MiB, 3 passes",
        "the password sha256 digest is kept, not the password",
        "set the minimum password to 128 bits of entropy",
        "echo $PW | docker login --password-stdin",
        "password: %DB_PASS% and api_key = '%(api_key)s'",
        # Published test and example numbers said to be ones.
        "Stripe's test card 4242 4242 4242 4242 always succeeds; 4000 0000 0000 0002 declines.",
        "The sample IBAN GB82 WEST 1234 5698 7654 32 from the spec passes mod-97.",
        "e.g. card 4111111111111111 in the sandbox",
        # A wallet key with one character changed (its checksum fails); an address.
        "5J6GYthGRP227goJShej77o8TbaZ6HyGWCZQxU5gLpobhjEaKuT to 1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2",
        # Logins that name no password; URLs whose query holds no key.
        "login is via SSO/LDAP; login: https://sso.fernway.io/start; login: mara/2026-11-20",
        "Login: ops / maple-syrup; the login is user/password; credentials: s3://bucket/creds",
        "https://fernway.io/notes?key=release-notes-2026-11&token=abcdefghijklmnopqrstuvwxyz",
        # Page and sync cursors named like tokens; `pass` before an option or a name in backticks.
        "GET /v2/items?page_token=CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA1ZmxmbTMQAQ&limit=50",
        '{"nextPageToken": "CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA1ZmxmbTMQAQ"}',
        "sync token: Xk29fLq0ZtR8mN4pW7yVq",
        "pass `--no-cache` to pip, `utf-8` as the encoding; pass `x86_64` for the arch",
        # A token "for" a page or a run; a credential's value that is a name with numbers.
        "The token for the next page is CiAKGjBpNDd2Nmp2Zml2cXRtcjJhOGxuZzRnNBIEMjAyNg",
        "the token for this run is in the CI variables",
        "The access token for the EU region is eu-west-1-production-cluster",
        "token: build_2026_11_nightly",
        "Login for the old Jira is via SSO/LDAP; credentials for the NAS are in the vault",
        # A table's phone column holding no number; a lower-case IBAN whose check fails.
        "| desk | tel |\n|---|---|\n| front | ext. 42 |",
        "iban de00500105175407324931",
        # A domain for the reader to fill in; North America's unassigned area code 555.
        "Send it to you@yourcompany.com, or jana@yourdomain.cz",
        "Phone format: +1 (555) 123-4567",
        # Team inboxes, not people's mailboxes.
        "Mail security@nordvik-logistics.se or Support@fernway.io; billing@acme.dev for invoices.",
    ],
)
def test_decoys_are_not_findings(decoy: str) -> None:
    assert [(h.kind, h.secret) for h in detect(decoy)] == []


def test_a_quoted_value_that_is_a_placeholder_is_not_a_secret() -> None:
    text = json.dumps({"verify_token": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9..."})
    assert detect(text) == []


#: jwt.io's sample token (claims sub 1234567890, John Doe, iat 1516239022).
_JWT_IO = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwia"
    "WF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)


@pytest.mark.parametrize(
    "decoy",
    [
        "Used the Stripe test key sk_test_4eC39HqLyjWDarjtT1zdp7dc from the docs.",
        "api_key = sk_test_4eC39HqLyjWDarjtT1zdp7dc  # the docs' sample",
        f"Example token {_JWT_IO} from jwt.io",
        f"Authorization: Bearer {_JWT_IO} (the documentation's example)",
    ],
)
def test_published_samples_quoted_as_documentation_are_not_findings(decoy: str) -> None:
    assert detect(decoy) == []


@pytest.mark.parametrize(
    ("text", "secret", "kind"),
    [
        # The same published values pasted as real ones (nothing says they are samples).
        ("STRIPE_SECRET_KEY=sk_test_4eC39HqLyjWDarjtT1zdp7dc", "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
         "stripe-key"),
        (f"Session token was {_JWT_IO}", _JWT_IO, "jwt"),
        # One character off a published key: no sample, whatever the line says.
        ("api_key = sk_test_4eC39HqLyjWDarjtT1zdq7dc  # the docs' sample",
         "sk_test_4eC39HqLyjWDarjtT1zdq7dc", "stripe-key"),
    ],
)  # fmt: skip
def test_published_samples_pasted_as_real_ones_are_findings(
    text: str, secret: str, kind: str
) -> None:
    assert [(h.kind, h.secret) for h in detect(text)] == [(kind, secret)]
