"""Project Ocean's own scripts as functions: which files promote and decay would touch.

These choose; they never write.  The caller applies each chosen memory as its
own action (`Action("promote", m, {"as_of": ...})`, `Action("archive", m,
{"reason": ...})`) so every file is conflict-checked, journaled and undoable
on its own.

- `promotion_candidates` is memory-promote.py's selection: an agent's vault
  observation with `confidence >= threshold` (default 0.8), `verified: true`
  when `require_verified`, and no copy in `shared/observations/` yet.
  `file_name` (with or without `agent`) picks one file, as `--file NAME
  --agent AGENT`.  Shared observations and archived ones are never
  candidates.  Like the reference, expiry is not a criterion.
- `split_name_clashes` finds candidates of one run that would copy to the
  same `shared/observations/<name>` (two agents' `obs-2026-11-21-001.md`):
  the first in run order is promoted, the others are refused before anything
  is written, so a dry run reports exactly what the real run does.
- `decay_candidates` is memory-decay.py's selection: files in an agent's
  `vault/` or in `shared/observations/` whose age is past their lifespan as
  of `as_of`.  Pinned and permanent (no `decay`) files never are.

Skipped files come back with a one-line reason.  A file that could not be
loaded (invalid, or a `--file` that names nothing) has no Memory, so it is
reported with a stand-in Memory whose `kind` is "invalid" or "missing": only
its `id`, `path` and `title` mean anything.
"""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

from ...errors import UnsafePathError
from ...model import Memory, Problem
from ...text.paths import has_path_syntax, safe_join
from ..scanned import ScannedVault, ScannedVaults
from .adapter import ProjectOceanAdapter
from .locations import locate
from .schema import FORMAT_ID, SHARED
from .write_files import promoted_name

_ADAPTER = ProjectOceanAdapter()

DEFAULT_THRESHOLD = 0.8
#: Second generation: a verified observation qualifies from this importance.
VERIFIED_THRESHOLD = 0.6


def _stand_in(vault: ScannedVault, mem_id: str, path: str, title: str, kind: str) -> Memory:
    return Memory(
        format=FORMAT_ID,
        vault_root=vault.root,
        id=mem_id,
        kind=kind,
        title=title,
        body="",
        path=path,
    )


def _ocean_vaults(catalog: ScannedVaults) -> list[ScannedVault]:
    return [v for v in catalog.vaults if v.format == FORMAT_ID]


def _promoted_copy(root: Path, name: str) -> str | None:
    """Vault-relative path of an existing shared copy of `name` (live or archived)."""
    for rel in (f"shared/observations/{name}", f"shared/observations/archive/{name}"):
        if os.path.lexists(safe_join(root, *rel.split("/"))):
            return rel
    return None


def _file_of(item: Memory | Problem) -> str:
    return item.path.rsplit("/", 1)[-1]


def _in_agent_vault(rel: str) -> bool:
    loc = locate(Path("."), rel)
    return loc is not None and loc.area == "vault" and rel.startswith("agents/")


def _judge(
    memory: Memory, threshold: float, require_verified: bool
) -> str | None:  # None: promote it
    """Why memory-promote.py would not promote this memory, or None."""
    if memory.native.get("shared") or memory.native.get("area") == "shared":
        return "already shared (shared observations are not promoted)"
    if memory.archived:
        return "archived (restore it to vault/ before promoting)"
    if memory.native.get("generation") == 2:
        why = _judge2(memory, threshold)
        if why is not None:
            return why
    else:
        confidence = memory.confidence
        if not isinstance(confidence, int | float) or isinstance(confidence, bool):
            return "no numeric confidence"
        if confidence < threshold:
            return f"confidence {confidence} below threshold {threshold}"
    if require_verified and not memory.native.get("verified"):
        return "not verified (--require-verified)"
    try:
        copy = _promoted_copy(memory.vault_root, promoted_name(memory))
    except UnsafePathError:
        return "shared/observations/ leaves the vault (a symbolic link?); refused"
    if copy is not None:
        return f"already promoted ({copy} exists)"
    return None


def _judge2(memory: Memory, threshold: float) -> str | None:
    """The second generation's memory-promote.py: earned importance >= the threshold
    (0.8), or verified and >= 0.6; never a file already marked `promoted: true`."""
    if memory.native.get("promoted"):
        return "already promoted (promoted: true)"
    importance = float(memory.importance if memory.importance is not None else 0.5)
    if importance >= threshold:
        return None
    if memory.native.get("verified") and importance >= VERIFIED_THRESHOLD:
        return None
    return (
        f"importance {importance} below {threshold} "
        f"(and not verified with importance >= {VERIFIED_THRESHOLD})"
    )


def promotion_candidates(
    catalog: ScannedVaults,
    threshold: float = DEFAULT_THRESHOLD,
    require_verified: bool = False,
    file_name: str | None = None,
    agent: str | None = None,
) -> tuple[list[Memory], list[tuple[Memory, str]]]:
    """(memories to promote, [(memory, why it is skipped)]) as memory-promote.py.

    `agent` limits the run to one agent's vault; `file_name` (`obs-...md`,
    the `.md` optional) picks one file, in `agent`'s vault when given, else
    in every agent's.  Candidates are ordered by vault, agent, file name.
    """
    candidates: list[Memory] = []
    skipped: list[tuple[Memory, str]] = []
    vaults = _ocean_vaults(catalog)
    name: str | None = None
    if file_name is not None:
        name = file_name if file_name.endswith(".md") else f"{file_name}.md"
    if vaults and name is not None:
        # Why: a --file/--agent with path syntax names something outside the
        # layout; it is never looked up, only reported.
        first = vaults[0]
        stand_in = _stand_in(first, f"{agent or '*'}/{name[:-3]}", "", name, "missing")
        if has_path_syntax(name) or (agent is not None and has_path_syntax(agent)):
            return [], [(stand_in, "unsafe --file/--agent (path syntax); refused")]
        if agent == SHARED:
            return [], [(stand_in, "already shared (shared observations are not promoted)")]

    def wanted(item: Memory | Problem) -> bool:
        parts = item.path.split("/")
        if parts[0] != "agents" or len(parts) < 2:
            return False
        if agent is not None and parts[1] != agent:
            return False
        if name is not None:
            return _file_of(item) == name
        return _in_agent_vault(item.path)

    found = False
    for vault in vaults:
        chosen = sorted((m for m in vault.memories if wanted(m)), key=lambda m: m.path)
        invalid = sorted((p for p in vault.problems if wanted(p)), key=lambda p: p.path)
        found = found or bool(chosen or invalid)
        for m in chosen:
            why = _judge(m, threshold, require_verified)
            if why is None:
                candidates.append(m)
            else:
                skipped.append((m, why))
        seen: set[str] = set()
        for p in invalid:
            if p.path in seen:
                continue
            seen.add(p.path)
            stand_in = _stand_in(vault, p.id or p.path, p.path, p.title or p.path, "invalid")
            skipped.append((stand_in, f"invalid ({p.reason.value}: {p.detail})"))
    if vaults and name is not None and not found:
        where = f"agents/{agent}/memory/vault/" if agent else "any agent's vault/"
        stand_in = _stand_in(vaults[0], f"{agent or '*'}/{name[:-3]}", "", name, "missing")
        skipped.append((stand_in, f"no {name} in {where}"))
    return candidates, skipped


def split_name_clashes(
    candidates: list[Memory],
) -> tuple[list[Memory], list[tuple[Memory, str]]]:
    """(candidates kept, [(candidate refused, why)]) for clashing shared file names.

    Why up front: promoting the first copy makes the second one's target
    exist, so applying one by one would refuse it only in a real run; a dry
    run writes nothing and would have promoted both.  Deciding here, in run
    order (vault, then path), gives both runs the same list.
    """
    kept: list[Memory] = []
    refused: list[tuple[Memory, str]] = []
    first: dict[tuple[str, str], Memory] = {}
    for m in candidates:
        name = promoted_name(m)
        winner = first.setdefault((str(m.vault_root), name), m)
        if winner is m:
            kept.append(m)
        else:
            refused.append(
                (
                    m,
                    f"shared/observations/{name} is also the copy of {winner.id}, "
                    "promoted first in this run; refused (a promote never overwrites)",
                )
            )
    return kept, refused


def decay_candidates(catalog: ScannedVaults, as_of: date) -> list[tuple[Memory, list[str]]]:
    """Files memory-decay.py would move to archive/ as of `as_of`, with the reasons.

    Expired means age (from `created`) strictly past the lifespan; only files
    still in an agent's vault/ or in shared/observations/ qualify, never
    pinned or permanent ones.
    """
    out: list[tuple[Memory, list[str]]] = []
    for vault in _ocean_vaults(catalog):
        for m in sorted(vault.memories, key=lambda m: m.path):
            if m.archived or m.pinned or m.tombstoned:
                continue
            info = _ADAPTER.decay(m, as_of)
            if info.status != "expired":
                continue
            reasons = list(info.archive_reasons) or [
                f"expired (age {info.age_days} > {info.lifespan_days} days)"
            ]
            out.append((m, reasons))
    return out


__all__ = [
    "DEFAULT_THRESHOLD",
    "decay_candidates",
    "promotion_candidates",
    "split_name_clashes",
]
