"""The footer: every shown binding, with help and the way out first.

Textual's footer lists the focused widget's bindings, then the screen's, then the app's, left
to right, and an 80-column terminal cuts off whatever does not fit — which was `?` (an app
binding, last) and `q` (the queue's last). Here the bindings a newcomer needs in any state come
first, and the footer turns compact on narrow terminals.
"""

from __future__ import annotations

from collections.abc import Iterator

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

FIRST = (
    "app.help",
    "queue.quit",
    "report.queue",
    "source.back",
    "report.detail_down",
    "judgment.confirm",
    "judgment.rationale",
    "judgment.next_undecided",
)
"""Binding ids shown before every other, in this order."""
NARROW = 120
"""Below this many columns the footer drops its spacing."""
PALETTE_WIDTH = 14
"""Columns the command palette's key takes at the right end of the footer."""


class GavelFooter(Footer):
    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        active = self.screen.active_bindings
        shown = [
            (binding, enabled, tooltip)
            for (_, binding, enabled, tooltip) in active.values()
            if binding.show
        ]
        rank = {bid: i for i, bid in enumerate(FIRST)}
        shown.sort(key=lambda item: rank.get(item[0].id or "", len(FIRST)))
        keys = [
            FooterKey(
                binding.key,
                display,
                binding.description,
                binding.action,
                disabled=not enabled,
                tooltip=tooltip,
            ).data_bind(compact=Footer.compact)
            for binding, display, enabled, tooltip in self._fitting(shown)
        ]
        self.styles.grid_size_columns = len(keys)
        yield from keys
        if self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE:
            found = active.get(self.app.COMMAND_PALETTE_BINDING)
            if found is not None:
                _, binding, enabled, _ = found
                yield FooterKey(
                    binding.key,
                    self.app.get_key_display(binding),
                    binding.description,
                    binding.action,
                    classes="-command-palette",
                    disabled=not enabled,
                    tooltip=binding.tooltip or binding.description,
                )

    def _fitting(
        self, shown: list[tuple[Binding, bool, str]]
    ) -> Iterator[tuple[Binding, str, bool, str]]:
        """The bindings that fit beside the command palette's key (docked right), once per
        action, with their key's display: one cut in the middle reads as garbage ("^p
        paletted"), and ? lists every key."""
        width = self.app.size.width
        room = width - (PALETTE_WIDTH if self.show_command_palette else 0)
        spacing = 2 if width < NARROW else 3
        seen: set[str] = set()
        for binding, enabled, tooltip in shown:
            if binding.action in seen:
                continue
            seen.add(binding.action)
            display = self.app.get_key_display(binding)
            room -= cell_len(display) + cell_len(binding.description) + spacing
            if room < 0:
                return
            yield binding, display, enabled, tooltip

    def on_resize(self) -> None:
        self.compact = self.size.width < NARROW
        self.refresh(recompose=True)  # what fits depends on the width
