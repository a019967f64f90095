"""JSON records of the CLI contract (DESIGN.md), built in core so every front agrees."""

from __future__ import annotations

import functools
from datetime import date, datetime
from pathlib import Path
from typing import Any

from .decay import decay_of
from .model import DecayInfo, Memory, Problem, ReferenceProblem
from .text.dates import iso


def _rel_vault(root: Path, base: Path) -> str:
    return _rel_vault_cached(root, base)


@functools.lru_cache(maxsize=256)
def _rel_vault_cached(root: Path, base: Path) -> str:
    # Cached: every record of a vault asks the same question, and resolving
    # two paths per record took about 5 s of a 100k-memory `list --json`.
    try:
        rel = root.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return str(root)
    return rel or "."


def jsonable(value: Any) -> Any:
    """Plain JSON values from YAML/JSON-typed metadata (dates become ISO text)."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, float | int | str | bool) or value is None:
        return value
    return str(value)


def memory_record(
    memory: Memory, as_of: date, base: Path, info: DecayInfo | None = None
) -> dict[str, Any]:
    """One `list --json` record."""
    d = info or decay_of(memory, as_of, explain=False)  # a record carries no `why`
    rec: dict[str, Any] = {
        "vault": _rel_vault(memory.vault_root, base),
        "format": memory.format,
        "id": memory.id,
        "path": memory.path,
    }
    if memory.line is not None:
        rec["line"] = memory.line
    if memory.index is not None:
        rec["index"] = memory.index
    rec.update(
        {
            "kind": memory.kind,
            "title": memory.title,
            "tags": list(memory.tags),
            "importance": memory.importance,
            "confidence": memory.confidence,
            "created": iso(memory.created),
            "updated": iso(memory.updated),
            "source": memory.source,
            "status": d.status,
            "health": d.health.value,
            "strength": round(d.strength, 4),
            "score": d.score,
            "current_importance": d.current_importance,
            "importance_band": d.importance_band,
            "linear_weight": d.linear_weight,
            "days_elapsed": d.days_elapsed,
            "age_days": d.age_days,
            "expires_on": iso(d.expires_on),
            "ttl_days": d.ttl_days,
            "lifespan_days": d.lifespan_days,
            "pinned": memory.pinned,
            "archived": memory.archived,
            "tombstoned": memory.tombstoned,
            "relations": [
                {
                    "target": r.target,
                    "type": r.type,
                    "field": r.field,
                    "resolved": r.resolved,
                    **({"direction": r.direction} if r.direction else {}),
                    **({"strength": r.strength} if r.strength is not None else {}),
                }
                for r in memory.relations
            ],
            "extra": jsonable(memory.extra),
        }
    )
    for key, value in d.numbers.items():
        # Added fields only: a format's own figures never replace the contract's.
        rec.setdefault(key, jsonable(value))
    return rec


def problem_record(problem: Problem, base: Path) -> dict[str, Any]:
    """One invalid item in `validate --json`."""
    rec: dict[str, Any] = {
        "vault": _rel_vault(problem.vault_root, base),
        "format": problem.format,
        "path": problem.path,
    }
    if problem.line is not None:
        rec["line"] = problem.line
    if problem.index is not None:
        rec["index"] = problem.index
    rec.update(
        {
            "id": problem.id,
            "reason": problem.reason.value,
            "detail": problem.detail,
            "kind": "invalid",
        }
    )
    if problem.title is not None:
        rec["title"] = problem.title
    if problem.at_line is not None:
        rec["at_line"] = problem.at_line
    return rec


def ref_problem_record(problem: ReferenceProblem, base: Path) -> dict[str, Any]:
    """One flagged reference in `validate --json` / `graph --health --json`."""
    rec: dict[str, Any] = {
        "vault": _rel_vault(problem.vault_root, base),
        "format": problem.format,
        "path": problem.path,
        "id": problem.id,
        "reason": problem.reason.value,
        "field": problem.field,
        "ref": problem.ref,
        "kind": "reference",
    }
    if problem.line is not None:
        rec["line"] = problem.line
    return rec
