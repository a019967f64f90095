"""The privacy scan: every planted secret found in every format, no decoy, masks only."""

from __future__ import annotations

from pathlib import Path

import privacy_plant as pp
import pytest

from memlens.core.formats import adapters
from memlens.core.privacy import KINDS, hide_in_name, mask, scan_catalog
from memlens.core.privacy.detectors import (
    detect,
    fictional_phone,
    iban_ok,
    is_placeholder,
    jwt_ok,
    luhn_ok,
    reserved_domain,
)
from memlens.core.scan.vault import open_catalog


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    root = tmp_path_factory.mktemp("planted")
    return root, pp.plant(root)


def test_planted_vaults_parse_cleanly(planted: tuple[Path, list]) -> None:
    root, _ = planted
    catalog = open_catalog(root, cache=False)
    assert sorted(v.format for v in catalog.vaults) == sorted(a.format_id for a in adapters())
    assert [p.detail for p in catalog.problems()] == []


def test_every_secret_found_and_no_decoy(planted: tuple[Path, list]) -> None:
    root, secrets = planted
    found = scan_catalog(open_catalog(root, cache=False))
    want = {(p.format, p.field, p.kind, p.secret) for p in secrets}
    got = {(f.format, f.field, f.kind, f.secret) for f in found}
    assert sorted(x[:3] for x in want - got) == []  # missed
    assert sorted((*x[:3], mask(x[3])) for x in got - want) == []  # decoys or wrong kinds
    assert len(found) == len(secrets)  # one finding per planted secret
    # Every kind in every format.
    for a in adapters():
        kinds = {f.kind for f in found if f.format == a.format_id}
        assert kinds >= set(KINDS) - {"anthropic-key"}, a.format_id


def test_findings_name_memory_file_and_line(planted: tuple[Path, list]) -> None:
    root, secrets = planted
    found = scan_catalog(open_catalog(root, cache=False))
    by_secret = {f.secret: f for f in found}
    for p in secrets:
        f = by_secret[p.secret]
        if p.format != "dream-cycle":  # dream-cycle ids come from the title
            assert f.id == p.memory_id
        assert f.line is not None and f.line >= 1
        text = (f.vault_root / f.path).read_text(encoding="utf-8").splitlines()
        first = p.secret.splitlines()[0]
        if p.format == "experience-records":
            assert first[:8] in text[f.line - 1]  # JSON escapes the rest
        else:
            assert first in text[f.line - 1], (p.kind, p.format, f.line)


def test_repr_and_dict_never_hold_the_secret(planted: tuple[Path, list]) -> None:
    root, _ = planted
    for f in scan_catalog(open_catalog(root, cache=False)):
        assert f.secret not in repr(f)
        assert f.secret not in str(f.to_dict())
        assert f.secret not in str(f)
        assert f.to_dict()["masked"] == mask(f.secret)


@pytest.mark.parametrize(
    ("secret", "shown"),
    [("AKIAQ3EGRT7ZKXW4NB2L", "AKIA…(20)"), ("hunter2", "h…(7)"), ("abc", "…(3)")],
)
def test_mask_keeps_at_most_a_quarter(secret: str, shown: str) -> None:
    assert mask(secret) == shown


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("key AKIAQ3EGRT7ZKXW4NB2L here", "aws-key"),
        ("the wifi password for the cabin is 'correct horse battery staple'", "password"),
        ("pw: Tr0ub4dor&3", "password"),
        ("PIN: 4921", "password"),
        ("Authorization: Bearer 8fJ2kLq9Zx4TmN7vB1cR5yW3pH6sD0gA", "generic-secret"),
        ("my card 4111 1111 1111 1111", "card-number"),
        ("IBAN GB82 WEST 1234 5698 7654 32", "iban"),
        ("call (415) 867-5309 tonight", "phone"),
        ("Mobile: 091 734 2210", "phone"),
        ("Server=db1;Database=app;User Id=sa;Password=Zt8#kq2Lm;", "connection-string"),
        ("sk-ant-api03-AbCdEf1234567890GhIjKlMnOpQrSt", "anthropic-key"),
        (
            "https://hooks.slack.com/services/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",
            "slack-token",
        ),
    ],
)
def test_single_detections(text: str, kind: str) -> None:
    assert [h.kind for h in detect(text)] == [kind]


_AWS_SECRET = "d6CRSH2D6oqM79+O36jKkv+0GhTnrU/D4J1/pmHd"


@pytest.mark.parametrize(
    ("text", "secret", "kind"),
    [
        # Other services' tokens, by their documented prefix.
        (
            "GitLab deploy token: glpat-38AibNyyurlGFb0EkjKW",
            "glpat-38AibNyyurlGFb0EkjKW",
            "api-token",
        ),
        (
            "Maps uses key=AIza8pdqsxRpvED5hJRaOvRTYZPNvS_I4k9GvvK on the locator.",
            "AIza8pdqsxRpvED5hJRaOvRTYZPNvS_I4k9GvvK",
            "api-token",
        ),
        (
            "SendGrid 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 sends",
            "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",
            "api-token",
        ),
        (
            "publish with npm_57Nb5srpS9wg1QlRRLiiRejeKx0gbVC3lrAm.",
            "npm_57Nb5srpS9wg1QlRRLiiRejeKx0gbVC3lrAm",
            "api-token",
        ),
        (
            "HF_TOKEN=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",
            "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",
            "api-token",
        ),
        (
            "Twilio SKd796c25410335b400141212b62c37663, secret elsewhere",
            "SKd796c25410335b400141212b62c37663",
            "api-token",
        ),
        (
            "Claude Code token sk-ant-oat01-zNHIA33NbEI3p85cRbGIEV45gO_V-RrwlIM5dcJj from login",
            "sk-ant-oat01-zNHIA33NbEI3p85cRbGIEV45gO_V-RrwlIM5dcJj",
            "anthropic-key",
        ),
        (
            "signing secret whsec_0Vyhlr7HiKRkf3hlrHsOaS0fH5EEg14T",
            "whsec_0Vyhlr7HiKRkf3hlrHsOaS0fH5EEg14T",
            "stripe-key",
        ),
        # AWS's secret access key: by its name, or after its key id.
        (f"aws_secret_access_key = {_AWS_SECRET}", _AWS_SECRET, "aws-key"),
        (f"The AWS secret key is {_AWS_SECRET} (deploy user).", _AWS_SECRET, "aws-key"),
        # Passwords in prose: new tense, quoted right after the word, other languages, JSON.
        ("The password is now Falcon577%.", "Falcon577%", "password"),
        ("Router password was changed to Birch0183@ yesterday.", "Birch0183@", "password"),
        (
            "wifi passphrase 'correct horse battery staple'",
            "correct horse battery staple",
            "password",
        ),
        ("Das WLAN-Passwort ist Falcon78@.", "Falcon78@", "password"),
        ("la contraseña es river701%", "river701%", "password"),
        ("- user: root, pass: maple99?", "maple99?", "password"),
        ('{"username": "admin", "password": "Orbit52!"}', "Orbit52!", "password"),
        ("username/password: admin/Birch7084$", "Birch7084$", "password"),
        # The same pair after a long text: the `user/` prefix is looked for just before.
        ("lorem ipsum " * 500 + "username/password: admin/Birch7084$", "Birch7084$", "password"),
        ("the door pin is 989392", "989392", "password"),
        # Addresses in links and without a space; phones after words in other languages.
        ("[Priya](mailto:Priya.Raman@fernway.co.uk)", "Priya.Raman@fernway.co.uk", "email"),
        ("email:tomas_varga@outlook.com", "tomas_varga@outlook.com", "email"),
        ("write to ops.lead.mara@fernway.io", "ops.lead.mara@fernway.io", "email"),
        ("cc it@ and then it.ana@fernway.io", "it.ana@fernway.io", "email"),
        ("Handy: 0151 23948172", "0151 23948172", "phone"),
        ("Son portable : 06 12 48 73 95", "06 12 48 73 95", "phone"),
        # A phone number after `+` is a phone even when its digits pass Luhn.
        ("WhatsApp +4915123948106", "+4915123948106", "phone"),
        # Connection strings: HTTP basic auth in a URL, a password in the query,
        # SQLAlchemy's driver suffix, Azure's account key.
        (
            "Grafana: https://admin:brUKpCUVl7dx@grafana.fernway.io/",
            "brUKpCUVl7dx",
            "connection-string",
        ),
        (
            "jdbc:postgresql://db.fernway.io:5432/app?user=app&password=XVTS2jUWfsOJ",
            "XVTS2jUWfsOJ",
            "connection-string",
        ),
        (
            "postgresql+psycopg2://fern:KTm7HTT17mK8@pg.fernway.io:5432/fern",
            "KTm7HTT17mK8",
            "connection-string",
        ),
        (
            "DefaultEndpointsProtocol=https;AccountName=fw;AccountKey=BSDv2iFeuS0HOkJ9C1hnsSSIIpeU"
            "xT0uRcm0EA6Gk8htj+wf0gZpc5RIpGuK0Q+Ye6UamnabfIoGCo16wEn4XR==;EndpointSuffix=core.windows.net",
            "BSDv2iFeuS0HOkJ9C1hnsSSIIpeUxT0uRcm0EA6Gk8htj+wf0gZpc5RIpGuK0Q+Ye6UamnabfIoGCo16wEn4XR==",
            "connection-string",
        ),
        # HTTP basic authentication: base64 of admin:Falcon577%.
        (
            "Authorization: Basic YWRtaW46RmFsY29uNTc3JQ==",
            "YWRtaW46RmFsY29uNTc3JQ==",
            "generic-secret",
        ),
    ],
)
def test_more_detections(text: str, secret: str, kind: str) -> None:
    assert [(h.kind, h.secret) for h in detect(text)] == [(kind, secret)]


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        # Markdown around the word, a dash, the next line, CJK, a wrapped passphrase.
        ("**Password:** maple062!", "maple062!"),
        ("**Password**: `Birch14@`", "Birch14@"),
        ("- *password* - maple245%", "maple245%"),
        ("Password:\n    Lantern88#", "Lantern88#"),
        ("密码：Falcon77!", "Falcon77!"),
        ("パスワードはFalcon977*です", "Falcon977*"),
        ("passphrase: correct horse battery staple", "correct horse battery staple"),
        (
            "| note | GPG passphrase: purple monkey dishwasher lamp |",
            "purple monkey dishwasher lamp",
        ),
        # Command lines.
        ("curl -u admin:maple59& https://jenkins.fernway.io/api/json", "maple59&"),
        ("mysql -u root -pmaple892@ crm", "maple892@"),
        ("sshpass -p 'maple7824%' ssh pi@raspberrypi.lan", "maple7824%"),
    ],
)
def test_passwords_in_markdown_and_commands(text: str, secret: str) -> None:
    assert [(h.kind, h.secret) for h in detect(text)] == [("password", secret)]


def test_a_table_column_named_password() -> None:
    table = (
        "| Service | User | Password |\n|---|---|---|\n| NAS | admin | Birch232% |\n"
        "| Router | root | **maple2218%** |\n| Wiki | mara | SSO |\n| VPN | mara | ******** |"
    )
    assert [(h.kind, h.secret) for h in detect(table)] == [
        ("password", "Birch232%"),
        ("password", "maple2218%"),
    ]
    assert detect("| Setting | Value |\n|---|---|\n| Password policy | 12 chars |") == []


def test_keys_in_other_files() -> None:
    putty = (
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: mara@laptop\n"
        "Public-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9\n"
        "GKJl\nPrivate-Lines: 1\nAAAAIEfgsJZ9EzBZq0Rk8hWmPaKjpnKoqCkqJbOaF5XB0yUpn0\n"
    )
    assert [h.kind for h in detect(putty)] == ["private-key"]
    age = "AGE-SECRET-KEY-1" + "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" * 2
    assert [h.kind for h in detect(f"age identity: {age[:74]}")] == ["private-key"]


def test_fields_named_for_what_they_hold() -> None:
    assert [h.kind for h in detect("015123948172", "context.phone")] == ["phone"]
    assert [h.kind for h in detect("Xk29fLq0!", "smtp_pass")] == ["password"]
    assert detect("140", "pass") == []  # a count of passed tests
    assert detect("3600", "phone_home_interval") == []


@pytest.mark.parametrize(
    "text",
    [
        "see https://fernway.io/contact?email=mara.lind@fernmail.hr",  # in a URL's query
        "git remote: https://mara@github.com/fernway/app.git",  # a URL's user: no finding
    ],
)
def test_addresses_in_urls(text: str) -> None:
    assert [h.secret for h in detect(text)] == (["mara.lind@fernmail.hr"] if "?" in text else [])


@pytest.mark.parametrize(
    "decoy",
    [
        "key_password: str | None = None; password: Optional[str]; 'password': 'bar'",
        "user_pass = (self.username + ':' + secret)",
        "Single pass: characters present; second pass: assemble the rows.",
        "arguments to pass to function.\n    kwargs: Keyword arguments",
        "Coordinates +52.520008, +13.404954; call at 10.30-11.45.",
        "Slack bot tokens look like xoxb-your-bot-token; sk_live_ keys go in the server.",
        "password - must be 12+ chars; pass: 12, fail: 0",
        "public_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJ1x8Ou6Qh7Tq6yQm0J9Zb0yqgMZbZq1kz0l8b8J",
        # A verb or a comparative after "password is" (the sentence goes on).
        "The password is read from $DB_PASSWORD at start.",
        "The new password is now longer than 12 characters.",
        "The admin password is built from the host name; the token was held by CI.",
        "The password is pulled through the secrets operator.",
        # Documentation's own hosts, even with a password-like value.
        "postgres://app:Zq81mxW2@db.example.com:5432/app and redis://:Zq81mxW2@cache.test/0",
    ],
)
def test_code_and_prose_that_hold_no_secret(decoy: str) -> None:
    assert detect(decoy) == []


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Connect with postgres://app_user:Tr0ub4dor&3x@db.internal:5432/prod", "Tr0ub4dor&3x"),
        ("Cache at redis://:hunter2hunter2@cache.internal:6379/0", "hunter2hunter2"),
        ("Local dev: mysql://root:Zx81!aQ@localhost/crm", "Zx81!aQ"),
        ("amqp://svc:Mq77pLx0@rabbit.corp.lan:5672/", "Mq77pLx0"),
    ],
)
def test_connection_strings_to_intranet_hosts_are_credentials(text: str, secret: str) -> None:
    """An intranet or local host is no documentation: its password is a real one."""
    assert [(h.kind, h.secret) for h in detect(text)] == [("connection-string", secret)]


def test_a_lowercase_password_ending_a_clause_is_still_found() -> None:
    for text in ("The password is swordfish.", "The password is swordfish for the guest wifi"):
        assert [(h.kind, h.secret) for h in detect(text)] == [("password", "swordfish")]


def test_an_aws_secret_written_after_its_key_id() -> None:
    hits = detect(f"IAM user ci-bot: key id AKIATZ2RTX6M4GDZAFC7 / secret {_AWS_SECRET}")
    assert [(h.kind, h.secret) for h in hits] == [
        ("aws-key", "AKIATZ2RTX6M4GDZAFC7"),
        ("aws-key", _AWS_SECRET),
    ]


def test_a_secret_in_an_id_is_hidden() -> None:
    assert (
        hide_in_name("nas-password-is-tulip4821-3f2a1c", ["tulip4821"])
        == "nas-password-is-tu…(9)-3f2a1c"
    )
    # As the slug of a heading: lowercase, `-` for other characters, cut short.
    assert (
        hide_in_name("courier-385-91-734-2210-ab12cd", ["+385 91 734 2210"])
        == "courier-+385…(16)-ab12cd"
    )
    assert hide_in_name("token-ghp-r8fk2mq9xlp4", ["ghp_R8fK2mQ9xLp4Tz7Wb1Nc6Vd3Hs5Jy0Ag2EkZ"]) == (
        "token-ghp_…(40)"
    )
    assert hide_in_name("atlas/obs-2026-11-10-001", ["hunter22"]) == "atlas/obs-2026-11-10-001"


@pytest.mark.parametrize("decoy", pp.DECOYS)
def test_each_decoy_alone_gives_nothing(decoy: str) -> None:
    assert detect(decoy) == []


def test_field_names_mark_credentials() -> None:
    assert [h.kind for h in detect("Zx9vQ2mN7pL4kR8tW1yB6cH3", "api_key")] == ["generic-secret"]
    assert [h.kind for h in detect("hunter22", "db_password")] == ["password"]
    # The same values under ordinary names are not findings.
    assert detect("Zx9vQ2mN7pL4kR8tW1yB6cH3", "sign") == []
    assert detect("hunter22", "title") == []


def test_checks() -> None:
    assert luhn_ok("4111111111111111") and not luhn_ok("4111111111111112")
    assert iban_ok("DE89370400440532013000") and not iban_ok("DE89370400440532013001")
    assert jwt_ok("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln")
    assert not jwt_ok("eyJmb28iOiJiYXIifQ.eyJzdWIiOiJ4In0.c2ln")  # no alg: not a JWT header
    assert reserved_domain("mail.example.com") and reserved_domain("a.test")
    assert not reserved_domain("fernmail.hr")
    assert fictional_phone("14155550142") and fictional_phone("385915550187")
    assert not fictional_phone("14158675309")
    assert is_placeholder("sk-xxxxxxxxxxxxxxxxxxxx") and is_placeholder("YOUR_API_KEY")
    assert not is_placeholder("ghp_R8fK2mQ9xLp4Tz7Wb1Nc6Vd3Hs5Jy0Ag2EkZ")
    # Mostly typed runs (`1234567890`, `ABCDEF`): an example, not a drawn key.
    assert is_placeholder("AKIA1234567890ABCDEF") and is_placeholder("abcdef1234567890abcdef12")
    assert not is_placeholder("sk-ant-api03-AbCdEf1234567890GhIjKlMnOpQrSt")
    # A placeholder's word in one case; a random key holds `yOUr` now and then.
    assert is_placeholder("sk-YOUR-KEY-HERE-0000000000") and not is_placeholder(
        "sk_live_51XTRQdiyOUsGrqb3CsyOUrkhDMQIbxl8qw4IvxTc8d1PI0PkOqKahzic38dBD80D6NY0VVLI"
    )
    # A lower-case word a random key drew between its letters (the sweep's round 4, seed 21,
    # lost a token to this): a key.  At the key's start, or in a key that does not read as
    # random, or in capitals inside AWS's documented secret: a placeholder.
    assert not is_placeholder("ghp_x9KfakeQ2Lm7RtY8uVw3ZpN4sDe6HgJb1CaZ")
    assert is_placeholder("ghp_fakeQ2Lm7RtY8uVw3ZpN4sDe6HgJb1Cax9KZ")
    assert is_placeholder("ghp_AbC1fakeTokenForDocs123") and is_placeholder("ghp_myfaketoken1234")
    assert is_placeholder("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
