"""What each agent sees: per vault, what its agent loads at start and recalls for a prompt.

Every format answers by its own rules through `FormatAdapter.agent_preview`
(the rules live in each `core/formats/<format>/preview.py`); this package
runs it over the vaults of a catalog, supplies the search-index recall the
formats that search need (`recall`), and turns the result into the JSON of
`memlens preview --json`.  Token counts are ``ceil(characters / 4)``
estimates (`core.formats.preview_model`).

With an agent name, vaults of formats that have agents show that agent
only, and a vault of another format is shown only when its name is the
agent's (as `memlens search --agent` treats vault names).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from ..formats import info_for
from ..formats.preview_model import (
    STAGE_CUT,
    STAGE_LEAVING,
    STAGE_LOAD,
    STAGE_RECALL,
    PreviewRequest,
    PreviewSection,
    approx_tokens,
)
from ..scan.vault import Vault
from .recall import search_recall

STAGES = (STAGE_LOAD, STAGE_RECALL, STAGE_LEAVING, STAGE_CUT)


@dataclass(frozen=True, slots=True)
class VaultPreview:
    """One vault's preview: its sections, and tokens per stage."""

    root: Path
    rel: str
    format: str
    label: str
    sections: tuple[PreviewSection, ...]

    def tokens(self, stage: str) -> int:
        return sum(s.tokens for s in self.sections if s.stage == stage)

    def to_dict(self) -> dict[str, Any]:
        return {
            "vault": self.rel,
            "format": self.format,
            "label": self.label,
            "tokens": {stage: self.tokens(stage) for stage in STAGES},
            "sections": [s.to_dict() for s in self.sections],
        }


def _shown(vault: Vault, agent: str | None) -> bool:
    """Whether `vault` belongs in a preview for `agent` (see the module docstring)."""
    if agent is None or info_for(vault.format).has_agents:
        return True
    names = {vault.rel.lower(), vault.name.lower(), vault.root.name.lower()}
    return agent.lower() in names


def preview_vault(
    vault: Vault, as_of: date, *, agent: str | None = None, prompt: str | None = None
) -> VaultPreview:
    """What `vault`'s agent(s) load and recall at `as_of` (for `prompt`, if given)."""
    has_agents = info_for(vault.format).has_agents
    request = PreviewRequest(
        as_of=as_of,
        agent=agent if has_agents else None,
        prompt=prompt,
        recall=search_recall(as_of),
    )
    sections = vault.adapter.agent_preview(vault.root, vault.result, request)
    return VaultPreview(
        root=vault.root,
        rel=vault.rel,
        format=vault.format,
        label=info_for(vault.format).label,
        sections=tuple(sections),
    )


def preview_vaults(
    vaults: Iterable[Vault], as_of: date, *, agent: str | None = None, prompt: str | None = None
) -> list[VaultPreview]:
    """`preview_vault` of every vault shown for `agent`, in the order given."""
    return [preview_vault(v, as_of, agent=agent, prompt=prompt) for v in vaults if _shown(v, agent)]


def previews_to_json(
    previews: Iterable[VaultPreview], as_of: date, agent: str | None, prompt: str | None
) -> dict[str, Any]:
    """The `memlens preview --json` document."""
    items = [p.to_dict() for p in previews]
    return {
        "as_of": as_of.isoformat(),
        "agent": agent,
        "prompt": prompt,
        "prompt_tokens": approx_tokens(prompt or ""),
        "token_estimate": "ceil(characters / 4)",
        "tokens": {stage: sum(i["tokens"][stage] for i in items) for stage in STAGES},
        "vaults": items,
    }


__all__ = ["STAGES", "VaultPreview", "preview_vault", "preview_vaults", "previews_to_json"]
