"""The queue's table: a DataTable whose column widths come from the cells' text length.

Textual's DataTable measures every new cell through a Rich console to size its columns; for a
DailyReport-size queue (2,550 rows × 11 columns of styled ``Text``) that measuring was the
largest part of start-up. Every queue cell is a single line of text, so its width is simply its
cell length, which is what this table uses.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import DataTable
from textual.widgets._data_table import RowKey


class QueueTable(DataTable[Any]):
    """A DataTable for single-line cells (no auto-height rows, no row labels)."""

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        columns = self.ordered_columns
        for row_key in new_rows:
            cells = self._data.get(row_key)
            if cells is None:           # removed before the table went idle
                continue
            for column in columns:
                cell = cells.get(column.key)
                if cell is None:
                    continue
                width = cell.cell_len if isinstance(cell, Text) else cell_len(str(cell))
                if width > column.content_width:
                    column.content_width = width
        # With no new rows the base class only recomputes the virtual size.
        super()._update_dimensions(())
