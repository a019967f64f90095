"""Planted vaults for the privacy scan: fake secrets of every kind and decoys of every kind.

`plant(tmp)` writes one vault per format below `tmp` (built here, never
copied from elsewhere) and returns what it planted: every secret with its
kind and the memory and field it sits in, and every decoy.  The secrets are
made up (random with a fixed seed, with valid checksums where a kind has
one); none is a real credential.  Loaded by file path from the tests.
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass
from pathlib import Path

_RNG = random.Random(20261127)
#: Kinds added later draw from their own generator, so the older draws stay as they were.
_RNG_LATER = random.Random(20270301)
_ALNUM = string.ascii_letters + string.digits


def _rand(n: int, alphabet: str = _ALNUM, rng: random.Random = _RNG) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _luhn_complete(prefix: str) -> str:
    """`prefix` plus the Luhn check digit."""
    for d in "0123456789":
        digits = prefix + d
        total = 0
        for i, ch in enumerate(reversed(digits)):
            v = int(ch)
            if i % 2 == 1:
                v = v * 2 - 9 if v > 4 else v * 2
            total += v
        if total % 10 == 0:
            return digits
    raise AssertionError("no check digit")


def _iban(country: str, bban: str) -> str:
    moved = bban + country + "00"
    check = 98 - int("".join(str(int(c, 36)) for c in moved)) % 97
    compact = f"{country}{check:02d}{bban}"
    return " ".join(compact[i : i + 4] for i in range(0, len(compact), 4))


def _b64(obj: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


def _card(prefix: str, length: int) -> str:
    digits = _luhn_complete(prefix + _rand(length - len(prefix) - 1, string.digits))
    return " ".join(digits[i : i + 4] for i in range(0, len(digits), 4))


def _private_key() -> str:
    lines = [_rand(64, _ALNUM + "+/") for _ in range(5)]
    return (
        "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END RSA PRIVATE KEY-----"
    )


def _secrets() -> dict[str, str]:
    """One fresh secret of every kind (a new draw per call)."""
    jwt = ".".join(
        (
            _b64({"alg": "HS256", "typ": "JWT"}),
            _b64({"sub": _rand(8), "name": "Mara Lind", "iat": 1764000000}),
            _rand(43, _ALNUM + "-_"),
        )
    )
    card = _card("4", 16)
    return {
        "aws-key": "AKIA" + _rand(16, string.ascii_uppercase + string.digits),
        "github-token": "ghp_" + _rand(36),
        "slack-token": f"xoxb-{_rand(10, string.digits)}-{_rand(12, string.digits)}-{_rand(24)}",
        "stripe-key": "sk_live_" + _rand(24),
        "openai-key": "sk-proj-" + _rand(48),
        "private-key": _private_key(),
        "connection-string": _rand(6) + "!" + _rand(6),
        "jwt": jwt,
        "card-number": card,
        "iban": _iban("DE", _rand(18, string.digits)),
        "email": f"{_rand(5, string.ascii_lowercase)}.{_rand(6, string.ascii_lowercase)}"
        "@fernmail.hr",
        "phone": f"+385 91 {_rand(3, '2346789')} {_rand(4, '2346789')}",
        "password": _rand(5, string.ascii_lowercase) + _rand(3, string.digits) + "!",
        "generic-secret": _rand(32),
        "api-token": "glpat-" + _rand(20, _ALNUM + "_-", _RNG_LATER),
    }


def _sentence(kind: str, secret: str) -> str:
    """A line of prose an agent might write, holding the secret."""
    return {
        "aws-key": f"Deploy user key is {secret} (rotate in March).",
        "github-token": f"CI pushes with the token {secret} from the bot account.",
        "slack-token": f"The standup bot posts with {secret}.",
        "stripe-key": f"Billing test run used {secret} by mistake.",
        "openai-key": f"The summariser calls the API with {secret}.",
        "private-key": f"Server key pasted by the user:\n{secret}\nKeep it off the wiki.",
        "connection-string": (
            f"Prod DB: postgres://billing:{secret}@db-prod-3.fernway.io:5432/billing"
        ),
        "jwt": f"Session cookie for the admin panel was {secret} at 10:02.",
        "card-number": f"Company card {secret}, expiry 09/28.",
        "iban": f"Refunds go to IBAN {secret} (Zagrebačka banka).",
        "email": f"Send the invoice to {secret} before Friday.",
        "phone": f"Mara's mobile is {secret}, call after 17:00.",
        "password": f"The NAS password is {secret} since the reset.",
        "generic-secret": f"webhook config: client_secret = {secret}",
        "api-token": f"The GitLab runner registers with {secret}; rotate it in May.",
    }[kind]


#: Texts that look like secrets and are not: each must give no finding.
DECOYS: tuple[str, ...] = (
    "Fixed in commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 (short 3f2a9c1).",
    "Memory id e21b6f90-4a3c-4d85-b7e2-0c9f13a6d527 links here.",
    "Artifact sha256:9c58f6e1d9d12055e00a1ab2359f356a09c9e0c0dffaf9873f7bb383c7dcfe2f checked.",
    "Set OPENAI_API_KEY=sk-... in your shell, never the real key.",
    "Put <your-token> in the header; api_key = YOUR_API_KEY in config.toml.",
    "The env file reads GITHUB_TOKEN=${GITHUB_TOKEN} and AWS_KEY=$AWS_ACCESS_KEY_ID.",
    "A token looks like ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx in the docs.",
    "The AWS docs use AKIAIOSFODNN7EXAMPLE as their sample key.",
    "Example connection: postgres://user:password@localhost:5432/app.",
    "Write to alice@example.com or ops@example.org; tests use bob@staging.test.",
    "Clone git@github.com:fernway/app.git for the sources.",
    "Film number (415) 555-0142, or 555-0123 for the front desk script.",
    "Upgraded to v2.14.3 (build 1.2.3.4) on 2026-11-09, next review 2027/01/15.",
    "See ISBN 978-0-306-40615-7 for the reference book.",
    "Card 4539 1488 0343 6468 failed the checksum, so it was a typo.",
    "The IBAN DE89 3704 0044 0532 0130 01 was rejected (bad check digits).",
    "The password is stored in 1Password; password: ********; password is required.",
    "Server 10.0.12.201 handled order 100234567 and 9,115 steps.",
    "token: refresh-on-expiry, secret: managed-by-vault",
    # Where a value names its source rather than holding it.
    'apiKey: process.env.OPENAI_API_KEY; password = os.environ["DB_PASSWORD"]',
    "api_key: GITHUB_PERSONAL_ACCESS_TOKEN; pwd: /home/mara/projects/fernway",
    "password: !vault | (Ansible encrypts it)",
    # Typed examples and names that start like a vendor's prefix.
    "AKIA1234567890ABCDEF is what the tutorial shows.",
    "The notebook uses sk-learn-compatible-estimators-everywhere.",
    # Prose about passwords, not a password.
    "The password is expiring soon; password: N/A (SSO only); Password: (same as Slack).",
    # Logins and machines, not people's mailboxes.
    "ssh deploy@bastion.fernway.io, then mail deployer@fernway-prod.iam.gserviceaccount.com.",
    "ftp://anonymous:guest@ftp.fernway.io/pub and user@domain.tld in the manual.",
    # Numbers: a 20-digit tracking number (its first 16 digits pass Luhn), a time range.
    "USPS tracking 4206 1048 3000 0000 1234 arrived; call at 10.30-11.45 tomorrow.",
    # Published samples said to be ones, team inboxes, a page cursor, a wallet address.
    "Stripe's test card 4242 4242 4242 4242 always passes.",
    "The spec's sample IBAN is GB82 WEST 1234 5698 7654 32.",
    "Questions to support@fernway.io or security@fernway.io (team inboxes).",
    "GET /v2/items?page_token=CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA1ZmxmbTMQAQ&limit=50 paged on.",
    "Donations to 1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2; pass `--no-cache` to pip.",
)


@dataclass(frozen=True, slots=True)
class Planted:
    kind: str
    secret: str
    format: str
    memory_id: str
    field: str


def _fm_value(secret: str) -> str:
    return json.dumps(secret)  # a double-quoted YAML scalar


def _ocean(root: Path, planted: list[Planted]) -> None:
    vault = root / "agents" / "atlas" / "memory" / "vault"
    vault.mkdir(parents=True)
    (root / "agents" / "atlas" / "memory" / "archive").mkdir()
    kinds = list(_secrets().items())
    for n, chunk in enumerate((kinds[:5], kinds[5:10], kinds[10:])):
        stem = f"obs-2026-11-{n + 10:02d}-001"
        lines = []
        for kind, secret in chunk:
            lines.append(_sentence(kind, secret))
            planted.append(Planted(kind, secret, "project-ocean", f"atlas/{stem}", "body"))
        (vault / f"{stem}.md").write_text(
            "---\ntags: [ops, notes]\nconfidence: 0.9\ncreated: 2026-11-10\n"
            "decay: linear-90d\nsource: atlas\n---\n\n" + "\n\n".join(lines) + "\n",
            encoding="utf-8",
        )
    email = _secrets()["email"]
    planted.append(Planted("email", email, "project-ocean", "atlas/obs-2026-11-20-001", "contact"))
    (vault / "obs-2026-11-20-001.md").write_text(
        f"---\ntags: [people]\nconfidence: 0.8\ncreated: 2026-11-20\nsource: atlas\n"
        f"contact: Mara Lind <{email}>\n---\n\nMara owns the billing export.\n",
        encoding="utf-8",
    )
    (vault / "obs-2026-11-21-001.md").write_text(
        "---\ntags: [docs]\nconfidence: 0.8\ncreated: 2026-11-21\nsource: atlas\n---\n\n"
        + "\n".join(DECOYS)
        + "\n",
        encoding="utf-8",
    )


def _cognitive(root: Path, planted: list[Planted]) -> None:
    folder = root / "graph" / "configurations"
    folder.mkdir(parents=True)
    (root / "vault").mkdir()
    kinds = list(_secrets().items())
    items = [kinds[:5], kinds[5:10], kinds[10:], [("decoy", d) for d in DECOYS]]
    for n, chunk in enumerate(items):
        uid = f"0d6a9c38-f5e2-4b17-9c4a-72b8e1d03f{n:02d}"
        title = f"Settings note {n}"
        body = []
        for kind, secret in chunk:
            if kind == "decoy":
                body.append(secret)
                continue
            body.append(_sentence(kind, secret))
            planted.append(Planted(kind, secret, "cognitive-memory", uid, "body"))
        (folder / f"settings-note-{n}-{uid[-6:]}.md").write_text(
            f"---\nid: {uid}\ntype: configuration\ntitle: {title}\ntags: [ops]\n"
            f"importance: 0.6\nconfidence: 0.8\ncreated: 2026-11-01T10:00:00+00:00\n"
            f"updated: 2026-11-01T10:00:00+00:00\n---\n\n" + "\n\n".join(body) + "\n",
            encoding="utf-8",
        )
    token = _secrets()["aws-key"]
    uid = "0d6a9c38-f5e2-4b17-9c4a-72b8e1d03f99"
    planted.append(Planted("aws-key", token, "cognitive-memory", uid, "title"))
    (folder / f"key-in-title-{uid[-6:]}.md").write_text(
        f"---\nid: {uid}\ntype: configuration\ntitle: Deploy key {token} for staging\n"
        "tags: [ops]\nimportance: 0.5\nconfidence: 0.8\ncreated: 2026-11-02T10:00:00+00:00\n"
        "updated: 2026-11-02T10:00:00+00:00\n---\n\nUsed by the staging pipeline.\n",
        encoding="utf-8",
    )


def _observation(root: Path, planted: list[Planted]) -> None:
    folder = root / "observations"
    folder.mkdir(parents=True)
    kinds = list(_secrets().items())
    items = [kinds[:5], kinds[5:10], kinds[10:], [("decoy", d) for d in DECOYS]]
    for n, chunk in enumerate(items):
        oid = f"obs-9{n:02d}"
        body = []
        for kind, secret in chunk:
            if kind == "decoy":
                body.append(secret)
                continue
            body.append(_sentence(kind, secret))
            planted.append(Planted(kind, secret, "observation-v1", oid, "body"))
        (folder / f"{oid}.md").write_text(
            f"---\nspec: observation/v1\ntype: observation\nid: {oid}\n"
            f"timestamp: 2026-11-0{n + 1}T08:00:00Z\nsource: agent/ops\n"
            f"event: Notes from the ops channel\ncontext:\n  project: fernway\n---\n\n"
            f"# Observation: notes {n}\n\n" + "\n\n".join(body) + "\n",
            encoding="utf-8",
        )
    pw = _secrets()["password"]
    planted.append(Planted("password", pw, "observation-v1", "obs-990", "context.note"))
    (folder / "obs-990.md").write_text(
        "---\nspec: observation/v1\ntype: observation\nid: obs-990\n"
        "timestamp: 2026-11-09T08:00:00Z\nsource: agent/ops\nevent: Router reset\n"
        f"context:\n  project: fernway\n  note: 'router admin pw: {pw}'\n---\n\nReset done.\n",
        encoding="utf-8",
    )


def _experience(root: Path, planted: list[Planted]) -> None:
    root.mkdir(parents=True)
    lines = []
    kinds = list(_secrets().items())
    texts: list[tuple[str, list[tuple[str, str]]]] = [
        ("a1", kinds[:5]),
        ("a2", kinds[5:10]),
        ("a3", kinds[10:]),
        ("a4", [("decoy", d) for d in DECOYS]),
    ]
    for suffix, chunk in texts:
        eid = f"exp_2026-11-0{len(lines) + 1}T10:00:00Z_{suffix}f0"
        parts = []
        for kind, secret in chunk:
            if kind == "decoy":
                parts.append(secret)
                continue
            parts.append(_sentence(kind, secret))
            planted.append(Planted(kind, secret, "experience-records", eid, "content.text"))
        lines.append(
            {
                "id": eid,
                "type": "occurrence",
                "created_at": f"2026-11-0{len(lines) + 1}T10:00:00Z",
                "content": {"text": " ".join(parts), "media": [], "structured": {}},
                "provenance": {"sources": [], "actor": "user", "method": "capture"},
                "evidence_ptrs": [],
                "confidence": {"p": 0.9, "method": "direct_capture"},
                "parents": [],
            }
        )
    conn = _secrets()["connection-string"]
    eid = "exp_2026-11-09T10:00:00Z_b1f0"
    uri = f"mysql://app:{conn}@db-eu-1.fernway.io/app"
    planted.append(
        Planted("connection-string", conn, "experience-records", eid, "provenance.sources[0].uri")
    )
    lines.append(
        {
            "id": eid,
            "type": "occurrence",
            "created_at": "2026-11-09T10:00:00Z",
            "content": {"text": "Read the replica lag from the app database.", "media": []},
            "provenance": {"sources": [{"uri": uri}], "actor": "tool(sql)", "method": "capture"},
            "evidence_ptrs": [],
            "parents": [],
        }
    )
    (root / "experiences.jsonl").write_text(
        "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8"
    )


def _dream(root: Path, planted: list[Planted]) -> None:
    root.mkdir(parents=True)
    kinds = list(_secrets().items())
    sections = ["# Observations\n\nObserver log.\n"]
    items = [kinds[:5], kinds[5:10], kinds[10:], [("decoy", d) for d in DECOYS]]
    for n, chunk in enumerate(items):
        title = f"Ops notes part {n}"
        body = []
        for kind, secret in chunk:
            if kind == "decoy":
                body.append(secret)
                continue
            body.append(_sentence(kind, secret))
            planted.append(Planted(kind, secret, "dream-cycle", title, "body"))
        sections.append(
            f"## {title}\n<!-- dc:type=fact dc:importance=6.0 dc:ttl=90 dc:date=2026-11-1{n} -->\n"
            + "\n".join(body)
            + "\n"
        )
    phone = _secrets()["phone"]
    title = f"Courier number {phone}"
    planted.append(Planted("phone", phone, "dream-cycle", title, "title"))
    sections.append(
        f"## {title}\n<!-- dc:type=fact dc:importance=5.0 dc:ttl=90 dc:date=2026-11-14 -->\n"
        "The courier picks up at the back door.\n"
    )
    # A heading's slug is the section's id: the password would be printed in it.
    password = _rand(6, string.ascii_lowercase, _RNG_LATER) + _rand(3, string.digits, _RNG_LATER)
    title = f"NAS password is {password}"
    planted.append(Planted("password", password, "dream-cycle", title, "title"))
    sections.append(
        f"## {title}\n<!-- dc:type=fact dc:importance=4.0 dc:ttl=90 dc:date=2026-11-15 -->\n"
        "Reset after the firmware update.\n"
    )
    (root / "observations.md").write_text("\n".join(sections), encoding="utf-8")


def plant(tmp: Path) -> list[Planted]:
    """Write the five planted vaults below `tmp`; return every planted secret."""
    planted: list[Planted] = []
    _ocean(tmp / "ocean", planted)
    _cognitive(tmp / "cognitive", planted)
    _observation(tmp / "observation", planted)
    _experience(tmp / "experience", planted)
    _dream(tmp / "dream", planted)
    return planted
