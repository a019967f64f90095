"""The privacy scan: every planted secret found in every format, no decoy, masks only."""

from __future__ import annotations

from pathlib import Path

import privacy_plant as pp
import pytest

from memlens.core.formats import ADAPTERS
from memlens.core.privacy import KINDS, mask, scan_catalog
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
    assert sorted(v.format for v in catalog.vaults) == sorted(a.format_id for a in ADAPTERS)
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
    for a in ADAPTERS:
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
        ("test card 4111 1111 1111 1111", "card-number"),
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
