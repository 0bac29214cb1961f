"""A scrollable view of one rich Text, rendered once per content and width.

Used for the detail pane: replacing its content repaints the pane only. (A Static in a scroll
container would re-run the screen's layout on every update, which on a busy screen costs more
than the whole rest of a keypress.)
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.style import Style
from rich.text import Text
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip


class TextView(ScrollView, can_focus=True):
    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._content: RenderableType = Text()
        self._strips: list[Strip] = []
        self._width = -1
        self._drawn_with: tuple[Style, int] = (Style(), 0)
        """The base style and width of the lines in ``_fitted``."""
        self._fitted: dict[int, Strip] = {}

    def set_content(self, content: RenderableType) -> None:
        """Show new content from its top. The same text again (a decision's redraw of a
        pane the selection already drew) changes nothing: no repaint, and the pane stays
        scrolled where the reviewer left it."""
        if _same_text(content, self._content):
            return
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
        self._fitted = {}
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

    def render_lines(self, crop: Region) -> list[Strip]:
        """The base style once per repaint rather than once per line (it is worked out from
        the stylesheet); the lines cropped to the width are kept while it, the width and the
        content stay."""
        drawn_with = (self.rich_style, self.size.width)
        if drawn_with != self._drawn_with:
            restyled = drawn_with[0] != self._drawn_with[0]
            self._drawn_with = drawn_with
            self._fitted = {}
            if restyled:  # (a theme: the content was drawn over the old background)
                self._width = -1
                self._layout_lines()
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        style, width = self._drawn_with
        if index >= len(self._strips):
            return Strip.blank(width, style)
        if scroll_x:
            return self._strips[index].crop_extend(scroll_x, scroll_x + width, style)
        strip = self._fitted.get(index)
        if strip is None:
            strip = self._fitted[index] = self._strips[index].crop_extend(0, width, style)
        return strip


def _same_text(new: RenderableType, old: RenderableType) -> bool:
    """(Rich's Text compares its characters and spans, not its base style.)"""
    return isinstance(new, Text) and isinstance(old, Text) and new == old and new.style == old.style
