"""The queue's table: a DataTable of one-line rows, sized and laid out without measuring.

Textual's DataTable measures every new cell through a Rich console to size its columns; for a
DailyReport-size queue (2,550 rows × 11 columns of styled ``Text``) that measuring was the
largest part of start-up. Every queue cell is a single line of text, so its width is simply its
cell length, which is what this table uses.

It also rebuilds a list of every line's row after any cell changes (a decision's row, each
batch of impacts), a pass over every row each time, several times when the reviewer comes back
to the queue. With every row one line high, line y is row y, which this table answers directly.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, overload

from rich.cells import cell_len
from rich.text import Text
from textual.widgets._data_table import CellType, RowKey

from reviewer.textsafety import printable
from tui.widgets.row_table import RowTable

if TYPE_CHECKING:
    from store.runs.bands import NoiseBand


class _Lines(Sequence[tuple[RowKey, int]]):
    """Each line of a table whose rows are one line high: line y is (row y, its line 0)."""

    def __init__(self, table: QueueTable) -> None:
        self._table = table

    def __len__(self) -> int:
        return self._table.row_count

    @overload
    def __getitem__(self, y: int) -> tuple[RowKey, int]: ...

    @overload
    def __getitem__(self, y: slice) -> Sequence[tuple[RowKey, int]]: ...

    def __getitem__(self, y: int | slice) -> Any:
        if isinstance(y, slice):
            return [self[i] for i in range(*y.indices(len(self)))]
        if y < 0:
            y += len(self)
        key = self._table._row_locations.get_key(y) if 0 <= y < len(self) else None
        if key is None:
            raise IndexError(y)
        return key, 0

    def clear(self) -> None:
        """(DataTable.clear clears the list it gets; there is none to clear.)"""


class QueueTable(RowTable):
    """A DataTable for single-line cells (no auto-height rows, no row labels); home and end
    go to the first and last report."""

    @property
    def _y_offsets(self) -> Any:  # the base class's list, as a view (see the module)
        return _Lines(self)

    def add_row(
        self, *cells: CellType, height: int | None = 1, key: str | None = None, label: Any = None
    ) -> RowKey:
        if height != 1 or label is not None:
            raise ValueError("queue rows are one line high and have no label")
        return super().add_row(*cells, height=height, key=key, label=label)

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        columns = self.ordered_columns
        for row_key in new_rows:
            cells = self._data.get(row_key)
            if cells is None:  # removed before the table went idle
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


def band_text(bands: Mapping[str, NoiseBand], width: int = 78) -> Text:
    """Each system's score with its noise band over the suite's runs ("0.421 ±0.018"), one
    line cut to ``width`` (the queue's status at 80 columns): the sd is the run-to-run spread
    of the system's score, not an interval for it."""
    text = Text(no_wrap=True, overflow="ellipsis")
    if not bands:
        return text
    first = next(iter(bands.values()))
    text.append(f" band over {first.band.n} runs, {printable(first.metric)}: ", "dim")
    parts = []
    for system, b in bands.items():
        sd = "n/a" if b.band.sd is None else f"±{b.band.sd:.3f}"
        mean = "n/a" if b.band.mean is None else f"{b.band.mean:.3f}"
        parts.append((system, f"{mean} {sd}"))
    for i, (system, value) in enumerate(parts):
        if i:
            text.append(" · ", "dim")
        text.append(f"{printable(system)} ")
        text.append(value, "bold")
    text.truncate(width, overflow="ellipsis")
    return text
