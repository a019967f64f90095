"""A vault per format holding an invalid item with a secret in it (and valid memories).

Shared by the core, CLI and app tests of secrets in invalid items
(tests/core/test_privacy_invalid_items.py): the Dream Cycle section `Bad one`
(a wrong type), an experience record cut short (malformed JSON), an
observation without an id, a Project Ocean note whose front matter does not
parse; the section `Good one` beside it is a valid memory with a password.
"""

from __future__ import annotations

import json
from pathlib import Path

GITHUB = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
AWS = "AKIAQ3EGRTLNX7Y4ZP2M"
NAS = "Qv8!kLm2xZ"


def _record(rid: str, text: str) -> str:
    return json.dumps(
        {
            "id": rid,
            "type": "occurrence",
            "created_at": "2026-11-01T10:00:00Z",
            "content": {"text": text, "media": [], "structured": {}},
            "provenance": {"sources": [], "actor": "user", "method": "capture"},
            "evidence_ptrs": [],
            "confidence": {"p": 0.9, "method": "direct_capture"},
            "parents": [],
        }
    )


def plant_invalid(root: Path) -> None:
    dream = root / "dream"
    dream.mkdir(parents=True)
    (dream / "observations.md").write_text(
        "# Observations\n\n## Good one\n"
        "<!-- dc:type=fact dc:importance=6.0 dc:ttl=90 dc:date=2026-11-10 -->\n"
        f"The NAS password is {NAS} now.\n\n## Bad one\n"
        "<!-- dc:type=fact dc:importance=high dc:ttl=90 dc:date=2026-11-10 -->\n"
        f"Deploy token: {GITHUB}\n",
        encoding="utf-8",
    )
    exp = root / "exp"
    exp.mkdir()
    (exp / "experiences.jsonl").write_text(
        _record("exp_2026-11-01T10:00:00Z_a1", "nothing here")
        + "\n"
        + '{"id": "exp_2026-11-01T10:00:01Z_a2", "content": {"text": "key '
        + AWS
        + ' leaked"\n',
        encoding="utf-8",
    )
    obs = root / "obs" / "observations"
    obs.mkdir(parents=True)
    (obs / "obs-001.md").write_text(
        "---\nspec: observation/v1\ntype: observation\ntimestamp: 2026-11-01T08:00:00Z\n"
        "source: agent/ops\nevent: x\n---\n\n# Observation: x\n\nmara.lind@nordvik.se wrote it\n",
        encoding="utf-8",
    )
    memory = root / "ocean" / "agents" / "atlas" / "memory"
    (memory / "vault").mkdir(parents=True)
    (memory / "archive").mkdir()
    (memory / "vault" / "obs-2026-11-02-001.md").write_text(
        "---\ntags: [ops\nconfidence: 0.9\n---\n\nCall Jonas at +49 151 2345 6781\n",
        encoding="utf-8",
    )
