"""The hub's line in the status area: synced, N pending or offline (see :mod:`tui.hub_sync`).

Every screen that shows it composes one; the app pushes each new state to all of them, so a
screen coming back into view is already current. Without a configured hub it takes no room.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widgets import Static

if TYPE_CHECKING:
    from tui.hub_sync import HubState


class HubStatus(Static):
    DEFAULT_CSS = """
    HubStatus {
        height: 1;
        width: 100%;
        background: $panel;
    }
    """

    def on_mount(self) -> None:
        self.show_state(getattr(self.app, "hub_state", None))

    def show_state(self, state: HubState | None) -> None:
        self.display = state is not None
        if state is not None:
            self.update(state.line())
            self.set_class(state.mode in ("offline", "refused", "error"), "-trouble")
