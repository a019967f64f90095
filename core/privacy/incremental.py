"""The privacy scan kept between catalog changes: only files that changed are scanned again.

The app scans every loaded vault after each change of the catalog (a live
reload, an edit, a redaction).  At 10,000 memories a whole scan costs 6-8 s
of CPU (the detectors' patterns over every text field), for one changed
file (`python -m bench privacy`).  The scan is pure over content: what a memory's text fields hold
comes from its file's bytes, and, for a few formats, from the vault's
vault-wide files (a WAL, a view store, `_state.json`: `FileScan.vault_wide`).
So `FindingsCache` keeps, per vault and file, the findings of each of the
file's memories with what they were computed from: the file's sha256 (its
scan stamp), a digest of the vault-wide files' sha256s and the vault's name.
A file whose three still match reuses them; any other is scanned again, as
is every file without a stamp.  A file shared by many memories (Dream
Cycle's observations.md, an experiences.jsonl: 2,000 memories each at
10,000) changes one section or record at a time, so the detectors' answers
are kept per (text, field name) too: a changed shared file costs reading
its memories' text fields, and the detectors only over the texts that are new.

Between runs (the app's start, each `memlens secrets`), the files found
with no secret are kept on disk (`clean_files`: never a finding, which holds
the secret itself), so a warm start reads and scans only new or changed
files and the few that hold findings.

Health (a finding's `health`, the memory's unified health as of the scan's
date) is not kept: it depends on `as_of`, and is worked out again, only for
the memories that have findings.  The findings are those `scan_vault` gives,
in its order (tests/core/test_privacy_incremental.py compares the two).

One cache serves one app; two scans may overlap (a newer one cancels the
older, which may still be finishing a file): entries are immutable tuples
and each vault's table is replaced by one assignment, so a reader never
sees half an update.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from types import MappingProxyType

from ..model import Memory
from ..safe_io import read_regular
from ..scan.vault import Catalog, Vault
from . import (
    _read_text,
    scan_memory,
    scan_problem,
    scan_side_file,
    scanned_problems,
    sort_findings,
)
from .clean_files import Clean, CleanFiles, Context, privacy_code
from .detectors import Hit, detect
from .findings import Finding

#: An invalid item: its file, JSON Lines line and section.
_ProblemKey = tuple[str, int | None, int | None]


@dataclass(frozen=True, slots=True)
class _Entry:
    """One file's findings, per memory in the order the vault lists them, and their inputs."""

    sha256: str
    wide: str
    vault: str
    per_memory: tuple[tuple[Finding, ...], ...]
    #: `detect`'s answer per (text, field name) of this file's memories: when
    #: one section or record of a shared file changes, the others' texts are
    #: the same and are not run through the detectors again.
    detected: Mapping[tuple[str, str], tuple[Hit, ...]]


#: What a file found clean holds: no answers kept, no findings (one object
#: each for every clean file, not 100k empty dicts and tuples).
_NOTHING_DETECTED: Mapping[tuple[str, str], tuple[Hit, ...]] = MappingProxyType({})
_NO_FINDINGS: dict[int, tuple[tuple[Finding, ...], ...]] = {}


def _no_findings(count: int) -> tuple[tuple[Finding, ...], ...]:
    """`count` memories' worth of no findings (shared per count)."""
    found = _NO_FINDINGS.get(count)
    if found is None:
        found = _NO_FINDINGS[count] = ((),) * count
    return found


def _wide_digest(vault: Vault) -> str:
    """One digest of the sha256 of every vault-wide file (any change may alter any memory)."""
    parts = sorted(
        f"{rel}\0{stamp.sha256}"
        for rel, fs in vault.scans.items()
        if fs.vault_wide
        for stamp in (vault.stamps.get(rel),)
        if stamp is not None
    )
    missing = sum(1 for rel, fs in vault.scans.items() if fs.vault_wide and rel not in vault.stamps)
    text = "\n".join(parts) + f"\n{missing}"
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def _by_file(vault: Vault) -> Iterator[tuple[str, list[Memory]]]:
    """The vault's memories grouped by file, each group in the vault's order.

    A group's list is made as it is given: a dict of 100k one-memory lists
    held 12.6 MB at the peak of a warm start's scan.
    """
    first: dict[str, Memory] = {}
    more: dict[str, list[Memory]] = {}
    for m in vault.memories:
        found = first.setdefault(m.path, m)
        if found is not m:
            more.setdefault(m.path, [found]).append(m)
    for path, m in first.items():
        yield path, more.get(path) or [m]


#: Files scanned between two writes of the clean files (a first scan at 100k
#: memories runs for a minute: quitting meanwhile keeps what it did).
KEEP_EVERY = 2000


class _Memo:
    """`detect` remembering its answers: last version's reused, this version's kept (bounded)."""

    def __init__(self, before: Mapping[tuple[str, str], tuple[Hit, ...]]) -> None:
        self.before = before
        #: The answers for this version's texts only, so the memo never grows past a file.
        self.now: dict[tuple[str, str], tuple[Hit, ...]] = {}

    def __call__(self, text: str, name: str) -> tuple[Hit, ...]:
        key = (text, name)
        hits = self.now.get(key)
        if hits is None:
            hits = self.before.get(key)
            if hits is None:
                hits = tuple(detect(text, name))
            self.now[key] = hits
        return hits


class FindingsCache:
    """Findings per vault and file, kept while the file and its vault-wide files stay the same."""

    def __init__(self, kept: CleanFiles | None = None) -> None:
        self._vaults: dict[Path, dict[str, _Entry]] = {}
        #: The files known clean from earlier runs (`clean_files`), and per
        #: vault what that file holds for it (read once, then kept in step).
        self.kept = kept
        self._clean: dict[Path, tuple[Context, dict[str, Clean]]] = {}
        #: Per vault, the findings of each invalid item, with the sha256 and
        #: vault name they were found for (few: scanned again when either changes).
        self._problems: dict[Path, dict[_ProblemKey, tuple[str, str, tuple[Finding, ...]]]] = {}
        #: Per vault, each side file's findings with the sha256 and vault name they came from.
        self._side: dict[Path, dict[str, tuple[str, str, tuple[Finding, ...]]]] = {}
        #: Files scanned (not reused) by the last `scan_vault` call: what a change cost.
        self.rescanned = 0
        #: Files scanned by every call so far.
        self.files_scanned = 0

    def scan_vault(
        self,
        vault: Vault,
        as_of: date | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> list[Finding] | None:
        """`privacy.scan_vault(vault, as_of)`, scanning only files that changed.

        None when `cancelled()` turned true (what was scanned by then is kept).
        """
        kept = self._vaults.get(vault.root, {})
        wide = _wide_digest(vault)
        context: Context = (privacy_code(vault.format), wide, vault.rel)
        clean = self._kept_clean(vault, context)
        entries: dict[str, _Entry] = {}
        per_file: dict[str, tuple[tuple[Finding, ...], ...]] = {}
        self.rescanned = 0
        for path, memories in _by_file(vault):
            if cancelled is not None and cancelled():
                self._vaults[vault.root] = {**kept, **entries}
                self._keep_clean(vault, context, entries, whole=False)
                return None
            stamp = vault.stamps.get(path)
            old = kept.get(path)
            if (
                stamp is not None
                and old is not None
                and (old.sha256, old.wide, old.vault) == (stamp.sha256, wide, vault.rel)
                and len(old.per_memory) == len(memories)
            ):
                per_file[path] = old.per_memory
                entries[path] = old
                continue
            if stamp is not None and clean.get(path) == (stamp.sha256, len(memories)):
                # Clean when an earlier run scanned these bytes (in this context).
                none = _no_findings(len(memories))
                per_file[path] = none
                entries[path] = _Entry(stamp.sha256, wide, vault.rel, none, _NOTHING_DETECTED)
                continue
            raw = _read_text(memories[0].abs_path)
            memo = _Memo(old.detected if old is not None else _NOTHING_DETECTED)
            found = tuple(tuple(scan_memory(m, vault.rel, raw, detector=memo)) for m in memories)
            self.rescanned += 1
            self.files_scanned += 1
            per_file[path] = found
            if stamp is not None:
                entries[path] = _Entry(stamp.sha256, wide, vault.rel, found, memo.now)
            if self.rescanned % KEEP_EVERY == 0:  # a long first scan keeps its work as it goes
                self._keep_clean(vault, context, entries, whole=False)
        self._vaults[vault.root] = entries
        self._keep_clean(vault, context, entries, whole=True)
        found_here = _assemble(vault, per_file, as_of) + self._problem_findings(vault)
        return found_here + self._side_findings(vault)

    def _side_findings(self, vault: Vault) -> list[Finding]:
        """`privacy.side_findings(vault)`, reusing those of side files whose bytes are the same."""
        kept = self._side.get(vault.root, {})
        now: dict[str, tuple[str, str, tuple[Finding, ...]]] = {}
        out: list[Finding] = []
        for rel in vault.adapter.side_files(vault.root):
            try:
                data = read_regular(vault.root / rel)
            except OSError:
                continue
            digest = hashlib.sha256(data).hexdigest()
            old = kept.get(rel)
            if old is not None and old[:2] == (digest, vault.rel):
                found = old[2]
            else:
                raw = data.decode("utf-8", "replace")
                found = tuple(scan_side_file(vault, rel, raw))
            now[rel] = (digest, vault.rel, found)
            out.extend(found)
        self._side[vault.root] = now
        return out

    def _problem_findings(self, vault: Vault) -> list[Finding]:
        """`privacy.problem_findings(vault)`, reusing those of unchanged files."""
        kept = self._problems.get(vault.root, {})
        now: dict[_ProblemKey, tuple[str, str, tuple[Finding, ...]]] = {}
        raws: dict[str, str | None] = {}
        out: list[Finding] = []
        for p in scanned_problems(vault):
            key = (p.path, p.line, p.index)
            stamp = vault.stamps.get(p.path)
            old = kept.get(key)
            if stamp is not None and old is not None and old[:2] == (stamp.sha256, vault.rel):
                found = old[2]
            else:
                if p.path not in raws:
                    raws[p.path] = _read_text(p.vault_root / p.path)
                found = tuple(scan_problem(p, vault.rel, raws[p.path]))
            if stamp is not None:
                now[key] = (stamp.sha256, vault.rel, found)
            out.extend(found)
        self._problems[vault.root] = now
        return out

    def _kept_clean(self, vault: Vault, context: Context) -> dict[str, Clean]:
        """The vault's files an earlier run found clean in `context` (read once, then in step)."""
        if self.kept is None:
            return {}
        held = self._clean.get(vault.root)
        if held is not None and held[0] == context:
            return held[1]
        clean = self.kept.load(vault.root, context)
        self._clean[vault.root] = (context, clean)
        return clean

    def _keep_clean(
        self, vault: Vault, context: Context, entries: dict[str, _Entry], *, whole: bool
    ) -> None:
        """Write the vault's clean files to `kept` (only rows that changed).

        `whole`: `entries` are every file of the vault; else only those seen
        so far (a cancelled or unfinished scan), and the others stay as kept.
        """
        if self.kept is None:
            return
        before = self._kept_clean(vault, context)
        now = {} if whole else dict(before)
        for path, e in entries.items():
            if any(e.per_memory):
                now.pop(path, None)
            else:
                now[path] = (e.sha256, len(e.per_memory))
        self.kept.update(vault.root, context, before, now)
        self._clean[vault.root] = (context, now)

    def scan_catalog(
        self, catalog: Catalog, as_of: date | None = None, kinds: Iterable[str] | None = None
    ) -> list[Finding]:
        """`privacy.scan_catalog`, through this cache (the same findings, in the same order)."""
        wanted = set(kinds) if kinds is not None else None
        found = [
            f
            for v in catalog.vaults
            for f in self.scan_vault(v, as_of) or ()
            if wanted is None or f.kind in wanted
        ]
        return sort_findings(found)

    def forget(self, keep: set[Path]) -> None:
        """Drop the vaults not in `keep` (closed or no longer loaded)."""
        self._vaults = {root: v for root, v in self._vaults.items() if root in keep}
        self._clean = {root: v for root, v in self._clean.items() if root in keep}
        self._problems = {root: v for root, v in self._problems.items() if root in keep}
        self._side = {root: v for root, v in self._side.items() if root in keep}


def _assemble(
    vault: Vault, per_file: dict[str, tuple[tuple[Finding, ...], ...]], as_of: date | None
) -> list[Finding]:
    """The findings in the vault's memory order, each with its memory's health as of `as_of`."""
    adapter = vault.adapter
    seen: dict[str, int] = {}
    out: list[Finding] = []
    for m in vault.memories:
        at = seen.get(m.path, 0)
        seen[m.path] = at + 1
        found = per_file[m.path][at]
        if not found:
            continue
        health = adapter.decay(m, as_of, explain=False).health.value if as_of else ""
        out.extend(dataclasses.replace(f, health=health) for f in found)
    return out


__all__ = ["FindingsCache"]
