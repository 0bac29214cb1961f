"""Numbers and rows as Rich tables.

Text from reports, sources and judges is data, so every cell goes into a rich ``Text`` (never
parsed as console markup) with its control, bidirectional and zero-width characters shown
visibly, never sent raw to the terminal.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from reviewer.textsafety import printable

if TYPE_CHECKING:
    from rich.table import Table


def fmt_number(value: float | None, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if digits == 0 or (float(value).is_integer() and abs(value) >= 1 and digits <= 2):
        return str(round(value))
    return f"{value:.{digits}f}"


def fmt_delta(value: float | None, digits: int = 3) -> str:
    if value is None:
        return ""
    if abs(value) < 0.5 * 10**-digits:
        return "·"
    return f"{value:+.{digits}f}"


def cell(value: Any) -> str:
    """A value as table text; text from the data shows control, bidirectional and zero-width
    characters visibly (:func:`reviewer.textsafety.printable`)."""
    if value is None:
        return "—"
    if isinstance(value, float):
        return fmt_number(value)
    return printable(str(value))


def data_table(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    *,
    title: str | None = None,
    numeric: Sequence[str] = (),
    styles: Mapping[str, str] | None = None,
) -> Table:
    # Rich only when a table is drawn: the number formatters above serve commands that print
    # JSON, and the command line's start-up is a budget (tests/test_cli_startup.py).
    from rich.table import Table

    from tui.render.safe import SafeText as Text

    table = Table(title=title, header_style="bold", show_lines=False, expand=False)
    for column in columns:
        # fold, never "…": a cut identifier (an option name, a report id) is useless to type.
        table.add_column(
            column,
            justify="right" if column in numeric else "left",
            style=(styles or {}).get(column),
            overflow="fold",
        )
    for row in rows:
        table.add_row(*(Text(cell(row.get(c))) for c in columns))
    return table


def subject_name(subject: str) -> str:
    """``k=c3;r=2`` -> ``c3 ↔ [2]``, ``c=s1-ins`` -> ``s1-ins``: the names reviewers see."""
    parts = dict(p.split("=", 1) for p in subject.split(";") if "=" in p)
    name = parts.get("k") or parts.get("c") or parts.get("x") or subject
    return f"{name} ↔ [{parts['r']}]" if "r" in parts else name
