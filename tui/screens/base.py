"""The base of the workstation's full screens: typed access to the app that owns them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.screen import Screen

if TYPE_CHECKING:
    from tui.app import GavelApp


class GavelScreen(Screen[None]):
    """A screen of the Gavel app; ``gavel`` is ``self.app`` with its real type (backend, config)."""

    @property
    def gavel(self) -> GavelApp:
        from tui.app import GavelApp  # the app imports the screens: resolve it at call time

        assert isinstance(self.app, GavelApp)
        return self.app
