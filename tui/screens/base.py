"""The base of the workstation's full screens, and what they may ask of the app.

Screens depend on the :class:`Workstation` protocol, not on the app class, so the app can
import its screens without an import circle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Protocol, runtime_checkable

from textual.screen import Screen
from textual.worker import Worker, WorkerState

if TYPE_CHECKING:
    from store.backend.commands import WriteResult
    from store.backend.workstation import Backend
    from tui.config import Config


@runtime_checkable
class Workstation(Protocol):
    """What the Gavel app offers its screens."""

    backend: Backend
    config: Config
    last_result: WriteResult | None
    ready_at: float | None
    report_shown_at: float | None
    stored_at: float | None
    last_report_id: int | None
    """The report last shown: the queue puts its cursor there on coming back."""
    warmed: bool

    def warm_up(self) -> None: ...

    def worker_failed(self, worker: Worker[object]) -> None: ...

    def refresh_everything(self) -> None: ...


class GavelScreen(Screen[None]):
    """A screen of the Gavel app; ``gavel`` is ``self.app`` seen as the :class:`Workstation`."""

    KEY_CONTEXT: ClassVar[str] = "queue"
    """The keymap context of the screen's bindings, which the help screen lists."""

    @property
    def gavel(self) -> Workstation:
        app = self.app
        assert isinstance(app, Workstation)
        return app

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # Worker messages do not bubble: every screen hands failures to the app's one path.
        if event.state == WorkerState.ERROR:
            self.gavel.worker_failed(event.worker)

    def show_result(self, result: WriteResult) -> bool:
        """Redraw from a committed write; False if this screen has no use for it (the app
        then offers it to the screen below)."""
        return False
