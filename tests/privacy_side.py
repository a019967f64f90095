"""Vaults whose files that hold no memory hold secrets: an episode log, CORE.md,
REFLECTION.md, a view.

Shared by the core and app tests of side files (tests/core/test_privacy_side_files.py):
the demo's cognitive-memory and experience vaults, copied, with a Slack token in
an episode's summary, a Hugging Face token in CORE.md, a person's address in
REFLECTION.md and an Anthropic key in a view's `delta_from_raw.added`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import memlens.core

SLACK = "xoxb-30897571994-8317365137718-AKYt1lnXhrwLF5SCjUZiYOQk"
HUGGING = "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"
PERSON = "mara.lind@fernmail.hr"
ANTHROPIC = "sk-ant-api03-3QHDvRpeFoyVdKqqVO6cIR05fPzJscb67MF9LuY-z2ddhpyDiJxCOcpfWUY5AutTW"

_DEMO = Path(memlens.core.__file__).parent / "demo_vaults"


def plant_side(root: Path) -> None:
    cognitive = root / "cognitive"
    shutil.copytree(_DEMO / "cognitive-memory", cognitive)
    (cognitive / "episodes" / "2026-11-20.md").write_text(
        "# 2026-11-20\n\n## 09:00 - Deploy bot\n- **Type:** ops\n"
        f"- **Summary:** posted with the bot token {SLACK} to #ops\n",
        encoding="utf-8",
    )
    (cognitive / "REFLECTION.md").write_text(
        f"# Reflection\n\nAsk {PERSON} before changing the rota.\n", encoding="utf-8"
    )
    (cognitive / "CORE.md").write_text(
        f"# Core\n\n## Settings\n- HF upload token: {HUGGING}\n", encoding="utf-8"
    )
    experience = root / "experience"
    shutil.copytree(_DEMO / "experience-records", experience)
    views = experience / "views.jsonl"
    lines = views.read_text(encoding="utf-8").splitlines()
    view = json.loads(lines[0])
    view["delta_from_raw"]["added"] = f"the eval key is {ANTHROPIC}"
    lines.append(json.dumps({**view, "id": "view_2026-11-20T09:00:00Z_9f00"}))
    views.write_text("\n".join(lines) + "\n", encoding="utf-8")
