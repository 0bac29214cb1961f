"""A scrollable view of one rich Text, rendered once per content and width.

Used for the detail pane: replacing its content repaints the pane only. (A Static in a scroll
container would re-run the screen's layout on every update, which on a busy screen costs more
than the whole rest of a keypress.)
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip


class TextView(ScrollView, can_focus=True):
    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._content: RenderableType = Text()
        self._strips: list[Strip] = []
        self._width = -1

    def set_content(self, content: RenderableType) -> None:
        self._content = content
        self._width = -1
        self._layout_lines()
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    @property
    def plain(self) -> str:
        """What the view shows, as text (for tests and search)."""
        if isinstance(self._content, Text):
            return self._content.plain
        self._layout_lines()
        return "\n".join("".join(segment.text for segment in strip) for strip in self._strips)

    def _layout_lines(self) -> None:
        width = max(10, self.scrollable_content_region.width or self.size.width or 60)
        if width == self._width:
            return
        self._width = width
        options = self.app.console.options.update_width(width)
        lines = self.app.console.render_lines(
            self._content, options, style=self.rich_style, pad=False
        )
        self._strips = [Strip(line) for line in lines]
        size = Size(width, len(self._strips))
        if size != self.virtual_size:
            # ``virtual_size`` is a layout reactive: assigning it re-runs the whole screen's
            # layout, on every selection. The pane's scrollbars are fixed by its CSS (always
            # a vertical one, never a horizontal one), so only the pane and its scrollbar
            # need updating.
            self.set_reactive(ScrollView.virtual_size, size)
            self._scroll_update(size)
            self.refresh()

    def on_resize(self) -> None:
        self._layout_lines()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.size.width
        if index >= len(self._strips):
            return Strip.blank(width, self.rich_style)
        return self._strips[index].crop_extend(scroll_x, scroll_x + width, self.rich_style)
