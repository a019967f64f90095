"""Tokens recognised by their vendor's documented shape: a fixed prefix and a body.

One entry per shape: its kind, the pattern, and the substrings one of which
every match contains, case as written (the cheap test `detectors` runs
before the pattern, so a text without `glpat-` never runs the GitLab
pattern; `TOKEN_GATE`, one alternation of them all, skips most texts at once).  Each
body has the length and alphabet the vendor issues, so a word that merely
starts like a prefix (`sk-learn`, `npm_config`) does not match; placeholders
(`glpat-xxxxxxxxxxxxxxxxxxxx`) are dropped later by `checks.is_placeholder`.

The vendors the issue names have kinds of their own (AWS, GitHub, Slack,
Stripe, OpenAI, Anthropic); every other service's token is `api-token`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

WORD_START = r"(?<![A-Za-z0-9_])"
WORD_END = r"(?![A-Za-z0-9_])"


@dataclass(frozen=True, slots=True)
class TokenShape:
    """One vendor's token: matches of `pattern` are secrets of `kind`."""

    kind: str
    vendor: str
    pattern: re.Pattern[str]
    #: Substrings of which every match contains one (case as written).
    needles: tuple[str, ...]


def _shape(
    kind: str, vendor: str, body: str, *needles: str, end: bool = True, start: str = WORD_START
) -> TokenShape:
    tail = WORD_END if end else ""
    return TokenShape(kind, vendor, re.compile(start + "(?:" + body + ")" + tail), needles)


#: AWS access key ids: AKIA long-term, ASIA temporary (STS), ABIA and ACCA (gitleaks'
#: `aws-access-token`).  Not the other IAM unique ids (`AIDA` a user, `AROA` a role):
#: `aws iam get-user` prints those, and they open nothing.
AWS_KEY_ID = _shape("aws-key", "AWS", r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}",
                    "AKIA", "ASIA", "ABIA", "ACCA")  # fmt: skip

TOKEN_SHAPES: tuple[TokenShape, ...] = (
    AWS_KEY_ID,
    _shape("github-token", "GitHub",
           r"gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9]{20,30}_[A-Za-z0-9]{50,70}",
           "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    _shape("slack-token", "Slack",
           r"xox[abposre]-[0-9A-Za-z-]{10,}|xoxe\.xox[bp]-[0-9A-Za-z-]{10,}"
           r"|xapp-\d-[0-9A-Za-z-]{10,}",
           "xox", "xapp-"),
    # A webhook URL is the whole credential: anyone holding it can post.
    _shape("slack-token", "Slack",
           r"https://hooks\.slack\.com/(?:services|workflows|triggers)/T[A-Z0-9]+/[A-Za-z0-9/]+",
           "hooks.slack.com", end=False),
    # Secret and restricted keys, live and test (a test key still reads the
    # account's test data); webhook signing secrets.  Publishable keys
    # (`pk_live_`) are meant to ship in web pages: not secrets.
    _shape("stripe-key", "Stripe",
           r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}|whsec_[A-Za-z0-9+/=]{24,}",
           "_live_", "_test_", "whsec_"),
    # API, admin and OAuth keys (`sk-ant-api03-`, `sk-ant-admin01-`, `sk-ant-oat01-`).
    _shape("anthropic-key", "Anthropic", r"sk-ant-[a-z]{2,8}\d\d-[A-Za-z0-9_-]{20,}",
           "sk-ant-", end=False),
    _shape("openai-key", "OpenAI",
           r"sk-(?!ant-|or-v1-)(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}", "sk-"),
    # -- every other service: api-token -----------------------------------------
    _shape("api-token", "GitLab",
           r"gl(?:pat|dt|rt|ptt|ft|imt|oas|cbt|soat|ffct|agent)-[0-9A-Za-z_-]{20,}"
           r"|GR1348941[0-9A-Za-z_-]{20,}",
           "glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glimt-", "gloas-", "glcbt-",
           "glsoat-", "glffct-", "glagent-", "GR1348941"),
    _shape("api-token", "Google", r"AIza[0-9A-Za-z_-]{35}|GOCSPX-[0-9A-Za-z_-]{28}"
           r"|ya29\.[0-9A-Za-z_-]{30,}", "AIza", "GOCSPX-", "ya29."),
    _shape("api-token", "SendGrid", r"SG\.[0-9A-Za-z_-]{22}\.[0-9A-Za-z_-]{43}", "SG."),
    # API key SIDs (SK...) and account SIDs (AC...): 32 lowercase hex digits.
    # An API key's id (SK...); an Account SID (AC...) names the account and opens nothing.
    _shape("api-token", "Twilio", r"SK[0-9a-f]{32}", "SK"),
    # Fly.io's macaroon tokens, written with their scheme: `FlyV1 fm2_...`.
    _shape("api-token", "Fly.io", r"FlyV1 fm[12][a-z]?_[A-Za-z0-9+/=,_-]{40,}", "fm1", "fm2"),
    _shape("api-token", "npm", r"npm_[A-Za-z0-9]{36}", "npm_"),
    # PyPI and TestPyPI upload tokens: a macaroon whose header names the index.
    _shape("api-token", "PyPI", r"pypi-Ag(?:EIcHlwaS5vcmc|ENdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{40,}",
           "pypi-Ag"),
    _shape("api-token", "Hugging Face", r"hf_[A-Za-z0-9]{34,40}|api_org_[A-Za-z0-9]{34}",
           "hf_", "api_org_"),
    _shape("api-token", "DigitalOcean", r"do[opr]_v1_[a-f0-9]{64}", "_v1_"),
    _shape("api-token", "Shopify", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", "shp"),
    _shape("api-token", "Databricks", r"dapi[a-f0-9]{32}(?:-\d)?", "dapi"),
    _shape("api-token", "Linear", r"lin_(?:api|oauth)_[A-Za-z0-9]{40}", "lin_"),
    _shape("api-token", "Notion", r"ntn_[A-Za-z0-9]{40,50}|secret_[A-Za-z0-9]{43}",
           "ntn_", "secret_"),
    _shape("api-token", "Postman", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}", "PMAK-"),
    _shape("api-token", "Atlassian", r"ATATT3[A-Za-z0-9_=-]{60,}|ATCTT3[A-Za-z0-9_=-]{60,}",
           "ATATT3", "ATCTT3"),
    _shape("api-token", "Docker", r"dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,}", "dckr_"),
    # Organization tokens (`sntrys_`, a signed blob) and user tokens (`sntryu_`, 64 hex).
    _shape("api-token", "Sentry", r"sntrys_[A-Za-z0-9+/=_-]{40,}|sntryu_[a-f0-9]{64}", "sntr"),
    _shape("api-token", "Grafana",
           r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2}", "glsa_", "glc_"),
    # Also inside the Bot API's URLs: `https://api.telegram.org/bot<token>/sendMessage`.
    _shape("api-token", "Telegram", r"\d{8,10}:AA[0-9A-Za-z_-]{33}", ":AA",
           start=r"(?:(?<=/bot)|(?<![A-Za-z0-9_]))"),
    _shape("api-token", "Discord",
           r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{40,}",
           "discord", end=False),
    _shape("api-token", "Replicate", r"r8_[A-Za-z0-9]{37}", "r8_"),
    _shape("api-token", "Groq", r"gsk_[A-Za-z0-9]{48,56}", "gsk_"),
    _shape("api-token", "xAI", r"xai-[A-Za-z0-9]{70,90}", "xai-"),
    _shape("api-token", "Perplexity", r"pplx-[A-Za-z0-9]{40,56}", "pplx-"),
    _shape("api-token", "Tailscale",
           r"tskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]{6,}-[A-Za-z0-9]{20,}", "tskey-"),
    _shape("api-token", "HashiCorp Vault", r"hv[sb]\.[A-Za-z0-9_-]{24,}", "hvs.", "hvb."),
    _shape("api-token", "Terraform Cloud", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}",
           ".atlasv1."),
    _shape("api-token", "Supabase", r"sbp_[a-f0-9]{40}", "sbp_"),
    _shape("api-token", "Figma", r"figd_[A-Za-z0-9_-]{40}", "figd_"),
    _shape("api-token", "Heroku", r"HRKU-[A-Za-z0-9_-]{58,64}", "HRKU-"),
    _shape("api-token", "Square", r"sq0(?:atp|csp)-[A-Za-z0-9_-]{22,43}|EAAA[A-Za-z0-9_-]{60}",
           "sq0", "EAAA"),
    _shape("api-token", "PlanetScale", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,64}",
           "pscale_"),
    _shape("api-token", "Pulumi", r"pul-[a-f0-9]{40}", "pul-"),
    _shape("api-token", "Mapbox", r"sk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}", "sk.eyJ"),
    _shape("api-token", "New Relic", r"NRAK-[A-Z0-9]{27}", "NRAK-"),
    _shape("api-token", "Dynatrace", r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}", "dt0c01."),
    # A service token may name its config: `dp.st.prd.<40>`.
    _shape("api-token", "Doppler",
           r"dp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_-]{1,40}\.)?[A-Za-z0-9]{40,44}", "dp."),
    _shape("api-token", "1Password", r"ops_eyJ[A-Za-z0-9+/=_-]{100,}", "ops_eyJ"),
    _shape("api-token", "Fly.io", r"fo1_[A-Za-z0-9_-]{43}", "fo1_"),
    _shape("api-token", "Netlify", r"nfp_[A-Za-z0-9]{36}", "nfp_"),
    # The shapes below are gitleaks' (`alibaba-access-key-id`, `plaid-api-token`,
    # `mailchimp-api-key`, `openrouter`) and secrets-patterns-db's (Braintree, Firebase
    # Cloud Messaging's legacy server key, Bitbucket's app passwords).
    _shape("api-token", "OpenRouter", r"sk-or-v1-[a-f0-9]{64}", "sk-or-v1-"),
    _shape("api-token", "Alibaba Cloud", r"LTAI[A-Za-z0-9]{20}", "LTAI"),
    _shape("api-token", "Plaid",
           r"access-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}"
           r"-[0-9a-f]{4}-[0-9a-f]{12}", "access-"),
    _shape("api-token", "Braintree", r"access_token\$production\$[0-9a-z]{16}\$[0-9a-f]{32}",
           "access_token$"),
    _shape("api-token", "Mailchimp", r"[0-9a-f]{32}-us\d{1,2}", "-us"),
    _shape("api-token", "Firebase", r"AAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{120,}", ":APA91b"),
    _shape("api-token", "Bitbucket", r"ATBB[A-Za-z0-9_=.-]{28,64}", "ATBB"),
    # Entra ID (Azure AD) client secrets: three characters, a digit, `Q~`, 31-34 more.
    _shape("api-token", "Azure", r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}", "Q~"),
    # age's X25519 identities are private keys written on one line.
    _shape("private-key", "age", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
           "AGE-SECRET-KEY-1"),
)  # fmt: skip

#: Shapes too plain to stand alone (`key-` and 32 hex; three dotted base64 parts), kept
#: only in a text that names their vendor: `needles` here are lowercase words of the
#: text, as gitleaks' `keywords` are (its `mailgun-private-api-token`; the Discord bot
#: token's shape is secrets-patterns-db's, with the longer ids issued since 2022).
KEYWORD_SHAPES: tuple[TokenShape, ...] = (
    _shape("api-token", "Mailgun", r"key-[0-9a-f]{32}", "mailgun"),
    _shape("api-token", "Discord",
           r"[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}", "discord"),
)  # fmt: skip

#: Any shape's substring: a text without one holds no vendor's token.
TOKEN_GATE = re.compile(
    "|".join(
        re.escape(n)
        for n in sorted({n for s in TOKEN_SHAPES for n in s.needles}, key=len, reverse=True)
    )
)

__all__ = [
    "AWS_KEY_ID",
    "KEYWORD_SHAPES",
    "TOKEN_GATE",
    "TOKEN_SHAPES",
    "WORD_END",
    "WORD_START",
    "TokenShape",
]
