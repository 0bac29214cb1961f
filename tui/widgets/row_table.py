"""A DataTable whose row cursor answers home and end.

Textual's DataTable binds home and end to the first and last *column*, which a row cursor does
not have: on the queue and the runs screen they did nothing. Here they go to the first and
last row.
"""

from __future__ import annotations

from typing import Any

from textual.binding import Binding
from textual.widgets import DataTable


class RowTable(DataTable[Any]):
    BINDINGS = [
        Binding("home", "scroll_top", "First row", show=False),
        Binding("end", "scroll_bottom", "Last row", show=False),
    ]
