"""The base of the workstation's full screens: typed access to the app that owns them."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.screen import Screen

if TYPE_CHECKING:
    from tui.app import GavelApp
    from tui.backend import WriteResult


class GavelScreen(Screen[None]):
    """A screen of the Gavel app; ``gavel`` is ``self.app`` with its real type (backend, config)."""

    KEY_CONTEXT: ClassVar[str] = "queue"
    """The keymap context of the screen's bindings, which the help screen lists."""

    @property
    def gavel(self) -> GavelApp:
        from tui.app import GavelApp  # the app imports the screens: resolve it at call time

        assert isinstance(self.app, GavelApp)
        return self.app

    def show_result(self, result: WriteResult) -> bool:
        """Redraw from a committed write; False if this screen has no use for it (the app
        then offers it to the screen below)."""
        return False
