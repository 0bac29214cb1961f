"""The queue's table answers which row is on each line without DataTable's list of every line:
the same answers, after rows are added, removed, updated and sorted."""

from __future__ import annotations

from typing import Any

import pytest
from textual.app import App, ComposeResult

from tui.widgets.queue_table import QueueTable


class TableApp(App[None]):
    def compose(self) -> ComposeResult:
        yield QueueTable()


def lines_as_textual_builds_them(table: QueueTable) -> list[tuple[Any, int]]:
    return [(row.key, y) for row in table.ordered_rows for y in range(row.height)]


async def test_each_line_is_its_row_through_every_change() -> None:
    app = TableApp()
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.query_one(QueueTable)
        table.add_column("name", key="name")
        table.add_column("n", key="n")
        for i in range(40):
            table.add_row(f"r{i:02d}", str(40 - i), key=f"k{i}")
        await pilot.pause()
        assert list(table._y_offsets) == lines_as_textual_builds_them(table)
        table.remove_row("k3")
        table.update_cell("k5", "n", "999")
        table.sort("n")
        await pilot.pause()
        assert list(table._y_offsets) == lines_as_textual_builds_them(table)
        assert len(table._y_offsets) == table.row_count == 39
        table.move_cursor(row=38)  # the last line renders and is reachable
        await pilot.pause()
        assert table.cursor_row == 38
        assert table.get_row_at(38) == table.get_row(table._y_offsets[38][0].value or "")
        with pytest.raises(IndexError):
            table._y_offsets[39]
        table.clear()
        assert len(table._y_offsets) == 0


async def test_a_row_taller_than_a_line_is_refused() -> None:
    app = TableApp()
    async with app.run_test(size=(60, 12)):
        table = app.query_one(QueueTable)
        table.add_column("name")
        with pytest.raises(ValueError, match="one line high"):
            table.add_row("two\\nlines", height=2)
