"""The app's privacy scan: findings of every loaded vault, kept fresh in a thread worker.

After loading and after every change of the catalog (an edit, a redaction, a
file changed on disk) the secrets scan (`memlens.core.privacy`) runs again
over the loaded vaults in a thread worker (a newer scan cancels an older
one); its findings feed the Privacy pane (key 7), the problems pane (one
`secret:<kind>` problem per finding) and a marker on each memory's row.
Screens watch `privacy_version`.  Findings keep their secret in memory only;
every screen shows `Finding.masked`.  The scan is incremental
(`core.privacy.incremental.FindingsCache`): after a change only the files
whose bytes changed are scanned again, and at a start only those that
changed since the last run or hold findings (`core.privacy.clean_files`).
While keys are pressed a long scan (a first one at 100k memories runs for
minutes) waits between files (`TYPING_QUIET`): the UI thread and the scan
share one GIL.  It also waits while work the user is waiting for runs
(`YIELDS_TO`): the load worker writing the store after a cold start, and
the search index being built.  Measured at 100k on a cold start, before:
the store written 150 s after the listing and search ready after 203 s,
both sharing the GIL with the first secret scan.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import date
from typing import TYPE_CHECKING

from textual import work
from textual.reactive import reactive
from textual.worker import Worker, WorkerState, get_current_worker

from memlens.core.scan.vault import Vault

from .app_live import TYPING_NAP, TYPING_QUIET
from .app_loading import LoadingApp

if TYPE_CHECKING:
    # Imported by the scan itself (in its thread): the detectors compile ~100
    # patterns, ~90 ms the app's start need not wait for.
    from memlens.core.privacy import Finding
    from memlens.core.privacy.incremental import FindingsCache

#: Seconds a scan runs before it starts giving way to typing.
LONG_SCAN = 1.0
#: Worker groups a long scan gives way to: the load (a cold start's store
#: write follows the listing: the next start is warm only once it is done)
#: and the search index (the user opened search and waits for it).
YIELDS_TO = frozenset({"load", "search-index"})
_ACTIVE = (WorkerState.PENDING, WorkerState.RUNNING)


class PrivacyApp(LoadingApp):
    """The loading app plus the privacy scan of what it loaded."""

    #: Bumped whenever `findings` changes; screens watch it.
    privacy_version: reactive[int] = reactive(0, init=False, always_update=True)
    #: The newest scan's findings (empty until the first scan finishes).
    findings: tuple[Finding, ...] = ()
    #: (vault root, memory id) of every memory holding a finding.
    secret_keys: frozenset[tuple[str, str]] = frozenset()
    #: The secrets each of those memories holds (to mask its title in lists).
    secrets_by_memory: dict[tuple[str, str], tuple[str, ...]] = {}
    #: True while a scan runs.
    privacy_scanning: bool = False
    #: Findings per file kept between scans (made on the first scan).
    findings_cache: FindingsCache | None = None

    def scan_may_go_on(
        self,
        worker: Worker[None],
        started: float,
        clock: Callable[[], float] = time.monotonic,
        nap: Callable[[float], None] = time.sleep,
    ) -> bool:
        """Between two files: False once the scan is cancelled.

        A scan running for LONG_SCAN seconds (`started` by `clock`) waits
        while the user types and while a worker of `YIELDS_TO` runs; a
        rescan after a change is over before that.
        """
        if clock() - started >= LONG_SCAN:
            while not worker.is_cancelled and (self.typing(clock) or self.waited_for()):
                nap(TYPING_NAP)
        return not worker.is_cancelled

    def waited_for(self) -> bool:
        """A worker the user waits for runs (`YIELDS_TO`); read from the scan's thread."""
        try:
            running = list(self.workers)
        except RuntimeError:  # the UI thread changed the set meanwhile: look again later
            return True
        return any(w.group in YIELDS_TO and w.state in _ACTIVE for w in running)

    def watch_catalog_version(self, _version: int) -> None:
        if self.loading:
            return  # one scan once everything is read, not one per batch
        self.privacy_scanning = True
        self.scan_privacy([v for v, _rows in self.loaded], self.as_of)

    @work(
        thread=True,
        exclusive=True,
        group="privacy",
        exit_on_error=False,
        name="privacy scan",
        description="secrets and personal data",
    )
    def scan_privacy(self, vaults: list[Vault], as_of: date) -> None:
        from memlens.core.privacy.clean_files import CleanFiles
        from memlens.core.privacy.incremental import FindingsCache

        found: list[Finding] = []
        worker = get_current_worker()
        started = time.monotonic()
        if self.findings_cache is None:
            kept = CleanFiles.open() if self.config.cache else None
            self.findings_cache = FindingsCache(kept)
        cache = self.findings_cache
        for vault in vaults:
            got = cache.scan_vault(vault, as_of, lambda: not self.scan_may_go_on(worker, started))
            if got is None:
                return
            found.extend(got)
        if not worker.is_cancelled:
            cache.forget({v.root for v in vaults})
            self.call_from_thread(self._privacy_scanned, found)

    def _privacy_scanned(self, found: list[Finding]) -> None:
        from memlens.core.privacy import sort_findings  # imported by the scan already

        self.findings = tuple(sort_findings(found))
        self.secret_keys = frozenset(f.memory_key for f in found)
        by_memory: dict[tuple[str, str], list[str]] = {}
        for f in found:
            by_memory.setdefault(f.memory_key, []).append(f.secret)
        self.secrets_by_memory = {k: tuple(v) for k, v in by_memory.items()}
        self.privacy_scanning = False
        self.privacy_version += 1


__all__ = ["TYPING_NAP", "TYPING_QUIET", "PrivacyApp"]
