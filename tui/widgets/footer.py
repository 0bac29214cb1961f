"""The footer: every shown binding, with help and the way out first.

Textual's footer lists the focused widget's bindings, then the screen's, then the app's, left
to right, and an 80-column terminal cuts off whatever does not fit — which was `?` (an app
binding, last) and `q` (the queue's last). Here the bindings a newcomer needs in any state come
first, and the footer turns compact on narrow terminals.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

FIRST = ("app.help", "queue.quit", "report.queue", "source.back")
"""Binding ids shown before every other, in this order."""
NARROW = 120
"""Below this many columns the footer drops its spacing."""


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
        seen: set[str] = set()
        keys = []
        for binding, enabled, tooltip in shown:
            if binding.action in seen:
                continue
            seen.add(binding.action)
            keys.append(
                FooterKey(
                    binding.key,
                    self.app.get_key_display(binding),
                    binding.description,
                    binding.action,
                    disabled=not enabled,
                    tooltip=tooltip,
                ).data_bind(compact=Footer.compact)
            )
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

    def on_resize(self) -> None:
        self.compact = self.size.width < NARROW
