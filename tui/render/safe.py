"""Rich ``Text`` that cannot carry a terminal control sequence, a bidirectional override or a
zero-width character: the workstation builds every text it draws with this class.

Text from reports, sources, judges and merged logs reaches the screen in hundreds of places —
a cell, a line of the detail pane, a history entry, a notification. Checking each place by hand
is how one gets missed, so the class itself makes every string it is given visible
(:func:`reviewer.textsafety.visible`: the same length, so offsets into a report stay valid) as
it is built or appended to. It is a ``Text``: never parsed as markup either.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from reviewer.textsafety import visible

__all__ = ["SafeText", "visible"]


class SafeText(Text):
    def __init__(self, text: str = "", *args: Any, **kwargs: Any) -> None:
        super().__init__(visible(text), *args, **kwargs)

    def append(self, text: str | Text, style: Any = None) -> SafeText:
        if isinstance(text, str):
            text = visible(text)
        super().append(text, style)
        return self
