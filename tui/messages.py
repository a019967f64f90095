"""App-wide messages: what the loader thread and the screens tell the app.

Widget-level messages are nested in the widget that sends them
(`MemoryTable.Highlighted`, `VaultSidebar.ScopeChanged`, ...).  Messages here
cross screens or threads; the app handles them and calls down.
"""

from __future__ import annotations

from pathlib import Path

from textual.message import Message

from memlens.core.listing import MemoryRow
from memlens.core.model import Memory
from memlens.core.scan.vault import Vault


class VaultsDiscovered(Message):
    """The loader found these vault roots (not scanned yet)."""

    def __init__(self, vaults: list[Vault]) -> None:
        super().__init__()
        #: Discovered vaults, in discovery order.
        self.vaults = vaults


class VaultLoaded(Message):
    """One vault is scanned and its rows are computed (sent once per vault)."""

    def __init__(
        self,
        vault: Vault,
        rows: list[MemoryRow],
        generation: int = 0,
        attach: list[Memory] | None = None,
    ) -> None:
        super().__init__()
        #: The scanned vault.
        self.vault = vault
        #: Its rows at the app's `as_of`.
        self.rows = rows
        #: Which load sent it (a reload ignores what an older load still sends).
        self.generation = generation
        #: Set when the first rows are the kept ones already shown, exactly
        #: the linked rows but without their memories: these, pairwise
        #: (`core.listing.snapshot.KeptRows.matching`), given on the UI thread.
        self.attach = attach


class VaultProgress(Message):
    """First rows of a vault still being read (not linked yet; `VaultLoaded` replaces them)."""

    def __init__(self, vault: Vault, rows: list[MemoryRow], generation: int = 0) -> None:
        super().__init__()
        #: The vault being scanned (its `result` is still empty).
        self.vault = vault
        #: Rows of the memories read since the last step.
        self.rows = rows
        #: Which load sent it.
        self.generation = generation


class LiveChanges(Message):
    """The vaults changed on disk: the app takes the computed row changes and shows them.

    It carries nothing: the changes wait in the app's `LiveRows` queue, so a
    burst of these can replace each other without losing any.
    """

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, LiveChanges)


class VaultFailed(Message):
    """Discovering or scanning failed for one path or vault; the others go on."""

    def __init__(self, where: str, error: BaseException, root: Path | None = None) -> None:
        super().__init__()
        #: The path or vault name that failed.
        self.where = where
        #: What went wrong.
        self.error = error
        #: The vault root, when a discovered vault failed to scan.
        self.root = root


class LiveFailed(Message):
    """The live-reload watcher hit an error (it keeps watching)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error


class LoadFinished(Message):
    """Every vault below every path has been scanned."""

    def __init__(self, generation: int = 0) -> None:
        super().__init__()
        #: Which load finished.
        self.generation = generation


class OpenMemory(Message):
    """Show this memory in the memories screen (from triage, problems, relations)."""

    def __init__(self, vault_root: Path, memory_id: str) -> None:
        super().__init__()
        self.vault_root = vault_root
        self.memory_id = memory_id


class OpenRaw(Message):
    """Show a vault file's raw text, scrolled to a line."""

    def __init__(
        self, path: Path, line: int | None = None, title: str = "", needle: str | None = None
    ) -> None:
        super().__init__()
        #: Absolute path of the file.
        self.path = path
        #: 1-based line to mark and scroll to.
        self.line = line
        #: What to call it in the header (display text, made safe by the viewer).
        self.title = title
        #: Without a line: scroll to the first line containing this text.
        self.needle = needle
