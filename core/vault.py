"""Discovering vaults below a path and scanning them into one catalog."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .errors import NotFoundError
from .formats import ADAPTERS, FormatAdapter, adapter_for
from .model import Memory, Problem, ReferenceProblem, ScanResult

#: Folders never worth descending into while looking for vaults.
_SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".memlens"}


@dataclass(slots=True)
class Vault:
    """One vault root of one format, and what scanning it found."""

    root: Path
    format: str
    #: Vault root relative to the path the user gave (`.` if it is that path).
    rel: str
    result: ScanResult = field(default_factory=ScanResult)

    @property
    def adapter(self) -> FormatAdapter:
        return adapter_for(self.format)

    @property
    def memories(self) -> list[Memory]:
        return self.result.memories

    @property
    def problems(self) -> list[Problem]:
        return self.result.problems

    @property
    def ref_problems(self) -> list[ReferenceProblem]:
        return self.result.ref_problems

    @property
    def name(self) -> str:
        return self.root.name if self.rel == "." else self.rel


def detect_format(root: Path) -> FormatAdapter | None:
    """The adapter whose markers `root` carries, if any."""
    for adapter in ADAPTERS:
        try:
            if adapter.detect(root):
                return adapter
        except OSError:
            continue
    return None


def discover(path: Path, max_depth: int = 6) -> list[Vault]:
    """Every vault root at or below `path`, each with its format.

    A vault root is not searched further: vaults do not nest, and a
    cognitive-memory `vault/` folder must not be mistaken for anything else.
    """
    path = Path(path)
    if not path.exists():
        raise NotFoundError(f"{path}: no such file or directory")
    if path.is_file():
        path = path.parent
    base = path.resolve()
    found: list[Vault] = []

    def walk(folder: Path, depth: int) -> None:
        adapter = detect_format(folder)
        if adapter is not None:
            rel = os.path.relpath(folder, base)
            found.append(Vault(root=folder, format=adapter.format_id, rel=Path(rel).as_posix()))
            return
        if depth >= max_depth:
            return
        try:
            children = sorted(
                p
                for p in folder.iterdir()
                if p.is_dir()
                and not p.is_symlink()
                and p.name not in _SKIP_DIRS
                and not p.name.startswith(".")
            )
        except OSError:
            return
        for child in children:
            walk(child, depth + 1)

    walk(base, 0)
    return found


@dataclass(slots=True)
class Catalog:
    """Every vault found below the paths given, scanned."""

    vaults: list[Vault]

    def memories(self) -> Iterator[Memory]:
        for v in self.vaults:
            yield from v.memories

    def problems(self) -> Iterator[Problem]:
        for v in self.vaults:
            yield from v.problems

    def ref_problems(self) -> Iterator[ReferenceProblem]:
        for v in self.vaults:
            yield from v.ref_problems

    def vault_of(self, memory: Memory | Problem | ReferenceProblem) -> Vault:
        for v in self.vaults:
            if v.root == memory.vault_root:
                return v
        raise NotFoundError(f"no vault at {memory.vault_root}")

    def find(self, memory_id: str) -> list[Memory]:
        """Memories with this id (one per vault at most)."""
        return [m for m in self.memories() if m.id == memory_id]

    def get(self, memory_id: str) -> Memory:
        """The memory with this id; NotFoundError if none, or ambiguous."""
        hits = self.find(memory_id)
        if not hits:
            raise NotFoundError(f"no memory with id {memory_id!r}")
        if len(hits) > 1:
            where = ", ".join(str(m.vault_root) for m in hits)
            raise NotFoundError(f"id {memory_id!r} is in several vaults: {where}")
        return hits[0]


def scan_vault(vault: Vault) -> Vault:
    """Scan one discovered vault in place and return it."""
    vault.result = vault.adapter.scan(vault.root)
    return vault


def open_catalog(*paths: Path | str) -> Catalog:
    """Discover and scan every vault below the given paths."""
    vaults: list[Vault] = []
    seen: set[Path] = set()
    for p in paths:
        for v in discover(Path(p)):
            if v.root in seen:
                continue
            seen.add(v.root)
            vaults.append(scan_vault(v))
    return Catalog(vaults)
