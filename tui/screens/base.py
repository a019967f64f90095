"""What every memlens screen shares: worker errors go to the app's one error path."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.screen import Screen
from textual.worker import Worker, WorkerState

if TYPE_CHECKING:
    from memlens.core.model import Memory

    from ..app import MemlensApp


class MemlensScreen(Screen[None]):
    """A screen whose failed workers are reported by `MemlensApp.report_error`."""

    @property
    def memlens(self) -> MemlensApp:
        """The app, typed."""
        return cast("MemlensApp", self.app)

    def current_memory(self) -> Memory | None:
        """The memory under the cursor, for copying its id or path (y / Y); None here."""
        return None

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # Worker state messages do not bubble, so each screen forwards its own.
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            self.memlens.report_error(f"{event.worker.name} failed", event.worker.error)
